// softmax_bwd.cu: the gradient of softmax and log_softmax along one dim
// from the op's output, behind pcs_launch_softmax_backward (kernels.h).
//
//   softmax:      gx = y * (g - sum(g * y))
//   log_softmax:  gx = g - exp(y) * sum(g)
//
// Composed of elementwise ops and a reduction, this took four launches and
// moved a row's worth of memory about nine times; here g and y are read
// once over the last dim (registers, or g kept in shared memory) and the
// gradient written once, as torch's own backward kernels do.
//   vwarp  rows of up to 32 whole 16-byte packs on 16-byte boundaries:
//          a group of lanes a row, a pack of g and one of y a lane, four
//          groups of rows a warp in flight (H100 against the warp kernel:
//          log_softmax float16 [2^20, 32] 110 -> 71 us, float32 [2^21, 16]
//          162 -> 137 us, [2^20, 8] 72 -> 37 us).
//   warp   K <= 1024: a warp a row, K / 32 values of g and y a lane (rounded
//          up to a power of two) in registers; float32 and float64 keep two
//          or four short rows a warp in flight so their loads overlap,
//          16-bit rows one.
//   regs   rows of up to 2048 16-byte packs (K <= 16384 in 16 bits, 8192
//          in float32, 4096 in float64) on the 16-byte grid: g and y in
//          registers, up to 4 packs of each a thread of the smallest block
//          of 64 to 512 threads that holds them, read once.
//   block  longer rows: a 512-thread block a row, the sum in a first pass
//          (of g alone for log_softmax) and the write in a second, with g
//          kept in shared memory between them for rows up to 110 KiB;
//          16-byte packs when g, y and gx share their offset from a 16-byte
//          boundary (RowParts), one value at a time otherwise.
//   lines  a dim that is not the last, K up to 32: a line's g and y in
//          the registers of 1 to 4 lanes of a warp, its sum combined by
//          shuffles (softmax_lines.cuh).
//   strided  the other such dims: 32 neighbouring lines a block, K split
//          over its 8 or 32 rows of threads, each thread's values kept in
//          registers when they are at most 4, else read twice.
// float16 and bfloat16 accumulate in float, float64 in double.
#include "softmax_lines.cuh"
#include "softmax_rows.cuh"
#include "softmax_short.cuh"
#include "pdl.cuh"

using namespace pcs;
using namespace pcs::softmax_rows;

namespace {

// what a value adds to the row's sum, and its gradient from that sum
template <class A, bool LOG> __device__ __forceinline__ A bwd_term(A g, A y) { return LOG ? g : g * y; }

// exp(y) of log_softmax's output: for 16-bit rows the GPU's ex2.approx of
// y log2(e) (a relative error near 2^-22, far below the result's rounding);
// float32 and float64 keep expf and exp.
template <class T> __device__ __forceinline__ compute_t<T> exp_out(compute_t<T> y)
{
    if constexpr (is_lowp<T>) {
        return ex2_fast(y * LOG2E);
    } else {
        return acc_exp(y);
    }
}

template <class T, bool LOG> __device__ __forceinline__ compute_t<T> bwd_grad(compute_t<T> g, compute_t<T> y,
                                                                              compute_t<T> s)
{
    if constexpr (LOG)
        return g - exp_out<T>(y) * s;
    else
        return y * (g - s);
}

template <class T, int VPT, int ROWS, bool LOG>
__global__ void __launch_bounds__(128) bwd_warp(T *gx, const T *g, const T *y, int64_t rows, int K)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    using A = compute_t<T>;
    const int lane = threadIdx.x & 31;
    const int64_t warps = (int64_t)gridDim.x * (blockDim.x >> 5);
    for (int64_t row0 = ((int64_t)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5)) * ROWS;
         row0 < rows; row0 += warps * ROWS) {
        A gv[ROWS][VPT], yv[ROWS][VPT], s[ROWS];
#pragma unroll
        for (int r = 0; r < ROWS; r++) {
            const int64_t o = (row0 + r) * K;
#pragma unroll
            for (int i = 0; i < VPT; i++) {
                const int k = lane + 32 * i;
                const bool in = row0 + r < rows && k < K;
                gv[r][i] = in ? to_c<A>(g[o + k]) : A(0);
                yv[r][i] = in ? to_c<A>(y[o + k]) : A(0);
            }
        }
#pragma unroll
        for (int r = 0; r < ROWS; r++) {
            s[r] = A(0);
#pragma unroll
            for (int i = 0; i < VPT; i++)
                s[r] += bwd_term<A, LOG>(gv[r][i], yv[r][i]); // 0 past the row's end
            s[r] = warp_sum(s[r]);
        }
#pragma unroll
        for (int r = 0; r < ROWS; r++) {
            if (row0 + r >= rows)
                break;
            const int64_t o = (row0 + r) * K;
#pragma unroll
            for (int i = 0; i < VPT; i++) {
                const int k = lane + 32 * i;
                if (k < K)
                    gx[o + k] = from_c<T>(bwd_grad<T, LOG>(gv[r][i], yv[r][i], s[r]));
            }
        }
    }
}

// vector warp: rows of whole 16-byte packs, at most 32 packs (float32
// rows up to 128 values, 16-bit up to 256): G lanes a row, one pack of g
// and one of y a lane, ROWS groups of 32 / G rows a warp in flight, as the
// forward's softmax_vwarp. The scalar kernel moved a value a lane a load:
// [2^20, 32] float32 read four 4-byte values a lane per row group.
template <class T, int G, int ROWS, bool LOG>
__global__ void __launch_bounds__(128) bwd_vwarp(T *gx, const T *g, const T *y, int64_t rows, int K)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    using A = compute_t<T>;
    constexpr int VEC = 16 / sizeof(T), RPW = 32 / G;
    using P = Pack<T, VEC>;
    const int lane = threadIdx.x & 31, q = lane % G, sub = lane / G, nvec = K / VEC;
    const int64_t warps = (int64_t)gridDim.x * (blockDim.x >> 5);
    for (int64_t row0 = ((int64_t)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5)) * (RPW * ROWS);
         row0 < rows; row0 += warps * (RPW * ROWS)) {
        P gp[ROWS], yp[ROWS];
        A s[ROWS];
#pragma unroll
        for (int r = 0; r < ROWS; r++) {
            const int64_t row = row0 + r * RPW + sub;
            if (row < rows && q < nvec) {
                gp[r] = reinterpret_cast<const P *>(g + row * K)[q];
                yp[r] = reinterpret_cast<const P *>(y + row * K)[q];
            }
        }
#pragma unroll
        for (int r = 0; r < ROWS; r++) {
            s[r] = A(0);
            if (row0 + r * RPW + sub < rows && q < nvec) {
#pragma unroll
                for (int j = 0; j < VEC; j++)
                    s[r] += bwd_term<A, LOG>(to_c<A>(gp[r].v[j]), to_c<A>(yp[r].v[j]));
            }
            s[r] = warp_sum<A, G>(s[r]); // every lane takes part
        }
#pragma unroll
        for (int r = 0; r < ROWS; r++) {
            const int64_t row = row0 + r * RPW + sub;
            if (row < rows && q < nvec) {
                P o;
#pragma unroll
                for (int j = 0; j < VEC; j++)
                    o.v[j] = from_c<T>(bwd_grad<T, LOG>(to_c<A>(gp[r].v[j]), to_c<A>(yp[r].v[j]), s[r]));
                reinterpret_cast<P *>(gx + row * K)[q] = o;
            }
        }
    }
}

// A row is read as RowParts (K = 50257 is not whole 16-byte packs): the
// scalar values before the first 16-byte boundary and after the last whole
// pack go to the first threads (g, y and gx share their offset from a
// 16-byte boundary; VEC 1 when they do not). CACHE: the first pass keeps
// the row's packs of g in shared memory for the second, so each tensor is
// read from global memory once; each thread reads back only the packs it
// wrote, so the passes need no barrier between them.
template <class T, int VEC, bool LOG, bool CACHE>
__global__ void __launch_bounds__(BLOCK) bwd_block(T *gx, const T *g, const T *y, int64_t rows, int64_t K)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    using A = compute_t<T>;
    using P = Pack<T, VEC>;
    __shared__ A red[BLOCK / 32];
    extern __shared__ __align__(16) unsigned char smem_raw[];
    P *cache = reinterpret_cast<P *>(smem_raw);
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const T *gr = g + row * K, *yr = y + row * K;
        T *xr = gx + row * K;
        const RowParts<T, VEC> pt(gr, K);
        const int64_t n = pt.nvec, e = pt.extra((int)threadIdx.x); // whole packs; this thread's scalar value
        const P *gp = reinterpret_cast<const P *>(gr + pt.h), *yp = reinterpret_cast<const P *>(yr + pt.h);
        A s = A(0), ge = A(0);
        if (e >= 0) {
            ge = to_c<A>(gr[e]);
            s = LOG ? ge : ge * to_c<A>(yr[e]);
        }
#pragma unroll 4
        for (int64_t i = threadIdx.x; i < n; i += BLOCK) {
            const P a = gp[i];
            if constexpr (CACHE)
                cache[i] = a;
            if constexpr (LOG) { // sum(g): y is read once, by the second pass
#pragma unroll
                for (int j = 0; j < VEC; j++)
                    s += to_c<A>(a.v[j]);
            } else {
                const P b = yp[i];
#pragma unroll
                for (int j = 0; j < VEC; j++)
                    s += to_c<A>(a.v[j]) * to_c<A>(b.v[j]);
            }
        }
        s = block_reduce<1>(s, red);
        if (e >= 0)
            xr[e] = from_c<T>(bwd_grad<T, LOG>(ge, to_c<A>(yr[e]), s));
        P *op = reinterpret_cast<P *>(xr + pt.h);
#pragma unroll 4
        for (int64_t i = threadIdx.x; i < n; i += BLOCK) {
            const P a = CACHE ? cache[i] : gp[i], b = yp[i];
            P o;
#pragma unroll
            for (int j = 0; j < VEC; j++)
                o.v[j] = from_c<T>(bwd_grad<T, LOG>(to_c<A>(a.v[j]), to_c<A>(b.v[j]), s));
            op[i] = o;
        }
    }
}

// Rows of up to 4 packs a thread of NT threads, a block a row, on the
// 16-byte grid as RowParts: every pack of g and y is loaded into registers
// first (all of a thread's loads in flight), then the sum, then the write,
// so each tensor is read once and the row never goes through shared memory.
// bwd_block gave a row of up to 8192 values 512 threads whatever its
// length: a float32 row of 2048 was one pack of g and y a thread.
template <class T, bool LOG, int NT>
__global__ void __launch_bounds__(NT, 1024 / NT) bwd_regs(T *gx, const T *g, const T *y, int64_t rows, int64_t K)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    using A = compute_t<T>;
    constexpr int VEC = 16 / sizeof(T), PPT = 4;
    using P = Pack<T, VEC>;
    __shared__ A red[NT / 32];
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const T *gr = g + row * K, *yr = y + row * K;
        T *xr = gx + row * K;
        const RowParts<T, VEC> pt(gr, K);
        const int n = (int)pt.nvec;
        const int64_t e = pt.extra((int)threadIdx.x);
        const P *gp = reinterpret_cast<const P *>(gr + pt.h), *yp = reinterpret_cast<const P *>(yr + pt.h);
        uint4 gw[PPT], yw[PPT]; // read only where the pack is in the row
#pragma unroll
        for (int p = 0; p < PPT; p++) { // past the row's packs: pack 0 again, unused
            const int i = threadIdx.x + NT * p, k = i < n ? i : 0;
            gw[p] = *reinterpret_cast<const uint4 *>(gp + k);
            yw[p] = *reinterpret_cast<const uint4 *>(yp + k);
        }
        A s = A(0), ge = A(0), ye = A(0);
        if (e >= 0) {
            ge = to_c<A>(gr[e]);
            ye = to_c<A>(yr[e]);
            s = LOG ? ge : ge * ye;
        }
#pragma unroll
        for (int p = 0; p < PPT; p++) {
            if ((int)threadIdx.x + NT * p < n) {
                const P a = from_words<P>(gw[p]), b = from_words<P>(yw[p]);
#pragma unroll
                for (int j = 0; j < VEC; j++)
                    s += LOG ? to_c<A>(a.v[j]) : to_c<A>(a.v[j]) * to_c<A>(b.v[j]);
            }
        }
        s = block_reduce<1, NT / 32>(s, red);
        if (e >= 0)
            xr[e] = from_c<T>(bwd_grad<T, LOG>(ge, ye, s));
        P *op = reinterpret_cast<P *>(xr + pt.h);
#pragma unroll
        for (int p = 0; p < PPT; p++) {
            const int i = threadIdx.x + NT * p;
            if (i < n) {
                const P a = from_words<P>(gw[p]), b = from_words<P>(yw[p]);
                P o;
#pragma unroll
                for (int j = 0; j < VEC; j++)
                    o.v[j] = from_c<T>(bwd_grad<T, LOG>(to_c<A>(a.v[j]), to_c<A>(b.v[j]), s));
                op[i] = o;
            }
        }
    }
}

// B > 1 (a dim that is not the last: [N, C, H, W] over C): a block takes
// 32 neighbouring lines (a, b..b+31), so each warp load is one coalesced
// line, by Y threads that split K; their partial sums meet in shared
// memory in a fixed order, then the same threads write. f(o, ok) for each
// chunk of the block: o the offset of the thread's line at k = 0, ok
// whether that line exists.
template <class F> __device__ __forceinline__ void for_line_chunks(int64_t A_, int64_t K, int64_t B, F &&f)
{
    const int tx = threadIdx.x;
    const int64_t chunks = (B + 31) / 32, total = A_ * chunks;
    for (int64_t c = blockIdx.x; c < total; c += gridDim.x) {
        const int64_t a = c / chunks, b = (c - a * chunks) * 32 + tx;
        f(a * K * B + b, b < B);
    }
}

// The line's sum: the Y partial sums of column threadIdx.x added in a
// fixed order through sm, which is free again when this returns.
template <int Y, class A> __device__ __forceinline__ A column_sum(A s, A (&sm)[Y][33])
{
    const int tx = threadIdx.x;
    sm[threadIdx.y][tx] = s;
    __syncthreads();
    s = sm[0][tx];
    for (int r = 1; r < Y; r++)
        s += sm[r][tx];
    __syncthreads(); // read before the next chunk overwrites
    return s;
}

template <class T, int Y, bool LOG>
__global__ void __launch_bounds__(32 * Y) bwd_strided(T *gx, const T *g, const T *y, int64_t A_, int64_t K,
                                                      int64_t B)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    using A = compute_t<T>;
    __shared__ A sm[Y][33];
    const int ty = threadIdx.y;
    for_line_chunks(A_, K, B, [&](int64_t o, bool ok) {
        A s = A(0);
        if (ok) {
#pragma unroll 4
            for (int64_t k = ty; k < K; k += Y)
                s += LOG ? to_c<A>(g[o + k * B]) : to_c<A>(g[o + k * B]) * to_c<A>(y[o + k * B]);
        }
        s = column_sum<Y>(s, sm);
        if (ok) {
#pragma unroll 4
            for (int64_t k = ty; k < K; k += Y)
                gx[o + k * B] = from_c<T>(bwd_grad<T, LOG>(to_c<A>(g[o + k * B]), to_c<A>(y[o + k * B]), s));
        }
    });
}

// bwd_strided for a short dim (K <= Y * KPT) of lines longer than
// softmax_lines takes, too few to fill the GPU: each thread keeps its KPT
// values of g and y in registers between the sum and the write, so each is
// read once, and issues all of its loads before any math. The two-pass
// kernel above reads g and y twice and, storing as it goes, waits on each
// load in turn. Sums in the same order as bwd_strided.
template <class T, int Y, int KPT, bool LOG>
__global__ void __launch_bounds__(32 * Y) bwd_strided_reg(T *__restrict__ gx, const T *__restrict__ g,
                                                          const T *__restrict__ y, int64_t A_, int64_t K, int64_t B)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    using A = compute_t<T>;
    __shared__ A sm[Y][33];
    const int ty = threadIdx.y;
    for_line_chunks(A_, K, B, [&](int64_t o, bool ok) {
        T gv[KPT], yv[KPT];
#pragma unroll
        for (int i = 0; i < KPT; i++) {
            const int64_t k = ty + (int64_t)Y * i;
            if (ok && k < K) {
                gv[i] = g[o + k * B];
                yv[i] = y[o + k * B];
            }
        }
        A s = A(0);
#pragma unroll
        for (int i = 0; i < KPT; i++)
            if (ok && ty + Y * i < K)
                s += bwd_term<A, LOG>(to_c<A>(gv[i]), to_c<A>(yv[i]));
        s = column_sum<Y>(s, sm);
        if (ok) {
#pragma unroll
            for (int i = 0; i < KPT; i++) {
                const int64_t k = ty + (int64_t)Y * i;
                if (k < K)
                    gx[o + k * B] = from_c<T>(bwd_grad<T, LOG>(to_c<A>(gv[i]), to_c<A>(yv[i]), s));
            }
        }
    });
}

// Lines of at most 4 lanes of 16 values (softmax_lines.cuh): g and y in
// registers, the line's sum combined across its lanes by shuffles.
template <class T, int Y, int KPT, int V, bool LOG>
__global__ void __launch_bounds__(softmax_lines::LINES_BLOCK)
    bwd_lines(T *__restrict__ gx, const T *__restrict__ g, const T *__restrict__ y, int64_t lines, int64_t K,
              int64_t B)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    using A = compute_t<T>;
    using L = softmax_lines::LaneLines<Y, V>;
    softmax_lines::for_warp_chunks<Y, V>(lines, [&](int64_t c) {
        const L ln(c, lines, K, B);
        Pack<T, V> gv[KPT], yv[KPT];
        ln.template load<KPT>(gv, g, K, B);
        ln.template load<KPT>(yv, y, K, B);
        A s[V];
#pragma unroll
        for (int j = 0; j < V; j++) {
            s[j] = A(0);
#pragma unroll
            for (int i = 0; i < KPT; i++)
                if (ln.has(i, K))
                    s[j] += bwd_term<A, LOG>(to_c<A>(gv[i].v[j]), to_c<A>(yv[i].v[j]));
            s[j] = L::combine(s[j], [](A a, A b) { return a + b; });
        }
        ln.template store<KPT>(gx, K, B, [&](int i) {
            Pack<T, V> o;
#pragma unroll
            for (int j = 0; j < V; j++)
                o.v[j] = from_c<T>(bwd_grad<T, LOG>(to_c<A>(gv[i].v[j]), to_c<A>(yv[i].v[j]), s[j]));
            return o;
        });
    });
}

// Rows of g up to this many bytes are cached: two blocks share an SM
// (228 KiB of shared memory on the H100, 1 KiB reserved a block).
constexpr size_t BWD_CACHE_BYTES = 110 * 1024;

template <class T, bool LOG>
void launch_bwd(T *gx, const T *g, const T *y, int64_t rows, int64_t K, int64_t B, cudaStream_t st)
{
    if (B > 1) { // rows is A here
        // 8 threads down K a line, or 32 when the lines are too few to fill
        // the GPU (the forward's strided kernel does the same); 16 for
        // float64, whose exps spilled in the 64 registers of 1024 threads
        constexpr int YF = sizeof(T) == 8 ? 16 : 32;
        const int64_t chunks = rows * ((B + 31) / 32), full = (int64_t)sm_count() * 8;
        // Lines of up to 32 values: g and y in a few lanes' registers
        // (H100 against bwd_strided_reg: log_softmax [32, 21, 128, 128]
        // over dim 1 float32 55.2 -> 48.0 us, [65536, 32, 2] float16 172 ->
        // 14.0, [262144, 8, 4] float32 287 -> 53). 16-bit lines of up to 64
        // take 8 lanes, whose runs fill half a sector (against bwd_strided:
        // bfloat16 softmax [16, 64, 4096] over dim 1 54.6 -> 11.8 us,
        // float16 log_softmax [4, 33, 65536] 52.3 -> 34.9); float32 and
        // float64 lines past 32 measured as fast or faster in bwd_strided.
        constexpr int YCAP = sizeof(T) == 2 ? 8 : 4;
        if (softmax_lines::launch_lines<T, 8, YCAP>(rows * B, K, B, (uintptr_t)g | (uintptr_t)y | (uintptr_t)gx,
                                              [&](auto yc, auto kc, auto vc, dim3 grid) {
                                                  launch_kernel_pdl(bwd_lines<T, yc.value, kc.value, vc.value, LOG>, grid,
                                                                dim3(softmax_lines::LINES_BLOCK), st, gx, g, y,
                                                                rows * B, K, B);
                                              }))
            return;
        // Longer lines too few to fill the GPU otherwise: up to 4 values a
        // thread kept in registers, for up to 128 values (H100, log_softmax
        // backward of [32, 21, 128, 128] over dim 1 against the kernel that
        // reads twice, before the lanes layout took it: float32 82.3 ->
        // 55.2 us).
        if (chunks < full && K <= YF * 4) {
            softmax_short::pow2_class<1, 4>((K + YF - 1) / YF, [&](auto kp) {
                launch_kernel_pdl(bwd_strided_reg<T, YF, kp.value, LOG>, dim3((unsigned)chunks), dim3(32, YF), st, gx, g,
                              y, rows, K, B);
            });
            return;
        }
        if (chunks < full) {
            launch_kernel_pdl(bwd_strided<T, YF, LOG>, dim3((unsigned)chunks), dim3(32, YF), st, gx, g, y, rows, K, B);
        } else {
            const int64_t cap = full * 4;
            launch_kernel_pdl(bwd_strided<T, 8, LOG>, dim3((unsigned)(chunks < cap ? chunks : cap)), dim3(32, 8), st, gx,
                          g, y, rows, K, B);
        }
        return;
    }
    constexpr int VEC = 16 / sizeof(T);
    const bool whole = K % VEC == 0 && (uintptr_t)g % 16 == 0 && (uintptr_t)y % 16 == 0 && (uintptr_t)gx % 16 == 0;
    if (whole && K / VEC <= 32) {
        // four groups of rows a warp in flight (H100, log_softmax backward
        // against one and two: float32 [2^20, 32] 139.3 / 138.4 -> 137.1 us,
        // float64 [2^19, 64] 277.3 / 275.3 -> 272.1 us)
        softmax_short::pow2_class<1, 32>(K / VEC, [&](auto gl) {
            constexpr int G = gl.value, ROWS = 4, PER_BLOCK = 4 * (32 / G) * ROWS;
            const int64_t blocks = (rows + PER_BLOCK - 1) / PER_BLOCK, cap = (int64_t)sm_count() * 64;
            launch_kernel_pdl(bwd_vwarp<T, G, ROWS, LOG>, dim3((unsigned)(blocks < cap ? blocks : cap)), 128, st, gx, g,
                          y, rows, (int)K);
        });
        return;
    }
    if (K <= 1024) {
        softmax_short::pow2_class<1, 32>((K + 31) / 32, [&](auto v) {
            // rows a warp by the registers a row takes a lane (g and y); one
            // for 16-bit rows (float16 [170327, 197]: 78, 101 and 183 us
            // with one, two and four rows a warp; float32 136 to 142 us)
            constexpr int B = 2 * v.value * (int)sizeof(compute_t<T>);
            constexpr int ROWS = sizeof(T) == 2 ? 1 : B <= 64 ? 4 : B <= 128 ? 2 : 1;
            const int64_t groups = (rows + ROWS - 1) / ROWS, blocks = (groups + 3) / 4;
            const int64_t cap = (int64_t)sm_count() * 64;
            launch_kernel_pdl(bwd_warp<T, v.value, ROWS, LOG>, dim3((unsigned)(blocks < cap ? blocks : cap)), 128, st,
                          gx, g, y, rows, (int)K);
        });
        return;
    }
    // two blocks an SM: fewer rows in flight, so more of an uncached second
    // pass reads from L2 (float16 [16384, 16384] log_softmax 665 -> 571 us,
    // float32 [4096, 50257] 1166 -> 1125 us against four)
    const int64_t cap = (int64_t)sm_count() * 2;
    const dim3 grid((unsigned)(rows < cap ? rows : cap));
    if (!same_offset(g, y) || !same_offset(g, (const T *)gx)) {
        launch_kernel_pdl(bwd_block<T, 1, LOG, false>, grid, BLOCK, st, gx, g, y, rows, K);
        return;
    }
    const int64_t packs = (K + VEC - 1) / VEC;
    // Rows of up to 4 packs a thread of 512 threads (16384 16-bit values,
    // 8192 float32, 4096 float64) in registers, in the smallest block of 64
    // to 512 threads that holds them (H200 against bwd_block, same process:
    // log_softmax float16 [16384, 1280] 109.1 -> 33.7 us, 0.33x -> 1.07x
    // torch; float32 [8192, 2048] 74.7 -> 50.3 us, 0.68x -> 1.01x; softmax
    // float16 [32768, 1025] 209.4 -> 52.6 us, 0.73x -> 2.90x). A block a
    // row: the block scheduler hands rows to SMs as blocks drain, where 32
    // blocks an SM walking rows left SMs idle at the end (log_softmax
    // [65536, 2048] float32 392.9 -> 372.7 us, 0.95x -> 1.00x torch;
    // float16 196.7 -> 188.1 us; the same or faster on every shape timed).
    if (packs <= 4 * BLOCK) {
        const dim3 rgrid((unsigned)(rows < INT32_MAX ? rows : INT32_MAX));
        softmax_short::pow2_class<regs_threads_lo<T>(), BLOCK>(threads_for_packs<T>(packs, BLOCK), [&](auto nt) {
            launch_kernel_pdl(bwd_regs<T, LOG, nt.value>, rgrid, nt.value, st, gx, g, y, rows, K);
        });
        return;
    }
    const size_t bytes = (size_t)(K / VEC) * 16; // the row's whole packs, at most
    const size_t optin = (size_t)device_attr<cudaDevAttrMaxSharedMemoryPerBlockOptin>(48 * 1024);
    if (bytes <= BWD_CACHE_BYTES && bytes + 1024 <= optin) {
        const void *k = (const void *)bwd_block<T, VEC, LOG, true>;
        bool ok = true;
        if (bytes > 48 * 1024) {
            if (cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes) != cudaSuccess) {
                (void)cudaGetLastError(); // not an error of the op: the uncached kernel runs
                ok = false;
            } else if (cudaFuncSetAttribute(k, cudaFuncAttributePreferredSharedMemoryCarveout,
                                            cudaSharedmemCarveoutMaxShared) != cudaSuccess) {
                (void)cudaGetLastError(); // only a preference (two blocks an SM): go on
            }
        }
        if (ok) {
            launch_kernel_smem(bwd_block<T, VEC, LOG, true>, grid, BLOCK, bytes, st, gx, g, y, rows, K);
            return;
        }
    }
    launch_kernel_pdl(bwd_block<T, VEC, LOG, false>, grid, BLOCK, st, gx, g, y, rows, K);
}

} // namespace

extern "C" int pcs_launch_softmax_backward(int dtype, int log, void *gx, const void *g, const void *y,
                                           int64_t A, int64_t K, int64_t B, cudaStream_t stream)
{
    if (A <= 0 || K <= 0 || B <= 0)
        return 0; // nothing to compute
    return dispatch_float_log(dtype, log, [&](auto tag, auto lg) {
        using T = decltype(tag);
        launch_bwd<T, decltype(lg)::value>((T *)gx, (const T *)g, (const T *)y, A, K, B, stream);
    });
}
