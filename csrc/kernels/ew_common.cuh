// ew_common.cuh: what the elementwise kernels (ew_ops.cuh) and reduce.cu share: the storage types
// behind pcs_dtype ids, the type each one computes in (float for float16 and
// bfloat16, int for the narrow integers, as torch's "opmath" types), the
// conversions between them, and the one dtype switch that turns a runtime
// dtype id into a template argument.
#pragma once

#include <cuda/std/complex>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <type_traits>

#include "kernels.h"
#include "launch.cuh"

namespace pcs {

using c64 = cuda::std::complex<float>;
using c128 = cuda::std::complex<double>;

template <class T> struct is_cplx : std::false_type {};
template <> struct is_cplx<c64> : std::true_type {};
template <> struct is_cplx<c128> : std::true_type {};

template <class T>
constexpr bool is_lowp = std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;
template <class T>
constexpr bool is_flt = is_lowp<T> || std::is_same_v<T, float> || std::is_same_v<T, double>;
template <class T> constexpr bool is_cx = is_cplx<T>::value;
template <class T> constexpr bool is_int = !is_flt<T> && !is_cx<T>; // bool included

// The type arithmetic happens in. bool computes as int so that add/mul/max
// of two bools give or/and/or after the store turns non-zero into true.
template <class T> struct compute_of { using type = T; };
template <> struct compute_of<bool> { using type = int; };
template <> struct compute_of<uint8_t> { using type = int; };
template <> struct compute_of<int8_t> { using type = int; };
template <> struct compute_of<int16_t> { using type = int; };
template <> struct compute_of<__half> { using type = float; };
template <> struct compute_of<__nv_bfloat16> { using type = float; };
template <class T> using compute_t = typename compute_of<T>::type;

// The real type of a complex one (abs, var and norm of complex inputs).
template <class T> struct real_of { using type = T; };
template <> struct real_of<c64> { using type = float; };
template <> struct real_of<c128> { using type = double; };

template <class C, class T> __host__ __device__ __forceinline__ C to_c(T x)
{
    if constexpr (std::is_same_v<T, __half>)
        return C(__half2float(x));
    else if constexpr (std::is_same_v<T, __nv_bfloat16>)
        return C(__bfloat162float(x));
    else
        return C(x);
}

template <class T, class C> __host__ __device__ __forceinline__ T from_c(C x)
{
    if constexpr (std::is_same_v<T, bool>)
        return x != C(0);
    else if constexpr (std::is_same_v<T, __half>)
        return __float2half((float)x);
    else if constexpr (std::is_same_v<T, __nv_bfloat16>)
        return __float2bfloat16((float)x);
    else if constexpr (is_cx<T> && !is_cx<C>)
        return T(x, 0);
    else
        return T(x);
}

// A host scalar in compute type C.
template <class C> inline C from_k(const pcs_kscalar &s)
{
    if constexpr (is_cx<C>)
        return C((typename C::value_type)s.re, (typename C::value_type)s.im);
    else if constexpr (std::is_floating_point_v<C>)
        return (C)s.re;
    else
        return (C)s.i;
}

template <class C> __device__ __forceinline__ bool is_nan(C x)
{
    if constexpr (is_cx<C>)
        return x.real() != x.real() || x.imag() != x.imag();
    else if constexpr (std::is_floating_point_v<C>)
        return x != x;
    else
        return false;
}

// Calls f(T{}) with T the storage type of `dtype`; returns -1 for an unknown id.
template <class F> inline int dispatch_dtype(int dtype, F &&f)
{
    switch (dtype) {
    case PCS_BOOL: return f(bool{});
    case PCS_UINT8: return f(uint8_t{});
    case PCS_INT8: return f(int8_t{});
    case PCS_INT16: return f(int16_t{});
    case PCS_INT32: return f(int32_t{});
    case PCS_INT64: return f(int64_t{});
    case PCS_FLOAT16: return f(__half{});
    case PCS_BFLOAT16: return f(__nv_bfloat16{});
    case PCS_FLOAT32: return f(float{});
    case PCS_FLOAT64: return f(double{});
    case PCS_COMPLEX64: return f(c64{});
    case PCS_COMPLEX128: return f(c128{});
    default: return -1;
    }
}


// N elements loaded or stored as one aligned access (16 bytes for the
// widest N): the vectorized fast paths move data through these.
template <class T, int N> struct alignas(sizeof(T) * N) Pack {
    T v[N];
};

// A row that does not start on a 16-byte boundary (K not a whole number of
// packs, or a view at an odd offset) is read as h scalar values up to the
// first boundary, nvec whole packs, and tl scalar values after them (h and
// tl below VEC). The input and the output share their offset modulo 16 (the
// host checks), so one split serves both. Lane q < h + tl owns one of
// the scalar values: extra(q) is its index in the row, -1 for the others.
// (softmax and cross entropy over GPT-2's vocabulary of 50257 read one
// value at a time before: softmax at 0.42x to 0.55x torch in 16 bits.)
template <class T, int VEC> struct RowParts {
    int h, tl;
    int64_t nvec;
    __device__ __forceinline__ RowParts(const T *row, int64_t K)
    {
        h = VEC > 1 ? (int)(((16 - ((uintptr_t)row & 15)) & 15) / sizeof(T)) : 0;
        if (h > K)
            h = (int)K;
        nvec = (K - h) / VEC;
        tl = (int)(K - h - nvec * VEC);
    }
    __device__ __forceinline__ int64_t extra(int t) const
    {
        // the tests in this order: with the range test first, the cached
        // softmax kernel ran [4096, 50257] float16 log_softmax 13 % slower
        return t < h ? t : t < h + tl ? end_at(t, h, nvec) : -1;
    }
    // The index of scalar value t < h + tl of a row split as (h, nvec): a
    // kernel that keeps h and nvec in its own registers calls this directly.
    static __device__ __forceinline__ int64_t end_at(int t, int h, int64_t nvec)
    {
        return t < h ? t : h + nvec * VEC + (t - h);
    }
};

// Calls f(i, x[i]) for the packs i = first, first + stride, ... below n,
// with the loads of U of them issued before the first call: a thread with
// a short share still has several loads in flight.
template <int U, class T, int VEC, class F>
__device__ __forceinline__ void for_packs(const Pack<T, VEC> *x, int64_t n, int64_t first, int64_t stride, F &&f)
{
    for (int64_t i = first; i < n; i += U * stride) {
        Pack<T, VEC> pk[U];
#pragma unroll
        for (int u = 0; u < U; u++)
            if (i + u * stride < n)
                pk[u] = x[i + u * stride];
#pragma unroll
        for (int u = 0; u < U; u++)
            if (i + u * stride < n)
                f(i + u * stride, pk[u]);
    }
}

// Math in an accumulation type (float, or double for float64 inputs), for the
// kernels that reduce rows (softmax, norms, cross entropy, optimizers): the
// float function for float, the double one for double.
#define PCS_ACC_MATH(name, ffun, dfun)                                               \
    template <class A> __device__ __forceinline__ A name(A x)                        \
    {                                                                                \
        if constexpr (std::is_same_v<A, double>)                                     \
            return ::dfun(x);                                                        \
        else                                                                         \
            return ::ffun(x);                                                        \
    }
PCS_ACC_MATH(acc_exp, expf, exp)
PCS_ACC_MATH(acc_log, logf, log)
PCS_ACC_MATH(acc_sqrt, sqrtf, sqrt)
PCS_ACC_MATH(acc_rsqrt, rsqrtf, rsqrt)
#undef PCS_ACC_MATH

} // namespace pcs
