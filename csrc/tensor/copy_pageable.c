/* copy_pageable.c: host<->device copies of pageable (not pinned) host memory,
 * pipelined through pinned staging buffers.
 *
 * The driver copies pageable memory through a small staging area of its own,
 * one thread, memcpy and DMA in turn: about 19 GB/s on an H100 host, a third
 * of what pinned memory gets. For large copies we stage ourselves:
 *
 *   - the copy is cut into `lanes` contiguous parts, one host thread each
 *     (the calling thread runs lane 0; the others are pthreads for the
 *     duration of the copy), so the host memcpy, the slow half, runs on
 *     several cores at once;
 *   - each lane owns two pinned buffers from the host caching allocator
 *     (pcs_host_alloc) and an event per buffer, and moves its part chunk by
 *     chunk, double-buffered: H2D copies chunk k into one buffer while the
 *     DMA of chunk k-1 reads the other; D2H queues the DMA of chunk k+1
 *     before copying chunk k out of its buffer;
 *   - every DMA runs on the device's current stream, so it is ordered after
 *     the work queued there before the call (D2H reads what that work
 *     wrote) and before the work queued after (it sees the H2D data).
 *
 * Semantics are the plain path's (PyTorch's): when the call returns, the
 * pageable memory is no longer needed (H2D, also with non_blocking=True) or
 * holds the data (D2H). A blocking H2D waits for the stream; a non_blocking
 * one records an event on each buffer (pcs_host_record) so the allocator
 * hands it out again only after its last DMA. The GIL is released for the
 * whole pipeline. On a CUDA error a lane stops, waits for the DMAs it has
 * queued, and reports; the caller then waits for the stream before the
 * buffers go back, and the first lane's error becomes the exception.
 *
 * Small copies keep the driver's path: below `min_bytes` starting threads
 * costs more than it saves. The knobs are module state, read with the GIL at
 * the start of each copy; _pageable_copy_config() reads and sets them (tests
 * use it to reach chunk boundaries with small tensors; benchmarks to tune). */
#include "tensor/copy_pageable.h"

#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "runtime/host_allocator.h"

#define MAX_LANES 16
/* A lane below this many bytes is not worth a thread. */
#define MIN_LANE_BYTES ((size_t)2 << 20)
/* Nor a chunk below this many bytes worth a DMA of its own. */
#define MIN_CHUNK_BYTES ((size_t)64 << 10)

/* ------------------------------------------------------------------------ */
/* Configuration                                                             */

static struct {
    size_t min_bytes;   /* copies below this take the driver's path */
    size_t chunk_bytes; /* the largest chunk (a power of two: the host cache's size class) */
    int threads;        /* host threads (lanes) at most; 0: chosen from the CPU count */
    uint64_t pipelined; /* copies that took this path (for tests) */
} cfg = {(size_t)8 << 20, (size_t)2 << 20, 0, 0};

static int max_lanes(void)
{
    if (cfg.threads > 0)
        return cfg.threads < MAX_LANES ? cfg.threads : MAX_LANES;
    /* Half the cores: the other half keep Python and the driver's threads
     * going; 8 lanes saturate the copy engine's bandwidth on an H100 host. */
    long n = sysconf(_SC_NPROCESSORS_ONLN) / 2;
    return n < 1 ? 1 : n > 8 ? 8 : (int)n;
}

bool pcs_pageable_pipelined(size_t nbytes) { return nbytes >= cfg.min_bytes && nbytes > 0; }

/* ------------------------------------------------------------------------ */
/* One lane: a contiguous part, two buffers, two events                      */

typedef struct {
    char *dev, *host;     /* this lane's part on each side */
    size_t nbytes, chunk; /* the part, and its chunk size */
    bool h2d;
    int device;
    cudaStream_t stream;
    void *buf[2], *handle[2];
    cudaEvent_t ev[2];
    bool pending[2]; /* ev[b] recorded and not yet waited for */
    /* the first failure: the CUDA status, the call, its line */
    cudaError_t err;
    const char *call;
    int line;
    pthread_t tid;
    bool spawned;
} lane;

#define LANE_CHECK(L, expr)                                                    \
    do {                                                                       \
        cudaError_t e_ = (expr);                                               \
        if (e_ != cudaSuccess) {                                               \
            (L)->err = e_;                                                     \
            (L)->call = #expr;                                                 \
            (L)->line = __LINE__;                                              \
            goto fail;                                                         \
        }                                                                      \
    } while (0)

/* Queues the DMA of chunk k and records its buffer's event. */
static cudaError_t lane_dma(lane *L, size_t k, const char **call)
{
    int b = (int)(k & 1);
    size_t off = k * L->chunk, len = L->nbytes - off < L->chunk ? L->nbytes - off : L->chunk;
    cudaError_t err =
        L->h2d ? cudaMemcpyAsync(L->dev + off, L->buf[b], len, cudaMemcpyHostToDevice, L->stream)
               : cudaMemcpyAsync(L->buf[b], L->dev + off, len, cudaMemcpyDeviceToHost, L->stream);
    *call = "cudaMemcpyAsync (pageable staging)";
    if (err != cudaSuccess)
        return err;
    *call = "cudaEventRecord (pageable staging)";
    err = cudaEventRecord(L->ev[b], L->stream);
    if (err == cudaSuccess)
        L->pending[b] = true;
    return err;
}

/* Waits until buffer b is free (its DMA done). */
static cudaError_t lane_wait(lane *L, int b)
{
    if (!L->pending[b])
        return cudaSuccess;
    L->pending[b] = false;
    return cudaEventSynchronize(L->ev[b]);
}

static void *lane_run(void *arg)
{
    lane *L = arg;
    /* plan_lanes never gives a chunk below MIN_CHUNK_BYTES (64 KiB) */
    size_t nchunks = (L->nbytes + L->chunk - 1) / L->chunk; /* NOLINT(clang-analyzer-core.DivideZero) */
    const char *call = NULL;
    cudaError_t err;
    if (L->spawned) /* the runtime's current device is per thread */
        LANE_CHECK(L, cudaSetDevice(L->device));
    if (L->h2d) {
        for (size_t k = 0; k < nchunks; k++) {
            int b = (int)(k & 1);
            size_t off = k * L->chunk, len = L->nbytes - off < L->chunk ? L->nbytes - off : L->chunk;
            LANE_CHECK(L, lane_wait(L, b)); /* the DMA of chunk k-2 has read it */
            memcpy(L->buf[b], L->host + off, len);
            if ((err = lane_dma(L, k, &call)) != cudaSuccess)
                goto fail_call;
        }
        /* The last DMAs may still run: the caller waits or records. */
        return NULL;
    }
    if ((err = lane_dma(L, 0, &call)) != cudaSuccess)
        goto fail_call;
    for (size_t k = 0; k < nchunks; k++) {
        int b = (int)(k & 1);
        size_t off = k * L->chunk, len = L->nbytes - off < L->chunk ? L->nbytes - off : L->chunk;
        /* the other buffer's chunk k-1 was copied out last iteration */
        if (k + 1 < nchunks && (err = lane_dma(L, k + 1, &call)) != cudaSuccess)
            goto fail_call;
        LANE_CHECK(L, lane_wait(L, b));
        memcpy(L->host + off, L->buf[b], len);
    }
    return NULL;
fail_call:
    L->err = err;
    L->call = call;
    L->line = __LINE__;
fail:
    /* Whatever this lane queued must be done before its buffers go back. */
    for (int b = 0; b < 2; b++)
        if (L->pending[b])
            (void)cudaEventSynchronize(L->ev[b]);
    L->pending[0] = L->pending[1] = false;
    (void)cudaGetLastError();
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* The copy                                                                  */

static size_t pow2_floor(size_t n)
{
    size_t p = 1;
    while (p <= n / 2)
        p <<= 1;
    return p;
}

/* Splits nbytes into lanes; lane parts are multiples of 4 KiB but the last. */
static int plan_lanes(size_t nbytes, size_t *part, size_t *chunk)
{
    int lanes = max_lanes();
    if ((size_t)lanes > nbytes / MIN_LANE_BYTES)
        lanes = (int)(nbytes / MIN_LANE_BYTES);
    if (lanes < 1)
        lanes = 1;
    size_t p = (nbytes / lanes + 4095) & ~(size_t)4095;
    lanes = (int)((nbytes + p - 1) / p);
    /* At least 4 chunks a lane, so the pipeline fills and drains quickly. */
    size_t c = pow2_floor(cfg.chunk_bytes);
    if (c < MIN_CHUNK_BYTES) /* never 0: the lanes divide by it */
        c = MIN_CHUNK_BYTES;
    while (c > MIN_CHUNK_BYTES && c * 4 > p)
        c >>= 1;
    *part = p;
    *chunk = c;
    return lanes;
}

int pcs_copy_pageable(void *dst, const void *src, size_t nbytes, bool h2d, int device,
                      cudaStream_t stream, bool non_blocking)
{
    size_t part, chunk;
    int nl = plan_lanes(nbytes, &part, &chunk);
    lane lanes[MAX_LANES];
    memset(lanes, 0, sizeof lanes);
    int r = -1, ready = 0;

    /* Buffers and events first, with the GIL (the allocator may raise). A
     * failure to pin falls back to the driver's path, as if small. */
    for (; ready < nl; ready++) {
        lane *L = &lanes[ready];
        size_t off = (size_t)ready * part;
        L->nbytes = nbytes - off < part ? nbytes - off : part;
        L->chunk = chunk;
        L->dev = (char *)(h2d ? dst : src) + off;
        L->host = (char *)(h2d ? src : dst) + off;
        L->h2d = h2d;
        L->device = device;
        L->stream = stream;
        for (int b = 0; b < 2; b++) {
            L->buf[b] = pcs_host_alloc(chunk, &L->handle[b]);
            if (!L->buf[b])
                goto undo;
        }
        cudaError_t err = cudaEventCreateWithFlags(&L->ev[0], cudaEventDisableTiming |
                                                                  cudaEventBlockingSync);
        if (err == cudaSuccess) {
            err = cudaEventCreateWithFlags(&L->ev[1], cudaEventDisableTiming |
                                                          cudaEventBlockingSync);
            if (err != cudaSuccess)
                cudaEventDestroy(L->ev[0]);
        }
        if (err != cudaSuccess) {
            pcs_cuda_error(err, "cudaEventCreateWithFlags (pageable staging)", __FILE__, __LINE__);
            goto undo;
        }
    }
    cfg.pipelined++;

    cudaError_t sync_err = cudaSuccess;
    bool failed = false;
    Py_BEGIN_ALLOW_THREADS
    pthread_attr_t attr;
    bool have_attr = pthread_attr_init(&attr) == 0;
    if (have_attr)
        pthread_attr_setstacksize(&attr, (size_t)256 << 10);
    for (int i = 1; i < nl; i++) {
        lanes[i].spawned = true;
        if (pthread_create(&lanes[i].tid, have_attr ? &attr : NULL, lane_run, &lanes[i]) != 0)
            lanes[i].spawned = false; /* run below, on this thread */
    }
    if (have_attr)
        pthread_attr_destroy(&attr);
    lane_run(&lanes[0]);
    for (int i = 1; i < nl; i++) {
        if (lanes[i].spawned)
            pthread_join(lanes[i].tid, NULL);
        else
            lane_run(&lanes[i]);
    }
    for (int i = 0; i < nl; i++)
        failed |= lanes[i].err != cudaSuccess;
    /* On failure, everything queued ends before the buffers go back; a
     * blocking H2D waits for its data to be on the device. */
    if (failed || (h2d && !non_blocking))
        sync_err = cudaStreamSynchronize(stream);
    Py_END_ALLOW_THREADS

    if (failed) {
        for (int i = 0; i < nl; i++)
            if (lanes[i].err != cudaSuccess) {
                pcs_cuda_error(lanes[i].err, lanes[i].call, __FILE__, lanes[i].line);
                break;
            }
        (void)cudaGetLastError();
    } else if (sync_err != cudaSuccess) {
        pcs_cuda_error(sync_err, "cudaStreamSynchronize", __FILE__, __LINE__);
    } else {
        r = 0;
        /* A non_blocking H2D's last DMAs may still read the buffers. */
        for (int i = 0; r == 0 && h2d && non_blocking && i < nl; i++)
            for (int b = 0; r == 0 && b < 2; b++)
                r = pcs_host_record(lanes[i].handle[b], stream, device);
        if (r < 0) { /* the events are not there to guard the buffers */
            Py_BEGIN_ALLOW_THREADS
            (void)cudaStreamSynchronize(stream);
            Py_END_ALLOW_THREADS
            (void)cudaGetLastError();
        }
    }
    if (r == 0 && !h2d)
        r = pcs_deferred_check(); /* data reached the host: report the device's errors (common.h) */
    for (int i = 0; i < nl; i++) {
        cudaEventDestroy(lanes[i].ev[0]); /* a pending event goes when it fires */
        cudaEventDestroy(lanes[i].ev[1]);
        pcs_host_free(lanes[i].handle[0]);
        pcs_host_free(lanes[i].handle[1]);
    }
    return r;

undo:
    /* Nothing was queued: give back what was taken, then take the driver's path. */
    for (int i = 0; i <= ready && i < nl; i++) {
        if (i < ready) {
            cudaEventDestroy(lanes[i].ev[0]);
            cudaEventDestroy(lanes[i].ev[1]);
        }
        pcs_host_free(lanes[i].handle[0]);
        pcs_host_free(lanes[i].handle[1]);
    }
    PyErr_Clear();
    (void)cudaGetLastError();
    return 1;
}

/* ------------------------------------------------------------------------ */
/* _pageable_copy_config(min_bytes=None, chunk_bytes=None, threads=None)     */

/* An optional int argument (None keeps *v); stops at its own error, so no
 * second conversion runs with an exception set. */
static int opt_size(PyObject *o, Py_ssize_t *v)
{
    if (o == Py_None)
        return 0;
    Py_ssize_t x = PyNumber_AsSsize_t(o, PyExc_OverflowError);
    if (x == -1 && PyErr_Occurred())
        return -1;
    *v = x;
    return 0;
}

static PyObject *py_pageable_copy_config(PyObject *m, PyObject *args, PyObject *kw)
{
    PCS_UNUSED(m);
    static char *kwlist[] = {"min_bytes", "chunk_bytes", "threads", NULL};
    PyObject *omin = Py_None, *ochunk = Py_None, *othreads = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OOO:_pageable_copy_config", kwlist, &omin,
                                     &ochunk, &othreads))
        return NULL;
    PyObject *old = Py_BuildValue("{s:n,s:n,s:i,s:i,s:K}", "min_bytes", (Py_ssize_t)cfg.min_bytes,
                                  "chunk_bytes", (Py_ssize_t)cfg.chunk_bytes, "threads",
                                  cfg.threads, "lanes", max_lanes(), "pipelined",
                                  (unsigned long long)cfg.pipelined);
    if (!old)
        return NULL;
    Py_ssize_t vmin = (Py_ssize_t)cfg.min_bytes, vchunk = (Py_ssize_t)cfg.chunk_bytes,
               vthreads = cfg.threads;
    if (opt_size(omin, &vmin) < 0 || opt_size(ochunk, &vchunk) < 0 ||
        opt_size(othreads, &vthreads) < 0)
        goto bad;
    if (vmin < 0 || vchunk < (Py_ssize_t)MIN_CHUNK_BYTES || vthreads < 0 || vthreads > MAX_LANES) {
        PyErr_Format(PyExc_ValueError,
                     "_pageable_copy_config: min_bytes >= 0, chunk_bytes >= %zu, "
                     "0 <= threads <= %d",
                     MIN_CHUNK_BYTES, MAX_LANES);
        goto bad;
    }
    cfg.min_bytes = (size_t)vmin;
    cfg.chunk_bytes = pow2_floor((size_t)vchunk);
    cfg.threads = (int)vthreads;
    return old;
bad:
    Py_DECREF(old);
    return NULL;
}

static PyMethodDef pageable_methods[] = {
    {"_pageable_copy_config", (PyCFunction)(void (*)(void))py_pageable_copy_config,
     METH_VARARGS | METH_KEYWORDS,
     "The pipelined pageable copy's settings (min_bytes, chunk_bytes, threads; 0 threads: "
     "from the CPU count) and how many copies took it; sets those given, returns the old."},
    {NULL, NULL, 0, NULL},
};

int pcs_copy_pageable_init(PyObject *module)
{
    return PyModule_AddFunctions(module, pageable_methods);
}
