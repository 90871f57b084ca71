/* nccl_work.c: _NcclWork, the handle of one enqueued NCCL collective: the
 * end event recorded on the communicator's stream after it.
 *
 *   wait()           the caller's current stream waits on the event (host not
 *                    blocked; torch's Work.wait for CUDA collectives); raises
 *                    if NCCL already reports an asynchronous error or the
 *                    communicator was aborted
 *   is_completed()   cudaEventQuery
 *   _wait_host(timeout_s)
 *                    blocks the host until the event completes, polling NCCL's
 *                    asynchronous error; past timeout_s the communicator is
 *                    aborted (its kernels return) and RuntimeError is raised:
 *                    a dead peer makes the others fail, never hang
 *   elapsed()        seconds since the collective was enqueued
 *   result()         the output tensors given to run()
 * The end event goes back to the communicator's pool when the work dies. */
#include "distributed/nccl.h"

#include <string.h>
#include <time.h>

#include "runtime/device.h"
#include "runtime/stream.h"

PyObject *pcs_nccl_work_new(PcsNcclComm *comm, cudaEvent_t event, const char *name,
                            PyObject *outputs)
{
    PcsNcclWork *w = PyObject_New(PcsNcclWork, &PcsNcclWork_Type);
    if (!w) {
        pcs_nccl_comm_give_event(comm, event);
        return NULL;
    }
    w->comm = (PcsNcclComm *)Py_NewRef((PyObject *)comm);
    w->event = event;
    w->start = pcs_nccl_now();
    w->outputs = Py_NewRef(outputs);
    w->done = false;
    /* `name` points into run()'s argument, which may die: keep a static string */
    static const char *known[] = {"all_reduce", "broadcast", "reduce", "all_gather",
                                  "all_gather_into_tensor", "reduce_scatter_tensor",
                                  "all_to_all_single", "send", "recv", "batch_isend_irecv",
                                  "barrier"};
    w->name = "collective";
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(known[i], name) == 0)
            w->name = known[i];
    return (PyObject *)w;
}

static void Work_dealloc(PcsNcclWork *w)
{
    if (w->event)
        pcs_nccl_comm_give_event(w->comm, w->event);
    Py_XDECREF(w->comm);
    Py_XDECREF(w->outputs);
    PyObject_Free(w);
}

/* 1 complete, 0 pending, -1 error. */
static int query(PcsNcclWork *w)
{
    if (w->done)
        return 1;
    cudaError_t err = cudaEventQuery(w->event);
    if (err == cudaSuccess) {
        w->done = true;
        return 1;
    }
    if (err == cudaErrorNotReady) {
        (void)cudaGetLastError(); /* NotReady is not sticky, but clear it anyway */
        return 0;
    }
    return pcs_cuda_error(err, "cudaEventQuery", __FILE__, __LINE__);
}

static PyObject *Work_wait(PcsNcclWork *w, PyObject *args)
{
    PyObject *timeout = NULL;
    if (!PyArg_ParseTuple(args, "|O:wait", &timeout))
        return NULL;
    /* an aborted communicator's kernels returned early: the outputs are not results */
    if (pcs_nccl_comm_check_async(w->comm) != 0 || pcs_nccl_comm_check_alive(w->comm) < 0)
        return NULL;
    if (!w->done) {
        int dev = w->comm->device;
        cudaStream_t cur = pcs_current_stream(dev);
        PcsDeviceGuard g;
        if (pcs_device_guard_enter(&g, dev) < 0)
            return NULL;
        cudaError_t err = cudaStreamWaitEvent(cur, w->event, 0);
        pcs_device_guard_exit(&g);
        if (err != cudaSuccess)
            return pcs_cuda_error(err, "cudaStreamWaitEvent", __FILE__, __LINE__), NULL;
    }
    Py_RETURN_TRUE;
}

static PyObject *Work_is_completed(PcsNcclWork *w, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    int q = query(w);
    return q < 0 ? NULL : PyBool_FromLong(q);
}

/* The host waits for w (see the header); 0, or -1 with RuntimeError. */
static int wait_host(PcsNcclWork *w, double timeout)
{
    long sleep_ns = 20000; /* back off from 20 us to 1 ms: quick ops stay quick */
    for (;;) {
        if (pcs_nccl_comm_check_alive(w->comm) < 0) /* aborted meanwhile (the watchdog) */
            return -1;
        int q = query(w);
        if (q != 0)
            return q < 0 ? -1 : 0;
        if (pcs_nccl_comm_check_async(w->comm) != 0)
            return -1;
        double ran = pcs_nccl_now() - w->start;
        if (timeout >= 0 && ran > timeout) {
            char reason[256];
            snprintf(reason, sizeof reason,
                     "Watchdog caught collective operation timeout: %s ran for %.0f milliseconds "
                     "before timing out", w->name, ran * 1e3);
            if (pcs_nccl_comm_abort(w->comm, reason) < 0)
                return -1;
            PyErr_Format(PyExc_RuntimeError,
                         "%s (rank %d of %d; a peer process probably failed or never joined the "
                         "collective); the NCCL communicator was aborted", reason, w->comm->rank,
                         w->comm->size);
            return -1;
        }
        struct timespec ts = {0, sleep_ns};
        Py_BEGIN_ALLOW_THREADS
        nanosleep(&ts, NULL);
        Py_END_ALLOW_THREADS
        if (sleep_ns < 1000000)
            sleep_ns *= 2;
        if (PyErr_CheckSignals() < 0) /* Ctrl-C: KeyboardInterrupt */
            return -1;
    }
}

static PyObject *Work_wait_host(PcsNcclWork *w, PyObject *args)
{
    double timeout;
    if (!PyArg_ParseTuple(args, "d:_wait_host", &timeout))
        return NULL;
    if (wait_host(w, timeout) < 0)
        return NULL;
    Py_RETURN_TRUE;
}

static PyObject *Work_elapsed(PcsNcclWork *w, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    return PyFloat_FromDouble(pcs_nccl_now() - w->start);
}

static PyObject *Work_result(PcsNcclWork *w, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    return Py_NewRef(w->outputs);
}

static PyObject *Work_get_comm(PcsNcclWork *w, void *closure)
{
    PCS_UNUSED(closure);
    return Py_NewRef((PyObject *)w->comm);
}

static PyObject *Work_get_name(PcsNcclWork *w, void *closure)
{
    PCS_UNUSED(closure);
    return PyUnicode_FromString(w->name);
}

static PyMethodDef Work_methods[] = {
    {"wait", (PyCFunction)Work_wait, METH_VARARGS,
     "wait(timeout=None): the current stream waits for the collective (host not blocked)."},
    {"is_completed", (PyCFunction)Work_is_completed, METH_NOARGS,
     "is_completed(): True once the collective has finished on the GPU."},
    {"_wait_host", (PyCFunction)Work_wait_host, METH_VARARGS,
     "_wait_host(timeout_s): block the host until done; abort and RuntimeError past the "
     "timeout or on NCCL's asynchronous error."},
    {"elapsed", (PyCFunction)Work_elapsed, METH_NOARGS, "Seconds since it was enqueued."},
    {"result", (PyCFunction)Work_result, METH_NOARGS, "The output tensors."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Work_getset[] = {
    {"comm", (getter)Work_get_comm, NULL, "The _NcclComm that runs it.", NULL},
    {"name", (getter)Work_get_name, NULL, "The collective's name.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject PcsNcclWork_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pycuda_sem._C._NcclWork",
    .tp_basicsize = sizeof(PcsNcclWork),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The end event of one NCCL collective (made by _NcclComm.run).",
    .tp_dealloc = (destructor)Work_dealloc,
    .tp_methods = Work_methods,
    .tp_getset = Work_getset,
};
