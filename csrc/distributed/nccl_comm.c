/* nccl_comm.c: _NcclComm, one NCCL communicator on one device, and the
 * collectives it runs (see nccl.h for the stream semantics).
 *
 * Python:
 *   _C._nccl_unique_id() -> bytes            (rank 0 makes it, the store carries it)
 *   _C._NcclComm(unique_id, size, rank, device)
 *   comm.run(name, ops, outputs) -> _NcclWork
 *       ops: a list of (kind, a, b, peer, redop); a is the send buffer, b the
 *       receive buffer (either may be None where the kind has none). More
 *       than one op runs as one NCCL group (ncclGroupStart/End), which is
 *       what lets pairs of sends and receives, and all-to-all, make progress.
 *   comm.abort(reason=None), comm.destroy(), comm.check_async_error()
 *   comm.stream, comm.device, comm.rank, comm.size, comm.aborted
 * The checks torch makes before a collective (group membership, shapes) are
 * the Python layer's; here: CUDA, the communicator's device, contiguity,
 * a dtype NCCL can carry, and the element counts each kind needs. */
#include "distributed/nccl.h"

#include <string.h>
#include <time.h>

#include "core/dtype.h"
#include "runtime/device.h"
#include "runtime/stream.h"
#include "tensor/tensor.h"

/* The kinds of run()'s ops (the Python side names them in _nccl.py). */
enum { OP_ALLREDUCE, OP_BROADCAST, OP_REDUCE, OP_ALLGATHER, OP_REDUCESCATTER, OP_SEND, OP_RECV };
/* ReduceOp.RedOpType values of the Python side. */
enum { RED_SUM, RED_AVG, RED_PRODUCT, RED_MIN, RED_MAX };

#define MAX_GROUP_OPS 4096

typedef struct {
    int kind;
    const void *send;
    void *recv;
    size_t count;
    ncclDataType_t type;
    ncclRedOp_t op;
    int peer;
} nccl_op;

double pcs_nccl_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------------ */
/* Creation, the event pool, abort                                           */

static PyObject *unique_id(PyObject *self, PyObject *noargs)
{
    PCS_UNUSED(self);
    PCS_UNUSED(noargs);
    const pcs_nccl_api *n = pcs_nccl();
    if (!n)
        return NULL;
    ncclUniqueId id;
    ncclResult_t r;
    Py_BEGIN_ALLOW_THREADS
    r = n->GetUniqueId(&id);
    Py_END_ALLOW_THREADS
    if (r != ncclSuccess) {
        pcs_nccl_error(r, NULL, "ncclGetUniqueId", __FILE__, __LINE__);
        return NULL;
    }
    return PyBytes_FromStringAndSize(id.internal, sizeof id.internal);
}

static PyObject *Comm_new(PyTypeObject *cls, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"unique_id", "size", "rank", "device", NULL};
    Py_buffer idbuf;
    int size, rank, device;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "y*iii:_NcclComm", kwlist, &idbuf, &size, &rank,
                                     &device))
        return NULL;
    ncclUniqueId id;
    bool id_ok = idbuf.len == (Py_ssize_t)sizeof id.internal;
    if (id_ok)
        memcpy(id.internal, idbuf.buf, sizeof id.internal);
    PyBuffer_Release(&idbuf);
    if (!id_ok)
        return PyErr_Format(PyExc_ValueError, "_NcclComm: unique_id must be %d bytes",
                            (int)sizeof id.internal);
    if (size < 1 || rank < 0 || rank >= size)
        return PyErr_Format(PyExc_ValueError, "_NcclComm: rank %d out of range for size %d",
                            rank, size);
    const pcs_nccl_api *n = pcs_nccl();
    if (!n || pcs_require_cuda() < 0 || pcs_check_device(device) < 0)
        return NULL;
    PcsNcclComm *c = (PcsNcclComm *)cls->tp_alloc(cls, 0);
    if (!c)
        return NULL;
    c->device = device;
    c->rank = rank;
    c->size = size;
    PcsDeviceGuard g;
    if (pcs_device_guard_enter(&g, device) < 0)
        goto fail;
    cudaError_t e1 = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking);
    cudaError_t e2 = e1 == cudaSuccess
                         ? cudaEventCreateWithFlags(&c->sync_event, cudaEventDisableTiming)
                         : cudaSuccess;
    ncclResult_t r = ncclSuccess;
    if (e1 == cudaSuccess && e2 == cudaSuccess) {
        /* blocks until every rank has called it: the GIL must be free */
        Py_BEGIN_ALLOW_THREADS
        r = n->CommInitRank(&c->comm, size, id, rank);
        Py_END_ALLOW_THREADS
    }
    pcs_device_guard_exit(&g);
    if (e1 != cudaSuccess) {
        c->stream = NULL;
        pcs_cuda_error(e1, "cudaStreamCreateWithFlags", __FILE__, __LINE__);
        goto fail;
    }
    if (e2 != cudaSuccess) {
        c->sync_event = NULL;
        pcs_cuda_error(e2, "cudaEventCreateWithFlags", __FILE__, __LINE__);
        goto fail;
    }
    if (r != ncclSuccess) {
        c->comm = NULL;
        pcs_nccl_error(r, NULL, "ncclCommInitRank", __FILE__, __LINE__);
        goto fail;
    }
    return (PyObject *)c;
fail:
    Py_DECREF(c);
    return NULL;
}

static void Comm_dealloc(PcsNcclComm *c)
{
    /* A communicator still alive here is left to NCCL's own teardown at exit:
     * destroying it could block on peers (ProcessGroupNCCL shuts it down
     * explicitly). Streams and events are cheap to leave too, but the pool
     * is freed. */
    for (int i = 0; i < c->n_free; i++)
        (void)cudaEventDestroy(c->free_events[i]);
    PyMem_Free(c->free_events);
    Py_XDECREF(c->abort_reason);
    Py_TYPE(c)->tp_free((PyObject *)c);
}

int pcs_nccl_comm_take_event(PcsNcclComm *c, cudaEvent_t *ev)
{
    if (c->n_free > 0) {
        *ev = c->free_events[--c->n_free];
        return 0;
    }
    PcsDeviceGuard g;
    if (pcs_device_guard_enter(&g, c->device) < 0)
        return -1;
    cudaError_t err = cudaEventCreateWithFlags(ev, cudaEventDisableTiming);
    pcs_device_guard_exit(&g);
    if (err != cudaSuccess)
        return pcs_cuda_error(err, "cudaEventCreateWithFlags", __FILE__, __LINE__);
    return 0;
}

void pcs_nccl_comm_give_event(PcsNcclComm *c, cudaEvent_t ev)
{
    if (c->n_free == c->cap_free) {
        int cap = c->cap_free ? 2 * c->cap_free : 16;
        cudaEvent_t *p = cap <= 1024 ? PyMem_Realloc(c->free_events, (size_t)cap * sizeof(cudaEvent_t)) : NULL;
        if (!p) {
            (void)cudaEventDestroy(ev); /* pool full: give it to the driver */
            return;
        }
        c->free_events = p;
        c->cap_free = cap;
    }
    c->free_events[c->n_free++] = ev;
}

int pcs_nccl_comm_abort(PcsNcclComm *c, const char *reason)
{
    if (!c->abort_reason) {
        c->abort_reason = PyUnicode_FromString(reason ? reason : "aborted by the user");
        if (!c->abort_reason)
            return -1;
    }
    ncclComm_t comm = c->comm;
    if (!comm)
        return 0;
    c->comm = NULL;
    const pcs_nccl_api *n = pcs_nccl();
    if (!n)
        return -1;
    ncclResult_t r;
    Py_BEGIN_ALLOW_THREADS
    r = n->CommAbort(comm);
    Py_END_ALLOW_THREADS
    if (r != ncclSuccess)
        return pcs_nccl_error(r, NULL, "ncclCommAbort", __FILE__, __LINE__);
    return 0;
}

int pcs_nccl_comm_check_alive(PcsNcclComm *c)
{
    if (c->comm)
        return 0;
    if (c->abort_reason)
        PyErr_Format(PyExc_RuntimeError,
                     "the NCCL communicator of this process group was aborted (%U); create a "
                     "new process group to run more collectives", c->abort_reason);
    else
        PyErr_SetString(PyExc_RuntimeError,
                        "the NCCL communicator of this process group has been destroyed");
    return -1;
}

int pcs_nccl_comm_check_async(PcsNcclComm *c)
{
    if (!c->comm)
        return 0; /* gone already: nothing new to report */
    const pcs_nccl_api *n = pcs_nccl();
    if (!n)
        return -1;
    ncclResult_t err = ncclSuccess;
    ncclResult_t r = n->CommGetAsyncError(c->comm, &err);
    if (r != ncclSuccess)
        return pcs_nccl_error(r, c->comm, "ncclCommGetAsyncError", __FILE__, __LINE__);
    if (err == ncclSuccess || err == ncclInProgress)
        return 0;
    const char *last = n->GetLastError ? n->GetLastError(c->comm) : NULL;
    char reason[512];
    snprintf(reason, sizeof reason, "NCCL reported an asynchronous error: %s%s%s",
             n->GetErrorString(err), last && *last ? ": " : "", last && *last ? last : "");
    if (pcs_nccl_comm_abort(c, reason) < 0)
        return -1;
    PyErr_Format(PyExc_RuntimeError,
                 "%s (a peer process probably failed); the communicator was aborted", reason);
    return -1;
}

/* ------------------------------------------------------------------------ */
/* Operands                                                                  */

/* The NCCL type of a dtype and how many NCCL elements one element is;
 * -1 with RuntimeError for a dtype NCCL has no type for. `reducing`: the op
 * computes (then int16 and complex with MIN/MAX/PRODUCT are refused). */
static int nccl_type(int dtype, int red, bool reducing, ncclDataType_t *type, int *mult,
                     ncclRedOp_t *op)
{
    static const ncclRedOp_t ops[] = {ncclSum, ncclAvg, ncclProd, ncclMin, ncclMax};
    *mult = 1;
    if (op) {
        if (red < 0 || red > RED_MAX) {
            PyErr_Format(PyExc_ValueError,
                         "Cannot use ReduceOp %d with NCCL (NCCL has SUM, AVG, PRODUCT, MIN, MAX)",
                         red);
            return -1;
        }
        *op = ops[red];
    }
    switch (dtype) {
    case PCS_BOOL:
        *type = ncclUint8;
        if (op && reducing) {
            /* torch's mapping: a logical or / and over bytes that are 0 or 1 */
            if (red == RED_AVG) {
                PyErr_SetString(PyExc_RuntimeError, "Cannot use ReduceOp.AVG with boolean inputs");
                return -1;
            }
            *op = red == RED_SUM ? ncclMax : red == RED_PRODUCT ? ncclMin : *op;
        }
        return 0;
    case PCS_UINT8: *type = ncclUint8; return 0;
    case PCS_INT8: *type = ncclInt8; return 0;
    case PCS_INT32: *type = ncclInt32; return 0;
    case PCS_INT64: *type = ncclInt64; return 0;
    case PCS_FLOAT16: *type = ncclFloat16; return 0;
    case PCS_BFLOAT16: *type = ncclBfloat16; return 0;
    case PCS_FLOAT32: *type = ncclFloat32; return 0;
    case PCS_FLOAT64: *type = ncclFloat64; return 0;
    case PCS_COMPLEX64:
    case PCS_COMPLEX128:
        /* real and imaginary parts reduce independently only for sums */
        if (reducing && op && red != RED_SUM && red != RED_AVG) {
            PyErr_Format(PyExc_RuntimeError,
                         "all_reduce does not support %s on complex tensors",
                         red == RED_MIN ? "MIN" : red == RED_MAX ? "MAX" : "PRODUCT");
            return -1;
        }
        *type = dtype == PCS_COMPLEX64 ? ncclFloat32 : ncclFloat64;
        *mult = 2;
        return 0;
    case PCS_INT16:
        if (!reducing) { /* moved, not computed: carried as bytes */
            *type = ncclUint8;
            *mult = 2;
            return 0;
        }
        break;
    default:
        break;
    }
    PyErr_Format(PyExc_RuntimeError, "Unsupported data type for NCCL process group: %s",
                 pcs_dtypes[dtype].name);
    return -1;
}

/* A tensor operand: CUDA on the communicator's device, contiguous. */
static PcsTensor *operand(PcsNcclComm *c, PyObject *obj, const char *what)
{
    if (!PcsTensor_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "NCCL %s: expected a Tensor, got %s", what,
                     Py_TYPE(obj)->tp_name);
        return NULL;
    }
    PcsTensor *t = (PcsTensor *)obj;
    if (t->device < 0) {
        PyErr_SetString(PyExc_RuntimeError,
                        "No backend type associated with device type cpu: the NCCL backend "
                        "needs CUDA tensors (move the tensor with .cuda() or "
                        ".to('cuda:<local rank>'))");
        return NULL;
    }
    if (t->device != c->device) {
        PyErr_Format(PyExc_RuntimeError,
                     "the tensor is on cuda:%d but this process group's NCCL communicator is "
                     "on cuda:%d (call torch.cuda.set_device(local_rank) before the first "
                     "collective, or pass device_id to init_process_group)", t->device,
                     c->device);
        return NULL;
    }
    if (!pcs_tensor_is_contiguous(t)) {
        PyErr_SetString(PyExc_ValueError, "Tensors must be contiguous");
        return NULL;
    }
    return t;
}

static int count_error(const char *what, int64_t got, int64_t want)
{
    PyErr_Format(PyExc_ValueError, "NCCL %s: the output has %lld elements, expected %lld", what,
                 (long long)got, (long long)want);
    return -1;
}

/* Fills one op from its tuple and records the tensors' use of the NCCL stream. */
static int parse_op(PcsNcclComm *c, PyObject *tup, nccl_op *op)
{
    PyObject *ao, *bo;
    int red;
    if (!PyArg_ParseTuple(tup, "iOOii;an NCCL op is (kind, send, recv, peer, redop)", &op->kind,
                          &ao, &bo, &op->peer, &red))
        return -1;
    static const char *names[] = {"all_reduce", "broadcast", "reduce", "all_gather",
                                  "reduce_scatter", "send", "recv"};
    if (op->kind < OP_ALLREDUCE || op->kind > OP_RECV)
        return PyErr_Format(PyExc_ValueError, "unknown NCCL op kind %d", op->kind), -1;
    const char *what = names[op->kind];
    PcsTensor *a = ao == Py_None ? NULL : operand(c, ao, what);
    if (ao != Py_None && !a)
        return -1;
    PcsTensor *b = bo == Py_None ? NULL : operand(c, bo, what);
    if (bo != Py_None && !b)
        return -1;
    bool needs_a = op->kind != OP_RECV, needs_b = op->kind != OP_SEND;
    if ((needs_a && !a) || (needs_b && !b))
        return PyErr_Format(PyExc_ValueError, "NCCL %s: missing a buffer", what), -1;
    if (a && b && a->dtype != b->dtype)
        return PyErr_Format(PyExc_TypeError, "NCCL %s: the input and output dtypes differ",
                            what), -1;
    PcsTensor *t = a ? a : b;
    bool reducing = op->kind == OP_ALLREDUCE || op->kind == OP_REDUCE ||
                    op->kind == OP_REDUCESCATTER;
    int mult;
    if (nccl_type(t->dtype, red, reducing, &op->type, &mult, reducing ? &op->op : NULL) < 0)
        return -1;
    if (!reducing)
        op->op = ncclSum;
    int64_t na = a ? pcs_tensor_numel(a) : 0, nb = b ? pcs_tensor_numel(b) : 0;
    int64_t count = 0;
    switch (op->kind) {
    case OP_ALLREDUCE:
    case OP_BROADCAST:
    case OP_REDUCE:
        count = na;
        if (nb != na)
            return count_error(what, nb, na);
        break;
    case OP_ALLGATHER:
        count = na;
        if (nb != na * c->size)
            return count_error(what, nb, na * c->size);
        break;
    case OP_REDUCESCATTER:
        count = nb;
        if (na != nb * c->size)
            return count_error(what, na, nb * c->size);
        break;
    case OP_SEND: count = na; break;
    case OP_RECV: count = nb; break;
    default: break;
    }
    bool rooted = op->kind == OP_BROADCAST || op->kind == OP_REDUCE || op->kind == OP_SEND ||
                  op->kind == OP_RECV;
    if (rooted && (op->peer < 0 || op->peer >= c->size))
        return PyErr_Format(PyExc_ValueError, "NCCL %s: rank %d out of range for a group of %d",
                            what, op->peer, c->size), -1;
    op->count = (size_t)count * (size_t)mult;
    op->send = a ? pcs_tensor_data(a) : NULL;
    op->recv = b ? pcs_tensor_data(b) : NULL;
    /* the allocator must not reuse these blocks before the NCCL stream is done */
    if ((a && pcs_storage_record_stream(a->storage, c->stream) < 0) ||
        (b && pcs_storage_record_stream(b->storage, c->stream) < 0))
        return -1;
    return 0;
}

static ncclResult_t enqueue(const pcs_nccl_api *n, ncclComm_t comm, cudaStream_t s,
                            const nccl_op *o)
{
    switch (o->kind) {
    case OP_ALLREDUCE: return n->AllReduce(o->send, o->recv, o->count, o->type, o->op, comm, s);
    case OP_BROADCAST: return n->Broadcast(o->send, o->recv, o->count, o->type, o->peer, comm, s);
    case OP_REDUCE:
        return n->Reduce(o->send, o->recv, o->count, o->type, o->op, o->peer, comm, s);
    case OP_ALLGATHER: return n->AllGather(o->send, o->recv, o->count, o->type, comm, s);
    case OP_REDUCESCATTER:
        return n->ReduceScatter(o->send, o->recv, o->count, o->type, o->op, comm, s);
    case OP_SEND: return n->Send(o->send, o->count, o->type, o->peer, comm, s);
    default: return n->Recv(o->recv, o->count, o->type, o->peer, comm, s);
    }
}

/* ------------------------------------------------------------------------ */
/* run                                                                       */

static PyObject *Comm_run(PcsNcclComm *c, PyObject *args)
{
    const char *name;
    PyObject *ops_obj, *outputs;
    if (!PyArg_ParseTuple(args, "sOO:run", &name, &ops_obj, &outputs))
        return NULL;
    if (!PyList_Check(ops_obj))
        return PyErr_Format(PyExc_TypeError, "run(): ops must be a list");
    Py_ssize_t nops = PyList_GET_SIZE(ops_obj);
    if (nops < 1 || nops > MAX_GROUP_OPS)
        return PyErr_Format(PyExc_ValueError, "run(): between 1 and %d ops, got %zd",
                            MAX_GROUP_OPS, nops);
    if (pcs_nccl_comm_check_alive(c) < 0)
        return NULL;
    const pcs_nccl_api *n = pcs_nccl();
    if (!n)
        return NULL;
    nccl_op one, *ops = nops == 1 ? &one : PyMem_Calloc((size_t)nops, sizeof *ops);
    if (!ops)
        return PyErr_NoMemory();
    PyObject *work = NULL;
    cudaEvent_t end = NULL;
    PcsDeviceGuard g;
    if (pcs_device_guard_enter(&g, c->device) < 0)
        goto out;
    for (Py_ssize_t i = 0; i < nops; i++)
        if (parse_op(c, PyList_GET_ITEM(ops_obj, i), &ops[i]) < 0)
            goto out_guard;
    /* the NCCL stream waits for the work already queued on the caller's stream */
    cudaStream_t cur = pcs_current_stream(c->device);
    PCS_CUDA_CHECK_GOTO(cudaEventRecord(c->sync_event, cur), out_guard);
    PCS_CUDA_CHECK_GOTO(cudaStreamWaitEvent(c->stream, c->sync_event, 0), out_guard);
    if (pcs_nccl_comm_take_event(c, &end) < 0)
        goto out_guard;
    ncclComm_t comm = c->comm;
    ncclResult_t r = ncclSuccess;
    const char *failed = "ncclGroupStart";
    bool grouped = nops > 1;
    Py_BEGIN_ALLOW_THREADS
    if (grouped)
        r = n->GroupStart();
    if (r == ncclSuccess) {
        failed = "an NCCL collective";
        for (Py_ssize_t i = 0; i < nops && r == ncclSuccess; i++)
            r = enqueue(n, comm, c->stream, &ops[i]);
        if (grouped) {
            /* a started group must be ended, even after a failed call */
            ncclResult_t r2 = n->GroupEnd();
            if (r == ncclSuccess) {
                r = r2;
                failed = "ncclGroupEnd";
            }
        }
    }
    Py_END_ALLOW_THREADS
    if (r != ncclSuccess) {
        pcs_nccl_error(r, comm, failed, __FILE__, __LINE__);
        goto out_guard;
    }
    PCS_CUDA_CHECK_GOTO(cudaEventRecord(end, c->stream), out_guard);
    work = pcs_nccl_work_new(c, end, name, outputs);
    end = NULL; /* the work owns it (or gave it back on failure) */
out_guard:
    pcs_device_guard_exit(&g);
out:
    if (end)
        pcs_nccl_comm_give_event(c, end);
    if (ops != &one)
        PyMem_Free(ops);
    return work;
}

/* ------------------------------------------------------------------------ */
/* abort, destroy, errors                                                    */

static PyObject *Comm_abort(PcsNcclComm *c, PyObject *args)
{
    const char *reason = NULL;
    if (!PyArg_ParseTuple(args, "|z:abort", &reason))
        return NULL;
    if (pcs_nccl_comm_abort(c, reason) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *Comm_destroy(PcsNcclComm *c, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    ncclComm_t comm = c->comm;
    if (!comm)
        Py_RETURN_NONE;
    const pcs_nccl_api *n = pcs_nccl();
    if (!n)
        return NULL;
    c->comm = NULL;
    PcsDeviceGuard g;
    if (pcs_device_guard_enter(&g, c->device) < 0)
        return NULL;
    ncclResult_t r;
    Py_BEGIN_ALLOW_THREADS
    r = n->CommDestroy(comm);
    Py_END_ALLOW_THREADS
    pcs_device_guard_exit(&g);
    if (r != ncclSuccess) {
        pcs_nccl_error(r, NULL, "ncclCommDestroy", __FILE__, __LINE__);
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *Comm_check_async_error(PcsNcclComm *c, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    return pcs_nccl_comm_check_async(c) == 0 ? Py_NewRef(Py_None) : NULL;
}

static PyObject *Comm_get_stream(PcsNcclComm *c, void *closure)
{
    PCS_UNUSED(closure);
    return pcs_stream_wrap(c->stream, c->device, 0);
}

static PyObject *Comm_get_aborted(PcsNcclComm *c, void *closure)
{
    PCS_UNUSED(closure);
    return PyBool_FromLong(c->abort_reason != NULL);
}

static PyObject *Comm_get_int(PcsNcclComm *c, void *closure)
{
    const char *which = closure;
    return PyLong_FromLong(which[0] == 'd' ? c->device : which[0] == 'r' ? c->rank : c->size);
}

static PyMethodDef Comm_methods[] = {
    {"run", (PyCFunction)Comm_run, METH_VARARGS,
     "run(name, ops, outputs): enqueue ops [(kind, send, recv, peer, redop)] on the NCCL "
     "stream (as one NCCL group when there are several); returns a _NcclWork."},
    {"abort", (PyCFunction)Comm_abort, METH_VARARGS,
     "abort(reason=None): ncclCommAbort; later collectives raise RuntimeError with reason."},
    {"destroy", (PyCFunction)Comm_destroy, METH_NOARGS, "destroy(): ncclCommDestroy."},
    {"check_async_error", (PyCFunction)Comm_check_async_error, METH_NOARGS,
     "check_async_error(): RuntimeError (and the communicator aborted) if NCCL reports an "
     "asynchronous error; None otherwise, also once aborted or destroyed."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Comm_getset[] = {
    {"stream", (getter)Comm_get_stream, NULL, "The internal NCCL stream.", NULL},
    {"aborted", (getter)Comm_get_aborted, NULL, "True once aborted.", NULL},
    {"device", (getter)Comm_get_int, NULL, "The CUDA ordinal.", "d"},
    {"rank", (getter)Comm_get_int, NULL, "This process's rank in the communicator.", "r"},
    {"size", (getter)Comm_get_int, NULL, "The number of ranks.", "s"},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject PcsNcclComm_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pycuda_sem._C._NcclComm",
    .tp_basicsize = sizeof(PcsNcclComm),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "_NcclComm(unique_id, size, rank, device): one NCCL communicator and its "
              "internal stream (ProcessGroupNCCL's C half).",
    .tp_new = Comm_new,
    .tp_dealloc = (destructor)Comm_dealloc,
    .tp_methods = Comm_methods,
    .tp_getset = Comm_getset,
};

static PyMethodDef module_methods[] = {
    {"_nccl_unique_id", unique_id, METH_NOARGS,
     "_nccl_unique_id(): a new ncclUniqueId (128 bytes) for rank 0 to share."},
    {NULL, NULL, 0, NULL},
};

int pcs_nccl_init(PyObject *module)
{
    if (PyType_Ready(&PcsNcclComm_Type) < 0 || PyType_Ready(&PcsNcclWork_Type) < 0)
        return -1;
    if (PyModule_AddObjectRef(module, "_NcclComm", (PyObject *)&PcsNcclComm_Type) < 0 ||
        PyModule_AddObjectRef(module, "_NcclWork", (PyObject *)&PcsNcclWork_Type) < 0)
        return -1;
    return PyModule_AddFunctions(module, module_methods);
}
