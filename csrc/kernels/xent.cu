// xent.cu: cross entropy with class indices, forward and backward, behind
// pcs_launch_xent_fwd / pcs_launch_xent_bwd (kernels.h).
//
// Forward: one block a row of C logits, read once: each thread keeps an
// online (max, sum exp) pair over its strided share plus, for label
// smoothing, the sums of w[c] x[c] and w[c]; the pairs merge across the block
// and thread 0 writes the row's loss and lse. The loss vector is reduced
// afterwards by the ordinary (deterministic) sum. Backward: one block a row,
// gx = g ((1 - ls) w[t] (p - onehot(t)) + ls / C (W p - w)), p = exp(x - lse),
// one read and one write. Accumulation in float (double for float64).
#include <cuda/std/limits>

#include "ew_common.cuh"

using namespace pcs;

namespace {

constexpr int BLOCK = 512;

template <class A> struct St {
    A m, s, wx, ws; // running max, sum exp(x - m), sum w x, sum w
};

template <class A> __device__ __forceinline__ void st_add(St<A> &p, A x, A w)
{
    if (x > p.m) {
        p.s = (p.s == A(0) ? A(0) : p.s * acc_exp(p.m - x)) + A(1);
        p.m = x;
    } else if (x != x) {
        p.m = x;
        p.s = x;
    } else {
        p.s += acc_exp(x - p.m);
    }
    p.wx += w * x;
    p.ws += w;
}

template <class A> __device__ __forceinline__ St<A> st_merge(St<A> a, St<A> b)
{
    St<A> r;
    r.wx = a.wx + b.wx;
    r.ws = a.ws + b.ws;
    if (a.m != a.m || b.m != b.m) {
        r.m = r.s = a.m != a.m ? a.m : b.m;
        return r;
    }
    r.m = a.m > b.m ? a.m : b.m;
    A sa = a.s == A(0) ? A(0) : a.s * acc_exp(a.m - r.m), sb = b.s == A(0) ? A(0) : b.s * acc_exp(b.m - r.m);
    r.s = sa + sb;
    return r;
}

template <class T>
__global__ void __launch_bounds__(BLOCK) xent_fwd(compute_t<T> *loss, compute_t<T> *lse, const T *x,
                                                  const int64_t *t, const compute_t<T> *w,
                                                  int64_t rows, int64_t C, int64_t ignore, double ls)
{
    using A = compute_t<T>;
    __shared__ St<A> sh[BLOCK / 32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const T *xr = x + row * C;
        St<A> p = {-cuda::std::numeric_limits<A>::infinity(), A(0), A(0), A(0)};
        for (int64_t c = threadIdx.x; c < C; c += BLOCK)
            st_add(p, to_c<A>(xr[c]), w ? w[c] : A(1));
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) {
            St<A> o = {__shfl_xor_sync(0xffffffffu, p.m, off), __shfl_xor_sync(0xffffffffu, p.s, off),
                       __shfl_xor_sync(0xffffffffu, p.wx, off), __shfl_xor_sync(0xffffffffu, p.ws, off)};
            p = st_merge(p, o);
        }
        if (lane == 0)
            sh[warp] = p;
        __syncthreads();
        if (threadIdx.x == 0) {
            St<A> r = sh[0];
            for (int i = 1; i < BLOCK / 32; i++)
                r = st_merge(r, sh[i]);
            const A l = r.m + acc_log(r.s);
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
                    out += A(ls) / A(C) * (r.ws * l - r.wx);
            }
            loss[row] = out;
        }
        __syncthreads(); // sh is read before the next row writes it
    }
}

template <class T>
__global__ void __launch_bounds__(BLOCK) xent_bwd(T *gx, const compute_t<T> *g, int64_t gstride,
                                                  const T *x, const int64_t *t,
                                                  const compute_t<T> *w, const compute_t<T> *lse,
                                                  int64_t rows, int64_t C, int64_t ignore, double ls)
{
    using A = compute_t<T>;
    // W = sum w, once a block (in a fixed order: the same value everywhere)
    __shared__ A sw[BLOCK / 32];
    A W = A(C);
    if (w && ls > 0) {
        A s = 0;
        for (int64_t c = threadIdx.x; c < C; c += BLOCK)
            s += w[c];
#pragma unroll
        for (int off = 16; off > 0; off >>= 1)
            s += __shfl_xor_sync(0xffffffffu, s, off);
        if ((threadIdx.x & 31) == 0)
            sw[threadIdx.x >> 5] = s;
        __syncthreads();
        W = 0;
        for (int i = 0; i < BLOCK / 32; i++)
            W += sw[i];
    }
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const T *xr = x + row * C;
        T *o = gx + row * C;
        const int64_t tg = t[row];
        if (tg == ignore) {
            for (int64_t c = threadIdx.x; c < C; c += BLOCK)
                o[c] = from_c<T>(A(0));
            continue;
        }
        const A gr = g[row * gstride], l = lse[row];
        const bool ok = tg >= 0 && tg < C;
        const A a = ok ? gr * A(1.0 - ls) * (w ? w[tg] : A(1)) : cuda::std::numeric_limits<A>::quiet_NaN();
        const A b = gr * A(ls) / A(C);
        for (int64_t c = threadIdx.x; c < C; c += BLOCK) {
            A p = acc_exp(to_c<A>(xr[c]) - l);
            A v = a * (c == tg ? p - A(1) : p);
            if (ls > 0)
                v += b * (W * p - (w ? w[c] : A(1)));
            o[c] = from_c<T>(v);
        }
    }
}

unsigned row_grid(int64_t rows)
{
    int64_t cap = (int64_t)sm_count() * 8;
    return (unsigned)(rows < cap ? rows : cap);
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
            launch_kernel(xent_fwd<T>, dim3(row_grid(rows)), dim3(BLOCK), stream, (A *)loss, (A *)lse,
                          (const T *)x, t, (const A *)w, rows, C, ignore, ls);
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
            launch_kernel(xent_bwd<T>, dim3(row_grid(rows)), dim3(BLOCK), stream, (T *)gx,
                          (const A *)g, gstride, (const T *)x, t, (const A *)w, (const A *)lse, rows,
                          C, ignore, ls);
            return 0;
        }
    });
}
