// fft.cu: the one kernel the FFT path needs besides cuFFT itself: scaling
// (norm="forward"/"ortho"/inverse "backward") fused with conjugation (hfft,
// ihfft), so a transform never costs more than one extra pass.
#include "kernels.h"
#include "launch.cuh"

namespace {

template <typename T>
__global__ void fft_scale_kernel(T *__restrict__ data, int64_t n, T s_even, T s_odd)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        data[i] *= (i & 1) ? s_odd : s_even;
}

} // namespace

extern "C" void pcs_launch_fft_scale(void *data, int is_double, int64_t n, double s_even,
                                     double s_odd, cudaStream_t stream)
{
    if (n <= 0)
        return;
    const int threads = 256;
    int64_t grid = (n + threads - 1) / threads;
    if (grid > 65535)
        grid = 65535; // grid-stride loop covers the rest
    if (is_double)
        pcs::launch_kernel(fft_scale_kernel<double>, (unsigned)grid, threads, stream, static_cast<double *>(data), n,
                           s_even, s_odd);
    else
        pcs::launch_kernel(fft_scale_kernel<float>, (unsigned)grid, threads, stream, static_cast<float *>(data), n,
                           (float)s_even, (float)s_odd);
}
