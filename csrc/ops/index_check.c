/* index_check.c: the range-check records of CUDA indexing (index_check.h).
 *
 * A kernel that follows CUDA index tensors writes a bad index into a record
 * in host-mapped pinned memory (kernels/index.h) and never follows it. The
 * op does not wait: it queues the record, and the launch's last block to
 * finish marks it final (done), counting blocks in a device counter that
 * belongs to the record. The deferred check (common.h), which every call
 * that waits for the device runs, reads the final records directly (no
 * event, no device buffer, no copy) and raises IndexError for the first
 * bad one. Only waiting calls raise, so where an error surfaces does not
 * depend on the device's timing. Under CUDA_LAUNCH_BLOCKING=1 the op waits
 * for its own record and raises in the call. The records, the free lists
 * (one a device: a record's counter lives on one device) and the queue are
 * guarded by the GIL. */
#include "ops/index_check.h"
#include "runtime/host_signal.h"

#include <stdatomic.h>
#include <string.h>

#define ERR_CHUNK 32
/* Past this many unread records an op waits for the oldest's device (a
 * loop that never synchronises keeps a bounded queue). */
#define ERR_PENDING_MAX 1024

struct pcs_index_check {
    pcs_index_err *host, *dev;
    unsigned *blocks; /* the launch's finished-block counter, on `device` */
    int device;
    int nidx; /* what IndexError names: the dims and sizes indexed */
    int dim[PCS_MAX_DIMS];
    int64_t isize[PCS_MAX_DIMS];
    struct pcs_index_check *next;
};

static int pending_check(void);

static pcs_index_check *err_free[PCS_MAX_DEVICES];
static pcs_index_check *pend_head, *pend_tail; /* launched, not yet read: oldest first */
static int npend;

/* ERR_CHUNK new records for `device` (current): the mapped records and a
 * zeroed counter each on the device, for the life of the process. The
 * counters are zeroed by a synchronous memset and the legacy stream is
 * waited for, so that a launch on any stream finds them zero. */
static int err_chunk(int device)
{
    void *d = NULL;
    unsigned *cnt = NULL;
    void *h = pcs_mapped_chunk(ERR_CHUNK * sizeof(pcs_index_err), &d);
    if (!h)
        return -1;
    const char *call = "cudaMalloc (index range check)"; /* the call an error names */
    cudaError_t e = cudaMalloc((void **)&cnt, ERR_CHUNK * sizeof(unsigned));
    if (e == cudaSuccess) {
        call = "cudaMemset (index range check)";
        e = cudaMemset(cnt, 0, ERR_CHUNK * sizeof(unsigned));
    }
    if (e == cudaSuccess) {
        call = "cudaStreamSynchronize (index range check)";
        e = cudaStreamSynchronize(cudaStreamLegacy);
    }
    pcs_index_check *s = e == cudaSuccess ? PyMem_Calloc(ERR_CHUNK, sizeof *s) : NULL;
    if (!s) {
        cudaError_t fe = cudaFreeHost(h); /* best effort: the first error is the one raised */
        (void)fe;
        if (cnt) {
            fe = cudaFree(cnt);
            (void)fe;
        }
        return e != cudaSuccess ? pcs_cuda_error(e, call, __FILE__, __LINE__) : (PyErr_NoMemory(), -1);
    }
    pcs_set_deferred_check(pending_check); /* records exist: every wait reads them */
    for (int i = 0; i < ERR_CHUNK; i++) {
        s[i].host = (pcs_index_err *)h + i;
        s[i].dev = (pcs_index_err *)d + i;
        s[i].blocks = cnt + i;
        s[i].device = device;
        s[i].next = err_free[device];
        err_free[device] = &s[i];
    }
    return 0;
}

/* A record goes back to its free list only once its launch has finished
 * (or when nothing was launched that counts into it): the kernel can no
 * longer write it. */
pcs_index_check *pcs_index_check_take(int device)
{
    if (device < 0 || device >= PCS_MAX_DEVICES) {
        PyErr_Format(PyExc_RuntimeError, "index range check: bad device %d", device);
        return NULL;
    }
    if (!err_free[device] && err_chunk(device) < 0)
        return NULL;
    pcs_index_check *s = err_free[device];
    err_free[device] = s->next;
    memset(s->host->bad, 0, sizeof s->host->bad);
    s->host->done = 0;
    return s;
}

static void err_give(pcs_index_check *s)
{
    s->next = err_free[s->device];
    err_free[s->device] = s;
}

/* Whether the launch that reports into s has finished: its last block set
 * done after every block's writes, so the reads of bad[] that follow (after
 * the acquire fence) see them. */
static bool err_final(const pcs_index_check *s)
{
    const volatile pcs_index_err *rec = s->host;
    if (!rec->done)
        return false;
    atomic_thread_fence(memory_order_acquire);
    return true;
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
 * surfaces does not depend on the device's timing. `idle`: a device that
 * was just synchronised, whose records are all final (one that never got
 * its done flag had no launch counting into it). */
static int pending_read(bool all, int idle)
{
    pcs_index_check *prev = NULL, *s = pend_head;
    while (s) {
        pcs_index_check *next = s->next;
        bool fin = err_final(s) || s->device == idle;
        if (!fin) {
            if (!all)
                return 0;
            prev = s;
            s = next;
            continue;
        }
        if (!all && err_bad(s))
            return 0;
        if (prev)
            prev->next = next;
        else
            pend_head = next;
        if (pend_tail == s)
            pend_tail = prev;
        npend--;
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
    return pend_head ? pending_read(true, -1) : 0;
}

/* Past ERR_PENDING_MAX: waits (GIL released) for the device of the oldest
 * record, then reads every final record, raising only for a bad one. The
 * current device is `device` again afterwards. */
static int pending_drain(int device)
{
    int dev = pend_head->device;
    cudaError_t w = cudaSetDevice(dev);
    if (w == cudaSuccess) {
        Py_BEGIN_ALLOW_THREADS
        w = cudaDeviceSynchronize();
        Py_END_ALLOW_THREADS
    }
    cudaError_t back = cudaSetDevice(device);
    if (w == cudaSuccess)
        w = back;
    if (w != cudaSuccess)
        return pcs_cuda_error(w, "cudaDeviceSynchronize (index range check)", __FILE__, __LINE__);
    return pending_read(true, dev);
}

/* Queues the record of a launch just made on `device`. Gives back the
 * finished clean ones first, and drains the queue past ERR_PENDING_MAX. */
static int err_defer(pcs_index_check *s, int device)
{
    if (pending_read(false, -1) < 0) /* before this one joins: it may not be read here */
        return -1;
    s->next = NULL;
    if (pend_tail)
        pend_tail->next = s;
    else
        pend_head = s;
    pend_tail = s;
    npend++;
    return npend > ERR_PENDING_MAX ? pending_drain(device) : 0;
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
        return err_defer(slot, device);
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

pcs_index_report pcs_index_check_report(pcs_index_check *c, bool need)
{
    return (pcs_index_report){c->dev, need ? c->blocks : NULL};
}

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
