// launch.cuh: how the kernel files launch their kernels.
//
// launch_kernel(k, grid, block, stream, args...) is k<<<grid, block, 0,
// stream>>>(args...) without the triple-chevron machinery: the chevron form
// pushes and pops a launch configuration through the runtime's thread-local
// stack before the same cudaLaunchKernel, which measured 0.2 us of the
// 3.5 us that `a + b` on 1024 floats costs from Python (H100, host loop).
// launch_raw (launch.cu) then skips the runtime as well and calls the
// driver's cuLaunchKernel with the kernel's function looked up once.
// The arguments are converted to the kernel's parameter types first, so a
// call reads like the chevron one. Errors are the runtime's as before: the
// caller's PCS_CHECK_LAUNCH sees them through cudaGetLastError.
#pragma once

#include <cuda_runtime.h>

namespace pcs {

// Launches kernel (a __global__ function's host stub) with smem bytes of
// dynamic shared memory; a failed launch leaves its error for
// cudaGetLastError.
void launch_raw(const void *kernel, dim3 grid, dim3 block, size_t smem, void **params, cudaStream_t stream);

// launch_raw as a programmatic dependent launch (pdl.cuh), through the
// driver's cuLaunchKernelEx where it has one.
void launch_raw_pdl(const void *kernel, dim3 grid, dim3 block, size_t smem, void **params, cudaStream_t stream);

// launch_raw in clusters of cluster_x blocks along x (compute capability
// 9.0; pdl.cuh's early launch too); returns the launch's own status.
cudaError_t launch_raw_cluster(const void *kernel, dim3 grid, dim3 block, size_t smem, void **params, cudaStream_t stream,
                        unsigned cluster_x);

template <class T> struct launch_param { using type = T; };

template <class... P>
inline void launch_kernel(void (*kernel)(P...), dim3 grid, dim3 block, cudaStream_t stream,
                          typename launch_param<P>::type... args)
{
    void *params[] = {(void *)&args...};
    launch_raw((const void *)kernel, grid, block, 0, params, stream);
}

// One attribute of the current device, asked once a device (the launch
// paths size their grids by it on every call), or `fallback` when the query
// fails; a failed query's error is cleared so that the caller's launch check
// does not report it as the launch's.
template <cudaDeviceAttr ATTR> inline int device_attr(int fallback)
{
    constexpr int kMaxDevices = 64; // as PCS_MAX_DEVICES
    static int cache[kMaxDevices];
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kMaxDevices) {
        (void)cudaGetLastError();
        return fallback;
    }
    if (!cache[dev]) {
        int v = 0;
        if (cudaDeviceGetAttribute(&v, ATTR, dev) != cudaSuccess || v <= 0) {
            (void)cudaGetLastError();
            v = fallback;
        }
        cache[dev] = v;
    }
    return cache[dev];
}

// Number of SMs of the current device (132 on the H100 when unknown).
inline int sm_count() { return device_attr<cudaDevAttrMultiProcessorCount>(132); }

// launch_kernel with smem bytes of dynamic shared memory.
template <class... P>
inline void launch_kernel_smem(void (*kernel)(P...), dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
                               typename launch_param<P>::type... args)
{
    void *params[] = {(void *)&args...};
    launch_raw((const void *)kernel, grid, block, smem, params, stream);
}

} // namespace pcs
