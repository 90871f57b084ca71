/* factories.c: the module-level tensor constructors: empty, zeros, ones,
 * full, empty_strided, tensor, as_tensor, from_numpy
 * and the *_like family.
 *
 * Every factory takes sizes as varargs or one sequence, dtype= and device=;
 * the device defaults to the CPU and 'cuda' means the calling thread's current
 * device. pin_memory=True puts a CPU result in page-locked memory, in every
 * factory that takes it (pcs_check_pinned says when it cannot). CUDA memory comes from the caching allocator on the current stream;
 * values are written by fill kernels there. The factories whose values follow
 * from the index (arange, linspace, eye, ...) are in ranges.c. */
#include "tensor/copy.h"
#include "runtime/device.h"
#include "ops/factories.h"
#include "tensor/layout.h"
#include "tensor/tensor.h"

#include <math.h>
#include <string.h>

#include "core/numpy_interop.h"
#include "core/scalar.h"

#define FASTKW(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL | METH_KEYWORDS
#define T(o) ((PcsTensor *)(o))

/* pin_memory=True is for host memory only, and page-locking it needs the
 * CUDA driver: refused on a CUDA device and on a machine without a GPU, as
 * torch refuses both. Shared by every factory that takes pin_memory (the
 * random ones and Tensor.new_* too), which is checked once the device is
 * known (the *_like forms inherit it from their input). */
int pcs_check_pinned(bool pinned, int device)
{
    if (!pinned)
        return 0;
    if (device >= 0) {
        PyErr_SetString(PyExc_RuntimeError, "Only dense CPU tensors can be pinned");
        return -1;
    }
    return pcs_require_cuda();
}

/* Whether name is one of the NULL-ended names. */
static bool name_listed(const char *const *names, const char *name)
{
    for (const char *const *e = names; e && *e; e++)
        if (strcmp(*e, name) == 0)
            return true;
    return false;
}

/* Keyword options common to all factories; positional args are the
 * caller's business. memory_format= is taken only where extra lists it. */
int pcs_factory_opts_parse(PyObject *const *args, Py_ssize_t nargs, PyObject *kw, const char *fname,
                           const char *const *extra, pcs_factory_opts *o)
{
    o->dtype = -1;
    o->device = pcs_default_device(); /* torch.set_default_device; the CPU unless set */
    o->pinned = false;
    o->format = -2;
    if (o->device == -2)
        return -1;
    if (!kw)
        return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(kw); i++) {
        PyObject *k = PyTuple_GET_ITEM(kw, i), *v = args[nargs + i];
        if (PyUnicode_CompareWithASCIIString(k, "dtype") == 0) {
            if ((o->dtype = pcs_dtype_arg(v, -1)) == -2)
                return -1;
        } else if (PyUnicode_CompareWithASCIIString(k, "device") == 0) {
            if ((o->device = pcs_device_arg(v, o->device)) == -2) /* None: the default */
                return -1;
        } else if (PyUnicode_CompareWithASCIIString(k, "pin_memory") == 0) {
            int p = PyObject_IsTrue(v);
            if (p < 0)
                return -1;
            o->pinned = p;
        } else if (PyUnicode_CompareWithASCIIString(k, "requires_grad") == 0) {
            /* accepted here; the autograd layer's wrapper of the factory
             * marks the result (ops know nothing about autograd) */
            if (PyObject_IsTrue(v) < 0)
                return -1;
        } else if (PyUnicode_CompareWithASCIIString(k, "out") == 0) {
            if (v != Py_None) {
                PyErr_Format(PyExc_NotImplementedError, "%s(out=...) is not supported", fname);
                return -1;
            }
        } else if (PyUnicode_CompareWithASCIIString(k, "memory_format") == 0 &&
                   name_listed(extra, "memory_format")) {
            /* only empty() and the *_like factories take it, as in torch:
             * zeros(..., memory_format=...) is a TypeError there */
            if ((o->format = pcs_memory_format_arg(v, -2, fname)) == -1)
                return -1;
        } else if (PyUnicode_CompareWithASCIIString(k, "layout") == 0) {
            /* only the strided layout exists */
        } else {
            bool ok = false;
            for (const char *const *e = extra; e && *e && !ok; e++)
                ok = PyUnicode_CompareWithASCIIString(k, *e) == 0;
            if (!ok) {
                PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", fname, k);
                return -1;
            }
        }
    }
    return pcs_check_pinned(o->pinned, o->device);
}

/* Sizes from the positional args, or from size= (empty(size=(2, 3))). */
static int parse_size_args(PyObject *const *args, Py_ssize_t nargs, PyObject *kw, int64_t *sizes)
{
    PyObject *size = kw ? pcs_arg(args, nargs, kw, -1, "size") : NULL;
    if (size)
        return pcs_parse_sizes(&size, 1, sizes);
    if (nargs == 0) {
        PyErr_SetString(PyExc_TypeError, "missing the sizes (ints or a sequence of ints)");
        return -1;
    }
    return pcs_parse_sizes(args, nargs, sizes);
}

/* A number argument; one-element tensors count as their value. */
int pcs_number_arg(PyObject *o, pcs_scalar *s)
{
    if (PcsTensor_Check(o)) {
        PyObject *v = pcs_tensor_item((PcsTensor *)o);
        if (!v)
            return -1;
        int r = pcs_scalar_from_py(v, s);
        Py_DECREF(v);
        return r;
    }
    return pcs_scalar_from_py(o, s);
}

/* Writes s everywhere in t (a tensor of any layout). */
static int fill_scalar(PcsTensor *t, pcs_scalar s)
{
    if (pcs_scalar_check_fits(t->dtype, s, PCS_CHECK_FILL) < 0)
        return -1;
    unsigned char bytes[16];
    pcs_scalar_store(t->dtype, bytes, s);
    return pcs_fill_bytes(t, bytes);
}

PcsTensor *pcs_tensor_full(int ndim, const int64_t *sizes, PyObject *value, int dtype, int device,
                           bool pinned)
{
    pcs_scalar s;
    if (pcs_number_arg(value, &s) < 0)
        return NULL;
    if (dtype < 0)
        dtype = pcs_scalar_default_dtype(s.kind);
    if (pcs_scalar_check_fits(dtype, s, PCS_CHECK_FILL) < 0) /* before allocating */
        return NULL;
    PcsTensor *t = pcs_tensor_empty(ndim, sizes, dtype, device, pinned);
    if (t && fill_scalar(t, s) < 0)
        Py_CLEAR(t);
    return t;
}

PcsTensor *pcs_tensor_zeros(int ndim, const int64_t *sizes, int dtype, int device, bool pinned)
{
    PcsTensor *t = pcs_tensor_empty(ndim, sizes, dtype, device, pinned);
    unsigned char zero[16] = {0};
    if (t && pcs_fill_bytes(t, zero) < 0)
        Py_CLEAR(t);
    return t;
}

PcsTensor *pcs_tensor_ones(int ndim, const int64_t *sizes, int dtype, int device, bool pinned)
{
    PyObject *one = PyLong_FromLong(1);
    if (!one)
        return NULL;
    PcsTensor *t = pcs_tensor_full(ndim, sizes, one, dtype, device, pinned);
    Py_DECREF(one);
    return t;
}

/* ------------------------------------------------------------------------ */
/* empty / zeros / ones / full / empty_strided                               */

/* empty / zeros / ones(*size or size=, dtype=, device=, ...): the options
 * (memory_format= with_format: empty only, as in torch) and the sizes, the dtype defaulting to the default float dtype. ndim, or
 * -1 with an exception. */
static int parse_shape_factory(PyObject *const *args, Py_ssize_t nargs, PyObject *kw,
                               const char *fname, bool with_format, pcs_factory_opts *o, int64_t *sizes)
{
    static const char *const extra[] = {"size", NULL}, *const extra_format[] = {"size", "memory_format", NULL};
    if (pcs_factory_opts_parse(args, nargs, kw, fname, with_format ? extra_format : extra, o) < 0)
        return -1;
    if (o->dtype < 0)
        o->dtype = pcs_default_dtype();
    return parse_size_args(args, nargs, kw, sizes);
}

static PyObject *f_empty(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    PCS_UNUSED(m);
    pcs_factory_opts o;
    int64_t sizes[PCS_MAX_DIMS];
    int ndim = parse_shape_factory(args, nargs, kw, "empty", true, &o, sizes);
    if (ndim < 0)
        return NULL;
    if (o.format == PCS_FORMAT_PRESERVE) {
        PyErr_SetString(PyExc_RuntimeError, "empty(): preserve memory format is unsupported here");
        return NULL;
    }
    int64_t strides[PCS_MAX_DIMS];
    if (pcs_format_strides(o.format < 0 ? PCS_FORMAT_CONTIGUOUS : o.format, ndim, sizes, strides) < 0)
        return NULL;
    return (PyObject *)pcs_tensor_empty_strided(ndim, sizes, strides, o.dtype, o.device, o.pinned);
}

static PyObject *f_zeros(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    PCS_UNUSED(m);
    pcs_factory_opts o;
    int64_t sizes[PCS_MAX_DIMS];
    int ndim = parse_shape_factory(args, nargs, kw, "zeros", false, &o, sizes);
    if (ndim < 0)
        return NULL;
    return (PyObject *)pcs_tensor_zeros(ndim, sizes, o.dtype, o.device, o.pinned);
}

static PyObject *f_ones(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    PCS_UNUSED(m);
    pcs_factory_opts o;
    int64_t sizes[PCS_MAX_DIMS];
    int ndim = parse_shape_factory(args, nargs, kw, "ones", false, &o, sizes);
    if (ndim < 0)
        return NULL;
    return (PyObject *)pcs_tensor_ones(ndim, sizes, o.dtype, o.device, o.pinned);
}

static PyObject *f_full(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    PCS_UNUSED(m);
    static const char *const extra[] = {"size", "fill_value", NULL};
    pcs_factory_opts o;
    int64_t sizes[PCS_MAX_DIMS];
    if (pcs_factory_opts_parse(args, nargs, kw, "full", extra, &o) < 0)
        return NULL;
    PyObject *size = pcs_arg(args, nargs, kw, 0, "size"),
             *fill = pcs_arg(args, nargs, kw, 1, "fill_value");
    if (!size || !fill)
        return PyErr_Format(PyExc_TypeError, "full(size, fill_value, *, dtype=None, device=None)");
    int ndim = pcs_parse_sizes(&size, 1, sizes);
    if (ndim < 0)
        return NULL;
    return (PyObject *)pcs_tensor_full(ndim, sizes, fill, o.dtype, o.device, o.pinned);
}

static PyObject *f_empty_strided(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    PCS_UNUSED(m);
    static const char *const extra[] = {"size", "stride", NULL};
    pcs_factory_opts o;
    int64_t sizes[PCS_MAX_DIMS], strides[PCS_MAX_DIMS];
    if (pcs_factory_opts_parse(args, nargs, kw, "empty_strided", extra, &o) < 0)
        return NULL;
    PyObject *size = pcs_arg(args, nargs, kw, 0, "size"), *stride = pcs_arg(args, nargs, kw, 1, "stride");
    if (!size || !stride)
        return PyErr_Format(PyExc_TypeError, "empty_strided(size, stride, *, dtype=None, device=None)");
    int n = pcs_parse_sizes(&size, 1, sizes), k = n < 0 ? -1 : pcs_parse_sizes(&stride, 1, strides);
    if (n < 0 || k < 0)
        return NULL;
    if (n != k)
        return PyErr_Format(PyExc_RuntimeError, "mismatch in length of strides and shape");
    return (PyObject *)pcs_tensor_empty_strided(n, sizes, strides,
                                                o.dtype < 0 ? pcs_default_dtype() : o.dtype,
                                                o.device, o.pinned);
}

/* ------------------------------------------------------------------------ */
/* tensor / as_tensor / from_numpy                                           */

static PyObject *f_tensor(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    PCS_UNUSED(m);
    static const char *const extra[] = {"data", NULL};
    pcs_factory_opts o;
    if (pcs_factory_opts_parse(args, nargs, kw, "tensor", extra, &o) < 0)
        return NULL;
    PyObject *data = pcs_arg(args, nargs, kw, 0, "data");
    if (!data || nargs > 1)
        return PyErr_Format(PyExc_TypeError, "tensor(data, *, dtype=None, device=None, pin_memory=False)");
    bool dev_given = (kw && pcs_arg(args, nargs, kw, -1, "device") &&
                      pcs_arg(args, nargs, kw, -1, "device") != Py_None) ||
                     pcs_default_device_is_set(); /* set: as if device= named it */
    return (PyObject *)pcs_tensor_from_data(data, o.dtype, dev_given ? o.device : PCS_DEVICE_UNSET,
                                            o.pinned);
}

static PyObject *f_as_tensor(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    PCS_UNUSED(m);
    /* torch's as_tensor takes data, dtype and device and nothing else. The
     * options the other factories share (pin_memory, requires_grad, layout,
     * out, ...) would be accepted by parse_opts and then have no effect here,
     * so they are refused first, with torch's TypeError; so is a second
     * positional argument, which would otherwise be dropped unread. */
    static const char *const names[] = {"data", "dtype", "device", NULL};
    pcs_factory_opts o;
    if (nargs > 1)
        return PyErr_Format(PyExc_TypeError,
                            "as_tensor() takes 1 positional argument but %zd were given", nargs);
    if (pcs_check_kwargs(kw, "as_tensor", names) < 0 ||
        pcs_factory_opts_parse(args, nargs, kw, "as_tensor", names, &o) < 0)
        return NULL;
    PyObject *data = pcs_arg(args, nargs, kw, 0, "data");
    if (!data)
        return PyErr_Format(PyExc_TypeError, "as_tensor(data, dtype=None, device=None)");
    bool dev_given = (kw && pcs_arg(args, nargs, kw, -1, "device") &&
                      pcs_arg(args, nargs, kw, -1, "device") != Py_None) ||
                     pcs_default_device_is_set(); /* set: as if device= named it */
    /* Shares memory when nothing has to change, as torch does. */
    PcsTensor *base = NULL;
    int ai = PcsTensor_Check(data) ? 0 : pcs_has_array_interface(data);
    if (ai < 0)
        return NULL;
    if (PcsTensor_Check(data))
        base = (PcsTensor *)Py_NewRef(data);
    else if (ai && !(base = pcs_tensor_from_array_like(data, true)))
        return NULL;
    if (base) {
        int dtype = o.dtype < 0 ? base->dtype : o.dtype;
        int device = dev_given ? o.device : base->device;
        PcsTensor *r = pcs_tensor_to(base, dtype, device, false, false, false);
        Py_DECREF(base);
        return (PyObject *)r;
    }
    return (PyObject *)pcs_tensor_from_data(data, o.dtype, dev_given ? o.device : PCS_DEVICE_UNSET,
                                            false);
}

static PyObject *f_from_numpy(PyObject *m, PyObject *arr)
{
    PCS_UNUSED(m);
    int ok = pcs_numpy_is_array(arr);
    if (ok <= 0) {
        if (ok == 0)
            PyErr_Format(PyExc_TypeError, "expected np.ndarray (got %.100s)", Py_TYPE(arr)->tp_name);
        return NULL;
    }
    return (PyObject *)pcs_tensor_from_array_like(arr, true);
}

/* ------------------------------------------------------------------------ */
/* *_like                                                                    */

static PyObject *like(PyObject *const *args, Py_ssize_t nargs, PyObject *kw, const char *fname,
                      int kind /* 0 empty 1 zeros 2 ones 3 full */)
{
    static const char *const extra[] = {"input", "fill_value", "memory_format", NULL};
    pcs_factory_opts o;
    if (pcs_factory_opts_parse(args, nargs, kw, fname, extra, &o) < 0)
        return NULL;
    PyObject *in = pcs_arg(args, nargs, kw, 0, "input");
    if (!in || !PcsTensor_Check(in))
        return PyErr_Format(PyExc_TypeError, "%s() expects a tensor as its first argument", fname);
    PcsTensor *t = (PcsTensor *)in;
    int dtype = o.dtype < 0 ? t->dtype : o.dtype;
    bool dev_given = kw && pcs_arg(args, nargs, kw, -1, "device") &&
                     pcs_arg(args, nargs, kw, -1, "device") != Py_None;
    int device = dev_given ? o.device : t->device;
    if (pcs_check_pinned(o.pinned, device) < 0)
        return NULL;
    PyObject *fill = NULL;
    if (kind == 3) {
        fill = pcs_arg(args, nargs, kw, 1, "fill_value");
        if (!fill)
            return PyErr_Format(PyExc_TypeError, "full_like() missing required argument 'fill_value'");
    }
    /* torch's preserve_format by default: the result is laid out as t */
    PcsTensor *r = pcs_tensor_empty_as(t, o.format < 0 ? PCS_FORMAT_PRESERVE : o.format, dtype, device,
                                       o.pinned);
    if (!r || kind == 0)
        return (PyObject *)r;
    pcs_scalar s = {.kind = PCS_SK_INT, .i = kind == 2}; /* zeros 0, ones 1 */
    if ((kind == 3 && pcs_number_arg(fill, &s) < 0) || fill_scalar(r, s) < 0)
        Py_CLEAR(r);
    return (PyObject *)r;
}

static PyObject *f_empty_like(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *kw)
{
    PCS_UNUSED(m);
    return like(a, n, kw, "empty_like", 0);
}

static PyObject *f_zeros_like(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *kw)
{
    PCS_UNUSED(m);
    return like(a, n, kw, "zeros_like", 1);
}

static PyObject *f_ones_like(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *kw)
{
    PCS_UNUSED(m);
    return like(a, n, kw, "ones_like", 2);
}

static PyObject *f_full_like(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *kw)
{
    PCS_UNUSED(m);
    return like(a, n, kw, "full_like", 3);
}

/* ------------------------------------------------------------------------ */
/* new_* and the legacy new()                                                */

/* Parses (sizes..., [fill], dtype=, device=, pin_memory=) for
 * new_empty/zeros/ones/full.
 * `nfixed` trailing positional args after the sizes (1 for new_full). */
static PyObject *new_like(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw,
                          const char *fname, int kind /* 0 empty 1 zeros 2 ones 3 full */)
{
    static const char *const kwl[] = {"size", "fill_value", "dtype", "device", "requires_grad",
                                      "pin_memory", "layout", NULL};
    if (pcs_check_kwargs(kw, fname, kwl) < 0)
        return NULL;
    PcsTensor *t = T(self);
    int dtype = pcs_dtype_arg(pcs_arg(args, nargs, kw, -1, "dtype"), t->dtype);
    int device = dtype == -2 ? -2 : pcs_device_arg(pcs_arg(args, nargs, kw, -1, "device"), t->device);
    if (dtype == -2 || device == -2)
        return NULL;
    PyObject *pin = pcs_arg(args, nargs, kw, -1, "pin_memory");
    int pinned = pin ? PyObject_IsTrue(pin) : 0;
    if (pinned < 0 || pcs_check_pinned(pinned, device) < 0)
        return NULL;
    PyObject *fill = NULL;
    Py_ssize_t nsize = nargs;
    if (kind == 3) {
        fill = pcs_arg(args, nargs, kw, -1, "fill_value");
        if (!fill && nargs >= 2) {
            fill = args[nargs - 1];
            nsize = nargs - 1;
        }
        if (!fill)
            return PyErr_Format(PyExc_TypeError, "new_full() missing required argument 'fill_value'");
    }
    PyObject *size = pcs_arg(args, nargs, kw, -1, "size");
    int64_t sizes[PCS_MAX_DIMS];
    int ndim = size ? pcs_parse_sizes(&size, 1, sizes) : pcs_parse_sizes(args, nsize, sizes);
    if (ndim < 0)
        return NULL;
    switch (kind) {
    case 0:
        return (PyObject *)pcs_tensor_empty(ndim, sizes, dtype, device, pinned);
    case 1:
        return (PyObject *)pcs_tensor_zeros(ndim, sizes, dtype, device, pinned);
    case 2:
        return (PyObject *)pcs_tensor_ones(ndim, sizes, dtype, device, pinned);
    default:
        return (PyObject *)pcs_tensor_full(ndim, sizes, fill, dtype, device, pinned);
    }
}

static PyObject *m_new_empty(PyObject *self, PyObject *const *a, Py_ssize_t n, PyObject *kw)
{
    return new_like(self, a, n, kw, "new_empty", 0);
}

static PyObject *m_new_zeros(PyObject *self, PyObject *const *a, Py_ssize_t n, PyObject *kw)
{
    return new_like(self, a, n, kw, "new_zeros", 1);
}

static PyObject *m_new_ones(PyObject *self, PyObject *const *a, Py_ssize_t n, PyObject *kw)
{
    return new_like(self, a, n, kw, "new_ones", 2);
}

static PyObject *m_new_full(PyObject *self, PyObject *const *a, Py_ssize_t n, PyObject *kw)
{
    return new_like(self, a, n, kw, "new_full", 3);
}

static PyObject *m_new_tensor(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const kwl[] = {"data", "dtype", "device", "requires_grad", NULL};
    if (pcs_check_kwargs(kw, "new_tensor", kwl) < 0)
        return NULL;
    PcsTensor *t = T(self);
    PyObject *data = pcs_arg(args, nargs, kw, 0, "data");
    if (!data)
        return PyErr_Format(PyExc_TypeError, "new_tensor() missing required argument 'data'");
    int dtype = pcs_dtype_arg(pcs_arg(args, nargs, kw, 1, "dtype"), t->dtype);
    int device = dtype == -2 ? -2 : pcs_device_arg(pcs_arg(args, nargs, kw, 2, "device"), t->device);
    if (dtype == -2 || device == -2)
        return NULL;
    return (PyObject *)pcs_tensor_from_data(data, dtype, device, false);
}

/* Legacy x.new(*sizes | size | data): same dtype and device as x. A
 * pycuda_sem.Size means sizes; any other sequence means data. */
static PyObject *m_new(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const kwl[] = {"device", NULL};
    if (pcs_check_kwargs(kw, "new", kwl) < 0)
        return NULL;
    PcsTensor *t = T(self);
    int device = pcs_device_arg(pcs_arg(args, nargs, kw, -1, "device"), t->device);
    if (device == -2)
        return NULL;
    if (nargs == 1 && !PyIndex_Check(args[0]) && !pcs_size_check(args[0]))
        return (PyObject *)pcs_tensor_from_data(args[0], t->dtype, device, false);
    int64_t sizes[PCS_MAX_DIMS] = {0};
    int ndim = nargs == 0 ? 1 : pcs_parse_sizes(args, nargs, sizes);
    if (ndim < 0)
        return NULL;
    return (PyObject *)pcs_tensor_empty(ndim, sizes, t->dtype, device, false);
}

PyMethodDef pcs_tensor_factory_methods[] = {
    {"new_empty", FASTKW(m_new_empty), "new_empty(size, dtype=None, device=None, pin_memory=False)\n\nA new uninitialised tensor of `size` "
     "with self's dtype and device unless they are given."},
    {"new_zeros", FASTKW(m_new_zeros), "new_zeros(size, dtype=None, device=None, pin_memory=False)\n\nA new tensor of zeros of `size` with "
     "self's dtype and device unless they are given."},
    {"new_ones", FASTKW(m_new_ones), "new_ones(size, dtype=None, device=None, pin_memory=False)\n\nA new tensor of ones of `size` with "
     "self's dtype and device unless they are given."},
    {"new_full", FASTKW(m_new_full), "new_full(size, fill_value, dtype=None, device=None, pin_memory=False)\n\nA new tensor of `size` "
     "filled with `fill_value`, with self's dtype and device unless they are given."},
    {"new_tensor", FASTKW(m_new_tensor), "new_tensor(data, dtype=None, device=None)\n\nA new tensor holding a copy of "
     "`data` (numbers, nested lists, arrays, tensors), with self's dtype and device "
     "unless they are given."},
    {"new", FASTKW(m_new), "Legacy: new(*sizes) or new(data), same dtype and device."},
    {NULL, NULL, 0, NULL},
};

static PyMethodDef factory_methods[] = {
    {"empty", FASTKW(f_empty), "empty(*size, dtype=None, device=None, pin_memory=False)\n\nAn uninitialised tensor"
     " (CPU by default; device='cuda' is the current device); pin_memory=True gives page-locked host memory."},
    {"zeros", FASTKW(f_zeros), "zeros(*size, dtype=None, device=None, pin_memory=False)\n\nA tensor of zeros (CPU by default; device='cuda' is the current device);"
     " pin_memory=True gives page-locked host memory."},
    {"ones", FASTKW(f_ones), "ones(*size, dtype=None, device=None, pin_memory=False)\n\nA tensor of ones (CPU by default; device='cuda' is the current device);"
     " pin_memory=True gives page-locked host memory."},
    {"full", FASTKW(f_full), "full(size, fill_value, dtype=None, device=None, pin_memory=False)\n\nA tensor filled with "
     "fill_value; its dtype is inferred from fill_value when not given; pin_memory=True gives page-locked "
     "host memory."},
    {"empty_strided", FASTKW(f_empty_strided), "empty_strided(size, stride, dtype=None, device=None, pin_memory=False)\n\nAn uninitialised tensor "
     "with the given strides, backed by just enough memory."},
    {"tensor", FASTKW(f_tensor), "tensor(data, dtype=None, device=None, pin_memory=False): "
                                 "a new tensor holding a copy of data."},
    {"as_tensor", FASTKW(f_as_tensor), "as_tensor(data, *, dtype=None, device=None): shares memory "
                                       "when no conversion is needed; takes no other keyword."},
    {"from_numpy", f_from_numpy, METH_O, "A CPU tensor sharing memory with a NumPy array."},
    {"empty_like", FASTKW(f_empty_like), "empty_like(t, dtype=None, device=None, pin_memory=False)\n\nAn uninitialised tensor of t's shape, "
     "with t's dtype and device unless given; pin_memory=True (CPU results only) gives "
     "page-locked host memory."},
    {"zeros_like", FASTKW(f_zeros_like), "zeros_like(t, dtype=None, device=None, pin_memory=False)\n\nZeros of t's shape, with t's dtype and "
     "device unless given; pin_memory=True (CPU results only) gives "
     "page-locked host memory."},
    {"ones_like", FASTKW(f_ones_like), "ones_like(t, dtype=None, device=None, pin_memory=False)\n\nOnes of t's shape, with t's dtype and "
     "device unless given; pin_memory=True (CPU results only) gives "
     "page-locked host memory."},
    {"full_like", FASTKW(f_full_like), "full_like(t, fill_value, dtype=None, device=None, pin_memory=False)\n\nfill_value in t's shape, "
     "with t's dtype and device unless given; pin_memory=True (CPU results only) gives "
     "page-locked host memory."},
    {NULL, NULL, 0, NULL},
};

int pcs_factories_init(PyObject *module) { return PyModule_AddFunctions(module, factory_methods); }
