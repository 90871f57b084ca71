// cat.cu: many small contiguous tensors joined in one launch, behind
// pcs_launch_cat (kernels.h).
//
// cat of a few large tensors is one cudaMemcpyAsync (or one strided copy)
// per input and runs at copy bandwidth already; cat of many small tensors
// would pay a launch per input. Here one launch takes a batch of inputs by
// value (pointers and places, ~1.5 KiB of parameters): blockIdx.y picks the
// input, the x blocks stride over its elements. The output is seen as
// [outer, out_cols] and input i as [outer, cols_i] landing at column
// offset_i (cols and offsets in elements: the cat dim's size times the size
// of the dims after it). Elements move as 1/2/4/8/16-byte words: cat never
// looks at values, so the kernel is instantiated per element size, not per dtype.
#include "ew_common.cuh"
#include "pdl.cuh"

using namespace pcs;

namespace {

struct alignas(16) Bytes16 {
    uint64_t lo, hi;
};

template <class E> __global__ void __launch_bounds__(256) cat_kernel(E *out, int64_t out_cols, int64_t outer, pcs_cat_batch b)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    const int i = blockIdx.y;
    const E *src = (const E *)b.src[i];
    const int64_t cols = b.cols[i], n = outer * cols, step = (int64_t)gridDim.x * blockDim.x;
    E *dst = out + b.offset[i];
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += step) {
        int64_t r = e / cols;
        dst[r * out_cols + (e - r * cols)] = src[e];
    }
}

template <class E> void launch(void *out, int64_t out_cols, int64_t outer, const pcs_cat_batch *b, cudaStream_t st)
{
    int64_t most = 0;
    for (int i = 0; i < b->n; i++)
        most = outer * b->cols[i] > most ? outer * b->cols[i] : most;
    int64_t blocks = (most + 255) / 256, cap = (int64_t)sm_count() * 8;
    dim3 grid((unsigned)(blocks < 1 ? 1 : blocks < cap ? blocks : cap), (unsigned)b->n);
    launch_kernel_pdl(cat_kernel<E>, grid, 256, st, (E *)out, out_cols, outer, *b);
}

} // namespace

extern "C" int pcs_launch_cat(void *out, int itemsize, int64_t outer, int64_t out_cols,
                              const pcs_cat_batch *batch, cudaStream_t stream)
{
    if (batch->n <= 0 || outer <= 0)
        return 0;
    switch (itemsize) {
    case 1: launch<uint8_t>(out, out_cols, outer, batch, stream); return 0;
    case 2: launch<uint16_t>(out, out_cols, outer, batch, stream); return 0;
    case 4: launch<uint32_t>(out, out_cols, outer, batch, stream); return 0;
    case 8: launch<uint64_t>(out, out_cols, outer, batch, stream); return 0;
    case 16: launch<Bytes16>(out, out_cols, outer, batch, stream); return 0;
    default: return -1;
    }
}
