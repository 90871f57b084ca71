// softmax_rows.cuh: what the softmax kernels (softmax.cu) share: merges of
// the online (max, sum) pair (online_max_sum.cuh) across a warp and a block,
// the per-element finish, and the passes over a row's whole packs
// (RowParts, ew_common.cuh) with several loads in flight.
#pragma once

#include "ew_common.cuh"
#include "online_max_sum.cuh"

namespace pcs {
namespace softmax_rows {
using namespace online;

// Sums over each aligned group of G lanes (the whole warp by default).
template <class A, int G = 32> __device__ __forceinline__ A warp_sum(A v)
{
#pragma unroll
    for (int off = G / 2; off > 0; off >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

template <class A, int G = 32> __device__ __forceinline__ A warp_nan_max(A v)
{
#pragma unroll
    for (int off = G / 2; off > 0; off >>= 1)
        v = nan_max(v, __shfl_xor_sync(0xffffffffu, v, off));
    return v;
}

// k: log(s) for log_softmax, 1 / s for softmax (one division a row, not one
// an element: the division is most of an element's instructions).
template <class A> __device__ __forceinline__ A row_k(A s, bool log)
{
    return log ? acc_log(s) : A(1) / s;
}

template <class A, bool LOG> __device__ __forceinline__ A finish_kept(A x, A m, A k)
{
    if constexpr (LOG)
        return x - m - k;
    else
        return x * k;
}

// One element's exp(x - m) (ex, the row's RowExp) added to s; softmax
// keeps it in x for the write, so that each element takes one exp
// (log_softmax writes x - m - log(s)).
template <bool LOG, class T, class A> __device__ __forceinline__ void add_exp(A &x, const RowExp<T> &ex, A &s)
{
    A e = ex(x);
    s += e;
    if constexpr (!LOG)
        x = e;
}

// The result for x: x - m - log(s), or exp(x - m) / s (k: row_k).
template <bool LOG, class T, class A> __device__ __forceinline__ A finish(A x, const RowExp<T> &ex, A k)
{
    if constexpr (LOG)
        return x - ex.m - k;
    else
        return ex(x) * k;
}

// Whether input and output rows split alike into RowParts: the same offset
// from a 16-byte boundary, on a whole element.
template <class T> inline bool same_offset(const T *in, const T *out)
{
    return (uintptr_t)in % 16 == (uintptr_t)out % 16 && (uintptr_t)in % sizeof(T) == 0;
}

constexpr int BLOCK = 512;

// A pack loaded as four 32-bit words, seen as its values. The registers
// kernels keep loaded packs as words: kept as an array of
// Pack<__nv_bfloat16, 8>, bfloat16 rows of 8 and 16 packs a thread spilled
// (180 and 204 bytes).
template <class P> __device__ __forceinline__ P from_words(uint4 w)
{
    static_assert(sizeof(P) == 16, "a 16-byte pack");
    P p;
    memcpy(&p, &w, 16);
    return p;
}

// The fewest threads a block of the registers kernels (forward and
// backward) takes for a row of T: its rows are longer than 1024 values, so
// more than 2 * lo packs, and fewer threads would hold more than 4 packs.
template <class T> constexpr int regs_threads_lo() { return sizeof(T) >= 8 ? 256 : sizeof(T) == 4 ? 128 : 64; }

// The threads of a block that holds a row of `packs` 16-byte packs of T in
// at most 4 packs a thread: the smallest power of two from
// regs_threads_lo<T>() to hi that does (hi when none does).
template <class T> inline int threads_for_packs(int64_t packs, int hi)
{
    int nt = regs_threads_lo<T>();
    while (nt < hi && packs > 4 * (int64_t)nt)
        nt *= 2;
    return nt;
}

// The launchers' dtype switch: f(T{}, std::bool_constant<LOG>{}) for a
// floating dtype, returning 0; -1 (nothing called) for the others.
template <class F> inline int dispatch_float_log(int dtype, int log, F &&f)
{
    return dispatch_dtype(dtype, [&](auto tag) -> int {
        using T = decltype(tag);
        if constexpr (!is_flt<T>) {
            return -1;
        } else {
            if (log)
                f(tag, std::true_type{});
            else
                f(tag, std::false_type{});
            return 0;
        }
    });
}

// Merges every thread's pair; all threads get the result.
template <class A> __device__ MS<A> block_merge(MS<A> p)
{
    __shared__ A sm[BLOCK / 32], ss[BLOCK / 32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        MS<A> o = {__shfl_xor_sync(0xffffffffu, p.m, off), __shfl_xor_sync(0xffffffffu, p.s, off)};
        p = ms_merge(p, o);
    }
    if (lane == 0) {
        sm[warp] = p.m;
        ss[warp] = p.s;
    }
    __syncthreads();
    MS<A> r = {sm[0], ss[0]};
    for (int w = 1; w < (int)(blockDim.x >> 5); w++)
        r = ms_merge(r, MS<A>{sm[w], ss[w]});
    __syncthreads(); // the shared pair is read before the next row overwrites it
    return r;
}

// All threads get op over every thread's v (op: 0 NaN-first max, 1 sum).
template <int OP, int NW = BLOCK / 32, class A> __device__ __forceinline__ A block_reduce(A v, A *red)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = OP == 0 ? warp_nan_max(v) : warp_sum(v);
    if (lane == 0)
        red[warp] = v;
    __syncthreads();
    A r = red[0];
#pragma unroll
    for (int w = 1; w < NW; w++)
        r = OP == 0 ? nan_max(r, red[w]) : r + red[w];
    __syncthreads(); // read before the next reduction overwrites
    return r;
}

// Adds packs x[i] for i = first, first + stride, ... below n to the pair,
// U loads in flight a thread (one at a time left a block of a few rows
// waiting on memory).
template <int U, class A, class T, int VEC>
__device__ __forceinline__ void ms_add_packs(MS<A> &p, const Pack<T, VEC> *x, int64_t n, int64_t first,
                                             int64_t stride)
{
    for_packs<U>(x, n, first, stride, [&](int64_t, const Pack<T, VEC> &pk) {
        A v[VEC];
#pragma unroll
        for (int j = 0; j < VEC; j++)
            v[j] = to_c<A>(pk.v[j]);
        ms_add_pack<A, VEC, T>(p, v);
    });
}

// y[i] = the result for x[i] over the same packs, U loads in flight.
template <int U, bool LOG, class A, class T, int VEC>
__device__ __forceinline__ void finish_packs(Pack<T, VEC> *y, const Pack<T, VEC> *x, int64_t n,
                                             int64_t first, int64_t stride, A m, A k)
{
    const RowExp<T> ex(m);
    for_packs<U>(x, n, first, stride, [&](int64_t i, const Pack<T, VEC> &pk) {
        Pack<T, VEC> o;
#pragma unroll
        for (int j = 0; j < VEC; j++)
            o.v[j] = from_c<T>(finish<LOG>(to_c<A>(pk.v[j]), ex, k));
        y[i] = o;
    });
}

} // namespace softmax_rows
} // namespace pcs
