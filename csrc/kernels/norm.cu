// norm.cu: layer_norm and rms_norm, forward and backward, behind
// pcs_launch_norm_fwd / pcs_launch_norm_bwd (kernels.h).
//
// Rows are contiguous [rows, N]. Forward: one block a row; each thread keeps
// its strided share of the row in registers (VPT values, N <= BLOCK * VPT),
// or re-reads it from global memory (mostly L1/L2) for longer rows. The mean
// and then the variance are taken in two passes over those values, in the
// accumulation type (float for float16/bfloat16/float32, double for float64),
// which is as accurate as Welford and cheaper once the row is in registers.
// Backward: gx one block a row (the two row sums mean(dxh) and mean(dxh xh),
// then one write); gw/gb as column sums into `work`, one slice of it per
// part, then a second kernel adds the parts of each column in order. Rows of
// up to 4096 do all three in one pass over gy and x (norm_bwd_fused, a part
// per block); longer ones sum with a grid of (column tiles x parts), each
// block a fixed slice of rows for 32 columns. No atomics, so the result is
// bit-identical from run to run.
#include "ew_common.cuh"
#include "pdl.cuh"

using namespace pcs;

namespace {

constexpr int BLOCK = 256;

// Sum over the block; every thread gets the result. `sh` holds 32 values.
template <class A> __device__ __forceinline__ A block_sum(A v, A *sh)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, off);
    __syncthreads(); // sh may still be read by the previous call
    if (lane == 0)
        sh[warp] = v;
    __syncthreads();
    A r = 0;
    for (int w = 0; w < (int)(blockDim.x >> 5); w++)
        r += sh[w];
    return r;
}

// VPT > 0: the row in registers (N <= BLOCK * VPT); VPT == 0: re-read.
template <class T, int VPT>
__global__ void __launch_bounds__(BLOCK) norm_fwd(T *y, compute_t<T> *mean, compute_t<T> *rstd,
                                                  const T *x, const T *w, const T *b, int64_t rows,
                                                  int64_t N, int rms, double eps)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    using A = compute_t<T>;
    __shared__ A sh[32];
    const A inv_n = A(1) / A(N);
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const T *xr = x + row * N;
        T *yr = y + row * N;
        A v[VPT > 0 ? VPT : 1];
        A s = 0;
        if constexpr (VPT > 0) {
#pragma unroll
            for (int i = 0; i < VPT; i++) {
                int64_t k = threadIdx.x + (int64_t)i * BLOCK;
                v[i] = k < N ? to_c<A>(xr[k]) : A(0);
                s += v[i];
            }
        } else {
            for (int64_t k = threadIdx.x; k < N; k += BLOCK)
                s += to_c<A>(xr[k]);
        }
        const A mu = rms ? A(0) : block_sum(s, sh) * inv_n;
        A q = 0;
        if constexpr (VPT > 0) {
#pragma unroll
            for (int i = 0; i < VPT; i++) {
                int64_t k = threadIdx.x + (int64_t)i * BLOCK;
                A d = v[i] - mu;
                q += k < N ? d * d : A(0);
            }
        } else {
            for (int64_t k = threadIdx.x; k < N; k += BLOCK) {
                A d = to_c<A>(xr[k]) - mu;
                q += d * d;
            }
        }
        const A rs = acc_rsqrt(block_sum(q, sh) * inv_n + A(eps));
        if (threadIdx.x == 0) {
            if (mean)
                mean[row] = mu;
            rstd[row] = rs;
        }
        auto put = [&](int64_t k, A xv) {
            A o = (xv - mu) * rs;
            if (w)
                o = o * to_c<A>(w[k]);
            if (b)
                o = o + to_c<A>(b[k]);
            yr[k] = from_c<T>(o);
        };
        if constexpr (VPT > 0) {
#pragma unroll
            for (int i = 0; i < VPT; i++) {
                int64_t k = threadIdx.x + (int64_t)i * BLOCK;
                if (k < N)
                    put(k, v[i]);
            }
        } else {
            for (int64_t k = threadIdx.x; k < N; k += BLOCK)
                put(k, to_c<A>(xr[k]));
        }
    }
}

// Short rows: G lanes a row (a power of two up to a warp), blocks of
// (G, BLOCK / G), each lane holding up to PPL 16-byte packs of its row in
// registers; the sums are shuffles within the group. One block a row left
// most of its 256 threads idle on rows of a few hundred values and paid
// two block-wide barriers a row. Rows, weights and biases are whole packs
// on 16-byte boundaries (the launcher checks). Rows advance a block's worth
// at a time, so every lane of a warp runs the same shuffles.
template <class A> __device__ __forceinline__ A group_sum(A v, int G)
{
    for (int off = G / 2; off > 0; off >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, off, G);
    return v;
}

template <class T, int PPL>
__global__ void __launch_bounds__(BLOCK) norm_fwd_group(T *y, compute_t<T> *mean, compute_t<T> *rstd,
                                                        const T *x, const T *w, const T *b,
                                                        int64_t rows, int64_t N, int rms, double eps)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    using A = compute_t<T>;
    constexpr int VEC = 16 / sizeof(T);
    using P = Pack<T, VEC>;
    const int G = blockDim.x, np = (int)(N / VEC);
    const A inv_n = A(1) / A(N);
    for (int64_t base = (int64_t)blockIdx.x * blockDim.y; base < rows;
         base += (int64_t)gridDim.x * blockDim.y) {
        const int64_t row = base + threadIdx.y;
        const bool live = row < rows;
        const P *xr = reinterpret_cast<const P *>(x + row * N);
        A v[PPL][VEC];
        A s = 0;
#pragma unroll
        for (int p = 0; p < PPL; p++) {
            const int i = threadIdx.x + p * G;
            P pk;
            if (live && i < np)
                pk = xr[i];
#pragma unroll
            for (int j = 0; j < VEC; j++) {
                v[p][j] = live && i < np ? to_c<A>(pk.v[j]) : A(0);
                s += v[p][j];
            }
        }
        const A mu = rms ? A(0) : group_sum(s, G) * inv_n;
        A q = 0;
#pragma unroll
        for (int p = 0; p < PPL; p++) {
            const bool in = threadIdx.x + p * G < np;
#pragma unroll
            for (int j = 0; j < VEC; j++) {
                const A d = v[p][j] - mu;
                q += in ? d * d : A(0);
            }
        }
        const A rs = acc_rsqrt(group_sum(q, G) * inv_n + A(eps));
        if (!live)
            continue; // after the last shuffle: the whole group agrees
        if (threadIdx.x == 0) {
            if (mean)
                mean[row] = mu;
            rstd[row] = rs;
        }
        P *yr = reinterpret_cast<P *>(y + row * N);
#pragma unroll
        for (int p = 0; p < PPL; p++) {
            const int i = threadIdx.x + p * G;
            if (i >= np)
                continue;
            P wp, bp, o;
            if (w)
                wp = reinterpret_cast<const P *>(w)[i];
            if (b)
                bp = reinterpret_cast<const P *>(b)[i];
#pragma unroll
            for (int j = 0; j < VEC; j++) {
                A t = (v[p][j] - mu) * rs;
                if (w)
                    t = t * to_c<A>(wp.v[j]);
                if (b)
                    t = t + to_c<A>(bp.v[j]);
                o.v[j] = from_c<T>(t);
            }
            yr[i] = o;
        }
    }
}

// gx = rstd * (dxh - mean(dxh) - xh * mean(dxh * xh)), dxh = gy * w
template <class T, int VPT>
__global__ void __launch_bounds__(BLOCK) norm_bwd_x(T *gx, const T *gy, const T *x,
                                                    const compute_t<T> *mean,
                                                    const compute_t<T> *rstd, const T *w,
                                                    int64_t rows, int64_t N)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    using A = compute_t<T>;
    __shared__ A sh[32];
    const A inv_n = A(1) / A(N);
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const T *xr = x + row * N, *gr = gy + row * N;
        const A mu = mean ? mean[row] : A(0), rs = rstd[row];
        A xh[VPT > 0 ? VPT : 1], dh[VPT > 0 ? VPT : 1];
        A s1 = 0, s2 = 0;
        auto load = [&](int64_t k, A &xv, A &dv) {
            xv = (to_c<A>(xr[k]) - mu) * rs;
            dv = to_c<A>(gr[k]);
            if (w)
                dv = dv * to_c<A>(w[k]);
        };
        if constexpr (VPT > 0) {
#pragma unroll
            for (int i = 0; i < VPT; i++) {
                int64_t k = threadIdx.x + (int64_t)i * BLOCK;
                xh[i] = dh[i] = 0;
                if (k < N)
                    load(k, xh[i], dh[i]);
                s1 += dh[i];
                s2 += dh[i] * xh[i];
            }
        } else {
            for (int64_t k = threadIdx.x; k < N; k += BLOCK) {
                A xv, dv;
                load(k, xv, dv);
                s1 += dv;
                s2 += dv * xv;
            }
        }
        const A m1 = mean ? block_sum(s1, sh) * inv_n : A(0); // rms: no mean term
        const A m2 = block_sum(s2, sh) * inv_n;
        T *o = gx + row * N;
        if constexpr (VPT > 0) {
#pragma unroll
            for (int i = 0; i < VPT; i++) {
                int64_t k = threadIdx.x + (int64_t)i * BLOCK;
                if (k < N)
                    o[k] = from_c<T>(rs * (dh[i] - m1 - xh[i] * m2));
            }
        } else {
            for (int64_t k = threadIdx.x; k < N; k += BLOCK) {
                A xv, dv;
                load(k, xv, dv);
                o[k] = from_c<T>(rs * (dv - m1 - xv * m2));
            }
        }
    }
}

// gx as norm_bwd_x, and in the same pass the column sums of gy * xh and gy
// over this block's rows, kept in registers (each thread owns the columns
// threadIdx.x + i * BLOCK) and written as the block's part of `work`: gy and
// x are read once for all three gradients. The grid is fixed (the parts), so
// each block's rows, and the sums, are the same on every run.
template <class T, int VPT>
__global__ void __launch_bounds__(BLOCK) norm_bwd_fused(T *gx, compute_t<T> *work, const T *gy,
                                                        const T *x, const compute_t<T> *mean,
                                                        const compute_t<T> *rstd, const T *w,
                                                        int64_t rows, int64_t N)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    using A = compute_t<T>;
    __shared__ A sh[32];
    const A inv_n = A(1) / A(N);
    A pw[VPT], pb[VPT];
#pragma unroll
    for (int i = 0; i < VPT; i++)
        pw[i] = pb[i] = 0;
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const T *xr = x + row * N, *gr = gy + row * N;
        const A mu = mean ? mean[row] : A(0), rs = rstd[row];
        A xh[VPT], g[VPT];
        A s1 = 0, s2 = 0;
#pragma unroll
        for (int i = 0; i < VPT; i++) {
            int64_t k = threadIdx.x + (int64_t)i * BLOCK;
            xh[i] = g[i] = 0;
            if (k < N) {
                xh[i] = (to_c<A>(xr[k]) - mu) * rs;
                g[i] = to_c<A>(gr[k]);
            }
            const A dv = w && k < N ? g[i] * to_c<A>(w[k]) : g[i];
            s1 += dv;
            s2 += dv * xh[i];
            pw[i] += g[i] * xh[i];
            pb[i] += g[i];
        }
        const A m1 = mean ? block_sum(s1, sh) * inv_n : A(0); // rms: no mean term
        const A m2 = block_sum(s2, sh) * inv_n;
        T *o = gx + row * N;
#pragma unroll
        for (int i = 0; i < VPT; i++) {
            int64_t k = threadIdx.x + (int64_t)i * BLOCK;
            if (k < N) {
                const A dv = w ? g[i] * to_c<A>(w[k]) : g[i];
                o[k] = from_c<T>(rs * (dv - m1 - xh[i] * m2));
            }
        }
    }
    const int64_t parts = gridDim.x;
#pragma unroll
    for (int i = 0; i < VPT; i++) {
        int64_t k = threadIdx.x + (int64_t)i * BLOCK;
        if (k < N) {
            work[(int64_t)blockIdx.x * N + k] = pw[i];
            work[(parts + blockIdx.x) * N + k] = pb[i];
        }
    }
}

// Partial column sums: block (tile, part) sums rows [part * per, ...) of 32
// columns; 8 rows of threads split the slice, merged in a fixed order.
constexpr int TY = 8;

template <class T>
__global__ void __launch_bounds__(32 * TY) norm_bwd_wb_part(compute_t<T> *work, const T *gy,
                                                            const T *x, const compute_t<T> *mean,
                                                            const compute_t<T> *rstd, int64_t rows,
                                                            int64_t N, int parts, int want_w,
                                                            int want_b)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    using A = compute_t<T>;
    __shared__ A sw[TY][33], sb[TY][33];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t col = (int64_t)blockIdx.x * 32 + tx;
    const int part = blockIdx.y;
    const int64_t per = (rows + parts - 1) / parts;
    const int64_t r0 = part * per, r1 = r0 + per < rows ? r0 + per : rows;
    A aw = 0, ab = 0;
    if (col < N) {
        for (int64_t r = r0 + ty; r < r1; r += TY) {
            A g = to_c<A>(gy[r * N + col]);
            if (want_w) {
                A mu = mean ? mean[r] : A(0);
                aw += g * (to_c<A>(x[r * N + col]) - mu) * rstd[r];
            }
            ab += g;
        }
    }
    sw[ty][tx] = aw;
    sb[ty][tx] = ab;
    __syncthreads();
    if (ty == 0 && col < N) {
        for (int i = 1; i < TY; i++) {
            aw += sw[i][tx];
            ab += sb[i][tx];
        }
        if (want_w)
            work[(int64_t)part * N + col] = aw;
        if (want_b)
            work[((int64_t)parts + part) * N + col] = ab;
    }
}

template <class T>
__global__ void norm_bwd_wb_final(T *gw, T *gb, const compute_t<T> *work, int64_t N, int parts)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    using A = compute_t<T>;
    for (int64_t col = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; col < N;
         col += (int64_t)gridDim.x * blockDim.x) {
        A aw = 0, ab = 0;
        for (int p = 0; p < parts; p++) {
            if (gw)
                aw += work[(int64_t)p * N + col];
            if (gb)
                ab += work[((int64_t)parts + p) * N + col];
        }
        if (gw)
            gw[col] = from_c<T>(aw);
        if (gb)
            gb[col] = from_c<T>(ab);
    }
}

template <class T> unsigned row_grid(int64_t rows)
{
    int64_t cap = (int64_t)sm_count() * 16;
    return (unsigned)(rows < cap ? rows : cap);
}

// The register variant that holds N values a row, or the re-read one (0).
template <class F> void by_vpt(int64_t N, F &&f)
{
    if (N <= BLOCK * 4)
        f(std::integral_constant<int, 4>{});
    else if (N <= BLOCK * 8)
        f(std::integral_constant<int, 8>{});
    else if (N <= BLOCK * 16)
        f(std::integral_constant<int, 16>{});
    else if (N <= BLOCK * 32)
        f(std::integral_constant<int, 32>{});
    else
        f(std::integral_constant<int, 0>{});
}

// The packs a lane of norm_fwd_group holds at most: rows of up to 32 * 8
// packs (1024 float32 values, 2048 of 16 bits) take it.
constexpr int GROUP_MAX_PPL = 8;

// Calls f(std::integral_constant<int, P>) for the smallest power of two P
// >= x (x >= 1, P <= HI): one instantiation a size class.
template <int HI, int P = 1, class F> void pow2_upto(int64_t x, F &&f)
{
    if constexpr (P >= HI)
        f(std::integral_constant<int, HI>{});
    else if (x <= P)
        f(std::integral_constant<int, P>{});
    else
        pow2_upto<HI, P * 2>(x, f);
}

// Rows short enough that norm_bwd_fused keeps them (with the sums) in registers.
constexpr int64_t FUSED_MAX_N = BLOCK * 16;

} // namespace

extern "C" int pcs_norm_bwd_parts(int64_t rows, int64_t N, int with_gx)
{
    if (with_gx && N <= FUSED_MAX_N) { // the fused pass: two blocks an SM, a part each
        int64_t p = (int64_t)sm_count() * 2;
        return (int)(rows < p ? (rows > 0 ? rows : 1) : p);
    }
    int64_t p = rows / 32;
    return (int)(p < 1 ? 1 : p > 64 ? 64 : p);
}

extern "C" int pcs_launch_norm_fwd(int dtype, int rms, void *y, void *mean, void *rstd,
                                   const void *x, const void *w, const void *b, int64_t rows,
                                   int64_t N, double eps, cudaStream_t stream)
{
    if (rows <= 0 || N <= 0)
        return 0;
    return dispatch_dtype(dtype, [&](auto tag) -> int {
        using T = decltype(tag);
        if constexpr (!is_flt<T>) {
            return -1;
        } else {
            using A = compute_t<T>;
            constexpr int VEC = 16 / sizeof(T);
            const int64_t np = N / VEC;
            const bool packs = N % VEC == 0 && (uintptr_t)x % 16 == 0 && (uintptr_t)y % 16 == 0 &&
                               (uintptr_t)w % 16 == 0 && (uintptr_t)b % 16 == 0;
            if (packs && np <= 32 * GROUP_MAX_PPL) {
                // about two packs a lane: G lanes a row, PPL packs each
                int g = 1;
                while (g < 32 && (int64_t)g * 2 < np)
                    g *= 2;
                const dim3 block(g, BLOCK / g);
                const int64_t need = (rows + block.y - 1) / block.y, cap = (int64_t)sm_count() * 16;
                const dim3 grid((unsigned)(need < cap ? need : cap));
                pow2_upto<GROUP_MAX_PPL>((np + g - 1) / g, [&](auto pc) {
                    launch_kernel_pdl(norm_fwd_group<T, decltype(pc)::value>, grid, block, stream, (T *)y,
                                  (A *)mean, (A *)rstd, (const T *)x, (const T *)w, (const T *)b, rows,
                                  N, rms, eps);
                });
                return 0;
            }
            by_vpt(N, [&](auto vc) {
                constexpr int VPT = decltype(vc)::value;
                launch_kernel_pdl(norm_fwd<T, VPT>, dim3(row_grid<T>(rows)), dim3(BLOCK), stream, (T *)y,
                              (A *)mean, (A *)rstd, (const T *)x, (const T *)w, (const T *)b, rows,
                              N, rms, eps);
            });
            return 0;
        }
    });
}

extern "C" int pcs_launch_norm_bwd(int dtype, int rms, void *gx, void *gw, void *gb,
                                   const void *gy, const void *x, const void *mean,
                                   const void *rstd, const void *w, int64_t rows, int64_t N,
                                   void *work, int parts, cudaStream_t stream)
{
    if (rows <= 0 || N <= 0)
        return 0;
    return dispatch_dtype(dtype, [&](auto tag) -> int {
        using T = decltype(tag);
        if constexpr (!is_flt<T>) {
            return -1;
        } else {
            using A = compute_t<T>;
            const A *mu = rms ? nullptr : (const A *)mean;
            if (gx && (gw || gb) && N <= FUSED_MAX_N) {
                // parts == pcs_norm_bwd_parts(rows, N, 1): one block a part
                by_vpt(N, [&](auto vc) {
                    constexpr int VPT = decltype(vc)::value;
                    if constexpr (VPT > 0 && VPT <= 16)
                        launch_kernel_pdl(norm_bwd_fused<T, VPT>, dim3((unsigned)parts), dim3(BLOCK),
                                      stream, (T *)gx, (A *)work, (const T *)gy, (const T *)x, mu,
                                      (const A *)rstd, (const T *)w, rows, N);
                });
                int64_t blocks = (N + 255) / 256, cap = (int64_t)sm_count() * 8;
                launch_kernel_pdl(norm_bwd_wb_final<T>, dim3((unsigned)(blocks < cap ? blocks : cap)),
                              dim3(256), stream, (T *)gw, (T *)gb, (const A *)work, N, parts);
                return 0;
            }
            if (gx) {
                by_vpt(N, [&](auto vc) {
                    constexpr int VPT = decltype(vc)::value;
                    launch_kernel_pdl(norm_bwd_x<T, VPT>, dim3(row_grid<T>(rows)), dim3(BLOCK), stream,
                                  (T *)gx, (const T *)gy, (const T *)x, mu, (const A *)rstd,
                                  (const T *)w, rows, N);
                });
            }
            if (gw || gb) {
                dim3 grid((unsigned)((N + 31) / 32), (unsigned)parts), block(32, TY);
                launch_kernel_pdl(norm_bwd_wb_part<T>, grid, block, stream, (A *)work, (const T *)gy,
                              (const T *)x, mu, (const A *)rstd, rows, N, parts, gw != nullptr,
                              gb != nullptr);
                int64_t blocks = (N + 255) / 256, cap = (int64_t)sm_count() * 8;
                launch_kernel_pdl(norm_bwd_wb_final<T>, dim3((unsigned)(blocks < cap ? blocks : cap)),
                              dim3(256), stream, (T *)gw, (T *)gb, (const A *)work, N, parts);
            }
            return 0;
        }
    });
}
