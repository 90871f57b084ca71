// fill.cu: fills of strided views on the GPU (x[:, 1:].fill_(v), x[::2] = v,
// an image crop set to zero, one channel of an interleaved image).
//
// Contiguous and dense fills come here only when no memset can do them
// (copy.c's pcs_fill). The value is written as raw bytes (1..16-byte
// carriers), by the geometry's innermost dim:
// - rows of unit stride: fill_words, an aligned 16-byte word a thread. The
//   elements are aligned to their size, so every aligned word of every row
//   holds the same bytes, the value repeated; the partial words at either
//   end of a row go in the widest aligned pieces that fit.
// - stepped rows of at least a warp (x[:, ::2], x[..., 0] of an
//   interleaved image): fill_tiles, warp tiles of a row (row_tiles.cuh).
// - the rest (short stepped rows, columns, the short rows launch_words
//   leaves): fill_elems, elements with their offsets from the whole
//   geometry.
// Element by element, as every strided fill went before, they ran at 0.23x
// to 0.52x torch on the H200 (float16 x[:, 1:] of [8192, 8191] 0.43x; in
// words 2.4x).
#include <stdint.h>
#include <string.h>

#include <type_traits>

#include "kernels.h"
#include "launch.cuh"
#include "offsets.cuh"
#include "pdl.cuh"
#include "row_tiles.cuh"

namespace {

constexpr int THREADS = 256;

struct alignas(16) Word {
    uint32_t w[4];
};

// [lo, hi) of one word in the widest aligned pieces: up from lo, then down
// to hi. Every piece is at least an element wide and aligned to its width,
// so it holds the value repeated, as the word's low bytes do.
__device__ __forceinline__ void store_pieces(char *p, char *hi, const Word &word)
{
    const uint64_t v = (uint64_t)word.w[0] | (uint64_t)word.w[1] << 32;
#pragma unroll
    for (int k = 1; k <= 8; k *= 2)
        if (((uintptr_t)p & k) && p + k <= hi) {
            if (k == 1) *(uint8_t *)p = (uint8_t)v;
            if (k == 2) *(uint16_t *)p = (uint16_t)v;
            if (k == 4) *(uint32_t *)p = (uint32_t)v;
            if (k == 8) *(uint64_t *)p = v;
            p += k;
        }
#pragma unroll
    for (int k = 8; k >= 1; k /= 2)
        if (hi - p >= k) {
            if (k == 1) *(uint8_t *)p = (uint8_t)v;
            if (k == 2) *(uint16_t *)p = (uint16_t)v;
            if (k == 4) *(uint32_t *)p = (uint32_t)v;
            if (k == 8) *(uint64_t *)p = v;
            p += k;
        }
}

template <typename T, typename Off>
__global__ void __launch_bounds__(THREADS)
    fill_words(char *base, Word word, uint32_t slots, pcs::FastDiv spr, int64_t bytes, Off g)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    for (uint32_t i = blockIdx.x * THREADS + threadIdx.x; i < slots; i += gridDim.x * THREADS) {
        const uint32_t r = spr.div(i);
        int64_t off[1];
        g.get_unrolled((typename Off::index_t)r, off);
        char *s = base + off[0] * (int64_t)sizeof(T), *e = s + bytes;
        // slot j of a row is the j-th aligned word from the one holding
        // the row's first byte
        char *w = (char *)((uintptr_t)s & ~(uintptr_t)15) + 16 * (int64_t)(i - r * spr.d);
        char *lo = w < s ? s : w, *hi = w + 16 < e ? w + 16 : e;
        if (lo == w && hi == w + 16)
            *(Word *)w = word;
        else if (lo < hi)
            store_pieces(lo, hi, word);
    }
}

template <typename T, typename Off, int U>
__global__ void __launch_bounds__(THREADS)
    fill_tiles(T *dst, T value, uint32_t tiles, pcs::FastDiv tpr, int64_t W, int64_t step, Off g)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    pcs::row_tiles<THREADS, 1, true>(U, tiles, tpr, g, [&](const int64_t *off, int64_t c0) {
        T *d = dst + off[0] + c0 * step;
#pragma unroll
        for (int u = 0; u < U; u++)
            if (c0 + u * 32 < W)
                d[(int64_t)u * 32 * step] = value;
    });
}

// Four elements a thread, a block's apart, their offsets worked out before
// the first store, with the dims loop unrolled (offsets.cuh's get_unrolled:
// with the loop rolled the kernel waited on constant loads half its cycles;
// x[:, 1:] of [8192, 8191] float16 by element 0.42x -> 0.76x torch).
constexpr int UNROLL = 4;

template <typename T, typename Off>
__global__ void __launch_bounds__(THREADS) fill_elems(T *dst, T value, typename Off::index_t n, Off g)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    using I = typename Off::index_t;
    for (I b = (I)blockIdx.x * THREADS * UNROLL; b < n; b += (I)gridDim.x * THREADS * UNROLL) {
        int64_t off[UNROLL][1];
#pragma unroll
        for (int u = 0; u < UNROLL; u++)
            if (b + u * THREADS + threadIdx.x < n)
                g.get_unrolled(b + u * THREADS + threadIdx.x, off[u]);
#pragma unroll
        for (int u = 0; u < UNROLL; u++)
            if (b + u * THREADS + threadIdx.x < n)
                dst[off[u][0]] = value;
    }
}

unsigned grid_for(int64_t threads)
{
    int64_t b = (threads + THREADS - 1) / THREADS;
    // grid-stride loops cover the rest; this many blocks fill any GPU
    return (unsigned)(b < 1 ? 1 : b > 65536 ? 65536 : b);
}

// The geometry of the rows: every dim but the innermost.
pcs_ew_geom outer_of(const pcs_ew_geom &g)
{
    pcs_ew_geom o = g;
    o.ndim = g.ndim - 1;
    return o;
}

template <typename T>
bool launch_words(void *dst, const T &value, int64_t n, const pcs_ew_geom &g, cudaStream_t st)
{
    const int in = g.ndim - 1;
    const int64_t W = g.sizes[in], rows = n / W, bytes = W * (int64_t)sizeof(T);
    if (g.strides[0][in] != 1 || bytes < 16 || (uintptr_t)dst % sizeof(T) != 0)
        return false;
    // Rows of 2- and 4-byte elements up to 128 bytes, where a row's two
    // partial words cost more than its whole ones save, go element by
    // element (H200 against torch, x[:, 1:] of [1048576, 33]: float16 0.64x
    // in words -> 0.97x, float32 0.91x -> 1.07x; of [1048576, 17] float16
    // 0.52x -> 0.78x, float32 0.82x -> 1.08x). 1- and 8-byte rows that short
    // were as fast or faster in words.
    if ((sizeof(T) == 2 || sizeof(T) == 4) && bytes <= 128)
        return false;
    const int64_t spr = (bytes + 30) / 16; // the most aligned words a row touches
    if (rows * spr > INT32_MAX)
        return false;
    Word word;
    for (int b = 0; b < 16; b++)
        ((unsigned char *)&word)[b] = ((const unsigned char *)&value)[b % sizeof(T)];
    pcs::FastDiv div;
    div.init((uint32_t)spr);
    const uint32_t slots = (uint32_t)(rows * spr);
    if (g.index32)
        pcs::launch_kernel_pdl(fill_words<T, pcs::Off32<1>>, grid_for(slots), THREADS, st, (char *)dst, word, slots,
                               div, bytes, pcs::make_off32<1>(outer_of(g)));
    else
        pcs::launch_kernel_pdl(fill_words<T, pcs::Off64<1>>, grid_for(slots), THREADS, st, (char *)dst, word, slots,
                               div, bytes, pcs::make_off64<1>(outer_of(g)));
    return true;
}

template <typename T>
bool launch_tiles(void *dst, const T &value, int64_t n, const pcs_ew_geom &g, cudaStream_t st)
{
    const int in = g.ndim - 1;
    const int64_t W = g.sizes[in], rows = n / W;
    // up to 8 elements a lane: stores keep no registers waiting
    const int u = pcs::row_tile_width(W, 8);
    if (u == 0 || !g.index32 || g.strides[0][in] == 1)
        return false;
    const int64_t tpr = (W + 32 * (int64_t)u - 1) / (32 * (int64_t)u);
    if (rows * tpr > INT32_MAX)
        return false;
    pcs::FastDiv div;
    div.init((uint32_t)tpr);
    const uint32_t tiles = (uint32_t)(rows * tpr);
    const unsigned grid = grid_for((int64_t)tiles * 32);
    auto go = [&](auto uc) {
        constexpr int UC = decltype(uc)::value;
        pcs::launch_kernel_pdl(fill_tiles<T, pcs::Off32<1>, UC>, grid, THREADS, st, (T *)dst, value, tiles, div, W,
                               g.strides[0][in], pcs::make_off32<1>(outer_of(g)));
    };
    switch (u) {
    case 8: go(std::integral_constant<int, 8>{}); break;
    case 4: go(std::integral_constant<int, 4>{}); break;
    case 2: go(std::integral_constant<int, 2>{}); break;
    default: go(std::integral_constant<int, 1>{}); break;
    }
    return true;
}

template <typename T> void launch_fill(void *dst, const void *value, int64_t n, const pcs_ew_geom &g, cudaStream_t st)
{
    T v;
    memcpy(&v, value, sizeof v);
    if (g.ndim >= 1 && (launch_words<T>(dst, v, n, g, st) || launch_tiles<T>(dst, v, n, g, st)))
        return;
    if (g.index32 && n <= INT32_MAX)
        pcs::launch_kernel_pdl(fill_elems<T, pcs::Off32<1>>, grid_for((n + UNROLL - 1) / UNROLL), THREADS, st,
                               (T *)dst, v, (uint32_t)n, pcs::make_off32<1>(g));
    else
        pcs::launch_kernel_pdl(fill_elems<T, pcs::Off64<1>>, grid_for((n + UNROLL - 1) / UNROLL), THREADS, st,
                               (T *)dst, v, n, pcs::make_off64<1>(g));
}

struct alignas(16) Bytes16 {
    uint64_t lo, hi;
};

}  // namespace

extern "C" int pcs_launch_fill(void *dst, int itemsize, const void *value, int64_t n,
                               const pcs_ew_geom *geom, cudaStream_t stream)
{
    if (n <= 0)
        return 0;
    const pcs_ew_geom g = geom ? *geom : pcs::flat_geom(n);
    switch (itemsize) {
    case 1: launch_fill<uint8_t>(dst, value, n, g, stream); return 0;
    case 2: launch_fill<uint16_t>(dst, value, n, g, stream); return 0;
    case 4: launch_fill<uint32_t>(dst, value, n, g, stream); return 0;
    case 8: launch_fill<uint64_t>(dst, value, n, g, stream); return 0;
    case 16: launch_fill<Bytes16>(dst, value, n, g, stream); return 0;
    default: return -1;
    }
}
