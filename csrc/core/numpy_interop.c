/* numpy_interop.c: every use of NumPy's C-API (see numpy_interop.h).
 *
 * The API table is imported here, once, on first use. It is named by
 * PY_ARRAY_UNIQUE_SYMBOL so that it is one table for the whole extension:
 * should another file ever need NumPy's headers, it defines the same
 * PY_ARRAY_UNIQUE_SYMBOL and NO_IMPORT_ARRAY before including them, and uses
 * the table this file fills. The symbol stays inside _C (-fvisibility=hidden). */
#define PY_ARRAY_UNIQUE_SYMBOL pcs_numpy_array_api
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include "core/numpy_interop.h"

#include <stdio.h>
#include <string.h>

#include "core/dtype.h"

#include <numpy/arrayobject.h>

/* 0 once the API table is loaded, -1 with NumPy's ImportError. Two threads
 * may both load it (the GIL is released while NumPy imports); they store the
 * same table. */
static int numpy_ready(void)
{
    if (PyArray_API)
        return 0;
    return _import_array() < 0 ? -1 : 0;
}

/* Our dtype id for a NumPy dtype: plain booleans, integers, floats and
 * complex numbers of the sizes we have, in either byte order (callers check
 * the order); -1 for the rest (structured, object, strings, times ...). */
static int dtype_of_descr(PyArray_Descr *d)
{
    if (PyDataType_HASFIELDS(d) || PyDataType_HASSUBARRAY(d) || !d->kind ||
        !strchr("biufc", d->kind))
        return -1;
    char ts[16];
    snprintf(ts, sizeof ts, "=%c%d", d->kind, (int)PyDataType_ELSIZE(d));
    return pcs_dtype_from_typestr(ts);
}

int pcs_numpy_is_array(PyObject *obj)
{
    if (numpy_ready() < 0)
        return -1;
    return PyArray_Check(obj);
}

/* getattr(obj, name) into *out, NULL when obj has no such attribute;
 * -1 on any other error. */
static int optional_attr(PyObject *obj, const char *name, PyObject **out)
{
    PyObject *v = PyObject_GetAttrString(obj, name);
    *out = v;
    if (v)
        return 0;
    if (!PyErr_ExceptionMatches(PyExc_AttributeError))
        return -1;
    PyErr_Clear();
    return 0;
}

static PyObject *unsupported_kind(char kind)
{
    PyErr_Format(PyExc_TypeError,
                 "can't convert an array of kind '%c' (only bool, integer, float and complex "
                 "arrays convert to tensors)",
                 kind);
    return NULL;
}

/* The kind letter an object's __array_interface__ or __array_struct__
 * declares ('\0' when it declares none we can read; -1 on error). NumPy
 * trusts these: an object kind ('O') with a made-up data pointer, or none,
 * makes it read Python objects from arbitrary memory (it crashes inside
 * NumPy), so the kind is checked before NumPy sees the object. */
static int declared_kind(PyObject *obj)
{
    int kind = 0;
    PyObject *iface = NULL;
    if (optional_attr(obj, "__array_interface__", &iface) < 0)
        return -1;
    if (iface && PyDict_Check(iface)) {
        PyObject *ts = PyDict_GetItemString(iface, "typestr"); /* borrowed, iface held */
        if (ts && PyUnicode_Check(ts)) {
            const char *t = PyUnicode_AsUTF8(ts);
            if (!t) {
                Py_DECREF(iface);
                return -1;
            }
            if (strlen(t) >= 2)
                kind = (unsigned char)t[1];
        }
    }
    Py_XDECREF(iface);
    if (kind)
        return kind;
    PyObject *cap = NULL;
    if (optional_attr(obj, "__array_struct__", &cap) < 0)
        return -1;
    if (cap && PyCapsule_IsValid(cap, NULL)) {
        const PyArrayInterface *ai = PyCapsule_GetPointer(cap, NULL);
        if (ai && ai->two == 2)
            kind = (unsigned char)ai->typekind;
    }
    Py_XDECREF(cap);
    return kind;
}

PyObject *pcs_numpy_as_array(PyObject *obj)
{
    if (numpy_ready() < 0)
        return NULL;
    if (!PyArray_Check(obj)) {
        int kind = declared_kind(obj);
        if (kind < 0)
            return NULL;
        if (kind && !strchr("biufc", kind))
            return unsupported_kind((char)kind);
    }
    return PyArray_FromAny(obj, NULL, 0, 0, 0, NULL);
}

int pcs_numpy_info(PyObject *arr, pcs_ndarray_info *info)
{
    if (numpy_ready() < 0)
        return -1;
    if (!PyArray_Check(arr)) {
        PyErr_Format(PyExc_TypeError, "expected np.ndarray (got %.100s)", Py_TYPE(arr)->tp_name);
        return -1;
    }
    PyArrayObject *a = (PyArrayObject *)arr;
    PyArray_Descr *d = PyArray_DESCR(a);
    info->ndim = PyArray_NDIM(a);
    info->sizes = (const intptr_t *)PyArray_DIMS(a);
    info->strides = (const intptr_t *)PyArray_STRIDES(a);
    info->data = PyArray_DATA(a);
    info->dtype = dtype_of_descr(d);
    info->itemsize = (int)PyArray_ITEMSIZE(a);
    info->writeable = PyArray_ISWRITEABLE(a);
    info->native_order = PyArray_ISNBO(d->byteorder);
    return 0;
}

PyObject *pcs_numpy_wrap(void *data, int dtype, int ndim, const int64_t *sizes,
                         const int64_t *byte_strides, PyObject *base)
{
    static const int typenums[PCS_NUM_DTYPES] = {
        [PCS_BOOL] = NPY_BOOL,       [PCS_UINT8] = NPY_UINT8,     [PCS_INT8] = NPY_INT8,
        [PCS_INT16] = NPY_INT16,     [PCS_INT32] = NPY_INT32,     [PCS_INT64] = NPY_INT64,
        [PCS_FLOAT16] = NPY_FLOAT16, [PCS_BFLOAT16] = -1,         [PCS_FLOAT32] = NPY_FLOAT32,
        [PCS_FLOAT64] = NPY_FLOAT64, [PCS_COMPLEX64] = NPY_COMPLEX64,
        [PCS_COMPLEX128] = NPY_COMPLEX128,
    };
    /* NumPy allocates memory of its own when given none: an empty array
     * gets a pointer that is never read instead */
    static char empty_dummy[16];
    if (numpy_ready() < 0)
        return NULL;
    if (typenums[dtype] < 0) {
        PyErr_Format(PyExc_TypeError, "Got unsupported ScalarType %s", pcs_dtypes[dtype].legacy);
        return NULL;
    }
    if (ndim > PCS_MAX_DIMS) {
        PyErr_Format(PyExc_RuntimeError, "tensors have at most %d dimensions", PCS_MAX_DIMS);
        return NULL;
    }
    npy_intp dims[PCS_MAX_DIMS + 1], strides[PCS_MAX_DIMS + 1];
    for (int i = 0; i < ndim; i++) {
        dims[i] = (npy_intp)sizes[i];
        strides[i] = (npy_intp)byte_strides[i];
    }
    PyArray_Descr *descr = PyArray_DescrFromType(typenums[dtype]);
    if (!descr)
        return NULL;
    /* NewFromDescr takes the descriptor's reference, even on failure */
    PyObject *arr = PyArray_NewFromDescr(&PyArray_Type, descr, ndim, dims, strides,
                                         data ? data : empty_dummy, NPY_ARRAY_WRITEABLE, NULL);
    if (!arr)
        return NULL;
    PyArray_UpdateFlags((PyArrayObject *)arr, NPY_ARRAY_UPDATE_ALL);
    /* SetBaseObject takes the base's reference, even on failure */
    if (PyArray_SetBaseObject((PyArrayObject *)arr, Py_NewRef(base)) < 0) {
        Py_DECREF(arr);
        return NULL;
    }
    return arr;
}

int pcs_numpy_scalar_dtype(PyObject *obj)
{
    if (numpy_ready() < 0) {
        PyErr_Clear();
        return -1;
    }
    if (!PyArray_IsScalar(obj, Generic))
        return -1;
    PyArray_Descr *d = PyArray_DescrFromScalar(obj);
    if (!d) {
        PyErr_Clear();
        return -1;
    }
    int id = dtype_of_descr(d);
    Py_DECREF(d);
    return id;
}
