/* ops_unary.c: unary elementwise ops (neg ... nan_to_num) as module
 * functions, Tensor methods, in-place methods and the -x, abs(x), ~x
 * operators.
 *
 * The table says how each op's dtype behaves, as torch: math functions turn
 * integers into the default dtype, rounding and sign keep the dtype (and
 * are the identity on integers), predicates give bool, abs of a complex
 * number is real. Which ops take complex inputs is the table's `cplx` flag,
 * kept equal to the kernels' own list so that the CPU and the GPU agree. */
#include "ops/ops.h"

#include <math.h>
#include <float.h>
#include <string.h>

enum { U_FLOAT, U_SAME, U_PRED, U_INTONLY, U_FLOATONLY };

typedef struct {
    const char *name;
    int op;
    int kind;
    bool cplx; /* complex inputs supported */
} un_spec;

#define UN_LIST(X)                                                                                \
    X(neg, PCS_UOP_NEG, U_SAME, 1) X(abs, PCS_UOP_ABS, U_SAME, 1) X(sign, PCS_UOP_SIGN, U_SAME, 0) \
    X(exp, PCS_UOP_EXP, U_FLOAT, 1) X(exp2, PCS_UOP_EXP2, U_FLOAT, 0)                             \
    X(expm1, PCS_UOP_EXPM1, U_FLOAT, 0) X(log, PCS_UOP_LOG, U_FLOAT, 1)                           \
    X(log2, PCS_UOP_LOG2, U_FLOAT, 0) X(log10, PCS_UOP_LOG10, U_FLOAT, 0)                         \
    X(log1p, PCS_UOP_LOG1P, U_FLOAT, 0) X(sqrt, PCS_UOP_SQRT, U_FLOAT, 1)                         \
    X(rsqrt, PCS_UOP_RSQRT, U_FLOAT, 0) X(sin, PCS_UOP_SIN, U_FLOAT, 1)                           \
    X(cos, PCS_UOP_COS, U_FLOAT, 1) X(tan, PCS_UOP_TAN, U_FLOAT, 1)                               \
    X(asin, PCS_UOP_ASIN, U_FLOAT, 0) X(acos, PCS_UOP_ACOS, U_FLOAT, 0)                           \
    X(atan, PCS_UOP_ATAN, U_FLOAT, 0) X(sinh, PCS_UOP_SINH, U_FLOAT, 1)                           \
    X(cosh, PCS_UOP_COSH, U_FLOAT, 1) X(tanh, PCS_UOP_TANH, U_FLOAT, 1)                           \
    X(sigmoid, PCS_UOP_SIGMOID, U_FLOAT, 1) X(relu, PCS_UOP_RELU, U_SAME, 0)                      \
    X(floor, PCS_UOP_FLOOR, U_SAME, 0) X(ceil, PCS_UOP_CEIL, U_SAME, 0)                           \
    X(trunc, PCS_UOP_TRUNC, U_SAME, 0)                                                            \
    X(frac, PCS_UOP_FRAC, U_FLOATONLY, 0) X(reciprocal, PCS_UOP_RECIPROCAL, U_FLOAT, 1)           \
    X(square, PCS_UOP_SQUARE, U_SAME, 1) X(bitwise_not, PCS_UOP_BITWISE_NOT, U_INTONLY, 0)        \
    X(logical_not, PCS_UOP_LOGICAL_NOT, U_PRED, 1) X(erf, PCS_UOP_ERF, U_FLOAT, 0)                 \
    X(erfc, PCS_UOP_ERFC, U_FLOAT, 0) X(erfinv, PCS_UOP_ERFINV, U_FLOAT, 0)                       \
    X(lgamma, PCS_UOP_LGAMMA, U_FLOAT, 0) X(digamma, PCS_UOP_DIGAMMA, U_FLOAT, 0)                 \
    X(_trigamma, PCS_UOP_TRIGAMMA, U_FLOAT, 0)

#define PRED_LIST(X)                                                                              \
    X(isnan, PCS_UOP_ISNAN, U_PRED, 1) X(isinf, PCS_UOP_ISINF, U_PRED, 1)                         \
    X(isfinite, PCS_UOP_ISFINITE, U_PRED, 1)

#define SPEC_ENUM(name, op, kind, cx) UN_##name,
enum { UN_LIST(SPEC_ENUM) PRED_LIST(SPEC_ENUM) UN_GELU, UN_NAN_TO_NUM, UN_round, UN_COUNT };
#define SPEC_ROW(name, op, kind, cx) [UN_##name] = {#name, op, kind, cx},
static const un_spec uns[UN_COUNT] = {
    UN_LIST(SPEC_ROW) PRED_LIST(SPEC_ROW)
    [UN_GELU] = {"gelu", PCS_UOP_GELU, U_FLOATONLY, 0},
    [UN_NAN_TO_NUM] = {"nan_to_num", PCS_UOP_NAN_TO_NUM, U_SAME, 0},
    [UN_round] = {"round", PCS_UOP_ROUND, U_SAME, 0},
};

/* The dtype's largest finite value, nan_to_num's default for +inf. */
static double dtype_max(int dtype)
{
    switch (dtype) {
    case PCS_FLOAT16: return 65504.0;
    case PCS_BFLOAT16: return 3.3895313892515355e38;
    case PCS_FLOAT32: return FLT_MAX;
    default: return DBL_MAX;
    }
}

/* x: the operand; out: out= or self (in-place) or NULL. */
static PyObject *unary_core(int which, PyObject *x, PyObject *out, const pcs_ew_call *tmpl)
{
    const un_spec *sp = &uns[which];
    pcs_operand op;
    if (!PcsTensor_Check(x)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'input' must be Tensor, not %.100s", sp->name,
                     Py_TYPE(x)->tp_name);
        return NULL;
    }
    if (pcs_operand_from(x, &op) < 0)
        return NULL;
    int dt = op.dtype;
    pcs_ew_call c;
    if (tmpl)
        c = *tmpl;
    else
        memset(&c, 0, sizeof c);
    c.arity = 1;
    c.op = tmpl ? tmpl->op : sp->op;
    c.name = tmpl ? tmpl->name : sp->name;
    c.in0_dtype = -1;
    c.compute = c.out_dtype = dt;
    if (pcs_is_complex(dt) && !sp->cplx)
        return pcs_not_implemented(sp->name, dt);
    switch (sp->kind) {
    case U_FLOAT:
        if (pcs_is_integral(dt, true))
            c.compute = c.out_dtype = pcs_default_dtype();
        break;
    case U_SAME:
        if (c.op == PCS_UOP_NEG && dt == PCS_BOOL) {
            PyErr_SetString(PyExc_RuntimeError,
                            "Negation, the `-` operator, on a bool tensor is not supported. If you "
                            "are trying to invert a mask, use the `~` or `logical_not()` operator "
                            "instead.");
            return NULL;
        }
        if (c.op == PCS_UOP_ABS && pcs_is_complex(dt))
            c.out_dtype = pcs_real_of(dt);
        break;
    case U_PRED:
        c.out_dtype = PCS_BOOL;
        break;
    case U_INTONLY:
        if (!pcs_is_integral(dt, true))
            return pcs_not_implemented(sp->name, dt);
        break;
    case U_FLOATONLY:
        if (!pcs_is_float(dt))
            return pcs_not_implemented(sp->name, dt);
        break;
    }
    /* logical_not_ keeps self's dtype: the bool result is cast back. */
    return pcs_ew_run(&c, &op, out);
}

PyObject *pcs_unary_operator(int op, PyObject *x)
{
    if (!PcsTensor_Check(x))
        Py_RETURN_NOTIMPLEMENTED;
    int which = op == PCS_UOP_NEG ? UN_neg : op == PCS_UOP_ABS ? UN_abs : UN_bitwise_not;
    if (op == PCS_UOP_BITWISE_NOT && ((PcsTensor *)x)->dtype == PCS_BOOL)
        which = UN_logical_not;
    return unary_core(which, x, NULL, NULL);
}

static const char *const un_kw[] = {"input", "out", NULL};

static PyObject *unary_entry(int which, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kw, bool inplace)
{
    if (pcs_check_kwargs(kw, uns[which].name, un_kw) < 0)
        return NULL;
    PyObject *x = self ? self : pcs_arg(args, nargs, kw, 0, "input");
    if (!x || nargs > (self ? 0 : 1)) {
        PyErr_Format(PyExc_TypeError, "%s() takes exactly one tensor argument", uns[which].name);
        return NULL;
    }
    PyObject *out;
    if (pcs_out_arg(pcs_arg(args, nargs, kw, -1, "out"), &out) < 0)
        return NULL;
    return unary_core(which, x, inplace ? self : out, NULL);
}

/* gelu(input, approximate='none') */
static PyObject *gelu_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw,
                            bool inplace)
{
    static const char *const names[] = {"input", "approximate", NULL};
    if (pcs_check_kwargs(kw, "gelu", names) < 0)
        return NULL;
    int base = self ? -1 : 0;
    PyObject *x = self ? self : pcs_arg(args, nargs, kw, 0, "input");
    PyObject *ap = pcs_arg(args, nargs, kw, base + 1, "approximate");
    if (!x) {
        PyErr_SetString(PyExc_TypeError, "gelu() missing required argument 'input'");
        return NULL;
    }
    pcs_ew_call c = {.op = PCS_UOP_GELU, .name = "gelu"};
    if (ap && ap != Py_None) {
        const char *s = PyUnicode_Check(ap) ? PyUnicode_AsUTF8(ap) : NULL;
        if (!s || (strcmp(s, "none") != 0 && strcmp(s, "tanh") != 0)) {
            PyErr_SetString(PyExc_RuntimeError, "approximate argument must be either none or tanh.");
            return NULL;
        }
        if (s[0] == 't') {
            c.op = PCS_UOP_GELU_TANH;
            c.name = "gelu_tanh";
        }
    }
    return unary_core(UN_GELU, x, inplace ? self : NULL, &c);
}

/* nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None) */
static PyObject *nan_to_num_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kw, bool inplace)
{
    static const char *const names[] = {"input", "nan", "posinf", "neginf", "out", NULL};
    if (pcs_check_kwargs(kw, "nan_to_num", names) < 0)
        return NULL;
    int base = self ? -1 : 0;
    PyObject *x = self ? self : pcs_arg(args, nargs, kw, 0, "input");
    if (!x || !PcsTensor_Check(x)) {
        PyErr_SetString(PyExc_TypeError, "nan_to_num(): argument 'input' must be Tensor");
        return NULL;
    }
    int dt = ((PcsTensor *)x)->dtype;
    double v[3] = {0.0, dtype_max(dt), -dtype_max(dt)};
    const char *pn[3] = {"nan", "posinf", "neginf"};
    for (int i = 0; i < 3; i++) {
        PyObject *o = pcs_arg(args, nargs, kw, base + 1 + i, pn[i]);
        if (o && o != Py_None && ((v[i] = PyFloat_AsDouble(o)) == -1.0) && PyErr_Occurred())
            return NULL;
    }
    PyObject *out;
    if (pcs_out_arg(pcs_arg(args, nargs, kw, -1, "out"), &out) < 0)
        return NULL;
    pcs_ew_call c = {.op = PCS_UOP_NAN_TO_NUM, .name = "nan_to_num"};
    for (int i = 0; i < 3; i++) {
        c.extra[i].re = v[i];
        c.extra[i].i = 0;
    }
    c.cpu_args = Py_BuildValue("(ddd)", v[0], v[1], v[2]);
    if (!c.cpu_args)
        return NULL;
    PyObject *r = unary_core(UN_NAN_TO_NUM, x, inplace ? self : out, &c);
    Py_DECREF(c.cpu_args);
    return r;
}

/* round(x, decimals) for decimals != 0, as torch computes it: half to even
 * of x * 10^d, divided back (d > 0), or of x / 10^-d, multiplied back
 * (d < 0), through the ordinary differentiable ops; into `dst` (out= or
 * self for round_) when given. Floating tensors only, as torch. */
static PyObject *round_decimals(PyObject *x, long long dec, PyObject *dst)
{
    if (!PcsTensor_Check(x) || !pcs_is_float(((PcsTensor *)x)->dtype)) {
        PyErr_SetString(PyExc_RuntimeError, "round(decimals != 0) is implemented for floating "
                                            "point tensors only, as torch's \"round_decimals\"");
        return NULL;
    }
    if (dec > 308 || dec < -308) {
        PyErr_SetString(PyExc_RuntimeError, "round(): decimals is out of range");
        return NULL;
    }
    PyObject *p = PyFloat_FromDouble(pow(10.0, (double)(dec > 0 ? dec : -dec)));
    if (!p)
        return NULL;
    PyObject *scaled = dec > 0 ? PyNumber_Multiply(x, p) : PyNumber_TrueDivide(x, p);
    PyObject *r = scaled ? unary_core(UN_round, scaled, NULL, NULL) : NULL;
    PyObject *back = r ? (dec > 0 ? PyNumber_TrueDivide(r, p) : PyNumber_Multiply(r, p)) : NULL;
    Py_XDECREF(scaled);
    Py_XDECREF(r);
    Py_DECREF(p);
    if (!back || !dst)
        return back;
    PyObject *done = PyObject_CallMethod(dst, "copy_", "O", back);
    Py_DECREF(back);
    if (!done)
        return NULL;
    Py_DECREF(done);
    return Py_NewRef(dst);
}

/* round(input, decimals=0) */
static PyObject *round_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw,
                             bool inplace)
{
    static const char *const names[] = {"input", "decimals", "out", NULL};
    if (pcs_check_kwargs(kw, "round", names) < 0)
        return NULL;
    int base = self ? -1 : 0;
    PyObject *x = self ? self : pcs_arg(args, nargs, kw, 0, "input");
    PyObject *d = pcs_arg(args, nargs, kw, base + 1, "decimals");
    if (!x) {
        PyErr_SetString(PyExc_TypeError, "round() missing required argument 'input'");
        return NULL;
    }
    if (d && d != Py_None) {
        int overflow;
        long long dec = PyLong_AsLongLongAndOverflow(d, &overflow);
        if (overflow) { /* decimals is an int64: torch's THPUtils_unpackLong message */
            PyErr_SetString(PyExc_RuntimeError, "Overflow when unpacking long");
            return NULL;
        }
        if (dec == -1 && PyErr_Occurred())
            return NULL;
        if (dec != 0) {
            PyObject *out;
            if (pcs_out_arg(pcs_arg(args, nargs, kw, -1, "out"), &out) < 0)
                return NULL;
            return round_decimals(x, dec, inplace ? self : out);
        }
    }
    PyObject *out;
    if (pcs_out_arg(pcs_arg(args, nargs, kw, -1, "out"), &out) < 0)
        return NULL;
    return unary_core(UN_round, x, inplace ? self : out, NULL);
}

/* ------------------------------------------------------------------------ */
/* Tables                                                                    */

#define UN_WRAPPERS(name, op, kind, cx)                                                           \
    static PyObject *f_##name(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *kw)       \
    {                                                                                             \
        PCS_UNUSED(m);                                                                            \
        return unary_entry(UN_##name, NULL, a, n, kw, false);                                     \
    }                                                                                             \
    static PyObject *m_##name(PyObject *s, PyObject *const *a, Py_ssize_t n, PyObject *kw)       \
    {                                                                                             \
        return unary_entry(UN_##name, s, a, n, kw, false);                                        \
    }                                                                                             \
    static PyObject *m_##name##_(PyObject *s, PyObject *const *a, Py_ssize_t n, PyObject *kw)    \
    {                                                                                             \
        return unary_entry(UN_##name, s, a, n, kw, true);                                         \
    }
#define PRED_WRAPPERS(name, op, kind, cx)                                                         \
    static PyObject *f_##name(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *kw)       \
    {                                                                                             \
        PCS_UNUSED(m);                                                                            \
        return unary_entry(UN_##name, NULL, a, n, kw, false);                                     \
    }                                                                                             \
    static PyObject *m_##name(PyObject *s, PyObject *const *a, Py_ssize_t n, PyObject *kw)       \
    {                                                                                             \
        return unary_entry(UN_##name, s, a, n, kw, false);                                        \
    }
UN_LIST(UN_WRAPPERS)
PRED_LIST(PRED_WRAPPERS)

#define SPECIAL_WRAPPERS(name)                                                                    \
    static PyObject *fs_##name(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *kw)      \
    {                                                                                             \
        PCS_UNUSED(m);                                                                            \
        return name##_entry(NULL, a, n, kw, false);                                               \
    }                                                                                             \
    static PyObject *ms_##name(PyObject *s, PyObject *const *a, Py_ssize_t n, PyObject *kw)      \
    {                                                                                             \
        return name##_entry(s, a, n, kw, false);                                                  \
    }                                                                                             \
    static PyObject *ms_##name##_(PyObject *s, PyObject *const *a, Py_ssize_t n, PyObject *kw)   \
    {                                                                                             \
        return name##_entry(s, a, n, kw, true);                                                   \
    }
SPECIAL_WRAPPERS(gelu)
SPECIAL_WRAPPERS(nan_to_num)
SPECIAL_WRAPPERS(round)

#define FK (METH_FASTCALL | METH_KEYWORDS)
#define FN(f) (PyCFunction)(void (*)(void))(f)
#define TM_ENTRY(name, op, kind, cx)                                                               \
    {#name, FN(m_##name), FK, "See pycuda_sem." #name "."},                                        \
        {#name "_", FN(m_##name##_), FK, "In-place " #name "."},
#define TP_ENTRY(name, op, kind, cx) {#name, FN(m_##name), FK, "See pycuda_sem." #name "."},
#define F_ENTRY(name, op, kind, cx) {#name, FN(f_##name), FK, "Elementwise " #name "."},
#define SPECIAL_T(name)                                                                            \
    {#name, FN(ms_##name), FK, "See pycuda_sem." #name "."},                                       \
        {#name "_", FN(ms_##name##_), FK, "In-place " #name "."},
#define SPECIAL_F(name) {#name, FN(fs_##name), FK, "Elementwise " #name "."},

PyMethodDef pcs_ops_unary_tmethods[] = {
    UN_LIST(TM_ENTRY) PRED_LIST(TP_ENTRY)
    SPECIAL_T(gelu) SPECIAL_T(nan_to_num)
    {"round", FN(ms_round), FK, "Rounds half to even."},
    {"round_", FN(ms_round_), FK, "In-place round."},
    {"negative", FN(m_neg), FK, "Alias of neg."},
    {"negative_", FN(m_neg_), FK, "Alias of neg_."},
    {"absolute", FN(m_abs), FK, "Alias of abs."},
    {"absolute_", FN(m_abs_), FK, "Alias of abs_."},
    {"arcsin", FN(m_asin), FK, "Alias of asin."},
    {"arccos", FN(m_acos), FK, "Alias of acos."},
    {"arctan", FN(m_atan), FK, "Alias of atan."},
    {"arcsin_", FN(m_asin_), FK, "Alias of asin_."},
    {"arccos_", FN(m_acos_), FK, "Alias of acos_."},
    {"arctan_", FN(m_atan_), FK, "Alias of atan_."},
    {"fix", FN(m_trunc), FK, "Alias of trunc."},
    {"fix_", FN(m_trunc_), FK, "Alias of trunc_."},
    {NULL, NULL, 0, NULL},
};

PyMethodDef pcs_ops_unary_functions[] = {
    UN_LIST(F_ENTRY) PRED_LIST(F_ENTRY)
    SPECIAL_F(gelu) SPECIAL_F(nan_to_num)
    {"round", FN(fs_round), FK, "Rounds half to even."},
    {"negative", FN(f_neg), FK, "Alias of neg."},
    {"absolute", FN(f_abs), FK, "Alias of abs."},
    {"arcsin", FN(f_asin), FK, "Alias of asin."},
    {"arccos", FN(f_acos), FK, "Alias of acos."},
    {"arctan", FN(f_atan), FK, "Alias of atan."},
    {"fix", FN(f_trunc), FK, "Alias of trunc."},
    {NULL, NULL, 0, NULL},
};
