// softmax_short.cuh: softmax.cu's kernels for rows of up to 1024 values
// (B == 1, the dim last), and launch_warp, which picks one of them for a
// shape and a layout: warp (a warp a row, one value a lane at a time),
// vwarp (a group of lanes a row, 16-byte packs, RowParts for rows off the
// 16-byte grid) and tiny (rows of up to 32 values through shared memory).
// The long-row kernels and the dispatch are in softmax.cu.
#pragma once

#include "softmax_rows.cuh"
#include "pdl.cuh"

namespace pcs {
namespace softmax_short {
using namespace softmax_rows;

// ---------------------------------------------------------------------------
// warp: B == 1, K <= 32 * VPT

// ROWS rows per warp at a time: their loads are in flight together, which
// short rows need to keep enough bytes moving ([2^20, 32]: one 128-byte
// line a row). Softmax keeps each exp in its register for the write, one
// exp an element, up to 64 bytes of values a lane (float32 rows of 641 in
// 32 values a lane ran 95 -> 168 us when they kept theirs).
template <class T, int VPT, int ROWS, bool LOG>
__global__ void __launch_bounds__(128) softmax_warp(T *out, const T *in, int64_t rows, int K)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    using A = compute_t<T>;
    constexpr bool KEEP = VPT * sizeof(A) <= 64;
    const int lane = threadIdx.x & 31;
    const int64_t warps = (int64_t)gridDim.x * (blockDim.x >> 5);
    for (int64_t row0 = ((int64_t)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5)) * ROWS;
         row0 < rows; row0 += warps * ROWS) {
        A v[ROWS][VPT], m[ROWS], s[ROWS];
#pragma unroll
        for (int r = 0; r < ROWS; r++) {
            const T *x = in + (row0 + r) * K;
            m[r] = neg_inf<A>();
#pragma unroll
            for (int i = 0; i < VPT; i++) {
                int k = lane + 32 * i;
                v[r][i] = (row0 + r < rows && k < K) ? to_c<A>(x[k]) : neg_inf<A>();
                m[r] = nan_max(m[r], v[r][i]);
            }
        }
#pragma unroll
        for (int r = 0; r < ROWS; r++) {
            m[r] = warp_nan_max(m[r]);
            s[r] = 0;
            const RowExp<T> ex(m[r]);
#pragma unroll
            for (int i = 0; i < VPT; i++)
                if (lane + 32 * i < K) {
                    if constexpr (KEEP)
                        add_exp<LOG>(v[r][i], ex, s[r]);
                    else
                        s[r] += ex(v[r][i]);
                }
            s[r] = warp_sum(s[r]);
        }
        // The rows' log(s) or 1 / s, lane r taking row r's, then passed
        // round: one log a warp instead of ROWS (a float64 log costs a lane
        // as much as a few exps, and rows of 32 values take one exp a lane)
        A k_[ROWS];
        A mine = s[0];
#pragma unroll
        for (int r = 1; r < ROWS; r++)
            mine = lane == r ? s[r] : mine;
        mine = row_k(mine, LOG);
#pragma unroll
        for (int r = 0; r < ROWS; r++)
            k_[r] = ROWS == 1 ? mine : __shfl_sync(0xffffffffu, mine, r);
#pragma unroll
        for (int r = 0; r < ROWS; r++) {
            if (row0 + r >= rows)
                break;
            T *y = out + (row0 + r) * K;
            const RowExp<T> ex(m[r]);
#pragma unroll
            for (int i = 0; i < VPT; i++) {
                int k = lane + 32 * i;
                if (k < K)
                    y[k] = from_c<T>(KEEP ? finish_kept<A, LOG>(v[r][i], m[r], k_[r])
                                          : finish<LOG>(v[r][i], ex, k_[r]));
            }
        }
    }
}

// vector warp: B == 1, K <= 1024. G lanes a row (32 / G rows a warp), PPL
// packs a lane, ROWS such groups of rows in flight. [2^20, 32] float32 is 8
// lanes of one float4 a row and 8 rows a warp at a time, with 3 shuffles a
// reduction where the scalar kernel took 5 for each of its 4 rows (0.90x
// torch). PARTS: rows that are not a whole number of 16-byte packs on
// 16-byte boundaries (a ViT's 197 tokens, CLIP's 77) are read as RowParts,
// each row at its own offset, the scalar ends EX a lane.
template <class T, int G, int PPL, int ROWS, bool LOG, bool PARTS>
__global__ void __launch_bounds__(128) softmax_vwarp(T *out, const T *in, int64_t rows, int K)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    using A = compute_t<T>;
    constexpr int VEC = 16 / sizeof(T), RPW = 32 / G;
    constexpr int EX = PARTS ? (2 * VEC - 2 + G - 1) / G : 1; // h + tl <= 2 VEC - 2
    using P = Pack<T, VEC>;
    const int lane = threadIdx.x & 31, q = lane % G, sub = lane / G;
    const int64_t warps = (int64_t)gridDim.x * (blockDim.x >> 5);
    for (int64_t row0 = ((int64_t)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5)) * (RPW * ROWS);
         row0 < rows; row0 += warps * (RPW * ROWS)) {
        A v[ROWS][PPL][VEC], e[ROWS][EX], m[ROWS], s[ROWS];
        int h[ROWS], nvec[ROWS], ends[ROWS]; // scalar head, whole packs, scalar values in all
#pragma unroll
        for (int r = 0; r < ROWS; r++) {
            const int64_t row = row0 + r * RPW + sub;
            const T *xr = in + row * K;
            if constexpr (PARTS) {
                const RowParts<T, VEC> pt(xr, K);
                h[r] = pt.h;
                nvec[r] = (int)pt.nvec;
                ends[r] = pt.h + pt.tl;
            } else {
                h[r] = 0;
                nvec[r] = K / VEC;
                ends[r] = 0;
            }
            const P *x = reinterpret_cast<const P *>(xr + h[r]);
            m[r] = neg_inf<A>();
#pragma unroll
            for (int p = 0; p < PPL; p++) {
                const int i = q + G * p;
                P pk;
                if (row < rows && i < nvec[r])
                    pk = x[i];
#pragma unroll
                for (int j = 0; j < VEC; j++) {
                    v[r][p][j] = (row < rows && i < nvec[r]) ? to_c<A>(pk.v[j]) : neg_inf<A>();
                    m[r] = nan_max(m[r], v[r][p][j]);
                }
            }
            if constexpr (PARTS) {
#pragma unroll
                for (int x2 = 0; x2 < EX; x2++) {
                    const int t = q + G * x2;
                    const int64_t at = RowParts<T, VEC>::end_at(t, h[r], nvec[r]);
                    e[r][x2] = (row < rows && t < ends[r]) ? to_c<A>(xr[at]) : neg_inf<A>();
                    m[r] = nan_max(m[r], e[r][x2]);
                }
            }
        }
#pragma unroll
        for (int r = 0; r < ROWS; r++) {
            m[r] = warp_nan_max<A, G>(m[r]);
            const RowExp<T> ex(m[r]);
            s[r] = A(0);
#pragma unroll
            for (int p = 0; p < PPL; p++) {
                if (q + G * p < nvec[r]) {
#pragma unroll
                    for (int j = 0; j < VEC; j++)
                        add_exp<LOG>(v[r][p][j], ex, s[r]);
                }
            }
            if constexpr (PARTS) {
#pragma unroll
                for (int x2 = 0; x2 < EX; x2++)
                    if (q + G * x2 < ends[r])
                        add_exp<LOG>(e[r][x2], ex, s[r]);
            }
            s[r] = warp_sum<A, G>(s[r]);
        }
#pragma unroll
        for (int r = 0; r < ROWS; r++) {
            const int64_t row = row0 + r * RPW + sub;
            if (row >= rows)
                continue;
            const A k_ = row_k(s[r], LOG);
            T *yr = out + row * K;
            P *y = reinterpret_cast<P *>(yr + h[r]);
#pragma unroll
            for (int p = 0; p < PPL; p++) {
                const int i = q + G * p;
                if (i < nvec[r]) {
                    P o;
#pragma unroll
                    for (int j = 0; j < VEC; j++)
                        o.v[j] = from_c<T>(finish_kept<A, LOG>(v[r][p][j], m[r], k_));
                    y[i] = o;
                }
            }
            if constexpr (PARTS) {
#pragma unroll
                for (int x2 = 0; x2 < EX; x2++) {
                    const int t = q + G * x2;
                    if (t < ends[r])
                        yr[RowParts<T, VEC>::end_at(t, h[r], nvec[r])] =
                            from_c<T>(finish_kept<A, LOG>(e[r][x2], m[r], k_));
                }
            }
        }
    }
}

// tiny: B == 1, K <= 32 and at most 160 bytes, rows that are not whole
// 16-byte packs (a row of 13 float16 is 26 bytes): a block reads the rows
// [row0, row0 + R) as one flat run of 16-byte packs (RowParts of the run)
// into shared memory, each thread works its rows there, and the run goes
// back out as packs. The warp kernels gave such a row a lane per value (13
// of 32 lanes busy) or a lane per row with a dozen scalar loads: float16
// [2581110, 13] ran at 0.40x torch, rows of 1 at 0.02x.
constexpr int TINY_THREADS = 256, TINY_BYTES = 16384;

template <class T, bool LOG>
__global__ void __launch_bounds__(TINY_THREADS) softmax_tiny(T *out, const T *in, int64_t rows, int K, int R)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    using A = compute_t<T>;
    constexpr int VEC = 16 / sizeof(T);
    using P = Pack<T, VEC>;
    __shared__ P buf[TINY_BYTES / 16 + 1]; // one pack more: the run starts VEC - h elements in
    T *sm = reinterpret_cast<T *>(buf);
    for (int64_t row0 = (int64_t)blockIdx.x * R; row0 < rows; row0 += (int64_t)gridDim.x * R) {
        const int nr = (int)(rows - row0 < R ? rows - row0 : R);
        const int64_t n = (int64_t)nr * K;
        const T *x = in + row0 * K;
        T *y = out + row0 * K;
        const RowParts<T, VEC> pt(x, n);
        const int s0 = (VEC - pt.h) % VEC; // sm[s0 + i] holds x[i]; sm[s0 + h] is 16-byte aligned
        const P *xp = reinterpret_cast<const P *>(x + pt.h);
        P *sp = reinterpret_cast<P *>(sm + s0 + pt.h);
        for (int i = threadIdx.x; i < pt.h + pt.tl; i += TINY_THREADS) {
            const int64_t e = pt.extra(i);
            sm[s0 + e] = x[e];
        }
        for (int i = threadIdx.x; i < (int)pt.nvec; i += TINY_THREADS)
            sp[i] = xp[i];
        __syncthreads();
        for (int r = threadIdx.x; r < nr; r += TINY_THREADS) {
            T *row = sm + s0 + r * K;
            A m = neg_inf<A>(), sum = A(0);
            for (int k = 0; k < K; k++)
                m = nan_max(m, to_c<A>(row[k]));
            // float32 and float64 softmax keep each exp in the row (exactly:
            // the row's type is the accumulation type), one exp an element;
            // 16-bit rows take a second exp rather than round it twice
            constexpr bool KEEP = !LOG && std::is_same_v<T, A>;
            const RowExp<T> ex(m);
            for (int k = 0; k < K; k++) {
                const A e = ex(to_c<A>(row[k]));
                sum += e;
                if constexpr (KEEP)
                    row[k] = e;
            }
            const A k_ = row_k(sum, LOG);
            for (int k = 0; k < K; k++)
                row[k] = from_c<T>(KEEP ? to_c<A>(row[k]) * k_ : finish<LOG>(to_c<A>(row[k]), ex, k_));
        }
        __syncthreads();
        P *yp = reinterpret_cast<P *>(y + pt.h);
        for (int i = threadIdx.x; i < pt.h + pt.tl; i += TINY_THREADS) {
            const int64_t e = pt.extra(i);
            y[e] = sm[s0 + e];
        }
        for (int i = threadIdx.x; i < (int)pt.nvec; i += TINY_THREADS)
            yp[i] = sp[i];
        __syncthreads(); // the buffer is read out before the next rows come in
    }
}

template <class T, int VPT, int ROWS, bool LOG>
void launch_warp_rows(T *out, const T *in, int64_t rows, int K, cudaStream_t st)
{
    // 4 warps a block; the grid covers every row group or strides over them
    int64_t groups = (rows + ROWS - 1) / ROWS, blocks = (groups + 3) / 4;
    int64_t cap = (int64_t)sm_count() * 64;
    dim3 grid((unsigned)(blocks < cap ? blocks : cap));
    launch_kernel_pdl(softmax_warp<T, VPT, ROWS, LOG>, grid, 128, st, out, in, rows, K);
}

template <class T, int G, int PPL, bool LOG, bool PARTS>
void launch_vwarp_rows(T *out, const T *in, int64_t rows, int K, cudaStream_t st)
{
    constexpr int ROWS = PPL == 1 ? 2 : 1, PER_BLOCK = 4 * (32 / G) * ROWS;
    int64_t blocks = (rows + PER_BLOCK - 1) / PER_BLOCK, cap = (int64_t)sm_count() * 64;
    dim3 grid((unsigned)(blocks < cap ? blocks : cap));
    launch_kernel_pdl(softmax_vwarp<T, G, PPL, ROWS, LOG, PARTS>, grid, 128, st, out, in, rows, K);
}

// Calls f(std::integral_constant<int, P>) for the smallest power of two P
// from P0 up with x <= P, or for HI when x is larger: one instantiation a
// size class of the kernels below.
template <int P, int HI, class F> void pow2_class(int64_t x, F &&f)
{
    if constexpr (P >= HI)
        f(std::integral_constant<int, HI>{});
    else if (x <= P)
        f(std::integral_constant<int, P>{});
    else
        pow2_class<P * 2, HI>(x, f);
}

template <class T, bool LOG>
void launch_warp(T *out, const T *in, int64_t rows, int K, cudaStream_t st)
{
    constexpr int VEC = 16 / sizeof(T) > 0 ? 16 / sizeof(T) : 1;
    const int nvec = K / VEC; // whole packs of a row, at most
    const bool whole = K % VEC == 0 && (uintptr_t)in % 16 == 0 && (uintptr_t)out % 16 == 0;
    // any other row as RowParts: elements aligned, and every row of the
    // output at its input row's offset from a 16-byte boundary
    // (a sweep of K from 33 to 1001 on the H100 against the scalar warp
    // kernel: RowParts won in 16 bits, 0.50x -> 1.39x torch at K = 1001,
    // except for log_softmax of 64 < K < 256, 0.92x -> 0.74x at 197; in
    // float32 only for K <= 40 and K >= 900: 1.01x -> 0.94x at 641)
    // (float64: rows of up to 32, 0.92x -> 1.0x of the scalar kernel's time,
    // log_softmax of 21 to 31 values; the softmax of those ties)
    const bool parts_pays = sizeof(T) == 2   ? !(LOG && K > 64 && K < 256)
                            : sizeof(T) == 4 ? (K <= 40 || K >= 900)
                                             : K <= 32;
    const bool same = same_offset(in, out), parts = parts_pays && same;
    // float32 and float64 rows of 41 values up to 2 KiB: the scalar kernel,
    // several rows a warp in flight, even for whole packs (the vector
    // kernel left lanes idle: float32 [335544, 100] 102.9 -> 96.3 us,
    // float64 [524288, 64] 205 -> 187 us, D2D of the same bytes 95 / 180 us);
    // so do float32 rows up to 896 values (whole rows of 600 and 700: 100 ->
    // 94 us) and float64 log_softmax rows up to 512 (300 to 500 values:
    // 218 to 227 -> 185 to 188 us; their softmax, whose scalar kernel takes
    // two exps a value there, keeps the vector kernel)
    const bool scalar_pays = sizeof(T) >= 4 && K > 40 &&
                             (K * sizeof(T) <= 2048 || (sizeof(T) == 4 && K <= 896) || (LOG && K <= 512));
    // tiny: a row of at most 160 bytes leaves a block about 100 rows at
    // least to work in parallel (float64 rows of 31 left 66 threads of 256
    // busy: 0.72x -> 0.52x torch, where rows of 5 went 0.15x -> 0.83x)
    if (VEC > 1 && !whole && K <= 32 && K * (int)sizeof(T) <= 160 && same) {
        const int R = TINY_BYTES / (K * (int)sizeof(T));
        int64_t blocks = (rows + R - 1) / R, cap = (int64_t)sm_count() * 8;
        launch_kernel_pdl(softmax_tiny<T, LOG>, dim3((unsigned)(blocks < cap ? blocks : cap)), TINY_THREADS, st, out, in,
                      rows, K, R);
        return;
    }
    if (VEC > 1 && nvec <= 256 && (whole || parts) && !scalar_pays) {
        // vector warp: the fewest lanes that hold a pack each, else a whole
        // warp of PPL packs (float16 rows of 1024 are 4 a lane, float32 8;
        // float64 rows up to 512 entries come here, longer ones below)
        auto go = [&](auto pts) {
            constexpr bool PARTS = decltype(pts)::value;
            if (nvec <= 32)
                pow2_class<1, 32>(nvec, [&](auto g) {
                    launch_vwarp_rows<T, g.value, 1, LOG, PARTS>(out, in, rows, K, st);
                });
            else
                pow2_class<2, (VEC >= 8 ? 4 : 8)>((nvec + 31) / 32, [&](auto p) {
                    launch_vwarp_rows<T, 32, p.value, LOG, PARTS>(out, in, rows, K, st);
                });
        };
        if (whole)
            go(std::false_type{});
        else
            go(std::true_type{});
        return;
    }
    // scalar: K / 32 values a lane, ROWS rows a warp in flight: for float32
    // and float64 by the bytes of registers a row takes a lane (a sweep of
    // float32 rows of 41 to 1001 and float64 rows of 21 to 300 on the H100:
    // one row a warp left float32 [435771, 77] at 0.86x torch, four 0.99x);
    // 16-bit log_softmax of 77 to 197 went 0.98x -> 0.56x with four rows)
    pow2_class<1, 32>((K + 31) / 32, [&](auto v) {
        constexpr int B = v.value * (int)sizeof(compute_t<T>);
        constexpr int ROWS = sizeof(T) < 4 ? (v.value == 1 ? 4 : v.value == 2 ? 2 : 1) // as measured before
                             : v.value == 1 ? 2 : B <= 16 ? 4 : B <= 64 ? 2 : 1;
        launch_warp_rows<T, v.value, ROWS, LOG>(out, in, rows, K, st);
    });
}

} // namespace softmax_short
} // namespace pcs
