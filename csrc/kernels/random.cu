// random.cu: Philox fills of contiguous memory (rand, randn, normal_,
// uniform_, bernoulli_, exponential_, randint).
//
// The numbers come from philox.h, the same code the host runs, so a seed
// gives the same values on the CPU and on the GPU. One thread computes one
// Philox block (4 numbers, or 2 for 64-bit results) per step of a
// grid-stride loop and writes it with one packed store: the fill is bound by
// write bandwidth, and the grid is sized to keep every SM full rather than to
// cover n, so large fills reuse threads instead of paying for block launches.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels.h"
#include "launch.cuh"
#include "philox.h"
#include "pdl.cuh"

namespace {

using pcs::launch_kernel_pdl;
using pcs::sm_count;

template <typename T, int N>
struct alignas(sizeof(T) * N) Pack {
    T v[N];
};

// Conversions from the computed value to the stored type: round to nearest
// even for the 16-bit floats, C casts otherwise, "non-zero" for bool; the
// host (scalar.c) follows the same rules.
template <typename T, typename V>
__device__ __forceinline__ T to_out(V v) { return static_cast<T>(v); }
template <>
__device__ __forceinline__ __half to_out<__half, float>(float v) { return __float2half_rn(v); }
template <>
__device__ __forceinline__ __half to_out<__half, double>(double v) { return __double2half(v); }
template <>
__device__ __forceinline__ __nv_bfloat16 to_out<__nv_bfloat16, float>(float v) { return __float2bfloat16_rn(v); }
template <>
__device__ __forceinline__ __nv_bfloat16 to_out<__nv_bfloat16, double>(double v) { return __double2bfloat16(v); }
template <>
__device__ __forceinline__ bool to_out<bool, float>(float v) { return v != 0.0f; }
template <>
__device__ __forceinline__ bool to_out<bool, double>(double v) { return v != 0.0; }
template <>
__device__ __forceinline__ bool to_out<bool, int64_t>(int64_t v) { return v != 0; }
template <>
__device__ __forceinline__ __half to_out<__half, int64_t>(int64_t v) { return __ll2half_rn(v); }
template <>
__device__ __forceinline__ __nv_bfloat16 to_out<__nv_bfloat16, int64_t>(int64_t v) { return __ll2bfloat16_rn(v); }

// One block's numbers, in the precision philox.h computes them for this fill.
template <int PER>
struct Block;
template <>
struct Block<4> {
    float f[4];
    int64_t i[4];
};
template <>
struct Block<2> {
    double f[2];
    int64_t i[2];
};

// KIND >= 0 fixes the fill kind at compile time (the hot fills: normal and
// uniform), so the transform's switch disappears from the loop.
template <int KIND>
__device__ __forceinline__ void compute(const pcs_rng_params &p0, pcs_u32x4 r, Block<4> &b)
{
    pcs_rng_params p = p0;
    if (KIND >= 0)
        p.kind = KIND;
    if (p.kind == PCS_RNG_RANDINT) {
        for (int l = 0; l < 4; l++)
            b.i[l] = pcs_rng_int(&p, r, l);
    } else {
        pcs_rng_block_f32(&p, r, b.f);
    }
}

template <int KIND>
__device__ __forceinline__ void compute(const pcs_rng_params &p0, pcs_u32x4 r, Block<2> &b)
{
    pcs_rng_params p = p0;
    if (KIND >= 0)
        p.kind = KIND;
    if (p.kind == PCS_RNG_RANDINT) {
        for (int l = 0; l < 2; l++)
            b.i[l] = pcs_rng_int(&p, r, l);
    } else {
        pcs_rng_block_f64(&p, r, b.f);
    }
}

template <typename T, int PER, int KIND>
__device__ __forceinline__ T pick(const pcs_rng_params &p, const Block<PER> &b, int l)
{
    const int kind = KIND >= 0 ? KIND : p.kind;
    return kind == PCS_RNG_RANDINT ? to_out<T>(b.i[l]) : to_out<T>(b.f[l]);
}

template <typename T, int PER, int KIND>
__device__ __forceinline__ void store_block(T *out, const pcs_rng_params &p, const Block<PER> &b, int count,
                                            bool vec)
{
    if (vec && count == PER) {
        Pack<T, PER> pk;
#pragma unroll
        for (int l = 0; l < PER; l++)
            pk.v[l] = pick<T, PER, KIND>(p, b, l);
        *reinterpret_cast<Pack<T, PER> *>(out) = pk;
    } else {
        for (int l = 0; l < count; l++)
            out[l] = pick<T, PER, KIND>(p, b, l);
    }
}

// Whole Philox blocks in a grid-stride loop, then the partial last block (if
// n is not a multiple of PER) by the one thread whose index lands on it.
// vec: out is aligned to a whole pack, so full blocks go out in one store.
// I is the loop's index type: 32 bits when the fill is small enough, which
// saves the 64-bit index arithmetic in a loop that is bound by issue rate.
template <typename T, int PER, int KIND, typename I>
__global__ void rng_fill_kernel(T *__restrict__ out, I n, pcs_rng_params p, bool vec)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    const I nfull = n / PER;
    const I stride = (I)gridDim.x * blockDim.x;
    I j = (I)blockIdx.x * blockDim.x + threadIdx.x;
    for (; j < nfull; j += stride) {
        Block<PER> b;
        compute<KIND>(p, pcs_philox(p.seed, p.offset + (uint64_t)j), b);
        store_block<T, PER, KIND>(out + (int64_t)j * PER, p, b, PER, vec);
    }
    if (j == nfull && n % PER) {
        Block<PER> b;
        compute<KIND>(p, pcs_philox(p.seed, p.offset + (uint64_t)j), b);
        store_block<T, PER, KIND>(out + (int64_t)j * PER, p, b, (int)(n % PER), vec);
    }
}

template <typename T>
void launch(void *out, int64_t n, const pcs_rng_params &p, cudaStream_t stream)
{
    const int threads = 256;
    const bool wide = p.wide != 0;
    const int per = wide ? 2 : 4;
    const int64_t nblocks = (n + per - 1) / per;
    // 8 blocks of 256 threads fill an SM (2048 threads); more only adds
    // scheduling work to a bandwidth-bound loop.
    int64_t grid = (nblocks + threads - 1) / threads;
    const int64_t cap = (int64_t)sm_count() * 8;
    if (grid > cap)
        grid = cap;
    if (grid < 1)
        grid = 1;
    const uintptr_t addr = reinterpret_cast<uintptr_t>(out);
    T *o = static_cast<T *>(out);
    // 32-bit indices when every thread index and element count fit
    const bool small = n + (int64_t)grid * threads < INT32_MAX;
    if (wide) {
        bool vec = addr % sizeof(Pack<T, 2>) == 0;
        launch_kernel_pdl(rng_fill_kernel<T, 2, -1, int64_t>, (unsigned)grid, threads, stream, o, n, p, vec);
    } else {
        bool vec = addr % sizeof(Pack<T, 4>) == 0;
        if (p.kind == PCS_RNG_NORMAL && small)
            launch_kernel_pdl(rng_fill_kernel<T, 4, PCS_RNG_NORMAL, int32_t>, (unsigned)grid, threads, stream, o, (int32_t)n, p, vec);
        else if (p.kind == PCS_RNG_NORMAL)
            launch_kernel_pdl(rng_fill_kernel<T, 4, PCS_RNG_NORMAL, int64_t>, (unsigned)grid, threads, stream, o, n, p, vec);
        else if (p.kind == PCS_RNG_UNIFORM && small)
            launch_kernel_pdl(rng_fill_kernel<T, 4, PCS_RNG_UNIFORM, int32_t>, (unsigned)grid, threads, stream, o, (int32_t)n, p, vec);
        else if (p.kind == PCS_RNG_UNIFORM)
            launch_kernel_pdl(rng_fill_kernel<T, 4, PCS_RNG_UNIFORM, int64_t>, (unsigned)grid, threads, stream, o, n, p, vec);
        else
            launch_kernel_pdl(rng_fill_kernel<T, 4, -1, int64_t>, (unsigned)grid, threads, stream, o, n, p, vec);
    }
}

} // namespace

extern "C" int pcs_launch_rng_fill(void *out, int dtype, int64_t n, const pcs_rng_params *p,
                                   cudaStream_t stream)
{
    if (n <= 0)
        return 0;
    switch (dtype) {
    case PCS_BOOL: launch<bool>(out, n, *p, stream); break;
    case PCS_UINT8: launch<uint8_t>(out, n, *p, stream); break;
    case PCS_INT8: launch<int8_t>(out, n, *p, stream); break;
    case PCS_INT16: launch<int16_t>(out, n, *p, stream); break;
    case PCS_INT32: launch<int32_t>(out, n, *p, stream); break;
    case PCS_INT64: launch<int64_t>(out, n, *p, stream); break;
    case PCS_FLOAT16: launch<__half>(out, n, *p, stream); break;
    case PCS_BFLOAT16: launch<__nv_bfloat16>(out, n, *p, stream); break;
    case PCS_FLOAT32: launch<float>(out, n, *p, stream); break;
    case PCS_FLOAT64: launch<double>(out, n, *p, stream); break;
    default: return -1;
    }
    return 0;
}
