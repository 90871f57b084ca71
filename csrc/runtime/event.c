/* event.c: CUDA events. The Event object: a marker recorded on a stream that
 * other streams can wait for, the host can wait for, and that measures time.
 *
 * As in PyTorch the cudaEvent_t is created lazily, on the device of the stream
 * it is first recorded on. Destroyed events go back to a small per-(device,
 * flags) cache instead of the driver: creating an event is the expensive part
 * of `Event(); record()`, and a recycled event is indistinguishable from a new
 * one (cudaStreamWaitEvent captures the state at call time). */
#include "runtime/event.h"

#include <string.h>

#include "runtime/device.h"
#include "runtime/stream.h"

#define EVENT_CACHE 64
#define FLAG_KINDS 8 /* DisableTiming | BlockingSync | Interprocess combinations */

typedef struct {
    cudaEvent_t ev[EVENT_CACHE];
    int n;
} EventCache;

static EventCache *g_cache[PCS_MAX_DEVICES][FLAG_KINDS];

static int flag_kind(unsigned flags)
{
    return ((flags & cudaEventDisableTiming) ? 1 : 0) | ((flags & cudaEventBlockingSync) ? 2 : 0) |
           ((flags & cudaEventInterprocess) ? 4 : 0);
}

static int create_event(PcsEvent *e, int device)
{
    /* Interprocess events are never recycled: their handle may be in use by
     * another process. */
    int k = flag_kind(e->flags);
    EventCache *c = e->interprocess ? NULL : g_cache[device][k];
    if (c && c->n > 0) {
        e->event = c->ev[--c->n];
        e->device = device;
        return 0;
    }
    PcsDeviceGuard g;
    if (pcs_device_guard_enter(&g, device) < 0)
        return -1;
    cudaError_t err = cudaEventCreateWithFlags(&e->event, e->flags);
    pcs_device_guard_exit(&g);
    if (err != cudaSuccess) {
        e->event = NULL;
        return pcs_cuda_error(err, "cudaEventCreateWithFlags", __FILE__, __LINE__);
    }
    e->device = device;
    return 0;
}

static void release_event(PcsEvent *e)
{
    if (!e->event)
        return;
    int k = flag_kind(e->flags);
    if (!e->interprocess) {
        EventCache *c = g_cache[e->device][k];
        if (!c)
            c = g_cache[e->device][k] = PyMem_RawCalloc(1, sizeof(EventCache));
        if (c && c->n < EVENT_CACHE) {
            c->ev[c->n++] = e->event;
            e->event = NULL;
            return;
        }
    }
    /* Safe while still pending: the driver frees it once it completes. */
    (void)cudaEventDestroy(e->event);
    e->event = NULL;
}

int pcs_event_record(PcsEvent *e, cudaStream_t stream, int device)
{
    if (e->event && e->device != device) {
        PyErr_Format(PyExc_RuntimeError,
                     "Event device cuda:%d does not match the recording stream's device cuda:%d",
                     e->device, device);
        return -1;
    }
    if (!e->event && create_event(e, device) < 0)
        return -1;
    PcsDeviceGuard g;
    if (pcs_device_guard_enter(&g, device) < 0)
        return -1;
    cudaError_t err = cudaEventRecord(e->event, stream);
    pcs_device_guard_exit(&g);
    if (err != cudaSuccess)
        return pcs_cuda_error(err, "cudaEventRecord", __FILE__, __LINE__);
    return 0;
}

int pcs_event_wait(PcsEvent *e, cudaStream_t stream, int device)
{
    if (!e->event)
        return 0;
    PcsDeviceGuard g;
    if (pcs_device_guard_enter(&g, device) < 0)
        return -1;
    cudaError_t err = cudaStreamWaitEvent(stream, e->event, 0);
    pcs_device_guard_exit(&g);
    if (err != cudaSuccess)
        return pcs_cuda_error(err, "cudaStreamWaitEvent", __FILE__, __LINE__);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Event object                                                              */

static PyObject *Event_new(PyTypeObject *cls, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"enable_timing", "blocking", "interprocess", NULL};
    int timing = 0, blocking = 0, ipc = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|ppp:Event", kwlist, &timing, &blocking, &ipc))
        return NULL;
    if (timing && ipc) {
        PyErr_SetString(PyExc_ValueError,
                        "an interprocess Event cannot time: CUDA forbids enable_timing=True "
                        "with interprocess=True");
        return NULL;
    }
    PcsEvent *e = (PcsEvent *)cls->tp_alloc(cls, 0);
    if (!e)
        return NULL;
    e->event = NULL;
    e->device = -1;
    e->enable_timing = timing;
    e->blocking = blocking;
    e->interprocess = ipc;
    e->flags = (timing ? cudaEventDefault : cudaEventDisableTiming) |
               (blocking ? cudaEventBlockingSync : 0) | (ipc ? cudaEventInterprocess : 0);
    return (PyObject *)e;
}

static void Event_dealloc(PcsEvent *e)
{
    release_event(e);
    Py_TYPE(e)->tp_free((PyObject *)e);
}

/* Resolves the optional stream argument: None -> current stream of the
 * current device. */
static int stream_arg(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                      cudaStream_t *st, int *dev, const char *fname)
{
    PyObject *s = Py_None;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (nargs + nkw > 1) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most one argument (stream)", fname);
        return -1;
    }
    if (nargs + nkw == 1)
        s = args[0];
    if (s == Py_None) {
        if (pcs_require_cuda() < 0)
            return -1;
        *dev = pcs_current_device();
        *st = pcs_current_stream(*dev);
        return 0;
    }
    if (!PcsStream_Check(s)) {
        PyErr_Format(PyExc_TypeError, "%s() expects a cuda.Stream or None, got %.100s", fname,
                     Py_TYPE(s)->tp_name);
        return -1;
    }
    *st = ((PcsStream *)s)->stream;
    *dev = ((PcsStream *)s)->device;
    return 0;
}

static PyObject *Event_record(PcsEvent *e, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames)
{
    cudaStream_t st;
    int dev;
    if (stream_arg(args, nargs, kwnames, &st, &dev, "record") < 0 ||
        pcs_event_record(e, st, dev) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *Event_wait(PcsEvent *e, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames)
{
    cudaStream_t st;
    int dev;
    if (stream_arg(args, nargs, kwnames, &st, &dev, "wait") < 0 ||
        pcs_event_wait(e, st, dev) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *Event_query(PcsEvent *e, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    if (!e->event)
        Py_RETURN_TRUE;
    cudaError_t err = cudaEventQuery(e->event);
    if (err == cudaSuccess) {
        if (pcs_deferred_check() < 0)
            return NULL;
        Py_RETURN_TRUE;
    }
    if (err == cudaErrorNotReady) {
        (void)cudaGetLastError();
        Py_RETURN_FALSE;
    }
    return pcs_cuda_error(err, "cudaEventQuery", __FILE__, __LINE__), NULL;
}

static PyObject *Event_synchronize(PcsEvent *e, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    if (!e->event)
        Py_RETURN_NONE;
    cudaError_t err;
    Py_BEGIN_ALLOW_THREADS
    err = cudaEventSynchronize(e->event);
    Py_END_ALLOW_THREADS
    if (err != cudaSuccess)
        return pcs_cuda_error(err, "cudaEventSynchronize", __FILE__, __LINE__), NULL;
    if (pcs_deferred_check() < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *Event_elapsed_time(PcsEvent *e, PyObject *other)
{
    if (!PcsEvent_Check(other)) {
        PyErr_Format(PyExc_TypeError, "elapsed_time() expects a cuda.Event, got %.100s",
                     Py_TYPE(other)->tp_name);
        return NULL;
    }
    PcsEvent *o = (PcsEvent *)other;
    if (!e->enable_timing || !o->enable_timing) {
        PyErr_SetString(PyExc_RuntimeError,
                        "elapsed_time() needs both events created with enable_timing=True");
        return NULL;
    }
    if (!e->event || !o->event) {
        PyErr_SetString(PyExc_RuntimeError,
                        "Both events must be recorded before calculating elapsed time");
        return NULL;
    }
    float ms = 0.f;
    cudaError_t err = cudaEventElapsedTime(&ms, e->event, o->event);
    if (err == cudaErrorNotReady) {
        (void)cudaGetLastError();
        PyErr_SetString(PyExc_RuntimeError,
                        "elapsed_time(): an event has not completed yet; call "
                        "cuda.synchronize() or end_event.synchronize() first");
        return NULL;
    }
    if (err != cudaSuccess)
        return pcs_cuda_error(err, "cudaEventElapsedTime", __FILE__, __LINE__), NULL;
    return PyFloat_FromDouble(ms);
}

static PyObject *Event_ipc_handle(PcsEvent *e, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    if (!e->interprocess) {
        PyErr_SetString(PyExc_RuntimeError,
                        "ipc_handle() needs an Event created with interprocess=True");
        return NULL;
    }
    if (!e->event) {
        if (pcs_require_cuda() < 0 || create_event(e, pcs_current_device()) < 0)
            return NULL;
    }
    cudaIpcEventHandle_t h;
    PCS_CUDA_CHECK_NULL(cudaIpcGetEventHandle(&h, e->event));
    return PyBytes_FromStringAndSize((const char *)&h, sizeof h);
}

static PyObject *Event_from_ipc_handle(PyObject *cls, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"device", "handle", NULL};
    PyObject *devobj;
    Py_buffer buf;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "Oy*:from_ipc_handle", kwlist, &devobj, &buf))
        return NULL;
    PyObject *res = NULL;
    int dev = pcs_cuda_device_arg(devobj);
    if (dev < 0)
        goto out;
    if ((size_t)buf.len != sizeof(cudaIpcEventHandle_t)) {
        PyErr_Format(PyExc_ValueError, "an event IPC handle has %zu bytes, got %zd",
                     sizeof(cudaIpcEventHandle_t), buf.len);
        goto out;
    }
    PcsEvent *e = (PcsEvent *)((PyTypeObject *)cls)->tp_alloc((PyTypeObject *)cls, 0);
    if (!e)
        goto out;
    e->interprocess = true;
    e->flags = cudaEventDisableTiming | cudaEventInterprocess;
    e->device = -1;
    cudaIpcEventHandle_t h;
    memcpy(&h, buf.buf, sizeof h);
    PcsDeviceGuard g;
    if (pcs_device_guard_enter(&g, dev) < 0) {
        Py_DECREF(e);
        goto out;
    }
    cudaError_t err = cudaIpcOpenEventHandle(&e->event, h);
    pcs_device_guard_exit(&g);
    if (err != cudaSuccess) {
        e->event = NULL;
        Py_DECREF(e);
        pcs_cuda_error(err, "cudaIpcOpenEventHandle", __FILE__, __LINE__);
        goto out;
    }
    e->device = dev;
    res = (PyObject *)e;
out:
    PyBuffer_Release(&buf);
    return res;
}

static PyObject *Event_repr(PcsEvent *e)
{
    if (!e->event)
        return PyUnicode_FromString("<pycuda_sem.cuda.Event uninitialized>");
    return PyUnicode_FromFormat("<pycuda_sem.cuda.Event %p>", (void *)e->event);
}

static PyObject *Event_get_device(PcsEvent *e, void *c)
{
    PCS_UNUSED(c);
    if (e->device < 0)
        Py_RETURN_NONE;
    return pcs_device_new(1, e->device);
}

static PyObject *Event_get_handle(PcsEvent *e, void *c)
{
    PCS_UNUSED(c);
    return PyLong_FromVoidPtr((void *)e->event);
}

#define FASTKW(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL | METH_KEYWORDS

static PyMethodDef Event_methods[] = {
    {"record", FASTKW(Event_record),
     "record(stream=None)\n\nRecord the event on `stream` (default: the current stream)."},
    {"wait", FASTKW(Event_wait),
     "wait(stream=None)\n\nMake future work on `stream` (default: current) wait for the event."},
    {"query", (PyCFunction)Event_query, METH_NOARGS,
     "query()\n\nTrue when the work captured by the event has finished (or it was never recorded)."},
    {"synchronize", (PyCFunction)Event_synchronize, METH_NOARGS,
     "synchronize()\n\nWait on the host until the event completes (releases the GIL)."},
    {"elapsed_time", (PyCFunction)Event_elapsed_time, METH_O,
     "elapsed_time(end_event)\n\nMilliseconds between this event and `end_event`. Both "
     "need enable_timing=True, must be recorded, and must have completed."},
    {"ipc_handle", (PyCFunction)Event_ipc_handle, METH_NOARGS,
     "ipc_handle()\n\nThe bytes another process passes to Event.from_ipc_handle()."},
    {"from_ipc_handle", (PyCFunction)(void (*)(void))Event_from_ipc_handle,
     METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     "from_ipc_handle(device, handle)\n\nOpen an event exported by another process."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Event_getset[] = {
    {"device", (getter)Event_get_device, NULL, "The device, once recorded (else None).", NULL},
    {"cuda_event", (getter)Event_get_handle, NULL, "The raw cudaEvent_t as an int (0 before record).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject PcsEvent_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pycuda_sem.cuda.Event",
    .tp_basicsize = sizeof(PcsEvent),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "Event(enable_timing=False, blocking=False, interprocess=False)\n\n"
              "A CUDA event: marks a point in a stream. Streams can wait for it, the "
              "host can wait for it, and two timing events measure the GPU time between "
              "them. `blocking` makes synchronize() sleep instead of spin.",
    .tp_new = Event_new,
    .tp_dealloc = (destructor)Event_dealloc,
    .tp_repr = (reprfunc)Event_repr,
    .tp_methods = Event_methods,
    .tp_getset = Event_getset,
};

int pcs_event_init(PyObject *module)
{
    if (PyType_Ready(&PcsEvent_Type) < 0)
        return -1;
    return PyModule_AddObjectRef(module, "Event", (PyObject *)&PcsEvent_Type);
}
