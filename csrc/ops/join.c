/* join.c: joining and splitting tensors: cat (concat, concatenate), stack,
 * split, chunk, tensor_split, and the function forms of the view methods
 * narrow, unbind, swapaxes and swapdims.
 *
 * cat allocates its result once and copies every input into a narrowed view
 * of it through the copy core (tensor/copy.c), which runs dense copies as
 * cudaMemcpyAsync and strided ones as one kernel at copy bandwidth; dtypes
 * are cast on the way (torch's promotion across the inputs decides the
 * result's dtype). stack is cat of the inputs with a size-1 dim inserted.
 * The splitting functions return tuples of views (narrow), as torch's do.
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
#define FUSED_MIN_INPUTS 3
#define FUSED_MAX_BYTES (1 << 20)

/* ------------------------------------------------------------------------ */
/* Arguments                                                                 */

static void device_name(int dev, char *buf, size_t n)
{
    if (dev < 0)
        snprintf(buf, n, "cpu");
    else
        snprintf(buf, n, "cuda:%d", dev);
}

static int device_mismatch(int a, int b)
{
    char x[32], y[32];
    device_name(a, x, sizeof x);
    device_name(b, y, sizeof y);
    PyErr_Format(PyExc_RuntimeError,
                 "Expected all tensors to be on the same device, but found at least two devices, "
                 "%s and %s!",
                 x, y);
    return -1;
}

static void shape_str(int ndim, const int64_t *s, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < ndim && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, i ? ", %lld" : "%lld", (long long)s[i]);
    if (k < n)
        snprintf(buf + k, n - k, "]");
}

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
static int dim_arg(PyObject *o, int64_t dflt, int64_t *out)
{
    if (!o || o == Py_None) {
        *out = dflt;
        return 0;
    }
    return pcs_int64_arg(o, out);
}

/* A view of t narrowed to [start, start + len) along dim. */
static PcsTensor *narrow_view(PcsTensor *t, int dim, int64_t start, int64_t len)
{
    int64_t sizes[PCS_MAX_DIMS];
    memcpy(sizes, t->sizes, t->ndim * sizeof(int64_t));
    sizes[dim] = len;
    return pcs_tensor_alias(t, t->offset + (len ? start * t->strides[dim] : 0), t->ndim, sizes,
                            t->strides);
}

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
            return device_mismatch(dev, ts[i]->device), NULL;
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
            return device_mismatch(dev, res->device), NULL;
        if (!pcs_can_cast(dtype, res->dtype)) {
            PyErr_Format(PyExc_RuntimeError,
                         "torch.%s(): input types can't be cast to the desired output type %s",
                         fname, pcs_dtypes[res->dtype].legacy);
            return NULL;
        }
        if (res->ndim != ndim || memcmp(res->sizes, sizes, ndim * sizeof(int64_t)) != 0) {
            char a[256], b[256];
            shape_str(res->ndim, res->sizes, a, sizeof a);
            shape_str(ndim, sizes, b, sizeof b);
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
        PcsTensor *v = narrow_view(res, dim, at, t->sizes[dim]);
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

static PyObject *f_cat_named(const char *fname, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kw)
{
    static const char *const names[] = {"tensors", "dim", "axis", "out", NULL};
    if (pcs_check_kwargs(kw, fname, names) < 0)
        return NULL;
    PyObject *tobj = pcs_arg(args, nargs, kw, 0, "tensors");
    PyObject *dobj = pcs_arg(args, nargs, kw, 1, "dim");
    if (!dobj)
        dobj = pcs_arg(args, nargs, kw, -1, "axis");
    PyObject *out;
    int64_t dim;
    if (pcs_out_arg(pcs_arg(args, nargs, kw, -1, "out"), &out) < 0 || dim_arg(dobj, 0, &dim) < 0)
        return NULL;
    PyObject *tup = tensor_tuple(tobj, fname);
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
    static const char *const names[] = {"tensors", "dim", "axis", "out", NULL};
    if (pcs_check_kwargs(kw, "stack", names) < 0)
        return NULL;
    PyObject *dobj = pcs_arg(args, nargs, kw, 1, "dim");
    if (!dobj)
        dobj = pcs_arg(args, nargs, kw, -1, "axis");
    PyObject *out;
    int64_t dim64;
    if (pcs_out_arg(pcs_arg(args, nargs, kw, -1, "out"), &out) < 0 || dim_arg(dobj, 0, &dim64) < 0)
        return NULL;
    PyObject *tup = tensor_tuple(pcs_arg(args, nargs, kw, 0, "tensors"), "stack");
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
            shape_str(t0->ndim, t0->sizes, a, sizeof a);
            shape_str(t->ndim, t->sizes, b, sizeof b);
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
/* Splitting                                                                 */

/* A sequence of ints as a PyMem array (free with PyMem_Free); -1 with exception. */
static Py_ssize_t int64_list(PyObject *obj, const char *what, int64_t **out)
{
    *out = NULL;
    PyObject *tup = pcs_sequence_tuple(obj, what);
    if (!tup)
        return -1;
    Py_ssize_t n = PyTuple_GET_SIZE(tup);
    int64_t *v = PyMem_Malloc((n ? n : 1) * sizeof(int64_t));
    if (!v) {
        Py_DECREF(tup);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (pcs_int64_arg(PyTuple_GET_ITEM(tup, i), &v[i]) < 0) {
            PyMem_Free(v);
            Py_DECREF(tup);
            return -1;
        }
    }
    Py_DECREF(tup);
    *out = v;
    return n;
}

/* An integer tensor's values as a PyMem array (syncs for CUDA). */
static Py_ssize_t int64_list_tensor(PcsTensor *t, const char *fname, int64_t **out)
{
    *out = NULL;
    if (pcs_is_float(t->dtype) || pcs_is_complex(t->dtype) || t->dtype == PCS_BOOL) {
        PyErr_Format(PyExc_RuntimeError,
                     "%s expected tensor_indices_or_sections to have integer dtype, but got %s",
                     fname, pcs_dtypes[t->dtype].legacy);
        return -1;
    }
    PyObject *lst = pcs_tensor_tolist(t);
    if (!lst)
        return -1;
    if (t->ndim == 0) { /* one number: a list of one */
        PyObject *one = PyTuple_Pack(1, lst);
        Py_SETREF(lst, one);
        if (!lst)
            return -1;
    }
    Py_ssize_t n = int64_list(lst, "expected a list of ints", out);
    Py_DECREF(lst);
    return n;
}

/* The tuple of views of t along dim with the given lengths (summing to
 * at most the dim's size). */
static PyObject *split_views(PcsTensor *t, int dim, const int64_t *starts, const int64_t *lens,
                             Py_ssize_t n)
{
    PyObject *tup = PyTuple_New(n);
    for (Py_ssize_t i = 0; tup && i < n; i++) {
        PyObject *v = (PyObject *)narrow_view(t, dim, starts[i], lens[i]);
        if (!v)
            Py_CLEAR(tup);
        else
            PyTuple_SET_ITEM(tup, i, v);
    }
    return tup;
}

/* Splits into consecutive pieces of the given sizes. */
static PyObject *split_sizes(PcsTensor *t, int dim, const int64_t *lens, Py_ssize_t n)
{
    int64_t *starts = PyMem_Malloc((n ? n : 1) * sizeof(int64_t));
    if (!starts)
        return PyErr_NoMemory();
    int64_t at = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        starts[i] = at;
        at += lens[i];
    }
    PyObject *r = split_views(t, dim, starts, lens, n);
    PyMem_Free(starts);
    return r;
}

static PyObject *split_even(PcsTensor *t, int dim, int64_t size)
{
    int64_t dsize = t->sizes[dim];
    if (size < 0) {
        PyErr_Format(PyExc_RuntimeError,
                     "split expects split_size be non-negative, but got split_size=%lld",
                     (long long)size);
        return NULL;
    }
    if (size == 0 && dsize != 0) {
        PyErr_Format(PyExc_RuntimeError,
                     "split_size can only be 0 if dimension size is 0, but got dimension size of "
                     "%lld",
                     (long long)dsize);
        return NULL;
    }
    Py_ssize_t n = size == 0 ? 1 : (Py_ssize_t)((dsize + size - 1) / size);
    if (n == 0)
        n = 1;
    int64_t *lens = PyMem_Malloc(n * sizeof(int64_t));
    if (!lens)
        return PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < n; i++)
        lens[i] = size == 0 ? 0 : (i + 1 < n ? size : dsize - size * (int64_t)(n - 1));
    PyObject *r = split_sizes(t, dim, lens, n);
    PyMem_Free(lens);
    return r;
}

static int split_dim(PcsTensor *t, PyObject *dobj, const char *fname, int *dim)
{
    if (t->ndim == 0) {
        PyErr_Format(PyExc_RuntimeError, "%s expects at least a 1-dimensional tensor", fname);
        return -1;
    }
    int64_t d;
    if (dim_arg(dobj, 0, &d) < 0)
        return -1;
    return (*dim = pcs_wrap_dim(d, t->ndim)) < 0 ? -1 : 0;
}

/* split(tensor, split_size_or_sections, dim=0) and Tensor.split(split_size, dim=0) */
static PyObject *split_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"tensor", "split_size_or_sections", "split_size", "dim",
                                        NULL};
    if (pcs_check_kwargs(kw, "split", names) < 0)
        return NULL;
    int base = self ? -1 : 0;
    PyObject *x = self ? self : pcs_arg(args, nargs, kw, 0, "tensor");
    if (!x || !PcsTensor_Check(x)) {
        PyErr_SetString(PyExc_TypeError, "split(): argument 'tensor' must be Tensor");
        return NULL;
    }
    PyObject *s = pcs_arg(args, nargs, kw, base + 1, "split_size_or_sections");
    if (!s)
        s = pcs_arg(args, nargs, kw, -1, "split_size");
    if (!s) {
        PyErr_SetString(PyExc_TypeError, "split() missing required argument 'split_size'");
        return NULL;
    }
    int dim;
    if (split_dim(T(x), pcs_arg(args, nargs, kw, base + 2, "dim"), "split", &dim) < 0)
        return NULL;
    if (PyIndex_Check(s) && !PcsTensor_Check(s)) {
        int64_t size;
        return pcs_int64_arg(s, &size) < 0 ? NULL : split_even(T(x), dim, size);
    }
    int64_t *lens;
    Py_ssize_t n = int64_list(s, "split(): split_size must be an int or a sequence of ints", &lens);
    if (n < 0)
        return NULL;
    int64_t sum = 0;
    bool neg = false;
    for (Py_ssize_t i = 0; i < n; i++) {
        neg |= lens[i] < 0;
        sum += lens[i];
    }
    PyObject *r = NULL;
    if (neg || sum != T(x)->sizes[dim]) {
        PyObject *lst = PySequence_List(s);
        PyObject *repr = lst ? PyObject_Repr(lst) : NULL;
        if (repr && neg)
            PyErr_Format(PyExc_RuntimeError,
                         "split_with_sizes expects split_sizes have only non-negative entries, "
                         "but got split_sizes=%U",
                         repr);
        else if (repr)
            PyErr_Format(PyExc_RuntimeError,
                         "split_with_sizes expects split_sizes to sum exactly to %lld (input "
                         "tensor's size at dimension %d), but got split_sizes=%U",
                         (long long)T(x)->sizes[dim], dim, repr);
        Py_XDECREF(repr);
        Py_XDECREF(lst);
    } else {
        r = split_sizes(T(x), dim, lens, n);
    }
    PyMem_Free(lens);
    return r;
}

/* chunk(input, chunks, dim=0) */
static PyObject *chunk_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "chunks", "dim", NULL};
    if (pcs_check_kwargs(kw, "chunk", names) < 0)
        return NULL;
    int base = self ? -1 : 0;
    PyObject *x = self ? self : pcs_arg(args, nargs, kw, 0, "input");
    if (!x || !PcsTensor_Check(x)) {
        PyErr_SetString(PyExc_TypeError, "chunk(): argument 'input' must be Tensor");
        return NULL;
    }
    PyObject *c = pcs_arg(args, nargs, kw, base + 1, "chunks");
    int64_t chunks;
    int dim;
    if (!c) {
        PyErr_SetString(PyExc_TypeError, "chunk() missing required argument 'chunks'");
        return NULL;
    }
    if (pcs_int64_arg(c, &chunks) < 0)
        return NULL;
    if (T(x)->ndim == 0) {
        PyErr_SetString(PyExc_RuntimeError, "chunk expects at least a 1-dimensional tensor");
        return NULL;
    }
    if (chunks <= 0) {
        PyErr_Format(PyExc_RuntimeError, "chunk expects `chunks` to be greater than 0, got: %lld",
                     (long long)chunks);
        return NULL;
    }
    if (split_dim(T(x), pcs_arg(args, nargs, kw, base + 2, "dim"), "chunk", &dim) < 0)
        return NULL;
    int64_t dsize = T(x)->sizes[dim];
    int64_t size = dsize / chunks + (dsize % chunks != 0);
    if (size == 0 && dsize == 0) { /* `chunks` empty pieces */
        if (chunks > PY_SSIZE_T_MAX / (Py_ssize_t)sizeof(int64_t))
            return PyErr_NoMemory();
        int64_t *zeros = PyMem_Calloc((size_t)chunks, sizeof(int64_t));
        if (!zeros)
            return PyErr_NoMemory();
        PyObject *r = split_sizes(T(x), dim, zeros, (Py_ssize_t)chunks);
        PyMem_Free(zeros);
        return r;
    }
    return split_even(T(x), dim, size);
}

/* tensor_split(input, indices_or_sections, dim=0) */
static PyObject *tensor_split_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kw)
{
    static const char *const names[] = {"input", "indices_or_sections", "sections", "indices",
                                        "tensor_indices_or_sections", "dim", NULL};
    if (pcs_check_kwargs(kw, "tensor_split", names) < 0)
        return NULL;
    int base = self ? -1 : 0;
    PyObject *x = self ? self : pcs_arg(args, nargs, kw, 0, "input");
    if (!x || !PcsTensor_Check(x)) {
        PyErr_SetString(PyExc_TypeError, "tensor_split(): argument 'input' must be Tensor");
        return NULL;
    }
    PyObject *s = pcs_arg(args, nargs, kw, base + 1, "indices_or_sections");
    const char *alt[] = {"sections", "indices", "tensor_indices_or_sections"};
    for (int i = 0; i < 3 && !s; i++)
        s = pcs_arg(args, nargs, kw, -1, alt[i]);
    if (!s) {
        PyErr_SetString(PyExc_TypeError, "tensor_split() missing required argument 'indices_or_sections'");
        return NULL;
    }
    PcsTensor *t = T(x);
    if (t->ndim == 0) {
        PyErr_SetString(PyExc_RuntimeError,
                        "tensor_split expected at least a 1-dimensional tensor, but got a tensor "
                        "with 0 dims");
        return NULL;
    }
    int dim;
    if (split_dim(t, pcs_arg(args, nargs, kw, base + 2, "dim"), "tensor_split", &dim) < 0)
        return NULL;
    int64_t dsize = t->sizes[dim];
    int64_t *idx = NULL, sections = 0;
    Py_ssize_t n = -2; /* -2: sections, else the number of indices */
    if (PcsTensor_Check(s)) {
        PcsTensor *st = T(s);
        if (st->ndim > 1) {
            PyErr_Format(PyExc_RuntimeError,
                         "tensor_split expected tensor_indices_or_sections to be a zero-dimensional "
                         "or one-dimensional tensor, but got a tensor with %d dims",
                         st->ndim);
            return NULL;
        }
        n = int64_list_tensor(st, "tensor_split", &idx);
        if (n < 0)
            return NULL;
        if (st->ndim == 0) {
            sections = n ? idx[0] : 0;
            n = -2;
        }
    } else if (PyIndex_Check(s)) {
        if (pcs_int64_arg(s, &sections) < 0)
            return NULL;
    } else if ((n = int64_list(s, "tensor_split(): indices_or_sections must be an int or a "
                                  "sequence of ints",
                               &idx)) < 0) {
        return NULL;
    }
    PyObject *r = NULL;
    if (n == -2) {
        if (sections <= 0) {
            PyErr_Format(PyExc_RuntimeError, "number of sections must be larger than 0, got %lld",
                         (long long)sections);
            goto out;
        }
        if (sections > PY_SSIZE_T_MAX / (Py_ssize_t)sizeof(int64_t)) {
            PyErr_NoMemory();
            goto out;
        }
        int64_t *lens = PyMem_Malloc((size_t)sections * sizeof(int64_t));
        if (!lens) {
            PyErr_NoMemory();
            goto out;
        }
        int64_t q = dsize / sections, extra = dsize % sections;
        for (int64_t i = 0; i < sections; i++)
            lens[i] = q + (i < extra);
        r = split_sizes(t, dim, lens, (Py_ssize_t)sections);
        PyMem_Free(lens);
    } else {
        /* Slices [0:i0], [i0:i1], ..., [ik:] with slice semantics (negative
         * indices wrap, everything clamps, an end before its start is empty). */
        int64_t *starts = PyMem_Malloc((n + 1) * sizeof(int64_t));
        int64_t *lens = PyMem_Malloc((n + 1) * sizeof(int64_t));
        if (!starts || !lens) {
            PyMem_Free(starts);
            PyMem_Free(lens);
            PyErr_NoMemory();
            goto out;
        }
        int64_t start = 0;
        for (Py_ssize_t i = 0; i <= n; i++) {
            int64_t end = i < n ? idx[i] : dsize;
            if (end < 0)
                end += dsize;
            end = end < 0 ? 0 : end > dsize ? dsize : end;
            int64_t s0 = start < 0 ? 0 : start > dsize ? dsize : start;
            starts[i] = s0;
            lens[i] = end > s0 ? end - s0 : 0;
            start = i < n ? idx[i] : dsize;
            if (start < 0)
                start += dsize;
        }
        r = split_views(t, dim, starts, lens, n + 1);
        PyMem_Free(starts);
        PyMem_Free(lens);
    }
out:
    PyMem_Free(idx);
    return r;
}

/* ------------------------------------------------------------------------ */
/* Function forms of view methods: torch.narrow(x, ...) is x.narrow(...)     */

static PyObject *forward(const char *name, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    if (nargs < 1 || !PcsTensor_Check(args[0])) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'input' (position 1) must be Tensor", name);
        return NULL;
    }
    PyObject *n = PyUnicode_InternFromString(name);
    if (!n)
        return NULL;
    PyObject *r = PyObject_VectorcallMethod(n, args, (size_t)nargs, kw);
    Py_DECREF(n);
    return r;
}

#define FORWARD(name)                                                                             \
    static PyObject *f_##name(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *kw)       \
    {                                                                                             \
        PCS_UNUSED(m);                                                                            \
        return forward(#name, a, n, kw);                                                          \
    }
FORWARD(narrow)
FORWARD(unbind)
FORWARD(swapaxes)
FORWARD(swapdims)
#undef FORWARD

/* ------------------------------------------------------------------------ */
/* Tables                                                                    */

#define PAIR(name, call)                                                                          \
    static PyObject *fp_##name(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *kw)      \
    {                                                                                             \
        PyObject *self = NULL;                                                                    \
        PCS_UNUSED(m);                                                                            \
        return call;                                                                              \
    }                                                                                             \
    static PyObject *mp_##name(PyObject *self, PyObject *const *a, Py_ssize_t n, PyObject *kw)   \
    {                                                                                             \
        return call;                                                                              \
    }
PAIR(split, split_entry(self, a, n, kw))
PAIR(chunk, chunk_entry(self, a, n, kw))
PAIR(tensor_split, tensor_split_entry(self, a, n, kw))
#undef PAIR

#define FK (METH_FASTCALL | METH_KEYWORDS)
#define FN(f) (PyCFunction)(void (*)(void))(f)

PyMethodDef pcs_ops_join_tmethods[] = {
    {"split", FN(mp_split), FK,
     "split(split_size, dim=0)\n\nViews of consecutive pieces of split_size along dim (the last "
     "may be smaller), or of the given list of sizes."},
    {"chunk", FN(mp_chunk), FK,
     "chunk(chunks, dim=0)\n\nAt most `chunks` views of equal size along dim (the last may be "
     "smaller)."},
    {"tensor_split", FN(mp_tensor_split), FK,
     "tensor_split(indices_or_sections, dim=0)\n\nViews: `sections` pieces as equal as possible, "
     "or the pieces between the given indices."},
    {NULL, NULL, 0, NULL},
};

PyMethodDef pcs_ops_join_functions[] = {
    {"cat", FN(f_cat), FK,
     "cat(tensors, dim=0, *, out=None)\n\nThe tensors joined along dim (dtypes promote; 1-D "
     "empty tensors are skipped)."},
    {"concat", FN(f_concat), FK, "concat(tensors, dim=0, *, out=None)\n\nAlias of cat()."},
    {"concatenate", FN(f_concatenate), FK,
     "concatenate(tensors, axis=0, *, out=None)\n\nAlias of cat()."},
    {"stack", FN(f_stack), FK,
     "stack(tensors, dim=0, *, out=None)\n\nEqual-sized tensors joined along a new dim."},
    {"split", FN(fp_split), FK,
     "split(tensor, split_size_or_sections, dim=0)\n\nTensor.split as a function."},
    {"chunk", FN(fp_chunk), FK, "chunk(input, chunks, dim=0)\n\nTensor.chunk as a function."},
    {"tensor_split", FN(fp_tensor_split), FK,
     "tensor_split(input, indices_or_sections, dim=0)\n\nTensor.tensor_split as a function."},
    {"narrow", FN(f_narrow), FK, "narrow(input, dim, start, length)\n\nTensor.narrow as a function (a view)."},
    {"unbind", FN(f_unbind), FK, "unbind(input, dim=0)\n\nTensor.unbind as a function (views)."},
    {"swapaxes", FN(f_swapaxes), FK, "swapaxes(input, axis0, axis1)\n\nAlias of transpose (a view)."},
    {"swapdims", FN(f_swapdims), FK, "swapdims(input, dim0, dim1)\n\nAlias of transpose (a view)."},
    {NULL, NULL, 0, NULL},
};
