// online_max_sum.cuh: the online (max, sum of exp) pair that lets softmax
// (softmax_rows.cuh) and cross entropy (xent.cu) read a row once for both
// its max and its sum: values and packs added to a pair, and two pairs
// merged, and RowExp, exp(x - m) as 16-bit rows take it. NaN and
// infinities come out as the two-pass formula gives them.
#pragma once

#include <cuda/std/limits>

#include "ew_common.cuh"

namespace pcs {
namespace online {
template <class A> __device__ __forceinline__ A neg_inf() { return -cuda::std::numeric_limits<A>::infinity(); }

// fmax drops NaN; softmax and cross entropy must keep it, so the max is taken NaN-first.
template <class A> __device__ __forceinline__ A nan_max(A a, A b)
{
    return (a != a || a > b) ? a : b;
}

// The online pair: m the running max, s the sum of exp(x - m). A pair with
// s == 0 has seen nothing finite yet; scaling it must not form -inf - -inf.
template <class A> struct MS {
    A m, s;
};

template <class A> __device__ __forceinline__ A rescale(A s, A from, A to)
{
    return s == A(0) ? A(0) : s * acc_exp(from - to);
}

template <class A> __device__ __forceinline__ void ms_add(MS<A> &p, A x)
{
    if (x > p.m) {
        // exp(x - x): 1, or NaN for x = +inf, as the two-pass formula gives
        p.s = rescale(p.s, p.m, x) + A(1) + (x - x);
        p.m = x;
    } else if (x != x) {
        p.m = x; // NaN: the row's result is NaN
        p.s = x;
    } else if (p.m != neg_inf<A>()) {
        p.s += acc_exp(x - p.m);
    }
}

template <class A> __device__ __forceinline__ MS<A> ms_merge(MS<A> a, MS<A> b)
{
    if (a.m != a.m || b.m != b.m)
        return {a.m != a.m ? a.m : b.m, a.m != a.m ? a.m : b.m};
    A m = a.m > b.m ? a.m : b.m;
    return {m, rescale(a.s, a.m, m) + rescale(b.s, b.m, m)};
}

// exp(x - m) for the values x of one row of T whose max is m. Rows of
// float16 and bfloat16 take 2^t on the MUFU unit (ex2.approx.ftz), with
// t = x log2e - m log2e formed by one fma: m log2e is kept as two floats
// (hi + lo, exactly the product), so that t near the max is as exact as
// x - m is. expf wraps the same MUFU op in a range reduction of several
// instructions, and a row held in registers waits on those once its loads
// are in: [128, 65536] float16 softmax went from 17.2 to 14.7 us and
// [256, 32000] from 14.2 to 11.3 (torch 17.7 and 19.9); the online pass
// of longer rows, [133, 65536], from 28.9 to 23.5. The error is the MUFU
// op's (2^-22 relative) and t's two roundings, far below a 16-bit
// result's. Results under 2^-126 flush to 0: a float16 result cannot hold
// them, a bfloat16 one could (under 1.2e-38). hi is clamped to the float
// range, so that a bfloat16 max past 2.3e38 (whose product with log2e is
// no float) still gives lo and t exactly; a max of +-inf or NaN makes lo
// inf or NaN and the sum NaN, as exp(x - m) does. float32 and float64
// keep expf and exp: t is rounded to a float, which cost up to 16 float
// ulps of the result in a NumPy model of this formula (expf's own range
// reduction keeps more bits), invisible in a 16-bit result, not in a
// float32 one.
constexpr float LOG2E = 1.4426950408889634f;

// 2^t by the special-function unit alone (ex2.approx.ftz).
__device__ __forceinline__ float ex2_fast(float t)
{
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(t));
    return r;
}

template <class T> struct RowExp {
    using A = compute_t<T>;
    A m, hi, lo;
    __device__ __forceinline__ explicit RowExp(A m_) : m(m_)
    {
        if constexpr (is_lowp<T>) {
            constexpr float BIG = 3.4028234663852886e38f;
            hi = fminf(fmaxf(m * LOG2E, -BIG), BIG);
            lo = fmaf(m, LOG2E, -hi);
        }
    }
    __device__ __forceinline__ A operator()(A x) const
    {
        if constexpr (is_lowp<T>) {
            return ex2_fast(fmaf(x, LOG2E, -hi) - lo);
        } else {
            return acc_exp(x - m);
        }
    }
};

// Adds a pack of VEC values to the pair: one rescale for the pack's max,
// then one exp a value (RowExp of the values' type T). A +inf makes the
// sum NaN (exp(inf - inf)), as ms_add does.
template <class A, int VEC, class T = A> __device__ __forceinline__ void ms_add_pack(MS<A> &p, const A (&v)[VEC])
{
    A mx = v[0];
#pragma unroll
    for (int j = 1; j < VEC; j++)
        mx = nan_max(mx, v[j]);
    if (mx != mx) {
        p.m = p.s = mx;
    } else if (mx > p.m) {
        p.s = rescale(p.s, p.m, mx);
        p.m = mx;
    }
    if (p.m == p.m && p.m != neg_inf<A>()) {
        const RowExp<T> ex(p.m);
        A e = A(0);
#pragma unroll
        for (int j = 0; j < VEC; j++)
            e += ex(v[j]);
        p.s += e;
    }
}

} // namespace online
} // namespace pcs
