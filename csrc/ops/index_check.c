/* index_check.c: the range-check records of CUDA indexing (index_check.h).
 *
 * A kernel that follows CUDA index tensors writes a bad index into a record
 * in host-mapped pinned memory (kernels/index.h) and never follows it. The
 * op does not wait: it records an event after the launch and queues the
 * record. The deferred check (common.h), which every call that waits for
 * the device runs, reads the records whose event has fired, directly (no
 * device buffer, no copy), and raises IndexError for the first bad one.
 * Only waiting calls raise, so where an error surfaces does not depend on
 * the device's timing. Under CUDA_LAUNCH_BLOCKING=1 the op waits for its
 * own record and raises in the call. The records, the free list and the
 * queue are guarded by the GIL. */
#include "ops/index_check.h"
#include "runtime/host_signal.h"

#include <string.h>

#define ERR_CHUNK 32
/* Past this many unread records an op waits for the oldest (a loop that
 * never synchronises keeps a bounded queue). */
#define ERR_PENDING_MAX 1024

struct pcs_index_check {
    pcs_index_err *host, *dev;
    cudaEvent_t ev; /* made on first use, on device ev_device */
    int ev_device;
    int nidx; /* what IndexError names: the dims and sizes indexed */
    int dim[PCS_MAX_DIMS];
    int64_t isize[PCS_MAX_DIMS];
    struct pcs_index_check *next;
};

static int pending_check(void);

static pcs_index_check *err_free;
static pcs_index_check *pend_head, *pend_tail; /* launched, not yet read: oldest first */
static int npend;

/* A record goes back to the free list only once its launch's event fired
 * (or when nothing was launched): the kernel can no longer write it. */
pcs_index_check *pcs_index_check_take(void)
{
    if (!err_free) {
        void *d = NULL;
        void *h = pcs_mapped_chunk(ERR_CHUNK * sizeof(pcs_index_err), &d);
        pcs_index_check *s = h ? PyMem_Calloc(ERR_CHUNK, sizeof *s) : NULL;
        if (!s) {
            if (h) {
                cudaError_t fe = cudaFreeHost(h); /* best effort */
                (void)fe;
                PyErr_NoMemory();
            }
            return NULL;
        }
        pcs_set_deferred_check(pending_check); /* records exist: every wait reads them */
        for (int i = 0; i < ERR_CHUNK; i++) { /* chunks live as long as the process */
            s[i].host = (pcs_index_err *)h + i;
            s[i].dev = (pcs_index_err *)d + i;
            s[i].next = err_free;
            err_free = &s[i];
        }
    }
    pcs_index_check *s = err_free;
    err_free = s->next;
    memset(s->host->bad, 0, sizeof s->host->bad);
    return s;
}

static void err_give(pcs_index_check *s)
{
    s->next = err_free;
    err_free = s;
}

static bool err_bad(const pcs_index_check *s)
{
    const volatile pcs_index_err *rec = s->host;
    for (int k = 0; k < s->nidx; k++)
        if (rec->bad[k])
            return true;
    return false;
}

/* IndexError for the first bad index the record holds (-1), or 0. */
static int err_raise(const pcs_index_check *s)
{
    const volatile pcs_index_err *rec = s->host;
    for (int k = 0; k < s->nidx; k++)
        if (rec->bad[k])
            return pcs_index_oob(rec->value[k], s->dim[k], s->isize[k]);
    return 0;
}

/* Reads the queued records whose launch finished, oldest first, and gives
 * them back. `all` (a waiting call): look past a launch still running (a
 * wait on one stream finishes that stream's launches, not the others') and
 * raise for the first record that holds a bad index (the later ones stay
 * queued for the next check). Else (the cheap poll of each indexing op,
 * which keeps the queue short) stop at the first launch still running or
 * holding a bad index: errors are raised by waiting calls only, so when one
 * surfaces does not depend on the device's timing. */
static int pending_read(bool all)
{
    pcs_index_check *prev = NULL, *s = pend_head;
    while (s) {
        pcs_index_check *next = s->next;
        cudaError_t q = cudaEventQuery(s->ev);
        if (q == cudaErrorNotReady) {
            (void)cudaGetLastError();
            if (!all)
                return 0;
            prev = s;
            s = next;
            continue;
        }
        if (!all && q == cudaSuccess && err_bad(s))
            return 0;
        if (prev)
            prev->next = next;
        else
            pend_head = next;
        if (pend_tail == s)
            pend_tail = prev;
        npend--;
        if (q != cudaSuccess)
            return pcs_cuda_error(q, "cudaEventQuery (index range check)", __FILE__, __LINE__); /* leaked */
        int r = err_raise(s);
        err_give(s);
        if (r < 0)
            return -1;
        s = next;
    }
    return 0;
}

/* The deferred check (common.h) every waiting call runs. */
static int pending_check(void)
{
    return pend_head ? pending_read(true) : 0;
}

/* Queues the record of a launch just made on `st` (device current): an
 * event after it tells when the record is final. Gives back the finished
 * clean ones first, and waits for the oldest past ERR_PENDING_MAX (raising
 * only if that one holds a bad index). */
static int err_defer(pcs_index_check *s, cudaStream_t st, int device)
{
    if (s->ev && s->ev_device != device) {
        cudaError_t de = cudaEventDestroy(s->ev); /* made on another device: remake it here */
        (void)de;
        s->ev = NULL;
    }
    if (!s->ev) {
        cudaError_t e = cudaEventCreateWithFlags(&s->ev, cudaEventDisableTiming);
        if (e != cudaSuccess) {
            s->ev = NULL;
            err_give(s);
            return pcs_cuda_error(e, "cudaEventCreateWithFlags", __FILE__, __LINE__);
        }
        s->ev_device = device;
    }
    cudaError_t e = cudaEventRecord(s->ev, st);
    if (e != cudaSuccess) /* the launch may still write it: the slot is leaked */
        return pcs_cuda_error(e, "cudaEventRecord", __FILE__, __LINE__);
    if (pending_read(false) < 0) /* before this one joins: it may not be read here */
        return -1;
    s->next = NULL;
    if (pend_tail)
        pend_tail->next = s;
    else
        pend_head = s;
    pend_tail = s;
    npend++;
    if (npend > ERR_PENDING_MAX) {
        cudaError_t w;
        cudaEvent_t oldest = pend_head->ev;
        Py_BEGIN_ALLOW_THREADS
        w = cudaEventSynchronize(oldest);
        Py_END_ALLOW_THREADS
        if (w != cudaSuccess)
            return pcs_cuda_error(w, "cudaEventSynchronize", __FILE__, __LINE__);
        return pending_read(true);
    }
    return 0;
}

/* What a record names when it raises: the plan's index dims and sizes. */
static void err_name(pcs_index_check *s, const pcs_index_plan *p)
{
    s->nidx = p->g.nidx;
    for (int k = 0; k < p->g.nidx; k++) {
        s->dim[k] = p->dim[k];
        s->isize[k] = p->g.isize[k];
    }
}

/* After a launch that reports into `slot`: queue its record (deferred), or
 * under CUDA_LAUNCH_BLOCKING=1 wait (GIL released) and raise here. */
static int err_finish(const pcs_index_plan *p, pcs_index_check *slot, cudaStream_t st, int device)
{
    err_name(slot, p);
    if (!pcs_launch_blocking)
        return err_defer(slot, st, device);
    cudaError_t e;
    Py_BEGIN_ALLOW_THREADS
    e = cudaStreamSynchronize(st);
    Py_END_ALLOW_THREADS
    if (e != cudaSuccess)
        return pcs_cuda_error(e, "cudaStreamSynchronize", __FILE__, __LINE__); /* slot leaked */
    int r = err_raise(slot);
    err_give(slot);
    return r;
}

pcs_index_err *pcs_index_check_dev(pcs_index_check *c) { return c->dev; }

/* The end of a launch that reports into `slot`: queued when some index
 * tensor came from the device; else given back at once (the kernel never
 * writes it: every index was checked on the host), as after a launch that
 * did not happen (`none`); after a failed launch it is leaked. */
int pcs_index_check_finish(pcs_index_check *slot, const pcs_index_plan *p, cudaStream_t st,
                           int device, int r, bool none, bool need)
{
    if (r == 0 && need)
        return err_finish(p, slot, st, device);
    if (r == 0 || none)
        err_give(slot);
    return r;
}
