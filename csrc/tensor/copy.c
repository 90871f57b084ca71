/* copy.c: every copy between two tensors, and fills.
 *
 * When a copy waits, and on which stream it runs (PyTorch's rules):
 *
 *   CPU -> CPU      a C loop (memcpy when both sides are dense alike); the
 *                   GIL is released for large copies.
 *   same device     one kernel or cudaMemcpyAsync on that device's current
 *                   stream; the host never waits.
 *   CPU -> CUDA     cudaMemcpyAsync on the destination's current stream (large
 *                   copies of pageable memory: pipelined through pinned
 *                   staging on several host threads, copy_pageable.c). With
 *                   non_blocking=True from pinned memory it returns at once
 *                   and records an event on the pinned block, so the host
 *                   allocator does not hand the block out again before the
 *                   copy has read it. Otherwise it waits for the stream.
 *   CUDA -> CPU     cudaMemcpyAsync on the source's current stream (large
 *                   pageable copies: the same pipeline); waits
 *                   for it (GIL released) unless non_blocking=True into
 *                   pinned memory (event recorded on the block, as above).
 *   CUDA -> CUDA'   a two-way barrier first: the source's current stream
 *                   waits for an event recorded on the destination's current
 *                   stream (no one may still be using the destination), the
 *                   copy runs on the source's stream (cudaMemcpyPeerAsync with
 *                   peer access enabled once per pair, else staged through a
 *                   pinned host buffer), then the destination's stream waits
 *                   for the copy. The host does not wait (except when staging).
 *
 * Copies across devices move bytes only: when dtypes differ or the layouts
 * are not dense alike, contiguous temporaries are made first (the cast runs
 * on the CPU for a blocking device-to-host copy, otherwise on the source
 * device), as PyTorch's copy_ does. Temporaries are allocated on the current
 * stream of the device that uses them, so freeing them is stream-ordered. */
#include "tensor/copy.h"
#include "runtime/driver.h"
#include "core/iter.h"
#include "tensor/copy_pageable.h"
#include "tensor/layout.h"

#include <string.h>

#include "runtime/host_allocator.h"
#include "kernels/kernels.h"
#include "core/scalar.h"
#include "runtime/device.h"
#include "runtime/stream.h"

/* Below this many bytes a host copy keeps the GIL: releasing costs more. */
#define GIL_RELEASE_BYTES (1 << 16)

/* ------------------------------------------------------------------------ */
/* Geometry                                                                  */

bool pcs_tensor_is_dense(const PcsTensor *t)
{
    /* Sort dims by stride (insertion sort; ndim is small), ignoring size-1
     * dims, and check each stride equals the product of the sizes inside. */
    int perm[PCS_MAX_DIMS], n = 0;
    for (int i = 0; i < t->ndim; i++) {
        if (t->sizes[i] == 0)
            return true;
        if (t->sizes[i] != 1)
            perm[n++] = i;
    }
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && t->strides[perm[j - 1]] > t->strides[perm[j]]; j--) {
            int tmp = perm[j];
            perm[j] = perm[j - 1];
            perm[j - 1] = tmp;
        }
    int64_t expected = 1;
    for (int i = 0; i < n; i++) {
        if (t->strides[perm[i]] != expected)
            return false;
        expected *= t->sizes[perm[i]];
    }
    return true;
}

/* Both sides cover memory the same way, so the bytes can move in one block. */
static bool same_dense_layout(const PcsTensor *a, const PcsTensor *b)
{
    if (pcs_tensor_is_contiguous(a) && pcs_tensor_is_contiguous(b))
        return true;
    for (int i = 0; i < a->ndim; i++)
        if (a->sizes[i] != 1 && a->strides[i] != b->strides[i])
            return false;
    return pcs_tensor_is_dense(a);
}

/* The core's view of a copy's side. */
static pcs_iter_operand iter_op(const PcsTensor *t)
{
    pcs_iter_operand o = {pcs_tensor_data(t), t->ndim, t->sizes, t->strides, pcs_itemsize(t->dtype)};
    return o;
}

/* The shared geometry of dst and src (same sizes), planned by the core:
 * size-1 dims dropped, dims in dst's memory order, merged where both allow. */
static void make_geom(const PcsTensor *dst, const PcsTensor *src, pcs_ew_geom *g)
{
    pcs_iter_operand io[2] = {iter_op(dst), iter_op(src)};
    pcs_iter_plan plan;
    pcs_iter_build(&plan, dst->ndim, dst->sizes, 2, io);
    *g = plan.geom;
}

/* Whether the planned geometry is one run of unit stride on both sides:
 * two dense tensors with the same strides (x.t().half() into a result
 * that kept x.t()'s strides), which move as flat ranges from their first
 * elements. */
static bool geom_flat(const pcs_ew_geom *g)
{
    return g->ndim == 0 || (g->ndim == 1 && g->strides[0][0] == 1 && g->strides[1][0] == 1);
}

/* ------------------------------------------------------------------------ */
/* CPU                                                                       */

static void cpu_strided_copy(char *dst, int dd, const char *src, int sd, const pcs_ew_geom *g)
{
    int dsz = pcs_itemsize(dd), ssz = pcs_itemsize(sd);
    if (g->ndim == 0) { /* one element */
        if (dd == sd)
            memcpy(dst, src, dsz);
        else
            pcs_scalar_store(dd, dst, pcs_scalar_load(sd, src));
        return;
    }
    int64_t idx[PCS_MAX_DIMS] = {0};
    int last = g->ndim - 1;
    int64_t inner = g->sizes[last], ds = g->strides[0][last] * dsz,
            ss = g->strides[1][last] * ssz;
    for (;;) {
        int64_t doff = 0, soff = 0;
        for (int i = 0; i < last; i++) {
            doff += idx[i] * g->strides[0][i];
            soff += idx[i] * g->strides[1][i];
        }
        char *d = dst + doff * dsz;
        const char *s = src + soff * ssz;
        if (dd == sd && ds == dsz && ss == ssz)
            memmove(d, s, inner * dsz);
        else if (dd == sd)
            for (int64_t j = 0; j < inner; j++)
                memcpy(d + j * ds, s + j * ss, dsz);
        else
            for (int64_t j = 0; j < inner; j++)
                pcs_scalar_store(dd, d + j * ds, pcs_scalar_load(sd, s + j * ss));
        int i = last - 1;
        for (; i >= 0; i--) {
            if (++idx[i] < g->sizes[i])
                break;
            idx[i] = 0;
        }
        if (i < 0)
            return;
    }
}

static int copy_cpu(PcsTensor *dst, PcsTensor *src)
{
    int64_t n = pcs_tensor_numel(dst);
    size_t nbytes = (size_t)n * pcs_itemsize(dst->dtype);
    char *d = pcs_tensor_data(dst);
    const char *s = pcs_tensor_data(src);
    if (dst->dtype == src->dtype && same_dense_layout(dst, src)) {
        /* Dense alike: the lowest address of each side starts the block. */
        int64_t dmin = 0, smin = 0;
        for (int i = 0; i < dst->ndim; i++) {
            if (dst->strides[i] < 0)
                dmin += (dst->sizes[i] - 1) * dst->strides[i];
            if (src->strides[i] < 0)
                smin += (src->sizes[i] - 1) * src->strides[i];
        }
        d += dmin * pcs_itemsize(dst->dtype);
        s += smin * pcs_itemsize(src->dtype);
        if (nbytes >= GIL_RELEASE_BYTES) {
            Py_BEGIN_ALLOW_THREADS
            memmove(d, s, nbytes);
            Py_END_ALLOW_THREADS
        } else {
            memmove(d, s, nbytes);
        }
        return 0;
    }
    pcs_ew_geom g;
    make_geom(dst, src, &g);
    if (nbytes >= GIL_RELEASE_BYTES) {
        Py_BEGIN_ALLOW_THREADS
        cpu_strided_copy(d, dst->dtype, s, src->dtype, &g);
        Py_END_ALLOW_THREADS
    } else {
        cpu_strided_copy(d, dst->dtype, s, src->dtype, &g);
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* One device                                                                */

/* The launch check reads the thread's last error, which also holds the
 * status of earlier API calls that were already handled (for example
 * cudaErrorNotReady from event queries elsewhere). Clear it so the check
 * after a launch sees only that launch; sticky errors persist regardless. */
static void clear_stale_error(void) { (void)cudaGetLastError(); }

static int copy_same_device(PcsTensor *dst, PcsTensor *src)
{
    int dev = dst->device;
    PcsDeviceGuard guard;
    if (pcs_device_guard_enter(&guard, dev) < 0)
        return -1;
    cudaStream_t stream = pcs_current_stream(dev);
    int r = 0;
    pcs_ew_geom g;
    bool contig = pcs_tensor_is_contiguous(dst) && pcs_tensor_is_contiguous(src);
    if (!contig) {
        make_geom(dst, src, &g);
        contig = geom_flat(&g);
    }
    if (dst->dtype == src->dtype && contig) {
        size_t nbytes = (size_t)pcs_tensor_numel(dst) * pcs_itemsize(dst->dtype);
        PCS_CUDA_CHECK_GOTO(cudaMemcpyAsync(pcs_tensor_data(dst), pcs_tensor_data(src), nbytes,
                                            cudaMemcpyDeviceToDevice, stream),
                            fail);
    } else {
        clear_stale_error();
        pcs_launch_copy(pcs_tensor_data(dst), dst->dtype, pcs_tensor_data(src), src->dtype,
                        pcs_tensor_numel(dst), contig ? NULL : &g, stream);
        if (PCS_CHECK_LAUNCH(stream, "copy kernel") < 0)
            goto fail;
    }
    pcs_device_guard_exit(&guard);
    return r;
fail:
    pcs_device_guard_exit(&guard);
    return -1;
}

/* ------------------------------------------------------------------------ */
/* Between devices: bytes of dense-alike, same-dtype tensors                 */

/* Waits for a stream with the GIL released. `to_host`: data is coming
 * back to the host, so the errors found on the device meanwhile are raised
 * (common.h): no value reaches the host past a bad index unreported. */
static int sync_stream(cudaStream_t stream, bool to_host)
{
    cudaError_t err;
    Py_BEGIN_ALLOW_THREADS
    err = cudaStreamSynchronize(stream);
    Py_END_ALLOW_THREADS
    if (err != cudaSuccess)
        return pcs_cuda_error(err, "cudaStreamSynchronize", __FILE__, __LINE__);
    return to_host ? pcs_deferred_check() : 0;
}

/* cudaMemcpyAsync with the GIL released when the host may be busy staging
 * pageable memory. */
static int memcpy_async(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind,
                        cudaStream_t stream)
{
    cudaError_t err;
    if (n >= GIL_RELEASE_BYTES) {
        Py_BEGIN_ALLOW_THREADS
        err = cudaMemcpyAsync(dst, src, n, kind, stream);
        Py_END_ALLOW_THREADS
    } else {
        err = cudaMemcpyAsync(dst, src, n, kind, stream);
    }
    if (err != cudaSuccess)
        return pcs_cuda_error(err, "cudaMemcpyAsync", __FILE__, __LINE__);
    return 0;
}

/* The pinned-allocator block behind a host tensor, if any. */
static void *pinned_block(const PcsTensor *t)
{
    return t->storage->kind == PCS_STORAGE_PINNED ? t->storage->host_block : NULL;
}

/* Lowest address a dense tensor touches. */
static char *dense_base(const PcsTensor *t)
{
    int64_t off = 0;
    for (int i = 0; i < t->ndim; i++)
        if (t->strides[i] < 0)
            off += (t->sizes[i] - 1) * t->strides[i];
    return (char *)pcs_tensor_data(t) + off * pcs_itemsize(t->dtype);
}

static int copy_host_device_bytes(PcsTensor *dst, PcsTensor *src, size_t nbytes, bool nb)
{
    bool h2d = dst->device >= 0;
    int dev = h2d ? dst->device : src->device;
    PcsTensor *host = h2d ? src : dst;
    PcsDeviceGuard guard;
    if (pcs_device_guard_enter(&guard, dev) < 0)
        return -1;
    cudaStream_t stream = pcs_current_stream(dev);
    void *block = pinned_block(host);
    int r = 1;
    /* Large copies of pageable memory: our pipeline (copy_pageable.c). */
    if (!block && pcs_pageable_pipelined(nbytes) && !pcs_host_is_pinned(dense_base(host)))
        r = pcs_copy_pageable(dense_base(dst), dense_base(src), nbytes, h2d, dev, stream, nb);
    if (r <= 0) {
        pcs_device_guard_exit(&guard);
        return r;
    }
    r = memcpy_async(dense_base(dst), dense_base(src), nbytes,
                     h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, stream);
    if (r == 0 && nb && block)
        r = pcs_host_record(block, stream, dev); /* guards the block's reuse */
    else if (r == 0)
        r = sync_stream(stream, !h2d); /* the data must be there (or read) on return */
    pcs_device_guard_exit(&guard);
    return r;
}

/* Makes `waiter` (on device wdev) wait for the work queued so far on
 * `stream` of device sdev. */
static int stream_wait(cudaStream_t waiter, int wdev, cudaStream_t stream, int sdev)
{
    PcsDeviceGuard guard;
    if (pcs_device_guard_enter(&guard, sdev) < 0)
        return -1;
    cudaEvent_t ev;
    PCS_CUDA_CHECK_GOTO(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), fail);
    cudaError_t err = cudaEventRecord(ev, stream);
    if (err == cudaSuccess && pcs_cuda_set_device_raw(wdev) == 0)
        err = cudaStreamWaitEvent(waiter, ev, 0);
    /* Destroying a pending event is fine: its resources go when it fires. */
    cudaEventDestroy(ev);
    if (err != cudaSuccess) {
        pcs_cuda_error(err, "cudaEventRecord/cudaStreamWaitEvent", __FILE__, __LINE__);
        goto fail;
    }
    if (PyErr_Occurred())
        goto fail;
    pcs_device_guard_exit(&guard);
    return 0;
fail:
    pcs_device_guard_exit(&guard);
    return -1;
}

/* Peer access from device a to b's memory: enabled once, remembered. */
static signed char peer_state[PCS_MAX_DEVICES][PCS_MAX_DEVICES]; /* 0 ?, 1 yes, -1 no */

static bool peer_access(int a, int b)
{
    if (peer_state[a][b] == 0) {
        int can = 0;
        if (cudaDeviceCanAccessPeer(&can, a, b) != cudaSuccess)
            can = 0;
        if (can) {
            PcsDeviceGuard guard;
            if (pcs_device_guard_enter(&guard, a) < 0) {
                PyErr_Clear();
                can = 0;
            } else {
                cudaError_t err = cudaDeviceEnablePeerAccess(b, 0);
                if (err == cudaErrorPeerAccessAlreadyEnabled)
                    err = cudaSuccess;
                (void)cudaGetLastError(); /* not sticky: clear it */
                can = err == cudaSuccess;
                pcs_device_guard_exit(&guard);
            }
        }
        peer_state[a][b] = can ? 1 : -1;
    }
    return peer_state[a][b] == 1;
}


static int copy_device_device_bytes(PcsTensor *dst, PcsTensor *src, size_t nbytes)
{
    int sdev = src->device, ddev = dst->device;
    cudaStream_t ss = pcs_current_stream(sdev), ds = pcs_current_stream(ddev);
    if (peer_access(sdev, ddev)) {
        /* barrier: the source stream waits for pending work on the destination */
        if (stream_wait(ss, sdev, ds, ddev) < 0)
            return -1;
        PcsDeviceGuard guard;
        if (pcs_device_guard_enter(&guard, sdev) < 0)
            return -1;
        cudaError_t err = cudaMemcpyPeerAsync(dense_base(dst), ddev, dense_base(src), sdev,
                                              nbytes, ss);
        pcs_device_guard_exit(&guard);
        if (err != cudaSuccess)
            return pcs_cuda_error(err, "cudaMemcpyPeerAsync", __FILE__, __LINE__);
        /* the destination's stream continues after the copy */
        return stream_wait(ds, ddev, ss, sdev);
    }
    /* Staged through pinned host memory: D2H on the source's stream (waited
     * for), then H2D on the destination's stream. */
    void *handle;
    void *buf = pcs_host_alloc(nbytes, &handle);
    if (!buf)
        return -1;
    int r = -1;
    PcsDeviceGuard guard;
    if (pcs_device_guard_enter(&guard, sdev) < 0)
        goto out;
    cudaError_t err = cudaMemcpyAsync(buf, dense_base(src), nbytes, cudaMemcpyDeviceToHost, ss);
    if (err != cudaSuccess) {
        pcs_cuda_error(err, "cudaMemcpyAsync (staging to host)", __FILE__, __LINE__);
        pcs_device_guard_exit(&guard);
        goto out;
    }
    r = sync_stream(ss, false); /* staging between devices: nothing reaches the user */
    pcs_device_guard_exit(&guard);
    if (r < 0 || pcs_device_guard_enter(&guard, ddev) < 0) {
        r = -1;
        goto out;
    }
    err = cudaMemcpyAsync(dense_base(dst), buf, nbytes, cudaMemcpyHostToDevice, ds);
    if (err != cudaSuccess) {
        pcs_cuda_error(err, "cudaMemcpyAsync (staging to device)", __FILE__, __LINE__);
        r = -1;
    } else {
        r = pcs_host_record(handle, ds, ddev);
    }
    pcs_device_guard_exit(&guard);
out:
    pcs_host_free(handle);
    return r;
}

/* ------------------------------------------------------------------------ */
/* Between devices: the general case                                         */

static PcsTensor *empty_like_dtype(PcsTensor *t, int dtype, int device)
{
    return pcs_tensor_empty(t->ndim, t->sizes, dtype, device, false);
}

/* src (on its device) as `dtype` in the layout of `like`: src itself when
 * it is that already. */
static PcsTensor *twin_on_own_device(PcsTensor *src, PcsTensor *like, int dtype)
{
    if (src->dtype == dtype && same_dense_layout(like, src))
        return (PcsTensor *)Py_NewRef(src);
    PcsTensor *t = pcs_tensor_empty_strided(like->ndim, like->sizes, like->strides, dtype,
                                            src->device, false);
    if (t && pcs_copy(t, src, false) < 0)
        Py_CLEAR(t);
    return t;
}

static int copy_across(PcsTensor *dst, PcsTensor *src, bool nb)
{
    if (dst->dtype == src->dtype && same_dense_layout(dst, src)) {
        size_t nbytes = (size_t)pcs_tensor_numel(dst) * pcs_itemsize(dst->dtype);
        if (dst->device >= 0 && src->device >= 0)
            return copy_device_device_bytes(dst, src, nbytes);
        return copy_host_device_bytes(dst, src, nbytes, nb);
    }
    /* Temporaries of one dtype and one dense layout (dst's when dst is
     * dense: a transposed result gets its bytes without a transpose on
     * either side), then recurse into the bytes' copy. The cast runs on the
     * source device, except for a blocking copy to the host, where it runs
     * on the CPU (copy_cpu) once the bytes are there. */
    int dtype = dst->device >= 0 || nb ? dst->dtype : src->dtype;
    int64_t unused[PCS_MAX_DIMS];
    PcsTensor *dst_c = dst->dtype == dtype && pcs_tensor_dense_strides(dst, unused)
                           ? (PcsTensor *)Py_NewRef(dst)
                           : pcs_tensor_empty_as(dst, PCS_FORMAT_KEEP_DENSE, dtype, dst->device, false);
    if (!dst_c)
        return -1;
    PcsTensor *src_c = twin_on_own_device(src, dst_c, dtype);
    int r = src_c ? copy_across(dst_c, src_c, nb) : -1;
    if (r == 0 && dst_c != dst)
        r = pcs_copy(dst, dst_c, nb);
    Py_XDECREF(src_c);
    Py_DECREF(dst_c);
    return r;
}

int pcs_copy(PcsTensor *dst, PcsTensor *src, bool non_blocking)
{
    if (dst == src)
        return 0;
    /* torch's copy_ refuses an expanded dst and one partly overlapping src. */
    pcs_iter_operand od = iter_op(dst), os = iter_op(src);
    if (pcs_iter_check_overlap(&od, 1, &os) < 0)
        return -1;
    PcsTensor *srcx = NULL;
    bool same_shape = dst->ndim == src->ndim &&
                      memcmp(dst->sizes, src->sizes, dst->ndim * sizeof(int64_t)) == 0;
    if (!same_shape) {
        srcx = pcs_tensor_expand(src, dst->ndim, dst->sizes);
        if (!srcx)
            return -1;
        src = srcx;
    }
    int r = 0;
    if (pcs_tensor_numel(dst) == 0)
        r = 0;
    else if (dst->device < 0 && src->device < 0)
        r = copy_cpu(dst, src);
    else if (dst->device == src->device)
        r = copy_same_device(dst, src);
    else
        r = copy_across(dst, src, non_blocking);
    Py_XDECREF(srcx);
    return r;
}

/* ------------------------------------------------------------------------ */
/* Fill, contiguous, to, read one element                                    */

/* The shortest period (1, 2 or 4 bytes) of an element's byte pattern, 0
 * when it has none of those (an int64 or complex value whose halves differ):
 * a contiguous fill of such a pattern is one driver memset. */
static int memset_unit(const void *value, int isz)
{
    const unsigned char *v = value;
    for (int unit = 1; unit <= 4 && unit <= isz; unit *= 2) {
        bool periodic = isz % unit == 0;
        for (int i = unit; i < isz && periodic; i++)
            periodic = v[i] == v[i % unit];
        if (periodic)
            return unit;
    }
    return 0;
}

static uint32_t memset_pattern(const void *value, int unit)
{
    uint32_t p = 0;
    memcpy(&p, value, (size_t)unit); /* the unit's bytes in memory order (little-endian) */
    return p;
}

int pcs_fill_bytes(PcsTensor *dst_view, const void *value)
{
    if (pcs_tensor_numel(dst_view) == 0)
        return 0;
    /* Filling is idempotent, so torch allows it on an expanded view; writing
     * each distinct element once (stride-0 dims taken as size 1) also keeps
     * a fill of expand(2**62, 1) from looping over every alias. */
    PcsTensor distinct = *dst_view, *dst = &distinct;
    for (int i = 0; i < dst->ndim; i++)
        if (dst->strides[i] == 0)
            dst->sizes[i] = 1;
    int64_t n = pcs_tensor_numel(dst);
    int isz = pcs_itemsize(dst->dtype);
    bool zero = true;
    for (int i = 0; i < isz; i++)
        zero &= ((const unsigned char *)value)[i] == 0;
    /* A dense view in any memory order (x.t(), a permuted image) covers
     * [data, data + n) exactly, as a contiguous one does: filled as one
     * range (a memset where the value allows): x.t().fill_(3) of a float16
     * [8192, 8192] went from 0.33x torch, element by element, to 1.30x on
     * the H200. */
    bool contig = pcs_tensor_is_contiguous(dst) || pcs_tensor_is_dense(dst);
    if (dst->device < 0) {
        char *d = pcs_tensor_data(dst);
        if (contig && zero) {
            memset(d, 0, (size_t)n * isz);
            return 0;
        }
        /* A one-element source broadcast over dst (stride 0 everywhere). */
        PcsTensor src = *dst;
        for (int i = 0; i < src.ndim; i++)
            src.strides[i] = 0;
        pcs_ew_geom g;
        make_geom(dst, &src, &g);
        if (contig) {
            for (int64_t i = 0; i < n; i++)
                memcpy(d + i * isz, value, isz);
        } else {
            cpu_strided_copy(d, dst->dtype, value, dst->dtype, &g);
        }
        return 0;
    }
    PcsDeviceGuard guard;
    if (pcs_device_guard_enter(&guard, dst->device) < 0)
        return -1;
    cudaStream_t stream = pcs_current_stream(dst->device);
    int r = 0;
    int unit = contig && !zero ? memset_unit(value, isz) : 0;
    int done = 0; /* 1 once a memset did it, -1 on error */
    if (contig && zero) {
        cudaError_t err = cudaMemsetAsync(pcs_tensor_data(dst), 0, (size_t)n * isz, stream);
        done = err == cudaSuccess ? 1 : pcs_cuda_error(err, "cudaMemsetAsync", __FILE__, __LINE__);
    } else if (unit) {
        done = pcs_driver_memset(dst->device, pcs_tensor_data(dst), memset_pattern(value, unit), unit,
                                 (size_t)n * isz / unit, stream);
    }
    if (done) {
        r = done < 0 ? -1 : 0;
    } else {
        pcs_ew_geom g;
        if (!contig)
            make_geom(dst, dst, &g);
        clear_stale_error();
        pcs_launch_fill(pcs_tensor_data(dst), isz, value, n, contig ? NULL : &g, stream);
        r = PCS_CHECK_LAUNCH(stream, "fill kernel");
    }
    pcs_device_guard_exit(&guard);
    return r;
}

PcsTensor *pcs_tensor_contiguous(PcsTensor *t, bool force)
{
    if (!force && pcs_tensor_is_contiguous(t))
        return (PcsTensor *)Py_NewRef(t);
    PcsTensor *out = empty_like_dtype(t, t->dtype, t->device);
    if (out && pcs_copy(out, t, false) < 0)
        Py_CLEAR(out);
    return out;
}

static PcsTensor *to_impl(PcsTensor *t, int dtype, int device, bool non_blocking, bool copy,
                          bool pinned, int fmt)
{
    /* torch's to() aliases when nothing changes and the format is
     * preserve_format or the one t suggests */
    bool same_format = fmt == PCS_FORMAT_PRESERVE || fmt == PCS_FORMAT_KEEP_DENSE ||
                       pcs_suggest_format(t->ndim, t->sizes, t->strides) == fmt;
    if (dtype == t->dtype && device == t->device && !copy && same_format &&
        (!pinned || pcs_tensor_is_pinned(t)))
        return (PcsTensor *)Py_NewRef(t);
    PcsTensor *out = pcs_tensor_empty_as(t, fmt, dtype, device, pinned);
    if (out && pcs_copy(out, t, non_blocking) < 0)
        Py_CLEAR(out);
    return out;
}

PcsTensor *pcs_tensor_to(PcsTensor *t, int dtype, int device, bool non_blocking, bool copy,
                         bool pinned)
{
    return to_impl(t, dtype, device, non_blocking, copy, pinned, PCS_FORMAT_KEEP_DENSE);
}

PcsTensor *pcs_tensor_to_format(PcsTensor *t, int dtype, int device, bool non_blocking, bool copy,
                                int fmt)
{
    return to_impl(t, dtype, device, non_blocking, copy, false, fmt);
}

int pcs_read_element(PcsTensor *t, void *buf)
{
    int isz = pcs_itemsize(t->dtype);
    if (t->device < 0) {
        memcpy(buf, pcs_tensor_data(t), isz);
        return 0;
    }
    PcsDeviceGuard guard;
    if (pcs_device_guard_enter(&guard, t->device) < 0)
        return -1;
    cudaStream_t stream = pcs_current_stream(t->device);
    cudaError_t err = cudaMemcpyAsync(buf, pcs_tensor_data(t), isz, cudaMemcpyDeviceToHost, stream);
    int r = err == cudaSuccess ? sync_stream(stream, true)
                               : pcs_cuda_error(err, "cudaMemcpyAsync", __FILE__, __LINE__);
    pcs_device_guard_exit(&guard);
    return r;
}

/* ------------------------------------------------------------------------ */
/* Introspection for tests: peer access and the pinned cache                 */

void pcs_host_cache_info(size_t *nblocks, size_t *in_use, size_t *bytes); /* host_allocator.c */

static PyObject *py_peer_copy_enabled(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    PCS_UNUSED(m);
    if (nargs != 2)
        return PyErr_Format(PyExc_TypeError, "_peer_copy_enabled(src, dst)");
    int a = pcs_cuda_device_arg(args[0]), b = a < 0 ? -1 : pcs_cuda_device_arg(args[1]);
    if (a < 0 || b < 0)
        return NULL;
    return PyBool_FromLong(a != b && peer_access(a, b));
}

static PyObject *py_host_cache_info(PyObject *m, PyObject *noargs)
{
    PCS_UNUSED(m);
    PCS_UNUSED(noargs);
    size_t n, used, bytes;
    pcs_host_cache_info(&n, &used, &bytes);
    return Py_BuildValue("{s:n,s:n,s:n}", "blocks", (Py_ssize_t)n, "in_use", (Py_ssize_t)used,
                         "bytes", (Py_ssize_t)bytes);
}

static PyObject *py_host_empty_cache(PyObject *m, PyObject *noargs)
{
    PCS_UNUSED(m);
    PCS_UNUSED(noargs);
    if (pcs_host_empty_cache() < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef copy_methods[] = {
    {"_peer_copy_enabled", (PyCFunction)(void (*)(void))py_peer_copy_enabled, METH_FASTCALL,
     "Whether copies from src to dst use peer access (enabling it if possible)."},
    {"_host_cache_info", py_host_cache_info, METH_NOARGS,
     "The pinned host cache: blocks, blocks in use, bytes."},
    {"_host_empty_cache", py_host_empty_cache, METH_NOARGS,
     "Returns every unused pinned block to the driver (after its pending copies)."},
    {NULL, NULL, 0, NULL},
};

int pcs_copy_init(PyObject *module)
{
    if (PyModule_AddFunctions(module, copy_methods) < 0)
        return -1;
    return pcs_copy_pageable_init(module);
}
