/* ops.c: the op front door. What every computing op shares: operands and
 * torch's promotion rules, the one-device check, broadcasting, outputs
 * (new ones from the caching allocator on the current stream, or out=),
 * the elementwise executor that dispatches to a kernel launcher (CUDA) or
 * to NumPy on zero-copy views (CPU), the Tensor operators, and the
 * registration of the op files' functions and methods.
 *
 * Promotion (torch's ResultTypeState): operands fall in three classes,
 * tensors with dimensions, 0-dim tensors and Python numbers. Within a class
 * dtypes promote by the one table (dtype.c); a lower class only counts when
 * it is of a higher category (bool < integer < floating < complex), so
 * int64 + 2.5 is the default dtype, float16 + a float32 0-dim tensor stays
 * float16 and int32 + an int64 0-dim tensor stays int32. */
#include "ops/ops.h"
#include "ops/sort.h"
#include "ops/index.h"
#include "core/iter.h"
#include "runtime/device.h"

#include <string.h>

#include "core/numpy_interop.h"
#include "tensor/copy.h"
#include "runtime/stream.h"

/* ------------------------------------------------------------------------ */
/* Operands                                                                  */

/* A NumPy scalar (numpy.float32(2) ...) of a dtype we have. The type's
 * name is looked at first, so no other operand loads NumPy. */
static bool is_numpy_scalar(PyObject *obj)
{
    return !strncmp(Py_TYPE(obj)->tp_name, "numpy.", 6) && pcs_numpy_scalar_dtype(obj) >= 0;
}

int pcs_operand_from(PyObject *obj, pcs_operand *op)
{
    memset(op, 0, sizeof *op);
    if (PcsTensor_Check(obj)) {
        op->t = (PcsTensor *)obj;
        op->dtype = op->t->dtype;
        op->cls = op->t->ndim == 0 ? PCS_CLS_ZERO : PCS_CLS_DIM;
        return 0;
    }
    /* Python numbers only: NumPy arrays and lists are not operands (torch
     * raises TypeError for them too). NumPy scalars are numbers, as in
     * torch: x / np.sqrt(d) is x / 8.0, not an ndarray made by NumPy's
     * operator after ours declined. */
    if (!(PyBool_Check(obj) || PyLong_Check(obj) || PyFloat_Check(obj) || PyComplex_Check(obj) ||
          (PyNumber_Check(obj) && !PySequence_Check(obj) &&
           (!PyObject_HasAttrString(obj, "shape") || is_numpy_scalar(obj)))))
        return 1;
    if (pcs_scalar_from_py(obj, &op->s) < 0) {
        /* An int beyond [-2^63, 2^64) is a number no scalar holds: keep the
         * parser's RuntimeError "Overflow when unpacking long", as torch
         * says, rather than "not a Number". */
        if (PyLong_Check(obj) && !PyBool_Check(obj))
            return -1;
        PyErr_Clear();
        return 1;
    }
    op->is_scalar = true;
    op->cls = PCS_CLS_WRAPPED;
    op->dtype = pcs_scalar_default_dtype(op->s.kind);
    /* A wrapped float's dtype is the default dtype (ResultTypeState). */
    if (op->s.kind == PCS_SK_BOOL)
        op->dtype = PCS_BOOL;
    else if (op->s.kind == PCS_SK_INT)
        op->dtype = PCS_INT64;
    else if (op->s.kind == PCS_SK_FLOAT)
        op->dtype = pcs_default_dtype();
    else
        op->dtype = pcs_default_complex_dtype();
    return 0;
}

int pcs_operand_arg(PyObject *obj, pcs_operand *op, const char *fname, const char *what)
{
    int r = pcs_operand_from(obj, op);
    if (r == 1)
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be Tensor or Number, not %.100s",
                     fname, what, Py_TYPE(obj)->tp_name);
    return r == 0 ? 0 : -1;
}

/* ------------------------------------------------------------------------ */
/* Promotion                                                                 */

static int category(int d)
{
    if (d < 0)
        return -1;
    if (pcs_is_complex(d))
        return 3;
    if (pcs_is_float(d))
        return 2;
    return d == PCS_BOOL ? 0 : 1;
}

static int promote_skip(int a, int b)
{
    if (a < 0)
        return b;
    if (b < 0)
        return a;
    return pcs_promote_types(a, b);
}

/* torch's combine_categories(higher, lower). */
static int combine(int higher, int lower)
{
    if (higher < 0)
        return lower;
    if (pcs_is_complex(higher))
        return higher;
    if (lower >= 0 && pcs_is_complex(lower)) {
        /* keep the floating width of `higher` (float64 + 1j -> complex128) */
        return pcs_is_float(higher) ? pcs_complex_of(higher == PCS_FLOAT64 ? PCS_FLOAT64 : PCS_FLOAT32)
                                    : lower;
    }
    if (pcs_is_float(higher))
        return higher;
    if (higher == PCS_BOOL || (lower >= 0 && pcs_is_float(lower)))
        return promote_skip(higher, lower);
    return higher;
}

int pcs_result_type(const pcs_operand *ops, int n)
{
    int st[3] = {-1, -1, -1};
    for (int i = 0; i < n; i++)
        st[ops[i].cls] = promote_skip(st[ops[i].cls], ops[i].dtype);
    int r = combine(st[PCS_CLS_DIM], combine(st[PCS_CLS_ZERO], st[PCS_CLS_WRAPPED]));
    PCS_UNUSED(category);
    return r < 0 ? pcs_default_dtype() : r;
}

bool pcs_can_cast(int from, int to)
{
    if (pcs_is_complex(from) && !pcs_is_complex(to))
        return false;
    if (pcs_is_float(from) && pcs_is_integral(to, true))
        return false;
    if (from != PCS_BOOL && to == PCS_BOOL)
        return false;
    return true;
}

/* ------------------------------------------------------------------------ */
/* Devices and broadcasting                                                  */

/* The core's view of a tensor operand (NULL data: a scalar). */
static pcs_iter_operand iter_op(const PcsTensor *t)
{
    pcs_iter_operand o = {NULL, 0, NULL, NULL, 1};
    if (t) {
        o.data = pcs_tensor_data(t);
        o.ndim = t->ndim;
        o.sizes = t->sizes;
        o.strides = t->strides;
        o.itemsize = pcs_itemsize(t->dtype);
    }
    return o;
}

/* A new result in the inputs' memory order (torch's rule): a.t() + b.t()
 * is transposed too, and both read and write run contiguously. */
static PcsTensor *new_output(const pcs_ew_call *c, const pcs_operand *ops, int ndim,
                             const int64_t *sizes, int dev)
{
    pcs_iter_operand ins[3];
    int nin = 0;
    for (int i = 0; i < c->arity && nin < 3; i++)
        if (ops[i].t && !ops[i].is_scalar)
            ins[nin++] = iter_op(ops[i].t);
    int64_t strides[PCS_MAX_DIMS];
    pcs_iter_output_strides(ndim, sizes, nin, ins, strides);
    return pcs_tensor_empty_strided(ndim, sizes, strides, c->out_dtype, dev, false);
}

static void device_name(int dev, char *buf, size_t n)
{
    if (dev < 0)
        snprintf(buf, n, "cpu");
    else
        snprintf(buf, n, "cuda:%d", dev);
}

int pcs_common_device(pcs_operand *ops, int n)
{
    int dev = -2;
    /* Dimensioned tensors and CUDA tensors decide; 0-dim CPU tensors follow. */
    for (int i = 0; i < n; i++) {
        PcsTensor *t = ops[i].t;
        if (!t || (t->ndim == 0 && t->device < 0))
            continue;
        if (dev == -2) {
            dev = t->device;
        } else if (dev != t->device) {
            char a[32], b[32];
            device_name(dev, a, sizeof a);
            device_name(t->device, b, sizeof b);
            PyErr_Format(PyExc_RuntimeError,
                         "Expected all tensors to be on the same device, but found at least two "
                         "devices, %s and %s!",
                         a, b);
            return -2;
        }
    }
    if (dev == -2)
        return -1; /* only CPU 0-dim tensors and numbers: a CPU op */
    if (dev >= 0) {
        for (int i = 0; i < n; i++) {
            PcsTensor *t = ops[i].t;
            if (t && t->ndim == 0 && t->device < 0) {
                ops[i].s = pcs_scalar_load(t->dtype, pcs_tensor_data(t));
                ops[i].is_scalar = true;
            }
        }
    }
    return dev;
}

static void shape_str(int ndim, const int64_t *s, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < ndim && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, i ? ", %lld" : "%lld", (long long)s[i]);
    if (k < n)
        snprintf(buf + k, n - k, "]");
}

int pcs_broadcast_shape(const pcs_operand *ops, int n, int64_t *sizes)
{
    pcs_iter_operand io[8];
    int k = 0;
    for (int i = 0; i < n && k < 8; i++)
        if (ops[i].t && !ops[i].is_scalar)
            io[k++] = iter_op(ops[i].t);
    int64_t bad[3];
    int ndim = pcs_iter_broadcast(k, io, sizes, bad);
    if (ndim < 0)
        PyErr_Format(PyExc_RuntimeError,
                     "The size of tensor a (%lld) must match the size of tensor b (%lld) at "
                     "non-singleton dimension %d",
                     (long long)bad[0], (long long)bad[1], (int)bad[2]);
    return ndim;
}

PyObject *pcs_not_implemented(const char *op, int dtype)
{
    PyErr_Format(PyExc_NotImplementedError, "\"%s\" not implemented for '%s'", op, pcs_dtypes[dtype].legacy);
    return NULL;
}

int pcs_out_arg(PyObject *obj, PyObject **out)
{
    *out = NULL;
    if (!obj || obj == Py_None)
        return 0;
    if (!PcsTensor_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "argument 'out' must be Tensor, not %.100s",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    *out = obj;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* NumPy for CPU tensors                                                     */

PyObject *pcs_ops_numpy_fn(const char *name)
{
    static PyObject *mod = NULL;
    if (!mod && !(mod = PyImport_ImportModule("pycuda_sem._ops")))
        return NULL;
    PyObject *f = PyObject_GetAttrString(mod, name);
    if (!f)
        return NULL;
    Py_DECREF(f); /* the module keeps it alive */
    return f;
}

int pcs_ops_cpu_dtype(int dtype) { return dtype == PCS_BFLOAT16 ? PCS_FLOAT32 : dtype; }

int pcs_ops_check_cpu_size(const PcsTensor *t)
{
    /* An expanded view can count more elements than memory holds bytes
     * (zeros(1).expand(2**62, 4)): NumPy refuses it with a ValueError, torch
     * would loop for ages; say why, as a RuntimeError, before either. */
    int64_t nbytes;
    if (__builtin_mul_overflow(pcs_tensor_numel(t), (int64_t)pcs_itemsize(t->dtype), &nbytes) ||
        (uint64_t)nbytes > (uint64_t)PTRDIFF_MAX) {
        PyErr_Format(PyExc_RuntimeError,
                     "a tensor of %lld elements of %d bytes is too large to compute on: its "
                     "byte count overflows the address space",
                     (long long)pcs_tensor_numel(t), pcs_itemsize(t->dtype));
        return -1;
    }
    return 0;
}

PyObject *pcs_ops_numpy_in(PcsTensor *t, int dtype)
{
    if (pcs_ops_check_cpu_size(t) < 0)
        return NULL;
    PcsTensor *c = pcs_tensor_to(t, pcs_ops_cpu_dtype(dtype), -1, false, false, false);
    if (!c)
        return NULL;
    PyObject *a = pcs_tensor_numpy(c);
    Py_DECREF(c);
    return a;
}

/* ------------------------------------------------------------------------ */
/* The elementwise executor                                                  */

/* A number enters an integer op's compute dtype as a C conversion would
 * take it: an integer out of the dtype's range wraps (uint8 + 300 adds 44,
 * uint8 == 300 compares with 44, as in torch), on both devices. */
static pcs_scalar scalar_in(int dtype, pcs_scalar s)
{
    if (!pcs_is_integral(dtype, false))
        return s;
    unsigned char buf[16];
    pcs_scalar_store(dtype, buf, s);
    return pcs_scalar_load(dtype, buf);
}

static pcs_kscalar kscalar_of(pcs_scalar s)
{
    pcs_kscalar k = {0, 0.0, 0.0};
    switch (s.kind) {
    case PCS_SK_BOOL:
    case PCS_SK_INT:
        k.i = s.i;
        k.re = pcs_scalar_as_double(s); /* an int in [2^63, 2^64) keeps its value */
        break;
    case PCS_SK_FLOAT:
        k.re = s.re;
        k.i = (int64_t)s.re;
        break;
    case PCS_SK_COMPLEX:
        k.re = s.re;
        k.im = s.im;
        k.i = (int64_t)s.re;
        break;
    }
    return k;
}

/* Same strides over the dims of size > 1. */
static bool same_strides(const PcsTensor *a, const PcsTensor *b)
{
    if (a->ndim != b->ndim || memcmp(a->sizes, b->sizes, a->ndim * sizeof(int64_t)) != 0)
        return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->sizes[d] > 1 && a->strides[d] != b->strides[d])
            return false;
    return true;
}

/* Mixed layouts of unary and ternary ops (where(m, x, y.t()), or an out=
 * in another order than the input): when every input but one already walks
 * the result's memory order and that one is a dense tensor of the result's
 * shape and dtype in another order, copying it into the result first (the
 * tiled transposing copy, at copy bandwidth) and then running the op in
 * place over contiguous memory beats reading it across its rows. The result
 * is the staging buffer, so no memory is added. Binary ops never need it:
 * their launcher tiles the transposed input in the same pass
 * (kernels/ew_tiled.cuh), which moves fewer bytes. Returns the index of
 * that input, or -1. */
#define PCS_RESTAGE_MIN (1 << 20)
static int restage_input(const pcs_ew_call *c, PcsTensor *const *cast, const PcsTensor *res)
{
    if (c->arity == 2 || pcs_tensor_numel(res) < PCS_RESTAGE_MIN)
        return -1;
    int pick = -1;
    for (int i = 0; i < c->arity; i++) {
        const PcsTensor *t = cast[i];
        if (!t)
            continue; /* a scalar */
        if (t->storage == res->storage)
            return -1;
        if (same_strides(t, res))
            continue;
        pcs_iter_operand o = iter_op(t);
        if (pick >= 0 || t->dtype != res->dtype || t->ndim != res->ndim ||
            memcmp(t->sizes, res->sizes, t->ndim * sizeof(int64_t)) != 0 || !pcs_iter_dense(&o))
            return -1;
        pick = i;
    }
    return pick;
}

static int run_cuda(const pcs_ew_call *c, pcs_operand *ops, PcsTensor *res, int dev)
{
    PcsTensor *cast[3] = {NULL, NULL, NULL};
    const void *ptr[3] = {NULL, NULL, NULL};
    pcs_kscalar ks[3];
    int r = -1;
    int64_t n = pcs_tensor_numel(res);
    pcs_iter_operand io[PCS_EW_OPERANDS];
    io[0] = iter_op(res);
    for (int i = 0; i < 3; i++)
        ks[i] = c->extra[i];
    for (int i = 0; i < c->arity; i++) {
        int want = (i == 0 && c->in0_dtype >= 0) ? c->in0_dtype : c->compute;
        io[i + 1] = iter_op(NULL);
        if (ops[i].is_scalar) {
            ks[i] = kscalar_of(scalar_in(want, ops[i].s));
            continue;
        }
        cast[i] = pcs_tensor_to(ops[i].t, want, dev, false, false, false);
        if (!cast[i])
            goto out;
        ptr[i] = pcs_tensor_data(cast[i]);
        io[i + 1] = iter_op(cast[i]);
    }
    if (n == 0) {
        r = 0;
        goto out;
    }
    pcs_iter_plan plan;
    pcs_iter_build(&plan, res->ndim, res->sizes, c->arity + 1, io);
    int pick = plan.contiguous ? -1 : restage_input(c, cast, res);
    if (pick >= 0) {
        if (pcs_copy(res, cast[pick], false) < 0)
            goto out;
        ptr[pick] = pcs_tensor_data(res);
        io[pick + 1] = iter_op(res);
        pcs_iter_build(&plan, res->ndim, res->sizes, c->arity + 1, io);
    }
    const pcs_ew_geom *gp = plan.contiguous ? NULL : &plan.geom;
    if (pcs_cuda_set_device_raw(dev) < 0)
        goto out;
    cudaStream_t stream = pcs_current_stream(dev);
    int lr;
    void *o = pcs_tensor_data(res);
    if (c->arity == 1)
        lr = pcs_launch_unary(c->op, c->compute, o, ptr[0], ks, n, gp, stream);
    else if (c->arity == 2)
        lr = pcs_launch_binary(c->op, c->compute, o, ptr[0], ptr[1], ks, n, gp, stream);
    else
        lr = pcs_launch_ternary(c->op, c->compute, o, ptr[0], ptr[1], ptr[2], ks, n, gp, stream);
    if (lr < 0) {
        pcs_not_implemented(c->name, c->compute);
        goto out;
    }
    r = PCS_CHECK_LAUNCH(stream, c->name);
out:
    for (int i = 0; i < 3; i++)
        Py_XDECREF(cast[i]);
    return r;
}

static int run_cpu(const pcs_ew_call *c, pcs_operand *ops, PcsTensor *res)
{
    PyObject *fn = pcs_ops_numpy_fn(c->name);
    if (!fn)
        return -1;
    int nextra = c->cpu_args ? (int)PyTuple_GET_SIZE(c->cpu_args) : 0;
    PyObject *args = PyTuple_New(1 + c->arity + nextra);
    if (!args)
        return -1;
    int r = -1;
    PcsTensor *tmp = NULL;
    /* The output: NumPy writes through a view of res, or of a float32
     * temporary for bfloat16 (NumPy has no bfloat16). */
    PcsTensor *target = res;
    if (pcs_ops_cpu_dtype(res->dtype) != res->dtype) {
        tmp = pcs_tensor_empty(res->ndim, res->sizes, pcs_ops_cpu_dtype(res->dtype), -1, false);
        if (!tmp)
            goto out;
        target = tmp;
    }
    PyObject *o = pcs_tensor_numpy(target);
    if (!o)
        goto out;
    PyTuple_SET_ITEM(args, 0, o);
    for (int i = 0; i < c->arity; i++) {
        int want = (i == 0 && c->in0_dtype >= 0) ? c->in0_dtype : c->compute;
        PyObject *v;
        if (ops[i].t && ops[i].t->device < 0) {
            v = pcs_ops_numpy_in(ops[i].t, want);
        } else {
            /* wrapped here, where NumPy 2 would refuse an out-of-range int */
            const int cd = pcs_ops_cpu_dtype(want);
            v = pcs_scalar_to_py(cd, scalar_in(cd, ops[i].s));
        }
        if (!v)
            goto out;
        /* Numbers travel as 0-dim arrays of the compute dtype, so NumPy's
         * own scalar promotion never gets a say. */
        if (!ops[i].t || ops[i].t->device >= 0) {
            PyObject *np = PyImport_ImportModule("numpy");
            PyObject *arr = np ? PyObject_CallMethod(np, "asarray", "Os", v,
                                                     pcs_dtypes[pcs_ops_cpu_dtype(want)].np_typestr)
                               : NULL;
            Py_XDECREF(np);
            Py_DECREF(v);
            if (!(v = arr))
                goto out;
        }
        PyTuple_SET_ITEM(args, 1 + i, v);
    }
    for (int i = 0; i < nextra; i++)
        PyTuple_SET_ITEM(args, 1 + c->arity + i, Py_NewRef(PyTuple_GET_ITEM(c->cpu_args, i)));
    PyObject *res_np = PyObject_Call(fn, args, NULL);
    if (!res_np)
        goto out;
    Py_DECREF(res_np);
    r = tmp ? pcs_copy(res, tmp, false) : 0;
out:
    Py_DECREF(args);
    Py_XDECREF(tmp);
    return r;
}

PyObject *pcs_ew_run(const pcs_ew_call *c, pcs_operand *ops, PyObject *out)
{
    int dev = pcs_common_device(ops, c->arity);
    if (dev == -2)
        return NULL;
    bool any_tensor = false;
    for (int i = 0; i < c->arity; i++)
        any_tensor |= ops[i].t != NULL;
    if (!any_tensor) {
        PyErr_Format(PyExc_TypeError, "%s(): expected at least one Tensor argument", c->name);
        return NULL;
    }
    /* A Python int in [2^63, 2^64) (a uint64 Scalar in torch) keeps its
     * value in a floating computation and cannot join an integer one, where
     * torch's checked conversion refuses it too. */
    for (int i = 0; i < c->arity; i++) {
        if (!ops[i].is_scalar || ops[i].s.kind != PCS_SK_INT || !ops[i].s.u64)
            continue;
        int want = (i == 0 && c->in0_dtype >= 0) ? c->in0_dtype : c->compute;
        if (!pcs_is_float(want) && !pcs_is_complex(want)) {
            PyErr_Format(PyExc_RuntimeError,
                         "value cannot be converted to type int64_t without overflow");
            return NULL;
        }
        ops[i].s.kind = PCS_SK_FLOAT;
        ops[i].s.re = (double)(uint64_t)ops[i].s.i;
        ops[i].s.u64 = false;
    }
    int64_t sizes[PCS_MAX_DIMS];
    int ndim = pcs_broadcast_shape(ops, c->arity, sizes);
    if (ndim < 0)
        return NULL;
    PcsTensor *res;
    PcsTensor *o = (PcsTensor *)out;
    if (o) {
        if (o->device != dev) {
            char a[32], b[32];
            device_name(dev, a, sizeof a);
            device_name(o->device, b, sizeof b);
            PyErr_Format(PyExc_RuntimeError,
                         "Expected all tensors to be on the same device, but found at least two "
                         "devices, %s and %s!",
                         a, b);
            return NULL;
        }
        if (o->ndim != ndim || memcmp(o->sizes, sizes, ndim * sizeof(int64_t)) != 0) {
            char a[256], b[256];
            shape_str(o->ndim, o->sizes, a, sizeof a);
            shape_str(ndim, sizes, b, sizeof b);
            PyErr_Format(PyExc_RuntimeError,
                         "output with shape %s doesn't match the broadcast shape %s", a, b);
            return NULL;
        }
        if (!pcs_can_cast(c->out_dtype, o->dtype)) {
            PyErr_Format(PyExc_RuntimeError, "result type %s can't be cast to the desired output type %s",
                         pcs_dtypes[c->out_dtype].legacy, pcs_dtypes[o->dtype].legacy);
            return NULL;
        }
        /* An expanded out, or one partly overlapping an input, raises as
         * torch does; exact aliasing (in-place ops) is fine. */
        pcs_iter_operand oi = iter_op(o), ii[3];
        int nin = 0;
        for (int i = 0; i < c->arity; i++)
            if (ops[i].t && !ops[i].is_scalar)
                ii[nin++] = iter_op(ops[i].t);
        if (pcs_iter_check_overlap(&oi, nin, ii) < 0)
            return NULL;
        /* Writes straight into out when the dtype matches; the kernels
         * handle any strides. */
        if (o->dtype == c->out_dtype)
            res = (PcsTensor *)Py_NewRef(o);
        else
            res = new_output(c, ops, ndim, sizes, dev);
    } else {
        res = new_output(c, ops, ndim, sizes, dev);
    }
    if (!res)
        return NULL;
    int r = dev >= 0 ? run_cuda(c, ops, res, dev) : run_cpu(c, ops, res);
    if (r == 0 && o && res != o)
        r = pcs_copy(o, res, false);
    if (r < 0) {
        Py_DECREF(res);
        return NULL;
    }
    if (o && res != o) {
        Py_DECREF(res);
        return Py_NewRef(out);
    }
    return (PyObject *)res;
}

/* ------------------------------------------------------------------------ */
/* Operators                                                                 */

#define BINSLOT(fn, which, inplace)                                                              \
    static PyObject *fn(PyObject *a, PyObject *b) { return pcs_binary_operator(which, a, b, inplace); }
BINSLOT(nb_add, PCS_OPR_ADD, false)
BINSLOT(nb_sub, PCS_OPR_SUB, false)
BINSLOT(nb_mul, PCS_OPR_MUL, false)
BINSLOT(nb_truediv, PCS_OPR_TRUEDIV, false)
BINSLOT(nb_floordiv, PCS_OPR_FLOORDIV, false)
BINSLOT(nb_mod, PCS_OPR_MOD, false)
BINSLOT(nb_and, PCS_OPR_AND, false)
BINSLOT(nb_or, PCS_OPR_OR, false)
BINSLOT(nb_xor, PCS_OPR_XOR, false)
BINSLOT(nb_lshift, PCS_OPR_LSHIFT, false)
BINSLOT(nb_rshift, PCS_OPR_RSHIFT, false)
BINSLOT(nb_iadd, PCS_OPR_ADD, true)
BINSLOT(nb_isub, PCS_OPR_SUB, true)
BINSLOT(nb_imul, PCS_OPR_MUL, true)
BINSLOT(nb_itruediv, PCS_OPR_TRUEDIV, true)
BINSLOT(nb_ifloordiv, PCS_OPR_FLOORDIV, true)
BINSLOT(nb_imod, PCS_OPR_MOD, true)
BINSLOT(nb_iand, PCS_OPR_AND, true)
BINSLOT(nb_ior, PCS_OPR_OR, true)
BINSLOT(nb_ixor, PCS_OPR_XOR, true)
BINSLOT(nb_ilshift, PCS_OPR_LSHIFT, true)
BINSLOT(nb_irshift, PCS_OPR_RSHIFT, true)
#undef BINSLOT

static PyObject *nb_pow(PyObject *a, PyObject *b, PyObject *mod)
{
    if (mod != Py_None)
        Py_RETURN_NOTIMPLEMENTED;
    return pcs_binary_operator(PCS_OPR_POW, a, b, false);
}

static PyObject *nb_ipow(PyObject *a, PyObject *b, PyObject *mod)
{
    if (mod != Py_None)
        Py_RETURN_NOTIMPLEMENTED;
    return pcs_binary_operator(PCS_OPR_POW, a, b, true);
}

static PyObject *nb_neg(PyObject *x) { return pcs_unary_operator(PCS_UOP_NEG, x); }
static PyObject *nb_abs(PyObject *x) { return pcs_unary_operator(PCS_UOP_ABS, x); }
static PyObject *nb_invert(PyObject *x) { return pcs_unary_operator(PCS_UOP_BITWISE_NOT, x); }
static PyObject *nb_pos(PyObject *x)
{
    if (PcsTensor_Check(x) && ((PcsTensor *)x)->dtype == PCS_BOOL) {
        PyErr_SetString(PyExc_RuntimeError, "Positive, the `+` operator, on a bool tensor is not supported.");
        return NULL;
    }
    return Py_NewRef(x);
}

PyObject *pcs_ops_richcompare(PyObject *a, PyObject *b, int op)
{
    static const int map[] = {[Py_LT] = PCS_OPR_LT, [Py_LE] = PCS_OPR_LE, [Py_EQ] = PCS_OPR_EQ,
                              [Py_NE] = PCS_OPR_NE, [Py_GT] = PCS_OPR_GT, [Py_GE] = PCS_OPR_GE};
    return pcs_binary_operator(map[op], a, b, false);
}

/* ------------------------------------------------------------------------ */
/* Registration                                                              */

#define PCS_OPS_MAX_METHODS 1024 /* room for every op table (past it, methods would be dropped) */
PyMethodDef pcs_tensor_ops_methods[PCS_OPS_MAX_METHODS + 1];

static size_t append_methods(PyMethodDef *dst, size_t k, const PyMethodDef *src)
{
    for (size_t i = 0; src[i].ml_name && k < PCS_OPS_MAX_METHODS; i++)
        dst[k++] = src[i];
    return k;
}

void pcs_ops_install_number_slots(PyNumberMethods *nb)
{
    nb->nb_add = nb_add;
    nb->nb_subtract = nb_sub;
    nb->nb_multiply = nb_mul;
    nb->nb_true_divide = nb_truediv;
    nb->nb_floor_divide = nb_floordiv;
    nb->nb_remainder = nb_mod;
    nb->nb_power = nb_pow;
    nb->nb_negative = nb_neg;
    nb->nb_positive = nb_pos;
    nb->nb_absolute = nb_abs;
    nb->nb_invert = nb_invert;
    nb->nb_and = nb_and;
    nb->nb_or = nb_or;
    nb->nb_xor = nb_xor;
    nb->nb_lshift = nb_lshift;
    nb->nb_rshift = nb_rshift;
    nb->nb_inplace_add = nb_iadd;
    nb->nb_inplace_subtract = nb_isub;
    nb->nb_inplace_multiply = nb_imul;
    nb->nb_inplace_true_divide = nb_itruediv;
    nb->nb_inplace_floor_divide = nb_ifloordiv;
    nb->nb_inplace_remainder = nb_imod;
    nb->nb_inplace_power = nb_ipow;
    nb->nb_inplace_and = nb_iand;
    nb->nb_inplace_or = nb_ior;
    nb->nb_inplace_xor = nb_ixor;
    nb->nb_inplace_lshift = nb_ilshift;
    nb->nb_inplace_rshift = nb_irshift;
    /* Comparisons give tensors; a type with tp_richcompare and no tp_hash
     * would become unhashable, and torch's tensors hash by identity. */
    PcsTensor_Type.tp_richcompare = pcs_ops_richcompare;
    if (!PcsTensor_Type.tp_hash)
        PcsTensor_Type.tp_hash = PyBaseObject_Type.tp_hash;
    /* The method table is assembled here because pcs_tensor_type_init copies
     * it right after this call. */
    size_t k = 0;
    k = append_methods(pcs_tensor_ops_methods, k, pcs_ops_binary_tmethods);
    k = append_methods(pcs_tensor_ops_methods, k, pcs_ops_unary_tmethods);
    k = append_methods(pcs_tensor_ops_methods, k, pcs_ops_reduce_tmethods);
    k = append_methods(pcs_tensor_ops_methods, k, pcs_ops_split_tmethods);
    k = append_methods(pcs_tensor_ops_methods, k, pcs_ops_shape_tmethods);
    k = append_methods(pcs_tensor_ops_methods, k, pcs_ops_diag_tmethods);
    k = append_methods(pcs_tensor_ops_methods, k, pcs_ops_softmax_tmethods);
    k = append_methods(pcs_tensor_ops_methods, k, pcs_ops_py_tmethods);
    k = append_methods(pcs_tensor_ops_methods, k, pcs_ops_sort_tmethods);
    k = append_methods(pcs_tensor_ops_methods, k, pcs_ops_select_tmethods);
    k = append_methods(pcs_tensor_ops_methods, k, pcs_ops_scan_tmethods);
    k = append_methods(pcs_tensor_ops_methods, k, pcs_ops_index_tmethods);
    k = append_methods(pcs_tensor_ops_methods, k, pcs_ops_gather_tmethods);
    k = append_methods(pcs_tensor_ops_methods, k, pcs_ops_masked_tmethods);
    memset(&pcs_tensor_ops_methods[k], 0, sizeof(PyMethodDef));
}

int pcs_ops_init(PyObject *m)
{
    if (PyModule_AddFunctions(m, pcs_ops_binary_functions) < 0 ||
        PyModule_AddFunctions(m, pcs_ops_unary_functions) < 0 ||
        PyModule_AddFunctions(m, pcs_ops_reduce_functions) < 0 ||
        PyModule_AddFunctions(m, pcs_ops_join_functions) < 0 ||
        PyModule_AddFunctions(m, pcs_ops_split_functions) < 0 ||
        PyModule_AddFunctions(m, pcs_ops_shape_functions) < 0 ||
        PyModule_AddFunctions(m, pcs_ops_diag_functions) < 0 ||
        PyModule_AddFunctions(m, pcs_ops_softmax_functions) < 0 ||
        PyModule_AddFunctions(m, pcs_ops_fused_functions) < 0 ||
        PyModule_AddFunctions(m, pcs_ops_optim_functions) < 0 ||
        PyModule_AddFunctions(m, pcs_ops_sort_functions) < 0 ||
        PyModule_AddFunctions(m, pcs_ops_select_functions) < 0 ||
        PyModule_AddFunctions(m, pcs_ops_scan_functions) < 0 ||
        PyModule_AddFunctions(m, pcs_ops_search_functions) < 0 ||
        PyModule_AddFunctions(m, pcs_ops_index_functions) < 0 ||
        PyModule_AddFunctions(m, pcs_ops_gather_functions) < 0 ||
        PyModule_AddFunctions(m, pcs_ops_masked_functions) < 0)
        return -1;
    if (pcs_ops_sort_init(m) < 0)
        return -1;
    /* x[idx] with tensors, lists or masks: the tensor layer calls these. */
    pcs_tensor_set_index_hooks(pcs_index_getitem_advanced, pcs_index_setitem_advanced);
    return pcs_ops_reduce_init(m);
}
