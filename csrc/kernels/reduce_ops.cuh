// reduce_ops.cuh: the reduction ops (identity, map, combine, store), one
// struct each, and the op-id dispatch. The kernels that run them are in
// reduce_kernels.cuh.
#pragma once

#include <cuda/std/limits>

#include "ew_common.cuh"
#include "pdl.cuh"

using namespace pcs;

namespace {

template <class A> __device__ __forceinline__ A shfl_down(A v, int off, int width = 32)
{
    static_assert(sizeof(A) % 4 == 0, "accumulators are whole 32-bit words");
    constexpr int W = sizeof(A) / 4;
    int w[W];
    memcpy(w, &v, sizeof(A));
#pragma unroll
    for (int i = 0; i < W; i++)
        w[i] = __shfl_down_sync(0xffffffffu, w[i], off, width);
    memcpy(&v, w, sizeof(A));
    return v;
}

template <class A> __device__ __forceinline__ A shfl_up(A v, int off)
{
    constexpr int W = sizeof(A) / 4;
    int w[W];
    memcpy(w, &v, sizeof(A));
#pragma unroll
    for (int i = 0; i < W; i++)
        w[i] = __shfl_up_sync(0xffffffffu, w[i], off);
    memcpy(&v, w, sizeof(A));
    return v;
}

// Sums accumulate in int64 for integers and bool, float for 16-bit floats.
template <class T> struct sum_acc { using type = compute_t<T>; };
template <> struct sum_acc<bool> { using type = int64_t; };
template <> struct sum_acc<uint8_t> { using type = int64_t; };
template <> struct sum_acc<int8_t> { using type = int64_t; };
template <> struct sum_acc<int16_t> { using type = int64_t; };
template <> struct sum_acc<int32_t> { using type = int64_t; };
template <class T> using sum_acc_t = typename sum_acc<T>::type;
template <class T> using sum_out_t = std::conditional_t<is_int<T>, int64_t, T>;
// Real accumulation type for var/std/norm/logsumexp.
template <class T> using real_acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// ---------------------------------------------------------------------------
// The ops

template <class T, bool PROD, bool MEAN> struct RSum {
    using Acc = sum_acc_t<T>;
    using Out = sum_out_t<T>;
    int64_t K;
    double param;
    __device__ Acc ident() const { return Acc(PROD ? 1 : 0); }
    __device__ Acc map(T x, int64_t) const { return to_c<Acc>(x); }
    __device__ Acc comb(Acc a, Acc b) const { return PROD ? Acc(a * b) : Acc(a + b); }
    __device__ void store(Acc a, Out *out, int64_t *, int64_t o) const
    {
        if constexpr (MEAN)
            a = a / Acc((typename real_of<Acc>::type)K);
        out[o] = from_c<Out>(a);
    }
};

template <class T, bool MAX> struct RMax {
    using C = compute_t<T>;
    using Acc = C;
    using Out = T;
    int64_t K;
    double param;
    __device__ Acc ident() const
    {
        if constexpr (std::is_floating_point_v<C>)
            return MAX ? -cuda::std::numeric_limits<C>::infinity() : cuda::std::numeric_limits<C>::infinity();
        else
            return MAX ? cuda::std::numeric_limits<C>::lowest() : cuda::std::numeric_limits<C>::max();
    }
    __device__ Acc map(T x, int64_t) const { return to_c<C>(x); }
    // NaN wins, as in torch. b replaces a when it is beyond a or NaN; a NaN
    // a is never replaced (comparisons with NaN are false). For float, the
    // one NaN-propagating min/max instruction of sm_80 and later.
    __device__ Acc comb(Acc a, Acc b) const
    {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
        if constexpr (std::is_same_v<Acc, float>) {
            float r;
            if constexpr (MAX)
                asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
            else
                asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
            return r;
        }
#endif
        return ((MAX ? b > a : b < a) || is_nan(b)) ? b : a;
    }
    __device__ void store(Acc a, Out *out, int64_t *, int64_t o) const { out[o] = from_c<T>(a); }
};

template <class C> struct ValIdx {
    C v;
    int64_t i;
};

template <class T, bool MAX> struct RArg {
    using C = compute_t<T>;
    using Acc = ValIdx<C>;
    using Out = T;
    int64_t K;
    double param;
    __device__ Acc ident() const { return {RMax<T, MAX>{}.ident(), INT64_MAX}; }
    __device__ Acc map(T x, int64_t k) const { return {to_c<C>(x), k}; }
    __device__ Acc comb(Acc a, Acc b) const
    {
        bool an = is_nan(a.v), bn = is_nan(b.v);
        if (an || bn) {
            if (an && bn)
                return a.i < b.i ? a : b;
            return an ? a : b;
        }
        if (a.v == b.v)
            return a.i < b.i ? a : b;
        return (MAX ? a.v > b.v : a.v < b.v) ? a : b;
    }
    __device__ void store(Acc a, Out *out, int64_t *idx, int64_t o) const
    {
        if (out)
            out[o] = from_c<T>(a.v);
        if (idx)
            idx[o] = a.i;
    }
};

template <class T, bool ALL> struct RBool {
    using Acc = int;
    using Out = bool;
    int64_t K;
    double param;
    __device__ Acc ident() const { return ALL ? 1 : 0; }
    __device__ Acc map(T x, int64_t) const { return to_c<compute_t<T>>(x) != compute_t<T>(0); }
    __device__ Acc comb(Acc a, Acc b) const { return ALL ? (a & b) : (a | b); }
    __device__ void store(Acc a, Out *out, int64_t *, int64_t o) const { out[o] = a != 0; }
};

template <class R> struct Welford {
    R mean, m2, n;
};

template <class T, bool STD> struct RVar {
    using R = real_acc_t<T>;
    using Acc = Welford<R>;
    using Out = T;
    int64_t K;
    double param; // correction
    __device__ Acc ident() const { return {0, 0, 0}; }
    __device__ Acc map(T x, int64_t) const { return {to_c<R>(x), 0, 1}; }
    __device__ Acc comb(Acc a, Acc b) const
    {
        R n = a.n + b.n;
        if (n == 0)
            return a;
        R d = b.mean - a.mean;
        R f = b.n / n;
        return {a.mean + d * f, a.m2 + b.m2 + d * d * a.n * f, n};
    }
    __device__ void store(Acc a, Out *out, int64_t *, int64_t o) const
    {
        R div = a.n - R(param);
        R v = a.m2 / (div > 0 ? div : R(0));
        out[o] = from_c<T>(STD ? sqrt(v) : v);
    }
};

template <class T> struct RNorm {
    using R = real_acc_t<T>;
    using Acc = R;
    using Out = T;
    int64_t K;
    double param; // p
    __device__ Acc ident() const { return 0; }
    __device__ Acc map(T x, int64_t) const
    {
        R v = to_c<R>(x);
        R a = v < 0 ? -v : v;
        if (param == 2.0)
            return v * v;
        if (param == 1.0)
            return a;
        if (param == 0.0)
            return v != 0 ? R(1) : R(0);
        return pow(a, R(param));
    }
    __device__ Acc comb(Acc a, Acc b) const { return a + b; }
    __device__ void store(Acc a, Out *out, int64_t *, int64_t o) const
    {
        R r = param == 2.0 ? sqrt(a) : (param == 1.0 || param == 0.0) ? a : pow(a, R(1.0 / param));
        out[o] = from_c<T>(r);
    }
};

template <class R> struct MaxSum {
    R m, s;
};

template <class T> struct RLse {
    using R = real_acc_t<T>;
    using Acc = MaxSum<R>;
    using Out = T;
    int64_t K;
    double param;
    __device__ Acc ident() const { return {-cuda::std::numeric_limits<R>::infinity(), 0}; }
    __device__ Acc map(T x, int64_t) const { return {to_c<R>(x), 1}; }
    __device__ Acc comb(Acc a, Acc b) const
    {
        if (a.m != a.m || b.m != b.m)
            return {cuda::std::numeric_limits<R>::quiet_NaN(), 1};
        if (b.m > a.m) {
            Acc t = a;
            a = b;
            b = t;
        }
        if (b.m == -cuda::std::numeric_limits<R>::infinity())
            return a;
        if (a.m == cuda::std::numeric_limits<R>::infinity())
            return {a.m, 1};
        return {a.m, a.s + b.s * exp(b.m - a.m)};
    }
    __device__ void store(Acc a, Out *out, int64_t *, int64_t o) const
    {
        R r = a.s == 0 ? -cuda::std::numeric_limits<R>::infinity() : a.m + log(a.s);
        out[o] = from_c<T>(r);
    }
};

template <int OP, class T> struct RedOf { using type = void; };
template <class T> struct RedOf<PCS_ROP_SUM, T> { using type = RSum<T, false, false>; };
template <class T> struct RedOf<PCS_ROP_PROD, T> { using type = RSum<T, true, false>; };
template <class T> struct RedOf<PCS_ROP_MEAN, T> {
    using type = std::conditional_t<is_int<T>, void, RSum<T, false, true>>;
};
template <class T> struct RedOf<PCS_ROP_MAX, T> { using type = std::conditional_t<is_cx<T>, void, RMax<T, true>>; };
template <class T> struct RedOf<PCS_ROP_MIN, T> { using type = std::conditional_t<is_cx<T>, void, RMax<T, false>>; };
template <class T> struct RedOf<PCS_ROP_ARGMAX, T> { using type = std::conditional_t<is_cx<T>, void, RArg<T, true>>; };
template <class T> struct RedOf<PCS_ROP_ARGMIN, T> { using type = std::conditional_t<is_cx<T>, void, RArg<T, false>>; };
template <class T> struct RedOf<PCS_ROP_ALL, T> { using type = RBool<T, true>; };
template <class T> struct RedOf<PCS_ROP_ANY, T> { using type = RBool<T, false>; };
template <class T> struct RedOf<PCS_ROP_VAR, T> { using type = std::conditional_t<is_flt<T>, RVar<T, false>, void>; };
template <class T> struct RedOf<PCS_ROP_STD, T> { using type = std::conditional_t<is_flt<T>, RVar<T, true>, void>; };
template <class T> struct RedOf<PCS_ROP_NORM, T> { using type = std::conditional_t<is_flt<T>, RNorm<T>, void>; };
template <class T> struct RedOf<PCS_ROP_LOGSUMEXP, T> { using type = std::conditional_t<is_flt<T>, RLse<T>, void>; };

template <int I, int COUNT, class F> inline int dispatch_rop(int op, F &&f)
{
    if constexpr (I >= COUNT)
        return -1;
    else
        return op == I ? f(std::integral_constant<int, I>{}) : dispatch_rop<I + 1, COUNT>(op, f);
}

} // namespace
