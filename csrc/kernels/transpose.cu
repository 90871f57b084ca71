// transpose.cu: same-dtype copies whose two sides have different fastest
// dims (x.t().contiguous(), permute(...).contiguous(), y.copy_(x.t())),
// moved through shared-memory tiles so that both the reads and the writes
// run along contiguous rows.
//
// copy.cu hands every same-dtype strided copy here first; a geometry that is
// not a transpose worth tiling is handed back (pcs_launch_transpose returns 0)
// and takes copy.cu's strided path. Elements travel as raw unsigned words of
// their size (a transpose never converts), so one instance serves every
// dtype of a size. The kernels, by shape:
//   copy_transpose_short_packs  one side of 2..16 elements, 16-byte packs;
//   copy_transpose_short        destination rows of at most 16 elements;
//   copy_transpose_quads        2- and 4-byte elements, whole 256-byte tiles,
//                               four neighbours a word;
//   copy_transpose_pairs        the same with two neighbours a word;
//   copy_transpose              any other transpose, element by element.
#include <stdint.h>

#include <type_traits>

#include "ew_common.cuh"
#include "pdl.cuh"

namespace {

using pcs::Pack;

// The 16-byte carrier (complex128): a transpose only moves bytes.
struct alignas(16) b16 {
    uint64_t lo, hi;
};

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

// Launches the transpose kernel that fits g (elements of T, an unsigned word
// of the element's size); false when g is not a transpose worth tiling.
template <typename T>
bool launch_transpose(const pcs_ew_geom &g, void *dst, const void *src, cudaStream_t st)
{
    TransposeGeom t;
    if (!as_transpose(g, &t))
        return false;
    if constexpr (sizeof(T) <= 8) {
        if (launch_short_packs<T>(t, dst, src, st))
            return true;
    }
    if (t.ni < 16 || t.nj < 16)
        return false;
    constexpr int TILE = tile_of<T>;
    if constexpr (sizeof(T) <= 8) {
        if (t.ni <= 16) {
            constexpr int64_t TJ8 = 4096 / 8, TJ16 = 4096 / 16;
            const int64_t tiles = ((t.nj + (t.ni <= 8 ? TJ8 : TJ16) - 1) / (t.ni <= 8 ? TJ8 : TJ16)) * t.nb;
            const unsigned grid = (unsigned)(tiles < 65536 ? tiles : 65536);
            if (t.ni <= 8)
                pcs::launch_kernel_pdl(copy_transpose_short<T, 8>, grid, 256, st, (T *)dst, (const T *)src, t);
            else
                pcs::launch_kernel_pdl(copy_transpose_short<T, 16>, grid, 256, st, (T *)dst, (const T *)src, t);
            return true;
        }
    }
    if constexpr (sizeof(T) == 2 || sizeof(T) == 4) {
        using W = std::conditional_t<sizeof(T) == 2, uint64_t, uint4>;
        if (quads_ok<W>(t, dst, src)) {
            PairGeom p{t, t.ni / quad_rows<W>, t.nj / (4 * quad_words<W>)};
            int64_t tiles = p.ti * p.tj * t.nb;
            unsigned grid = (unsigned)(tiles < 65536 ? tiles : 65536);
            pcs::launch_kernel_pdl(copy_transpose_quads<W>, grid, 256, st, (W *)dst, (const W *)src, p);
            return true;
        }
        using W2 = std::conditional_t<sizeof(T) == 2, uint32_t, uint64_t>;
        if (pairs_ok(t, dst, src, (int)sizeof(T))) {
            PairGeom p{t, t.ni / pair_rows<W2>, t.nj / (2 * pair_words<W2>)};
            int64_t tiles = p.ti * p.tj * t.nb;
            unsigned grid = (unsigned)(tiles < 65536 ? tiles : 65536);
            pcs::launch_kernel_pdl(copy_transpose_pairs<W2>, grid, dim3(32, 8), st, (W2 *)dst, (const W2 *)src, p);
            return true;
        }
    }
    int64_t tiles = ((t.ni + TILE - 1) / TILE) * ((t.nj + TILE - 1) / TILE) * t.nb;
    unsigned grid = (unsigned)(tiles < 65536 ? tiles : 65536);
    pcs::launch_kernel_pdl(copy_transpose<T>, grid, dim3(TILE, 256 / TILE), st, (T *)dst, (const T *)src, t);
    return true;
}

}  // namespace

extern "C" int pcs_launch_transpose(void *dst, const void *src, int itemsize, const pcs_ew_geom *geom,
                                    cudaStream_t stream)
{
    if (!geom)
        return 0;
    switch (itemsize) {
    case 1: return launch_transpose<uint8_t>(*geom, dst, src, stream);
    case 2: return launch_transpose<uint16_t>(*geom, dst, src, stream);
    case 4: return launch_transpose<uint32_t>(*geom, dst, src, stream);
    case 8: return launch_transpose<uint64_t>(*geom, dst, src, stream);
    case 16: return launch_transpose<b16>(*geom, dst, src, stream);
    default: return 0;
    }
}
