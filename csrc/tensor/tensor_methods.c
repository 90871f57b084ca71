/* tensor_methods.c: the Tensor methods that move or make data: to, cuda,
 * cpu, copy_, fill_, zero_, the dtype shortcuts (float(), long() ...),
 * pin_memory, record_stream, new_* and the legacy new() and type().
 *
 * Each method parses its arguments and calls copy.c or factories.c; the
 * rules about streams and waiting live in copy.c only. */
#include "tensor/copy.h"
#include "tensor/tensor.h"
#include "core/memory_format.h"

#include <string.h>

#include "runtime/device.h"
#include "core/scalar.h"
#include "runtime/stream.h"

#define T(o) ((PcsTensor *)(o))
#define FASTKW(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL | METH_KEYWORDS

static int bool_arg(PyObject *o, bool *out)
{
    if (!o) {
        return 0;
    }
    int v = PyObject_IsTrue(o);
    if (v < 0)
        return -1;
    *out = v;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* to / cuda / cpu / type conversions                                        */

static PyObject *m_to(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const kwl[] = {"device", "dtype", "non_blocking", "copy",
                                      "memory_format", NULL};
    if (pcs_check_kwargs(kw, "to", kwl) < 0)
        return NULL;
    PcsTensor *t = T(self);
    int dtype = t->dtype, device = t->device;
    PyObject *nb_obj = NULL, *copy_obj = NULL;
    Py_ssize_t pos = 0;
    /* to(other, ...), to(dtype, ...), to(device, dtype, ...) */
    if (nargs > 0 && PcsTensor_Check(args[0])) {
        dtype = T(args[0])->dtype;
        device = T(args[0])->device;
        pos = 1;
    } else if (nargs > 0 && PcsDType_Check(args[0])) {
        dtype = ((PcsDType *)args[0])->id;
        pos = 1;
    } else {
        PyObject *dev = pcs_arg(args, nargs, kw, 0, "device");
        if (dev && dev != Py_None && (device = pcs_device_arg(dev, -1)) == -2)
            return NULL;
        if (!dev || dev == Py_None)
            device = t->device;
        PyObject *dt = pcs_arg(args, nargs, kw, 1, "dtype");
        if (dt && dt != Py_None && (dtype = pcs_dtype_arg(dt, -2)) == -2)
            return NULL;
        pos = nargs >= 2 ? 2 : nargs;
    }
    if (pos == 1 && kw && (pcs_arg(args, nargs, kw, -1, "dtype"))) {
        PyObject *dt = pcs_arg(args, nargs, kw, -1, "dtype");
        if ((dtype = pcs_dtype_arg(dt, t->dtype)) == -2)
            return NULL;
    }
    nb_obj = pcs_arg(args, nargs, kw, pos, "non_blocking");
    copy_obj = pcs_arg(args, nargs, kw, pos + 1, "copy");
    if (nargs > pos + 2) {
        PyErr_SetString(PyExc_TypeError, "to() received too many positional arguments");
        return NULL;
    }
    bool nb = false, copy = false;
    if (bool_arg(nb_obj, &nb) < 0 || bool_arg(copy_obj, &copy) < 0)
        return NULL;
    int fmt = pcs_memory_format_arg(kw ? pcs_arg(args, nargs, kw, -1, "memory_format") : NULL,
                                    PCS_FORMAT_PRESERVE, "to");
    if (fmt < 0)
        return NULL;
    return (PyObject *)pcs_tensor_to_format(t, dtype, device, nb, copy, fmt);
}

static PyObject *m_cuda(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const kwl[] = {"device", "non_blocking", "memory_format", NULL};
    if (pcs_check_kwargs(kw, "cuda", kwl) < 0)
        return NULL;
    PyObject *dev = pcs_arg(args, nargs, kw, 0, "device");
    int device;
    if (!dev || dev == Py_None) {
        if (pcs_require_cuda() < 0)
            return NULL;
        device = pcs_current_device();
    } else {
        device = pcs_cuda_device_arg(dev);
        if (device < 0)
            return NULL;
    }
    bool nb = false;
    if (bool_arg(pcs_arg(args, nargs, kw, 1, "non_blocking"), &nb) < 0)
        return NULL;
    int fmt = pcs_memory_format_arg(pcs_arg(args, nargs, kw, 2, "memory_format"), PCS_FORMAT_PRESERVE,
                                    "cuda");
    if (fmt < 0)
        return NULL;
    return (PyObject *)pcs_tensor_to_format(T(self), T(self)->dtype, device, nb, false, fmt);
}

static PyObject *m_cpu(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    int fmt = pcs_memory_format_only_arg(args, nargs, kw, "cpu", 0, PCS_FORMAT_PRESERVE);
    if (fmt < 0)
        return NULL;
    return (PyObject *)pcs_tensor_to_format(T(self), T(self)->dtype, -1, false, false, fmt);
}

static PyObject *m_pin_memory(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kw)
{
    PCS_UNUSED(args);
    PCS_UNUSED(nargs);
    PCS_UNUSED(kw); /* device: pinned memory serves every device */
    PcsTensor *t = T(self);
    if (t->device >= 0) {
        PyErr_Format(PyExc_RuntimeError, "cannot pin 'cuda:%d' memory: only dense CPU tensors can be pinned",
                     t->device);
        return NULL;
    }
    if (pcs_require_cuda() < 0)
        return NULL;
    return (PyObject *)pcs_tensor_to(t, t->dtype, -1, false, false, true);
}

/* float(), double(), ...: one function per dtype, generated from a table. */
#define DTYPE_SHORTCUTS(X)                                                     \
    X(float, PCS_FLOAT32)                                                      \
    X(double, PCS_FLOAT64)                                                     \
    X(half, PCS_FLOAT16)                                                       \
    X(bfloat16, PCS_BFLOAT16)                                                  \
    X(int, PCS_INT32)                                                          \
    X(long, PCS_INT64)                                                         \
    X(short, PCS_INT16)                                                        \
    X(char, PCS_INT8)                                                          \
    X(byte, PCS_UINT8)                                                         \
    X(bool, PCS_BOOL)                                                          \
    X(cfloat, PCS_COMPLEX64)                                                   \
    X(cdouble, PCS_COMPLEX128)

#define SHORTCUT_FN(name, id)                                                  \
    static PyObject *m_as_##name(PyObject *self, PyObject *const *args,        \
                                 Py_ssize_t nargs, PyObject *kw)               \
    {                                                                          \
        int fmt = pcs_memory_format_only_arg(args, nargs, kw, #name, 0,        \
                                             PCS_FORMAT_PRESERVE);             \
        if (fmt < 0)                                                           \
            return NULL;                                                       \
        return (PyObject *)pcs_tensor_to_format(T(self), id, T(self)->device,  \
                                                false, false, fmt);            \
    }
DTYPE_SHORTCUTS(SHORTCUT_FN)
#undef SHORTCUT_FN

/* The legacy type name: 'pycuda_sem.FloatTensor', 'pycuda_sem.cuda.LongTensor'. */
static PyObject *legacy_type_name(int dtype, bool cuda)
{
    return PyUnicode_FromFormat("pycuda_sem.%s%sTensor", cuda ? "cuda." : "",
                                pcs_dtypes[dtype].legacy);
}

/* Parses 'torch.cuda.FloatTensor' / 'pycuda_sem.FloatTensor' / 'FloatTensor'. */
static int parse_legacy_name(PyObject *s, int *dtype, bool *cuda)
{
    const char *name = PyUnicode_AsUTF8(s);
    if (!name)
        return -1;
    const char *p = name;
    if (strncmp(p, "torch.", 6) == 0)
        p += 6;
    else if (strncmp(p, "pycuda_sem.", 11) == 0)
        p += 11;
    *cuda = strncmp(p, "cuda.", 5) == 0;
    if (*cuda)
        p += 5;
    for (int i = 0; i < PCS_NUM_DTYPES; i++) {
        size_t n = strlen(pcs_dtypes[i].legacy);
        if (strncmp(p, pcs_dtypes[i].legacy, n) == 0 && strcmp(p + n, "Tensor") == 0) {
            *dtype = i;
            return 0;
        }
    }
    PyErr_Format(PyExc_ValueError, "invalid type: '%s'", name);
    return -1;
}

static PyObject *m_type(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    PcsTensor *t = T(self);
    PyObject *arg = pcs_arg(args, nargs, kw, 0, "dtype");
    bool nb = false;
    if (bool_arg(pcs_arg(args, nargs, kw, 1, "non_blocking"), &nb) < 0)
        return NULL;
    if (!arg || arg == Py_None)
        return legacy_type_name(t->dtype, t->device >= 0);
    int dtype;
    bool cuda = t->device >= 0;
    if (PcsDType_Check(arg)) {
        dtype = ((PcsDType *)arg)->id;
    } else if (PyUnicode_Check(arg)) {
        if (parse_legacy_name(arg, &dtype, &cuda) < 0)
            return NULL;
    } else {
        /* A legacy type object (pycuda_sem.FloatTensor, cuda.FloatTensor):
         * it carries `dtype` and `is_cuda`. */
        PyObject *d = PyObject_GetAttrString(arg, "dtype");
        PyObject *c = d ? PyObject_GetAttrString(arg, "is_cuda") : NULL;
        if (!d || !c || !PcsDType_Check(d)) {
            Py_XDECREF(d);
            Py_XDECREF(c);
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "type() expects a dtype, a tensor type or its name, not %.100s",
                         Py_TYPE(arg)->tp_name);
            return NULL;
        }
        dtype = ((PcsDType *)d)->id;
        int is_cuda = PyObject_IsTrue(c);
        Py_DECREF(d);
        Py_DECREF(c);
        if (is_cuda < 0)
            return NULL;
        cuda = is_cuda;
    }
    int device = t->device;
    if (cuda && device < 0) {
        if (pcs_require_cuda() < 0)
            return NULL;
        device = pcs_current_device();
    } else if (!cuda) {
        device = -1;
    }
    return (PyObject *)pcs_tensor_to_format(t, dtype, device, nb, false, PCS_FORMAT_PRESERVE);
}

static PyObject *m_type_as(PyObject *self, PyObject *other)
{
    if (!PcsTensor_Check(other))
        return PyErr_Format(PyExc_TypeError, "type_as() expects a tensor");
    return (PyObject *)pcs_tensor_to_format(T(self), T(other)->dtype, T(other)->device, false, false,
                                            PCS_FORMAT_PRESERVE);
}

/* ------------------------------------------------------------------------ */
/* In-place writes                                                           */

int pcs_tensor_fill(PcsTensor *t, PyObject *value)
{
    if (PcsTensor_Check(value)) {
        PcsTensor *v = T(value);
        if (v->ndim != 0) {
            PyErr_Format(PyExc_RuntimeError,
                         "fill_ only supports 0-dimension value tensor but got tensor with %d "
                         "dimensions.", v->ndim);
            return -1;
        }
        return pcs_copy(t, v, false);
    }
    pcs_scalar s;
    if (pcs_scalar_from_py(value, &s) < 0 || pcs_scalar_check_fits(t->dtype, s, PCS_CHECK_FILL) < 0)
        return -1;
    unsigned char bytes[16];
    pcs_scalar_store(t->dtype, bytes, s);
    return pcs_fill_bytes(t, bytes);
}

static PyObject *m_fill_(PyObject *self, PyObject *value)
{
    if (pcs_tensor_fill(T(self), value) < 0)
        return NULL;
    return Py_NewRef(self);
}

static PyObject *m_zero_(PyObject *self, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    unsigned char zero[16] = {0};
    if (pcs_fill_bytes(T(self), zero) < 0)
        return NULL;
    return Py_NewRef(self);
}

static PyObject *m_copy_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const kwl[] = {"src", "non_blocking", NULL};
    if (pcs_check_kwargs(kw, "copy_", kwl) < 0)
        return NULL;
    PyObject *src = pcs_arg(args, nargs, kw, 0, "src");
    bool nb = false;
    if (!src || bool_arg(pcs_arg(args, nargs, kw, 1, "non_blocking"), &nb) < 0) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "copy_() missing required argument 'src'");
        return NULL;
    }
    if (!PcsTensor_Check(src))
        return PyErr_Format(PyExc_TypeError, "copy_(): argument 'src' must be Tensor, not %.100s",
                            Py_TYPE(src)->tp_name);
    if (pcs_copy(T(self), T(src), nb) < 0)
        return NULL;
    return Py_NewRef(self);
}

static PyObject *m_record_stream(PyObject *self, PyObject *stream)
{
    if (!PcsStream_Check(stream))
        return PyErr_Format(PyExc_TypeError, "record_stream() expects a pycuda_sem.cuda.Stream");
    PcsTensor *t = T(self);
    if (t->device < 0)
        return PyErr_Format(PyExc_RuntimeError, "record_stream is only meaningful for CUDA tensors");
    if (pcs_storage_record_stream(t->storage, ((PcsStream *)stream)->stream) < 0)
        return NULL;
    Py_RETURN_NONE;
}

#define SHORTCUT_DEF(name, id)                                                               \
    {#name, FASTKW(m_as_##name),                                                             \
     #name "()\n\nThe same as self.to(pycuda_sem." #name "): self when "    \
           "the dtype already matches, otherwise a converted copy on the same device."},

PyMethodDef pcs_tensor_copy_methods[] = {
    {"to", FASTKW(m_to), "to(device=None, dtype=None, non_blocking=False, copy=False), "
                         "to(dtype, ...), to(other, ...)"},
    {"cuda", FASTKW(m_cuda), "cuda(device=None, non_blocking=False): a copy on a GPU."},
    {"cpu", FASTKW(m_cpu), "A copy in host memory (self if already there)."},
    {"pin_memory", FASTKW(m_pin_memory), "A copy in page-locked host memory."},
    {"type", FASTKW(m_type), "type(dtype=None, non_blocking=False): the legacy type name, "
                             "or a conversion to a dtype / legacy type."},
    {"type_as", m_type_as, METH_O, "self.to(other.dtype, other.device)"},
    {"fill_", m_fill_, METH_O, "Writes value everywhere; returns self."},
    {"zero_", m_zero_, METH_NOARGS, "Writes zeros everywhere; returns self."},
    {"copy_", FASTKW(m_copy_), "copy_(src, non_blocking=False): src broadcast, cast and "
                               "copied into self, across devices if needed."},
    {"record_stream", m_record_stream, METH_O,
     "Marks the memory as used by a stream, so it is not reused before that work ends."},
    DTYPE_SHORTCUTS(SHORTCUT_DEF)
    {NULL, NULL, 0, NULL},
};
