// online_max_sum.cuh: the online (max, sum of exp) pair that lets softmax
// (softmax_rows.cuh) and cross entropy (xent.cu) read a row once for both
// its max and its sum: values and packs added to a pair, and two pairs
// merged. NaN and infinities come out as the two-pass formula gives them.
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

// Adds a pack of VEC values to the pair: one rescale for the pack's max,
// then one exp a value. A +inf makes the sum NaN (exp(inf - inf)), as
// ms_add does.
template <class A, int VEC> __device__ __forceinline__ void ms_add_pack(MS<A> &p, const A (&v)[VEC])
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
        A e = A(0);
#pragma unroll
        for (int j = 0; j < VEC; j++)
            e += acc_exp(v[j] - p.m);
        p.s += e;
    }
}

} // namespace online
} // namespace pcs
