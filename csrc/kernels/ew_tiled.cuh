// ew_tiled.cuh: binary elementwise ops where one input is transposed against
// the result (a + b.t(), x * y.permute(0, 2, 1)), in one pass.
//
// Read directly, such an input is walked a row stride apart for every
// element; staging it through the result first (the tiled copy, then the
// op in place) moves 40 bytes an int64 element where the op needs 24,
// which held `a + b.t()` of int64 at 0.80x torch. Here a block moves a
// TILE x TILE tile of the transposed input through shared memory as the
// transposing copy does (rows read along its contiguous dim j, +1 column so
// the column reads hit different banks), loads the other input's matching
// tile straight into registers before the barrier, and writes the result
// along its own contiguous dim i: every global access is coalesced and
// each byte moves once. An optional third dim batches the tiles.
#pragma once

#include <stdint.h>
#include <type_traits>

#include "kernels.h"
#include "pdl.cuh"

namespace pcs {

struct TiledGeom {
    int64_t ni, nj, nb; // i: the result's fastest dim, j: the transposed input's
    int64_t si[3], sj[3], sb[3]; // strides of out, a, b along i, j and the batch dim
    int tp; // the transposed input: 1 (a) or 2 (b)
};

// 64 x 64 tiles (32 x 32 for 16-byte elements, whose tile would pass the
// static shared-memory limit), 256 threads: 16 loads a thread in flight.
template <class T> inline constexpr int ew_tile_of = sizeof(T) >= 16 ? 32 : 64;

// P is ew_ops.cuh's Args<F, T, T, char>.
template <class P, class T> __global__ void __launch_bounds__(256) ew_tiled(P p, TiledGeom g)
{
    pdl_wait(); // launched early (pdl.cuh): nothing global before this
    constexpr int TILE = ew_tile_of<T>, ROWS = 256 / TILE, K = TILE / ROWS;
    __shared__ T tile[TILE][TILE + 1];
    // Strides picked by value, not indexed by tp: a runtime index into the
    // parameter arrays would copy them to local memory.
    const bool first = g.tp == 1; // a transposed, b read directly (else the reverse)
    const T *tsrc = first ? p.a : p.b;
    const T *dsrc = first ? p.b : p.a; // NULL: a scalar operand
    const int64_t tsi = first ? g.si[1] : g.si[2], tsj = first ? g.sj[1] : g.sj[2];
    const int64_t tsb = first ? g.sb[1] : g.sb[2];
    const int64_t dsi = first ? g.si[2] : g.si[1], dsj = first ? g.sj[2] : g.sj[1];
    const int64_t dsb = first ? g.sb[2] : g.sb[1];
    const int64_t ti = (g.ni + TILE - 1) / TILE, tj = (g.nj + TILE - 1) / TILE;
    const int tx = threadIdx.x, ty = threadIdx.y;
    for (int64_t t = blockIdx.x; t < ti * tj * g.nb; t += gridDim.x) {
        const int64_t bt = t / (ti * tj), r = t - bt * ti * tj;
        const int64_t i0 = (r / tj) * TILE, j0 = (r % tj) * TILE;
        const bool full = i0 + TILE <= g.ni && j0 + TILE <= g.nj;
        const T *s = tsrc + bt * tsb + i0 * tsi + j0 * tsj;
#pragma unroll
        for (int k = ty; k < TILE; k += ROWS)
            if (full || (i0 + k < g.ni && j0 + tx < g.nj))
                tile[k][tx] = s[k * tsi + tx * tsj];
        T d[K];
#pragma unroll
        for (int u = 0; u < K; u++)
            d[u] = T{};
        if (dsrc) {
            const T *q = dsrc + bt * dsb + i0 * dsi + j0 * dsj;
#pragma unroll
            for (int u = 0; u < K; u++) {
                const int k = ty + u * ROWS;
                if (full || (i0 + tx < g.ni && j0 + k < g.nj))
                    d[u] = q[tx * dsi + k * dsj];
            }
        }
        __syncthreads();
        auto *o = p.out + bt * g.sb[0] + i0 * g.si[0] + j0 * g.sj[0];
#pragma unroll
        for (int u = 0; u < K; u++) {
            const int k = ty + u * ROWS;
            if (full || (i0 + tx < g.ni && j0 + k < g.nj)) {
                const T tv = tile[tx][k];
                o[tx * g.si[0] + k * g.sj[0]] = first ? p.f(tv, d[u], char{}) : p.f(d[u], tv, char{});
            }
        }
        __syncthreads(); // the tile is reused by the next iteration
    }
}

// Can the plan run as ew_tiled? 2 or 3 dims; the result's fastest dim i
// has stride 1; exactly one input walks another dim j fastest while moving
// along i (the other input walks i with stride 0 or 1, or is a scalar);
// both tile dims at least 16 long.
inline bool tiled_plan(const pcs_ew_geom &g, const void *a, const void *b, TiledGeom *t)
{
    if (g.ndim < 2 || g.ndim > 3)
        return false;
    auto mag = [](int64_t x) { return x < 0 ? -x : x; };
    int i = -1;
    for (int d = 0; d < g.ndim; d++)
        if (g.strides[0][d] == 1)
            i = d;
    if (i < 0)
        return false;
    const void *in[3] = {nullptr, a, b};
    int tp = 0, j = -1;
    for (int k = 1; k <= 2; k++) {
        if (!in[k] || mag(g.strides[k][i]) <= 1)
            continue; // a scalar, or walks i as the result does
        int jk = -1;
        for (int d = 0; d < g.ndim; d++)
            if (d != i && g.strides[k][d] != 0 && (jk < 0 || mag(g.strides[k][d]) < mag(g.strides[k][jk])))
                jk = d;
        if (tp || jk < 0 || mag(g.strides[k][jk]) >= mag(g.strides[k][i]))
            return false; // both transposed, or a stepped walk along i: not a transpose
        tp = k;
        j = jk;
    }
    if (!tp || g.sizes[i] < 16 || g.sizes[j] < 16)
        return false;
    const int bd = 3 - i - j; // the third dim when there are three
    t->tp = tp;
    t->ni = g.sizes[i];
    t->nj = g.sizes[j];
    t->nb = g.ndim == 3 ? g.sizes[bd] : 1;
    for (int k = 0; k < 3; k++) {
        t->si[k] = g.strides[k][i];
        t->sj[k] = g.strides[k][j];
        t->sb[k] = g.ndim == 3 ? g.strides[k][bd] : 0;
    }
    return true;
}

} // namespace pcs
