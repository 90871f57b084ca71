// index.cu: advanced indexing, gather and scatter, nonzero, behind the
// launchers of index.h.
//
// Every op reduces to element offsets (index.h says how): one kernel turns
// the geometry into offsets and records each index tensor's min and max, so
// the host checks the range with one 8-byte-per-tensor read back and no
// device-side assert (which would kill the context). Gathers move bytes per
// element size; scatters sort the offsets (CUB radix sort, stable) and reduce
// each run of equal offsets in index order in one thread: no float atomics,
// so results do not vary from run to run, and the last write wins for SET.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <cuda/std/limits>

#include "ew_common.cuh"
#include "index.h"

using namespace pcs;

namespace {

struct alignas(16) Bytes16 {
    uint64_t lo, hi;
};

inline dim3 grid_for(int64_t n, int block)
{
    int64_t blocks = (n + block - 1) / block, cap = (int64_t)sm_count() * 32;
    return dim3((unsigned)(blocks < cap ? (blocks > 0 ? blocks : 1) : cap));
}

// ---------------------------------------------------------------------------
// Offsets, and the gather that reads through them

__global__ void minmax_init(int64_t *mm, int n)
{
    int k = threadIdx.x;
    if (k < n) {
        mm[2 * k] = cuda::std::numeric_limits<int64_t>::max();
        mm[2 * k + 1] = cuda::std::numeric_limits<int64_t>::min();
    }
}

// The offset of result element i (index.h's formula); lo/hi collect each
// index tensor's raw values. I: the type coordinates are split in (32 bits
// when the result has under 2^31 elements: divisions cost a third).
template <class I>
__device__ __forceinline__ int64_t index_offset(const pcs_index_geom &g, I i, int64_t *lo, int64_t *hi)
{
    I rem = i;
    int64_t off = g.base, ioff[PCS_MAX_DIMS];
    for (int k = 0; k < g.nidx; k++)
        ioff[k] = 0;
    for (int d = g.ndim - 1; d >= 0; d--) {
        I s = (I)g.sizes[d], c = rem % s;
        rem /= s;
        off += (int64_t)c * g.bstride[d];
        for (int k = 0; k < g.nidx; k++)
            ioff[k] += (int64_t)c * g.istride[k][d];
    }
    for (int k = 0; k < g.nidx; k++) {
        int64_t v = g.idx[k][ioff[k]];
        lo[k] = v < lo[k] ? v : lo[k];
        hi[k] = v > hi[k] ? v : hi[k];
        int64_t w = v < 0 ? v + g.isize[k] : v;
        if (w < 0 || w >= g.isize[k])
            w = 0; // out of range: reported by minmax, never followed
        off += w * g.wstride[k];
    }
    return off;
}

__device__ __forceinline__ void minmax_start(int n, int64_t *lo, int64_t *hi)
{
    for (int k = 0; k < n; k++) {
        lo[k] = cuda::std::numeric_limits<int64_t>::max();
        hi[k] = cuda::std::numeric_limits<int64_t>::min();
    }
}

// One atomic per warp and index tensor; every lane of the block reaches it
// (grid-stride loops, no early return), as the shuffles need.
__device__ __forceinline__ void minmax_flush(int n, const int64_t *lo, const int64_t *hi, int64_t *mm)
{
    for (int k = 0; k < n; k++) {
        int64_t a = lo[k], b = hi[k];
        for (int s = 16; s > 0; s /= 2) {
            int64_t x = __shfl_down_sync(0xffffffffu, a, s);
            int64_t y = __shfl_down_sync(0xffffffffu, b, s);
            a = x < a ? x : a;
            b = y > b ? y : b;
        }
        if ((threadIdx.x & 31) == 0) {
            atomicMin((long long *)&mm[2 * k], (long long)a);
            atomicMax((long long *)&mm[2 * k + 1], (long long)b);
        }
    }
}

template <class I>
__global__ void __launch_bounds__(256) offsets_kernel(pcs_index_geom g, int64_t *out, I n, int64_t *mm)
{
    int64_t lo[PCS_MAX_DIMS], hi[PCS_MAX_DIMS];
    minmax_start(g.nidx, lo, hi);
    const I step = (I)gridDim.x * blockDim.x;
    for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        out[i] = index_offset<I>(g, i, lo, hi);
    minmax_flush(g.nidx, lo, hi, mm);
}

// x[idx], gather, index_select, take in one pass: no offsets in memory. A
// bad index reads element 0 (in bounds); the host discards the result.
template <class E, class I>
__global__ void __launch_bounds__(256) gather_fused(pcs_index_geom g, E *out, const E *src, I n, int64_t *mm)
{
    int64_t lo[PCS_MAX_DIMS], hi[PCS_MAX_DIMS];
    minmax_start(g.nidx, lo, hi);
    const I step = (I)gridDim.x * blockDim.x;
    for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        out[i] = src[index_offset<I>(g, i, lo, hi)];
    minmax_flush(g.nidx, lo, hi, mm);
}

template <class E>
void gather_geom(const pcs_index_geom *g, void *out, const void *src, int64_t n, int64_t *mm,
                 cudaStream_t st)
{
    if (n <= INT32_MAX)
        launch_kernel(gather_fused<E, uint32_t>, grid_for(n, 256), 256, st, *g, (E *)out,
                      (const E *)src, (uint32_t)n, mm);
    else
        launch_kernel(gather_fused<E, int64_t>, grid_for(n, 256), 256, st, *g, (E *)out,
                      (const E *)src, n, mm);
}

// ---------------------------------------------------------------------------
// Scatter: one thread per run of equal sorted offsets

template <class C> __device__ __forceinline__ C combine(C acc, C v, int mode)
{
    switch (mode) {
    case PCS_SCATTER_MUL: return acc * v;
    case PCS_SCATTER_AMAX:
    case PCS_SCATTER_AMIN:
        if constexpr (!is_cx<C>) {
            if (is_nan(acc) || is_nan(v)) // NaN wins, as torch's amax/amin
                return is_nan(acc) ? acc : v;
            return mode == PCS_SCATTER_AMAX ? (v > acc ? v : acc) : (v < acc ? v : acc);
        } else {
            return acc;
        }
    default: return acc + v;
    }
}

template <class T>
__global__ void __launch_bounds__(256) scatter_kernel(T *dst, const int64_t *key, const int64_t *pos,
                                                      const T *vals, int64_t n, int mode, int self)
{
    using C = compute_t<T>;
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        int64_t k = key[i];
        if (i > 0 && key[i - 1] == k)
            continue; // not the start of a run
        int64_t j = i;
        if (mode == PCS_SCATTER_SET) {
            while (j + 1 < n && key[j + 1] == k)
                j++;
            dst[k] = vals[pos[j]];
            continue;
        }
        C acc;
        int64_t cnt = 1;
        if (self) {
            acc = to_c<C>(dst[k]);
        } else {
            acc = to_c<C>(vals[pos[j]]);
            j++;
        }
        for (; j < n && key[j] == k; j++, cnt++)
            acc = combine<C>(acc, to_c<C>(vals[pos[j]]), mode);
        if (mode == PCS_SCATTER_MEAN) { // cnt: the run, plus self when included
            if constexpr (is_cx<C>) {
                acc = acc / C((typename C::value_type)cnt);
            } else if constexpr (std::is_floating_point_v<C>) {
                acc = acc / (C)cnt;
            } else { // integers: floor division, as torch
                C q = acc / (C)cnt;
                if (acc % (C)cnt != 0 && acc < 0)
                    q -= 1;
                acc = q;
            }
        }
        dst[k] = from_c<T>(acc);
    }
}

__global__ void iota_kernel(int64_t *out, int64_t n)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        out[i] = i;
}

struct Dims {
    int64_t s[PCS_MAX_DIMS];
};

__global__ void unravel_kernel(int64_t *out, const int64_t *lin, int64_t count, int ndim, Dims sz)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += step) {
        int64_t rem = lin[i];
        for (int d = ndim - 1; d >= 0; d--) {
            out[i * ndim + d] = rem % sz.s[d];
            rem /= sz.s[d];
        }
    }
}

template <class E>
int select_flagged(void *temp, size_t *bytes, const void *in, const bool *flags, void *out,
                   int64_t *count, int64_t n, cudaStream_t st)
{
    return cub::DeviceSelect::Flagged(temp, *bytes, (const E *)in, flags, (E *)out, count, n, st) ==
                   cudaSuccess
               ? 0
               : -1;
}

} // namespace

extern "C" int pcs_launch_index_offsets(const pcs_index_geom *g, int64_t *out, int64_t n,
                                        int64_t *minmax, cudaStream_t stream)
{
    if (g->nidx > 0)
        launch_kernel(minmax_init, dim3(1), dim3(32), stream, minmax, g->nidx);
    if (n <= 0)
        return 0;
    if (n <= INT32_MAX)
        launch_kernel(offsets_kernel<uint32_t>, grid_for(n, 256), 256, stream, *g, out, (uint32_t)n, minmax);
    else
        launch_kernel(offsets_kernel<int64_t>, grid_for(n, 256), 256, stream, *g, out, n, minmax);
    return 0;
}

extern "C" int pcs_launch_index_gather_geom(const pcs_index_geom *g, void *out, const void *src,
                                            int itemsize, int64_t n, int64_t *minmax,
                                            cudaStream_t stream)
{
    if (g->nidx > 0)
        launch_kernel(minmax_init, dim3(1), dim3(32), stream, minmax, g->nidx);
    if (n <= 0)
        return 0;
    switch (itemsize) {
    case 1: gather_geom<uint8_t>(g, out, src, n, minmax, stream); return 0;
    case 2: gather_geom<uint16_t>(g, out, src, n, minmax, stream); return 0;
    case 4: gather_geom<uint32_t>(g, out, src, n, minmax, stream); return 0;
    case 8: gather_geom<uint64_t>(g, out, src, n, minmax, stream); return 0;
    case 16: gather_geom<Bytes16>(g, out, src, n, minmax, stream); return 0;
    default: return -1;
    }
}

extern "C" int pcs_index_sort(void *temp, size_t *bytes, const int64_t *off, int64_t *off_sorted,
                              int64_t *pos_in, int64_t *pos_sorted, int64_t n, int bits,
                              cudaStream_t stream)
{
    if (temp && n > 0)
        launch_kernel(iota_kernel, grid_for(n, 256), 256, stream, pos_in, n);
    cudaError_t e = cub::DeviceRadixSort::SortPairs(temp, *bytes, off, off_sorted, pos_in, pos_sorted,
                                                    n, 0, bits, stream);
    return e == cudaSuccess ? 0 : -1;
}

extern "C" int pcs_launch_index_scatter(int dtype, void *dst, const int64_t *off_sorted,
                                        const int64_t *pos_sorted, const void *vals, int64_t n,
                                        int mode, int include_self, cudaStream_t stream)
{
    if (n <= 0)
        return 0;
    return dispatch_dtype(dtype, [&](auto tag) {
        using T = decltype(tag);
        launch_kernel(scatter_kernel<T>, grid_for(n, 256), 256, stream, (T *)dst, off_sorted,
                      pos_sorted, (const T *)vals, n, mode, include_self);
        return 0;
    });
}

extern "C" int pcs_index_select_positions(void *temp, size_t *bytes, const bool *flags, int64_t *out,
                                 int64_t *count, int64_t n, cudaStream_t stream)
{
    thrust::counting_iterator<int64_t> it(0);
    cudaError_t e = cub::DeviceSelect::Flagged(temp, *bytes, it, flags, out, count, n, stream);
    return e == cudaSuccess ? 0 : -1;
}

extern "C" int pcs_index_select_flagged(void *temp, size_t *bytes, int itemsize, const void *in,
                                        const bool *flags, void *out, int64_t *count, int64_t n,
                                        cudaStream_t stream)
{
    switch (itemsize) {
    case 1: return select_flagged<uint8_t>(temp, bytes, in, flags, out, count, n, stream);
    case 2: return select_flagged<uint16_t>(temp, bytes, in, flags, out, count, n, stream);
    case 4: return select_flagged<uint32_t>(temp, bytes, in, flags, out, count, n, stream);
    case 8: return select_flagged<uint64_t>(temp, bytes, in, flags, out, count, n, stream);
    case 16: return select_flagged<Bytes16>(temp, bytes, in, flags, out, count, n, stream);
    default: return -1;
    }
}

extern "C" int pcs_launch_index_unravel(int64_t *out, const int64_t *lin, int64_t count, int ndim,
                                        const int64_t *sizes, cudaStream_t stream)
{
    if (count <= 0 || ndim <= 0)
        return 0;
    Dims d = {};
    for (int i = 0; i < ndim && i < PCS_MAX_DIMS; i++)
        d.s[i] = sizes[i];
    launch_kernel(unravel_kernel, grid_for(count, 256), 256, stream, out, lin, count, ndim, d);
    return 0;
}
