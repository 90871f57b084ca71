/* driver.c: CUDA driver entry points, resolved through the runtime.
 *
 * The module links only the CUDA runtime, not libcuda, so a driver function
 * is reached through cudaGetDriverEntryPointByVersion, once, and kept. Used
 * for the driver's memsets of 2- and 4-byte patterns: the runtime has only
 * the byte memset, and a fill kernel of ours costs a kernel launch (about
 * 3 us of host time on the H100 machines) where a driver memset costs about
 * one microsecond, which is what `full`, `ones` and `fill_` of small
 * tensors are made of. */
#include "runtime/driver.h"

#include <cuda.h>

typedef CUresult (*memset_fn)(CUdeviceptr, unsigned int, size_t, CUstream);

/* One entry a unit size (1, 2, 4); 0 unresolved, 1 resolved, -1 absent. */
static int memset_state[3];
static memset_fn memset_fns[3];

static const char *const memset_names[3] = {"cuMemsetD8Async", "cuMemsetD16Async", "cuMemsetD32Async"};

static memset_fn resolve(int slot)
{
    if (memset_state[slot] == 0) {
        void *fn = NULL;
        enum cudaDriverEntryPointQueryResult found;
        cudaError_t err = cudaGetDriverEntryPointByVersion(memset_names[slot], &fn, 12000, cudaEnableDefault,
                                                           &found);
        if (err != cudaSuccess || found != cudaDriverEntryPointSuccess || !fn) {
            (void)cudaGetLastError(); /* not an error of the caller's op */
            memset_state[slot] = -1;
        } else {
            memset_fns[slot] = (memset_fn)fn;
            memset_state[slot] = 1;
        }
    }
    return memset_state[slot] > 0 ? memset_fns[slot] : NULL;
}

int pcs_driver_memset(int device, void *dst, uint32_t pattern, int unit, size_t count,
                      cudaStream_t stream)
{
    int slot = unit == 1 ? 0 : unit == 2 ? 1 : unit == 4 ? 2 : -1;
    memset_fn fn = slot >= 0 ? resolve(slot) : NULL;
    if (!fn)
        return 0;
    CUresult r = fn((CUdeviceptr)(uintptr_t)dst, pattern, count, (CUstream)stream);
    if (r == CUDA_ERROR_INVALID_CONTEXT) {
        /* A thread whose runtime calls so far needed no context (a new
         * thread that found its current device already right) has none
         * current for the driver: cudaSetDevice makes the device's primary
         * context current, then the memset is tried once more. */
        cudaError_t err = cudaSetDevice(device);
        if (err != cudaSuccess)
            return pcs_cuda_error(err, "cudaSetDevice", __FILE__, __LINE__);
        r = fn((CUdeviceptr)(uintptr_t)dst, pattern, count, (CUstream)stream);
    }
    /* CUresult and cudaError_t share their codes (out of memory, illegal
     * address, launch failure...), so the runtime's message and exception
     * class apply */
    if (r != CUDA_SUCCESS)
        return pcs_cuda_error((cudaError_t)r, memset_names[slot], __FILE__, __LINE__);
    return 1;
}
