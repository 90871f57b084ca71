/* ops_binary.c: binary ops (add ... bitwise shifts) and the ternary ones
 * (where, clamp/clip, lerp) as module functions, Tensor methods, in-place
 * methods and operators.
 *
 * One table says, for every binary op, which kernel op it is and how its
 * result dtype follows from torch's promotion (true division and atan2 turn
 * integers into the default dtype, comparisons and logical ops give bool).
 * The functions below only parse arguments and fill a pcs_ew_call; ops.c
 * does the rest. */
#include "ops/ops.h"
#include "ops/index.h"
#include "runtime/device.h"

#include <string.h>

#include "runtime/stream.h"

/* How the result dtype follows from the promoted one. */
enum { K_ARITH, K_TO_FLOAT, K_PRED, K_BITWISE, K_NOCOMPLEX };

typedef struct {
    const char *name;
    int op;
    int kind;
} bin_spec;

enum {
    B_ADD, B_SUB, B_MUL, B_DIV, B_TRUE_DIVIDE, B_FLOOR_DIVIDE, B_REMAINDER, B_POW, B_MAXIMUM,
    B_MINIMUM, B_ATAN2, B_EQ, B_NE, B_LT, B_LE, B_GT, B_GE, B_LOGICAL_AND, B_LOGICAL_OR,
    B_LOGICAL_XOR, B_BITWISE_AND, B_BITWISE_OR, B_BITWISE_XOR, B_LSHIFT, B_RSHIFT, B_THRESHOLD_BWD,
    B_GELU_BWD, B_GELU_TANH_BWD, B_COUNT
};

static const bin_spec bins[B_COUNT] = {
    [B_ADD] = {"add", PCS_BOP_ADD, K_ARITH},
    [B_SUB] = {"sub", PCS_BOP_SUB, K_ARITH},
    [B_MUL] = {"mul", PCS_BOP_MUL, K_ARITH},
    [B_DIV] = {"div", PCS_BOP_DIV, K_TO_FLOAT},
    [B_TRUE_DIVIDE] = {"true_divide", PCS_BOP_DIV, K_TO_FLOAT},
    [B_FLOOR_DIVIDE] = {"floor_divide", PCS_BOP_DIV_FLOOR, K_NOCOMPLEX},
    [B_REMAINDER] = {"remainder", PCS_BOP_REMAINDER, K_NOCOMPLEX},
    [B_POW] = {"pow", PCS_BOP_POW, K_ARITH},
    [B_MAXIMUM] = {"maximum", PCS_BOP_MAXIMUM, K_NOCOMPLEX},
    [B_MINIMUM] = {"minimum", PCS_BOP_MINIMUM, K_NOCOMPLEX},
    [B_ATAN2] = {"atan2", PCS_BOP_ATAN2, K_TO_FLOAT},
    [B_EQ] = {"eq", PCS_BOP_EQ, K_PRED},
    [B_NE] = {"ne", PCS_BOP_NE, K_PRED},
    [B_LT] = {"lt", PCS_BOP_LT, K_PRED},
    [B_LE] = {"le", PCS_BOP_LE, K_PRED},
    [B_GT] = {"gt", PCS_BOP_GT, K_PRED},
    [B_GE] = {"ge", PCS_BOP_GE, K_PRED},
    [B_LOGICAL_AND] = {"logical_and", PCS_BOP_LOGICAL_AND, K_PRED},
    [B_LOGICAL_OR] = {"logical_or", PCS_BOP_LOGICAL_OR, K_PRED},
    [B_LOGICAL_XOR] = {"logical_xor", PCS_BOP_LOGICAL_XOR, K_PRED},
    [B_BITWISE_AND] = {"bitwise_and", PCS_BOP_BITWISE_AND, K_BITWISE},
    [B_BITWISE_OR] = {"bitwise_or", PCS_BOP_BITWISE_OR, K_BITWISE},
    [B_BITWISE_XOR] = {"bitwise_xor", PCS_BOP_BITWISE_XOR, K_BITWISE},
    [B_LSHIFT] = {"bitwise_left_shift", PCS_BOP_LSHIFT, K_BITWISE},
    [B_RSHIFT] = {"bitwise_right_shift", PCS_BOP_RSHIFT, K_BITWISE},
    /* relu's backward (autograd's fast formula): one pass instead of a
     * comparison and a where */
    [B_THRESHOLD_BWD] = {"threshold_backward", PCS_BOP_THRESHOLD_BWD, K_NOCOMPLEX},
    /* gelu's backward in one pass (approximate='none' and 'tanh') */
    [B_GELU_BWD] = {"gelu_backward", PCS_BOP_GELU_BWD, K_TO_FLOAT},
    [B_GELU_TANH_BWD] = {"gelu_tanh_backward", PCS_BOP_GELU_TANH_BWD, K_TO_FLOAT},
};

/* ------------------------------------------------------------------------ */
/* The core                                                                  */

/* CUDA a + b (and -, *) of two contiguous same-dtype same-shape tensors:
 * the host-loop benchmark's path, with nothing between the slot and the
 * launch but the output allocation. NULL without exception: not eligible. */
static PyObject *fast_binary(int op, PcsTensor *a, PcsTensor *b)
{
    if (a->device < 0 || a->device != b->device || a->dtype != b->dtype || a->ndim != b->ndim ||
        a->dtype == PCS_BOOL || memcmp(a->sizes, b->sizes, a->ndim * sizeof(int64_t)) != 0 ||
        !pcs_tensor_is_contiguous(a) || !pcs_tensor_is_contiguous(b))
        return NULL;
    if (pcs_cuda_set_device_raw(a->device) < 0)
        return NULL;
    PcsTensor *res = pcs_tensor_empty(a->ndim, a->sizes, a->dtype, a->device, false);
    if (!res)
        return NULL;
    int64_t n = pcs_tensor_numel(a);
    if (n) {
        cudaStream_t stream = pcs_current_stream(a->device);
        static const pcs_kscalar zero[3];
        if (pcs_launch_binary(op, a->dtype, pcs_tensor_data(res), pcs_tensor_data(a),
                              pcs_tensor_data(b), zero, n, NULL, stream) < 0) {
            Py_DECREF(res);
            return pcs_not_implemented(pcs_dtypes[a->dtype].name, a->dtype);
        }
        if (PCS_CHECK_LAUNCH(stream, "binary op") < 0) {
            Py_DECREF(res);
            return NULL;
        }
    }
    return (PyObject *)res;
}

/* ops[0..1] prepared; alpha/rounding may be NULL; out: out= or self. */
static PyObject *binary_core(int which, pcs_operand *ops, PyObject *alpha, PyObject *rounding,
                             PyObject *out)
{
    const bin_spec *sp = &bins[which];
    if (!out && !alpha && ops[0].t && ops[1].t && !ops[0].is_scalar &&
        (which == B_ADD || which == B_SUB || which == B_MUL)) {
        PyObject *r = fast_binary(sp->op, ops[0].t, ops[1].t);
        if (r || PyErr_Occurred())
            return r;
    }
    int rt = pcs_result_type(ops, 2);
    pcs_ew_call c;
    memset(&c, 0, sizeof c);
    c.arity = 2;
    c.op = sp->op;
    c.name = sp->name;
    c.in0_dtype = -1;
    c.compute = rt;
    c.out_dtype = rt;
    switch (sp->kind) {
    case K_TO_FLOAT:
        if (pcs_is_integral(rt, true))
            c.compute = c.out_dtype = pcs_default_dtype();
        break;
    case K_PRED:
        c.out_dtype = PCS_BOOL;
        if (pcs_is_complex(rt) && c.op != PCS_BOP_EQ && c.op != PCS_BOP_NE)
            return pcs_not_implemented(sp->name, rt);
        break;
    case K_BITWISE:
        if (!pcs_is_integral(rt, c.op != PCS_BOP_LSHIFT && c.op != PCS_BOP_RSHIFT))
            return pcs_not_implemented(sp->name, rt);
        break;
    case K_NOCOMPLEX:
        if (pcs_is_complex(rt)) {
            PyErr_Format(PyExc_RuntimeError, "%s is not implemented for complex tensors.", sp->name);
            return NULL;
        }
        break;
    }
    if (which == B_DIV && rounding && rounding != Py_None) {
        const char *m = PyUnicode_Check(rounding) ? PyUnicode_AsUTF8(rounding) : NULL;
        if (!m || (strcmp(m, "trunc") != 0 && strcmp(m, "floor") != 0)) {
            PyErr_Format(PyExc_ValueError,
                         "div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                         "found '%s'",
                         m ? m : "?");
            return NULL;
        }
        c.op = m[0] == 't' ? PCS_BOP_DIV_TRUNC : PCS_BOP_DIV_FLOOR;
        c.name = m[0] == 't' ? "div_trunc" : "div_floor";
        c.compute = c.out_dtype = rt;
        if (pcs_is_complex(rt))
            return pcs_not_implemented(c.name, rt);
    }
    if (which == B_SUB && rt == PCS_BOOL) {
        PyErr_SetString(PyExc_RuntimeError,
                        "Subtraction, the `-` operator, with two bool tensors is not supported. "
                        "Use the `^` or `logical_xor()` operator instead.");
        return NULL;
    }
    if (which == B_POW && pcs_is_integral(rt, true) && ops[1].is_scalar &&
        ops[1].s.kind == PCS_SK_INT && ops[1].s.i < 0) {
        PyErr_SetString(PyExc_RuntimeError, "Integers to negative integer powers are not allowed.");
        return NULL;
    }
    /* An integer exponent that the base's dtype cannot hold is refused, as
     * torch's checked_convert does (uint8 ** 300); a number base wraps. */
    if (which == B_POW && pcs_is_integral(rt, false) && !ops[1].t &&
        pcs_scalar_check_fits(rt, ops[1].s, PCS_CHECK_FILL) < 0)
        return NULL;
    if ((which == B_ADD || which == B_SUB) && alpha && alpha != Py_None) {
        pcs_scalar a;
        if (pcs_scalar_from_py(alpha, &a) < 0)
            return NULL;
        if (pcs_is_integral(rt, true) && (a.kind == PCS_SK_FLOAT || a.kind == PCS_SK_COMPLEX)) {
            PyErr_SetString(PyExc_RuntimeError, "For integral input tensors, argument alpha must "
                                                "not be a floating point number.");
            return NULL;
        }
        /* torch converts alpha to the tensors' type with checked_convert: an
         * integer one refuses what it cannot hold (2**63 in int64, 300 in
         * uint8), as fill_ does. A floating one takes any int's value, so a
         * uint64-range int becomes its float value here. */
        if (pcs_is_integral(rt, true) && pcs_scalar_check_fits(rt, a, PCS_CHECK_FILL) < 0)
            return NULL;
        if (a.kind == PCS_SK_INT && a.u64) {
            a.re = pcs_scalar_as_double(a);
            a.kind = PCS_SK_FLOAT;
            a.u64 = false;
        }
        bool one = (a.kind <= PCS_SK_INT && a.i == 1) || (a.kind == PCS_SK_FLOAT && a.re == 1.0);
        if (!one) {
            c.op = PCS_BOP_ADD_ALPHA;
            c.name = which == B_ADD ? "add_alpha" : "sub_alpha";
            c.extra[2].i = which == B_SUB ? -a.i : a.i;
            c.extra[2].re = (a.kind <= PCS_SK_INT ? (double)a.i : a.re) * (which == B_SUB ? -1 : 1);
            c.extra[2].im = a.im * (which == B_SUB ? -1 : 1);
            pcs_scalar sa = {a.kind == PCS_SK_BOOL ? PCS_SK_INT : a.kind, c.extra[2].i,
                             c.extra[2].re, c.extra[2].im};
            PyObject *v = pcs_scalar_to_py(rt, sa);
            c.cpu_args = v ? PyTuple_Pack(1, v) : NULL;
            Py_XDECREF(v);
            if (!c.cpu_args)
                return NULL;
        }
    }
    PyObject *r = pcs_ew_run(&c, ops, out);
    Py_XDECREF(c.cpu_args);
    return r;
}

PyObject *pcs_binary_operator(int which, PyObject *a, PyObject *b, bool inplace)
{
    static const int opr_to_bin[] = {
        [PCS_OPR_ADD] = B_ADD, [PCS_OPR_SUB] = B_SUB, [PCS_OPR_MUL] = B_MUL,
        [PCS_OPR_TRUEDIV] = B_DIV, [PCS_OPR_FLOORDIV] = B_FLOOR_DIVIDE, [PCS_OPR_MOD] = B_REMAINDER,
        [PCS_OPR_POW] = B_POW, [PCS_OPR_AND] = B_BITWISE_AND, [PCS_OPR_OR] = B_BITWISE_OR,
        [PCS_OPR_XOR] = B_BITWISE_XOR, [PCS_OPR_LSHIFT] = B_LSHIFT, [PCS_OPR_RSHIFT] = B_RSHIFT,
        [PCS_OPR_EQ] = B_EQ, [PCS_OPR_NE] = B_NE, [PCS_OPR_LT] = B_LT, [PCS_OPR_LE] = B_LE,
        [PCS_OPR_GT] = B_GT, [PCS_OPR_GE] = B_GE,
    };
    pcs_operand ops[2];
    int ra = pcs_operand_from(a, &ops[0]);
    if (ra < 0)
        return NULL;
    int rb = ra ? 1 : pcs_operand_from(b, &ops[1]);
    if (rb < 0)
        return NULL;
    if (ra || rb)
        Py_RETURN_NOTIMPLEMENTED;
    int bi = opr_to_bin[which];
    /* & | ^ on bool tensors are the logical ops (same result, bool kept). */
    return binary_core(bi, ops, NULL, NULL, inplace ? a : NULL);
}

/* ------------------------------------------------------------------------ */
/* Functions and methods                                                     */

static const char *const bin_kw[] = {"input", "other", "alpha", "out", "rounding_mode", "self",
                                     "exponent", NULL};

/* self NULL: module function (input, other, ...); else a method (other, ...). */
static PyObject *binary_entry(int which, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kw, bool inplace)
{
    const char *fname = bins[which].name;
    if (pcs_check_kwargs(kw, fname, bin_kw) < 0)
        return NULL;
    int base = self ? -1 : 0;
    PyObject *x = self ? self : pcs_arg(args, nargs, kw, 0, "input");
    PyObject *y = pcs_arg(args, nargs, kw, base + 1, "other");
    if (!y && which == B_POW)
        y = pcs_arg(args, nargs, kw, base + 1, "exponent");
    if (!x && which == B_POW)
        x = pcs_arg(args, nargs, kw, 0, "self");
    if (!x || !y) {
        PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", fname,
                     x ? "other" : "input");
        return NULL;
    }
    if (nargs > base + 2) {
        PyErr_Format(PyExc_TypeError, "%s() takes 2 positional arguments but %zd were given", fname,
                     nargs - base);
        return NULL;
    }
    PyObject *out;
    if (pcs_out_arg(pcs_arg(args, nargs, kw, -1, "out"), &out) < 0)
        return NULL;
    pcs_operand ops[2];
    if (pcs_operand_arg(x, &ops[0], fname, "input") < 0 ||
        pcs_operand_arg(y, &ops[1], fname, "other") < 0)
        return NULL;
    return binary_core(which, ops, pcs_arg(args, nargs, kw, -1, "alpha"),
                       pcs_arg(args, nargs, kw, -1, "rounding_mode"), inplace ? self : out);
}

/* where(condition, input, other) */
static PyObject *where_core(PyObject *cond, PyObject *x, PyObject *y, PyObject *out)
{
    if (!PcsTensor_Check(cond) || ((PcsTensor *)cond)->dtype != PCS_BOOL) {
        PyErr_Format(PyExc_RuntimeError,
                     "where expected condition to be a boolean tensor, but got a tensor with dtype %s",
                     PcsTensor_Check(cond) ? pcs_dtypes[((PcsTensor *)cond)->dtype].legacy
                                           : Py_TYPE(cond)->tp_name);
        return NULL;
    }
    pcs_operand ops[3];
    if (pcs_operand_arg(cond, &ops[0], "where", "condition") < 0 ||
        pcs_operand_arg(x, &ops[1], "where", "input") < 0 ||
        pcs_operand_arg(y, &ops[2], "where", "other") < 0)
        return NULL;
    pcs_ew_call c = {.arity = 3, .op = PCS_TOP_WHERE, .name = "where", .in0_dtype = PCS_BOOL};
    c.compute = c.out_dtype = pcs_result_type(ops + 1, 2);
    /* torch converts a number branch with checked_convert: where(m, u8, 300)
     * raises, where the arithmetic ops wrap. */
    for (int i = 1; i < 3; i++)
        if (!ops[i].t && pcs_is_integral(c.compute, true) &&
            pcs_scalar_check_fits(c.compute, ops[i].s, PCS_CHECK_FILL) < 0)
            return NULL;
    return pcs_ew_run(&c, ops, out);
}

static PyObject *f_where(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    PCS_UNUSED(m);
    static const char *const names[] = {"condition", "input", "other", "self", "out", NULL};
    if (pcs_check_kwargs(kw, "where", names) < 0)
        return NULL;
    PyObject *cond = pcs_arg(args, nargs, kw, 0, "condition");
    PyObject *x = pcs_arg(args, nargs, kw, 1, "input");
    if (!x)
        x = pcs_arg(args, nargs, kw, -1, "self");
    PyObject *y = pcs_arg(args, nargs, kw, 2, "other");
    if (cond && !x && !y) {
        if (!PcsTensor_Check(cond)) {
            PyErr_SetString(PyExc_TypeError, "where(): argument 'condition' must be Tensor");
            return NULL;
        }
        return pcs_nonzero_tuple((PcsTensor *)cond);
    }
    if (!cond || !x || !y) {
        PyErr_SetString(PyExc_TypeError, "where() takes (condition, input, other)");
        return NULL;
    }
    PyObject *out;
    if (pcs_out_arg(pcs_arg(args, nargs, kw, -1, "out"), &out) < 0)
        return NULL;
    return where_core(cond, x, y, out);
}

static PyObject *m_where(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"condition", "other", NULL};
    if (pcs_check_kwargs(kw, "where", names) < 0)
        return NULL;
    PyObject *cond = pcs_arg(args, nargs, kw, 0, "condition");
    PyObject *y = pcs_arg(args, nargs, kw, 1, "other");
    if (!cond || !y) {
        PyErr_SetString(PyExc_TypeError, "where() takes (condition, other)");
        return NULL;
    }
    return where_core(cond, self, y, NULL);
}

/* A number bound of an integer clamp outside the dtype's range: one that
 * clips nothing (max=300 of uint8) is moved to the range's end, one that
 * would clip everything raises, as torch says it. */
static int clamp_bound(pcs_operand *op, int dtype, bool is_min)
{
    if (op->t || op->s.kind != PCS_SK_INT || !pcs_is_integral(dtype, false))
        return 0;
    int64_t lo, hi;
    pcs_int_range(dtype, &lo, &hi);
    const bool above = op->s.u64 || op->s.i > hi, below = !op->s.u64 && op->s.i < lo;
    if (!above && !below)
        return 0;
    if (above == is_min) {
        char v[32];
        if (op->s.u64)
            snprintf(v, sizeof v, "%g", (double)(uint64_t)op->s.i); /* torch holds it as a double */
        else
            snprintf(v, sizeof v, "%lld", (long long)op->s.i);
        PyErr_Format(PyExc_RuntimeError, "Clamp %s value %s is outside the representable range of %s",
                     is_min ? "min" : "max", v, pcs_dtypes[dtype].legacy);
        return -1;
    }
    op->s.i = above ? hi : lo;
    op->s.u64 = false;
    return 0;
}

/* clamp(input, min=None, max=None): min(max(x, lo), hi), torch's order. */
static PyObject *clamp_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw,
                             bool inplace)
{
    static const char *const names[] = {"input", "min", "max", "out", NULL};
    if (pcs_check_kwargs(kw, "clamp", names) < 0)
        return NULL;
    int base = self ? -1 : 0;
    PyObject *x = self ? self : pcs_arg(args, nargs, kw, 0, "input");
    PyObject *lo = pcs_arg(args, nargs, kw, base + 1, "min");
    PyObject *hi = pcs_arg(args, nargs, kw, base + 2, "max");
    PyObject *out;
    if (pcs_out_arg(pcs_arg(args, nargs, kw, -1, "out"), &out) < 0)
        return NULL;
    if (inplace)
        out = self;
    if (!x) {
        PyErr_SetString(PyExc_TypeError, "clamp() missing required argument 'input'");
        return NULL;
    }
    if (lo == Py_None)
        lo = NULL;
    if (hi == Py_None)
        hi = NULL;
    if (!lo && !hi) {
        PyErr_SetString(PyExc_RuntimeError, "torch.clamp: At least one of 'min' or 'max' must not be None");
        return NULL;
    }
    pcs_operand ops[3];
    if (pcs_operand_arg(x, &ops[0], "clamp", "input") < 0 ||
        (lo && pcs_operand_arg(lo, &ops[1], "clamp", "min") < 0) ||
        (hi && pcs_operand_arg(hi, &ops[lo ? 2 : 1], "clamp", "max") < 0))
        return NULL;
    int n = 1 + (lo != NULL) + (hi != NULL);
    int rt = pcs_result_type(ops, n);
    if (pcs_is_complex(rt)) {
        PyErr_SetString(PyExc_RuntimeError, "clamp is not supported for complex types");
        return NULL;
    }
    for (int i = 1; i < n; i++)
        if (clamp_bound(&ops[i], rt, lo && i == 1) < 0)
            return NULL;
    pcs_ew_call c = {.arity = n, .compute = rt, .out_dtype = rt, .in0_dtype = -1};
    if (n == 3) {
        c.op = PCS_TOP_CLAMP;
        c.name = "clamp";
    } else {
        c.op = lo ? PCS_BOP_MAXIMUM : PCS_BOP_MINIMUM;
        c.name = lo ? "maximum" : "minimum";
    }
    return pcs_ew_run(&c, ops, out);
}

static PyObject *f_clamp(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *kw)
{
    PCS_UNUSED(m);
    return clamp_entry(NULL, a, n, kw, false);
}
static PyObject *m_clamp(PyObject *s, PyObject *const *a, Py_ssize_t n, PyObject *kw)
{
    return clamp_entry(s, a, n, kw, false);
}
static PyObject *m_clamp_(PyObject *s, PyObject *const *a, Py_ssize_t n, PyObject *kw)
{
    return clamp_entry(s, a, n, kw, true);
}

/* lerp(input, end, weight): start + weight * (end - start). */
static PyObject *lerp_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw,
                            bool inplace)
{
    static const char *const names[] = {"input", "end", "weight", "out", NULL};
    if (pcs_check_kwargs(kw, "lerp", names) < 0)
        return NULL;
    int base = self ? -1 : 0;
    PyObject *x = self ? self : pcs_arg(args, nargs, kw, 0, "input");
    PyObject *e = pcs_arg(args, nargs, kw, base + 1, "end");
    PyObject *w = pcs_arg(args, nargs, kw, base + 2, "weight");
    PyObject *out;
    if (pcs_out_arg(pcs_arg(args, nargs, kw, -1, "out"), &out) < 0)
        return NULL;
    if (!x || !e || !w) {
        PyErr_SetString(PyExc_TypeError, "lerp() takes (input, end, weight)");
        return NULL;
    }
    pcs_operand ops[3];
    if (pcs_operand_arg(x, &ops[0], "lerp", "input") < 0 ||
        pcs_operand_arg(e, &ops[1], "lerp", "end") < 0 ||
        pcs_operand_arg(w, &ops[2], "lerp", "weight") < 0)
        return NULL;
    int rt = pcs_result_type(ops, 3);
    if (!pcs_is_float(rt) && !pcs_is_complex(rt))
        return pcs_not_implemented("lerp", rt);
    pcs_ew_call c = {.arity = 3, .op = PCS_TOP_LERP, .name = "lerp", .compute = rt,
                     .out_dtype = rt, .in0_dtype = -1};
    return pcs_ew_run(&c, ops, inplace ? self : out);
}

static PyObject *f_lerp(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *kw)
{
    PCS_UNUSED(m);
    return lerp_entry(NULL, a, n, kw, false);
}
static PyObject *m_lerp(PyObject *s, PyObject *const *a, Py_ssize_t n, PyObject *kw)
{
    return lerp_entry(s, a, n, kw, false);
}
static PyObject *m_lerp_(PyObject *s, PyObject *const *a, Py_ssize_t n, PyObject *kw)
{
    return lerp_entry(s, a, n, kw, true);
}

/* ------------------------------------------------------------------------ */
/* Tables: one wrapper triple per table entry (function, method, in-place)   */

#define BIN_WRAPPERS(name, which)                                                                 \
    static PyObject *f_##name(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *kw)       \
    {                                                                                             \
        PCS_UNUSED(m);                                                                            \
        return binary_entry(which, NULL, a, n, kw, false);                                        \
    }                                                                                             \
    static PyObject *m_##name(PyObject *s, PyObject *const *a, Py_ssize_t n, PyObject *kw)       \
    {                                                                                             \
        return binary_entry(which, s, a, n, kw, false);                                           \
    }                                                                                             \
    static PyObject *m_##name##_(PyObject *s, PyObject *const *a, Py_ssize_t n, PyObject *kw)    \
    {                                                                                             \
        return binary_entry(which, s, a, n, kw, true);                                            \
    }

#define BIN_LIST(X)                                                                               \
    X(add, B_ADD) X(sub, B_SUB) X(mul, B_MUL) X(div, B_DIV) X(true_divide, B_TRUE_DIVIDE)        \
    X(floor_divide, B_FLOOR_DIVIDE) X(remainder, B_REMAINDER) X(pow, B_POW)                      \
    X(maximum, B_MAXIMUM) X(minimum, B_MINIMUM) X(atan2, B_ATAN2) X(eq, B_EQ) X(ne, B_NE)          \
    X(lt, B_LT) X(le, B_LE) X(gt, B_GT) X(ge, B_GE) X(logical_and, B_LOGICAL_AND)                  \
    X(logical_or, B_LOGICAL_OR) X(logical_xor, B_LOGICAL_XOR) X(bitwise_and, B_BITWISE_AND)        \
    X(bitwise_or, B_BITWISE_OR) X(bitwise_xor, B_BITWISE_XOR)                                     \
    X(bitwise_left_shift, B_LSHIFT) X(bitwise_right_shift, B_RSHIFT)

BIN_LIST(BIN_WRAPPERS)

static PyObject *f_threshold_backward(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *kw)
{
    PCS_UNUSED(m);
    return binary_entry(B_THRESHOLD_BWD, NULL, a, n, kw, false);
}

/* _gelu_backward(grad, input, approximate='none'): grad and input positional */
static PyObject *f_gelu_backward(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *kw)
{
    PCS_UNUSED(m);
    static const char *const names[] = {"grad", "input", "approximate", NULL};
    if (pcs_check_kwargs(kw, "_gelu_backward", names) < 0)
        return NULL;
    if (n < 2) {
        PyErr_SetString(PyExc_TypeError, "_gelu_backward(grad, input, approximate='none'): grad and "
                                         "input are positional");
        return NULL;
    }
    PyObject *ap = pcs_arg(a, n, kw, 2, "approximate");
    int which = B_GELU_BWD;
    if (ap && ap != Py_None) {
        const char *s = PyUnicode_Check(ap) ? PyUnicode_AsUTF8(ap) : NULL;
        if (!s) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "_gelu_backward(): approximate must be a str");
            return NULL;
        }
        if (strcmp(s, "tanh") == 0) {
            which = B_GELU_TANH_BWD;
        } else if (strcmp(s, "none") != 0) {
            PyErr_SetString(PyExc_RuntimeError, "approximate argument must be either none or tanh.");
            return NULL;
        }
    }
    return binary_entry(which, NULL, a, 2, NULL, false);
}

#define FK (METH_FASTCALL | METH_KEYWORDS)
#define FN(f) (PyCFunction)(void (*)(void))(f)
#define TM_ENTRY(name, which)                                                                      \
    {#name, FN(m_##name), FK, "See pycuda_sem." #name "."},                                        \
        {#name "_", FN(m_##name##_), FK, "In-place " #name "."},
#define F_ENTRY(name, which) {#name, FN(f_##name), FK, "Elementwise " #name ", broadcasting."},

PyMethodDef pcs_ops_binary_tmethods[] = {
    BIN_LIST(TM_ENTRY)
    /* torch's longer names */
    {"subtract", FN(m_sub), FK, "Alias of sub."},
    {"subtract_", FN(m_sub_), FK, "Alias of sub_."},
    {"multiply", FN(m_mul), FK, "Alias of mul."},
    {"multiply_", FN(m_mul_), FK, "Alias of mul_."},
    {"divide", FN(m_div), FK, "Alias of div."},
    {"divide_", FN(m_div_), FK, "Alias of div_."},
    {"arctan2", FN(m_atan2), FK, "Alias of atan2."},
    {"greater", FN(m_gt), FK, "Alias of gt."},
    {"greater_equal", FN(m_ge), FK, "Alias of ge."},
    {"less", FN(m_lt), FK, "Alias of lt."},
    {"less_equal", FN(m_le), FK, "Alias of le."},
    {"not_equal", FN(m_ne), FK, "Alias of ne."},
    {"where", FN(m_where), FK, "where(condition, other): self where condition else other."},
    {"clamp", FN(m_clamp), FK, "clamp(min=None, max=None)."},
    {"clamp_", FN(m_clamp_), FK, "In-place clamp."},
    {"clip", FN(m_clamp), FK, "Alias of clamp."},
    {"clip_", FN(m_clamp_), FK, "Alias of clamp_."},
    {"lerp", FN(m_lerp), FK, "lerp(end, weight)."},
    {"lerp_", FN(m_lerp_), FK, "In-place lerp."},
    {NULL, NULL, 0, NULL},
};

PyMethodDef pcs_ops_binary_functions[] = {
    BIN_LIST(F_ENTRY)
    {"subtract", FN(f_sub), FK, "Alias of sub."},
    {"multiply", FN(f_mul), FK, "Alias of mul."},
    {"divide", FN(f_div), FK, "Alias of div."},
    {"arctan2", FN(f_atan2), FK, "Alias of atan2."},
    {"greater", FN(f_gt), FK, "Alias of gt."},
    {"greater_equal", FN(f_ge), FK, "Alias of ge."},
    {"less", FN(f_lt), FK, "Alias of lt."},
    {"less_equal", FN(f_le), FK, "Alias of le."},
    {"not_equal", FN(f_ne), FK, "Alias of ne."},
    {"where", FN(f_where), FK, "where(condition, input, other), broadcasting."},
    {"clamp", FN(f_clamp), FK, "clamp(input, min=None, max=None, *, out=None)."},
    {"clip", FN(f_clamp), FK, "Alias of clamp."},
    {"lerp", FN(f_lerp), FK, "lerp(input, end, weight, *, out=None)."},
    {"_threshold_backward", FN(f_threshold_backward), FK,
     "_threshold_backward(grad, result): relu's backward, 0 where result <= 0 else grad."},
    {"_gelu_backward", FN(f_gelu_backward), FK,
     "_gelu_backward(grad, input, approximate='none'): gelu's backward, grad * gelu'(input)."},
    {NULL, NULL, 0, NULL},
};
