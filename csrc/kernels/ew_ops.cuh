// ew_ops.cuh: the elementwise kernels and op functors behind
// pcs_launch_unary/binary/ternary (kernels.h), one launcher a .cu file
// (ew_unary.cu, ew_binary.cu, ew_ternary.cu) so the three instantiate their
// op-by-dtype tables in parallel builds instead of one long compile.
//
// One generic kernel pair carries every op: a vectorized path for contiguous
// operands (each thread moves 4 packs of 16 bytes per operand, loaded before
// any math so that many loads are in flight; this is what reaches the
// device's bandwidth) and a strided path for any geometry the iteration
// core planned, indexing in 32 bits where the plan allows. Ops are small
// functors over the compute type (float for float16/bfloat16, as torch does), instantiated only for the dtypes where
// they make sense; everything else returns -1 and the host has already
// raised a readable error before getting here.
#pragma once

#include "ew_common.cuh"
#include "gamma_fns.cuh"
#include "ew_tiled.cuh"
#include "offsets.cuh"
#include "pdl.cuh"

using namespace pcs;

namespace {

constexpr int kThreads = 256;
constexpr int kUnroll = 4;

// ---------------------------------------------------------------------------
// Math in the compute type (float, double or complex)

#define PCS_MATH1(name, ffun, dfun)                                                  \
    template <class C> __device__ __forceinline__ C name(C x)                        \
    {                                                                                \
        if constexpr (is_cx<C>)                                                      \
            return cuda::std::dfun(x);                                               \
        else if constexpr (std::is_same_v<C, float>)                                 \
            return ::ffun(x);                                                        \
        else                                                                         \
            return ::dfun(x);                                                        \
    }
PCS_MATH1(m_exp, expf, exp)
PCS_MATH1(m_log, logf, log)
PCS_MATH1(m_sqrt, sqrtf, sqrt)
PCS_MATH1(m_sin, sinf, sin)
PCS_MATH1(m_cos, cosf, cos)
PCS_MATH1(m_tan, tanf, tan)
PCS_MATH1(m_sinh, sinhf, sinh)
PCS_MATH1(m_cosh, coshf, cosh)
PCS_MATH1(m_tanh, tanhf, tanh)
PCS_MATH1(m_asin, asinf, asin)
PCS_MATH1(m_acos, acosf, acos)
PCS_MATH1(m_atan, atanf, atan)
#undef PCS_MATH1

#define PCS_MATHR(name, ffun, dfun)                                                  \
    template <class C> __device__ __forceinline__ C name(C x)                        \
    {                                                                                \
        if constexpr (std::is_same_v<C, float>)                                      \
            return ::ffun(x);                                                        \
        else                                                                         \
            return ::dfun(x);                                                        \
    }
PCS_MATHR(m_exp2, exp2f, exp2)
PCS_MATHR(m_expm1, expm1f, expm1)
PCS_MATHR(m_log2, log2f, log2)
PCS_MATHR(m_log10, log10f, log10)
PCS_MATHR(m_log1p, log1pf, log1p)
PCS_MATHR(m_rsqrt, rsqrtf, rsqrt)
PCS_MATHR(m_floor, floorf, floor)
PCS_MATHR(m_ceil, ceilf, ceil)
PCS_MATHR(m_rint, rintf, rint)
PCS_MATHR(m_trunc, truncf, trunc)
PCS_MATHR(m_erf, erff, erf)
PCS_MATHR(m_erfc, erfcf, erfc)
PCS_MATHR(m_erfinv, erfinvf, erfinv)
#undef PCS_MATHR

template <class C> __device__ __forceinline__ C m_fmod(C a, C b)
{
    if constexpr (std::is_same_v<C, float>)
        return fmodf(a, b);
    else
        return fmod(a, b);
}

template <class C> __device__ __forceinline__ C m_pow(C a, C b)
{
    if constexpr (is_cx<C>)
        return cuda::std::pow(a, b);
    else if constexpr (std::is_same_v<C, float>)
        return powf(a, b);
    else if constexpr (std::is_same_v<C, double>)
        return pow(a, b);
    else { // integers: exact, by squaring; negative exponents as torch's CUDA
        if (b < 0)
            return a == 1 ? C(1) : a == -1 ? ((b & 1) ? C(-1) : C(1)) : C(0);
        C r = 1;
        while (b) {
            if (b & 1)
                r *= a;
            b >>= 1;
            a *= a;
        }
        return r;
    }
}

// ---------------------------------------------------------------------------
// Binary ops

constexpr bool bop_is_predicate(int op) { return op >= PCS_BOP_EQ && op <= PCS_BOP_LOGICAL_XOR; }

template <int OP, class T> constexpr bool bop_ok()
{
    if constexpr (is_cx<T>)
        return OP == PCS_BOP_ADD || OP == PCS_BOP_SUB || OP == PCS_BOP_ADD_ALPHA ||
               OP == PCS_BOP_MUL || OP == PCS_BOP_DIV || OP == PCS_BOP_EQ || OP == PCS_BOP_NE ||
               OP == PCS_BOP_POW;
    else if constexpr (is_flt<T>)
        return OP < PCS_BOP_BITWISE_AND || OP == PCS_BOP_GELU_BWD || OP == PCS_BOP_GELU_TANH_BWD;
    else if constexpr (std::is_same_v<T, bool>)
        return OP != PCS_BOP_DIV && OP != PCS_BOP_ATAN2 && OP != PCS_BOP_LSHIFT &&
               OP != PCS_BOP_RSHIFT && OP != PCS_BOP_SUB && OP < PCS_BOP_GELU_BWD;
    else
        return OP != PCS_BOP_DIV && OP != PCS_BOP_ATAN2 && OP < PCS_BOP_GELU_BWD;
}

template <int OP, class C> __device__ __forceinline__ auto bop(C a, C b, C alpha)
{
    if constexpr (OP == PCS_BOP_ADD) return C(a + b);
    else if constexpr (OP == PCS_BOP_SUB) return C(a - b);
    else if constexpr (OP == PCS_BOP_ADD_ALPHA) return C(a + alpha * b);
    else if constexpr (OP == PCS_BOP_MUL) return C(a * b);
    else if constexpr (OP == PCS_BOP_DIV) return C(a / b);
    else if constexpr (OP == PCS_BOP_DIV_TRUNC) {
        if constexpr (std::is_floating_point_v<C>)
            return m_trunc(a / b);
        else
            return b == 0 ? C(0) : C(a / b);
    } else if constexpr (OP == PCS_BOP_DIV_FLOOR) {
        if constexpr (std::is_floating_point_v<C>) {
            // torch's (and Python's) floor division: exact for representable quotients
            if (b == 0)
                return a / b;
            C mod = m_fmod(a, b);
            C div = (a - mod) / b;
            if (mod != 0 && ((b < 0) != (mod < 0)))
                div -= C(1);
            C fl;
            if (div != 0) {
                fl = m_floor(div);
                if (div - fl > C(0.5))
                    fl += C(1);
            } else {
                fl = copysign(C(0), a / b);
            }
            return fl;
        } else {
            if (b == 0)
                return C(0);
            C q = a / b;
            if ((a % b != 0) && ((a < 0) != (b < 0)))
                q -= 1;
            return q;
        }
    } else if constexpr (OP == PCS_BOP_REMAINDER) {
        if constexpr (std::is_floating_point_v<C>) {
            C r = m_fmod(a, b);
            if (r != 0 && ((b < 0) != (r < 0)))
                r += b;
            return r;
        } else {
            if (b == 0)
                return C(0);
            C r = a % b;
            if (r != 0 && ((r < 0) != (b < 0)))
                r += b;
            return r;
        }
    } else if constexpr (OP == PCS_BOP_POW) return m_pow(a, b);
    else if constexpr (OP == PCS_BOP_MAXIMUM) return is_nan(a) ? a : is_nan(b) ? b : (a > b ? a : b);
    else if constexpr (OP == PCS_BOP_MINIMUM) return is_nan(a) ? a : is_nan(b) ? b : (a < b ? a : b);
    else if constexpr (OP == PCS_BOP_ATAN2) {
        if constexpr (std::is_same_v<C, float>) return atan2f(a, b);
        else return C(atan2((double)a, (double)b));
    }
    else if constexpr (OP == PCS_BOP_THRESHOLD_BWD) return b <= C(0) ? C(0) : a;
    else if constexpr (OP == PCS_BOP_GELU_BWD) {
        // g * (Phi(x) + x phi(x)), as torch's GeluBackward
        const C cdf = C(0.5) * (C(1) + m_erf(b * C(0.70710678118654752440)));
        const C pdf = m_exp(C(-0.5) * b * b) * C(0.39894228040143267794);
        return C(a * (cdf + b * pdf));
    } else if constexpr (OP == PCS_BOP_GELU_TANH_BWD) {
        // torch's tanh form: 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 c x^2)
        const C k = C(0.79788456080286535588), c = C(0.044715);
        const C x2 = b * b, t = m_tanh(k * (b + c * x2 * b));
        const C left = C(0.5) * b, right = C(1) + t;
        return C(a * (C(0.5) * right + left * (C(1) - t * t) * (k * (C(1) + C(3) * c * x2))));
    }
    else if constexpr (OP == PCS_BOP_EQ) return a == b;
    else if constexpr (OP == PCS_BOP_NE) return a != b;
    else if constexpr (OP == PCS_BOP_LT) return a < b;
    else if constexpr (OP == PCS_BOP_LE) return a <= b;
    else if constexpr (OP == PCS_BOP_GT) return a > b;
    else if constexpr (OP == PCS_BOP_GE) return a >= b;
    else if constexpr (OP == PCS_BOP_LOGICAL_AND) return (a != C(0)) && (b != C(0));
    else if constexpr (OP == PCS_BOP_LOGICAL_OR) return (a != C(0)) || (b != C(0));
    else if constexpr (OP == PCS_BOP_LOGICAL_XOR) return (a != C(0)) != (b != C(0));
    else if constexpr (OP == PCS_BOP_BITWISE_AND) return C(a & b);
    else if constexpr (OP == PCS_BOP_BITWISE_OR) return C(a | b);
    else if constexpr (OP == PCS_BOP_BITWISE_XOR) return C(a ^ b);
    else if constexpr (OP == PCS_BOP_LSHIFT) {
        constexpr int bits = sizeof(C) * 8;
        return (b < 0 || b >= bits) ? C(0) : C((typename std::make_unsigned<C>::type)a << b);
    } else { // RSHIFT
        constexpr int bits = sizeof(C) * 8;
        return (b < 0 || b >= bits) ? C(a < 0 ? -1 : 0) : C(a >> b);
    }
}

// Operand loading with "scalar instead of tensor": a NULL pointer means the
// functor's own value is used (uniform branch, costs nothing measurable).
template <int OP, class T> struct BinF {
    using C = compute_t<T>;
    using Out = std::conditional_t<bop_is_predicate(OP), bool, T>;
    C sa, sb, alpha;
    bool a_scalar, b_scalar;
    __device__ __forceinline__ Out operator()(T a, T b, char) const
    {
        C x = a_scalar ? sa : to_c<C>(a);
        C y = b_scalar ? sb : to_c<C>(b);
        return from_c<Out>(bop<OP>(x, y, alpha));
    }
};

// ---------------------------------------------------------------------------
// Unary ops

constexpr bool uop_is_predicate(int op) { return op >= PCS_UOP_ISNAN; }

template <int OP, class T> constexpr bool uop_ok()
{
    if constexpr (is_cx<T>)
        return OP == PCS_UOP_NEG || OP == PCS_UOP_ABS || OP == PCS_UOP_EXP || OP == PCS_UOP_LOG ||
               OP == PCS_UOP_SQRT || OP == PCS_UOP_SIN || OP == PCS_UOP_COS || OP == PCS_UOP_TAN ||
               OP == PCS_UOP_SINH || OP == PCS_UOP_COSH || OP == PCS_UOP_TANH ||
               OP == PCS_UOP_SQUARE || OP == PCS_UOP_RECIPROCAL || OP == PCS_UOP_SIGMOID ||
               OP >= PCS_UOP_ISNAN;
    else if constexpr (is_flt<T>)
        return OP != PCS_UOP_BITWISE_NOT;
    else
        return OP == PCS_UOP_NEG || OP == PCS_UOP_ABS || OP == PCS_UOP_SIGN ||
               OP == PCS_UOP_RELU || OP == PCS_UOP_FLOOR || OP == PCS_UOP_CEIL ||
               OP == PCS_UOP_ROUND || OP == PCS_UOP_TRUNC || OP == PCS_UOP_SQUARE ||
               OP == PCS_UOP_NAN_TO_NUM || OP == PCS_UOP_BITWISE_NOT || OP >= PCS_UOP_ISNAN;
}

template <int OP, class T> struct UnOut {
    using type = std::conditional_t<uop_is_predicate(OP), bool,
                                    std::conditional_t<OP == PCS_UOP_ABS, typename real_of<T>::type, T>>;
};

template <int OP, class T, class C> __device__ __forceinline__ auto uop(C x, const C *p)
{
    constexpr bool flt = std::is_floating_point_v<C>;
    if constexpr (OP == PCS_UOP_NEG) return C(-x);
    else if constexpr (OP == PCS_UOP_ABS) {
        if constexpr (is_cx<C>) return cuda::std::abs(x);
        else return x < C(0) ? C(-x) : x;
    }
    else if constexpr (OP == PCS_UOP_SIGN) return C((C(0) < x) - (x < C(0)));
    else if constexpr (OP == PCS_UOP_EXP) return m_exp(x);
    else if constexpr (OP == PCS_UOP_EXP2) return m_exp2(x);
    else if constexpr (OP == PCS_UOP_EXPM1) return m_expm1(x);
    else if constexpr (OP == PCS_UOP_LOG) return m_log(x);
    else if constexpr (OP == PCS_UOP_LOG2) return m_log2(x);
    else if constexpr (OP == PCS_UOP_LOG10) return m_log10(x);
    else if constexpr (OP == PCS_UOP_LOG1P) return m_log1p(x);
    else if constexpr (OP == PCS_UOP_SQRT) return m_sqrt(x);
    else if constexpr (OP == PCS_UOP_RSQRT) return m_rsqrt(x);
    else if constexpr (OP == PCS_UOP_SIN) return m_sin(x);
    else if constexpr (OP == PCS_UOP_COS) return m_cos(x);
    else if constexpr (OP == PCS_UOP_TAN) return m_tan(x);
    else if constexpr (OP == PCS_UOP_ASIN) return m_asin(x);
    else if constexpr (OP == PCS_UOP_ACOS) return m_acos(x);
    else if constexpr (OP == PCS_UOP_ATAN) return m_atan(x);
    else if constexpr (OP == PCS_UOP_SINH) return m_sinh(x);
    else if constexpr (OP == PCS_UOP_COSH) return m_cosh(x);
    else if constexpr (OP == PCS_UOP_TANH) return m_tanh(x);
    else if constexpr (OP == PCS_UOP_SIGMOID) return C(C(1) / (C(1) + m_exp(C(-x))));
    else if constexpr (OP == PCS_UOP_RELU) return is_nan(x) ? x : (x > C(0) ? x : C(0));
    else if constexpr (OP == PCS_UOP_GELU) return C(C(0.5) * x * (C(1) + m_erf(x * C(0.70710678118654752440))));
    else if constexpr (OP == PCS_UOP_GELU_TANH) {
        const C k = C(0.79788456080286535588), c = C(0.044715);
        return C(C(0.5) * x * (C(1) + m_tanh(k * (x + c * x * x * x))));
    }
    else if constexpr (OP == PCS_UOP_FLOOR) { if constexpr (flt) return m_floor(x); else return x; }
    else if constexpr (OP == PCS_UOP_CEIL) { if constexpr (flt) return m_ceil(x); else return x; }
    else if constexpr (OP == PCS_UOP_ROUND) { if constexpr (flt) return m_rint(x); else return x; }
    else if constexpr (OP == PCS_UOP_TRUNC) { if constexpr (flt) return m_trunc(x); else return x; }
    else if constexpr (OP == PCS_UOP_FRAC) return C(x - m_trunc(x));
    else if constexpr (OP == PCS_UOP_RECIPROCAL) return C(C(1) / x);
    else if constexpr (OP == PCS_UOP_SQUARE) return C(x * x);
    else if constexpr (OP == PCS_UOP_NAN_TO_NUM) {
        if constexpr (flt) {
            if (x != x) return p[0];
            if (isinf(x)) return x > 0 ? p[1] : p[2];
        }
        return x;
    }
    else if constexpr (OP == PCS_UOP_ERF) return m_erf(x);
    else if constexpr (OP == PCS_UOP_ERFC) return m_erfc(x);
    else if constexpr (OP == PCS_UOP_ERFINV) return m_erfinv(x);
    else if constexpr (OP == PCS_UOP_LGAMMA) return m_lgamma(x);
    else if constexpr (OP == PCS_UOP_DIGAMMA) return m_digamma(x);
    else if constexpr (OP == PCS_UOP_TRIGAMMA) return m_trigamma(x);
    else if constexpr (OP == PCS_UOP_BITWISE_NOT) {
        if constexpr (std::is_same_v<T, bool>) return C(!x);
        else return C(~x);
    }
    else if constexpr (OP == PCS_UOP_ISNAN) return is_nan(x);
    else if constexpr (OP == PCS_UOP_ISINF) {
        if constexpr (is_cx<C>) return isinf(x.real()) || isinf(x.imag());
        else if constexpr (flt) return (bool)isinf(x);
        else return false;
    }
    else if constexpr (OP == PCS_UOP_ISFINITE) {
        if constexpr (is_cx<C>) return isfinite(x.real()) && isfinite(x.imag());
        else if constexpr (flt) return (bool)isfinite(x);
        else return true;
    }
    else return x == C(0); // LOGICAL_NOT
}

template <int OP, class T> struct UnF {
    using C = compute_t<T>;
    using Out = typename UnOut<OP, T>::type;
    C p[3];
    __device__ __forceinline__ Out operator()(T a, char, char) const
    {
        return from_c<Out>(uop<OP, T>(to_c<C>(a), p));
    }
};

// ---------------------------------------------------------------------------
// Ternary ops

template <int OP, class T> constexpr bool top_ok()
{
    if constexpr (OP == PCS_TOP_LERP) return is_flt<T> || is_cx<T>;
    else if constexpr (OP == PCS_TOP_CLAMP) return !is_cx<T>;
    else return true;
}

template <int OP, class T> struct TerF {
    using C = compute_t<T>;
    using Out = T;
    using A = std::conditional_t<OP == PCS_TOP_WHERE, bool, T>;
    C s[3];
    bool is_s[3];
    __device__ __forceinline__ Out operator()(A a, T b, T c) const
    {
        C y = is_s[1] ? s[1] : to_c<C>(b);
        C z = is_s[2] ? s[2] : to_c<C>(c);
        if constexpr (OP == PCS_TOP_WHERE) {
            bool cond = is_s[0] ? s[0] != C(0) : a;
            return from_c<T>(cond ? y : z);
        } else {
            C x = is_s[0] ? s[0] : to_c<C>(a);
            if constexpr (OP == PCS_TOP_CLAMP) {
                C lo = bop<PCS_BOP_MAXIMUM>(x, y, y);
                return from_c<T>(bop<PCS_BOP_MINIMUM>(lo, z, z));
            } else { // torch's lerp: two formulas keep both ends exact
                C w = z;
                C d = y - x;
                bool small;
                if constexpr (is_cx<C>) small = cuda::std::abs(w) < 0.5;
                else small = w < C(0.5);
                return from_c<T>(small ? C(x + w * d) : C(y - d * (C(1) - w)));
            }
        }
    }
};

// ---------------------------------------------------------------------------
// The two generic kernels

template <class F, class A, class B, class Cc> struct Args {
    typename F::Out *out;
    const A *a;
    const B *b;
    const Cc *c;
    F f;
};

// Every tensor operand contiguous, all pointers aligned to a whole pack.
template <int N, class F, class A, class B, class Cc>
__global__ void __launch_bounds__(kThreads) ew_vector(Args<F, A, B, Cc> p, int64_t n)
{
    pdl_wait(); // launched early (pdl.cuh): nothing global before this
    using Out = typename F::Out;
    const int64_t tile = (int64_t)blockIdx.x * (kThreads * N * kUnroll);
    if (tile + kThreads * N * kUnroll <= n) {
        Pack<A, N> ra[kUnroll];
        Pack<B, N> rb[kUnroll];
        Pack<Cc, N> rc[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; u++) {
            int64_t pi = tile / N + u * kThreads + threadIdx.x;
            if (p.a) ra[u] = reinterpret_cast<const Pack<A, N> *>(p.a)[pi];
            if (p.b) rb[u] = reinterpret_cast<const Pack<B, N> *>(p.b)[pi];
            if (p.c) rc[u] = reinterpret_cast<const Pack<Cc, N> *>(p.c)[pi];
        }
#pragma unroll
        for (int u = 0; u < kUnroll; u++) {
            Pack<Out, N> ro;
#pragma unroll
            for (int k = 0; k < N; k++)
                ro.v[k] = p.f(ra[u].v[k], rb[u].v[k], rc[u].v[k]);
            int64_t pi = tile / N + u * kThreads + threadIdx.x;
            reinterpret_cast<Pack<Out, N> *>(p.out)[pi] = ro;
        }
    } else {
        for (int64_t i = tile + threadIdx.x; i < n; i += kThreads) {
            A x{};
            B y{};
            Cc z{};
            if (p.a) x = p.a[i];
            if (p.b) y = p.b[i];
            if (p.c) z = p.c[i];
            p.out[i] = p.f(x, y, z);
        }
    }
}

// Broadcast rows: the plan is [rows..., cols], with up to kRowDims dims
// of rows (or one dim, rows = 1), and every operand walks cols with stride
// 1 or 0, so a + row, a + column, a + v.expand(...) and the per-channel
// broadcasts of an image batch (x + b.view(1, C, 1, 1), x * m[N, 1, H, W])
// move whole 16-byte packs like ew_vector: a stride-1 operand loads a pack,
// a stride-0 one loads one element and repeats it. A pack's row splits
// into its row dims with one multiply-shift division each, fixed in the
// unrolled loop (such image broadcasts ran at 0.6x torch element by
// element). The host checks that cols is a whole number of packs and that
// every stride-1 operand's rows start on a pack boundary.
constexpr int kRowDims = 4;
struct RowGeom {
    FastDiv packs_per_row;
    int nrow;                                  // row dims (0 to kRowDims)
    FastDiv rows[kRowDims];                    // their sizes, fastest first
    int32_t outer[kRowDims][PCS_EW_OPERANDS];  // their strides in elements
    bool dense[PCS_EW_OPERANDS];               // cols stride 1 (else 0)
};

template <int N, class T>
__device__ __forceinline__ Pack<T, N> load_row(const T *base, const RowGeom &g, int k, int32_t row_off,
                                               uint32_t col)
{
    Pack<T, N> r;
    const T *q = base + row_off;
    if (g.dense[k]) {
        r = *reinterpret_cast<const Pack<T, N> *>(q + col);
    } else {
        T v = *q;
#pragma unroll
        for (int j = 0; j < N; j++)
            r.v[j] = v;
    }
    return r;
}

template <int N, class F, class A, class B, class Cc>
__global__ void __launch_bounds__(kThreads) ew_rows(Args<F, A, B, Cc> p, uint32_t npacks, RowGeom g)
{
    pdl_wait(); // launched early (pdl.cuh): nothing global before this
    using Out = typename F::Out;
    constexpr uint32_t kTile = kThreads * kUnroll;
    for (uint32_t base = blockIdx.x * kTile; base < npacks; base += gridDim.x * kTile) {
        Pack<A, N> ra[kUnroll];
        Pack<B, N> rb[kUnroll];
        Pack<Cc, N> rc[kUnroll];
        uint32_t col[kUnroll];
        int32_t out_off[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; u++) {
            uint32_t i = base + u * kThreads + threadIdx.x;
            if (i >= npacks)
                continue;
            uint32_t row = g.packs_per_row.div(i);
            col[u] = (i - row * g.packs_per_row.d) * N;
            int32_t off[PCS_EW_OPERANDS] = {};
#pragma unroll
            for (int d = 0; d < kRowDims; d++) {
                if (d == g.nrow)
                    break;
                uint32_t q = d + 1 < g.nrow ? g.rows[d].div(row) : 0;
                int32_t c = (int32_t)(row - q * g.rows[d].d);
#pragma unroll
                for (int k = 0; k < PCS_EW_OPERANDS; k++)
                    off[k] += c * g.outer[d][k];
                row = q;
            }
            out_off[u] = off[0];
            if (p.a) ra[u] = load_row<N>(p.a, g, 1, off[1], col[u]);
            if (p.b) rb[u] = load_row<N>(p.b, g, 2, off[2], col[u]);
            if (p.c) rc[u] = load_row<N>(p.c, g, 3, off[3], col[u]);
        }
#pragma unroll
        for (int u = 0; u < kUnroll; u++) {
            if (base + u * kThreads + threadIdx.x >= npacks)
                continue;
            Pack<Out, N> ro;
#pragma unroll
            for (int k = 0; k < N; k++)
                ro.v[k] = p.f(ra[u].v[k], rb[u].v[k], rc[u].v[k]);
            *reinterpret_cast<Pack<Out, N> *>(p.out + out_off[u] + col[u]) = ro;
        }
    }
}

// Can the plan run as ew_rows with packs of N? Fills g and the pack count.
template <int N, class F, class A, class B, class Cc>
bool rows_plan(const Args<F, A, B, Cc> &p, const pcs_ew_geom &geom, RowGeom *g, uint32_t *npacks)
{
    if (!geom.index32 || geom.ndim < 1 || geom.ndim > kRowDims + 1)
        return false;
    const int inner = geom.ndim - 1;
    int64_t cols = geom.sizes[inner], rows = 1;
    for (int d = 0; d < inner; d++)
        rows *= geom.sizes[d];
    if (cols % N != 0 || rows * (cols / N) > INT32_MAX)
        return false;
    const void *ptr[PCS_EW_OPERANDS] = {p.out, p.a, p.b, p.c};
    const int size[PCS_EW_OPERANDS] = {(int)sizeof(typename F::Out), (int)sizeof(A), (int)sizeof(B),
                                       (int)sizeof(Cc)};
    g->nrow = inner;
    for (int d = 0; d < inner; d++) // fastest row dim first
        g->rows[d].init((uint32_t)geom.sizes[inner - 1 - d]);
    bool any_bcast = false;
    for (int k = 0; k < PCS_EW_OPERANDS; k++) {
        const int64_t si = geom.strides[k][inner];
        bool whole_packs = true;
        for (int d = 0; d < inner; d++) {
            const int64_t so = geom.strides[k][inner - 1 - d];
            g->outer[d][k] = (int32_t)so;
            whole_packs = whole_packs && so % N == 0;
        }
        g->dense[k] = si == 1;
        if (!ptr[k])
            continue;
        if (si != 0 && si != 1)
            return false;
        if (k == 0 && si != 1)
            return false;
        if (si == 0) {
            any_bcast = true;
            continue;
        }
        if ((uintptr_t)ptr[k] % (N * size[k]) != 0 || !whole_packs)
            return false;
    }
    if (!any_bcast && geom.ndim == 1)
        return false; // plain contiguous: ew_vector's case
    g->packs_per_row.init((uint32_t)(cols / N));
    *npacks = (uint32_t)(rows * (cols / N));
    return true;
}

// Any geometry the core planned: each thread takes kUnroll elements a
// block-wide tile apart, computes their offsets (Off32 or Off64, see
// offsets.cuh) and issues every load before any math, as ew_vector does.
// Narrow types (1 and 2 bytes) take twice the elements a thread: a 2-byte
// load per element leaves too few bytes in flight to cover the memory
// latency, which held the stepped and sliced float16 layouts below torch.
template <class F, class A, class B, class Cc> __host__ __device__ constexpr int strided_unroll()
{
    constexpr size_t w = sizeof(A) > sizeof(B) ? sizeof(A) : sizeof(B);
    constexpr size_t w2 = w > sizeof(Cc) ? w : sizeof(Cc);
    constexpr size_t w3 = w2 > sizeof(typename F::Out) ? w2 : sizeof(typename F::Out);
    return w3 <= 2 ? 2 * kUnroll : kUnroll;
}

// UNR: plans of up to kUnrolledDims dims unroll the index-to-offset loop
// (offsets.cuh's get_unrolled: each dim's divisor and strides at fixed
// parameter addresses). The rolled loop's indexed parameter loads held a
// cropped image's relu (x[..., 1:-1, 1:-1]) at 0.79x torch on the H200,
// 1.35x unrolled; deeper plans keep the rolled loop, which is one more
// instantiation less of every op and dtype to build.
constexpr int kUnrolledDims = 4;

template <class Off, class F, class A, class B, class Cc, bool UNR>
__global__ void __launch_bounds__(kThreads)
ew_strided(Args<F, A, B, Cc> p, typename Off::index_t n, Off g)
{
    pdl_wait(); // launched early (pdl.cuh): nothing global before this
    using I = typename Off::index_t;
    constexpr int U = strided_unroll<F, A, B, Cc>();
    constexpr I kTile = kThreads * U;
    for (I base = (I)blockIdx.x * kTile; base < n; base += (I)gridDim.x * kTile) {
        int64_t off[U][PCS_EW_OPERANDS];
        A x[U];
        B y[U];
        Cc z[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            I i = base + u * kThreads + threadIdx.x;
            x[u] = A{};
            y[u] = B{};
            z[u] = Cc{};
            if (i < n) {
                if constexpr (UNR)
                    g.template get_unrolled<kUnrolledDims>(i, off[u]);
                else
                    g.get(i, off[u]);
                if (p.a) x[u] = p.a[off[u][1]];
                if (p.b) y[u] = p.b[off[u][2]];
                if (p.c) z[u] = p.c[off[u][3]];
            }
        }
#pragma unroll
        for (int u = 0; u < U; u++)
            if (base + u * kThreads + threadIdx.x < n)
                p.out[off[u][0]] = p.f(x[u], y[u], z[u]);
    }
}

// Rows at any alignment (a[:, 1:-1] + b[:, 1:-1], contiguous operands that
// start mid-pack, stepped inputs a[:, ::2]): a plan of at most 2 dims whose
// result walks the inner dim with stride 1 and whose inputs walk it with
// any stride >= 0 (0: broadcast along it). Rows go along blockIdx.y and
// columns along x, so an element's offset is its row's base plus its
// column times the stride: no division, where ew_strided divides for every
// element (which held 2-byte sliced operands at 0.83x torch). U elements a
// thread, a block width apart, so every access is as coalesced as the
// strides allow.
struct DenseRows {
    int64_t rows;
    uint32_t cols;
    int64_t outer[PCS_EW_OPERANDS]; // row strides in elements
    uint32_t dense[PCS_EW_OPERANDS]; // the stride along the row (1 for the result)
};

template <int U, class F, class A, class B, class Cc>
__global__ void __launch_bounds__(kThreads) ew_dense_rows(Args<F, A, B, Cc> p, DenseRows g)
{
    pdl_wait(); // launched early (pdl.cuh): nothing global before this
    using Out = typename F::Out;
    for (int64_t r = blockIdx.y; r < g.rows; r += gridDim.y) {
        Out *o = p.out + r * g.outer[0];
        const A *a = p.a ? p.a + r * g.outer[1] : nullptr;
        const B *b = p.b ? p.b + r * g.outer[2] : nullptr;
        const Cc *c = p.c ? p.c + r * g.outer[3] : nullptr;
        for (uint32_t c0 = blockIdx.x * (kThreads * U) + threadIdx.x; c0 < g.cols;
             c0 += gridDim.x * (kThreads * U)) {
            A x[U];
            B y[U];
            Cc z[U];
#pragma unroll
            for (int u = 0; u < U; u++) {
                const uint32_t j = c0 + u * kThreads;
                x[u] = A{};
                y[u] = B{};
                z[u] = Cc{};
                if (j < g.cols) {
                    if (a) x[u] = a[j * g.dense[1]];
                    if (b) y[u] = b[j * g.dense[2]];
                    if (c) z[u] = c[j * g.dense[3]];
                }
            }
#pragma unroll
            for (int u = 0; u < U; u++) {
                const uint32_t j = c0 + u * kThreads;
                if (j < g.cols)
                    o[j] = p.f(x[u], y[u], z[u]);
            }
        }
    }
}

// Can the plan (NULL: n contiguous elements) run as ew_dense_rows? Rows
// shorter than a block's width are left to ew_strided.
template <class F, class A, class B, class Cc>
bool dense_rows_plan(const Args<F, A, B, Cc> &p, const pcs_ew_geom *geom, int64_t n, DenseRows *g)
{
    const void *ptr[PCS_EW_OPERANDS] = {p.out, p.a, p.b, p.c};
    int64_t cols = n, step = 1; // step: the largest input stride along the row
    g->rows = 1;
    for (int k = 0; k < PCS_EW_OPERANDS; k++) {
        g->outer[k] = 0;
        g->dense[k] = 1;
    }
    if (geom) {
        if (geom->ndim < 1 || geom->ndim > 2)
            return false;
        const int inner = geom->ndim - 1;
        cols = geom->sizes[inner];
        g->rows = geom->ndim == 2 ? geom->sizes[0] : 1;
        for (int k = 0; k < PCS_EW_OPERANDS; k++) {
            const int64_t si = geom->strides[k][inner];
            if (ptr[k] && (si < 0 || si > 64 || (k == 0 && si != 1)))
                return false;
            g->dense[k] = ptr[k] ? (uint32_t)si : 0;
            g->outer[k] = geom->ndim == 2 ? geom->strides[k][0] : 0;
            step = ptr[k] && si > step ? si : step;
        }
    }
    // column * stride stays in 32 bits (and the loop's columns in 31)
    if (cols < 2 * kThreads || cols > INT32_MAX / 2 || cols * step > UINT32_MAX)
        return false;
    g->cols = (uint32_t)cols;
    return true;
}

template <class P> inline bool aligned(const P *ptr, int bytes)
{
    return ((uintptr_t)ptr % bytes) == 0;
}

template <class F, class A, class B, class Cc>
int launch(const Args<F, A, B, Cc> &p, int64_t n, const pcs_ew_geom *geom, cudaStream_t s)
{
    if (n <= 0)
        return 0;
    constexpr int N = 16 / sizeof(A) > 0 ? 16 / sizeof(A) : 1;
    constexpr int NB = N * sizeof(A);
    using Out = typename F::Out;
    if (!geom && aligned(p.out, N * (int)sizeof(Out)) && aligned(p.a, NB) &&
        aligned(p.b, N * (int)sizeof(B)) && aligned(p.c, N * (int)sizeof(Cc))) {
        int64_t blocks = (n + kThreads * N * kUnroll - 1) / (kThreads * N * kUnroll);
        launch_kernel_pdl(ew_vector<N, F, A, B, Cc>, (unsigned)blocks, kThreads, s, p, n);
        return 0;
    }
    if constexpr (std::is_same_v<A, B> && std::is_same_v<Cc, char>) { // binary ops
        TiledGeom tg;
        if (geom && tiled_plan(*geom, p.a, p.b, &tg)) {
            constexpr int TILE = ew_tile_of<A>;
            int64_t tiles = ((tg.ni + TILE - 1) / TILE) * ((tg.nj + TILE - 1) / TILE) * tg.nb;
            launch_kernel_pdl(ew_tiled<Args<F, A, B, Cc>, A>, (unsigned)(tiles < 65536 ? tiles : 65536),
                          dim3(TILE, 256 / TILE), s, p, tg);
            return 0;
        }
    }
    RowGeom rg;
    uint32_t npacks;
    if (geom && rows_plan<N>(p, *geom, &rg, &npacks)) {
        int64_t blocks = ((int64_t)npacks + kThreads * kUnroll - 1) / (kThreads * kUnroll);
        int64_t cap = (int64_t)sm_count() * 32;
        launch_kernel_pdl(ew_rows<N, F, A, B, Cc>, (unsigned)(blocks < cap ? blocks : cap), kThreads, s,
                      p, npacks, rg);
        return 0;
    }
    constexpr int U = strided_unroll<F, A, B, Cc>();
    DenseRows dr;
    if (dense_rows_plan(p, geom, n, &dr)) {
        int64_t bx = ((int64_t)dr.cols + kThreads * U - 1) / (kThreads * U);
        int64_t cap = (int64_t)sm_count() * 32;
        dim3 grid((unsigned)(bx < cap ? bx : cap), (unsigned)(dr.rows < 65535 ? dr.rows : 65535));
        launch_kernel_pdl(ew_dense_rows<U, F, A, B, Cc>, grid, kThreads, s, p, dr);
        return 0;
    }
    pcs_ew_geom flat;
    if (!geom) { // contiguous but misaligned: one strided dim
        flat = flat_geom(n);
        geom = &flat;
    }
    // Enough blocks for a few waves; the grid-stride loop covers the rest.
    int64_t blocks = (n + kThreads * U - 1) / (kThreads * U);
    int64_t cap = (int64_t)sm_count() * 32;
    unsigned grid = (unsigned)(blocks < cap ? blocks : cap);
    if (geom->index32 && n <= INT32_MAX && geom->ndim <= kUnrolledDims)
        launch_kernel_pdl(ew_strided<Off32<PCS_EW_OPERANDS>, F, A, B, Cc, true>, grid, kThreads, s, p, (uint32_t)n,
                      make_off32<PCS_EW_OPERANDS>(*geom));
    else if (geom->index32 && n <= INT32_MAX)
        launch_kernel_pdl(ew_strided<Off32<PCS_EW_OPERANDS>, F, A, B, Cc, false>, grid, kThreads, s, p, (uint32_t)n,
                      make_off32<PCS_EW_OPERANDS>(*geom));
    else
        launch_kernel_pdl(ew_strided<Off64<PCS_EW_OPERANDS>, F, A, B, Cc, false>, grid, kThreads, s, p, n,
                      make_off64<PCS_EW_OPERANDS>(*geom));
    return 0;
}

// Calls f(std::integral_constant<int, op>) for op in [0, COUNT).
template <int I, int COUNT, class F> inline int dispatch_op(int op, F &&f)
{
    if constexpr (I >= COUNT)
        return -1;
    else
        return op == I ? f(std::integral_constant<int, I>{}) : dispatch_op<I + 1, COUNT>(op, f);
}

} // namespace
