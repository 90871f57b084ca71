// xent.cu: cross entropy with class indices, forward and backward, behind
// pcs_launch_xent_fwd / pcs_launch_xent_bwd (kernels.h).
//
// Forward: a group of lanes a row of C logits (a block for long rows), read
// once: each thread keeps an online (max, sum exp) pair over its strided
// share plus, for label smoothing, the sums of w[c] x[c] and w[c]; the pairs
// merge across the group and its lane 0 writes the row's loss and lse. The
// loss vector is reduced afterwards by the ordinary (deterministic) sum.
// Backward: the same lanes a row, gx = g ((1 - ls) w[t] (p - onehot(t)) + ls / C (W p - w)), p = exp(x - lse),
// one read and one write. Accumulation in float (double for float64).
#include <cuda/std/limits>

#include "ew_common.cuh"
#include "online_max_sum.cuh"
#include "pdl.cuh"

using namespace pcs;
using namespace pcs::online;

namespace {

constexpr int BLOCK = 512;

// The online pair (max, sum exp(x - m)) and, for class weights or label
// smoothing, the sums of w x and of w.
template <class A> struct St : MS<A> {
    A wx, ws;
};

template <class A, bool WS> __device__ __forceinline__ void st_add(St<A> &p, A x, A w)
{
    ms_add<A>(p, x);
    if constexpr (WS) {
        p.wx += w * x;
        p.ws += w;
    }
}

template <class A, bool WS, int VEC, class T>
__device__ __forceinline__ void st_add_pack(St<A> &p, const A (&v)[VEC], const A *w, int64_t c)
{
    ms_add_pack<A, VEC, T>(p, v); // 16-bit logits: RowExp's exps
    if constexpr (WS) {
#pragma unroll
        for (int j = 0; j < VEC; j++) {
            const A wj = w ? w[c + j] : A(1);
            p.wx += wj * v[j];
            p.ws += wj;
        }
    }
}

template <class A> __device__ __forceinline__ St<A> st_merge(St<A> a, St<A> b)
{
    St<A> r;
    static_cast<MS<A> &>(r) = ms_merge<A>(a, b);
    r.wx = a.wx + b.wx;
    r.ws = a.ws + b.ws;
    return r;
}

// One thread's strided share of a row, from element c in steps of `step`:
// four loads (eight of 2-byte types) issued before their (sequential)
// online updates, so a short share still has them in flight. With VEC > 1
// the row is read as RowParts (any C, any offset): c and step count the
// whole packs, four a thread in flight, and lanes c < h + tl also take the
// scalar ends. float16 [8192, 32768] read its logits two bytes a load at
// 0.88x torch.
template <class T, class A, int VEC, bool WS>
__device__ __forceinline__ void row_share(St<A> &p, const T *xr, const A *w, int64_t c, int step, int64_t C)
{
    if constexpr (VEC > 1) {
        using P = Pack<T, VEC>;
        const RowParts<T, VEC> pt(xr, C);
        for (int64_t q = c; q < pt.h + pt.tl; q += step) {
            const int64_t e = pt.extra((int)q);
            st_add<A, WS>(p, to_c<A>(xr[e]), WS && w ? w[e] : A(1));
        }
        const A *wp = WS && w ? w + pt.h : w;
        for_packs<4>(reinterpret_cast<const P *>(xr + pt.h), pt.nvec, c, step, [&](int64_t i, const P &pk) {
            A v[VEC];
#pragma unroll
            for (int j = 0; j < VEC; j++)
                v[j] = to_c<A>(pk.v[j]);
            st_add_pack<A, WS, VEC, T>(p, v, wp, i * VEC);
        });
    } else {
        constexpr int U = sizeof(T) <= 2 ? 8 : 4;
        for_packs<U>(reinterpret_cast<const Pack<T, 1> *>(xr), C, c, step, [&](int64_t i, const Pack<T, 1> &pk) {
            st_add<A, WS>(p, to_c<A>(pk.v[0]), WS && w ? w[i] : A(1));
        });
    }
}

template <class A> __device__ __forceinline__ St<A> st_shfl(const St<A> &p, int off, int width)
{
    return {{__shfl_xor_sync(0xffffffffu, p.m, off, width), __shfl_xor_sync(0xffffffffu, p.s, off, width)},
            __shfl_xor_sync(0xffffffffu, p.wx, off, width),
            __shfl_xor_sync(0xffffffffu, p.ws, off, width)};
}

// Blocks of (G, BLOCK / G) threads: G lanes a row. Short rows take a group
// of lanes narrower than a warp (a power of two: a block a row left 496 of
// 512 threads idle on 16 classes), merged with shuffles within the group;
// long rows take the whole block (G = BLOCK), merged through shared memory.
// Rows advance a block's worth at a time, so every lane of a warp runs the
// same shuffles. WS: the weighted sums (class weights or label smoothing)
// are wanted; without them a value costs a compare and an exp.
template <class T, int VEC, bool WS>
__global__ void __launch_bounds__(BLOCK) xent_fwd(compute_t<T> *loss, compute_t<T> *lse, const T *x,
                                                  const int64_t *t, const compute_t<T> *w,
                                                  int64_t rows, int64_t C, int64_t ignore, double ls)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    using A = compute_t<T>;
    __shared__ St<A> sh[BLOCK / 32];
    const int G = blockDim.x, lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int64_t base = (int64_t)blockIdx.x * blockDim.y; base < rows; base += (int64_t)gridDim.x * blockDim.y) {
        const int64_t row = base + threadIdx.y;
        const T *xr = x + row * C;
        St<A> p = {{neg_inf<A>(), A(0)}, A(0), A(0)};
        if (row < rows)
            row_share<T, A, VEC, WS>(p, xr, w, threadIdx.x, G, C);
        for (int off = (G < 32 ? G : 32) / 2; off > 0; off >>= 1)
            p = st_merge(p, st_shfl(p, off, G < 32 ? G : 32));
        if (G > 32) { // one row a block (blockDim.y == 1): the warps meet in shared memory
            if (lane == 0)
                sh[warp] = p;
            __syncthreads();
            if (threadIdx.x == 0)
                for (int i = 1; i < G / 32; i++)
                    p = st_merge(p, sh[i]);
            __syncthreads(); // sh is read before the next row writes it
        }
        if (threadIdx.x == 0 && row < rows) {
            const A l = p.m + acc_log(p.s);
            lse[row] = l;
            const int64_t tg = t[row];
            A out;
            if (tg == ignore) {
                out = A(0);
            } else if (tg < 0 || tg >= C) {
                out = cuda::std::numeric_limits<A>::quiet_NaN();
            } else {
                A wt = w ? w[tg] : A(1);
                out = A(1.0 - ls) * wt * (l - to_c<A>(xr[tg]));
                if (ls > 0)
                    out += A(ls) / A(C) * (p.ws * l - p.wx);
            }
            loss[row] = out;
        }
    }
}

// Blocks of (G, BLOCK / G) threads as for the forward pass; no lane depends
// on another within a row, so a few long rows also split their columns over
// gridDim.y blocks. VEC > 1: the rows of x and gx are read and written as
// RowParts (the same offset from a 16-byte boundary), the scalar ends by
// the first blocks of gridDim.y. float16 [8192, 50304] moved two bytes a
// load.
template <class T, int VEC>
__global__ void __launch_bounds__(BLOCK) xent_bwd(T *gx, const compute_t<T> *g, int64_t gstride,
                                                  const T *x, const int64_t *t,
                                                  const compute_t<T> *w, const compute_t<T> *lse,
                                                  int64_t rows, int64_t C, int64_t ignore, double ls)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    using A = compute_t<T>;
    using P = Pack<T, VEC>;
    const int G = blockDim.x;
    const int tid = threadIdx.y * blockDim.x + threadIdx.x, nthreads = blockDim.x * blockDim.y;
    // W = sum w, once a block (in a fixed order: the same value everywhere)
    __shared__ A sw[BLOCK / 32];
    A W = A(C);
    if (w && ls > 0) {
        A s = 0;
        for (int64_t c = tid; c < C; c += nthreads)
            s += w[c];
#pragma unroll
        for (int off = 16; off > 0; off >>= 1)
            s += __shfl_xor_sync(0xffffffffu, s, off);
        if ((tid & 31) == 0)
            sw[tid >> 5] = s;
        __syncthreads();
        W = 0;
        for (int i = 0; i < nthreads / 32; i++)
            W += sw[i];
    }
    const int64_t first = threadIdx.x + (int64_t)blockIdx.y * G, step = (int64_t)G * gridDim.y;
    for (int64_t row = (int64_t)blockIdx.x * blockDim.y + threadIdx.y; row < rows;
         row += (int64_t)gridDim.x * blockDim.y) {
        const T *xr = x + row * C;
        T *o = gx + row * C;
        const RowParts<T, VEC> pt(xr, C);
        const int64_t tg = t[row];
        const bool keep = tg != ignore; // an ignored row's gradient is zero
        A a = A(0), b = A(0), l = A(0);
        if (keep) {
            const A gr = g[row * gstride];
            const bool ok = tg >= 0 && tg < C;
            l = lse[row];
            a = ok ? gr * A(1.0 - ls) * (w ? w[tg] : A(1)) : cuda::std::numeric_limits<A>::quiet_NaN();
            b = gr * A(ls) / A(C);
        }
        const RowExp<T> ex(l); // p = exp(x - lse)
        auto grad = [&](A xv, int64_t c) -> A {
            if (!keep)
                return A(0);
            A p = ex(xv);
            A v = a * (c == tg ? p - A(1) : p);
            if (ls > 0)
                v += b * (W * p - (w ? w[c] : A(1)));
            return v;
        };
        for (int64_t q = first; q < pt.h + pt.tl; q += step) {
            const int64_t c = pt.extra((int)q);
            o[c] = from_c<T>(grad(keep ? to_c<A>(xr[c]) : A(0), c));
        }
        const P *xp = reinterpret_cast<const P *>(xr + pt.h);
        P *op = reinterpret_cast<P *>(o + pt.h);
        for (int64_t i = first; i < pt.nvec; i += step) {
            P pk, ov;
            if (keep)
                pk = xp[i];
#pragma unroll
            for (int j = 0; j < VEC; j++)
                ov.v[j] = from_c<T>(grad(keep ? to_c<A>(pk.v[j]) : A(0), pt.h + i * VEC + j));
            op[i] = ov;
        }
    }
}

// The sum of the row losses, and (mean) over the denominator, the summed
// weight w[t] of the rows not ignored, in one block: out[0] the result,
// out[1] the denominator. It replaces the separate kernels that the mean
// took after the forward pass (the mask, its sum, the losses' sum, the
// division): a loss of a few rows cost 22.6 us of host loop against
// torch's 14.8. Each thread sums a fixed share of rows and the shares meet
// in a fixed tree, so the result is the same bits from run to run.
constexpr int RED_THREADS = 1024;

template <class A>
__global__ void __launch_bounds__(RED_THREADS) xent_reduce(A *out, const A *loss, const int64_t *t, const A *w,
                                                       int64_t rows, int64_t C, int64_t ignore, int mean)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    __shared__ A sl[RED_THREADS / 32], sd[RED_THREADS / 32];
    A l = A(0), d = A(0);
    for (int64_t r = threadIdx.x; r < rows; r += RED_THREADS) {
        l += loss[r];
        const int64_t tg = t[r];
        if (tg != ignore) // a target outside [0, C) already made its loss NaN
            d += (w && tg >= 0 && tg < C) ? w[tg] : A(1);
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        l += __shfl_down_sync(0xffffffffu, l, off);
        d += __shfl_down_sync(0xffffffffu, d, off);
    }
    if ((threadIdx.x & 31) == 0) {
        sl[threadIdx.x >> 5] = l;
        sd[threadIdx.x >> 5] = d;
    }
    __syncthreads();
    if (threadIdx.x < 32) {
        l = sl[threadIdx.x];
        d = sd[threadIdx.x];
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) {
            l += __shfl_down_sync(0xffffffffu, l, off);
            d += __shfl_down_sync(0xffffffffu, d, off);
        }
        if (threadIdx.x == 0) {
            out[0] = mean ? l / d : l;
            out[1] = d;
        }
    }
}

// Lanes a row: about 8 logits a lane up to a warp, a warp up to 4096
// classes (rows enough to fill the GPU), the whole block beyond.
dim3 row_block(int64_t C)
{
    if (C > 4096)
        return dim3(BLOCK, 1);
    int g = 1;
    while (g < 32 && (int64_t)g * 8 < C)
        g *= 2;
    return dim3(g, BLOCK / g);
}

unsigned row_grid(int64_t rows, dim3 block)
{
    int64_t need = (rows + block.y - 1) / block.y, cap = (int64_t)sm_count() * 8;
    return (unsigned)(need < cap ? need : cap);
}

} // namespace

extern "C" int pcs_launch_xent_fwd(int dtype, void *loss, void *lse, const void *x, const int64_t *t,
                                   const void *w, int64_t rows, int64_t C, int64_t ignore, double ls,
                                   cudaStream_t stream)
{
    if (rows <= 0 || C <= 0)
        return 0;
    return dispatch_dtype(dtype, [&](auto tag) -> int {
        using T = decltype(tag);
        if constexpr (!is_flt<T>) {
            return -1;
        } else {
            using A = compute_t<T>;
            constexpr int VEC = 16 / sizeof(T) > 1 ? 16 / sizeof(T) : 1;
            dim3 block = row_block(C);
            const bool vec = VEC > 1 && (uintptr_t)x % sizeof(T) == 0; // any C, any offset: RowParts
            const bool ws = w != nullptr || ls > 0;
            auto go = [&](auto kernel) {
                launch_kernel_pdl(kernel, dim3(row_grid(rows, block)), block, stream, (A *)loss, (A *)lse,
                              (const T *)x, t, (const A *)w, rows, C, ignore, ls);
            };
            if (vec)
                ws ? go(xent_fwd<T, VEC, true>) : go(xent_fwd<T, VEC, false>);
            else
                ws ? go(xent_fwd<T, 1, true>) : go(xent_fwd<T, 1, false>);
            return 0;
        }
    });
}

extern "C" int pcs_launch_xent_bwd(int dtype, void *gx, const void *g, int64_t gstride, const void *x,
                                   const int64_t *t, const void *w, const void *lse, int64_t rows,
                                   int64_t C, int64_t ignore, double ls, cudaStream_t stream)
{
    if (rows <= 0 || C <= 0)
        return 0;
    return dispatch_dtype(dtype, [&](auto tag) -> int {
        using T = decltype(tag);
        if constexpr (!is_flt<T>) {
            return -1;
        } else {
            using A = compute_t<T>;
            dim3 block = row_block(C);
            dim3 grid(row_grid(rows, block));
            if (block.x == BLOCK) { // long rows: enough blocks for the GPU, 4 columns a thread at least
                int64_t want = (int64_t)sm_count() * 8 / grid.x, most = C / (BLOCK * 4);
                int64_t y = want < most ? want : most;
                grid.y = (unsigned)(y < 1 ? 1 : y > 65535 ? 65535 : y);
            }
            constexpr int VEC = 16 / sizeof(T) > 1 ? 16 / sizeof(T) : 1;
            auto go = [&](auto kernel) {
                launch_kernel_pdl(kernel, grid, block, stream, (T *)gx, (const A *)g, gstride, (const T *)x, t,
                              (const A *)w, (const A *)lse, rows, C, ignore, ls);
            };
            if (VEC > 1 && (uintptr_t)x % 16 == (uintptr_t)gx % 16 && (uintptr_t)x % sizeof(T) == 0)
                go(xent_bwd<T, VEC>);
            else
                go(xent_bwd<T, 1>);
            return 0;
        }
    });
}

extern "C" int pcs_launch_xent_reduce(int dtype, void *out, const void *loss, const int64_t *t, const void *w,
                                      int64_t rows, int64_t C, int64_t ignore, int mean, cudaStream_t stream)
{
    return dispatch_dtype(dtype, [&](auto tag) -> int {
        using A = decltype(tag);
        if constexpr (!std::is_same_v<A, float> && !std::is_same_v<A, double>) {
            return -1; // the losses are in the accumulation type
        } else {
            launch_kernel_pdl(xent_reduce<A>, dim3(1), dim3(RED_THREADS), stream, (A *)out, (const A *)loss, t,
                              (const A *)w, rows, C, ignore, mean);
            return 0;
        }
    });
}
