/* host_allocator.c: the caching pinned (page-locked) host allocator.
 *
 * Policy, after PyTorch's CachingHostAllocator:
 *   - requests are rounded up to a power of two (at least 4 KiB) and served
 *     from a free block of exactly that size class, else by cudaHostAlloc;
 *   - every asynchronous copy that reads or writes a block records an event
 *     on the copy's stream (pcs_host_record); a freed block goes back to the
 *     cache, but is handed out again only once all its events have completed,
 *     so a non_blocking copy can never see its buffer reused under it;
 *     A block keeps at most one pending event per (device, stream): a newer
 *     use on the same stream re-records that event (stream order makes the
 *     newer record cover the older work), and completed events are dropped
 *     at each record, so a long-lived pinned buffer used for many copies
 *     does not accumulate events (found by tests/test_leaks.py);
 *   - pcs_host_empty_cache waits for those events and returns every unused
 *     block to the driver.
 * The block list is a plain linked list: pinned allocations are few and
 * large, and pinning itself costs far more than a walk of the list. A mutex
 * guards it because copies may record events with the GIL released. */
#include "runtime/host_allocator.h"
#include "runtime/device.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct host_event {
    cudaEvent_t event;
    cudaStream_t stream; /* the stream it was last recorded on */
    int device;
    struct host_event *next;
} host_event;

typedef struct host_block {
    void *ptr;
    size_t size; /* the size class */
    bool in_use;
    host_event *events; /* pending uses, newest first */
    struct host_block *next;
} host_block;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static host_block *blocks = NULL;

static size_t size_class(size_t n)
{
    size_t s = 4096;
    while (s < n && s < ((size_t)1 << 62))
        s <<= 1;
    return s;
}

/* Drops the completed events of a block; true when none is left pending.
 * Caller holds the lock. */
static bool events_done(host_block *b)
{
    host_event **pe = &b->events;
    while (*pe) {
        host_event *e = *pe;
        cudaError_t st = cudaEventQuery(e->event);
        if (st == cudaErrorNotReady) {
            /* "not ready" is also left as the thread's last error: clear it,
             * or the next launch check would report it */
            (void)cudaGetLastError();
            pe = &e->next;
            continue;
        }
        (void)cudaGetLastError(); /* a failed query is not sticky: treat as done */
        cudaEventDestroy(e->event);
        *pe = e->next;
        free(e);
    }
    return b->events == NULL;
}

void *pcs_host_alloc(size_t nbytes, void **handle)
{
    if (pcs_require_cuda() < 0)
        return NULL;
    size_t sz = size_class(nbytes ? nbytes : 1);
    pthread_mutex_lock(&lock);
    for (host_block *b = blocks; b; b = b->next) {
        if (!b->in_use && b->size == sz && events_done(b)) {
            b->in_use = true;
            pthread_mutex_unlock(&lock);
            *handle = b;
            return b->ptr;
        }
    }
    pthread_mutex_unlock(&lock);

    host_block *b = calloc(1, sizeof *b);
    if (!b) {
        PyErr_NoMemory();
        return NULL;
    }
    void *ptr = NULL;
    cudaError_t err;
    /* Pinning maps and locks pages: slow, so let other threads run. */
    Py_BEGIN_ALLOW_THREADS
    err = cudaHostAlloc(&ptr, sz, cudaHostAllocPortable);
    Py_END_ALLOW_THREADS
    if (err != cudaSuccess) {
        free(b);
        (void)cudaGetLastError();
        PyErr_Format(PyExc_RuntimeError,
                     "could not allocate %zu bytes of pinned host memory (cudaHostAlloc: %s)", sz,
                     cudaGetErrorString(err));
        return NULL;
    }
    b->ptr = ptr;
    b->size = sz;
    b->in_use = true;
    pthread_mutex_lock(&lock);
    b->next = blocks;
    blocks = b;
    pthread_mutex_unlock(&lock);
    *handle = b;
    return ptr;
}

void pcs_host_free(void *handle)
{
    if (!handle)
        return;
    pthread_mutex_lock(&lock);
    ((host_block *)handle)->in_use = false;
    pthread_mutex_unlock(&lock);
}

int pcs_host_record(void *handle, cudaStream_t stream, int device)
{
    host_block *b = handle;
    PcsDeviceGuard g0;
    if (pcs_device_guard_enter(&g0, device) < 0)
        return -1;
    pthread_mutex_lock(&lock);
    (void)events_done(b); /* drop completed uses */
    for (host_event *x = b->events; x; x = x->next) {
        if (x->device == device && x->stream == stream) {
            cudaError_t err = cudaEventRecord(x->event, stream);
            pthread_mutex_unlock(&lock);
            pcs_device_guard_exit(&g0);
            if (err != cudaSuccess)
                return pcs_cuda_error(err, "cudaEventRecord (pinned block use)", __FILE__,
                                      __LINE__);
            return 0;
        }
    }
    pthread_mutex_unlock(&lock);
    pcs_device_guard_exit(&g0);
    host_event *e = malloc(sizeof *e);
    if (!e) {
        PyErr_NoMemory();
        return -1;
    }
    PcsDeviceGuard guard;
    if (pcs_device_guard_enter(&guard, device) < 0) {
        free(e);
        return -1;
    }
    cudaError_t err = cudaEventCreateWithFlags(&e->event, cudaEventDisableTiming);
    if (err == cudaSuccess) {
        err = cudaEventRecord(e->event, stream);
        if (err != cudaSuccess)
            cudaEventDestroy(e->event);
    }
    pcs_device_guard_exit(&guard);
    if (err != cudaSuccess) {
        free(e);
        return pcs_cuda_error(err, "cudaEventRecord (pinned block use)", __FILE__, __LINE__);
    }
    e->device = device;
    e->stream = stream;
    pthread_mutex_lock(&lock);
    e->next = b->events;
    b->events = e;
    pthread_mutex_unlock(&lock);
    return 0;
}

bool pcs_host_is_pinned(const void *ptr)
{
    const char *p = ptr;
    pthread_mutex_lock(&lock);
    for (host_block *b = blocks; b; b = b->next) {
        if (p >= (const char *)b->ptr && p < (const char *)b->ptr + b->size) {
            pthread_mutex_unlock(&lock);
            return true;
        }
    }
    pthread_mutex_unlock(&lock);
    /* Memory pinned by someone else (cudaHostRegister, another library). */
    struct cudaPointerAttributes attr;
    cudaError_t err = cudaPointerGetAttributes(&attr, ptr);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    return attr.type == cudaMemoryTypeHost;
}

int pcs_host_empty_cache(void)
{
    /* Unlink the unused blocks first, then wait and free outside the lock. */
    pthread_mutex_lock(&lock);
    host_block *freeable = NULL, **pb = &blocks;
    while (*pb) {
        host_block *b = *pb;
        if (!b->in_use) {
            *pb = b->next;
            b->next = freeable;
            freeable = b;
        } else {
            pb = &b->next;
        }
    }
    pthread_mutex_unlock(&lock);
    int r = 0;
    while (freeable) {
        host_block *b = freeable;
        freeable = b->next;
        /* every block is freed whatever fails; the first failure is raised */
        cudaError_t err = cudaSuccess;
        Py_BEGIN_ALLOW_THREADS
        for (host_event *e = b->events; e; e = e->next) {
            cudaError_t e2 = cudaEventSynchronize(e->event);
            if (err == cudaSuccess)
                err = e2;
        }
        Py_END_ALLOW_THREADS
        if (err != cudaSuccess && r == 0)
            r = pcs_cuda_error(err, "cudaEventSynchronize", __FILE__, __LINE__);
        while (b->events) {
            host_event *e = b->events;
            b->events = e->next;
            err = cudaEventDestroy(e->event);
            if (err != cudaSuccess && r == 0)
                r = pcs_cuda_error(err, "cudaEventDestroy", __FILE__, __LINE__);
            free(e);
        }
        Py_BEGIN_ALLOW_THREADS
        err = cudaFreeHost(b->ptr);
        Py_END_ALLOW_THREADS
        if (err != cudaSuccess && r == 0)
            r = pcs_cuda_error(err, "cudaFreeHost", __FILE__, __LINE__);
        free(b);
    }
    return r;
}

/* For tests and memory reports: blocks cached and in use, bytes pinned. */
void pcs_host_cache_info(size_t *nblocks, size_t *in_use, size_t *bytes);
void pcs_host_cache_info(size_t *nblocks, size_t *in_use, size_t *bytes)
{
    *nblocks = *in_use = *bytes = 0;
    pthread_mutex_lock(&lock);
    for (host_block *b = blocks; b; b = b->next) {
        (*nblocks)++;
        *in_use += b->in_use;
        *bytes += b->size;
    }
    pthread_mutex_unlock(&lock);
}
