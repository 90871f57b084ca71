/* stream_semaphores.c: zeroed counters that a stream lends to its launches.
 *
 * A reduction split over blocks can combine its splits in the launch that
 * computed them: each block counts itself in its tile's counter and the last
 * to arrive combines the partials (kernels/reduce_kernels.cuh). That needs
 * counters that are zero when the launch starts. A memset before each launch
 * would cost about what the second launch it saves costs, so each stream
 * owns PCS_STREAM_SEMAPHORES counters, zeroed once when they are made, and
 * every kernel that uses them leaves them zero. Launches on one stream run
 * one after another: these kernels are launched early (kernels/pdl.cuh)
 * but wait on the device for the kernel ahead before they touch memory, and
 * do not let the next kernel in early themselves, so two launches never
 * share the counters at once.
 *
 * Only streams that live as long as the process get counters: the legacy
 * default stream and the pool streams (stream.h). An ExternalStream, whose
 * handle another library may destroy and hand out again while work is
 * pending, and a stream being captured into a CUDA graph, whose replays may
 * run on any stream and even twice at once, get none; their reductions take
 * the two-launch path. The counters are never freed (16 KiB a stream used)
 * and are not in the caching allocator's statistics. The table is guarded
 * by the GIL. */
#include "runtime/stream_semaphores.h"

#include "runtime/device.h"
#include "runtime/stream.h"

static unsigned *g_sem[PCS_MAX_DEVICES][PCS_STREAM_POOL_SLOTS];

int pcs_stream_semaphores(int device, cudaStream_t stream, unsigned **out)
{
    *out = NULL;
    int slot = pcs_stream_pool_index(device, stream);
    if (slot < 0)
        return 0;
    enum cudaStreamCaptureStatus cap = cudaStreamCaptureStatusNone;
    cudaError_t e = cudaStreamIsCapturing(stream, &cap);
    if (e != cudaSuccess) {
        /* The legacy stream while another stream captures: it cannot be
         * used for capture-unsafe work anyway; the launch reports it. */
        (void)cudaGetLastError();
        return 0;
    }
    if (cap != cudaStreamCaptureStatusNone)
        return 0;
    unsigned *sem = g_sem[device][slot];
    if (!sem) {
        size_t bytes = PCS_STREAM_SEMAPHORES * sizeof(unsigned);
        e = cudaMalloc((void **)&sem, bytes);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            /* Short of memory for 16 KiB: the two-launch path needs none. */
            if (e == cudaErrorMemoryAllocation)
                return 0;
            return pcs_cuda_error(e, "cudaMalloc (stream semaphores)", __FILE__, __LINE__);
        }
        /* On the stream itself: its next launch, the first to count, runs after. */
        e = cudaMemsetAsync(sem, 0, bytes, stream);
        if (e != cudaSuccess) {
            cudaError_t fe = cudaFree(sem); /* best effort: the memset's error is the one raised */
            (void)fe;
            return pcs_cuda_error(e, "cudaMemsetAsync (stream semaphores)", __FILE__, __LINE__);
        }
        g_sem[device][slot] = sem;
    }
    *out = sem;
    return 0;
}
