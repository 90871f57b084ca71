// gamma_fns.cuh: the log-gamma function and its first two derivatives
// (digamma, trigamma) on the device, for the elementwise kernels of
// ew_ops.cuh. lgamma is CUDA's; digamma and trigamma have no CUDA routine:
// below 0 they reflect (psi(x) = psi(1 - x) - pi / tan(pi x), psi1(x) =
// pi^2 / sin^2(pi x) - psi1(1 - x)), then shift the argument above 10 by the
// recurrences psi(x) = psi(x + 1) - 1/x, psi1(x) = psi1(x + 1) + 1/x^2, where
// the asymptotic series are accurate to double precision. Poles follow
// torch: psi(0) = -inf (and +inf at -0), nan at the negative integers;
// psi1 is +inf at the non-positive integers.
#pragma once

#include <type_traits>

template <class C> __device__ __forceinline__ C m_lgamma(C x)
{
    if constexpr (std::is_same_v<C, float>)
        return ::lgammaf(x);
    else
        return ::lgamma(x);
}

template <class C> __device__ __forceinline__ C m_tanpi(C x)
{
    if constexpr (std::is_same_v<C, float>)
        return ::tanf(C(3.14159265358979323846) * x);
    else
        return ::tan(C(3.14159265358979323846) * x);
}

template <class C> __device__ __forceinline__ C m_sinpi(C x)
{
    if constexpr (std::is_same_v<C, float>)
        return ::sinpif(x);
    else
        return ::sinpi(x);
}

template <class C> __device__ C m_digamma(C x)
{
    const C pi = C(3.14159265358979323846);
    if (x == C(0))
        return ::signbit((double)x) ? C(INFINITY) : C(-INFINITY);
    C shift = C(0);
    if (x < C(0)) {
        if (x == ::floor((double)x))
            return C(NAN);
        shift = -pi / m_tanpi(x); // psi(x) = psi(1 - x) - pi / tan(pi x)
        x = C(1) - x;
    }
    C acc = C(0);
    while (x < C(10)) {
        acc -= C(1) / x;
        x += C(1);
    }
    const C r = C(1) / (x * x);
    const C series =
        r * (C(1) / 12 - r * (C(1) / 120 - r * (C(1) / 252 - r * (C(1) / 240 - r * (C(1) / 132 - r * C(691.0 / 32760))))));
    C lx;
    if constexpr (std::is_same_v<C, float>)
        lx = ::logf(x);
    else
        lx = ::log(x);
    return shift + acc + lx - C(0.5) / x - series;
}

template <class C> __device__ C m_trigamma(C x)
{
    const C pi = C(3.14159265358979323846);
    C sign = C(1), shift = C(0);
    if (x <= C(0)) {
        if (x == ::floor((double)x))
            return C(INFINITY);
        const C s = m_sinpi(x);
        shift = pi * pi / (s * s); // psi1(x) = pi^2 / sin^2(pi x) - psi1(1 - x)
        sign = C(-1);
        x = C(1) - x;
    }
    C acc = C(0);
    while (x < C(10)) {
        acc += C(1) / (x * x);
        x += C(1);
    }
    const C r = C(1) / (x * x);
    const C series =
        C(1) / x + r / 2 + r / x * (C(1) / 6 - r * (C(1) / 30 - r * (C(1) / 42 - r * (C(1) / 30 - r * C(5.0 / 66)))));
    return shift + sign * (acc + series);
}
