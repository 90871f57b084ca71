// pdl.cuh: programmatic dependent launch (compute capability 9.0 and up).
//
// A kernel launched the plain way starts only after the one ahead of it in
// the stream has drained, and the gap between two dependent launches costs
// one to two microseconds of idle device. With this launch the kernel is
// scheduled while the one ahead is finishing and waits on the device
// (pdl_wait) for that kernel's completion and writes. Two uses:
// - the second pass of a split reduction, launched while the first pass
//   runs (the first pass lets it in early with pdl_trigger);
// - the streaming kernels (the reductions, the elementwise kernels of
//   ew_ops.cuh and ew_tiled.cuh, and the copies and fills of copy.cu):
//   each waits at its top, before its first read or write, so the kernel
//   ahead may be anything. On the H100, 50 back-to-back calls: the float16
//   outer-dim sum of [8192, 8192] 49.3 -> 47.7 us, its transposed copy
//   96.0 -> 94.4 us, host-bound small reductions 0.6 to 1.5 us a call less
//   ([256, 4096].sum(0) float16 6.5 -> 5.0 us), elementwise ops, copies and
//   fills of 2^26 elements 0.4 to 3.5 us less;
// - the kernels that chains of small ops meet (the factories of ranges.cu,
//   the random fills and dropout, softmax and its backward, the norms, the
//   loss, the gathers and scatters, cat, the scans, tril, the optimizer
//   steps): on the H200, host loops of one op on about 1024 elements,
//   plain -> early: arange 6.1 -> 3.5 us, softmax 4.4 -> 3.4 us, layer_norm
//   6.4 -> 5.2 us, cumsum 4.6 -> 3.4 us; a small MLP's Adam training step
//   216 -> 200 us. (Kernels that CUB, cuBLAS or cuFFT launch stay plain.)
// A kernel launched this way must call pdl_wait() before it touches global
// memory, and must call pdl_trigger() only when the kernel that follows is
// its own second pass: an early trigger lets the next call's blocks sit on
// the SMs while this kernel streams, which measured 1.4 us slower on a
// float16 [1024, 65536].sum(0).
// PYCUDA_SEM_PDL=0 in the environment turns the early launch off
// (launch.cu), for timing one against the other in one build.
#pragma once

#include <cuda_runtime.h>

#include "launch.cuh"

namespace pcs {

// Whether the current device can start a kernel before the one ahead of
// it in the stream has finished (programmatic dependent launch, compute
// capability 9.0 and up).
inline bool pdl_supported() { return device_attr<cudaDevAttrComputeCapabilityMajor>(1) >= 9; }

// launch_kernel as a programmatic dependent launch: the kernel may begin
// while the one ahead of it in the stream is still running (its blocks are
// scheduled once every block of that kernel has called pdl_trigger() or
// exited), and must call pdl_wait() before it touches global memory.
template <class... P>
inline void launch_kernel_pdl(void (*kernel)(P...), dim3 grid, dim3 block, cudaStream_t stream,
                              typename launch_param<P>::type... args)
{
    if (!pdl_supported()) {
        launch_kernel(kernel, grid, block, stream, args...);
        return;
    }
    void *params[] = {(void *)&args...};
    launch_raw_pdl((const void *)kernel, grid, block, 0, params, stream);
}

// In a first pass: lets the dependent launch begin. In a kernel launched
// with launch_kernel_pdl: waits until the kernel ahead has finished and its
// writes are visible.
// Both are no-ops before compute capability 9.0 (launch_kernel_pdl then
// launches the plain way).
__device__ __forceinline__ void pdl_trigger()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

__device__ __forceinline__ void pdl_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

} // namespace pcs
