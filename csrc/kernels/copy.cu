// copy.cu: strided copies and dtype casts on the GPU (fills: fill.cu).
//
// One kernel template covers every (destination, source) dtype pair; the
// host-side dispatch below instantiates all 144 pairs from the dtype list
// once, so no per-dtype code is written by hand. Conversions follow the
// rules of the host table in scalar.c: integers wrap, floats convert to
// integers through int64, complex -> real keeps the real part, anything ->
// bool is "non-zero". Same-dtype copies move raw bytes (1..16-byte carriers)
// so they never convert at all.
//
// Paths: contiguous on both sides -> each thread moves VEC elements with
// packed loads when the pointers are aligned (the bandwidth path); a
// same-dtype copy whose two sides have different fastest dims -> the tiled
// transposes of transpose.cu; otherwise the strided paths compute offsets
// from the geometry the iteration core planned (32-bit where it fits,
// offsets.cuh): per row for rows of at least a warp of elements
// (copy_rows), per element for the rest.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <string.h>

#include <type_traits>

#include "kernels.h"
#include "launch.cuh"
#include "pdl.cuh"
#include "offsets.cuh"
#include "row_tiles.cuh"

namespace {

struct alignas(8) c64 {
    float re, im;
};
struct alignas(16) c128 {
    double re, im;
};
struct alignas(16) b16 {
    uint64_t lo, hi;
};

// ---------------------------------------------------------------------------
// Conversions: load into a wide value of the source's kind, store from it.

template <typename T> struct Kind;  // 0 int-like, 1 float, 2 complex
template <> struct Kind<bool> { static constexpr int k = 0; };
template <> struct Kind<uint8_t> { static constexpr int k = 0; };
template <> struct Kind<int8_t> { static constexpr int k = 0; };
template <> struct Kind<int16_t> { static constexpr int k = 0; };
template <> struct Kind<int32_t> { static constexpr int k = 0; };
template <> struct Kind<int64_t> { static constexpr int k = 0; };
template <> struct Kind<__half> { static constexpr int k = 1; };
template <> struct Kind<__nv_bfloat16> { static constexpr int k = 1; };
template <> struct Kind<float> { static constexpr int k = 1; };
template <> struct Kind<double> { static constexpr int k = 1; };
template <> struct Kind<c64> { static constexpr int k = 2; };
template <> struct Kind<c128> { static constexpr int k = 2; };

// The wide float of a source: float for 16/32-bit floats (so float -> half
// rounds once), double for double.
__device__ __forceinline__ float widef(__half v) { return __half2float(v); }
__device__ __forceinline__ float widef(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float widef(float v) { return v; }
__device__ __forceinline__ double widef(double v) { return v; }

template <typename D> __device__ __forceinline__ D from_int(int64_t v)
{
    if constexpr (std::is_same_v<D, bool>) return v != 0;
    else if constexpr (std::is_same_v<D, __half>) return __float2half_rn((float)v);
    else if constexpr (std::is_same_v<D, __nv_bfloat16>) return __float2bfloat16_rn((float)v);
    else if constexpr (std::is_same_v<D, c64>) return c64{(float)v, 0.f};
    else if constexpr (std::is_same_v<D, c128>) return c128{(double)v, 0.};
    else return (D)v;
}

template <typename D, typename W> __device__ __forceinline__ D from_float(W v)
{
    if constexpr (std::is_same_v<D, bool>) return v != (W)0;
    else if constexpr (std::is_same_v<D, __half>) return __float2half_rn((float)v);
    else if constexpr (std::is_same_v<D, __nv_bfloat16>) return __float2bfloat16_rn((float)v);
    else if constexpr (std::is_same_v<D, float>) return (float)v;
    else if constexpr (std::is_same_v<D, double>) return (double)v;
    else if constexpr (std::is_same_v<D, c64>) return c64{(float)v, 0.f};
    else if constexpr (std::is_same_v<D, c128>) return c128{(double)v, 0.};
    else {
        // through int64 so negative values wrap like the CPU path; NaN and
        // out-of-range inputs are clamped to keep the conversion defined
        double d = (double)v;
        int64_t i = d != d ? 0 : d >= 9.2233720368547758e18 ? INT64_MAX
                   : d <= -9.2233720368547758e18 ? INT64_MIN : (int64_t)d;
        return (D)(uint64_t)i;
    }
}

template <typename D, typename S> __device__ __forceinline__ D convert(S v)
{
    if constexpr (std::is_same_v<D, S>) return v;
    else if constexpr (Kind<S>::k == 0) return from_int<D>((int64_t)v);
    else if constexpr (Kind<S>::k == 1) return from_float<D>(widef(v));
    else {  // complex source
        if constexpr (std::is_same_v<D, bool>) return v.re != 0 || v.im != 0;
        else if constexpr (std::is_same_v<D, c64>) return c64{(float)v.re, (float)v.im};
        else if constexpr (std::is_same_v<D, c128>) return c128{(double)v.re, (double)v.im};
        else return from_float<D>(v.re);
    }
}

// ---------------------------------------------------------------------------
// Kernels

constexpr int THREADS = 256;
constexpr int VEC = 4;

template <typename T, int N> struct alignas(sizeof(T) * N) Pack {
    T v[N];
};

template <typename D, typename S>
__global__ void copy_contig(D *__restrict__ dst, const S *__restrict__ src, int64_t n)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    bool aligned = ((uintptr_t)dst % sizeof(Pack<D, VEC>)) == 0 &&
                   ((uintptr_t)src % sizeof(Pack<S, VEC>)) == 0;
    if (aligned) {
        int64_t nvec = n / VEC;
        for (int64_t v = i; v < nvec; v += stride) {
            Pack<S, VEC> in = reinterpret_cast<const Pack<S, VEC> *>(src)[v];
            Pack<D, VEC> out;
#pragma unroll
            for (int k = 0; k < VEC; k++)
                out.v[k] = convert<D>(in.v[k]);
            reinterpret_cast<Pack<D, VEC> *>(dst)[v] = out;
        }
        for (int64_t j = nvec * VEC + i; j < n; j += stride)
            dst[j] = convert<D>(src[j]);
    } else {
        for (int64_t j = i; j < n; j += stride)
            dst[j] = convert<D>(src[j]);
    }
}

template <typename T> struct Tag {
    using type = T;
};

// The order of the E-byte elements of a word reversed (a word of a flip of
// the last dim, widen below).
template <int E> __device__ __forceinline__ uint32_t reverse_elems(uint32_t x)
{
    static_assert(E == 1 || E == 2, "elements narrower than the word");
    return __byte_perm(x, 0, E == 1 ? 0x0123 : 0x1032);
}
template <int E> __device__ __forceinline__ uint64_t reverse_elems(uint64_t x)
{
    const uint32_t lo = (uint32_t)x, hi = (uint32_t)(x >> 32);
    if constexpr (E == 4)
        return ((uint64_t)lo << 32) | hi;
    else
        return ((uint64_t)reverse_elems<E>(lo) << 32) | reverse_elems<E>(hi);
}
template <int E> __device__ __forceinline__ b16 reverse_elems(b16 x)
{
    if constexpr (E == 8)
        return b16{x.hi, x.lo};
    else
        return b16{reverse_elems<E>(x.hi), reverse_elems<E>(x.lo)};
}

// Any geometry the core planned, UNROLL elements a thread a block-wide tile
// apart, every load issued before the stores; offsets from offsets.cuh,
// with the dims loop unrolled in 32 bits (get_unrolled; rolled, the kernel
// queued on constant loads: on the H200 against torch, x.t().half() of
// [8192, 8192] float32 0.63x -> 0.88x, x.t().float() of float16 1.23x ->
// 1.71x, float32 x[:, 1:].contiguous() of [1048576, 17] 0.90x -> 1.37x;
// copy_rows' one get a tile measured 6 to 20 % slower unrolled, so it
// keeps the rolled loop). REV > 0: D == S are words of REV-byte elements
// whose order each word reverses on the way.
constexpr int UNROLL = 4;

template <typename D, typename S, typename Off, int REV = 0>
__global__ void __launch_bounds__(THREADS) copy_strided(D *dst, const S *src, typename Off::index_t n, Off g)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    using I = typename Off::index_t;
    constexpr I kTile = THREADS * UNROLL;
    for (I base = (I)blockIdx.x * kTile; base < n; base += (I)gridDim.x * kTile) {
        int64_t off[UNROLL][2];
        S v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            I i = base + u * THREADS + threadIdx.x;
            if (i < n) {
                g.get_unrolled(i, off[u]);
                v[u] = src[off[u][1]];
            }
        }
#pragma unroll
        for (int u = 0; u < UNROLL; u++)
            if (base + u * THREADS + threadIdx.x < n) {
                if constexpr (REV > 0)
                    dst[off[u][0]] = reverse_elems<REV>(v[u]);
                else
                    dst[off[u][0]] = convert<D>(v[u]);
            }
    }
}

// Geometries whose innermost dim is at least a warp long (a slice of rows,
// x[:, 1:] or x.flip(-1) of an odd width, an image crop, rows of a cat) go
// by warp tiles (row_tiles.cuh), where copy_strided divides per element:
// on the H200, x[:, 1:].contiguous() of [8192, 8192] float16 issued about
// 80 instructions an element, read at 18 % of the DRAM bandwidth and ran at
// 0.70x torch; through this kernel 1.57x (float32 0.87x -> 1.42x, uint8
// 0.67x -> 1.39x, flip(1) of [8192, 8191] float16 0.73x -> 1.64x). U grows
// as the element narrows so that a thread keeps 16 bytes of loads in flight
// (4 KiB a block).
template <typename T, typename Off, int U, int REV>
__global__ void __launch_bounds__(THREADS)
    copy_rows(T *dst, const T *src, uint32_t tiles, pcs::FastDiv tpr, int64_t W, int64_t dstep, int64_t sstep, Off g)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    pcs::row_tiles<THREADS, 2>(U, tiles, tpr, g, [&](const int64_t *off, int64_t c0) {
        const T *s = src + off[1] + c0 * sstep;
        T *d = dst + off[0] + c0 * dstep;
        T v[U];
#pragma unroll
        for (int u = 0; u < U; u++)
            if (c0 + u * 32 < W)
                v[u] = s[(int64_t)u * 32 * sstep];
#pragma unroll
        for (int u = 0; u < U; u++)
            if (c0 + u * 32 < W) {
                if constexpr (REV > 0)
                    d[(int64_t)u * 32 * dstep] = reverse_elems<REV>(v[u]);
                else
                    d[(int64_t)u * 32 * dstep] = v[u];
            }
    });
}

unsigned blocks_for(int64_t work)
{
    int64_t b = (work + THREADS - 1) / THREADS;
    // grid-stride loops cover the rest; this many blocks fill any GPU
    return (unsigned)(b < 1 ? 1 : b > 65536 ? 65536 : b);
}

// copy_rows for a same-dtype geometry with an inner dim of at least 32
// elements; false (nothing launched) otherwise. launch_strided takes it for
// elements and words of up to 4 bytes: 8- and 16-byte words (int64 rows, and
// the rows widen gave 16-byte words) measured the same or up to 4 % slower
// in it than in copy_strided (int64 x[:, 1:] of [4096, 8192] 128.8 ->
// 134.3 us). U is the largest power of two up to 16 / sizeof(T) (at least
// 4) whose tile is at most the row and keeps the lanes busy: wider tiles
// would run mostly past the end of shorter rows. With warp tiles, on the
// H200 against torch: crops x[..., 13:237, 13:237] of [64, 3, 256, 256]
// uint8 0.53x -> 1.17x, float16 0.55x -> 1.20x, float32 0.76x -> 1.43x;
// float16 x[:, 1:] of [262144, 100] 0.74x -> 0.89x (still below: a tile's
// row offsets cost about as much as its one or two elements).
template <typename T, int REV>
bool launch_rows(void *dst, const void *src, int64_t n, const pcs_ew_geom *g, cudaStream_t st)
{
    const int in = g->ndim - 1;
    if (in < 0 || g->sizes[in] < 32)
        return false;
    constexpr int UMAX = 16 / (int)sizeof(T) > 4 ? 16 / (int)sizeof(T) : 4;
    const int64_t W = g->sizes[in], rows = n / W;
    // rows whose tiles would leave lanes idle stay with copy_strided
    const int u = pcs::row_tile_width(W, UMAX);
    if (u == 0)
        return false;
    const int64_t tpr = (W + 32 * (int64_t)u - 1) / (32 * (int64_t)u);
    if (rows * tpr > INT32_MAX || (!g->index32 && u != UMAX))
        return false;
    pcs_ew_geom outer = *g;
    outer.ndim = in; // the row offsets: every dim but the innermost
    pcs::FastDiv div;
    div.init((uint32_t)tpr);
    const uint32_t tiles = (uint32_t)(rows * tpr);
    const uint32_t blocks = (tiles + THREADS / 32 - 1) / (THREADS / 32);
    const unsigned grid = blocks < 65536u ? blocks : 65536u;
    const int64_t ds = g->strides[0][in], ss = g->strides[1][in];
    auto go = [&](auto uc) {
        constexpr int UC = decltype(uc)::value;
        if (g->index32)
            pcs::launch_kernel_pdl(copy_rows<T, pcs::Off32<2>, UC, REV>, grid, THREADS, st, (T *)dst,
                                   (const T *)src, tiles, div, W, ds, ss, pcs::make_off32<2>(outer));
        else if constexpr (UC == UMAX)
            pcs::launch_kernel_pdl(copy_rows<T, pcs::Off64<2>, UC, REV>, grid, THREADS, st, (T *)dst,
                                   (const T *)src, tiles, div, W, ds, ss, pcs::make_off64<2>(outer));
    };
    switch (u) {
    case 16: if constexpr (UMAX >= 16) go(std::integral_constant<int, 16>{}); break;
    case 8: if constexpr (UMAX >= 8) go(std::integral_constant<int, 8>{}); break;
    case 4: go(std::integral_constant<int, 4>{}); break;
    case 2: go(std::integral_constant<int, 2>{}); break;
    default: go(std::integral_constant<int, 1>{}); break;
    }
    return true;
}

template <typename D, typename S, int REV = 0>
void launch_strided(void *dst, const void *src, int64_t n, const pcs_ew_geom *g, cudaStream_t st)
{
    if constexpr (std::is_same_v<D, S> && sizeof(D) <= 4)
        if (launch_rows<D, REV>(dst, src, n, g, st))
            return;
    unsigned grid = blocks_for((n + UNROLL - 1) / UNROLL);
    if (g->index32 && n <= INT32_MAX)
        pcs::launch_kernel_pdl(copy_strided<D, S, pcs::Off32<2>, REV>, grid, THREADS, st, (D *)dst, (const S *)src,
                           (uint32_t)n, pcs::make_off32<2>(*g));
    else
        pcs::launch_kernel_pdl(copy_strided<D, S, pcs::Off64<2>, REV>, grid, THREADS, st, (D *)dst, (const S *)src,
                           n, pcs::make_off64<2>(*g));
}

// A same-dtype copy whose fastest dim is contiguous on both sides (a slice
// of rows, cat or stack along a later dim) moves as the widest word (16, 8
// or 4 bytes) that divides that dim's length, every other stride and both
// addresses: the strided kernel then moves 16 bytes for each offset it
// computes instead of 4 (cat of [8192, 16384] float32 along dim 1 went from
// 0.88x torch to copy bandwidth). The source's fastest dim may also run
// backwards (stride -1: x.flip(-1), a horizontal image flip): destination
// elements j .. j + k - 1 of a word are then the k source elements that end
// at src - j, one word from src - j - (k - 1) whose order the kernel reverses
// (element by element, flip(1) of [8192, 8192] float32 ran at 0.83x torch).
// Returns the word's size in bytes with the geometry in words in *w and its
// source base in *wsrc, or 0.
int widen(const pcs_ew_geom &g, const void *dst, const void *src, int size, pcs_ew_geom *w, const void **wsrc)
{
    const int in = g.ndim - 1;
    if (g.ndim < 1 || g.strides[0][in] != 1 || (g.strides[1][in] != 1 && g.strides[1][in] != -1))
        return 0;
    const bool rev = g.strides[1][in] == -1;
    for (int bytes = 16; bytes > size; bytes /= 2) {
        const int64_t k = bytes / size;
        const char *s0 = (const char *)src - (rev ? (k - 1) * size : 0);
        bool ok = (uintptr_t)dst % bytes == 0 && (uintptr_t)s0 % bytes == 0 && g.sizes[in] % k == 0;
        for (int d = 0; d < in && ok; d++)
            ok = g.strides[0][d] % k == 0 && g.strides[1][d] % k == 0;
        if (!ok)
            continue;
        *w = g;
        w->sizes[in] = g.sizes[in] / k;
        for (int d = 0; d < in; d++) {
            w->strides[0][d] = g.strides[0][d] / k;
            w->strides[1][d] = g.strides[1][d] / k;
        }
        *wsrc = s0;
        return bytes;
    }
    return 0;
}

template <typename D, typename S>
void launch_pair(void *dst, const void *src, int64_t n, const pcs_ew_geom *g, cudaStream_t st)
{
    if (!g) {
        pcs::launch_kernel_pdl(copy_contig<D, S>, blocks_for((n + VEC - 1) / VEC), THREADS, st, (D *)dst,
                           (const S *)src, n);
        return;
    }
    if constexpr (std::is_same_v<D, S>) {
        if (pcs_launch_transpose(dst, src, (int)sizeof(D), g, st))
            return; // a transpose: transpose.cu tiled it
        pcs_ew_geom w;
        const void *ws = src;
        const int bytes = widen(*g, dst, src, (int)sizeof(D), &w, &ws);
        const bool rev = bytes && g->strides[1][g->ndim - 1] == -1;
        auto go = [&](auto word) {
            using W = typename decltype(word)::type;
            const int64_t nw = n * (int64_t)sizeof(D) / (int64_t)sizeof(W);
            if constexpr (sizeof(D) < sizeof(W)) {
                if (rev) {
                    launch_strided<W, W, (int)sizeof(D)>(dst, ws, nw, &w, st);
                    return;
                }
            }
            launch_strided<W, W>(dst, ws, nw, &w, st);
        };
        switch (bytes) {
        case 16: go(Tag<b16>{}); return;
        case 8: go(Tag<uint64_t>{}); return;
        case 4: go(Tag<uint32_t>{}); return;
        default: break;
        }
    }
    launch_strided<D, S>(dst, src, n, g, st);
}

// ---------------------------------------------------------------------------
// Dispatch from dtype ids to types: one switch, used for both sides.

template <typename F> bool with_type(int dtype, F &&f)
{
    switch (dtype) {
    case PCS_BOOL: f(Tag<bool>{}); return true;
    case PCS_UINT8: f(Tag<uint8_t>{}); return true;
    case PCS_INT8: f(Tag<int8_t>{}); return true;
    case PCS_INT16: f(Tag<int16_t>{}); return true;
    case PCS_INT32: f(Tag<int32_t>{}); return true;
    case PCS_INT64: f(Tag<int64_t>{}); return true;
    case PCS_FLOAT16: f(Tag<__half>{}); return true;
    case PCS_BFLOAT16: f(Tag<__nv_bfloat16>{}); return true;
    case PCS_FLOAT32: f(Tag<float>{}); return true;
    case PCS_FLOAT64: f(Tag<double>{}); return true;
    case PCS_COMPLEX64: f(Tag<c64>{}); return true;
    case PCS_COMPLEX128: f(Tag<c128>{}); return true;
    default: return false;
    }
}

// Raw-byte carriers for same-dtype copies.
template <typename F> bool with_carrier(int itemsize, F &&f)
{
    switch (itemsize) {
    case 1: f(Tag<uint8_t>{}); return true;
    case 2: f(Tag<uint16_t>{}); return true;
    case 4: f(Tag<uint32_t>{}); return true;
    case 8: f(Tag<uint64_t>{}); return true;
    case 16: f(Tag<b16>{}); return true;
    default: return false;
    }
}

int dtype_size(int dtype)
{
    static const int sizes[PCS_NUM_DTYPES] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8, 8, 16};
    return dtype >= 0 && dtype < PCS_NUM_DTYPES ? sizes[dtype] : 0;
}

}  // namespace

extern "C" int pcs_launch_copy(void *dst, int dst_dtype, const void *src, int src_dtype,
                               int64_t n, const pcs_ew_geom *geom, cudaStream_t stream)
{
    if (n <= 0)
        return 0;
    if (dst_dtype == src_dtype) {
        bool ok = with_carrier(dtype_size(dst_dtype), [&](auto t) {
            using T = typename decltype(t)::type;
            launch_pair<T, T>(dst, src, n, geom, stream);
        });
        return ok ? 0 : -1;
    }
    bool inner_ok = true;
    bool ok = with_type(dst_dtype, [&](auto d) {
        inner_ok = with_type(src_dtype, [&](auto s) {
            using D = typename decltype(d)::type;
            using S = typename decltype(s)::type;
            if constexpr (!std::is_same_v<D, S>)
                launch_pair<D, S>(dst, src, n, geom, stream);
        });
    });
    return ok && inner_ok ? 0 : -1;
}
