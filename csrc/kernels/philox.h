/* philox.h: Philox4x32-10 and the value transforms built on it, shared by the
 * host (gcc, C11) and the device (nvcc), so that a seed gives the same numbers
 * on the CPU and on the GPU.
 *
 * The numbering scheme, which every fill follows on both sides:
 *   - a generator state is (seed, offset); offset counts Philox blocks;
 *   - one block is philox(key = seed, counter = offset + j) = 4 uint32 words;
 *   - element i of a fill uses block j = i / per_block and lane i % per_block,
 *     where per_block is 4 for 16/32-bit results and 2 for 64-bit ones
 *     (float64 takes two words per number, as Box-Muller does per pair);
 *   - a fill of n elements advances the offset by ceil(n / per_block).
 * The result depends only on (seed, offset, i), never on a launch shape, and
 * consecutive fills whose sizes are multiples of per_block concatenate:
 * rand(8) then rand(8) equals rand(16).
 *
 * Floating point transforms are written with explicit fma so that no compiler
 * contraction makes the two sides differ: uniform results are bit-identical,
 * and so are exponential ones (the log below is shared); normal ones also go
 * through sin/cos and a square root, whose last bits differ between libm and
 * the GPU's approximate instructions (a few ulp). */
#ifndef PCS_PHILOX_H
#define PCS_PHILOX_H

#include <stdint.h>
#ifndef __CUDACC__
#include <math.h>
#endif

#ifdef __CUDACC__
#define PCS_HD static __host__ __device__ __forceinline__
#else
#define PCS_HD static inline
#endif

/* What a fill computes (random.c picks it, random.cu and random.c run it). */
typedef enum {
    PCS_RNG_UNIFORM = 0, /* a + u * (b - a), u in [0, 1) */
    PCS_RNG_NORMAL,      /* a + b * z, z standard normal (Box-Muller) */
    PCS_RNG_BERNOULLI,   /* u < a ? 1 : 0 */
    PCS_RNG_EXPONENTIAL, /* -log(u') / a, u' in (0, 1] */
    PCS_RNG_RANDINT,     /* low + bits % range */
} pcs_rng_kind;

typedef struct pcs_rng_params {
    uint64_t seed, offset;
    int kind;      /* pcs_rng_kind */
    int wide;      /* 1: 2 numbers per block computed in double / 64 bits */
    int ubits;     /* UNIFORM in float: random bits, the result type's
                    * significand (24, 11 half, 8 bfloat16) so that rounding
                    * to it can never reach 1.0 */
    double a, b;   /* kind parameters */
    int64_t low;    /* RANDINT: the smallest value */
    uint64_t range; /* RANDINT: high - low (> 0) */
} pcs_rng_params;

typedef struct {
    uint32_t v[4];
} pcs_u32x4;

PCS_HD uint32_t pcs_mulhilo32(uint32_t a, uint32_t b, uint32_t *hi)
{
#ifdef __CUDA_ARCH__
    /* 32-bit halves, not a 64-bit product: from the latter nvcc keeps a
     * zero high-word add per multiply (20 integer instructions per block in
     * a fill that is bound by integer issue); same value either way. */
    *hi = __umulhi(a, b);
    return a * b;
#else
    uint64_t p = (uint64_t)a * b;
    *hi = (uint32_t)(p >> 32);
    return (uint32_t)p;
#endif
}

/* Philox4x32 with 10 rounds (Salmon et al., SC'11), the constants of the
 * paper and of curand. Counter = (lo32(block), hi32(block), 0, 0). */
PCS_HD pcs_u32x4 pcs_philox(uint64_t seed, uint64_t block)
{
    uint32_t c0 = (uint32_t)block, c1 = (uint32_t)(block >> 32), c2 = 0, c3 = 0;
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    for (int r = 0; r < 10; r++) {
        uint32_t hi0, hi1;
        uint32_t lo0 = pcs_mulhilo32(0xD2511F53u, c0, &hi0);
        uint32_t lo1 = pcs_mulhilo32(0xCD9E8D57u, c2, &hi1);
        c0 = hi1 ^ c1 ^ k0;
        c1 = lo1;
        c2 = hi0 ^ c3 ^ k1;
        c3 = lo0;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    pcs_u32x4 r = {{c0, c1, c2, c3}};
    return r;
}

/* sin and cos of pi * x for x in [-1, 1): the Box-Muller angle. On the GPU
 * the hardware unit (__sincosf: absolute error below 4e-7 on [-pi, pi], one
 * instruction each instead of a polynomial; normal_ is bound by arithmetic
 * otherwise); the host computes in double. Results then differ by at most
 * 4e-7 * radius (about 2.3e-6 at the largest radius). The radius does not
 * use __logf: near 1 it could turn -2 log(u) negative (pcs_log_posf below). */
PCS_HD void pcs_sincospif(float x, float *s, float *c)
{
#ifdef __CUDA_ARCH__
    __sincosf(3.14159265358979323846f * x, s, c);
#else
    double t = 3.14159265358979323846 * (double)x;
    *s = (float)sin(t);
    *c = (float)cos(t);
#endif
}

PCS_HD void pcs_sincospi(double x, double *s, double *c)
{
#ifdef __CUDA_ARCH__
    sincospi(x, s, c);
#else
    *s = sin(3.14159265358979323846 * x);
    *c = cos(3.14159265358979323846 * x);
#endif
}

/* Natural log of a positive normal float, the same code on both sides (so
 * normal and exponential fills agree bit for bit in their radius): v = 2^n m
 * with m in [2/3, 4/3), log v = n ln 2 + log1p(f), f = m - 1 exact, and
 * log1p(f) = f + f^2 q(f) with q a degree-8 polynomial fitted for relative
 * error (4.5e-9 with exact coefficients). Checked on every value the fills
 * produce (the 2^23 values of 1 - u): within 0.91 ulp of the true log, never
 * positive. Cheaper on the GPU than logf, which spends a quarter of its
 * instructions on zero, subnormal, infinite and NaN inputs that never occur
 * here, and an int-to-float conversion that runs at a quarter of the rate. */
PCS_HD float pcs_as_float(uint32_t u)
{
    union {
        uint32_t u;
        float f;
    } b;
    b.u = u;
    return b.f;
}

PCS_HD float pcs_log_posf(float v)
{
    union {
        float f;
        uint32_t u;
    } b;
    b.f = v;
    uint32_t e = (b.u - 0x3f2aaaabu) & 0xff800000u; /* exponent step to [2/3, 4/3) */
    float f = pcs_as_float(b.u - e) - 1.0f;
    /* n as a float without a conversion: 1.5 * 2^23 + n, minus 1.5 * 2^23 */
    float n = pcs_as_float(0x4b400000u + (uint32_t)((int32_t)e >> 23)) - 12582912.0f;
    float q = -1.294907779e-01f;
    q = fmaf(q, f, 1.400424093e-01f);
    q = fmaf(q, f, -1.216711923e-01f);
    q = fmaf(q, f, 1.400127858e-01f);
    q = fmaf(q, f, -1.668230891e-01f);
    q = fmaf(q, f, 2.001073956e-01f);
    q = fmaf(q, f, -2.499971688e-01f);
    q = fmaf(q, f, 3.333320916e-01f);
    q = fmaf(q, f, -5.000000000e-01f);
    return fmaf(n, 0.693147182f, fmaf(f * f, q, f));
}

/* Square root for the Box-Muller radius: the GPU's approximate instruction
 * (relative error about 2^-23, one special-function op instead of a
 * refinement sequence with a slow path); the host rounds exactly. */
PCS_HD float pcs_sqrt_radf(float x)
{
#ifdef __CUDA_ARCH__
    float r;
    asm("sqrt.approx.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
#else
    return sqrtf(x);
#endif
}

/* ---- 32-bit transforms: 4 numbers per block ----------------------------- */

/* [0, 1) with 24 random bits: every value is exact in float32. */
PCS_HD float pcs_u01f(uint32_t x) { return (float)(x >> 8) * 5.9604644775390625e-8f; }
/* (0, 1]: safe for log. */
PCS_HD float pcs_u01f_open0(uint32_t x) { return (float)((x >> 8) + 1u) * 5.9604644775390625e-8f; }

/* [0, 1) with 23 random bits made by placing them in the significand of
 * 1.0f: no int-to-float conversion, which runs at a quarter of the FMA rate
 * on GPUs and dominated normal_ (four per Philox block). */
PCS_HD float pcs_u01f_bits(uint32_t x)
{
    union {
        uint32_t u;
        float f;
    } b;
    b.u = 0x3f800000u | (x >> 9);
    return b.f - 1.0f;
}

/* The four float32 results of one block. Lanes (0,1) and (2,3) are the
 * Box-Muller pairs: cos and sin of the same radius. */
PCS_HD void pcs_rng_block_f32(const pcs_rng_params *p, pcs_u32x4 r, float out[4])
{
    float a = (float)p->a, b = (float)p->b;
    switch (p->kind) {
    case PCS_RNG_UNIFORM: {
        const int bits = p->ubits ? p->ubits : 24;
        const float unit = 1.0f / (float)(1u << bits);
        for (int l = 0; l < 4; l++)
            out[l] = fmaf((float)(r.v[l] >> (32 - bits)) * unit, b - a, a);
        break;
    }
    case PCS_RNG_NORMAL:
        for (int l = 0; l < 4; l += 2) {
            /* 1 - u is exact and in (0, 1]: safe for log */
            float rad = pcs_sqrt_radf(-2.0f * pcs_log_posf(1.0f - pcs_u01f_bits(r.v[l])));
            float s, c;
            pcs_sincospif(fmaf(2.0f, pcs_u01f_bits(r.v[l + 1]), -1.0f), &s, &c);
            out[l] = fmaf(rad * c, b, a);
            out[l + 1] = fmaf(rad * s, b, a);
        }
        break;
    case PCS_RNG_BERNOULLI:
        for (int l = 0; l < 4; l++)
            out[l] = pcs_u01f(r.v[l]) < a ? 1.0f : 0.0f;
        break;
    default: /* EXPONENTIAL */
        for (int l = 0; l < 4; l++)
            out[l] = -pcs_log_posf(pcs_u01f_open0(r.v[l])) / a;
        break;
    }
}

/* ---- 64-bit transforms: 2 numbers per block ----------------------------- */

PCS_HD uint64_t pcs_join64(uint32_t lo, uint32_t hi) { return ((uint64_t)hi << 32) | lo; }
/* [0, 1) with 53 random bits. */
PCS_HD double pcs_u01d(uint64_t x) { return (double)(x >> 11) * 1.1102230246251565e-16; }
PCS_HD double pcs_u01d_open0(uint64_t x) { return (double)((x >> 11) + 1u) * 1.1102230246251565e-16; }

PCS_HD void pcs_rng_block_f64(const pcs_rng_params *p, pcs_u32x4 r, double out[2])
{
    uint64_t x0 = pcs_join64(r.v[0], r.v[1]), x1 = pcs_join64(r.v[2], r.v[3]);
    double a = p->a, b = p->b;
    switch (p->kind) {
    case PCS_RNG_UNIFORM:
        out[0] = fma(pcs_u01d(x0), b - a, a);
        out[1] = fma(pcs_u01d(x1), b - a, a);
        break;
    case PCS_RNG_NORMAL: {
        double rad = sqrt(-2.0 * log(pcs_u01d_open0(x0)));
        double s, c;
        pcs_sincospi(fma(2.0, pcs_u01d(x1), -1.0), &s, &c);
        out[0] = fma(rad * c, b, a);
        out[1] = fma(rad * s, b, a);
        break;
    }
    case PCS_RNG_BERNOULLI:
        out[0] = pcs_u01d(x0) < a ? 1.0 : 0.0;
        out[1] = pcs_u01d(x1) < a ? 1.0 : 0.0;
        break;
    default: /* EXPONENTIAL */
        out[0] = -log(pcs_u01d_open0(x0)) / a;
        out[1] = -log(pcs_u01d_open0(x1)) / a;
        break;
    }
}

/* ---- integers ------------------------------------------------------------ */

/* RANDINT: low + bits % range; 32-bit words (4 per block) when the range
 * fits in 32 bits, 64-bit pairs (2 per block) otherwise (p->wide). The
 * modulo bias is below 2^-32 relative for ranges that fit, as torch's. */
PCS_HD int64_t pcs_rng_int(const pcs_rng_params *p, pcs_u32x4 r, int lane)
{
    /* NOLINTNEXTLINE(bugprone-implicit-widening-of-multiplication-result): lane < 4 */
    uint64_t bits = p->wide ? pcs_join64(r.v[2 * lane], r.v[2 * lane + 1]) : r.v[lane];
    return p->low + (int64_t)(bits % p->range);
}

#endif /* PCS_PHILOX_H */
