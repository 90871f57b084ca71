// softmax_lines.cuh: the warp layout the softmax forward (softmax.cu) and
// backward (softmax_bwd.cu) use over a dim that is not the last, when a
// line in[a, :, b] is short enough to sit in a few lanes' registers.
//
// The lines are numbered n = a * B + b. A warp takes G = 32 / Y groups of
// V neighbouring lines; the Y lanes of a group split the line's K values
// (lane y holds k = y, y + Y, ...) and combine their partial max or sum by
// shuffles, so no shared memory and no block barrier is needed. A warp's
// load of one k is G runs of V values, each run a whole 32-byte sector or
// more for the Y lines_plan picks by default, and a run that ends at a
// row's last b goes on at the next a's first b: a small B costs nothing,
// the neighbouring runs of a K * B slab are read by the same warp.
#pragma once

#include "ew_common.cuh"

namespace pcs {
namespace softmax_lines {

constexpr int LINES_BLOCK = 256; // threads a block: 8 warps

template <int Y, int V> struct LaneLines {
    static constexpr int G = 32 / Y;
    int y;
    bool ok;   // this lane's lines exist
    int64_t o; // offset of its first line's k = 0
    // c: the warp's chunk of G * V lines; V > 1 needs B a multiple of V,
    // so that a lane's lines share their a.
    __device__ __forceinline__ LaneLines(int64_t c, int64_t lines, int64_t K, int64_t B)
    {
        const int lane = threadIdx.x & 31, l = lane % G;
        y = lane / G;
        const int64_t n = (c * G + l) * V;
        ok = n < lines;
        const int64_t a = n / B;
        o = a * K * B + (n - a * B);
    }
    // whether slot i of this lane holds a value
    __device__ __forceinline__ bool has(int i, int64_t K) const { return ok && y + (int64_t)Y * i < K; }
    template <int KPT, class T> __device__ __forceinline__ void load(Pack<T, V> (&v)[KPT], const T *p, int64_t K,
                                                                     int64_t B) const
    {
#pragma unroll
        for (int i = 0; i < KPT; i++)
            if (has(i, K))
                v[i] = *reinterpret_cast<const Pack<T, V> *>(p + o + (y + (int64_t)Y * i) * B);
    }
    // p[slot i] = f(i) for every slot that holds a value
    template <int KPT, class T, class F> __device__ __forceinline__ void store(T *p, int64_t K, int64_t B, F &&f) const
    {
#pragma unroll
        for (int i = 0; i < KPT; i++)
            if (has(i, K))
                *reinterpret_cast<Pack<T, V> *>(p + o + (y + (int64_t)Y * i) * B) = f(i);
    }
    // op over the Y lanes of the group (every lane of the warp must call it)
    template <class A, class Op> static __device__ __forceinline__ A combine(A v, Op op)
    {
#pragma unroll
        for (int off = 16; off >= G; off >>= 1)
            v = op(v, __shfl_xor_sync(0xffffffffu, v, off));
        return v;
    }
};

// f(c) for every chunk c of the warp (all lanes of a warp see the same c)
template <int Y, int V, class F> __device__ __forceinline__ void for_warp_chunks(int64_t lines, F &&f)
{
    const int64_t chunks = (lines + (32 / Y) * V - 1) / ((32 / Y) * V);
    const int64_t warps = (int64_t)gridDim.x * (blockDim.x / 32);
    for (int64_t c = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; c < chunks; c += warps)
        f(c);
}

// The launch: Y lanes a line and KPT slots a lane, or Y = 0 when lines of
// K are too long for this layout (more than `slots` values a lane at the
// largest Y). Y is the smallest that leaves at most 8 slots a lane and,
// when the lines allow, 1024 threads an SM, and at most the Y whose runs
// of G * V values still fill a 32-byte sector (ycap > 4 lets lines too
// long for that Y take up to ycap lanes, runs of less than a sector whose
// rest the neighbouring warp reads); past 8 slots only when Y is the
// largest. (H100, lines of 21 over dim 1 of [32, 21, 128, 128],
// 8 slots against 16: float64 softmax 112.9 -> 92.8 us, log_softmax 86.1
// -> 72.4; the backward with 16 slots of g and 16 of y took 146
// registers, one block an SM, and ran 2x slower in float32 log_softmax.)
struct LinesPlan {
    int Y, KPT;
    unsigned blocks;
};

inline LinesPlan lines_plan(int64_t lines, int64_t K, int V, size_t itemsize, int sms, int slots, int ycap)
{
    LinesPlan p = {0, 0, 0};
    int ymax = (int)(V * itemsize); // G * V * itemsize >= 32
    if (ymax > 4)
        ymax = 4;
    if (K > (int64_t)slots * ymax && ycap > ymax)
        ymax = ycap;
    int y = 1;
    while (y < ymax && (K > 8 * y || (lines / V) * y < (int64_t)sms * 1024))
        y *= 2;
    if (K > (int64_t)slots * y)
        return p;
    p.Y = y;
    const int64_t used = (K + y - 1) / y;
    p.KPT = used <= 4 ? 4 : used <= 8 ? 8 : 16;
    const int64_t per_block = (int64_t)(LINES_BLOCK / 32) * (32 / y) * V;
    const int64_t blocks = (lines + per_block - 1) / per_block, cap = (int64_t)sms * 64;
    p.blocks = (unsigned)(blocks < cap ? blocks : cap);
    return p;
}

// Launches lines of K in this layout, or returns false when they do not
// suit it: f(Y, KPT, V, grid) with Y, KPT and V as integral constants.
// V = 2 for 16-bit values when B is even and every pointer (or-ed into
// addr) 4-byte aligned, so that a lane loads two lines at once; SLOTS (8 or
// 16) bounds KPT, YCAP (4 or 8) the lanes a line.
template <class T, int SLOTS, int YCAP = 4, class F>
inline bool launch_lines(int64_t lines, int64_t K, int64_t B, uintptr_t addr, F &&f)
{
    const int V = sizeof(T) == 2 && B % 2 == 0 && addr % 4 == 0 ? 2 : 1;
    const LinesPlan p = lines_plan(lines, K, V, sizeof(T), sm_count(), SLOTS, YCAP);
    if (p.Y == 0)
        return false;
    auto by_kpt = [&](auto yc, auto vc) {
        if (p.KPT == 4)
            f(yc, std::integral_constant<int, 4>{}, vc, dim3(p.blocks));
        else if (SLOTS == 8 || p.KPT == 8)
            f(yc, std::integral_constant<int, 8>{}, vc, dim3(p.blocks));
        else
            f(yc, std::integral_constant<int, SLOTS>{}, vc, dim3(p.blocks));
    };
    auto by_y = [&](auto vc) {
        if (p.Y == 1)
            by_kpt(std::integral_constant<int, 1>{}, vc);
        else if (p.Y == 2)
            by_kpt(std::integral_constant<int, 2>{}, vc);
        else if (YCAP < 8 || p.Y == 4)
            by_kpt(std::integral_constant<int, 4>{}, vc);
        else
            by_kpt(std::integral_constant<int, (YCAP < 8 ? 4 : 8)>{}, vc);
    };
    if constexpr (sizeof(T) == 2) {
        if (V == 2) {
            by_y(std::integral_constant<int, 2>{});
            return true;
        }
    }
    by_y(std::integral_constant<int, 1>{});
    return true;
}

} // namespace softmax_lines
} // namespace pcs
