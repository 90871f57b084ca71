// tri.cu: tril and triu of a batch of matrices, behind pcs_launch_tri (kernels.h).
//
// The values are never looked at, only moved or zeroed, so the kernel is
// instantiated per element size (1, 2, 4, 8, 16 bytes), not per dtype: an
// all-zero bit pattern is zero in every dtype. Each thread handles one
// element of a contiguous [batch, rows, cols] block; out may be in (tril_ of
// a contiguous tensor): each thread reads and writes only its own element.
#include "ew_common.cuh"
#include "pdl.cuh"

using namespace pcs;

namespace {

struct alignas(16) Bytes16 {
    uint64_t lo, hi;
};

template <class E, class I>
__global__ void __launch_bounds__(256) tri_kernel(E *out, const E *in, I n, I rows, I cols,
                                                  int64_t k, int upper)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    const I step = (I)gridDim.x * blockDim.x;
    for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        I c = i % cols, r = (i / cols) % rows;
        int64_t d = (int64_t)c - (int64_t)r; // which diagonal the element sits on
        bool keep = upper ? d >= k : d <= k;
        out[i] = keep ? in[i] : E{};
    }
}

template <class E>
void launch(void *out, const void *in, int64_t n, int64_t rows, int64_t cols, int64_t k, int upper,
            cudaStream_t st)
{
    int64_t blocks = (n + 255) / 256, cap = (int64_t)sm_count() * 32;
    dim3 grid((unsigned)(blocks < cap ? blocks : cap));
    if (n <= INT32_MAX)
        launch_kernel_pdl(tri_kernel<E, uint32_t>, grid, 256, st, (E *)out, (const E *)in, (uint32_t)n,
                      (uint32_t)rows, (uint32_t)cols, k, upper);
    else
        launch_kernel_pdl(tri_kernel<E, uint64_t>, grid, 256, st, (E *)out, (const E *)in, (uint64_t)n,
                      (uint64_t)rows, (uint64_t)cols, k, upper);
}

} // namespace

extern "C" int pcs_launch_tri(void *out, const void *in, int itemsize, int64_t batch, int64_t rows,
                              int64_t cols, int64_t k, int upper, cudaStream_t stream)
{
    int64_t n = batch * rows * cols;
    if (n <= 0)
        return 0;
    switch (itemsize) {
    case 1: launch<uint8_t>(out, in, n, rows, cols, k, upper, stream); return 0;
    case 2: launch<uint16_t>(out, in, n, rows, cols, k, upper, stream); return 0;
    case 4: launch<uint32_t>(out, in, n, rows, cols, k, upper, stream); return 0;
    case 8: launch<uint64_t>(out, in, n, rows, cols, k, upper, stream); return 0;
    case 16: launch<Bytes16>(out, in, n, rows, cols, k, upper, stream); return 0;
    default: return -1;
    }
}
