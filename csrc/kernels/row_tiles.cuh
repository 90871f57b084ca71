// row_tiles.cuh: the warp-tile walk over the rows of a strided geometry,
// shared by the kernels that move or write whole rows (copy_rows in copy.cu,
// fill_tiles in fill.cu).
//
// A tile is 32 * U neighbouring elements of one row, a warp's: the row's
// offsets come from the outer dims once a tile (g holds only those) and the
// elements from there by the innermost stride, where the per-element
// kernels divide for every element. f(off, c0) gets the row's offsets (one
// per operand) and this lane's first column; the lane's elements are c0,
// c0 + 32, ..., c0 + 32 (U - 1), those below the row's width.
#pragma once

#include <stdint.h>

#include "offsets.cuh"

namespace pcs {

template <int THREADS, int NOPS, bool UNROLLED = false, typename Off, typename F>
__device__ __forceinline__ void row_tiles(int U, uint32_t tiles, FastDiv tpr, const Off &g, F &&f)
{
    constexpr int kWarps = THREADS / 32;
    const uint32_t lane = threadIdx.x & 31, step = gridDim.x * kWarps;
    for (uint32_t t = blockIdx.x * kWarps + threadIdx.x / 32; t < tiles; t += step) {
        const uint32_t r = tpr.div(t);
        int64_t off[NOPS];
        if constexpr (UNROLLED)
            g.get_unrolled((typename Off::index_t)r, off);
        else
            g.get((typename Off::index_t)r, off);
        f(off, (int64_t)(t - r * tpr.d) * 32 * U + lane);
    }
}

// The tile width for rows of W elements: the largest power of two up to
// umax whose 32 * U tile is at most the row and keeps at least three
// quarters of the row's lanes busy (rows of 33 to 47 values in tiles of 32
// left warps nearly idle: float32 x[:, 1:] of [1048576, 40] copied at 0.60x
// torch that way), or 0 when no tile does.
inline int row_tile_width(int64_t W, int umax)
{
    auto busy = [W](int64_t tile) { return 4 * W >= 3 * tile * ((W + tile - 1) / tile); };
    int u = umax;
    while (u > 1 && (32 * (int64_t)u > W || !busy(32 * (int64_t)u)))
        u /= 2;
    return W >= 32 && busy(32 * (int64_t)u) ? u : 0;
}

} // namespace pcs
