/* tensor_data.c: tensors <-> Python data: item, tolist, NumPy interop
 * (numpy(), __array_interface__, from_numpy) and tensor(data) with torch's
 * dtype inference over nested sequences.
 *
 * NumPy is reached through numpy_interop.h, NumPy's own C-API, which
 * validates what objects offering the array protocols describe: an array
 * made from a tensor keeps the tensor alive as its base, and a tensor made
 * from an array keeps the array alive through its storage.
 *
 * Reading an element can run Python code (__index__, __float__, __len__ of a
 * user's object) that changes the containers being read, so sequences are
 * read from tuple snapshots that own their items, never through borrowed
 * pointers into a list. */
#include "tensor/copy.h"
#include "tensor/tensor.h"

#include <string.h>

#include "core/numpy_interop.h"
#include "core/scalar.h"

/* ------------------------------------------------------------------------ */
/* To Python                                                                 */

PyObject *pcs_tensor_item(PcsTensor *t)
{
    int64_t n = pcs_tensor_numel(t);
    if (n != 1) {
        PyErr_Format(PyExc_RuntimeError, "a Tensor with %lld elements cannot be converted to Scalar",
                     (long long)n);
        return NULL;
    }
    unsigned char buf[16];
    if (pcs_read_element(t, buf) < 0)
        return NULL;
    return pcs_scalar_to_py(t->dtype, pcs_scalar_load(t->dtype, buf));
}

static PyObject *tolist_rec(const PcsTensor *t, int dim, const char *p)
{
    if (dim == t->ndim)
        return pcs_scalar_to_py(t->dtype, pcs_scalar_load(t->dtype, p));
    int64_t n = t->sizes[dim], step = t->strides[dim] * pcs_itemsize(t->dtype);
    PyObject *list = PyList_New(n);
    for (int64_t i = 0; list && i < n; i++) {
        PyObject *v = tolist_rec(t, dim + 1, p + i * step);
        if (!v) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, v);
    }
    return list;
}

PyObject *pcs_tensor_tolist(PcsTensor *t)
{
    PcsTensor *h = pcs_tensor_to(t, t->dtype, -1, false, false, false);
    if (!h)
        return NULL;
    PyObject *r = tolist_rec(h, 0, pcs_tensor_numel(h) ? pcs_tensor_data(h) : NULL);
    Py_DECREF(h);
    return r;
}

static int check_numpy_able(PcsTensor *t)
{
    if (t->device >= 0) {
        PyErr_Format(PyExc_TypeError,
                     "can't convert cuda:%d device type tensor to numpy. Use Tensor.cpu() to "
                     "copy the tensor to host memory first.",
                     t->device);
        return -1;
    }
    if (!pcs_dtypes[t->dtype].np_typestr) {
        PyErr_Format(PyExc_TypeError, "Got unsupported ScalarType %s",
                     t->dtype == PCS_BFLOAT16 ? "BFloat16" : pcs_dtypes[t->dtype].name);
        return -1;
    }
    return 0;
}

PyObject *pcs_tensor_array_interface(PcsTensor *t)
{
    if (t->device >= 0) {
        /* AttributeError makes NumPy fall back to __array__, whose error
         * tells the user to call .cpu(). */
        PyErr_SetString(PyExc_AttributeError, "CUDA tensors have no __array_interface__");
        return NULL;
    }
    if (check_numpy_able(t) < 0)
        return NULL;
    static char empty_dummy[16];
    int isz = pcs_itemsize(t->dtype);
    void *data = t->storage->data ? pcs_tensor_data(t) : (void *)empty_dummy;
    PyObject *shape = PyTuple_New(t->ndim), *strides = PyTuple_New(t->ndim);
    for (int i = 0; shape && strides && i < t->ndim; i++) {
        PyTuple_SET_ITEM(shape, i, PyLong_FromLongLong(t->sizes[i]));
        PyTuple_SET_ITEM(strides, i, PyLong_FromLongLong(t->strides[i] * isz));
    }
    if (!shape || !strides) {
        Py_XDECREF(shape);
        Py_XDECREF(strides);
        return NULL;
    }
    return Py_BuildValue("{s:N,s:s,s:(NO),s:N,s:i}", "shape", shape, "typestr",
                         pcs_dtypes[t->dtype].np_typestr, "data", PyLong_FromVoidPtr(data),
                         Py_False, "strides", strides, "version", 3);
}

PyObject *pcs_tensor_numpy(PcsTensor *t)
{
    if (check_numpy_able(t) < 0)
        return NULL;
    int64_t byte_strides[PCS_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++)
        byte_strides[i] = t->strides[i] * pcs_itemsize(t->dtype);
    void *data = t->storage->data ? pcs_tensor_data(t) : NULL;
    if (!data && pcs_tensor_numel(t)) {
        PyErr_SetString(PyExc_RuntimeError, "the tensor's storage has no memory");
        return NULL;
    }
    return pcs_numpy_wrap(data, t->dtype, t->ndim, t->sizes, byte_strides, (PyObject *)t);
}

/* ------------------------------------------------------------------------ */
/* From NumPy                                                                */

PcsTensor *pcs_tensor_from_numpy(PyObject *arr)
{
    /* torch's checks and messages (torch/csrc/utils/tensor_numpy.cpp) */
    pcs_ndarray_info a;
    if (pcs_numpy_info(arr, &a) < 0)
        return NULL;
    if (a.ndim > PCS_MAX_DIMS) {
        PyErr_Format(PyExc_RuntimeError, "tensors have at most %d dimensions", PCS_MAX_DIMS);
        return NULL;
    }
    if (a.dtype < 0) {
        PyObject *dt = PyObject_GetAttrString(arr, "dtype");
        if (!dt)
            return NULL;
        PyErr_Format(PyExc_TypeError,
                     "can't convert np.ndarray of type numpy.%S. The only supported types are: "
                     "float64, float32, float16, complex64, complex128, int64, int32, int16, "
                     "int8, uint8, and bool.", dt);
        Py_DECREF(dt);
        return NULL;
    }
    int64_t sizes[PCS_MAX_DIMS], st[PCS_MAX_DIMS];
    for (int i = 0; i < a.ndim; i++) {
        sizes[i] = a.sizes[i];
        if (a.strides[i] < 0) {
            PyErr_SetString(PyExc_ValueError,
                            "At least one stride in the given numpy array is negative, and "
                            "tensors with negative strides are not currently supported. (You "
                            "can probably work around this by making a copy of your array "
                            "with array.copy().) ");
            return NULL;
        }
        if (a.strides[i] % a.itemsize) {
            PyErr_SetString(PyExc_ValueError,
                            "given numpy array strides not a multiple of the element byte size. "
                            "Copy the numpy array to reallocate the memory.");
            return NULL;
        }
        st[i] = a.strides[i] / a.itemsize;
    }
    if (!a.native_order) {
        PyErr_SetString(PyExc_ValueError,
                        "given numpy array has byte order different from the native byte order. "
                        "Conversion between byte orders is currently not supported.");
        return NULL;
    }
    /* the bytes the view reaches: NumPy vouches for each size and stride, a
     * sum that does not fit is refused rather than wrapped */
    size_t nelem = 1;
    for (int i = 0; i < a.ndim; i++)
        nelem = sizes[i] == 0 ? 0 : nelem;
    for (int i = 0; nelem && i < a.ndim; i++) {
        size_t span;
        if (pcs_mul_overflow_size((size_t)(sizes[i] - 1), (size_t)st[i], &span) < 0)
            return NULL;
        if (__builtin_add_overflow(nelem, span, &nelem)) {
            PyErr_SetString(PyExc_RuntimeError, "size overflows the address space");
            return NULL;
        }
    }
    size_t nbytes;
    if (pcs_mul_overflow_size(nelem, (size_t)a.itemsize, &nbytes) < 0)
        return NULL;
    PcsStorage *s = pcs_storage_wrap(a.data, nbytes, arr);
    if (!s)
        return NULL;
    PcsTensor *t = pcs_tensor_make_view(s, 0, a.ndim, sizes, st, a.dtype);
    Py_DECREF(s);
    return t;
}

PcsTensor *pcs_tensor_from_array_like(PyObject *obj, bool warn_readonly)
{
    PyObject *arr = pcs_numpy_as_array(obj);
    if (!arr)
        return NULL;
    pcs_ndarray_info a;
    if (pcs_numpy_info(arr, &a) < 0) {
        Py_DECREF(arr);
        return NULL;
    }
    if (warn_readonly && !a.writeable &&
        PyErr_WarnEx(PyExc_UserWarning,
                     "The given NumPy array is not writable, and PyTorch does not support "
                     "non-writable tensors. This means writing to this tensor will result in "
                     "undefined behavior. You may want to copy the array to protect its data or "
                     "make it writable before converting it to a tensor. This type of warning "
                     "will be suppressed for the rest of this program.",
                     1) < 0) {
        Py_DECREF(arr);
        return NULL;
    }
    PcsTensor *t = pcs_tensor_from_numpy(arr);
    Py_DECREF(arr);
    return t;
}

/* ------------------------------------------------------------------------ */
/* tensor(data): nested sequences                                            */

static bool is_nested_seq(PyObject *o)
{
    return !PcsTensor_Check(o) && !PyUnicode_Check(o) && !PyBytes_Check(o) &&
           !PyDict_Check(o) && PySequence_Check(o);
}

/* The dtype a leaf value asks for, torch's inference (-1 with exception). */
static int leaf_dtype(PyObject *o)
{
    /* Exact types first: NumPy's float64 subclasses float but keeps its
     * own dtype, as in torch. */
    if (PyBool_Check(o))
        return PCS_BOOL;
    /* any int, whatever its size: whether it fits is for the dtype that the
     * whole sequence ends up with to say (element_scalar) */
    if (PyLong_Check(o))
        return PCS_INT64;
    if (PyFloat_CheckExact(o))
        return pcs_default_dtype();
    if (PyComplex_CheckExact(o))
        return pcs_default_complex_dtype();
    if (PcsTensor_Check(o))
        return ((PcsTensor *)o)->dtype;
    int d = pcs_numpy_scalar_dtype(o); /* a NumPy scalar: its own dtype */
    if (d >= 0)
        return d;
    pcs_scalar s;
    if (pcs_scalar_from_py(o, &s) < 0) {
        if (!PyErr_ExceptionMatches(PyExc_TypeError))
            return -1; /* the object's own error (a raising __float__) */
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "new(): invalid data type '%.100s'", Py_TYPE(o)->tp_name);
        return -1;
    }
    return pcs_scalar_default_dtype(s.kind);
}

/* One element of tensor(data) as a scalar, read the way torch's store_scalar
 * reads it: as the target dtype's Python type. Integer dtypes unpack a Python
 * int as an int64 (the scalar parser's "Overflow when unpacking long" for any
 * int beyond it); floating and complex dtypes unpack it as a float, so an int
 * of any size keeps its value, rounded to a double (Python's OverflowError
 * past double's range); bool reads it as "non-zero". The scalar parser models
 * torch's Scalar arguments, which stop at 2^64, so ints bound for a
 * non-integer dtype do not go through it. */
static int element_scalar(PyObject *o, int dtype, pcs_scalar *s)
{
    if (PyLong_Check(o) && !PyBool_Check(o) && !pcs_is_integral(dtype, false)) {
        if (dtype == PCS_BOOL) {
            int nonzero = PyObject_IsTrue(o);
            *s = (pcs_scalar){.kind = PCS_SK_BOOL, .i = nonzero};
            return nonzero < 0 ? -1 : 0;
        }
        *s = (pcs_scalar){.kind = PCS_SK_FLOAT, .re = PyLong_AsDouble(o)};
        return s->re == -1.0 && PyErr_Occurred() ? -1 : 0;
    }
    if (pcs_scalar_from_py(o, s) == 0)
        return 0;
    if (PyLong_Check(o) || !PyErr_ExceptionMatches(PyExc_TypeError))
        return -1; /* an int out of the dtype's reach, or the object's own error */
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "new(): invalid data type '%.100s'", Py_TYPE(o)->tp_name);
    return -1;
}

static int leaf_store(PyObject *o, int dtype, char *p)
{
    if (PcsTensor_Check(o)) {
        PcsTensor *t = (PcsTensor *)o;
        if (pcs_tensor_numel(t) != 1) {
            PyErr_SetString(PyExc_ValueError,
                            "only one element tensors can be converted to Python scalars");
            return -1;
        }
        unsigned char buf[16];
        if (pcs_read_element(t, buf) < 0)
            return -1;
        pcs_scalar_store(dtype, p, pcs_scalar_load(t->dtype, buf));
        return 0;
    }
    pcs_scalar s;
    if (element_scalar(o, dtype, &s) < 0)
        return -1;
    if (s.kind == PCS_SK_COMPLEX && dtype != PCS_BOOL && !pcs_is_complex(dtype)) {
        /* torch unpacks an element as the dtype's Python type: an int through
         * __index__, which no complex has; a float through __float__, which
         * Python's complex lacks (NumPy's has one, and keeps the real part) */
        if (pcs_is_integral(dtype, false)) {
            PyErr_Format(PyExc_TypeError, "'%.100s' object cannot be interpreted as an integer",
                         Py_TYPE(o)->tp_name);
            return -1;
        }
        if (PyComplex_CheckExact(o)) {
            PyErr_SetString(PyExc_TypeError, "must be real number, not complex");
            return -1;
        }
    }
    if (pcs_scalar_check_fits(dtype, s, PCS_CHECK_DATA) < 0)
        return -1;
    pcs_scalar_store(dtype, p, s);
    return 0;
}

typedef struct {
    int ndim;
    int64_t sizes[PCS_MAX_DIMS];
    int dtype;    /* inferred so far (-1: none yet) */
    char *out;    /* pass 2: where the next element goes */
    int out_dtype;
} walk_state;

/* Pass 1 (out == NULL): checks the shape and infers the dtype.
 * Pass 2: stores the elements in row-major order. */
static int walk(PyObject *o, int depth, walk_state *w)
{
    if (depth == w->ndim) {
        if (is_nested_seq(o)) {
            PyErr_Format(PyExc_ValueError, "expected a number at dim %d, got a sequence", depth);
            return -1;
        }
        if (w->out) {
            if (leaf_store(o, w->out_dtype, w->out) < 0)
                return -1;
            w->out += pcs_itemsize(w->out_dtype);
            return 0;
        }
        int d = leaf_dtype(o);
        if (d < 0)
            return -1;
        w->dtype = w->dtype < 0 ? d : pcs_promote_types(w->dtype, d);
        return 0;
    }
    if (!is_nested_seq(o)) {
        PyErr_Format(PyExc_ValueError, "expected sequence of length %lld at dim %d (got a scalar)",
                     (long long)w->sizes[depth], depth);
        return -1;
    }
    PyObject *seq = pcs_sequence_tuple(o, "not a sequence");
    if (!seq)
        return -1;
    Py_ssize_t n = PyTuple_GET_SIZE(seq);
    int r = 0;
    if (n != w->sizes[depth]) {
        PyErr_Format(PyExc_ValueError, "expected sequence of length %lld at dim %d (got %zd)",
                     (long long)w->sizes[depth], depth, n);
        r = -1;
    }
    for (Py_ssize_t i = 0; r == 0 && i < n; i++)
        r = walk(PyTuple_GET_ITEM(seq, i), depth + 1, w);
    Py_DECREF(seq);
    return r;
}

/* Data that NumPy reads as an array: 1, 0, or -1 with exception. */
int pcs_has_array_interface(PyObject *o)
{
    if (PyLong_CheckExact(o) || PyFloat_CheckExact(o) || PyComplex_CheckExact(o) ||
        PyBool_Check(o) || PyList_Check(o) || PyTuple_Check(o))
        return 0;
    int r = pcs_numpy_is_array(o);
    if (r != 0)
        return r;
    PyObject *attr = PyObject_GetAttrString(o, "__array_interface__");
    if (attr) {
        Py_DECREF(attr);
        return 1;
    }
    if (!PyErr_ExceptionMatches(PyExc_AttributeError))
        return -1;
    PyErr_Clear();
    return 0;
}

PcsTensor *pcs_tensor_from_data(PyObject *data, int dtype, int device, bool pinned)
{
    if (PcsTensor_Check(data)) {
        PcsTensor *t = (PcsTensor *)data;
        return pcs_tensor_to(t, dtype < 0 ? t->dtype : dtype, device == PCS_DEVICE_UNSET ? t->device : device,
                             false, true, pinned);
    }
    if (device == PCS_DEVICE_UNSET)
        device = -1;
    int ai = pcs_has_array_interface(data);
    if (ai < 0)
        return NULL;
    if (ai) {
        PcsTensor *a = pcs_tensor_from_array_like(data, false);
        if (!a)
            return NULL;
        PcsTensor *r = pcs_tensor_to(a, dtype < 0 ? a->dtype : dtype, device, false, true, pinned);
        Py_DECREF(a);
        return r;
    }
    walk_state w = {.ndim = 0, .dtype = -1, .out = NULL};
    /* The shape: follow first elements down. */
    PyObject *cur = Py_NewRef(data);
    while (is_nested_seq(cur)) {
        if (w.ndim >= PCS_MAX_DIMS) {
            Py_DECREF(cur);
            PyErr_Format(PyExc_ValueError, "too many dimensions (at most %d)", PCS_MAX_DIMS);
            return NULL;
        }
        Py_ssize_t n = PySequence_Size(cur);
        if (n < 0) {
            Py_DECREF(cur);
            return NULL;
        }
        w.sizes[w.ndim++] = n;
        if (n == 0)
            break;
        PyObject *next = PySequence_GetItem(cur, 0);
        Py_DECREF(cur);
        if (!next)
            return NULL;
        cur = next;
    }
    Py_DECREF(cur);
    int64_t numel = 1;
    for (int i = 0; i < w.ndim; i++)
        numel *= w.sizes[i];
    if (dtype < 0) {
        if (numel > 0 && walk(data, 0, &w) < 0)
            return NULL;
        dtype = w.dtype < 0 ? pcs_default_dtype() : w.dtype;
    }
    PcsTensor *host = pcs_tensor_empty(w.ndim, w.sizes, dtype, -1, pinned && device < 0);
    if (!host)
        return NULL;
    w.out = host->storage->data;
    w.out_dtype = dtype;
    if (numel > 0 && walk(data, 0, &w) < 0) {
        Py_DECREF(host);
        return NULL;
    }
    if (device < 0)
        return host;
    PcsTensor *r = pcs_tensor_to(host, dtype, device, false, false, false);
    Py_DECREF(host);
    return r;
}
