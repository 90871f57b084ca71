/* join.c: joining tensors: cat (concat, concatenate) and stack (the
 * splitting side is split.c).
 *
 * cat allocates its result once and copies every input into a narrowed view
 * of it through the copy core (tensor/copy.c), which runs dense copies as
 * cudaMemcpyAsync and strided ones as one kernel at copy bandwidth; dtypes
 * are cast on the way (torch's promotion across the inputs decides the
 * result's dtype); many small contiguous inputs go through one fused launch
 * (kernels/cat.cu). stack is cat of the inputs with a size-1 dim inserted.
 *
 * A list of tensors is read into a tuple snapshot first, which owns its
 * items: nothing a Python callback does to the caller's list can free a
 * tensor while it is read. */
#include "ops/ops.h"

#include <string.h>

#include "kernels/kernels.h"
#include "runtime/device.h"
#include "runtime/stream.h"
#include "tensor/copy.h"

#define T(o) ((PcsTensor *)(o))

/* At least this many inputs, averaging at most FUSED_MAX_BYTES each, go
 * through one fused launch per PCS_CAT_BATCH inputs (cat.cu); fewer or
 * larger ones are one copy each (cudaMemcpyAsync when dense), which is
 * already at copy bandwidth. */
#define FUSED_MIN_INPUTS 2
#define FUSED_MAX_BYTES (1 << 20)

/* ------------------------------------------------------------------------ */
/* Arguments                                                                 */

/* A type's name without its module ("Tensor", as torch prints it). */
static const char *short_name(PyObject *o)
{
    const char *n = Py_TYPE(o)->tp_name, *dot = strrchr(n, '.');
    return dot ? dot + 1 : n;
}

/* The tensors of a list argument as a tuple that owns them (new reference),
 * or NULL with torch's TypeError. */
static PyObject *tensor_tuple(PyObject *obj, const char *fname)
{
    if (!obj) {
        PyErr_Format(PyExc_TypeError, "%s() missing required argument 'tensors' (pos 1)", fname);
        return NULL;
    }
    if (PcsTensor_Check(obj) || !PySequence_Check(obj) || PyUnicode_Check(obj)) {
        PyErr_Format(PyExc_TypeError,
                     "%s(): argument 'tensors' (position 1) must be tuple of Tensors, not %.100s",
                     fname, short_name(obj));
        return NULL;
    }
    PyObject *tup = PySequence_Tuple(obj);
    if (!tup)
        return NULL;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tup); i++) {
        PyObject *it = PyTuple_GET_ITEM(tup, i);
        if (!PcsTensor_Check(it)) {
            PyErr_Format(PyExc_TypeError,
                         "expected Tensor as element %zd in argument 0, but got %.100s", i,
                         short_name(it));
            Py_DECREF(tup);
            return NULL;
        }
    }
    return tup;
}

/* dim or its numpy alias axis, as an int64 (dflt when absent). */
static int dim_arg(PyObject *o, int64_t dflt, int64_t *out) { return pcs_int_arg_or(o, dflt, out); }

/* ------------------------------------------------------------------------ */
/* cat                                                                       */

static bool skipped(const PcsTensor *t) { return t->ndim == 1 && t->sizes[0] == 0; }

/* Many small contiguous CUDA inputs of out's dtype into a contiguous new
 * out (a user's out= takes the checked copies: it may overlap an input):
 * one launch per PCS_CAT_BATCH of them. 1 when done, 0 when the layout or
 * the sizes do not call for it (the caller copies input by input), -1 with
 * exception. */
static int cat_fused(PcsTensor *const *ts, Py_ssize_t n, int dim, PcsTensor *res)
{
    if (res->device < 0 || !pcs_tensor_is_contiguous(res) || pcs_tensor_numel(res) == 0)
        return 0;
    Py_ssize_t used = 0;
    int64_t bytes = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PcsTensor *t = ts[i];
        if (skipped(t) || pcs_tensor_numel(t) == 0)
            continue;
        if (t->dtype != res->dtype || !pcs_tensor_is_contiguous(t))
            return 0;
        used++;
        bytes += pcs_tensor_numel(t) * pcs_itemsize(t->dtype);
    }
    if (used < FUSED_MIN_INPUTS || bytes / used > FUSED_MAX_BYTES)
        return 0;
    int64_t inner = 1, outer = 1;
    for (int d = 0; d < res->ndim; d++) {
        if (d < dim)
            outer *= res->sizes[d];
        else if (d > dim)
            inner *= res->sizes[d];
    }
    if (pcs_cuda_set_device_raw(res->device) < 0)
        return -1;
    cudaStream_t st = pcs_current_stream(res->device);
    pcs_cat_batch b;
    b.n = 0;
    int64_t at = 0;
    for (Py_ssize_t i = 0; i <= n; i++) {
        bool end = i == n;
        if (!end && !skipped(ts[i])) {
            PcsTensor *t = ts[i];
            if (pcs_tensor_numel(t)) {
                b.src[b.n] = pcs_tensor_data(t);
                b.offset[b.n] = at * inner;
                b.cols[b.n++] = t->sizes[dim] * inner;
            }
            at += t->sizes[dim];
        }
        if (b.n == PCS_CAT_BATCH || (end && b.n)) {
            if (pcs_launch_cat(pcs_tensor_data(res), pcs_itemsize(res->dtype), outer,
                               res->sizes[dim] * inner, &b, st) < 0) {
                pcs_not_implemented("cat", res->dtype);
                return -1;
            }
            if (PCS_CHECK_LAUNCH(st, "cat") < 0)
                return -1;
            b.n = 0;
        }
    }
    return 1;
}

/* Concatenates ts[0..n) along dim64 into out (or a new tensor). */
static PyObject *cat_core(PcsTensor *const *ts, Py_ssize_t n, int64_t dim64, PyObject *outobj,
                          const char *fname)
{
    if (n == 0) {
        PyErr_Format(PyExc_RuntimeError, "torch.%s(): expected a non-empty list of Tensors", fname);
        return NULL;
    }
    int dev = ts[0]->device, dtype = ts[0]->dtype;
    Py_ssize_t ref = -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (ts[i]->device != dev)
            return pcs_device_mismatch(dev, ts[i]->device), NULL;
        if (ts[i]->ndim == 0) {
            PyErr_Format(PyExc_RuntimeError,
                         "zero-dimensional tensor (at position %zd) cannot be concatenated", i);
            return NULL;
        }
        dtype = pcs_promote_types(dtype, ts[i]->dtype);
        if (ref < 0 && !skipped(ts[i]))
            ref = i;
    }
    /* Only legacy empty 1-D tensors: the result is one of them. */
    int ndim = ref >= 0 ? ts[ref]->ndim : 1;
    int dim = pcs_wrap_dim(dim64, ndim);
    if (dim < 0)
        return NULL;
    int64_t sizes[PCS_MAX_DIMS] = {0};
    if (ref >= 0)
        memcpy(sizes, ts[ref]->sizes, ndim * sizeof(int64_t));
    sizes[dim] = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        const PcsTensor *t = ts[i];
        if (skipped(t))
            continue;
        if (t->ndim != ndim) {
            PyErr_Format(PyExc_RuntimeError,
                         "Tensors must have same number of dimensions: got %d and %d", ndim, t->ndim);
            return NULL;
        }
        for (int d = 0; d < ndim; d++) {
            if (d != dim && t->sizes[d] != ts[ref]->sizes[d]) {
                PyErr_Format(PyExc_RuntimeError,
                             "Sizes of tensors must match except in dimension %d. Expected size "
                             "%lld but got size %lld for tensor number %zd in the list.",
                             dim, (long long)ts[ref]->sizes[d], (long long)t->sizes[d], i);
                return NULL;
            }
        }
        if (__builtin_add_overflow(sizes[dim], t->sizes[dim], &sizes[dim])) {
            PyErr_SetString(PyExc_RuntimeError, "cat: the result's size overflows");
            return NULL;
        }
    }
    PcsTensor *res;
    if (outobj) {
        res = T(outobj);
        if (res->device != dev)
            return pcs_device_mismatch(dev, res->device), NULL;
        if (!pcs_can_cast(dtype, res->dtype)) {
            PyErr_Format(PyExc_RuntimeError,
                         "torch.%s(): input types can't be cast to the desired output type %s",
                         fname, pcs_dtypes[res->dtype].legacy);
            return NULL;
        }
        if (res->ndim != ndim || memcmp(res->sizes, sizes, ndim * sizeof(int64_t)) != 0) {
            char a[256], b[256];
            pcs_shape_str(res->ndim, res->sizes, a, sizeof a);
            pcs_shape_str(ndim, sizes, b, sizeof b);
            PyErr_Format(PyExc_RuntimeError,
                         "%s(): out= has shape %s but the result has shape %s (pycuda_sem does "
                         "not resize out=)",
                         fname, a, b);
            return NULL;
        }
        Py_INCREF(res);
    } else if (!(res = pcs_tensor_empty(ndim, sizes, dtype, dev, false))) {
        return NULL;
    }
    int fr = outobj ? 0 : cat_fused(ts, n, dim, res);
    if (fr != 0) {
        if (fr < 0) {
            Py_DECREF(res);
            return NULL;
        }
        return (PyObject *)res;
    }
    int64_t at = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PcsTensor *t = ts[i];
        if (skipped(t) || t->sizes[dim] == 0)
            continue;
        PcsTensor *v = pcs_narrow_view(res, dim, at, t->sizes[dim]);
        int r = v ? pcs_copy(v, t, false) : -1;
        Py_XDECREF(v);
        if (r < 0) {
            Py_DECREF(res);
            return NULL;
        }
        at += t->sizes[dim];
    }
    return (PyObject *)res;
}

/* (tensors, dim=0 or axis=0, *, out=None) of cat and stack: the tensors as
 * a tuple snapshot (new reference), or NULL with exception. */
static PyObject *join_args(const char *fname, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kw, int64_t *dim, PyObject **out)
{
    static const char *const names[] = {"tensors", "dim", "axis", "out", NULL};
    if (pcs_check_kwargs(kw, fname, names) < 0)
        return NULL;
    PyObject *dobj = pcs_arg(args, nargs, kw, 1, "dim");
    if (!dobj)
        dobj = pcs_arg(args, nargs, kw, -1, "axis");
    if (pcs_out_arg(pcs_arg(args, nargs, kw, -1, "out"), out) < 0 || dim_arg(dobj, 0, dim) < 0)
        return NULL;
    return tensor_tuple(pcs_arg(args, nargs, kw, 0, "tensors"), fname);
}

static PyObject *f_cat_named(const char *fname, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kw)
{
    PyObject *out;
    int64_t dim;
    PyObject *tup = join_args(fname, args, nargs, kw, &dim, &out);
    if (!tup)
        return NULL;
    PyObject *r = cat_core((PcsTensor *const *)PySequence_Fast_ITEMS(tup), PyTuple_GET_SIZE(tup),
                           dim, out, fname);
    Py_DECREF(tup);
    return r;
}

static PyObject *f_cat(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *kw)
{
    PCS_UNUSED(m);
    return f_cat_named("cat", a, n, kw);
}

static PyObject *f_concat(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *kw)
{
    PCS_UNUSED(m);
    return f_cat_named("concat", a, n, kw);
}

static PyObject *f_concatenate(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *kw)
{
    PCS_UNUSED(m);
    return f_cat_named("concatenate", a, n, kw);
}

/* stack(tensors, dim=0, *, out=None) */
static PyObject *f_stack(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    PCS_UNUSED(m);
    PyObject *out;
    int64_t dim64;
    PyObject *tup = join_args("stack", args, nargs, kw, &dim64, &out);
    if (!tup)
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(tup);
    PyObject *res = NULL, *views = NULL;
    if (n == 0) {
        PyErr_SetString(PyExc_RuntimeError, "stack expects a non-empty TensorList");
        goto out;
    }
    PcsTensor *t0 = T(PyTuple_GET_ITEM(tup, 0));
    for (Py_ssize_t i = 1; i < n; i++) {
        PcsTensor *t = T(PyTuple_GET_ITEM(tup, i));
        if (t->ndim != t0->ndim || memcmp(t->sizes, t0->sizes, t->ndim * sizeof(int64_t)) != 0) {
            char a[256], b[256];
            pcs_shape_str(t0->ndim, t0->sizes, a, sizeof a);
            pcs_shape_str(t->ndim, t->sizes, b, sizeof b);
            PyErr_Format(PyExc_RuntimeError,
                         "stack expects each tensor to be equal size, but got %s at entry 0 and "
                         "%s at entry %zd",
                         a, b, i);
            goto out;
        }
    }
    if (pcs_check_ndim(t0->ndim + 1, PyExc_RuntimeError) < 0)
        goto out;
    int dim = pcs_wrap_dim(dim64, t0->ndim + 1);
    if (dim < 0 || !(views = PyTuple_New(n)))
        goto out;
    for (Py_ssize_t i = 0; i < n; i++) {
        PcsTensor *t = T(PyTuple_GET_ITEM(tup, i));
        int64_t sizes[PCS_MAX_DIMS], strides[PCS_MAX_DIMS];
        for (int d = 0, k = 0; d <= t->ndim; d++) {
            if (d == dim) {
                sizes[d] = 1;
                strides[d] = 1;
            } else {
                sizes[d] = t->sizes[k];
                strides[d] = t->strides[k++];
            }
        }
        PcsTensor *v = pcs_tensor_alias(t, t->offset, t->ndim + 1, sizes, strides);
        if (!v)
            goto out;
        PyTuple_SET_ITEM(views, i, (PyObject *)v);
    }
    res = cat_core((PcsTensor *const *)PySequence_Fast_ITEMS(views), n, dim, out, "stack");
out:
    Py_XDECREF(views);
    Py_DECREF(tup);
    return res;
}

/* ------------------------------------------------------------------------ */
/* Tables                                                                    */

#define FK (METH_FASTCALL | METH_KEYWORDS)
#define FN(f) (PyCFunction)(void (*)(void))(f)

PyMethodDef pcs_ops_join_functions[] = {
    {"cat", FN(f_cat), FK,
     "cat(tensors, dim=0, *, out=None)\n\nThe tensors joined along dim (dtypes promote; 1-D "
     "empty tensors are skipped)."},
    {"concat", FN(f_concat), FK, "concat(tensors, dim=0, *, out=None)\n\nAlias of cat()."},
    {"concatenate", FN(f_concatenate), FK,
     "concatenate(tensors, axis=0, *, out=None)\n\nAlias of cat()."},
    {"stack", FN(f_stack), FK,
     "stack(tensors, dim=0, *, out=None)\n\nEqual-sized tensors joined along a new dim."},
    {NULL, NULL, 0, NULL},
};
