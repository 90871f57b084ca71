/* tensor.c: the Tensor type itself: construction from storages, the facts a
 * tensor reports (device, dtype, sizes, strides ...), conversions to Python
 * numbers, the legacy constructor torch.Tensor(*sizes | data), and the C API
 * of tensor.h that factories, copies and ops build on.
 *
 * Views, indexing, data interop and copying methods live in their own files
 * (see tensor.h); their method tables are merged into the type at init. */
#include "tensor/copy.h"
#include "tensor/layout.h"
#include "tensor/tensor.h"

#include <string.h>

#include "runtime/device.h"
#include "runtime/host_allocator.h"
#include "core/scalar.h"
#include "runtime/stream.h"

/* ------------------------------------------------------------------------ */
/* Construction                                                              */

PcsTensor *pcs_tensor_make_view(PcsStorage *storage, int64_t offset, int ndim,
                                const int64_t *sizes, const int64_t *strides, int dtype)
{
    /* The last line of defence for the fixed size/stride arrays and for
     * numel: callers check before they build, this catches the one that did
     * not before anything is copied. */
    if (pcs_check_shape(ndim, sizes) < 0)
        return NULL;
    PcsTensor *t = PyObject_New(PcsTensor, &PcsTensor_Type);
    if (!t)
        return NULL;
    t->storage = (PcsStorage *)Py_NewRef((PyObject *)storage);
    t->offset = offset;
    t->ndim = ndim;
    t->dtype = dtype;
    t->device = storage->device; /* -1 for host memory of every kind */
    t->dict = NULL;
    t->weakreflist = NULL;
    t->autograd = NULL;
    if (ndim) {
        memcpy(t->sizes, sizes, ndim * sizeof(int64_t));
        memcpy(t->strides, strides, ndim * sizeof(int64_t));
    }
    return t;
}

PcsTensor *pcs_tensor_alias(PcsTensor *t, int64_t offset, int ndim, const int64_t *sizes,
                            const int64_t *strides)
{
    return pcs_tensor_make_view(t->storage, offset, ndim, sizes, strides, t->dtype);
}

void pcs_tensor_take_geometry(PcsTensor *dst, const PcsTensor *src)
{
    PcsStorage *old = dst->storage;
    dst->storage = (PcsStorage *)Py_NewRef((PyObject *)src->storage);
    dst->offset = src->offset;
    dst->ndim = src->ndim;
    dst->dtype = src->dtype;
    dst->device = src->device;
    memcpy(dst->sizes, src->sizes, sizeof dst->sizes);
    memcpy(dst->strides, src->strides, sizeof dst->strides);
    Py_XDECREF(old);
}

/* A Python subclass (nn.Parameter) is a heap type with GC, so its objects
 * must come from its own tp_alloc, never PyObject_New of the base. */
PcsTensor *pcs_tensor_alias_as(PyTypeObject *type, PcsTensor *t)
{
    if (type == &PcsTensor_Type)
        return pcs_tensor_alias(t, t->offset, t->ndim, t->sizes, t->strides);
    PcsTensor *r = (PcsTensor *)type->tp_alloc(type, 0); /* zeroed: no storage yet */
    if (r)
        pcs_tensor_take_geometry(r, t);
    return r;
}

PcsTensor *pcs_tensor_empty_strided(int ndim, const int64_t *sizes, const int64_t *strides,
                                    int dtype, int device, bool pinned)
{
    /* Elements reachable: 1 + sum((size-1)*stride), or 0 if any size is 0. */
    size_t nelem = 1;
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] < 0 || strides[i] < 0) {
            PyErr_SetString(PyExc_RuntimeError, "sizes and strides must be non-negative");
            return NULL;
        }
        if (sizes[i] == 0) {
            nelem = 0;
            break;
        }
    }
    /* The element count itself must fit an int64 (contiguous strides computed
     * from sizes whose product overflows would wrap and understate the span). */
    size_t numel = 1;
    for (int i = 0; nelem && i < ndim; i++)
        if (pcs_mul_overflow_size(numel, (size_t)sizes[i], &numel) < 0)
            return NULL;
    for (int i = 0; nelem && i < ndim; i++) {
        size_t span;
        if (pcs_mul_overflow_size((size_t)(sizes[i] - 1), (size_t)strides[i], &span) < 0)
            return NULL;
        if (__builtin_add_overflow(nelem, span, &nelem)) {
            PyErr_SetString(PyExc_RuntimeError, "size overflows the address space");
            return NULL;
        }
    }
    size_t nbytes;
    if (pcs_mul_overflow_size(nelem, (size_t)pcs_itemsize(dtype), &nbytes) < 0)
        return NULL;
    if (numel > (size_t)INT64_MAX || nbytes > (size_t)PTRDIFF_MAX) {
        PyErr_SetString(PyExc_RuntimeError, "size overflows the address space");
        return NULL;
    }
    PcsStorage *st;
    if (device >= 0)
        st = pcs_storage_new_cuda(device, nbytes, pcs_current_stream(device));
    else if (pinned)
        st = pcs_storage_new_pinned(nbytes);
    else
        st = pcs_storage_new_cpu(nbytes);
    if (!st)
        return NULL;
    PcsTensor *t = pcs_tensor_make_view(st, 0, ndim, sizes, strides, dtype);
    Py_DECREF(st);
    return t;
}

PcsTensor *pcs_tensor_empty(int ndim, const int64_t *sizes, int dtype, int device, bool pinned)
{
    int64_t strides[PCS_MAX_DIMS];
    pcs_contiguous_strides(ndim, sizes, strides);
    return pcs_tensor_empty_strided(ndim, sizes, strides, dtype, device, pinned);
}

bool pcs_tensor_is_pinned(const PcsTensor *t)
{
    if (t->device >= 0)
        return false;
    if (t->storage->kind == PCS_STORAGE_PINNED)
        return true;
    return t->storage->kind == PCS_STORAGE_EXTERNAL && t->storage->data &&
           pcs_device_count() > 0 && pcs_host_is_pinned(t->storage->data);
}

PyObject *pcs_tensor_device_object(const PcsTensor *t)
{
    return t->device >= 0 ? pcs_device_new(PCS_CUDA, t->device) : pcs_device_new(PCS_CPU, -1);
}

/* ------------------------------------------------------------------------ */
/* Type slots                                                                */

void (*pcs_tensor_autograd_free)(PcsTensor *t) = NULL;

static void tensor_dealloc(PyObject *self)
{
    PcsTensor *t = (PcsTensor *)self;
    if (t->autograd && pcs_tensor_autograd_free)
        pcs_tensor_autograd_free(t);
    if (t->weakreflist)
        PyObject_ClearWeakRefs(self);
    Py_CLEAR(t->dict);
    Py_CLEAR(t->storage);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *tensor_repr(PyObject *self)
{
    /* Printing is Python (_tensor_str.py): it is not a hot path and its rules
     * are easier to keep identical to torch's there. */
    static PyObject *str_fn = NULL;
    if (!str_fn) {
        PyObject *mod = PyImport_ImportModule("pycuda_sem._tensor_str");
        if (!mod)
            return NULL;
        str_fn = PyObject_GetAttrString(mod, "_str");
        Py_DECREF(mod);
        if (!str_fn)
            return NULL;
    }
    return PyObject_CallOneArg(str_fn, self);
}

/* torch.Tensor(*sizes) / torch.Tensor(data) / torch.Tensor(): the legacy
 * constructor, default dtype on the CPU unless device= says otherwise. */
static PyObject *tensor_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"device", NULL};
    PyObject *device_obj = NULL;
    PyObject *empty = PyTuple_New(0);
    if (!empty)
        return NULL;
    int ok = PyArg_ParseTupleAndKeywords(empty, kwargs, "|O:Tensor", kwlist, &device_obj);
    Py_DECREF(empty);
    if (!ok)
        return NULL;
    int device = pcs_device_arg(device_obj, -1);
    if (device == -2)
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    PyObject *const *items = &PyTuple_GET_ITEM(args, 0);
    PcsTensor *t;
    if (n == 1 && !PyIndex_Check(items[0]) && !pcs_size_check(items[0])) {
        t = pcs_tensor_from_data(items[0], pcs_default_dtype(), device, false);
    } else {
        int64_t sizes[PCS_MAX_DIMS];
        int ndim = n == 0 ? 1 : pcs_parse_sizes(items, n, sizes);
        if (n == 0)
            sizes[0] = 0;
        if (ndim < 0)
            return NULL;
        t = pcs_tensor_empty(ndim, sizes, pcs_default_dtype(), device, false);
    }
    if (t && type != &PcsTensor_Type) { /* a subclass: the same memory, in its type */
        PcsTensor *sub = pcs_tensor_alias_as(type, t);
        Py_DECREF(t);
        t = sub;
    }
    return (PyObject *)t;
}

/* ------------------------------------------------------------------------ */
/* Attributes                                                                */

#define T(o) ((PcsTensor *)(o))

static PyObject *get_device(PyObject *self, void *c)
{
    PCS_UNUSED(c);
    return pcs_tensor_device_object(T(self));
}

static PyObject *get_dtype(PyObject *self, void *c)
{
    PCS_UNUSED(c);
    return Py_NewRef(pcs_dtype_object(T(self)->dtype));
}

static PyObject *get_shape(PyObject *self, void *c)
{
    PCS_UNUSED(c);
    return pcs_size_new(T(self)->ndim, T(self)->sizes);
}

static PyObject *get_ndim(PyObject *self, void *c)
{
    PCS_UNUSED(c);
    return PyLong_FromLong(T(self)->ndim);
}

static PyObject *get_is_cuda(PyObject *self, void *c)
{
    PCS_UNUSED(c);
    return PyBool_FromLong(T(self)->device >= 0);
}

static PyObject *get_is_cpu(PyObject *self, void *c)
{
    PCS_UNUSED(c);
    return PyBool_FromLong(T(self)->device < 0);
}

static PyObject *get_false(PyObject *self, void *c)
{
    PCS_UNUSED(self);
    PCS_UNUSED(c);
    Py_RETURN_FALSE;
}

static PyObject *get_nbytes(PyObject *self, void *c)
{
    PCS_UNUSED(c);
    return PyLong_FromLongLong(pcs_tensor_numel(T(self)) * pcs_itemsize(T(self)->dtype));
}

static PyObject *get_itemsize(PyObject *self, void *c)
{
    PCS_UNUSED(c);
    return PyLong_FromLong(pcs_itemsize(T(self)->dtype));
}

static PyObject *get_array_interface(PyObject *self, void *c)
{
    PCS_UNUSED(c);
    return pcs_tensor_array_interface(T(self));
}

/* NumPy's operators defer to a type of higher priority: np.float32(2) * t
 * then reaches Tensor.__rmul__ (a tensor, as torch) instead of turning t
 * into an ndarray. torch says 1000 too. */
static PyObject *get_array_priority(PyObject *self, void *c)
{
    PCS_UNUSED(self);
    PCS_UNUSED(c);
    return PyFloat_FromDouble(1000.0);
}

PyGetSetDef pcs_tensor_core_getset[] = {
    {"device", get_device, NULL, "The device the tensor's memory is on.", NULL},
    {"dtype", get_dtype, NULL, "The element type.", NULL},
    {"shape", get_shape, NULL, "The sizes, as a pycuda_sem.Size.", NULL},
    {"ndim", get_ndim, NULL, "Number of dimensions.", NULL},
    {"is_cuda", get_is_cuda, NULL, "True for tensors in GPU memory.", NULL},
    {"is_cpu", get_is_cpu, NULL, "True for tensors in host memory.", NULL},
    {"is_sparse", get_false, NULL, "Always False: tensors are strided.", NULL},
    {"is_quantized", get_false, NULL, "Always False.", NULL},
    {"is_meta", get_false, NULL, "Always False.", NULL},
    /* the other backends and layouts torch can report: never here */
    {"is_xpu", get_false, NULL, "Always False.", NULL},
    {"is_mps", get_false, NULL, "Always False.", NULL},
    {"is_ipu", get_false, NULL, "Always False.", NULL},
    {"is_mtia", get_false, NULL, "Always False.", NULL},
    {"is_maia", get_false, NULL, "Always False.", NULL},
    {"is_vulkan", get_false, NULL, "Always False.", NULL},
    {"is_xla", get_false, NULL, "Always False.", NULL},
    {"is_mkldnn", get_false, NULL, "Always False.", NULL},
    {"is_nested", get_false, NULL, "Always False.", NULL},
    {"is_sparse_csr", get_false, NULL, "Always False: tensors are strided.", NULL},
    {"nbytes", get_nbytes, NULL, "numel() * element_size().", NULL},
    {"itemsize", get_itemsize, NULL, "Bytes per element.", NULL},
    {"__array_priority__", get_array_priority, NULL, "NumPy's operator priority: 1000, as torch.", NULL},
    {"__array_interface__", get_array_interface, NULL,
     "NumPy's array interface (CPU tensors only).", NULL},
    /* A static type gets no __dict__ descriptor from tp_dictoffset alone;
     * copy and pickle (_tensor_pickle.py) carry the attributes through it. */
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict,
     "The tensor's Python attributes.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* ------------------------------------------------------------------------ */
/* Methods                                                                   */

/* Parses an optional `dim` (positional or keyword) for size()/stride(). */
static int optional_dim_arg(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                            const char *fname, PyObject **out)
{
    *out = NULL;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (nargs + nkw > 1) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most one argument (dim)", fname);
        return -1;
    }
    if (nargs == 1)
        *out = args[0];
    else if (nkw == 1) {
        if (!PyUnicode_Check(PyTuple_GET_ITEM(kwnames, 0)) ||
            PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "dim") != 0) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument", fname);
            return -1;
        }
        *out = args[0];
    }
    if (*out == Py_None)
        *out = NULL;
    return 0;
}

static PyObject *per_dim(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames, const char *fname, const int64_t *values)
{
    PyObject *dimobj;
    if (optional_dim_arg(args, nargs, kwnames, fname, &dimobj) < 0)
        return NULL;
    if (!dimobj) {
        if (values == T(self)->sizes)
            return pcs_size_new(T(self)->ndim, values);
        PyObject *tup = PyTuple_New(T(self)->ndim);
        for (int i = 0; tup && i < T(self)->ndim; i++)
            PyTuple_SET_ITEM(tup, i, PyLong_FromLongLong(values[i]));
        return tup;
    }
    long long d = PyLong_AsLongLong(dimobj);
    if (d == -1 && PyErr_Occurred())
        return NULL;
    int w = pcs_wrap_dim(d, T(self)->ndim);
    if (w < 0)
        return NULL;
    /* A 0-dim tensor answers dim 0/-1 with 1 (sizes) as torch does. */
    return PyLong_FromLongLong(T(self)->ndim ? values[w] : 1);
}

static PyObject *m_size(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    return per_dim(self, args, nargs, kw, "size", T(self)->sizes);
}

static PyObject *m_stride(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    return per_dim(self, args, nargs, kw, "stride", T(self)->strides);
}

static PyObject *m_dim(PyObject *self, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    return PyLong_FromLong(T(self)->ndim);
}

static PyObject *m_numel(PyObject *self, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    return PyLong_FromLongLong(pcs_tensor_numel(T(self)));
}

static PyObject *m_element_size(PyObject *self, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    return PyLong_FromLong(pcs_itemsize(T(self)->dtype));
}

static PyObject *m_is_contiguous(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kw)
{
    int fmt = pcs_memory_format_only_arg(args, nargs, kw, "is_contiguous", 1, PCS_FORMAT_CONTIGUOUS);
    if (fmt < 0)
        return NULL;
    if (fmt == PCS_FORMAT_PRESERVE) {
        PyErr_SetString(PyExc_RuntimeError, "is_contiguous: preserve memory format is unsupported");
        return NULL;
    }
    return PyBool_FromLong(pcs_tensor_in_format(T(self), fmt));
}

static PyObject *m_is_pinned(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kw)
{
    PCS_UNUSED(args);
    PCS_UNUSED(nargs);
    PCS_UNUSED(kw);
    return PyBool_FromLong(pcs_tensor_is_pinned(T(self)));
}

static PyObject *m_is_floating_point(PyObject *self, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    return PyBool_FromLong(pcs_is_float(T(self)->dtype));
}

static PyObject *m_is_complex(PyObject *self, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    return PyBool_FromLong(pcs_is_complex(T(self)->dtype));
}

static PyObject *m_data_ptr(PyObject *self, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    return PyLong_FromVoidPtr(pcs_tensor_data(T(self)));
}

static PyObject *m_get_device(PyObject *self, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    return PyLong_FromLong(T(self)->device);
}

static PyObject *m_storage_offset(PyObject *self, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    return PyLong_FromLongLong(T(self)->offset);
}

static PyObject *m_untyped_storage(PyObject *self, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    return Py_NewRef((PyObject *)T(self)->storage);
}

static PyObject *m_contiguous(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kw)
{
    int fmt = pcs_memory_format_only_arg(args, nargs, kw, "contiguous", 1, PCS_FORMAT_CONTIGUOUS);
    if (fmt < 0)
        return NULL;
    if (fmt == PCS_FORMAT_CONTIGUOUS)
        return (PyObject *)pcs_tensor_contiguous(T(self), false);
    if (fmt == PCS_FORMAT_PRESERVE) {
        PyErr_SetString(PyExc_RuntimeError, "preserve memory format is unsupported by the contiguous operator");
        return NULL;
    }
    if (pcs_tensor_in_format(T(self), fmt))
        return Py_NewRef(self);
    return (PyObject *)pcs_tensor_to_format(T(self), T(self)->dtype, T(self)->device, false, true, fmt);
}

static PyObject *m_clone(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kw)
{
    int fmt = pcs_memory_format_only_arg(args, nargs, kw, "clone", 1, PCS_FORMAT_PRESERVE);
    if (fmt < 0)
        return NULL;
    return (PyObject *)pcs_tensor_to_format(T(self), T(self)->dtype, T(self)->device, false, true, fmt);
}

static PyObject *m_item(PyObject *self, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    return pcs_tensor_item(T(self));
}

static PyObject *m_tolist(PyObject *self, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    return pcs_tensor_tolist(T(self));
}

static PyObject *m_numpy(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    PCS_UNUSED(args);
    PCS_UNUSED(nargs);
    PCS_UNUSED(kw); /* force=: our CPU tensors never need forcing */
    return pcs_tensor_numpy(T(self));
}

static PyObject *m_array(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    PCS_UNUSED(kw);
    PyObject *arr = pcs_tensor_numpy(T(self));
    if (!arr || nargs == 0 || args[0] == Py_None)
        return arr;
    PyObject *r = PyObject_CallMethod(arr, "astype", "O", args[0]);
    Py_DECREF(arr);
    return r;
}

static PyObject *m_format(PyObject *self, PyObject *spec)
{
    if (!PyUnicode_Check(spec))
        return PyErr_Format(PyExc_TypeError, "format spec must be str, not %.100s",
                            Py_TYPE(spec)->tp_name);
    /* 0-dim tensors format like their value (f"{t:.2f}"), as in torch. */
    if (T(self)->ndim == 0) {
        PyObject *v = pcs_tensor_item(T(self));
        if (!v)
            return NULL;
        PyObject *r = PyObject_Format(v, spec);
        Py_DECREF(v);
        return r;
    }
    PyObject *s = PyObject_Str(self);
    if (!s)
        return NULL;
    PyObject *r = PyObject_Format(s, spec);
    Py_DECREF(s);
    return r;
}

#define FASTKW(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL | METH_KEYWORDS

PyMethodDef pcs_tensor_core_methods[] = {
    {"size", FASTKW(m_size), "size(dim=None): the sizes, or one of them."},
    {"stride", FASTKW(m_stride), "stride(dim=None): strides in elements."},
    {"dim", m_dim, METH_NOARGS, "Number of dimensions."},
    {"ndimension", m_dim, METH_NOARGS, "Number of dimensions."},
    {"numel", m_numel, METH_NOARGS, "Number of elements."},
    {"nelement", m_numel, METH_NOARGS, "Number of elements."},
    {"element_size", m_element_size, METH_NOARGS, "Bytes per element."},
    {"is_contiguous", FASTKW(m_is_contiguous), "is_contiguous(memory_format=contiguous_format): True if laid out in that format (row-major by default)."},
    {"is_pinned", FASTKW(m_is_pinned), "True if in page-locked host memory."},
    {"is_floating_point", m_is_floating_point, METH_NOARGS, "dtype.is_floating_point"},
    {"is_complex", m_is_complex, METH_NOARGS, "dtype.is_complex"},
    {"data_ptr", m_data_ptr, METH_NOARGS, "Address of the first element."},
    {"get_device", m_get_device, METH_NOARGS, "CUDA ordinal, or -1 on the CPU."},
    {"storage_offset", m_storage_offset, METH_NOARGS, "Offset into the storage, in elements."},
    {"untyped_storage", m_untyped_storage, METH_NOARGS, "The UntypedStorage underneath."},
    {"contiguous", FASTKW(m_contiguous), "contiguous(memory_format=contiguous_format): self if laid out in that format, else a copy that is."},
    {"clone", FASTKW(m_clone), "clone(memory_format=preserve_format): a copy on the same device, in that format (preserve: as self is laid out)."},
    {"item", m_item, METH_NOARGS, "The value of a one-element tensor as a Python number."},
    {"tolist", m_tolist, METH_NOARGS, "Nested lists of Python numbers."},
    {"numpy", FASTKW(m_numpy), "A NumPy array sharing memory (CPU tensors only)."},
    {"__array__", FASTKW(m_array), "NumPy conversion (CPU tensors only)."},
    {"__format__", m_format, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};

/* ------------------------------------------------------------------------ */
/* Number and sequence protocols                                             */

static int one_element(PcsTensor *t)
{
    int64_t n = pcs_tensor_numel(t);
    if (n != 1) {
        PyErr_Format(PyExc_RuntimeError, "a Tensor with %lld elements cannot be converted to Scalar",
                     (long long)n);
        return -1;
    }
    return 0;
}

static int nb_bool(PyObject *self)
{
    int64_t n = pcs_tensor_numel(T(self));
    if (n != 1) {
        PyErr_Format(PyExc_RuntimeError, "Boolean value of Tensor with %s is ambiguous",
                     n == 0 ? "no values" : "more than one value");
        return -1;
    }
    PyObject *v = pcs_tensor_item(T(self));
    if (!v)
        return -1;
    int r = PyObject_IsTrue(v);
    Py_DECREF(v);
    return r;
}

static PyObject *nb_float(PyObject *self)
{
    if (one_element(T(self)) < 0)
        return NULL;
    PyObject *v = pcs_tensor_item(T(self));
    if (!v || PyFloat_Check(v))
        return v;
    PyObject *r = PyComplex_Check(v) ? NULL : PyNumber_Float(v);
    if (PyComplex_Check(v))
        PyErr_SetString(PyExc_TypeError, "can't convert complex to float");
    Py_DECREF(v);
    return r;
}

static PyObject *nb_int(PyObject *self)
{
    if (one_element(T(self)) < 0)
        return NULL;
    PyObject *v = pcs_tensor_item(T(self));
    if (!v || PyLong_CheckExact(v))
        return v;
    PyObject *r = PyComplex_Check(v) ? NULL : PyNumber_Long(v);
    if (PyComplex_Check(v))
        PyErr_SetString(PyExc_TypeError, "can't convert complex to int");
    Py_DECREF(v);
    return r;
}

static PyObject *nb_index(PyObject *self)
{
    if (!pcs_is_integral(T(self)->dtype, true) || pcs_tensor_numel(T(self)) != 1) {
        PyErr_SetString(PyExc_TypeError,
                        "only integer tensors of a single element can be converted to an index");
        return NULL;
    }
    PyObject *v = pcs_tensor_item(T(self));
    if (v && PyBool_Check(v)) {
        PyObject *r = PyLong_FromLong(v == Py_True);
        Py_DECREF(v);
        return r;
    }
    return v;
}

PyNumberMethods pcs_tensor_as_number = {
    .nb_bool = nb_bool,
    .nb_int = nb_int,
    .nb_float = nb_float,
    .nb_index = nb_index,
};

static Py_ssize_t mp_length(PyObject *self)
{
    if (T(self)->ndim == 0) {
        PyErr_SetString(PyExc_TypeError, "len() of a 0-d tensor");
        return -1;
    }
    return (Py_ssize_t)T(self)->sizes[0];
}

static PyMappingMethods tensor_as_mapping = {
    .mp_length = mp_length,
    .mp_subscript = pcs_tensor_getitem,
    .mp_ass_subscript = pcs_tensor_setitem,
};

/* Sequence length too, so that PySequence_Check and len() see a sequence. */
static PySequenceMethods tensor_as_sequence = {
    .sq_length = mp_length,
};

static PyObject *tensor_iter(PyObject *self)
{
    PcsTensor *t = T(self);
    if (t->ndim == 0) {
        PyErr_SetString(PyExc_TypeError, "iteration over a 0-d tensor");
        return NULL;
    }
    PyObject *list = PyList_New(t->sizes[0]);
    for (int64_t i = 0; list && i < t->sizes[0]; i++) {
        PyObject *v = (PyObject *)pcs_tensor_select(t, 0, i);
        if (!v) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, v);
    }
    if (!list)
        return NULL;
    PyObject *it = PyObject_GetIter(list);
    Py_DECREF(list);
    return it;
}

PyTypeObject PcsTensor_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pycuda_sem.Tensor",
    .tp_basicsize = sizeof(PcsTensor),
    .tp_dealloc = tensor_dealloc,
    .tp_repr = tensor_repr,
    .tp_as_number = &pcs_tensor_as_number,
    .tp_as_sequence = &tensor_as_sequence,
    .tp_as_mapping = &tensor_as_mapping,
    .tp_iter = tensor_iter,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "A multi-dimensional array on the CPU or a CUDA device.\n\n"
              "Tensor(*sizes) and Tensor(data) are the legacy constructors "
              "(default dtype, CPU unless device= is given).",
    .tp_weaklistoffset = offsetof(PcsTensor, weakreflist),
    .tp_dictoffset = offsetof(PcsTensor, dict),
    .tp_new = tensor_new,
};

/* ------------------------------------------------------------------------ */
/* Init                                                                      */
