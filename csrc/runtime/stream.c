/* stream.c: CUDA streams. The Stream and ExternalStream objects, the stream
 * pool, the current stream of each (thread, device), and the `cuda.stream`
 * context manager.
 *
 * Why a pool: PyTorch hands out streams round-robin from a fixed pool per
 * device and priority and never destroys them. A raw cudaStream_t can then be
 * kept anywhere (the current-stream table, the allocator's per-block stream)
 * without reference counting, and Stream() costs no driver call after the
 * first round. Pool streams are created with cudaStreamNonBlocking, as
 * PyTorch's are: they do not synchronise implicitly with the legacy default
 * stream, so cross-stream ordering is the user's job (wait_stream,
 * record_stream), exactly as the note says. */
#include "runtime/stream.h"

#include <stdio.h>
#include <stdlib.h>

#include "runtime/device.h"
#include "runtime/event.h"
#include "kernels/kernels.h"

#define POOL_SIZE 32
#define MAX_LEVELS 8
_Static_assert(PCS_STREAM_POOL_SLOTS == 1 + MAX_LEVELS * POOL_SIZE, "stream.h numbers every pool slot");

typedef struct {
    cudaStream_t streams[MAX_LEVELS][POOL_SIZE];
    unsigned next[MAX_LEVELS];
    int least, greatest; /* priority range: least (0) >= greatest (e.g. -5) */
    bool ready;
} StreamPool;

static StreamPool *g_pools[PCS_MAX_DEVICES];

/* The current stream of each device, per thread. Zero-initialised: the
 * legacy default stream with priority 0. */
typedef struct {
    cudaStream_t stream;
    int priority;
} CurrentStream;
static _Thread_local CurrentStream tl_current[PCS_MAX_DEVICES];

cudaStream_t pcs_current_stream(int device) { return tl_current[device].stream; }

int pcs_enter_current_stream(cudaStream_t *stream)
{
    if (pcs_require_cuda() < 0)
        return -1;
    int dev = pcs_current_device();
    if (pcs_cuda_set_device_raw(dev) < 0)
        return -1;
    *stream = tl_current[dev].stream;
    return 0;
}

void pcs_set_current_stream(int device, cudaStream_t stream, int priority)
{
    tl_current[device].stream = stream;
    tl_current[device].priority = priority;
}

static StreamPool *get_pool(int dev)
{
    StreamPool *p = g_pools[dev];
    if (p)
        return p;
    p = calloc(1, sizeof *p);
    if (!p) {
        PyErr_NoMemory();
        return NULL;
    }
    PcsDeviceGuard g;
    if (pcs_device_guard_enter(&g, dev) < 0) {
        free(p);
        return NULL;
    }
    cudaError_t err = cudaDeviceGetStreamPriorityRange(&p->least, &p->greatest);
    pcs_device_guard_exit(&g);
    if (err != cudaSuccess) {
        free(p);
        pcs_cuda_error(err, "cudaDeviceGetStreamPriorityRange", __FILE__, __LINE__);
        return NULL;
    }
    if (p->least - p->greatest >= MAX_LEVELS)
        p->greatest = p->least - (MAX_LEVELS - 1);
    g_pools[dev] = p;
    return p;
}

/* Next pool stream for (dev, priority); priority is clamped to the range. */
static int pool_stream(int dev, int priority, cudaStream_t *out, int *prio_out)
{
    StreamPool *p = get_pool(dev);
    if (!p)
        return -1;
    if (priority > p->least)
        priority = p->least;
    if (priority < p->greatest)
        priority = p->greatest;
    int level = p->least - priority;
    unsigned slot = p->next[level]++ % POOL_SIZE;
    if (!p->streams[level][slot]) {
        PcsDeviceGuard g;
        if (pcs_device_guard_enter(&g, dev) < 0)
            return -1;
        cudaError_t err = cudaStreamCreateWithPriority(&p->streams[level][slot],
                                                       cudaStreamNonBlocking, priority);
        pcs_device_guard_exit(&g);
        if (err != cudaSuccess)
            return pcs_cuda_error(err, "cudaStreamCreateWithPriority", __FILE__, __LINE__);
    }
    *out = p->streams[level][slot];
    *prio_out = priority;
    return 0;
}

int pcs_stream_pool_index(int device, cudaStream_t stream)
{
    if (!stream)
        return 0;
    const StreamPool *p = device >= 0 && device < PCS_MAX_DEVICES ? g_pools[device] : NULL;
    if (!p)
        return -1;
    for (int level = 0; level <= p->least - p->greatest && level < MAX_LEVELS; level++) {
        if (!p->next[level])
            continue; /* no stream of this priority handed out yet */
        for (int i = 0; i < POOL_SIZE; i++)
            if (p->streams[level][i] == stream)
                return 1 + level * POOL_SIZE + i;
    }
    return -1;
}

/* ------------------------------------------------------------------------ */
/* Stream object                                                             */

PyObject *pcs_stream_wrap(cudaStream_t stream, int device, int priority)
{
    PcsStream *s = PyObject_New(PcsStream, &PcsStream_Type);
    if (!s)
        return NULL;
    s->stream = stream;
    s->device = device;
    s->priority = priority;
    return (PyObject *)s;
}

static PyObject *Stream_new(PyTypeObject *cls, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"device", "priority", NULL};
    PyObject *devobj = Py_None;
    int priority = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|Oi:Stream", kwlist, &devobj, &priority))
        return NULL;
    int dev = pcs_cuda_device_arg(devobj);
    if (dev < 0)
        return NULL;
    cudaStream_t st = NULL;
    int prio = 0;
    if (pool_stream(dev, priority, &st, &prio) < 0)
        return NULL;
    PcsStream *s = (PcsStream *)cls->tp_alloc(cls, 0);
    if (!s)
        return NULL;
    s->stream = st;
    s->device = dev;
    s->priority = prio;
    return (PyObject *)s;
}

static void Stream_dealloc(PyObject *self) { Py_TYPE(self)->tp_free(self); }

static PyObject *Stream_query(PcsStream *s, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    PcsDeviceGuard g;
    if (pcs_device_guard_enter(&g, s->device) < 0)
        return NULL;
    cudaError_t err = cudaStreamQuery(s->stream);
    pcs_device_guard_exit(&g);
    if (err == cudaSuccess) {
        if (pcs_deferred_check() < 0)
            return NULL;
        Py_RETURN_TRUE;
    }
    if (err == cudaErrorNotReady) {
        (void)cudaGetLastError();
        Py_RETURN_FALSE;
    }
    return pcs_cuda_error(err, "cudaStreamQuery", __FILE__, __LINE__), NULL;
}

static PyObject *Stream_synchronize(PcsStream *s, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    PcsDeviceGuard g;
    if (pcs_device_guard_enter(&g, s->device) < 0)
        return NULL;
    cudaError_t err;
    Py_BEGIN_ALLOW_THREADS
    err = cudaStreamSynchronize(s->stream);
    Py_END_ALLOW_THREADS
    pcs_device_guard_exit(&g);
    if (err != cudaSuccess)
        return pcs_cuda_error(err, "cudaStreamSynchronize", __FILE__, __LINE__), NULL;
    if (pcs_deferred_check() < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *Stream_wait_event(PcsStream *s, PyObject *ev)
{
    if (!PcsEvent_Check(ev)) {
        PyErr_Format(PyExc_TypeError, "wait_event() expects a cuda.Event, got %.100s",
                     Py_TYPE(ev)->tp_name);
        return NULL;
    }
    if (pcs_event_wait((PcsEvent *)ev, s->stream, s->device) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *Stream_wait_stream(PcsStream *s, PyObject *other)
{
    if (!PcsStream_Check(other)) {
        PyErr_Format(PyExc_TypeError, "wait_stream() expects a cuda.Stream, got %.100s",
                     Py_TYPE(other)->tp_name);
        return NULL;
    }
    PcsStream *o = (PcsStream *)other;
    if (o->stream == s->stream && o->device == s->device)
        Py_RETURN_NONE;
    /* A throwaway event: cudaStreamWaitEvent captures the event's state at the
     * time of the call, so destroying it right after is safe. */
    cudaEvent_t ev;
    PcsDeviceGuard g;
    if (pcs_device_guard_enter(&g, o->device) < 0)
        return NULL;
    PCS_CUDA_CHECK_GOTO(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), fail);
    PCS_CUDA_CHECK_GOTO(cudaEventRecord(ev, o->stream), fail_ev);
    if (s->device != o->device) {
        pcs_device_guard_exit(&g);
        if (pcs_device_guard_enter(&g, s->device) < 0)
            goto fail_ev;
    }
    PCS_CUDA_CHECK_GOTO(cudaStreamWaitEvent(s->stream, ev, 0), fail_ev);
    (void)cudaEventDestroy(ev);
    pcs_device_guard_exit(&g);
    Py_RETURN_NONE;
fail_ev:
    (void)cudaEventDestroy(ev);
fail:
    pcs_device_guard_exit(&g);
    return NULL;
}

static PyObject *Stream_record_event(PcsStream *s, PyObject *const *args, Py_ssize_t nargs,
                                     PyObject *kwnames)
{
    PyObject *ev = nargs > 0 ? args[0] : (kwnames && PyTuple_GET_SIZE(kwnames) ? args[0] : Py_None);
    if (ev == Py_None) {
        ev = PyObject_CallNoArgs((PyObject *)&PcsEvent_Type);
        if (!ev)
            return NULL;
    } else if (!PcsEvent_Check(ev)) {
        PyErr_Format(PyExc_TypeError, "record_event() expects a cuda.Event or None, got %.100s",
                     Py_TYPE(ev)->tp_name);
        return NULL;
    } else {
        Py_INCREF(ev);
    }
    if (pcs_event_record((PcsEvent *)ev, s->stream, s->device) < 0) {
        Py_DECREF(ev);
        return NULL;
    }
    return ev;
}

static PyObject *Stream_priority_range(PyObject *unused, PyObject *noargs)
{
    PCS_UNUSED(unused);
    PCS_UNUSED(noargs);
    if (pcs_require_cuda() < 0)
        return NULL;
    StreamPool *p = get_pool(pcs_current_device());
    if (!p)
        return NULL;
    return Py_BuildValue("(ii)", p->least, p->greatest);
}

static PyObject *Stream_get_device(PcsStream *s, void *c)
{
    PCS_UNUSED(c);
    return pcs_device_new(1, s->device);
}

static PyObject *Stream_get_device_index(PcsStream *s, void *c)
{
    PCS_UNUSED(c);
    return PyLong_FromLong(s->device);
}

static PyObject *Stream_get_priority(PcsStream *s, void *c)
{
    PCS_UNUSED(c);
    return PyLong_FromLong(s->priority);
}

static PyObject *Stream_get_handle(PcsStream *s, void *c)
{
    PCS_UNUSED(c);
    return PyLong_FromVoidPtr((void *)s->stream);
}

static PyObject *Stream_repr(PcsStream *s)
{
    char handle[32];
    snprintf(handle, sizeof handle, "0x%llx", (unsigned long long)(uintptr_t)s->stream);
    return PyUnicode_FromFormat("<pycuda_sem.cuda.%s device=cuda:%d cuda_stream=%s>",
                                Py_TYPE(s)->tp_name + sizeof("pycuda_sem.cuda.") - 1,
                                s->device, handle);
}

static Py_hash_t Stream_hash(PcsStream *s)
{
    Py_hash_t h = (Py_hash_t)((uintptr_t)s->stream * 31u + (uintptr_t)s->device);
    return h == -1 ? -2 : h;
}

static PyObject *Stream_richcompare(PyObject *a, PyObject *b, int op)
{
    if (!PcsStream_Check(a) || !PcsStream_Check(b) || (op != Py_EQ && op != Py_NE))
        Py_RETURN_NOTIMPLEMENTED;
    PcsStream *x = (PcsStream *)a, *y = (PcsStream *)b;
    int eq = x->stream == y->stream && x->device == y->device;
    return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static PyMethodDef Stream_methods[] = {
    {"query", (PyCFunction)Stream_query, METH_NOARGS,
     "query()\n\nTrue when all work queued on the stream has finished."},
    {"synchronize", (PyCFunction)Stream_synchronize, METH_NOARGS,
     "synchronize()\n\nWait for all work queued on the stream (releases the GIL)."},
    {"wait_event", (PyCFunction)Stream_wait_event, METH_O,
     "wait_event(event)\n\nMake future work on this stream wait for `event`. Does not block the host."},
    {"wait_stream", (PyCFunction)Stream_wait_stream, METH_O,
     "wait_stream(stream)\n\nMake future work on this stream wait for all work queued on "
     "`stream` so far. Does not block the host."},
    {"record_event", (PyCFunction)(void (*)(void))Stream_record_event,
     METH_FASTCALL | METH_KEYWORDS,
     "record_event(event=None)\n\nRecord `event` (a new Event if None) on this stream and return it."},
    {"priority_range", (PyCFunction)Stream_priority_range, METH_NOARGS | METH_STATIC,
     "priority_range()\n\n(least, greatest) stream priorities of the current device; lower "
     "numbers are higher priorities."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Stream_getset[] = {
    {"device", (getter)Stream_get_device, NULL, "The stream's device.", NULL},
    {"device_index", (getter)Stream_get_device_index, NULL, "The stream's device ordinal.", NULL},
    {"priority", (getter)Stream_get_priority, NULL, "The stream's priority.", NULL},
    {"cuda_stream", (getter)Stream_get_handle, NULL, "The raw cudaStream_t as an int.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject PcsStream_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pycuda_sem.cuda.Stream",
    .tp_basicsize = sizeof(PcsStream),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "Stream(device=None, priority=0)\n\nA CUDA stream: a queue of work on one "
              "device, run in order. Work on different streams may run concurrently; "
              "order it with wait_stream / wait_event. Streams come from a per-device "
              "pool and are never destroyed. Lower priority numbers run first.",
    .tp_new = Stream_new,
    .tp_dealloc = Stream_dealloc,
    .tp_repr = (reprfunc)Stream_repr,
    .tp_hash = (hashfunc)Stream_hash,
    .tp_richcompare = Stream_richcompare,
    .tp_methods = Stream_methods,
    .tp_getset = Stream_getset,
};

/* ExternalStream(stream_ptr, device=None): wraps a stream made elsewhere. */
static PyObject *ExternalStream_new(PyTypeObject *cls, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"stream_ptr", "device", NULL};
    PyObject *ptr, *devobj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|O:ExternalStream", kwlist, &ptr, &devobj))
        return NULL;
    void *raw = PyLong_AsVoidPtr(ptr);
    if (!raw && PyErr_Occurred())
        return NULL;
    int dev = pcs_cuda_device_arg(devobj);
    if (dev < 0)
        return NULL;
    int prio = 0;
    PcsDeviceGuard g;
    if (pcs_device_guard_enter(&g, dev) < 0)
        return NULL;
    if (cudaStreamGetPriority((cudaStream_t)raw, &prio) != cudaSuccess) {
        (void)cudaGetLastError();
        prio = 0;
    }
    pcs_device_guard_exit(&g);
    PcsStream *s = (PcsStream *)cls->tp_alloc(cls, 0);
    if (!s)
        return NULL;
    s->stream = (cudaStream_t)raw;
    s->device = dev;
    s->priority = prio;
    return (PyObject *)s;
}

PyTypeObject PcsExternalStream_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pycuda_sem.cuda.ExternalStream",
    .tp_basicsize = sizeof(PcsStream),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "ExternalStream(stream_ptr, device=None)\n\nA stream created outside "
              "pycuda_sem (CuPy, PyTorch, a C library), given by its raw handle. The "
              "caller keeps it alive while it is used.",
    .tp_new = ExternalStream_new,
};

/* ------------------------------------------------------------------------ */
/* current_stream / default_stream / set_stream                              */

static PyObject *py_current_stream(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                   PyObject *kwnames)
{
    PCS_UNUSED(m);
    int dev = pcs_parse_opt_device(args, nargs, kwnames, "current_stream");
    if (dev < 0)
        return NULL;
    return pcs_stream_wrap(tl_current[dev].stream, dev, tl_current[dev].priority);
}

static PyObject *py_default_stream(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                   PyObject *kwnames)
{
    PCS_UNUSED(m);
    int dev = pcs_parse_opt_device(args, nargs, kwnames, "default_stream");
    if (dev < 0)
        return NULL;
    return pcs_stream_wrap(NULL, dev, 0);
}

static int check_stream_arg(PyObject *s, const char *fname)
{
    if (!PcsStream_Check(s)) {
        PyErr_Format(PyExc_TypeError, "%s() expects a cuda.Stream or None, got %.100s", fname,
                     Py_TYPE(s)->tp_name);
        return -1;
    }
    return pcs_check_device(((PcsStream *)s)->device);
}

static PyObject *py_set_stream(PyObject *m, PyObject *s)
{
    PCS_UNUSED(m);
    if (s == Py_None)
        Py_RETURN_NONE;
    if (check_stream_arg(s, "set_stream") < 0)
        return NULL;
    PcsStream *st = (PcsStream *)s;
    /* As torch: the stream's device becomes current too. */
    pcs_set_device(st->device);
    pcs_set_current_stream(st->device, st->stream, st->priority);
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------------ */
/* cuda.stream(s): the stream context manager                                */

typedef struct {
    PyObject_HEAD
    PyObject *stream; /* PcsStream or None */
    int src_device;
    CurrentStream src_prev, dst_prev;
} StreamContext;

static PyObject *StreamContext_make(PyTypeObject *cls, PyObject *s)
{
    if (s != Py_None && check_stream_arg(s, "stream") < 0)
        return NULL;
    StreamContext *c = PyObject_New(StreamContext, cls);
    if (!c)
        return NULL;
    Py_INCREF(s);
    c->stream = s;
    c->src_device = -1;
    return (PyObject *)c;
}

static PyObject *StreamContext_vectorcall(PyObject *cls, PyObject *const *args, size_t nargsf,
                                          PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (nargs + nkw != 1 ||
        (nkw == 1 && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "stream") != 0)) {
        PyErr_SetString(PyExc_TypeError, "stream() missing 1 required positional argument: 'stream'");
        return NULL;
    }
    return StreamContext_make((PyTypeObject *)cls, args[0]);
}

static PyObject *StreamContext_new(PyTypeObject *cls, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"stream", NULL};
    PyObject *s;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O:stream", kwlist, &s))
        return NULL;
    return StreamContext_make(cls, s);
}

static void StreamContext_dealloc(StreamContext *c)
{
    Py_XDECREF(c->stream);
    PyObject_Free(c);
}

static PyObject *StreamContext_enter(StreamContext *c, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    if (c->stream != Py_None) {
        PcsStream *s = (PcsStream *)c->stream;
        int cur = pcs_current_device();
        c->src_device = cur;
        c->src_prev = tl_current[cur];
        c->dst_prev = tl_current[s->device];
        pcs_set_device(s->device);
        tl_current[s->device].stream = s->stream;
        tl_current[s->device].priority = s->priority;
    }
    Py_INCREF(c->stream);
    return c->stream;
}

static PyObject *StreamContext_exit(StreamContext *c, PyObject *const *args, Py_ssize_t nargs)
{
    PCS_UNUSED(args);
    PCS_UNUSED(nargs);
    if (c->stream != Py_None && c->src_device >= 0) {
        PcsStream *s = (PcsStream *)c->stream;
        tl_current[s->device] = c->dst_prev;
        tl_current[c->src_device] = c->src_prev;
        pcs_set_device(c->src_device);
        c->src_device = -1;
    }
    Py_RETURN_FALSE;
}

static PyMethodDef StreamContext_methods[] = {
    {"__enter__", (PyCFunction)StreamContext_enter, METH_NOARGS,
     "Make the stream current on its device, and its device current."},
    {"__exit__", (PyCFunction)(void (*)(void))StreamContext_exit, METH_FASTCALL,
     "Restore the previous current streams and device."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject StreamContext_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pycuda_sem.cuda.StreamContext",
    .tp_basicsize = sizeof(StreamContext),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "stream(stream)\n\nContext manager that makes `stream` the current stream "
              "of its device, and that device the current device, until exit. "
              "stream(None) is a no-op.",
    .tp_new = StreamContext_new,
    .tp_vectorcall = StreamContext_vectorcall,
    .tp_dealloc = (destructor)StreamContext_dealloc,
    .tp_methods = StreamContext_methods,
};

/* ------------------------------------------------------------------------ */
/* Test helpers (as torch.cuda._sleep): hold a stream busy, write to memory   */

static PyObject *py_sleep(PyObject *m, PyObject *arg)
{
    PCS_UNUSED(m);
    long long cycles = PyLong_AsLongLong(arg);
    if (cycles == -1 && PyErr_Occurred())
        return NULL;
    cudaStream_t st;
    if (pcs_enter_current_stream(&st) < 0)
        return NULL;
    pcs_launch_sleep(cycles, st);
    if (PCS_CHECK_LAUNCH(st, "sleep_kernel") < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_memset_async(PyObject *m, PyObject *args)
{
    PCS_UNUSED(m);
    unsigned long long ptr;
    int value;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "Kin:_memset_async", &ptr, &value, &n))
        return NULL;
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "_memset_async: negative size");
        return NULL;
    }
    cudaStream_t st;
    if (pcs_enter_current_stream(&st) < 0)
        return NULL;
    PCS_CUDA_CHECK_NULL(cudaMemsetAsync((void *)(uintptr_t)ptr, value, (size_t)n, st));
    Py_RETURN_NONE;
}

#define FASTKW(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL | METH_KEYWORDS

static PyMethodDef stream_functions[] = {
    {"_sleep", py_sleep, METH_O,
     "_sleep(cycles)\n\nKeep the current stream busy for about `cycles` GPU clock cycles "
     "(for tests and benchmarks)."},
    {"_memset_async", py_memset_async, METH_VARARGS,
     "_memset_async(ptr, value, nbytes)\n\nFill raw device memory on the current stream "
     "(for tests)."},
    {"current_stream", FASTKW(py_current_stream),
     "current_stream(device=None)\n\nThe calling thread's current stream on the device."},
    {"default_stream", FASTKW(py_default_stream),
     "default_stream(device=None)\n\nThe device's default (legacy) stream."},
    {"set_stream", py_set_stream, METH_O,
     "set_stream(stream)\n\nMake `stream` current on its device (and that device current). "
     "Prefer the stream() context manager."},
    {NULL, NULL, 0, NULL},
};

int pcs_stream_init(PyObject *module)
{
    PcsExternalStream_Type.tp_base = &PcsStream_Type;
    if (PyType_Ready(&PcsStream_Type) < 0 || PyType_Ready(&PcsExternalStream_Type) < 0 ||
        PyType_Ready(&StreamContext_Type) < 0)
        return -1;
    if (PyModule_AddObjectRef(module, "Stream", (PyObject *)&PcsStream_Type) < 0 ||
        PyModule_AddObjectRef(module, "ExternalStream", (PyObject *)&PcsExternalStream_Type) < 0 ||
        PyModule_AddObjectRef(module, "StreamContext", (PyObject *)&StreamContext_Type) < 0)
        return -1;
    return PyModule_AddFunctions(module, stream_functions);
}
