// copy.cu: strided copies, dtype casts and fills on the GPU.
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
// transpose; otherwise the strided path computes offsets from the geometry
// the iteration core planned (32-bit where it fits, offsets.cuh).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <string.h>

#include <type_traits>

#include "kernels.h"
#include "launch.cuh"
#include "pdl.cuh"
#include "offsets.cuh"

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

// Any geometry the core planned, UNROLL elements a thread a block-wide tile
// apart, every load issued before the stores; offsets from offsets.cuh.
constexpr int UNROLL = 4;

template <typename D, typename S, typename Off>
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
                g.get(i, off[u]);
                v[u] = src[off[u][1]];
            }
        }
#pragma unroll
        for (int u = 0; u < UNROLL; u++)
            if (base + u * THREADS + threadIdx.x < n)
                dst[off[u][0]] = convert<D>(v[u]);
    }
}

template <typename T, typename Off>
__global__ void fill_kernel(T *dst, T value, typename Off::index_t n, Off g)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    using I = typename Off::index_t;
    for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (I)gridDim.x * blockDim.x) {
        int64_t off[1];
        g.get(i, off);
        dst[off[0]] = value;
    }
}

// Transposing copies: the source's fastest dim j is not the destination's
// fastest dim i, so one side would be read or written a stride apart. A
// block moves TILE x TILE tiles through shared memory (+1 column so that the
// column reads hit different banks): it reads rows along j and writes rows
// along i, both coalesced. Tiles of 64 (32 for 16-byte elements, whose tile
// would pass the static shared-memory limit) with 256 threads: each thread
// has TILE * TILE / 256 loads in flight before the barrier, which is what
// keeps HBM busy (32 x 32 tiles with 4 loads a thread reached 72 % of the
// device-to-device copy bandwidth on the H100). An optional third dim b
// batches the tiles (a permuted 3-D copy).
template <typename T> inline constexpr int tile_of = sizeof(T) >= 16 ? 32 : 64;

struct TransposeGeom {
    int64_t ni, nj, nb;
    int64_t dsi, dsj, dsb, ssi, ssj, ssb;
};

// Four blocks an SM (64 registers), so that a thread's 16 loads of a tile
// (fixed trip counts) are in flight together: int64 on the H200 94.7 ->
// 95.5 % of the copy bandwidth (x.t().contiguous()), 93.5 -> 94.1 % (3-D).
template <typename T> __global__ void __launch_bounds__(256, 4) copy_transpose(T *dst, const T *src, TransposeGeom g)
{
    constexpr int TILE = tile_of<T>, ROWS = 256 / TILE;
    __shared__ T tile[TILE][TILE + 1];
    const int64_t ti = (g.ni + TILE - 1) / TILE, tj = (g.nj + TILE - 1) / TILE;
    const int tx = threadIdx.x, ty = threadIdx.y;
    pcs::pdl_wait(); // launched early (pdl.cuh): the kernel ahead is done
    for (int64_t t = blockIdx.x; t < ti * tj * g.nb; t += gridDim.x) {
        int64_t b = t / (ti * tj), r = t - b * ti * tj;
        int64_t i0 = (r / tj) * TILE, j0 = (r % tj) * TILE;
        const T *s = src + b * g.ssb + i0 * g.ssi + j0 * g.ssj;
        T *d = dst + b * g.dsb + i0 * g.dsi + j0 * g.dsj;
        const bool full = i0 + TILE <= g.ni && j0 + TILE <= g.nj;
        if (full) { // the common case: no bounds checks between the loads
            // a trip count known at compile time (ty < ROWS), so that all of
            // a thread's loads are in flight together, not four at a time
            T v[TILE / ROWS];
#pragma unroll
            for (int i = 0; i < TILE / ROWS; i++)
                v[i] = s[(ty + i * ROWS) * g.ssi + tx * g.ssj];
#pragma unroll
            for (int i = 0; i < TILE / ROWS; i++)
                tile[ty + i * ROWS][tx] = v[i];
        } else {
#pragma unroll
            for (int k = ty; k < TILE; k += ROWS)
                if (i0 + k < g.ni && j0 + tx < g.nj)
                    tile[k][tx] = s[k * g.ssi + tx * g.ssj];
        }
        __syncthreads();
        if (full) {
#pragma unroll
            for (int i = 0; i < TILE / ROWS; i++)
                d[tx * g.dsi + (ty + i * ROWS) * g.dsj] = tile[tx][ty + i * ROWS];
        } else {
#pragma unroll
            for (int k = ty; k < TILE; k += ROWS)
                if (j0 + k < g.nj && i0 + tx < g.ni)
                    d[tx * g.dsi + k * g.dsj] = tile[tx][k];
        }
        __syncthreads(); // the tile is reused by the next iteration
    }
}

// A transposing copy whose destination rows are short (ni <= 16: x.t()
// of a [16, 2^22] matrix made contiguous): square tiles would leave most of
// each tile, and of its threads, idle. Tiles of TI x TJ (TI * TJ = 4096
// elements), loaded along j and stored along i by the block's 256 threads
// in turn, 16 accesses a thread in flight; a destination of rows exactly TI
// long is written as one contiguous run.
template <typename T, int TI>
__global__ void __launch_bounds__(256) copy_transpose_short(T *dst, const T *src, TransposeGeom g)
{
    constexpr int TJ = 4096 / TI;
    __shared__ T tile[TI][TJ + 1];
    const int64_t tj = (g.nj + TJ - 1) / TJ;
    const int tid = threadIdx.x;
    pcs::pdl_wait(); // launched early (pdl.cuh): the kernel ahead is done
    for (int64_t t = blockIdx.x; t < tj * g.nb; t += gridDim.x) {
        const int64_t b = t / tj, j0 = (t - b * tj) * TJ;
        const T *s = src + b * g.ssb + j0 * g.ssj;
        T *d = dst + b * g.dsb + j0 * g.dsj;
#pragma unroll
        for (int e = tid; e < TI * TJ; e += 256) {
            const int k = e / TJ, c = e % TJ;
            if (k < g.ni && j0 + c < g.nj)
                tile[k][c] = s[k * g.ssi + c * g.ssj];
        }
        __syncthreads();
#pragma unroll
        for (int e = tid; e < TI * TJ; e += 256) {
            const int i = e % TI, c = e / TI;
            if (i < g.ni && j0 + c < g.nj)
                d[i * g.dsi + c * g.dsj] = tile[i][c];
        }
        __syncthreads(); // the tile is reused by the next iteration
    }
}

// A transpose with one short side (2 to 16 elements: x.t().contiguous()
// of a [2^22, 4] matrix, or of a [4, 2^22] one) whose every access can be
// a 16-byte pack: one side holds the tile as `ns` rows of contiguous
// elements along the long dim (the rows side), the other as one contiguous
// run of ns * TL elements, the short index fastest (the run side). Both are
// read and written in packs; the tile, [short][long] in shared memory,
// turns one order into the other. SRC_ROWS: the source is the rows side.
// float16 rows of 4 moved two bytes an access at 0.64x torch.
struct ShortGeom {
    int64_t ns, nl, nb;     // short and long sizes, batch
    int64_t row_stride;     // between the rows side's rows
    int64_t rows_b, run_b;  // batch strides of the two sides
};

template <typename T, int TS, bool SRC_ROWS>
__global__ void __launch_bounds__(256) copy_transpose_short_packs(T *dst, const T *src, ShortGeom h)
{
    constexpr int V = 16 / sizeof(T), TL = 16384 / sizeof(T) / TS, PL = TL / V;
    using P = Pack<T, V>;
    __shared__ P tile_packs[TS * PL];
    T(*tile)[TL] = reinterpret_cast<T(*)[TL]>(tile_packs);
    const int ns = (int)h.ns;
    const int64_t tl = (h.nl + TL - 1) / TL;
    pcs::pdl_wait(); // launched early (pdl.cuh): the kernel ahead is done
    for (int64_t t = blockIdx.x; t < tl * h.nb; t += gridDim.x) {
        const int64_t b = t / tl, l0 = (t - b * tl) * TL;
        const int nc = (int)(h.nl - l0 < TL ? h.nl - l0 : TL); // a whole number of packs (launcher)
        const int64_t rows_at = b * h.rows_b + l0, run_at = b * h.run_b + l0 * ns;
        const int nrun = ns * nc / V; // the run side's packs
        if constexpr (SRC_ROWS) {
#pragma unroll
            for (int p = threadIdx.x; p < TS * PL; p += 256) {
                const int r = p / PL, c = (p % PL) * V;
                if (r < ns && c < nc)
                    tile_packs[p] = *reinterpret_cast<const P *>(src + rows_at + r * h.row_stride + c);
            }
            __syncthreads();
            for (int p = threadIdx.x; p < nrun; p += 256) {
                int l = p * V / ns, r = p * V - l * ns;
                P o;
#pragma unroll
                for (int q = 0; q < V; q++) {
                    o.v[q] = tile[r][l];
                    if (++r == ns) {
                        r = 0;
                        l++;
                    }
                }
                reinterpret_cast<P *>(dst + run_at)[p] = o;
            }
        } else {
            for (int p = threadIdx.x; p < nrun; p += 256) {
                const P in = reinterpret_cast<const P *>(src + run_at)[p];
                int l = p * V / ns, r = p * V - l * ns;
#pragma unroll
                for (int q = 0; q < V; q++) {
                    tile[r][l] = in.v[q];
                    if (++r == ns) {
                        r = 0;
                        l++;
                    }
                }
            }
            __syncthreads();
#pragma unroll
            for (int p = threadIdx.x; p < TS * PL; p += 256) {
                const int r = p / PL, c = (p % PL) * V;
                if (r < ns && c < nc)
                    *reinterpret_cast<P *>(dst + rows_at + r * h.row_stride + c) = tile_packs[p];
            }
        }
        __syncthreads(); // the tile is reused by the next iteration
    }
}

// 2- and 4-byte elements whose rows are contiguous on both sides (source
// along j, destination along i) and aligned to two elements: the tile moves
// as words W of two neighbours. A word read from source row k holds
// columns (2x, 2x + 1); the two words of rows 2y and 2y + 1 at the same x
// give, rearranged, the destination words of columns 2x and 2x + 1 at rows
// (2y, 2y + 1). Half the memory instructions of the element kernel, each
// twice as wide. For shapes that are whole tiles (below), so there are no
// edge tiles; other shapes take copy_transpose.
struct PairGeom {
    TransposeGeom g;
    int64_t ti, tj; // whole tiles along i and j
};

// Where tile t of a word transpose starts: its first source word and its
// first destination word. A tile is `rows` source rows of `cols` elements,
// K elements a word; the launcher checked that ssi, dsj and the batch
// strides are multiples of K, so the element offsets divide exactly.
template <int K, class W>
__device__ __forceinline__ void word_tile(const PairGeom &p, int64_t t, int rows, int cols, const W *src,
                                          W *dst, const W *&s, W *&d)
{
    const TransposeGeom &g = p.g;
    const int64_t b = t / (p.ti * p.tj), r = t - b * p.ti * p.tj;
    const int64_t i0 = (r / p.tj) * rows, j0 = (r % p.tj) * cols;
    s = src + (b * g.ssb + i0 * g.ssi + j0) / K;
    d = dst + (b * g.dsb + j0 * g.dsj + i0) / K;
}

// The words of columns 2m and 2m + 1 from row words a (row 2y) and c (2y + 1).
__device__ __forceinline__ void unzip(uint32_t a, uint32_t c, uint32_t &lo, uint32_t &hi)
{
    lo = __byte_perm(a, c, 0x5410);
    hi = __byte_perm(a, c, 0x7632);
}
__device__ __forceinline__ void unzip(uint64_t a, uint64_t c, uint64_t &lo, uint64_t &hi)
{
    lo = (a & 0xffffffffull) | (c << 32);
    hi = (a >> 32) | (c & 0xffffffff00000000ull);
}

// A tile is pair_rows source rows of pair_words words: 256 bytes of each
// source row read and of each destination row written, for both element
// sizes (128 x 128 for 2-byte elements, 64 x 64 for 4-byte ones), so the
// row segments are as long for the narrow type as for the wide one.
template <class W> inline constexpr int pair_words = 256 / (int)sizeof(W);
template <class W> inline constexpr int pair_rows = 512 / (int)sizeof(W);

template <class W>
__global__ void __launch_bounds__(256) copy_transpose_pairs(W *dst, const W *src, PairGeom p)
{
    constexpr int TILE = pair_rows<W>, NW = pair_words<W>, ROWS = 8; // blockDim (32, 8)
    __shared__ W tile[TILE][NW + 1];
    const TransposeGeom &g = p.g;
    const int tx = threadIdx.x, ty = threadIdx.y;
    pcs::pdl_wait(); // launched early (pdl.cuh): the kernel ahead is done
    for (int64_t t = blockIdx.x; t < p.ti * p.tj * g.nb; t += gridDim.x) {
        const W *s;
        W *d;
        word_tile<2>(p, t, TILE, 2 * NW, src, dst, s, d);
        // trip counts known at compile time (ty < ROWS): all loads in flight
        W v[TILE / ROWS][NW / 32];
#pragma unroll
        for (int i = 0; i < TILE / ROWS; i++)
#pragma unroll
            for (int q = 0; q < NW / 32; q++)
                v[i][q] = s[(ty + i * ROWS) * (g.ssi / 2) + tx + 32 * q];
#pragma unroll
        for (int i = 0; i < TILE / ROWS; i++)
#pragma unroll
            for (int q = 0; q < NW / 32; q++)
                tile[ty + i * ROWS][tx + 32 * q] = v[i][q];
        __syncthreads();
#pragma unroll
        for (int i = 0; i < NW / ROWS; i++) {
            const int m = ty + i * ROWS;
#pragma unroll
            for (int q = 0; q < TILE / 64; q++) { // the word of rows (2x, 2x + 1)
                const int x = tx + 32 * q;
                W lo, hi;
                unzip(tile[2 * x][m], tile[2 * x + 1][m], lo, hi);
                d[(2 * m) * (g.dsj / 2) + x] = lo;
                d[(2 * m + 1) * (g.dsj / 2) + x] = hi;
            }
        }
        __syncthreads();
    }
}

// Words W of four neighbouring elements: the pairs kernel's idea one step
// further. 2-byte elements travel as 8-byte words, 4-byte ones as 16-byte
// words, so every memory instruction of a warp moves 256 or 512 bytes. A
// tile is quad_rows source rows of quad_words words: 256 bytes of each
// source row and of each destination row (128 x 128 elements of 2 bytes,
// 64 x 64 of 4). The four words of rows 4x .. 4x + 3 at the same word m
// give, rearranged (unzip4), the destination words of columns 4m .. 4m + 3
// at those rows. The tile has no padding column: word m of row r sits at
// m ^ ((r / 4) & S), S + 1 words being a shared-memory wavefront (16 of 8
// bytes, 8 of 16), so the four-row reads of a wavefront's threads and the
// row writes both hit distinct banks. On the H200, float32 went from 86-90 %
// of the device-to-device copy bandwidth (as pairs of words) to 96.2-96.7 %;
// streaming (evict-first) loads and stores measured no better for float32
// and 2 points worse for bfloat16. Built for four blocks an SM (64
// registers): with the loops' trip counts fixed, that lets all sixteen
// 8-byte loads of a thread issue together; on the H200 float16 95.1 ->
// 96.8 %, bfloat16 95.2 -> 96.5 % (x.t().contiguous()). A float32 tile of
// 128 rows (eight 16-byte loads a thread in flight, not four) measured
// slower: 96.2 -> 95.2 %.
__device__ __forceinline__ void unzip4(uint64_t r0, uint64_t r1, uint64_t r2, uint64_t r3, uint64_t c[4])
{
    const uint32_t l0 = (uint32_t)r0, l1 = (uint32_t)r1, l2 = (uint32_t)r2, l3 = (uint32_t)r3;
    const uint32_t h0 = (uint32_t)(r0 >> 32), h1 = (uint32_t)(r1 >> 32), h2 = (uint32_t)(r2 >> 32),
                   h3 = (uint32_t)(r3 >> 32);
    auto join = [](uint32_t lo, uint32_t hi) { return (uint64_t)lo | ((uint64_t)hi << 32); };
    c[0] = join(__byte_perm(l0, l1, 0x5410), __byte_perm(l2, l3, 0x5410));
    c[1] = join(__byte_perm(l0, l1, 0x7632), __byte_perm(l2, l3, 0x7632));
    c[2] = join(__byte_perm(h0, h1, 0x5410), __byte_perm(h2, h3, 0x5410));
    c[3] = join(__byte_perm(h0, h1, 0x7632), __byte_perm(h2, h3, 0x7632));
}
__device__ __forceinline__ void unzip4(uint4 r0, uint4 r1, uint4 r2, uint4 r3, uint4 c[4])
{
    c[0] = {r0.x, r1.x, r2.x, r3.x};
    c[1] = {r0.y, r1.y, r2.y, r3.y};
    c[2] = {r0.z, r1.z, r2.z, r3.z};
    c[3] = {r0.w, r1.w, r2.w, r3.w};
}

template <class W> inline constexpr int quad_words = 256 / (int)sizeof(W);
template <class W> inline constexpr int quad_rows = 1024 / (int)sizeof(W);

template <class W> __global__ void __launch_bounds__(256, 4) copy_transpose_quads(W *dst, const W *src, PairGeom p)
{
    constexpr int TR = quad_rows<W>, NW = quad_words<W>, S = 128 / (int)sizeof(W) - 1;
    constexpr int XS = TR / 4; // threads along the destination row
    __shared__ W tile[TR][NW];
    const TransposeGeom &g = p.g;
    const int lid = threadIdx.x, w = lid % NW, x = lid % XS;
    pcs::pdl_wait(); // launched early (pdl.cuh): the kernel ahead is done
    for (int64_t t = blockIdx.x; t < p.ti * p.tj * g.nb; t += gridDim.x) {
        const W *s;
        W *d;
        word_tile<4>(p, t, TR, 4 * NW, src, dst, s, d);
        // Trip counts fixed at compile time, so that the loops unroll whole
        // and a thread's loads are all in flight together (with k < TR as
        // the bound, nvcc unrolled by four with a remainder: four loads at a
        // time).
        constexpr int KR = 256 / NW, MR = 256 / XS;
        W v[TR / KR];
#pragma unroll
        for (int i = 0; i < TR / KR; i++)
            v[i] = s[(lid / NW + i * KR) * (g.ssi / 4) + w];
#pragma unroll
        for (int i = 0; i < TR / KR; i++) {
            const int k = lid / NW + i * KR;
            tile[k][w ^ ((k >> 2) & S)] = v[i];
        }
        __syncthreads();
#pragma unroll
        for (int i = 0; i < NW / MR; i++) {
            const int m = lid / XS + i * MR;
            const int c = m ^ (x & S); // rows 4x .. 4x + 3 share the swizzle
            W o[4];
            unzip4(tile[4 * x][c], tile[4 * x + 1][c], tile[4 * x + 2][c], tile[4 * x + 3][c], o);
#pragma unroll
            for (int q = 0; q < 4; q++)
                d[(4 * m + q) * (g.dsj / 4) + x] = o[q];
        }
        __syncthreads();
    }
}

// Can t (of elements of sizeof(W) / 4 bytes at src, dst) take
// copy_transpose_quads with words of W?
template <class W> bool quads_ok(const TransposeGeom &t, const void *dst, const void *src)
{
    auto four = [](int64_t x) { return (x & 3) == 0; };
    const uintptr_t a = sizeof(W) - 1;
    return t.ssj == 1 && t.dsi == 1 && four(t.ssi) && four(t.dsj) && four(t.ssb) && four(t.dsb) &&
           ((uintptr_t)dst & a) == 0 && ((uintptr_t)src & a) == 0 && t.ni % quad_rows<W> == 0 &&
           t.nj % (4 * quad_words<W>) == 0;
}

// Can t (of elements of `size` bytes at src, dst) take copy_transpose_pairs?
bool pairs_ok(const TransposeGeom &t, const void *dst, const void *src, int size)
{
    auto even = [](int64_t x) { return (x & 1) == 0; };
    const uintptr_t a = 2 * (uintptr_t)size - 1;
    return t.ssj == 1 && t.dsi == 1 && even(t.ssi) && even(t.dsj) && even(t.ssb) && even(t.dsb) &&
           ((uintptr_t)dst & a) == 0 && ((uintptr_t)src & a) == 0 && t.ni % (256 / size) == 0 &&
           t.nj % (256 / size) == 0;
}

// Is g (2 or 3 dims) a transpose worth tiling? The two fastest dims
// different, and one of them at least 16 long (the caller checks what its
// kernel needs of the other).
bool as_transpose(const pcs_ew_geom &g, TransposeGeom *t)
{
    if (g.ndim < 2 || g.ndim > 3)
        return false;
    auto mag = [](int64_t x) { return x < 0 ? -x : x; };
    int i = 0, j = -1; // j: the source's fastest dim that is not broadcast
    for (int d = 0; d < g.ndim; d++) {
        if (mag(g.strides[0][d]) < mag(g.strides[0][i]))
            i = d;
        if (g.strides[1][d] != 0 && (j < 0 || mag(g.strides[1][d]) < mag(g.strides[1][j])))
            j = d;
    }
    // a short side (below 16) is a transpose for copy_transpose_short_packs only
    if (j < 0 || i == j || g.sizes[i] < 2 || g.sizes[j] < 2 || (g.sizes[i] < 16 && g.sizes[j] < 16))
        return false;
    int b = 3 - i - j; // the third dim when there are three
    t->ni = g.sizes[i];
    t->nj = g.sizes[j];
    t->dsi = g.strides[0][i];
    t->dsj = g.strides[0][j];
    t->ssi = g.strides[1][i];
    t->ssj = g.strides[1][j];
    t->nb = g.ndim == 3 ? g.sizes[b] : 1;
    t->dsb = g.ndim == 3 ? g.strides[0][b] : 0;
    t->ssb = g.ndim == 3 ? g.strides[1][b] : 0;
    return true;
}

unsigned blocks_for(int64_t work)
{
    int64_t b = (work + THREADS - 1) / THREADS;
    // grid-stride loops cover the rest; this many blocks fill any GPU
    return (unsigned)(b < 1 ? 1 : b > 65536 ? 65536 : b);
}

template <typename D, typename S>
void launch_strided(void *dst, const void *src, int64_t n, const pcs_ew_geom *g, cudaStream_t st)
{
    unsigned grid = blocks_for((n + UNROLL - 1) / UNROLL);
    if (g->index32 && n <= INT32_MAX)
        pcs::launch_kernel_pdl(copy_strided<D, S, pcs::Off32<2>>, grid, THREADS, st, (D *)dst, (const S *)src,
                           (uint32_t)n, pcs::make_off32<2>(*g));
    else
        pcs::launch_kernel_pdl(copy_strided<D, S, pcs::Off64<2>>, grid, THREADS, st, (D *)dst, (const S *)src, n,
                           pcs::make_off64<2>(*g));
}

// A same-dtype copy whose fastest dim is contiguous on both sides (a slice
// of rows, cat or stack along a later dim) moves as the widest word (16, 8
// or 4 bytes) that divides that dim's length, every other stride and both
// addresses: the strided kernel then moves 16 bytes for each offset it
// computes instead of 4 (cat of [8192, 16384] float32 along dim 1 went from
// 0.88x torch to copy bandwidth). Returns the word's size in bytes with the
// geometry in words in *w, or 0.
int widen(const pcs_ew_geom &g, const void *dst, const void *src, int size, pcs_ew_geom *w)
{
    const int in = g.ndim - 1;
    if (g.ndim < 1 || g.strides[0][in] != 1 || g.strides[1][in] != 1)
        return 0;
    for (int bytes = 16; bytes > size; bytes /= 2) {
        const int64_t k = bytes / size;
        bool ok = (uintptr_t)dst % bytes == 0 && (uintptr_t)src % bytes == 0 && g.sizes[in] % k == 0;
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
        return bytes;
    }
    return 0;
}

// Launches copy_transpose_short_packs on T (an unsigned word of the
// element's size) when t has a short side that it can take; false if not.
template <typename T>
bool launch_short_packs(const TransposeGeom &t, void *dst, const void *src, cudaStream_t st)
{
    constexpr int64_t V = 16 / sizeof(T);
    if (((uintptr_t)dst & 15) || ((uintptr_t)src & 15) || t.ssj != 1 || t.dsi != 1 || t.ssb % V || t.dsb % V)
        return false;
    ShortGeom h;
    bool src_rows;
    if (t.ni <= 16 && t.dsj == t.ni && t.nj % V == 0 && t.ssi % V == 0) {
        h = {t.ni, t.nj, t.nb, t.ssi, t.ssb, t.dsb}; // rows of the source, a run of the destination
        src_rows = true;
    } else if (t.nj <= 16 && t.ssi == t.nj && t.ni % V == 0 && t.dsj % V == 0) {
        h = {t.nj, t.ni, t.nb, t.dsj, t.dsb, t.ssb};
        src_rows = false;
    } else {
        return false;
    }
    auto go = [&](auto ts, auto rows) {
        constexpr int TS = decltype(ts)::value;
        const int64_t tl = 16384 / (int64_t)sizeof(T) / TS;
        const int64_t tiles = (h.nl + tl - 1) / tl * h.nb;
        const unsigned grid = (unsigned)(tiles < 65536 ? tiles : 65536);
        pcs::launch_kernel_pdl(copy_transpose_short_packs<T, TS, decltype(rows)::value>, grid, 256, st, (T *)dst,
                           (const T *)src, h);
    };
    auto pick = [&](auto rows) { // the tile's short side: 4, 8 or 16 rows
        if (h.ns <= 4)
            go(std::integral_constant<int, 4>{}, rows);
        else if (h.ns <= 8)
            go(std::integral_constant<int, 8>{}, rows);
        else
            go(std::integral_constant<int, 16>{}, rows);
    };
    if (src_rows)
        pick(std::true_type{});
    else
        pick(std::false_type{});
    return true;
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
        TransposeGeom t;
        const bool tr = as_transpose(*g, &t);
        if constexpr (sizeof(D) <= 8) {
            using U = std::conditional_t<sizeof(D) == 1, uint8_t,
                                         std::conditional_t<sizeof(D) == 2, uint16_t,
                                                            std::conditional_t<sizeof(D) == 4, uint32_t, uint64_t>>>;
            if (tr && launch_short_packs<U>(t, dst, src, st))
                return;
        }
        if (tr && t.ni >= 16 && t.nj >= 16) {
            constexpr int TILE = tile_of<D>;
            if constexpr (sizeof(D) <= 8) {
                if (t.ni <= 16) {
                    constexpr int64_t TJ8 = 4096 / 8, TJ16 = 4096 / 16;
                    const int64_t tiles = ((t.nj + (t.ni <= 8 ? TJ8 : TJ16) - 1) / (t.ni <= 8 ? TJ8 : TJ16)) * t.nb;
                    const unsigned grid = (unsigned)(tiles < 65536 ? tiles : 65536);
                    if (t.ni <= 8)
                        pcs::launch_kernel_pdl(copy_transpose_short<D, 8>, grid, 256, st, (D *)dst, (const S *)src, t);
                    else
                        pcs::launch_kernel_pdl(copy_transpose_short<D, 16>, grid, 256, st, (D *)dst, (const S *)src, t);
                    return;
                }
            }
            if constexpr (sizeof(D) == 2 || sizeof(D) == 4) {
                using W = std::conditional_t<sizeof(D) == 2, uint64_t, uint4>;
                if (quads_ok<W>(t, dst, src)) {
                    PairGeom p{t, t.ni / quad_rows<W>, t.nj / (4 * quad_words<W>)};
                    int64_t tiles = p.ti * p.tj * t.nb;
                    unsigned grid = (unsigned)(tiles < 65536 ? tiles : 65536);
                    pcs::launch_kernel_pdl(copy_transpose_quads<W>, grid, 256, st, (W *)dst, (const W *)src, p);
                    return;
                }
            }
            if constexpr (sizeof(D) == 2 || sizeof(D) == 4) {
                using W = std::conditional_t<sizeof(D) == 2, uint32_t, uint64_t>;
                if (pairs_ok(t, dst, src, (int)sizeof(D))) {
                    PairGeom p{t, t.ni / pair_rows<W>, t.nj / (2 * pair_words<W>)};
                    int64_t tiles = p.ti * p.tj * t.nb;
                    unsigned grid = (unsigned)(tiles < 65536 ? tiles : 65536);
                    pcs::launch_kernel_pdl(copy_transpose_pairs<W>, grid, dim3(32, 8), st, (W *)dst,
                                       (const W *)src, p);
                    return;
                }
            }
            int64_t tiles = ((t.ni + TILE - 1) / TILE) * ((t.nj + TILE - 1) / TILE) * t.nb;
            unsigned grid = (unsigned)(tiles < 65536 ? tiles : 65536);
            pcs::launch_kernel_pdl(copy_transpose<D>, grid, dim3(TILE, 256 / TILE), st, (D *)dst,
                               (const S *)src, t);
            return;
        }
        pcs_ew_geom w;
        const int64_t size = (int64_t)sizeof(D);
        switch (widen(*g, dst, src, (int)size, &w)) {
        case 16: launch_strided<b16, b16>(dst, src, n * size / 16, &w, st); return;
        case 8: launch_strided<uint64_t, uint64_t>(dst, src, n * size / 8, &w, st); return;
        case 4: launch_strided<uint32_t, uint32_t>(dst, src, n * size / 4, &w, st); return;
        default: break;
        }
    }
    launch_strided<D, S>(dst, src, n, g, st);
}

// ---------------------------------------------------------------------------
// Dispatch from dtype ids to types: one switch, used for both sides.

template <typename T> struct Tag {
    using type = T;
};

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

// Raw-byte carriers for same-dtype copies and fills.
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

extern "C" int pcs_launch_fill(void *dst, int itemsize, const void *value, int64_t n,
                               const pcs_ew_geom *geom, cudaStream_t stream)
{
    if (n <= 0)
        return 0;
    pcs_ew_geom g = geom ? *geom : pcs::flat_geom(n);
    bool ok = with_carrier(itemsize, [&](auto t) {
        using T = typename decltype(t)::type;
        T v;
        memcpy(&v, value, sizeof v);
        if (g.index32 && n <= INT32_MAX)
            pcs::launch_kernel_pdl(fill_kernel<T, pcs::Off32<1>>, blocks_for(n), THREADS, stream, (T *)dst, v,
                               (uint32_t)n, pcs::make_off32<1>(g));
        else
            pcs::launch_kernel_pdl(fill_kernel<T, pcs::Off64<1>>, blocks_for(n), THREADS, stream, (T *)dst, v, n,
                               pcs::make_off64<1>(g));
    });
    return ok ? 0 : -1;
}
