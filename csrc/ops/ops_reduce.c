/* ops_reduce.c: reductions (sum, mean, prod, max, min, amax, amin, argmax,
 * argmin, std, var, norm, all, any, logsumexp) and scans (cumsum, cumprod)
 * as module functions and Tensor methods.
 *
 * Dims may be an int, a tuple or None (all); keepdim keeps them as size 1.
 * On CUDA the input is presented to reduce.cu as a contiguous [A, K, B]
 * block without copying whenever its layout allows (the iteration core's
 * pcs_iter_reduce_blocks: a dense tensor whose reduced dims are one run in
 * memory order); otherwise the kept dims are permuted to the front and a
 * contiguous copy is made. On the CPU
 * NumPy reduces zero-copy views (pycuda_sem/_ops.py). max/min with a dim
 * return a (values, indices) struct sequence as torch.return_types. A scan
 * of a few long rows goes to CUB's device-wide scan (scan.c). */
#include "ops/ops.h"
#include "ops/reduce.h"
#include "ops/sort.h"
#include "core/iter.h"
#include "runtime/device.h"

#include <math.h>
#include <string.h>

#include "tensor/copy.h"
#include "runtime/stream.h"

static PyTypeObject *minmax_type[2]; /* return_types.max, return_types.min */

/* ------------------------------------------------------------------------ */
/* Dims                                                                      */

/* dim: None / int / sequence of ints -> mask; returns 0 or -1. None or ()
 * marks every dim. */
static int parse_dims(PyObject *dim, int ndim, bool *mask)
{
    memset(mask, 0, PCS_MAX_DIMS * sizeof(bool));
    if (!dim || dim == Py_None) {
        for (int i = 0; i < ndim; i++)
            mask[i] = true;
        return 0;
    }
    if (PyLong_Check(dim) || PyIndex_Check(dim)) {
        if (PySequence_Check(dim))
            goto seq;
        int64_t d = PyLong_AsLongLong(dim);
        if (d == -1 && PyErr_Occurred())
            return -1;
        int w = pcs_wrap_dim(d, ndim);
        if (w < 0)
            return -1;
        if (ndim)
            mask[w] = true;
        return 0;
    }
seq:;
    /* A tuple snapshot, not PySequence_Fast: an item's __index__ may change
     * a list while it is read, which would free the borrowed item. */
    PyObject *f = PySequence_Check(dim) ? PySequence_Tuple(dim) : NULL;
    if (!f) {
        if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "dim must be an int, a tuple of ints or None, not %.100s",
                         Py_TYPE(dim)->tp_name);
        }
        return -1;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(f);
    if (n == 0)
        for (int i = 0; i < ndim; i++)
            mask[i] = true;
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t d = PyLong_AsLongLong(PyTuple_GET_ITEM(f, i));
        int w = (d == -1 && PyErr_Occurred()) ? -1 : pcs_wrap_dim(d, ndim);
        if (w < 0) {
            Py_DECREF(f);
            return -1;
        }
        if (ndim && mask[w]) {
            Py_DECREF(f);
            PyErr_Format(PyExc_RuntimeError, "dim %d appears multiple times in the list of dims", w);
            return -1;
        }
        if (ndim)
            mask[w] = true;
    }
    Py_DECREF(f);
    return 0;
}

static int bool_arg(PyObject *o, bool dflt)
{
    if (!o || o == Py_None)
        return dflt;
    return PyObject_IsTrue(o);
}

/* ------------------------------------------------------------------------ */
/* The core                                                                  */


/* The dtype the kernel writes for (op, input dtype). */
static int kernel_out_dtype(int op, int in)
{
    switch (op) {
    case PCS_ROP_SUM:
    case PCS_ROP_PROD:
        return pcs_is_integral(in, true) ? PCS_INT64 : in;
    case PCS_ROP_ALL:
    case PCS_ROP_ANY:
        return in == PCS_UINT8 ? PCS_UINT8 : PCS_BOOL;
    case PCS_ROP_VAR:
    case PCS_ROP_STD:
    case PCS_ROP_NORM:
        return pcs_real_of(in);
    default:
        return in;
    }
}

/* Drops the reduced dims of a keepdim-shaped result, unless keepdim. */
static PyObject *finish(PcsTensor *r, const bool *mask, bool keepdim)
{
    if (keepdim)
        return (PyObject *)r;
    int64_t sizes[PCS_MAX_DIMS], strides[PCS_MAX_DIMS];
    int k = 0;
    for (int i = 0; i < r->ndim; i++)
        if (!mask[i]) {
            sizes[k] = r->sizes[i];
            strides[k++] = r->strides[i];
        }
    PcsTensor *v = pcs_tensor_alias(r, r->offset, k, sizes, strides);
    Py_DECREF(r);
    return (PyObject *)v;
}

/* Reduces x over mask. want_values/want_idx: which results to make
 * (argmax: indices only; max with dim: both). */
static int reduce_run(const red_call *c, PcsTensor *x0, const bool *mask, bool want_values,
                      bool want_idx, PcsTensor **values, PcsTensor **indices)
{
    *values = *indices = NULL;
    PcsTensor *x = pcs_tensor_to(x0, c->in_dtype, x0->device, false, false, false);
    if (!x)
        return -1;
    int64_t ksizes[PCS_MAX_DIMS], K = 1;
    for (int i = 0; i < x->ndim; i++) {
        ksizes[i] = mask[i] ? 1 : x->sizes[i];
        if (mask[i])
            K *= x->sizes[i];
    }
    bool needs_elems = c->op == PCS_ROP_MAX || c->op == PCS_ROP_MIN || c->op == PCS_ROP_ARGMAX ||
                       c->op == PCS_ROP_ARGMIN;
    if (needs_elems && K == 0) {
        PyErr_Format(PyExc_IndexError,
                     "%s(): Expected reduction dim to be specified for input.numel() == 0.", c->name);
        Py_DECREF(x);
        return -1;
    }
    int kout = kernel_out_dtype(c->op, x->dtype);
    PcsTensor *res = NULL, *idx = NULL;
    int r = -1;
    if (want_values && !(res = pcs_tensor_empty(x->ndim, ksizes, kout, x->device, false)))
        goto out;
    if (want_idx && !(idx = pcs_tensor_empty(x->ndim, ksizes, PCS_INT64, x->device, false)))
        goto out;
    r = x->device >= 0 ? pcs_reduce_exec_cuda(c, x, mask, res, idx) : pcs_reduce_exec_cpu(c, x, mask, res, idx);
    if (r == 0 && res && kout != c->out_dtype) {
        PcsTensor *cast = pcs_tensor_to(res, c->out_dtype, res->device, false, false, false);
        Py_SETREF(res, cast);
        r = res ? 0 : -1;
    }
out:
    Py_DECREF(x);
    if (r < 0) {
        Py_XDECREF(res);
        Py_XDECREF(idx);
        return -1;
    }
    *values = res;
    *indices = idx;
    return 0;
}

/* Copies a result into out= (same shape required, as torch without resize). */
static PyObject *into_out(PyObject *res, PyObject *out)
{
    if (!res || !out)
        return res;
    PcsTensor *o = (PcsTensor *)out, *t = (PcsTensor *)res;
    if (o->ndim != t->ndim || memcmp(o->sizes, t->sizes, t->ndim * sizeof(int64_t)) != 0) {
        Py_DECREF(res);
        PyErr_SetString(PyExc_RuntimeError, "out= must have the result's shape (no resizing)");
        return NULL;
    }
    int r = pcs_copy(o, t, false);
    Py_DECREF(res);
    return r < 0 ? NULL : Py_NewRef(out);
}

static PyObject *reduce_simple(const red_call *c, PcsTensor *x, PyObject *dim, bool keepdim,
                               PyObject *out)
{
    bool mask[PCS_MAX_DIMS];
    if (parse_dims(dim, x->ndim, mask) < 0)
        return NULL;
    PcsTensor *v, *i;
    if (reduce_run(c, x, mask, true, false, &v, &i) < 0)
        return NULL;
    return into_out(finish(v, mask, keepdim), out);
}

/* ------------------------------------------------------------------------ */
/* Argument parsing shared by the entries                                    */

typedef struct {
    PcsTensor *x;
    PyObject *dim, *keepdim, *dtype, *out, *extra1, *extra2;
} red_args;

/* Positional order after input: dim, keepdim (torch's signatures); for
 * extra1/extra2 names (p, correction ...) the caller fetches them. */
static int parse_red(const char *fname, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                     PyObject *kw, const char *const *names, const char *p1, const char *p2,
                     red_args *ra)
{
    memset(ra, 0, sizeof *ra);
    if (pcs_check_kwargs(kw, fname, names) < 0)
        return -1;
    int base = self ? -1 : 0;
    PyObject *x = self ? self : pcs_arg(args, nargs, kw, 0, "input");
    if (!x || !PcsTensor_Check(x)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'input' must be Tensor", fname);
        return -1;
    }
    ra->x = (PcsTensor *)x;
    ra->dim = pcs_arg(args, nargs, kw, base + 1, p1 ? p1 : "dim");
    ra->keepdim = pcs_arg(args, nargs, kw, base + 2, p2 ? p2 : "keepdim");
    ra->dtype = pcs_arg(args, nargs, kw, -1, "dtype");
    if (pcs_out_arg(pcs_arg(args, nargs, kw, -1, "out"), &ra->out) < 0)
        return -1;
    return 0;
}

static const char *const red_kw[] = {"input", "dim", "keepdim", "dtype", "out", "axis", NULL};

/* sum / mean / prod */
static PyObject *sum_like(int op, const char *fname, PyObject *self, PyObject *const *args,
                          Py_ssize_t nargs, PyObject *kw)
{
    red_args ra;
    if (parse_red(fname, self, args, nargs, kw, red_kw, NULL, NULL, &ra) < 0)
        return NULL;
    int dt = pcs_dtype_arg(ra.dtype, -1);
    if (dt == -2)
        return NULL;
    int in = dt >= 0 ? dt : ra.x->dtype;
    if (op == PCS_ROP_MEAN && !pcs_is_float(in) && !pcs_is_complex(in)) {
        PyErr_Format(PyExc_RuntimeError,
                     "mean(): could not infer output dtype. Input dtype must be either a floating "
                     "point or complex dtype. Got: %s",
                     pcs_dtypes[in].legacy);
        return NULL;
    }
    red_call c = {op, fname, in, dt >= 0 ? dt : kernel_out_dtype(op, in), 0.0};
    int kd = bool_arg(ra.keepdim, false);
    return kd < 0 ? NULL : reduce_simple(&c, ra.x, ra.dim, kd, ra.out);
}

/* max / min: whole tensor, with a dim (values, indices), or with a tensor (maximum). */
static PyObject *max_like(bool is_max, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kw)
{
    const char *fname = is_max ? "max" : "min";
    static const char *const names[] = {"input", "dim", "keepdim", "other", "out", NULL};
    red_args ra;
    if (parse_red(fname, self, args, nargs, kw, names, NULL, NULL, &ra) < 0)
        return NULL;
    PyObject *other = pcs_arg(args, nargs, kw, -1, "other");
    if (ra.dim && PcsTensor_Check(ra.dim))
        other = ra.dim;
    if (other) {
        PyObject *fn = PyObject_GetAttrString((PyObject *)ra.x, is_max ? "maximum" : "minimum");
        if (!fn)
            return NULL;
        PyObject *r = PyObject_CallOneArg(fn, other);
        Py_DECREF(fn);
        return r;
    }
    if (pcs_is_complex(ra.x->dtype))
        return pcs_not_implemented(fname, ra.x->dtype);
    red_call c = {is_max ? PCS_ROP_MAX : PCS_ROP_MIN, fname, ra.x->dtype, ra.x->dtype, 0.0};
    int kd = bool_arg(ra.keepdim, false);
    if (kd < 0)
        return NULL;
    if (!ra.dim || ra.dim == Py_None)
        return reduce_simple(&c, ra.x, NULL, false, NULL);
    if (!PyLong_Check(ra.dim) && !PyIndex_Check(ra.dim)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'dim' must be int", fname);
        return NULL;
    }
    bool mask[PCS_MAX_DIMS];
    if (parse_dims(ra.dim, ra.x->ndim, mask) < 0)
        return NULL;
    c.op = is_max ? PCS_ROP_ARGMAX : PCS_ROP_ARGMIN;
    PcsTensor *v, *i;
    if (reduce_run(&c, ra.x, mask, true, true, &v, &i) < 0)
        return NULL;
    PyObject *vv = finish(v, mask, kd), *ii = finish(i, mask, kd);
    PyObject *res = PyStructSequence_New(minmax_type[is_max ? 0 : 1]);
    if (!res || !vv || !ii) {
        Py_XDECREF(res);
        Py_XDECREF(vv);
        Py_XDECREF(ii);
        return NULL;
    }
    PyStructSequence_SetItem(res, 0, vv);
    PyStructSequence_SetItem(res, 1, ii);
    return res;
}

/* amax / amin(input, dim=(), keepdim=False) */
static PyObject *amax_like(bool is_max, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kw)
{
    const char *fname = is_max ? "amax" : "amin";
    red_args ra;
    if (parse_red(fname, self, args, nargs, kw, red_kw, NULL, NULL, &ra) < 0)
        return NULL;
    if (pcs_is_complex(ra.x->dtype))
        return pcs_not_implemented(fname, ra.x->dtype);
    red_call c = {is_max ? PCS_ROP_MAX : PCS_ROP_MIN, fname, ra.x->dtype, ra.x->dtype, 0.0};
    int kd = bool_arg(ra.keepdim, false);
    return kd < 0 ? NULL : reduce_simple(&c, ra.x, ra.dim, kd, ra.out);
}

/* argmax / argmin(input, dim=None, keepdim=False): None flattens. */
static PyObject *argmax_like(bool is_max, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kw)
{
    const char *fname = is_max ? "argmax" : "argmin";
    red_args ra;
    if (parse_red(fname, self, args, nargs, kw, red_kw, NULL, NULL, &ra) < 0)
        return NULL;
    if (pcs_is_complex(ra.x->dtype))
        return pcs_not_implemented(fname, ra.x->dtype);
    int kd = bool_arg(ra.keepdim, false);
    if (kd < 0)
        return NULL;
    red_call c = {is_max ? PCS_ROP_ARGMAX : PCS_ROP_ARGMIN, fname, ra.x->dtype, ra.x->dtype, 0.0};
    PcsTensor *x = ra.x;
    bool flat = !ra.dim || ra.dim == Py_None;
    PcsTensor *xf = NULL;
    if (flat) { /* flattened index, as torch */
        int64_t n = pcs_tensor_numel(x);
        if (!(xf = pcs_tensor_reshape(x, 1, &n)))
            return NULL;
        x = xf;
    } else if (!PyLong_Check(ra.dim) && !PyIndex_Check(ra.dim)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'dim' must be int", fname);
        return NULL;
    }
    bool mask[PCS_MAX_DIMS];
    PcsTensor *v = NULL, *i = NULL;
    int r = parse_dims(flat ? NULL : ra.dim, x->ndim, mask);
    if (r == 0)
        r = reduce_run(&c, x, mask, false, true, &v, &i);
    Py_XDECREF(xf);
    if (r < 0)
        return NULL;
    if (flat && kd) { /* keepdim with dim=None: all dims of size 1 */
        int64_t ones[PCS_MAX_DIMS];
        for (int k = 0; k < ra.x->ndim; k++)
            ones[k] = 1;
        assert(i); /* reduce_run sets *indices when it succeeds with want_idx */
        PcsTensor *o = pcs_tensor_reshape(i, ra.x->ndim, ones);
        Py_DECREF(i);
        return (PyObject *)o;
    }
    return finish(i, mask, flat ? false : kd);
}

/* std / var(input, dim=None, unbiased=True, keepdim=False, *, correction=None) */
static PyObject *var_like(bool is_std, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kw)
{
    const char *fname = is_std ? "std" : "var";
    static const char *const names[] = {"input", "dim", "unbiased", "keepdim", "correction", "out",
                                        NULL};
    if (pcs_check_kwargs(kw, fname, names) < 0)
        return NULL;
    int base = self ? -1 : 0;
    PyObject *x = self ? self : pcs_arg(args, nargs, kw, 0, "input");
    if (!x || !PcsTensor_Check(x)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'input' must be Tensor", fname);
        return NULL;
    }
    PyObject *dim = pcs_arg(args, nargs, kw, base + 1, "dim");
    PyObject *unb = pcs_arg(args, nargs, kw, base + 2, "unbiased");
    PyObject *keep = pcs_arg(args, nargs, kw, base + 3, "keepdim");
    PyObject *corr = pcs_arg(args, nargs, kw, -1, "correction");
    if (dim && PyBool_Check(dim)) { /* var(input, unbiased) */
        unb = dim;
        dim = NULL;
    }
    double correction = 1.0;
    if (unb && unb != Py_None) {
        int u = PyObject_IsTrue(unb);
        if (u < 0)
            return NULL;
        correction = u ? 1.0 : 0.0;
    }
    if (corr && corr != Py_None && (correction = PyFloat_AsDouble(corr)) == -1.0 && PyErr_Occurred())
        return NULL;
    PcsTensor *t = (PcsTensor *)x;
    if (!pcs_is_float(t->dtype)) {
        if (pcs_is_complex(t->dtype))
            return pcs_not_implemented(fname, t->dtype);
        PyErr_SetString(PyExc_RuntimeError, "std and var only support floating point and complex dtypes");
        return NULL;
    }
    red_call c = {is_std ? PCS_ROP_STD : PCS_ROP_VAR, fname, t->dtype, t->dtype, correction};
    int kd = bool_arg(keep, false);
    PyObject *out;
    if (kd < 0 || pcs_out_arg(pcs_arg(args, nargs, kw, -1, "out"), &out) < 0)
        return NULL;
    return reduce_simple(&c, t, dim, kd, out);
}

/* norm(input, p='fro', dim=None, keepdim=False, dtype=None) */
static PyObject *norm_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "p", "dim", "keepdim", "dtype", "out", NULL};
    if (pcs_check_kwargs(kw, "norm", names) < 0)
        return NULL;
    int base = self ? -1 : 0;
    PyObject *x = self ? self : pcs_arg(args, nargs, kw, 0, "input");
    if (!x || !PcsTensor_Check(x)) {
        PyErr_SetString(PyExc_TypeError, "norm(): argument 'input' must be Tensor");
        return NULL;
    }
    PyObject *po = pcs_arg(args, nargs, kw, base + 1, "p");
    PyObject *dim = pcs_arg(args, nargs, kw, base + 2, "dim");
    int kd = bool_arg(pcs_arg(args, nargs, kw, base + 3, "keepdim"), false);
    if (kd < 0)
        return NULL;
    double p = 2.0;
    if (po && po != Py_None) {
        if (PyUnicode_Check(po)) {
            if (PyUnicode_CompareWithASCIIString(po, "fro") != 0) {
                PyErr_SetString(PyExc_NotImplementedError, "norm: only p='fro' among the string norms is implemented in pycuda_sem");
                return NULL;
            }
        } else if ((p = PyFloat_AsDouble(po)) == -1.0 && PyErr_Occurred()) {
            return NULL;
        }
    }
    PcsTensor *t = (PcsTensor *)x;
    int dt = pcs_dtype_arg(pcs_arg(args, nargs, kw, -1, "dtype"), -1);
    if (dt == -2)
        return NULL;
    PyObject *src = Py_NewRef(x);
    if (dt >= 0) {
        Py_SETREF(src, (PyObject *)pcs_tensor_to(t, dt, t->device, false, false, false));
        if (!src)
            return NULL;
    }
    int sdt = ((PcsTensor *)src)->dtype;
    if (!pcs_is_float(sdt) && !pcs_is_complex(sdt)) {
        Py_DECREF(src);
        PyErr_Format(PyExc_RuntimeError,
                     "linalg.vector_norm: Expected a floating point or complex tensor as input. Got %s",
                     pcs_dtypes[sdt].legacy);
        return NULL;
    }
    if (pcs_is_complex(sdt) || isinf(p)) { /* |x| first: real, and max/min for inf norms */
        Py_SETREF(src, pcs_unary_operator(PCS_UOP_ABS, src));
        if (!src)
            return NULL;
        sdt = ((PcsTensor *)src)->dtype;
    }
    red_call c = {PCS_ROP_NORM, "norm", sdt, sdt, p};
    if (isinf(p)) {
        c.op = p > 0 ? PCS_ROP_MAX : PCS_ROP_MIN;
        c.name = p > 0 ? "amax" : "amin";
    }
    PyObject *out;
    PyObject *r = pcs_out_arg(pcs_arg(args, nargs, kw, -1, "out"), &out) < 0
                      ? NULL
                      : reduce_simple(&c, (PcsTensor *)src, dim, kd, out);
    Py_DECREF(src);
    return r;
}

/* all / any(input, dim=None, keepdim=False) */
static PyObject *bool_red(bool is_all, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kw)
{
    const char *fname = is_all ? "all" : "any";
    red_args ra;
    if (parse_red(fname, self, args, nargs, kw, red_kw, NULL, NULL, &ra) < 0)
        return NULL;
    int od = ra.x->dtype == PCS_UINT8 ? PCS_UINT8 : PCS_BOOL;
    red_call c = {is_all ? PCS_ROP_ALL : PCS_ROP_ANY, fname, ra.x->dtype, od, 0.0};
    int kd = bool_arg(ra.keepdim, false);
    return kd < 0 ? NULL : reduce_simple(&c, ra.x, ra.dim, kd, ra.out);
}

/* logsumexp(input, dim, keepdim=False): integers promote to the default dtype. */
static PyObject *lse_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    red_args ra;
    if (parse_red("logsumexp", self, args, nargs, kw, red_kw, NULL, NULL, &ra) < 0)
        return NULL;
    if (!ra.dim) { /* unlike sum, PyTorch's logsumexp has no all-dims form */
        PyErr_SetString(PyExc_TypeError, "logsumexp() missing required argument 'dim'");
        return NULL;
    }
    int in = ra.x->dtype;
    if (pcs_is_complex(in))
        return pcs_not_implemented("logsumexp", in);
    if (!pcs_is_float(in))
        in = pcs_default_dtype();
    red_call c = {PCS_ROP_LOGSUMEXP, "logsumexp", in, in, 0.0};
    int kd = bool_arg(ra.keepdim, false);
    return kd < 0 ? NULL : reduce_simple(&c, ra.x, ra.dim, kd, ra.out);
}

static int scan_lines_run(int op, int dt, PcsTensor *c, PcsTensor *res, int64_t A, int64_t K, int64_t B,
                          const char *fname)
{
    if (pcs_cuda_set_device_raw(c->device) < 0)
        return -1;
    cudaStream_t s = pcs_current_stream(c->device);
    if (pcs_launch_scan(op, dt, pcs_tensor_data(res), pcs_tensor_data(c), A, K, B, s) < 0) {
        pcs_not_implemented(fname, dt);
        return -1;
    }
    return PCS_CHECK_LAUNCH(s, fname);
}

/* cumsum / cumprod(input, dim, *, dtype=None) */
static PyObject *scan_entry(int op, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kw, bool inplace)
{
    const char *fname = op ? "cumprod" : "cumsum";
    static const char *const names[] = {"input", "dim", "dtype", "out", NULL};
    red_args ra;
    if (parse_red(fname, self, args, nargs, kw, names, NULL, "dtype", &ra) < 0)
        return NULL;
    if (!ra.dim || ra.dim == Py_None) {
        PyErr_Format(PyExc_TypeError, "%s() missing required argument 'dim'", fname);
        return NULL;
    }
    int64_t d64 = PyLong_AsLongLong(ra.dim);
    if (d64 == -1 && PyErr_Occurred())
        return NULL;
    PcsTensor *x = ra.x;
    int d = pcs_wrap_dim(d64, x->ndim);
    if (d < 0)
        return NULL;
    int dt = pcs_dtype_arg(ra.dtype ? ra.dtype : ra.keepdim, -1);
    if (dt == -2)
        return NULL;
    if (dt < 0)
        dt = inplace ? x->dtype : pcs_is_integral(x->dtype, true) ? PCS_INT64 : x->dtype;
    PcsTensor *src = pcs_tensor_to(x, dt, x->device, false, false, false), *c = NULL, *res = NULL;
    if (src)
        c = pcs_tensor_contiguous(src, false);
    Py_XDECREF(src);
    if (!c)
        return NULL;
    if (!(res = pcs_tensor_empty(c->ndim, c->sizes, dt, c->device, false)))
        goto fail;
    if (c->device >= 0) {
        int64_t A = 1, K = c->ndim ? c->sizes[d] : 1, B = 1;
        for (int i = 0; i < c->ndim; i++) {
            if (i < d)
                A *= c->sizes[i];
            if (i > d)
                B *= c->sizes[i];
        }
        /* A few long lines: CUB's device-wide scan (scan_lines runs one
         * block per line, which cannot fill the GPU with them). */
        int cub = pcs_cumsum_dim(op == 1, c, c->ndim ? d : 0, res);
        if (cub == -1 || (cub == -2 && scan_lines_run(op, dt, c, res, A, K, B, fname) < 0))
            goto fail;
    } else {
        PyObject *fn = pcs_ops_numpy_fn("scan");
        PcsTensor *tmp = NULL;
        PyObject *xa = fn ? pcs_ops_numpy_in(c, dt) : NULL, *oa = xa ? pcs_np_out(res, &tmp) : NULL;
        PyObject *rr = oa ? PyObject_CallFunction(fn, "sOiOi", fname, xa, c->ndim ? d : 0, oa,
                                                        dt == PCS_FLOAT16 || dt == PCS_BFLOAT16) : NULL;
        int r = rr ? (tmp ? pcs_copy(res, tmp, false) : 0) : -1;
        Py_XDECREF(rr);
        Py_XDECREF(xa);
        Py_XDECREF(oa);
        Py_XDECREF(tmp);
        if (r < 0)
            goto fail;
    }
    Py_DECREF(c);
    if (inplace) {
        int r = pcs_copy(x, res, false);
        Py_DECREF(res);
        return r < 0 ? NULL : Py_NewRef((PyObject *)x);
    }
    return into_out((PyObject *)res, ra.out);
fail:
    Py_XDECREF(res);
    Py_DECREF(c);
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Tables                                                                    */

PCS_OP_PAIR(sum, sum_like(PCS_ROP_SUM, "sum", self, a, n, kw))
PCS_OP_PAIR(mean, sum_like(PCS_ROP_MEAN, "mean", self, a, n, kw))
PCS_OP_PAIR(prod, sum_like(PCS_ROP_PROD, "prod", self, a, n, kw))
PCS_OP_PAIR(max, max_like(true, self, a, n, kw))
PCS_OP_PAIR(min, max_like(false, self, a, n, kw))
PCS_OP_PAIR(amax, amax_like(true, self, a, n, kw))
PCS_OP_PAIR(amin, amax_like(false, self, a, n, kw))
PCS_OP_PAIR(argmax, argmax_like(true, self, a, n, kw))
PCS_OP_PAIR(argmin, argmax_like(false, self, a, n, kw))
PCS_OP_PAIR(std, var_like(true, self, a, n, kw))
PCS_OP_PAIR(var, var_like(false, self, a, n, kw))
PCS_OP_PAIR(norm, norm_entry(self, a, n, kw))
PCS_OP_PAIR(all, bool_red(true, self, a, n, kw))
PCS_OP_PAIR(any, bool_red(false, self, a, n, kw))
PCS_OP_PAIR(logsumexp, lse_entry(self, a, n, kw))
PCS_OP_PAIR(cumsum, scan_entry(0, self, a, n, kw, false))
PCS_OP_PAIR(cumprod, scan_entry(1, self, a, n, kw, false))

static PyObject *m_cumsum_(PyObject *self, PyObject *const *a, Py_ssize_t n, PyObject *kw)
{
    return scan_entry(0, self, a, n, kw, true);
}
static PyObject *m_cumprod_(PyObject *self, PyObject *const *a, Py_ssize_t n, PyObject *kw)
{
    return scan_entry(1, self, a, n, kw, true);
}

#define RED_LIST(X)                                                                               \
    X(sum, "Sum over dims (all by default); integers sum in int64.")                             \
    X(mean, "Mean over dims.") X(prod, "Product over dims.")                                     \
    X(max, "Maximum; with dim, (values, indices); with a tensor, maximum().")                     \
    X(min, "Minimum; with dim, (values, indices); with a tensor, minimum().")                     \
    X(amax, "Maximum over dims.") X(amin, "Minimum over dims.")                                  \
    X(argmax, "Index of the maximum (flattened without dim).")                                   \
    X(argmin, "Index of the minimum (flattened without dim).")                                   \
    X(std, "Standard deviation (correction=1).") X(var, "Variance (correction=1).")             \
    X(norm, "Vector norm (p=2 default, 'fro', inf, -inf, any p).")                               \
    X(all, "True where all elements are non-zero.") X(any, "True where any element is non-zero.") \
    X(logsumexp, "log(sum(exp(x))) over dims, computed stably.")                                 \
    X(cumsum, "Cumulative sum along dim.") X(cumprod, "Cumulative product along dim.")

PyMethodDef pcs_ops_reduce_tmethods[] = {
    RED_LIST(PCS_T_ENTRY)
    {"cumsum_", PCS_FN(m_cumsum_), PCS_FK, "In-place cumsum."},
    {"cumprod_", PCS_FN(m_cumprod_), PCS_FK, "In-place cumprod."},
    {NULL, NULL, 0, NULL},
};

PyMethodDef pcs_ops_reduce_functions[] = {
    RED_LIST(PCS_F_ENTRY)
    {NULL, NULL, 0, NULL},
};

static PyStructSequence_Field minmax_fields[] = {
    {"values", "the extreme values"}, {"indices", "their indices along dim"}, {NULL, NULL}};
static PyStructSequence_Desc minmax_desc[2] = {
    {"pycuda_sem.return_types.max", "(values, indices) of max(dim)", minmax_fields, 2},
    {"pycuda_sem.return_types.min", "(values, indices) of min(dim)", minmax_fields, 2},
};

int pcs_ops_reduce_init(PyObject *m)
{
    for (int i = 0; i < 2; i++) {
        if (!minmax_type[i] && !(minmax_type[i] = pcs_return_type_new(&minmax_desc[i])))
            return -1;
    }
    if (PyModule_AddObjectRef(m, "_return_types_max", (PyObject *)minmax_type[0]) < 0 ||
        PyModule_AddObjectRef(m, "_return_types_min", (PyObject *)minmax_type[1]) < 0)
        return -1;
    return 0;
}
