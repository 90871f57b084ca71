/* tensor_views.c: operations that return a new view of the same storage:
 * view, reshape (a view when possible), flatten, squeeze, unsqueeze, permute,
 * transpose, t, expand, narrow, select, unbind, as_strided, real and imag,
 * and the in-place forms squeeze_, unsqueeze_, transpose_, t_, as_strided_.
 *
 * Only geometry changes here; the one exception is reshape of a layout that
 * no view can express, which copies (as torch does). */
#include "tensor/copy.h"
#include "tensor/tensor.h"

#include <stdio.h>
#include <string.h>

#define T(o) ((PcsTensor *)(o))
#define FASTKW(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL | METH_KEYWORDS

static int parse_dim(PyObject *o, int ndim)
{
    long long d = PyLong_AsLongLong(o);
    if (d == -1 && PyErr_Occurred())
        return -1;
    return pcs_wrap_dim(d, ndim);
}

static int64_t parse_i64(PyObject *o, int64_t *out)
{
    long long v = PyLong_AsLongLong(o);
    if (v == -1 && PyErr_Occurred())
        return -1;
    *out = v;
    return 0;
}

/* "[2, 3]" for error messages. */
static void format_shape(char *buf, size_t cap, int ndim, const int64_t *sizes)
{
    size_t k = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < ndim && k < cap; i++)
        k += (size_t)snprintf(buf + k, cap - k, i ? ", %lld" : "%lld", (long long)sizes[i]);
    if (k < cap)
        snprintf(buf + k, cap - k, "]");
}

/* ------------------------------------------------------------------------ */
/* Shape checks                                                              */

int pcs_check_ndim(int64_t ndim, PyObject *exc)
{
    if (ndim <= PCS_MAX_DIMS)
        return 0;
    PyErr_Format(exc, "tensors have at most %d dimensions (got %lld)", PCS_MAX_DIMS,
                 (long long)ndim);
    return -1;
}

int pcs_check_shape(int ndim, const int64_t *sizes)
{
    if (ndim < 0 || pcs_check_ndim(ndim, PyExc_RuntimeError) < 0) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_RuntimeError, "invalid number of dimensions %d", ndim);
        return -1;
    }
    /* torch's safe_compute_numel: the product of the non-zero sizes must fit,
     * so that no partial product of sizes (strides, spans) overflows either */
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] < 0) {
            PyErr_Format(PyExc_RuntimeError, "Trying to create tensor with negative dimension %lld",
                         (long long)sizes[i]);
            return -1;
        }
        if (sizes[i] && __builtin_mul_overflow(n, sizes[i], &n)) {
            PyErr_SetString(PyExc_RuntimeError, "numel: integer multiplication overflow");
            return -1;
        }
    }
    return 0;
}

/* Resolves one -1 in `shape` against numel (torch's infer_size). */
static int infer_size(int ndim, int64_t *shape, int64_t numel)
{
    int infer = -1;
    int64_t prod = 1;
    bool zero = false, overflow = false;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] == -1) {
            if (infer >= 0) {
                PyErr_SetString(PyExc_RuntimeError, "only one dimension can be inferred");
                return -1;
            }
            infer = i;
        } else if (shape[i] < 0) {
            PyErr_Format(PyExc_RuntimeError, "invalid shape dimension %lld", (long long)shape[i]);
            return -1;
        } else if (shape[i] == 0) {
            zero = true;
        } else {
            overflow |= __builtin_mul_overflow(prod, shape[i], &prod);
        }
    }
    if (zero)
        prod = 0;
    else if (overflow) /* more elements than any tensor holds: never numel */
        prod = -1;
    char buf[256];
    if (prod >= 0 && (numel == prod || (infer >= 0 && prod > 0 && numel % prod == 0))) {
        if (infer < 0)
            return 0;
        if (prod == 0) { /* 0 elements: -1 could be any size */
            format_shape(buf, sizeof buf, ndim, shape);
            PyErr_Format(PyExc_RuntimeError,
                         "cannot reshape tensor of 0 elements into shape %s because the "
                         "unspecified dimension size -1 can be any value and is ambiguous",
                         buf);
            return -1;
        }
        shape[infer] = numel / prod;
        return 0;
    }
    format_shape(buf, sizeof buf, ndim, shape);
    PyErr_Format(PyExc_RuntimeError, "shape '%s' is invalid for input of size %lld", buf,
                 (long long)numel);
    return -1;
}

/* Strides that let `newshape` view memory laid out as (oldshape, oldstride),
 * or false when none exist (torch's computeStride). */
static bool compute_stride(int on, const int64_t *oldshape, const int64_t *oldstride, int nn,
                           const int64_t *newshape, int64_t *newstride)
{
    int64_t numel = 1;
    for (int i = 0; i < on; i++)
        numel *= oldshape[i];
    if (numel == 0 || on == 0) {
        pcs_contiguous_strides(nn, newshape, newstride);
        return true;
    }
    int view_d = nn - 1;
    int64_t chunk_base_stride = oldstride[on - 1], tensor_numel = 1, view_numel = 1;
    for (int tensor_d = on - 1; tensor_d >= 0; tensor_d--) {
        tensor_numel *= oldshape[tensor_d];
        /* end of a chunk of memory-contiguous dims: the view dims must fill it */
        if (tensor_d == 0 || (oldshape[tensor_d - 1] != 1 &&
                              oldstride[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
            while (view_d >= 0 && (view_numel < tensor_numel || newshape[view_d] == 1)) {
                newstride[view_d] = view_numel * chunk_base_stride;
                view_numel *= newshape[view_d];
                view_d--;
            }
            if (view_numel != tensor_numel)
                return false;
            if (tensor_d > 0) {
                chunk_base_stride = oldstride[tensor_d - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
    }
    return view_d == -1;
}

PcsTensor *pcs_tensor_view(PcsTensor *t, int ndim, const int64_t *sizes_in)
{
    int64_t sizes[PCS_MAX_DIMS], strides[PCS_MAX_DIMS];
    memcpy(sizes, sizes_in, ndim * sizeof(int64_t));
    if (infer_size(ndim, sizes, pcs_tensor_numel(t)) < 0)
        return NULL;
    if (!compute_stride(t->ndim, t->sizes, t->strides, ndim, sizes, strides)) {
        PyErr_SetString(PyExc_RuntimeError,
                        "view size is not compatible with input tensor's size and stride (at "
                        "least one dimension spans across two contiguous subspaces). Use "
                        ".reshape(...) instead.");
        return NULL;
    }
    return pcs_tensor_alias(t, t->offset, ndim, sizes, strides);
}

PcsTensor *pcs_tensor_reshape(PcsTensor *t, int ndim, const int64_t *sizes_in)
{
    int64_t sizes[PCS_MAX_DIMS], strides[PCS_MAX_DIMS];
    memcpy(sizes, sizes_in, ndim * sizeof(int64_t));
    if (infer_size(ndim, sizes, pcs_tensor_numel(t)) < 0)
        return NULL;
    if (compute_stride(t->ndim, t->sizes, t->strides, ndim, sizes, strides))
        return pcs_tensor_alias(t, t->offset, ndim, sizes, strides);
    PcsTensor *c = pcs_tensor_contiguous(t, true);
    if (!c)
        return NULL;
    pcs_contiguous_strides(ndim, sizes, strides);
    PcsTensor *r = pcs_tensor_alias(c, c->offset, ndim, sizes, strides);
    Py_DECREF(c);
    return r;
}

PcsTensor *pcs_tensor_expand(PcsTensor *t, int ndim, const int64_t *target)
{
    if (ndim < t->ndim) {
        PyErr_Format(PyExc_RuntimeError,
                     "expand: the number of sizes provided (%d) must be greater or equal to the "
                     "number of dimensions in the tensor (%d)",
                     ndim, t->ndim);
        return NULL;
    }
    int64_t sizes[PCS_MAX_DIMS], strides[PCS_MAX_DIMS];
    for (int i = ndim - 1; i >= 0; i--) {
        int off = ndim - 1 - i, d = t->ndim - 1 - off;
        int64_t size = d >= 0 ? t->sizes[d] : 1, stride = d >= 0 ? t->strides[d] : 0;
        int64_t want = target[i];
        if (want == -1) {
            if (d < 0) {
                PyErr_Format(PyExc_RuntimeError,
                             "The expanded size of the tensor (-1) isn't allowed in a leading, "
                             "non-existing dimension %d", i);
                return NULL;
            }
            want = size;
        }
        if (size != want) {
            if (size != 1) {
                char a[256], b[256];
                format_shape(a, sizeof a, ndim, target);
                format_shape(b, sizeof b, t->ndim, t->sizes);
                PyErr_Format(PyExc_RuntimeError,
                             "The expanded size of the tensor (%lld) must match the existing "
                             "size (%lld) at non-singleton dimension %d.  Target sizes: %s.  "
                             "Tensor sizes: %s",
                             (long long)want, (long long)size, i, a, b);
                return NULL;
            }
            stride = 0;
        }
        sizes[i] = want;
        strides[i] = stride;
    }
    return pcs_tensor_alias(t, t->offset, ndim, sizes, strides);
}

PcsTensor *pcs_tensor_select(PcsTensor *t, int dim, int64_t index)
{
    if (t->ndim == 0) {
        PyErr_SetString(PyExc_IndexError, "select() cannot be applied to a 0-dim tensor.");
        return NULL;
    }
    int64_t size = t->sizes[dim];
    if (index < -size || index >= size) {
        PyErr_Format(PyExc_IndexError, "index %lld is out of bounds for dimension %d with size %lld",
                     (long long)index, dim, (long long)size);
        return NULL;
    }
    if (index < 0)
        index += size;
    int64_t sizes[PCS_MAX_DIMS], strides[PCS_MAX_DIMS];
    for (int i = 0, k = 0; i < t->ndim; i++) {
        if (i == dim)
            continue;
        sizes[k] = t->sizes[i];
        strides[k++] = t->strides[i];
    }
    return pcs_tensor_alias(t, t->offset + index * t->strides[dim], t->ndim - 1, sizes, strides);
}

/* ------------------------------------------------------------------------ */
/* Methods                                                                   */

static PyObject *m_view(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    if (kw || nargs == 0) {
        PyErr_SetString(PyExc_TypeError, "view(*shape) takes the new shape");
        return NULL;
    }
    if (nargs == 1 && PcsDType_Check(args[0])) {
        /* view(dtype): reinterpretation, only between equal element sizes. */
        int d = ((PcsDType *)args[0])->id;
        PcsTensor *t = T(self);
        if (pcs_itemsize(d) != pcs_itemsize(t->dtype)) {
            PyErr_SetString(PyExc_NotImplementedError,
                            "view(dtype) between dtypes of different sizes is not supported");
            return NULL;
        }
        return (PyObject *)pcs_tensor_make_view(t->storage, t->offset, t->ndim, t->sizes,
                                                t->strides, d);
    }
    int64_t sizes[PCS_MAX_DIMS];
    int n = pcs_parse_ints(args, nargs, sizes);
    return n < 0 ? NULL : (PyObject *)pcs_tensor_view(T(self), n, sizes);
}

static PyObject *m_reshape(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    if (kw || nargs == 0) {
        PyErr_SetString(PyExc_TypeError, "reshape(*shape) takes the new shape");
        return NULL;
    }
    int64_t sizes[PCS_MAX_DIMS];
    int n = pcs_parse_ints(args, nargs, sizes);
    return n < 0 ? NULL : (PyObject *)pcs_tensor_reshape(T(self), n, sizes);
}

static PyObject *m_view_as(PyObject *self, PyObject *other)
{
    if (!PcsTensor_Check(other))
        return PyErr_Format(PyExc_TypeError, "view_as() expects a tensor");
    return (PyObject *)pcs_tensor_view(T(self), T(other)->ndim, T(other)->sizes);
}

static PyObject *m_reshape_as(PyObject *self, PyObject *other)
{
    if (!PcsTensor_Check(other))
        return PyErr_Format(PyExc_TypeError, "reshape_as() expects a tensor");
    return (PyObject *)pcs_tensor_reshape(T(self), T(other)->ndim, T(other)->sizes);
}

static PyObject *m_expand(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const kwl[] = {"size", NULL};
    if (pcs_check_kwargs(kw, "expand", kwl) < 0)
        return NULL;
    PyObject *size = kw ? pcs_arg(args, nargs, kw, -1, "size") : NULL;
    int64_t sizes[PCS_MAX_DIMS];
    int n = size ? pcs_parse_ints(&size, 1, sizes) : pcs_parse_ints(args, nargs, sizes);
    return n < 0 ? NULL : (PyObject *)pcs_tensor_expand(T(self), n, sizes);
}

static PyObject *m_expand_as(PyObject *self, PyObject *other)
{
    if (!PcsTensor_Check(other))
        return PyErr_Format(PyExc_TypeError, "expand_as() expects a tensor");
    return (PyObject *)pcs_tensor_expand(T(self), T(other)->ndim, T(other)->sizes);
}

static PyObject *m_flatten(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    PcsTensor *t = T(self);
    PyObject *s = pcs_arg(args, nargs, kw, 0, "start_dim"), *e = pcs_arg(args, nargs, kw, 1, "end_dim");
    int start = s ? parse_dim(s, t->ndim) : 0;
    if (start < 0)
        return NULL;
    int end = e ? parse_dim(e, t->ndim) : (t->ndim ? t->ndim - 1 : 0);
    if (end < 0)
        return NULL;
    if (start > end) {
        PyErr_SetString(PyExc_RuntimeError, "flatten() has invalid args: start_dim cannot come after end_dim");
        return NULL;
    }
    if (t->ndim == 0) {
        int64_t one = 1;
        return (PyObject *)pcs_tensor_reshape(t, 1, &one);
    }
    if (start == end)
        return Py_NewRef(self);
    int64_t sizes[PCS_MAX_DIMS];
    int k = 0;
    for (int i = 0; i < start; i++)
        sizes[k++] = t->sizes[i];
    int64_t prod = 1;
    for (int i = start; i <= end; i++)
        prod *= t->sizes[i];
    sizes[k++] = prod;
    for (int i = end + 1; i < t->ndim; i++)
        sizes[k++] = t->sizes[i];
    return (PyObject *)pcs_tensor_reshape(t, k, sizes);
}

static PyObject *m_squeeze(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    PcsTensor *t = T(self);
    PyObject *dimobj = pcs_arg(args, nargs, kw, 0, "dim");
    bool drop[PCS_MAX_DIMS] = {false};
    if (!dimobj || dimobj == Py_None) {
        for (int i = 0; i < t->ndim; i++)
            drop[i] = t->sizes[i] == 1;
    } else {
        int64_t dims[PCS_MAX_DIMS];
        bool one = PyIndex_Check(dimobj);
        int n = one ? 1 : pcs_parse_ints(&dimobj, 1, dims);
        if (n < 0 || (one && parse_i64(dimobj, &dims[0]) < 0))
            return NULL;
        for (int i = 0; i < n; i++) {
            int d = pcs_wrap_dim(dims[i], t->ndim);
            if (d < 0)
                return NULL;
            if (t->ndim)
                drop[d] = t->sizes[d] == 1;
        }
    }
    int64_t sizes[PCS_MAX_DIMS], strides[PCS_MAX_DIMS];
    int k = 0;
    for (int i = 0; i < t->ndim; i++) {
        if (drop[i])
            continue;
        sizes[k] = t->sizes[i];
        strides[k++] = t->strides[i];
    }
    return (PyObject *)pcs_tensor_alias(t, t->offset, k, sizes, strides);
}

static PyObject *m_unsqueeze(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    PcsTensor *t = T(self);
    PyObject *dimobj = pcs_arg(args, nargs, kw, 0, "dim");
    if (!dimobj)
        return PyErr_Format(PyExc_TypeError, "unsqueeze() missing required argument 'dim'");
    if (pcs_check_ndim(t->ndim + 1, PyExc_RuntimeError) < 0)
        return NULL;
    int64_t dl;
    if (parse_i64(dimobj, &dl) < 0)
        return NULL;
    int d = pcs_wrap_dim(dl, t->ndim + 1);
    if (d < 0)
        return NULL;
    int64_t sizes[PCS_MAX_DIMS], strides[PCS_MAX_DIMS];
    for (int i = 0, k = 0; i <= t->ndim; i++) {
        if (i == d) {
            sizes[i] = 1;
            strides[i] = d < t->ndim ? t->sizes[d] * t->strides[d] : 1;
        } else {
            sizes[i] = t->sizes[k];
            strides[i] = t->strides[k++];
        }
    }
    return (PyObject *)pcs_tensor_alias(t, t->offset, t->ndim + 1, sizes, strides);
}

static PyObject *m_permute(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    PcsTensor *t = T(self);
    PyObject *dimsobj = kw ? pcs_arg(args, nargs, kw, -1, "dims") : NULL;
    int64_t dims[PCS_MAX_DIMS];
    int n = dimsobj ? pcs_parse_ints(&dimsobj, 1, dims) : pcs_parse_ints(args, nargs, dims);
    if (n < 0)
        return NULL;
    if (n != t->ndim) {
        PyErr_Format(PyExc_RuntimeError,
                     "permute(sparse_coo): number of dimensions in the tensor input does not "
                     "match the length of the desired ordering of dimensions i.e. input.dim() = "
                     "%d is not equal to len(dims) = %d",
                     t->ndim, n);
        return NULL;
    }
    int64_t sizes[PCS_MAX_DIMS], strides[PCS_MAX_DIMS];
    bool seen[PCS_MAX_DIMS] = {false};
    for (int i = 0; i < n; i++) {
        int d = pcs_wrap_dim(dims[i], n);
        if (d < 0)
            return NULL;
        if (seen[d])
            return PyErr_Format(PyExc_RuntimeError, "permute(): duplicate dims are not allowed.");
        seen[d] = true;
        sizes[i] = t->sizes[d];
        strides[i] = t->strides[d];
    }
    return (PyObject *)pcs_tensor_alias(t, t->offset, n, sizes, strides);
}

static PyObject *transpose_dims(PcsTensor *t, int a, int b)
{
    int64_t sizes[PCS_MAX_DIMS], strides[PCS_MAX_DIMS];
    memcpy(sizes, t->sizes, sizeof sizes);
    memcpy(strides, t->strides, sizeof strides);
    if (t->ndim) {
        sizes[a] = t->sizes[b];
        sizes[b] = t->sizes[a];
        strides[a] = t->strides[b];
        strides[b] = t->strides[a];
    }
    return (PyObject *)pcs_tensor_alias(t, t->offset, t->ndim, sizes, strides);
}

static PyObject *m_transpose(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    PcsTensor *t = T(self);
    PyObject *a = pcs_arg(args, nargs, kw, 0, "dim0"), *b = pcs_arg(args, nargs, kw, 1, "dim1");
    if (!a || !b)
        return PyErr_Format(PyExc_TypeError, "transpose(dim0, dim1) takes two dims");
    int da = parse_dim(a, t->ndim), db = da < 0 ? -1 : parse_dim(b, t->ndim);
    if (da < 0 || db < 0)
        return NULL;
    return transpose_dims(t, da, db);
}

static PyObject *m_t(PyObject *self, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    PcsTensor *t = T(self);
    if (t->ndim > 2)
        return PyErr_Format(PyExc_RuntimeError,
                            "t() expects a tensor with <= 2 dimensions, but self is %dD", t->ndim);
    return transpose_dims(t, 0, t->ndim == 2 ? 1 : 0);
}

static PyObject *m_narrow(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    PcsTensor *t = T(self);
    PyObject *d = pcs_arg(args, nargs, kw, 0, "dim"), *s = pcs_arg(args, nargs, kw, 1, "start"),
             *l = pcs_arg(args, nargs, kw, 2, "length");
    if (!d || !s || !l)
        return PyErr_Format(PyExc_TypeError, "narrow(dim, start, length) takes three arguments");
    if (t->ndim == 0)
        return PyErr_Format(PyExc_RuntimeError, "narrow() cannot be applied to a 0-dim tensor.");
    int dim = parse_dim(d, t->ndim);
    int64_t start, length;
    if (dim < 0 || parse_i64(s, &start) < 0 || parse_i64(l, &length) < 0)
        return NULL;
    int64_t size = t->sizes[dim];
    if (start < -size || start > size)
        return PyErr_Format(PyExc_IndexError,
                            "start out of range (expected to be in range of [%lld, %lld], but got %lld)",
                            (long long)-size, (long long)size, (long long)start);
    if (start < 0)
        start += size;
    if (length < 0 || start > size - length)
        return PyErr_Format(PyExc_RuntimeError, "start (%lld) + length (%lld) exceeds dimension size (%lld).",
                            (long long)start, (long long)length, (long long)size);
    int64_t sizes[PCS_MAX_DIMS];
    memcpy(sizes, t->sizes, sizeof sizes);
    sizes[dim] = length;
    return (PyObject *)pcs_tensor_alias(t, t->offset + start * t->strides[dim], t->ndim, sizes,
                                        t->strides);
}

static PyObject *m_select(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    PcsTensor *t = T(self);
    PyObject *d = pcs_arg(args, nargs, kw, 0, "dim"), *i = pcs_arg(args, nargs, kw, 1, "index");
    if (!d || !i)
        return PyErr_Format(PyExc_TypeError, "select(dim, index) takes two arguments");
    int dim = parse_dim(d, t->ndim);
    int64_t index;
    if (dim < 0 || parse_i64(i, &index) < 0)
        return NULL;
    return (PyObject *)pcs_tensor_select(t, dim, index);
}

static PyObject *m_unbind(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    PcsTensor *t = T(self);
    PyObject *d = pcs_arg(args, nargs, kw, 0, "dim");
    if (t->ndim == 0)
        return PyErr_Format(PyExc_IndexError, "Dimension specified as 0 but tensor has no dimensions");
    int dim = d ? parse_dim(d, t->ndim) : 0;
    if (dim < 0)
        return NULL;
    PyObject *tup = PyTuple_New(t->sizes[dim]);
    for (int64_t k = 0; tup && k < t->sizes[dim]; k++) {
        PyObject *v = (PyObject *)pcs_tensor_select(t, dim, k);
        if (!v) {
            Py_CLEAR(tup);
            break;
        }
        PyTuple_SET_ITEM(tup, k, v);
    }
    return tup;
}

static PyObject *m_as_strided(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    PcsTensor *t = T(self);
    PyObject *so = pcs_arg(args, nargs, kw, 0, "size"), *st = pcs_arg(args, nargs, kw, 1, "stride"),
             *off = pcs_arg(args, nargs, kw, 2, "storage_offset");
    if (!so || !st)
        return PyErr_Format(PyExc_TypeError, "as_strided(size, stride, storage_offset=None)");
    int64_t sizes[PCS_MAX_DIMS], strides[PCS_MAX_DIMS], offset = t->offset;
    int n = pcs_parse_sizes(&so, 1, sizes), m = n < 0 ? -1 : pcs_parse_ints(&st, 1, strides);
    if (n < 0 || m < 0 || (off && off != Py_None && parse_i64(off, &offset) < 0))
        return NULL;
    if (n != m)
        return PyErr_Format(PyExc_RuntimeError, "mismatch in length of strides and shape");
    for (int i = 0; i < m; i++) {
        if (strides[i] < 0) {
            char buf[256];
            format_shape(buf, sizeof buf, m, strides);
            return PyErr_Format(PyExc_RuntimeError,
                                "as_strided: Negative strides are not supported at the moment, "
                                "got strides: %s", buf);
        }
    }
    if (offset < 0)
        return PyErr_Format(PyExc_RuntimeError, "Tensor: invalid storage offset %lld",
                            (long long)offset);
    if (pcs_check_shape(n, sizes) < 0)
        return NULL;
    /* Stay inside the storage: a view past its end would read freed memory.
     * The span is computed with checked arithmetic, so that huge sizes or
     * strides cannot wrap around into a small, accepted figure. */
    bool empty = false;
    for (int i = 0; i < n; i++)
        empty |= sizes[i] == 0;
    int64_t end = offset, span, nbytes; /* end: one past the last element reached */
    bool overflow = false;
    for (int i = 0; !empty && i < n; i++) {
        overflow |= __builtin_mul_overflow(sizes[i] - 1, strides[i], &span);
        overflow |= __builtin_add_overflow(end, span, &end);
    }
    overflow |= __builtin_add_overflow(end, 1, &end);
    overflow |= __builtin_mul_overflow(end, (int64_t)pcs_itemsize(t->dtype), &nbytes);
    if (!empty && (overflow || (uint64_t)nbytes > t->storage->nbytes))
        return PyErr_Format(PyExc_RuntimeError,
                            "setStorage: sizes and strides reach past the end of the storage");
    return (PyObject *)pcs_tensor_alias(t, offset, n, sizes, strides);
}

/* ------------------------------------------------------------------------ */
/* real / imag / T                                                           */

static PyObject *complex_part(PcsTensor *t, int part)
{
    if (!pcs_is_complex(t->dtype)) {
        if (part == 0)
            return Py_NewRef((PyObject *)t);
        return PyErr_Format(PyExc_RuntimeError,
                            "imag is not implemented for tensors with non-complex dtypes.");
    }
    int64_t strides[PCS_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++)
        strides[i] = t->strides[i] * 2;
    return (PyObject *)pcs_tensor_make_view(t->storage, t->offset * 2 + part, t->ndim, t->sizes,
                                            strides, pcs_real_of(t->dtype));
}

static PyObject *get_real(PyObject *self, void *c)
{
    PCS_UNUSED(c);
    return complex_part(T(self), 0);
}

static PyObject *get_imag(PyObject *self, void *c)
{
    PCS_UNUSED(c);
    return complex_part(T(self), 1);
}

static PyObject *get_T(PyObject *self, void *c)
{
    PCS_UNUSED(c);
    PcsTensor *t = T(self);
    int64_t sizes[PCS_MAX_DIMS], strides[PCS_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++) {
        sizes[i] = t->sizes[t->ndim - 1 - i];
        strides[i] = t->strides[t->ndim - 1 - i];
    }
    return (PyObject *)pcs_tensor_alias(t, t->offset, t->ndim, sizes, strides);
}

static PyObject *get_mT(PyObject *self, void *c)
{
    PCS_UNUSED(c);
    PcsTensor *t = T(self);
    if (t->ndim < 2)
        return PyErr_Format(PyExc_RuntimeError, "tensor.mT is only supported on matrices or "
                                                "batches of matrices. Got %dD tensor.", t->ndim);
    return transpose_dims(t, t->ndim - 2, t->ndim - 1);
}

/* The in-place forms (squeeze_, unsqueeze_, transpose_, t_, as_strided_):
 * self takes the geometry of the view its plain form returns, so the data
 * stay where they are and self's identity (hooks, attributes) is kept. With
 * autograd involved the engine refuses them (no formula: NotImplementedError). */
static PyObject *take_view(PyObject *self, PyObject *view)
{
    if (!view) /* NOLINT(pcs-errors): the plain form that made view raised */
        return NULL;
    pcs_tensor_take_geometry(T(self), T(view));
    Py_DECREF(view);
    return Py_NewRef(self);
}

#define INPLACE_VIEW(name)                                                                        \
    static PyObject *m_##name##_(PyObject *self, PyObject *const *a, Py_ssize_t n, PyObject *kw) \
    {                                                                                             \
        return take_view(self, m_##name(self, a, n, kw));                                         \
    }
INPLACE_VIEW(squeeze)
INPLACE_VIEW(unsqueeze)
INPLACE_VIEW(transpose)
INPLACE_VIEW(as_strided)
#undef INPLACE_VIEW

static PyObject *m_t_(PyObject *self, PyObject *noargs)
{
    return take_view(self, m_t(self, noargs));
}

PyGetSetDef pcs_tensor_view_getset[] = {
    {"real", get_real, NULL, "The real parts (a view; self for real tensors).", NULL},
    {"imag", get_imag, NULL, "The imaginary parts of a complex tensor (a view).", NULL},
    {"T", get_T, NULL, "All dimensions reversed (a view).", NULL},
    {"mT", get_mT, NULL, "The last two dimensions swapped (a view).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyMethodDef pcs_tensor_view_methods[] = {
    {"view", FASTKW(m_view), "view(*shape): same data, new shape (-1 infers one size)."},
    {"view_as", m_view_as, METH_O, "view_as(other)\n\nself.view(other.size()): a view sharing self's storage."},
    {"reshape", FASTKW(m_reshape), "reshape(*shape): a view when possible, else a copy."},
    {"reshape_as", m_reshape_as, METH_O, "reshape_as(other)\n\nself.reshape(other.size()): a view when the strides allow, "
     "else a copy."},
    {"expand", FASTKW(m_expand), "expand(*sizes): broadcast size-1 dims (stride 0)."},
    {"expand_as", m_expand_as, METH_O, "expand_as(other)\n\nself.expand(other.size()): a broadcast view (stride 0 on "
     "expanded dims)."},
    {"flatten", FASTKW(m_flatten), "flatten(start_dim=0, end_dim=-1)\n\nThe dims start_dim..end_dim merged into one "
     "(a view when possible, else a copy)."},
    {"squeeze", FASTKW(m_squeeze), "squeeze(dim=None): drop size-1 dims."},
    {"unsqueeze", FASTKW(m_unsqueeze), "unsqueeze(dim): insert a size-1 dim."},
    {"permute", FASTKW(m_permute), "permute(*dims): reorder dims."},
    {"transpose", FASTKW(m_transpose), "transpose(dim0, dim1)\n\nA view with dims dim0 and "
     "dim1 swapped (no data moves)."},
    {"swapaxes", FASTKW(m_transpose), "swapaxes(axis0, axis1)\n\nAlias of transpose()."},
    {"swapdims", FASTKW(m_transpose), "swapdims(dim0, dim1)\n\nAlias of transpose()."},
    {"t", m_t, METH_NOARGS, "Transpose of a tensor with at most 2 dims."},
    {"t_", m_t_, METH_NOARGS, "In place: self becomes its transpose (a view of the same data)."},
    {"squeeze_", FASTKW(m_squeeze_), "squeeze_(dim=None): in place, self loses those size-1 dims."},
    {"unsqueeze_", FASTKW(m_unsqueeze_), "unsqueeze_(dim): in place, self gains a size-1 dim."},
    {"transpose_", FASTKW(m_transpose_), "transpose_(dim0, dim1): in place, self's dims swapped."},
    {"swapaxes_", FASTKW(m_transpose_), "swapaxes_(axis0, axis1)\n\nAlias of transpose_()."},
    {"swapdims_", FASTKW(m_transpose_), "swapdims_(dim0, dim1)\n\nAlias of transpose_()."},
    {"as_strided_", FASTKW(m_as_strided_), "as_strided_(size, stride, storage_offset=None): in place."},
    {"narrow", FASTKW(m_narrow), "narrow(dim, start, length)\n\nA view of `length` entries of dim `dim` from `start`."},
    {"select", FASTKW(m_select), "select(dim, index): drops dim."},
    {"unbind", FASTKW(m_unbind), "unbind(dim=0): tuple of selects."},
    {"as_strided", FASTKW(m_as_strided), "as_strided(size, stride, storage_offset=None)\n\nA view of self's storage with "
     "the given geometry; RuntimeError if it would reach outside the storage."},
    {NULL, NULL, 0, NULL},
};
