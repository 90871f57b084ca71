/* device.c: devices. The Device object (torch.device), device-argument
 * parsing, the thread-local current device, the device guard, the `cuda.device`
 * context manager and the device queries of torch.cuda.
 *
 * The user-visible current device is a thread-local integer; the CUDA
 * runtime's own current device is switched only when work is actually issued
 * for a device (pcs_cuda_set_device_raw), so `with cuda.device(1):` costs a
 * thread-local write and creates no context until something runs there. */
#include "runtime/device.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Lazy initialisation                                                       */

static int g_device_count = -1; /* -1: not asked yet */
static _Thread_local int tl_device = 0;
/* CUDA cannot be used in a child forked after the parent made a context.
 * g_cuda_used is set by the first device switch (every path that issues
 * work goes through one); the fork handler turns it into g_bad_fork. */
static bool g_cuda_used = false;
static bool g_bad_fork = false;

static void after_fork_child(void)
{
    if (g_cuda_used)
        g_bad_fork = true;
}

static void pcs_device_register_fork_handler(void) { pthread_atfork(NULL, NULL, after_fork_child); }

int pcs_device_count(void)
{
    if (g_device_count < 0) {
        int n = 0;
        cudaError_t err = cudaGetDeviceCount(&n);
        if (err != cudaSuccess) {
            n = 0; /* no driver or no device: a CPU-only process */
            (void)cudaGetLastError();
        }
        g_device_count = n > PCS_MAX_DEVICES ? PCS_MAX_DEVICES : n;
    }
    return g_device_count;
}

int pcs_require_cuda(void)
{
    if (g_bad_fork) {
        PyErr_SetString(PyExc_RuntimeError,
                        "Cannot re-initialize CUDA in forked subprocess. To use CUDA with "
                        "multiprocessing, you must use the 'spawn' start method (this "
                        "process was forked after its parent used CUDA)");
        return -1;
    }
    if (pcs_device_count() > 0)
        return 0;
    PyErr_SetString(PyExc_RuntimeError,
                    "no CUDA GPU is available: this operation needs CUDA, but the "
                    "driver reports no device (check nvidia-smi and CUDA_VISIBLE_DEVICES)");
    return -1;
}

int pcs_check_device(int index)
{
    if (pcs_require_cuda() < 0)
        return -1;
    if (index < 0 || index >= g_device_count) {
        PyErr_Format(PyExc_RuntimeError,
                     "invalid device ordinal: cuda:%d requested, but %d CUDA device%s visible",
                     index, g_device_count, g_device_count == 1 ? " is" : "s are");
        return -1;
    }
    return 0;
}

int pcs_current_device(void) { return tl_device; }

int pcs_set_device(int index)
{
    if (pcs_check_device(index) < 0)
        return -1;
    tl_device = index;
    return 0;
}

int pcs_cuda_set_device_raw(int index)
{
    int cur = -1;
    if (g_bad_fork)
        return pcs_require_cuda();
    g_cuda_used = true;
    /* Ask the runtime rather than caching: other libraries in the process
     * (CuPy, PyTorch) may switch the thread's device behind our back. */
    if (cudaGetDevice(&cur) != cudaSuccess || cur != index)
        PCS_CUDA_CHECK(cudaSetDevice(index));
    return 0;
}

int pcs_device_guard_enter(PcsDeviceGuard *g, int index)
{
    g->switched = 0;
    g->prev = -1;
    if (g_bad_fork)
        return pcs_require_cuda();
    g_cuda_used = true;
    if (cudaGetDevice(&g->prev) != cudaSuccess)
        g->prev = -1;
    if (g->prev != index) {
        PCS_CUDA_CHECK(cudaSetDevice(index));
        g->switched = g->prev >= 0;
    }
    return 0;
}

void pcs_device_guard_exit(PcsDeviceGuard *g)
{
    if (g->switched)
        (void)cudaSetDevice(g->prev);
    g->switched = 0;
}

/* ------------------------------------------------------------------------ */
/* The Device object                                                         */

static PyObject *g_dev_cache[2][PCS_MAX_DEVICES + 1]; /* [type][index + 1] */

PyObject *pcs_device_new(int type, int index)
{
    if (index >= -1 && index < PCS_MAX_DEVICES) {
        PyObject *d = g_dev_cache[type][index + 1];
        if (d) {
            Py_INCREF(d);
            return d;
        }
    }
    PcsDevice *d = PyObject_New(PcsDevice, &PcsDevice_Type);
    if (!d)
        return NULL;
    d->type = type;
    d->index = index;
    if (index >= -1 && index < PCS_MAX_DEVICES) {
        Py_INCREF(d);
        g_dev_cache[type][index + 1] = (PyObject *)d;
    }
    return (PyObject *)d;
}

static int parse_index(const char *s, int *index)
{
    /* torch accepts only plain decimal digits after the colon */
    if (!*s)
        return -1;
    long v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        v = v * 10 + (*p - '0');
        if (v > 1000000)
            return -1;
    }
    *index = (int)v;
    return 0;
}

static int parse_device_string(PyObject *str, int *type, int *index)
{
    const char *s = PyUnicode_AsUTF8(str);
    if (!s)
        return -1;
    const char *colon = strchr(s, ':');
    size_t tlen = colon ? (size_t)(colon - s) : strlen(s);
    if (tlen == 4 && strncmp(s, "cuda", 4) == 0)
        *type = PCS_CUDA;
    else if (tlen == 3 && strncmp(s, "cpu", 3) == 0)
        *type = PCS_CPU;
    else {
        PyErr_Format(PyExc_RuntimeError,
                     "Expected one of cpu, cuda device type at start of device string: %s", s);
        return -1;
    }
    *index = -1;
    if (colon) {
        if (colon[1] == '-') {
            PyErr_Format(PyExc_RuntimeError, "Device index must not be negative: %s", s);
            return -1;
        }
        if (parse_index(colon + 1, index) < 0) {
            PyErr_Format(PyExc_RuntimeError, "Invalid device string: '%s'", s);
            return -1;
        }
    }
    return 0;
}

int pcs_device_parse(PyObject *obj, int *type, int *index)
{
    if (PcsDevice_Check(obj)) {
        *type = ((PcsDevice *)obj)->type;
        *index = ((PcsDevice *)obj)->index;
        return 0;
    }
    if (PyUnicode_Check(obj))
        return parse_device_string(obj, type, index);
    if (PyLong_Check(obj) && !PyBool_Check(obj)) {
        long v = PyLong_AsLong(obj);
        if (v == -1 && PyErr_Occurred())
            return -1;
        if (v < 0) {
            PyErr_Format(PyExc_RuntimeError, "Device index must not be negative, got %ld", v);
            return -1;
        }
        if (v >= PCS_MAX_DEVICES) {
            PyErr_Format(PyExc_RuntimeError, "invalid device ordinal %ld", v);
            return -1;
        }
        *type = PCS_CUDA;
        *index = (int)v;
        return 0;
    }
    PyErr_Format(PyExc_TypeError,
                 "expected a device (pycuda_sem.device, a string such as 'cuda:0', or an "
                 "int), got %.100s",
                 Py_TYPE(obj)->tp_name);
    return -1;
}

int pcs_cuda_device_arg(PyObject *obj)
{
    int type = PCS_CUDA, index = -1;
    if (obj && obj != Py_None && pcs_device_parse(obj, &type, &index) < 0)
        return -1;
    if (type != PCS_CUDA) {
        PyErr_SetString(PyExc_ValueError, "Expected a cuda device, but got: cpu");
        return -1;
    }
    if (index < 0) {
        if (pcs_require_cuda() < 0)
            return -1;
        index = tl_device;
    }
    if (pcs_check_device(index) < 0)
        return -1;
    return index;
}

static PyObject *Device_new(PyTypeObject *cls, PyObject *args, PyObject *kwds)
{
    PCS_UNUSED(cls);
    static char *kwlist[] = {"type", "index", NULL};
    PyObject *obj, *idx = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|O:device", kwlist, &obj, &idx))
        return NULL;
    int type, index;
    if (PcsDevice_Check(obj) && idx == Py_None) {
        Py_INCREF(obj);
        return obj;
    }
    if (pcs_device_parse(obj, &type, &index) < 0)
        return NULL;
    if (idx != Py_None) {
        if (!PyUnicode_Check(obj)) {
            PyErr_SetString(PyExc_TypeError, "device(type, index): type must be a string");
            return NULL;
        }
        if (index >= 0) {
            PyErr_SetString(PyExc_RuntimeError,
                            "type (string) must not include an index because index was "
                            "passed explicitly");
            return NULL;
        }
        long v = PyLong_AsLong(idx);
        if (v == -1 && PyErr_Occurred())
            return NULL;
        if (v < 0) {
            PyErr_Format(PyExc_RuntimeError, "Device index must not be negative, got %ld", v);
            return NULL;
        }
        index = (int)v;
    }
    if (type == PCS_CPU && index > 0) {
        PyErr_Format(PyExc_RuntimeError, "CPU device index must be -1 or zero, got %d", index);
        return NULL;
    }
    return pcs_device_new(type, index);
}

static const char *type_name(int type) { return type == PCS_CUDA ? "cuda" : "cpu"; }

static PyObject *Device_repr(PcsDevice *d)
{
    if (d->index < 0)
        return PyUnicode_FromFormat("device(type='%s')", type_name(d->type));
    return PyUnicode_FromFormat("device(type='%s', index=%d)", type_name(d->type), d->index);
}

static PyObject *Device_str(PcsDevice *d)
{
    if (d->index < 0)
        return PyUnicode_FromString(type_name(d->type));
    return PyUnicode_FromFormat("%s:%d", type_name(d->type), d->index);
}

static Py_hash_t Device_hash(PcsDevice *d)
{
    Py_hash_t h = (Py_hash_t)d->type * 1000003 + d->index + 17;
    return h == -1 ? -2 : h;
}

static PyObject *Device_richcompare(PyObject *a, PyObject *b, int op)
{
    if (!PcsDevice_Check(a) || !PcsDevice_Check(b) || (op != Py_EQ && op != Py_NE))
        Py_RETURN_NOTIMPLEMENTED;
    PcsDevice *x = (PcsDevice *)a, *y = (PcsDevice *)b;
    int eq = x->type == y->type && x->index == y->index;
    return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static PyObject *Device_get_type(PcsDevice *d, void *c)
{
    PCS_UNUSED(c);
    return PyUnicode_FromString(type_name(d->type));
}

static PyObject *Device_get_index(PcsDevice *d, void *c)
{
    PCS_UNUSED(c);
    if (d->index < 0)
        Py_RETURN_NONE;
    return PyLong_FromLong(d->index);
}

static PyObject *Device_reduce(PcsDevice *d, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    if (d->index < 0)
        return Py_BuildValue("O(s)", (PyObject *)&PcsDevice_Type, type_name(d->type));
    return Py_BuildValue("O(si)", (PyObject *)&PcsDevice_Type, type_name(d->type), d->index);
}

static PyMethodDef Device_methods[] = {
    {"__reduce__", (PyCFunction)Device_reduce, METH_NOARGS, NULL},
    {"__enter__", pcs_device_enter, METH_NOARGS, "Make this the default device (default_device.c)."},
    {"__exit__", pcs_device_exit, METH_VARARGS, "Put back the default device it replaced."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Device_getset[] = {
    {"type", (getter)Device_get_type, NULL, "'cpu' or 'cuda'.", NULL},
    {"index", (getter)Device_get_index, NULL, "The device ordinal, or None when unset.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject PcsDevice_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pycuda_sem.device",
    .tp_basicsize = sizeof(PcsDevice),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "device(type, index=None) / device('cuda:1') / device(1)\n\n"
              "Where a tensor lives: 'cpu' or 'cuda' with an optional ordinal. "
              "device('cuda') means the current CUDA device when used to create "
              "tensors.",
    .tp_new = Device_new,
    .tp_repr = (reprfunc)Device_repr,
    .tp_str = (reprfunc)Device_str,
    .tp_hash = (hashfunc)Device_hash,
    .tp_richcompare = Device_richcompare,
    .tp_getset = Device_getset,
    .tp_methods = Device_methods,
};

/* ------------------------------------------------------------------------ */
/* cuda.device(obj): the device context manager                              */

typedef struct {
    PyObject_HEAD
    int idx;  /* -1: no-op */
    int prev;
} DeviceContext;

static PyObject *DeviceContext_vectorcall(PyObject *cls, PyObject *const *args, size_t nargsf,
                                          PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *obj = nargs > 0 ? args[0] : NULL;
    if (kwnames && PyTuple_GET_SIZE(kwnames) == 1 &&
        PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "device") == 0 && nargs == 0)
        obj = args[0];
    else if (nargs != 1 || (kwnames && PyTuple_GET_SIZE(kwnames))) {
        PyErr_SetString(PyExc_TypeError, "device() takes exactly one argument (the device)");
        return NULL;
    }
    int idx = -1;
    /* None and -1 are no-ops, as in torch */
    if (obj != Py_None && !(PyLong_Check(obj) && PyLong_AsLong(obj) == -1)) {
        idx = pcs_cuda_device_arg(obj);
        if (idx < 0)
            return NULL;
    }
    if (PyErr_Occurred())
        return NULL;
    DeviceContext *c = PyObject_New(DeviceContext, (PyTypeObject *)cls);
    if (!c)
        return NULL;
    c->idx = idx;
    c->prev = -1;
    return (PyObject *)c;
}

static PyObject *DeviceContext_new(PyTypeObject *cls, PyObject *args, PyObject *kwds)
{
    PyObject *kwnames = NULL;
    PyObject *stack[1];
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    if (kwds && PyDict_GET_SIZE(kwds)) {
        PyObject *v = PyDict_GetItemString(kwds, "device");
        if (!v || PyDict_GET_SIZE(kwds) != 1 || n) {
            PyErr_SetString(PyExc_TypeError, "device() takes exactly one argument (the device)");
            return NULL;
        }
        stack[0] = v;
        return DeviceContext_vectorcall((PyObject *)cls, stack, 1, NULL);
    }
    return DeviceContext_vectorcall((PyObject *)cls, &PyTuple_GET_ITEM(args, 0), n, kwnames);
}

static PyObject *DeviceContext_enter(DeviceContext *c, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    c->prev = tl_device;
    if (c->idx >= 0)
        tl_device = c->idx;
    Py_INCREF(c);
    return (PyObject *)c;
}

static PyObject *DeviceContext_exit(DeviceContext *c, PyObject *const *args, Py_ssize_t nargs)
{
    PCS_UNUSED(args);
    PCS_UNUSED(nargs);
    if (c->idx >= 0 && c->prev >= 0)
        tl_device = c->prev;
    Py_RETURN_FALSE;
}

static PyObject *DeviceContext_get_idx(DeviceContext *c, void *x)
{
    PCS_UNUSED(x);
    return PyLong_FromLong(c->idx);
}

static PyMethodDef DeviceContext_methods[] = {
    {"__enter__", (PyCFunction)DeviceContext_enter, METH_NOARGS, "Make the device current."},
    {"__exit__", (PyCFunction)(void (*)(void))DeviceContext_exit, METH_FASTCALL,
     "Restore the previous current device."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef DeviceContext_getset[] = {
    {"idx", (getter)DeviceContext_get_idx, NULL, "The ordinal entered (-1: no-op).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject DeviceContext_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pycuda_sem.cuda.device",
    .tp_basicsize = sizeof(DeviceContext),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "device(device)\n\nContext manager that makes `device` (an int, a "
              "pycuda_sem.device or a string such as 'cuda:1') the calling thread's "
              "current CUDA device and restores the previous one on exit. None or -1 "
              "make it a no-op. Nests, and is per thread.",
    .tp_new = DeviceContext_new,
    .tp_vectorcall = DeviceContext_vectorcall,
    .tp_methods = DeviceContext_methods,
    .tp_getset = DeviceContext_getset,
};

/* ------------------------------------------------------------------------ */
/* torch.cuda device functions                                               */

static struct cudaDeviceProp *g_props[PCS_MAX_DEVICES];

static const struct cudaDeviceProp *device_props(int dev)
{
    if (!g_props[dev]) {
        struct cudaDeviceProp *p = calloc(1, sizeof *p);
        if (!p) {
            PyErr_NoMemory();
            return NULL;
        }
        cudaError_t err = cudaGetDeviceProperties(p, dev);
        if (err != cudaSuccess) {
            free(p);
            pcs_cuda_error(err, "cudaGetDeviceProperties", __FILE__, __LINE__);
            return NULL;
        }
        g_props[dev] = p;
    }
    return g_props[dev];
}

static PyObject *py_is_available(PyObject *m, PyObject *noargs)
{
    PCS_UNUSED(m);
    PCS_UNUSED(noargs);
    return PyBool_FromLong(pcs_device_count() > 0);
}

static PyObject *py_device_count(PyObject *m, PyObject *noargs)
{
    PCS_UNUSED(m);
    PCS_UNUSED(noargs);
    return PyLong_FromLong(pcs_device_count());
}

static PyObject *py_current_device(PyObject *m, PyObject *noargs)
{
    PCS_UNUSED(m);
    PCS_UNUSED(noargs);
    if (pcs_require_cuda() < 0)
        return NULL;
    return PyLong_FromLong(tl_device);
}

static PyObject *py_set_device(PyObject *m, PyObject *arg)
{
    PCS_UNUSED(m);
    /* torch ignores negative ordinals here */
    if (PyLong_Check(arg) && PyLong_AsLong(arg) < 0 && !PyErr_Occurred())
        Py_RETURN_NONE;
    int idx = pcs_cuda_device_arg(arg);
    if (idx < 0 || pcs_set_device(idx) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static int opt_device(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, const char *fname)
{
    PyObject *obj = NULL;
    if (nargs > 1 || (kwnames && PyTuple_GET_SIZE(kwnames) + nargs > 1)) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most one argument (device)", fname);
        return -1;
    }
    if (nargs == 1)
        obj = args[0];
    else if (kwnames && PyTuple_GET_SIZE(kwnames) == 1) {
        if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "device") != 0) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", fname,
                         PyTuple_GET_ITEM(kwnames, 0));
            return -1;
        }
        obj = args[0];
    }
    return pcs_cuda_device_arg(obj);
}

/* Parses the optional `device` argument of the torch.cuda query functions. */
int pcs_parse_opt_device(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                         const char *fname)
{
    return opt_device(args, nargs, kwnames, fname);
}

static PyObject *py_get_device_name(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames)
{
    PCS_UNUSED(m);
    int dev = opt_device(args, nargs, kwnames, "get_device_name");
    if (dev < 0)
        return NULL;
    const struct cudaDeviceProp *p = device_props(dev);
    return p ? PyUnicode_FromString(p->name) : NULL;
}

static PyObject *py_get_device_capability(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                          PyObject *kwnames)
{
    PCS_UNUSED(m);
    int dev = opt_device(args, nargs, kwnames, "get_device_capability");
    if (dev < 0)
        return NULL;
    const struct cudaDeviceProp *p = device_props(dev);
    return p ? Py_BuildValue("(ii)", p->major, p->minor) : NULL;
}

static PyStructSequence_Field props_fields[] = {
    {"name", "device name"},
    {"major", "compute capability, major"},
    {"minor", "compute capability, minor"},
    {"total_memory", "global memory in bytes"},
    {"multi_processor_count", "number of streaming multiprocessors"},
    {"is_integrated", "integrated with the host memory"},
    {"is_multi_gpu_board", "part of a multi-GPU board"},
    {"max_threads_per_multi_processor", "resident threads per SM"},
    {"warp_size", "threads per warp"},
    {"L2_cache_size", "L2 cache in bytes"},
    {"uuid", "the device UUID"},
    {"pci_bus_id", "PCI bus id"},
    {NULL, NULL},
};

static PyStructSequence_Desc props_desc = {
    "pycuda_sem.cuda._CudaDeviceProperties",
    "Properties of a CUDA device, as returned by cuda.get_device_properties().",
    props_fields,
    12,
};

static PyTypeObject *PropsType;

static PyObject *py_get_device_properties(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                          PyObject *kwnames)
{
    PCS_UNUSED(m);
    int dev = opt_device(args, nargs, kwnames, "get_device_properties");
    if (dev < 0)
        return NULL;
    const struct cudaDeviceProp *p = device_props(dev);
    if (!p)
        return NULL;
    PyObject *r = PyStructSequence_New(PropsType);
    if (!r)
        return NULL;
    char uuid[48];
    const unsigned char *u = (const unsigned char *)p->uuid.bytes;
    snprintf(uuid, sizeof uuid,
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
             u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
             u[15]);
    PyObject *items[12] = {
        PyUnicode_FromString(p->name),
        PyLong_FromLong(p->major),
        PyLong_FromLong(p->minor),
        PyLong_FromSize_t(p->totalGlobalMem),
        PyLong_FromLong(p->multiProcessorCount),
        PyBool_FromLong(p->integrated),
        PyBool_FromLong(p->isMultiGpuBoard),
        PyLong_FromLong(p->maxThreadsPerMultiProcessor),
        PyLong_FromLong(p->warpSize),
        PyLong_FromLong(p->l2CacheSize),
        PyUnicode_FromString(uuid),
        PyUnicode_FromFormat("%04x:%02x:%02x", p->pciDomainID, p->pciBusID, p->pciDeviceID),
    };
    for (int i = 0; i < 12; i++) {
        if (!items[i]) {
            for (int j = i + 1; j < 12; j++)
                Py_XDECREF(items[j]);
            Py_DECREF(r);
            return NULL;
        }
        PyStructSequence_SET_ITEM(r, i, items[i]);
    }
    return r;
}

static PyObject *py_synchronize(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames)
{
    PCS_UNUSED(m);
    int dev = opt_device(args, nargs, kwnames, "synchronize");
    if (dev < 0)
        return NULL;
    PcsDeviceGuard g;
    if (pcs_device_guard_enter(&g, dev) < 0)
        return NULL;
    cudaError_t err;
    Py_BEGIN_ALLOW_THREADS
    err = cudaDeviceSynchronize();
    Py_END_ALLOW_THREADS
    pcs_device_guard_exit(&g);
    if (err != cudaSuccess)
        return pcs_cuda_error(err, "cudaDeviceSynchronize", __FILE__, __LINE__), NULL;
    if (pcs_deferred_check() < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_mem_get_info(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames)
{
    PCS_UNUSED(m);
    int dev = opt_device(args, nargs, kwnames, "mem_get_info");
    if (dev < 0)
        return NULL;
    PcsDeviceGuard g;
    if (pcs_device_guard_enter(&g, dev) < 0)
        return NULL;
    size_t free_b = 0, total = 0;
    cudaError_t err = cudaMemGetInfo(&free_b, &total);
    pcs_device_guard_exit(&g);
    if (err != cudaSuccess)
        return pcs_cuda_error(err, "cudaMemGetInfo", __FILE__, __LINE__), NULL;
    return Py_BuildValue("(nn)", (Py_ssize_t)free_b, (Py_ssize_t)total);
}

static PyObject *py_can_device_access_peer(PyObject *m, PyObject *args)
{
    PCS_UNUSED(m);
    PyObject *a, *b;
    if (!PyArg_ParseTuple(args, "OO:can_device_access_peer", &a, &b))
        return NULL;
    int da = pcs_cuda_device_arg(a);
    if (da < 0)
        return NULL;
    int db = pcs_cuda_device_arg(b);
    if (db < 0)
        return NULL;
    int can = 0;
    if (da != db)
        PCS_CUDA_CHECK_NULL(cudaDeviceCanAccessPeer(&can, da, db));
    return PyBool_FromLong(can);
}

static PyObject *py_is_initialized(PyObject *m, PyObject *noargs)
{
    PCS_UNUSED(m);
    PCS_UNUSED(noargs);
    return PyBool_FromLong(g_device_count > 0);
}

/* torch.cuda._is_in_bad_fork(): multiprocessing checks it before it sends CUDA work. */
static PyObject *py_is_in_bad_fork(PyObject *m, PyObject *noargs)
{
    PCS_UNUSED(m);
    PCS_UNUSED(noargs);
    return PyBool_FromLong(g_bad_fork);
}

/* Tests only: mark CUDA as used, so that the fork rule can be tested on a
 * machine without a GPU (call it in a throwaway process: it cannot be undone). */
static PyObject *py_mark_cuda_used_for_tests(PyObject *m, PyObject *noargs)
{
    PCS_UNUSED(m);
    PCS_UNUSED(noargs);
    g_cuda_used = true;
    Py_RETURN_NONE;
}

static PyObject *py_init(PyObject *m, PyObject *noargs)
{
    PCS_UNUSED(m);
    PCS_UNUSED(noargs);
    if (pcs_require_cuda() < 0)
        return NULL;
    Py_RETURN_NONE;
}

#define FASTKW(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL | METH_KEYWORDS

static PyMethodDef device_functions[] = {
    {"is_available", py_is_available, METH_NOARGS,
     "is_available()\n\nTrue when at least one CUDA GPU is visible. Never raises."},
    {"device_count", py_device_count, METH_NOARGS,
     "device_count()\n\nNumber of visible CUDA GPUs (honours CUDA_VISIBLE_DEVICES); 0 without one."},
    {"current_device", py_current_device, METH_NOARGS,
     "current_device()\n\nThe calling thread's current CUDA device ordinal."},
    {"set_device", py_set_device, METH_O,
     "set_device(device)\n\nMake `device` the calling thread's current CUDA device."},
    {"get_device_name", FASTKW(py_get_device_name),
     "get_device_name(device=None)\n\nThe device's name, e.g. 'NVIDIA H100 80GB HBM3'."},
    {"get_device_capability", FASTKW(py_get_device_capability),
     "get_device_capability(device=None)\n\nCompute capability as (major, minor)."},
    {"get_device_properties", FASTKW(py_get_device_properties),
     "get_device_properties(device=None)\n\nName, total_memory, major, minor, "
     "multi_processor_count and more."},
    {"synchronize", FASTKW(py_synchronize),
     "synchronize(device=None)\n\nWait until all work queued on every stream of the "
     "device has finished. Releases the GIL while waiting."},
    {"mem_get_info", FASTKW(py_mem_get_info),
     "mem_get_info(device=None)\n\n(free, total) device memory in bytes, as the driver sees it."},
    {"can_device_access_peer", py_can_device_access_peer, METH_VARARGS,
     "can_device_access_peer(device, peer_device)\n\nTrue when `device` can read and "
     "write `peer_device`'s memory directly."},
    {"is_initialized", py_is_initialized, METH_NOARGS,
     "is_initialized()\n\nTrue once CUDA has been looked up and a GPU found."},
    {"init", py_init, METH_NOARGS, "init()\n\nInitialise CUDA now (it is otherwise lazy)."},
    {"_is_in_bad_fork", py_is_in_bad_fork, METH_NOARGS,
     "_is_in_bad_fork()\n\nTrue in a child forked after its parent used CUDA."},
    {"_mark_cuda_used_for_tests", py_mark_cuda_used_for_tests, METH_NOARGS,
     "_mark_cuda_used_for_tests()\n\nTests only: behave as if CUDA had been used here."},
    {NULL, NULL, 0, NULL},
};

int pcs_device_init(PyObject *module)
{
    pcs_device_register_fork_handler();
    if (PyType_Ready(&PcsDevice_Type) < 0 || PyType_Ready(&DeviceContext_Type) < 0)
        return -1;
    if (PyModule_AddObjectRef(module, "device", (PyObject *)&PcsDevice_Type) < 0 ||
        PyModule_AddObjectRef(module, "DeviceContext", (PyObject *)&DeviceContext_Type) < 0)
        return -1;
    PropsType = PyStructSequence_NewType(&props_desc);
    if (!PropsType || PyModule_AddObjectRef(module, "_CudaDeviceProperties", (PyObject *)PropsType) < 0)
        return -1;
    if (pcs_default_device_init(module) < 0)
        return -1;
    return PyModule_AddFunctions(module, device_functions);
}
