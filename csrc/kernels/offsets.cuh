// offsets.cuh: element index -> per-operand offsets for the strided kernels
// (ew_ops.cuh, copy.cu), in 32 or 64 bits as the plan allows.
//
// The strided paths walk the output in linear order and turn each index
// into one offset per operand. With 64-bit offsets that is a 64-bit
// division per dim, tens of instructions each, which is what held the
// broadcast and stepped layouts at half of torch's speed. When the plan
// says every offset fits in int32 (geom.index32, see core/iter.h), Off32
// divides by multiplying with a precomputed magic number (Granlund and
// Montgomery, as ATen's IntDivider): a mulhi, an add and a shift a dim.
#pragma once

#include <stdint.h>

#include "kernels.h"

namespace pcs {

// n / d for n, d < 2^31: q = (mulhi(n, m) + n) >> s.
struct FastDiv {
    uint32_t d, m, s;

    __host__ void init(uint32_t div)
    {
        d = div;
        s = 0;
        while (s < 31 && (1u << s) < div)
            s++;
        uint64_t one = 1;
        m = (uint32_t)(((one << 32) * ((one << s) - div)) / div + 1);
    }
    __device__ __forceinline__ uint32_t div(uint32_t n) const { return (__umulhi(n, m) + n) >> s; }
};

// NOPS operands, dims fastest first (the reverse of pcs_ew_geom) so the
// loop peels coordinates from the linear index; the outermost dim needs no
// division.
template <int NOPS> struct Off32 {
    using index_t = uint32_t;
    int ndim;
    FastDiv div[PCS_MAX_DIMS];
    int32_t st[PCS_MAX_DIMS][NOPS];

    __device__ __forceinline__ void get(uint32_t i, int64_t *off) const
    {
        int32_t o[NOPS] = {};
        // Not unrolled, which keeps the build short: the kernels that take
        // plans of any depth fall back to this loop past the dims they
        // unroll (get_unrolled, below, is the fast one).
#pragma unroll 1
        for (int d = 0; d < ndim; d++) {
            uint32_t q = d + 1 < ndim ? div[d].div(i) : 0;
            int32_t c = (int32_t)(i - q * div[d].d);
#pragma unroll
            for (int k = 0; k < NOPS; k++)
                o[k] += c * st[d][k];
            i = q;
        }
#pragma unroll
        for (int k = 0; k < NOPS; k++)
            off[k] = o[k];
    }
    // get with the dims loop unrolled up to MAXD (at least ndim): each dim's
    // divisor and strides are then read from the kernel's parameters at
    // fixed addresses, where the loop above indexes them at run time, one
    // queued constant load each through the MIO pipe. A kernel doing little
    // else an element waits on that queue: an element-wise strided fill on
    // the H200 spent half its cycles there, at 0.4x torch.
    template <int MAXD = PCS_MAX_DIMS>
    __device__ __forceinline__ void get_unrolled(uint32_t i, int64_t *off) const
    {
        int32_t o[NOPS] = {};
#pragma unroll
        for (int d = 0; d < MAXD; d++) {
            if (d == ndim)
                break;
            uint32_t q = d + 1 < ndim ? div[d].div(i) : 0;
            int32_t c = (int32_t)(i - q * div[d].d);
#pragma unroll
            for (int k = 0; k < NOPS; k++)
                o[k] += c * st[d][k];
            i = q;
        }
#pragma unroll
        for (int k = 0; k < NOPS; k++)
            off[k] = o[k];
    }
};

template <int NOPS> struct Off64 {
    using index_t = int64_t;
    int ndim;
    int64_t size[PCS_MAX_DIMS];
    int64_t st[PCS_MAX_DIMS][NOPS];

    __device__ __forceinline__ void get(int64_t i, int64_t *off) const
    {
#pragma unroll
        for (int k = 0; k < NOPS; k++)
            off[k] = 0;
#pragma unroll 1
        for (int d = 0; d < ndim; d++) {
            int64_t q = d + 1 < ndim ? i / size[d] : 0;
            int64_t c = i - q * size[d];
#pragma unroll
            for (int k = 0; k < NOPS; k++)
                off[k] += c * st[d][k];
            i = q;
        }
    }
    // as Off32's (64-bit divisions dominate here anyway)
    template <int MAXD = PCS_MAX_DIMS>
    __device__ __forceinline__ void get_unrolled(int64_t i, int64_t *off) const
    {
        get(i, off);
    }
};

template <int NOPS> inline Off32<NOPS> make_off32(const pcs_ew_geom &g)
{
    Off32<NOPS> o;
    o.ndim = g.ndim;
    for (int d = 0; d < g.ndim; d++) {
        int src = g.ndim - 1 - d;
        o.div[d].init((uint32_t)g.sizes[src]);
        for (int k = 0; k < NOPS; k++)
            o.st[d][k] = (int32_t)g.strides[k][src];
    }
    return o;
}

template <int NOPS> inline Off64<NOPS> make_off64(const pcs_ew_geom &g)
{
    Off64<NOPS> o;
    o.ndim = g.ndim;
    for (int d = 0; d < g.ndim; d++) {
        int src = g.ndim - 1 - d;
        o.size[d] = g.sizes[src];
        for (int k = 0; k < NOPS; k++)
            o.st[d][k] = g.strides[k][src];
    }
    return o;
}

// A contiguous range of n elements as a one-dim geometry (misaligned
// contiguous operands take the strided path).
inline pcs_ew_geom flat_geom(int64_t n)
{
    pcs_ew_geom g;
    g.ndim = 1;
    g.index32 = n <= INT32_MAX;
    g.sizes[0] = n;
    for (int k = 0; k < PCS_EW_OPERANDS; k++)
        g.strides[k][0] = 1;
    return g;
}

} // namespace pcs
