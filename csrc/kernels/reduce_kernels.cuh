// reduce_kernels.cuh: the reduction kernels, their plans and run_abk, shared
// by reduce.cu (one [A, K, B] pass) and reduce_split.cu (two passes, for
// reduced dims that are two runs in memory). See reduce.cu for the design.
#pragma once

#include "reduce_ops.cuh"

namespace {

// ---------------------------------------------------------------------------
// Kernels

constexpr int kMaxThreads = 512;

// Combines the accumulators of the blockDim.x threads of each row group;
// the result is valid in threadIdx.x == 0. A group narrower than a warp (a
// power of two) shuffles within its own lanes.
template <class Rd> __device__ typename Rd::Acc group_reduce(const Rd &r, typename Rd::Acc acc)
{
    using Acc = typename Rd::Acc;
    if (blockDim.x < 32) {
        for (int off = blockDim.x / 2; off > 0; off >>= 1)
            acc = r.comb(acc, shfl_down(acc, off, blockDim.x));
        return acc;
    }
    for (int off = 16; off > 0; off >>= 1)
        acc = r.comb(acc, shfl_down(acc, off));
    if (blockDim.x == 32)
        return acc;
    __shared__ alignas(Acc) char smem_raw[sizeof(Acc) * (kMaxThreads / 32)];
    Acc *smem = reinterpret_cast<Acc *>(smem_raw);
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32, nw = blockDim.x / 32;
    if (lane == 0)
        smem[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        acc = lane < nw ? smem[lane] : r.ident();
        for (int off = 16; off > 0; off >>= 1)
            acc = r.comb(acc, shfl_down(acc, off));
    }
    return acc;
}

// A partial accumulator as another block wrote it: read through L2 (.cg),
// word by word, since this SM's L1 may hold a stale copy of the line (a
// neighbouring tile's partials read before they were final). Every Acc is
// made of 4-byte words.
template <class Acc> __device__ __forceinline__ Acc load_partial(const Acc *p)
{
    static_assert(sizeof(Acc) % 4 == 0, "partials are whole 4-byte words");
    unsigned w[sizeof(Acc) / 4];
#pragma unroll
    for (int i = 0; i < int(sizeof(Acc) / 4); i++)
        w[i] = __ldcg(reinterpret_cast<const unsigned *>(p) + i);
    Acc v;
    memcpy(&v, w, sizeof v);
    return v;
}

// The end of a split reduce_inner block with counters (one row a block,
// blockDim.x threads): the block counts itself in sem[row] once its partial
// is written, and the row's last split to arrive combines all the row's
// partials as reduce_partials would, then zeroes the counter again.
template <class Rd>
__device__ void inner_last_split(const Rd &r, const typename Rd::Acc *partial, int splits,
                                 typename Rd::Out *out, int64_t *idx, unsigned *sem, int64_t row)
{
    using Acc = typename Rd::Acc;
    __shared__ int last;
    __threadfence(); // thread 0's partial is visible before the block is counted
    __syncthreads();
    if (threadIdx.x == 0)
        last = atomicAdd(&sem[row], 1u) == (unsigned)splits - 1;
    __syncthreads();
    if (!last)
        return;
    __threadfence(); // the other splits' partials are read after their counts
    Acc acc = r.ident();
    for (int i = threadIdx.x; i < splits; i += blockDim.x)
        acc = r.comb(acc, load_partial(partial + row * splits + i));
    acc = group_reduce(r, acc);
    if (threadIdx.x == 0) {
        r.store(acc, out, idx, row);
        sem[row] = 0; // every split has counted: zero again for the next launch
    }
}

// Split s of a row owns packs s*G + t, s*G + t + S*G, ... (G threads a
// group, S splits): every split walks the whole row in a grid-stride loop, so
// the grid can be sized to what the GPU holds at once (no partial last wave)
// and neighbouring threads still read neighbouring 16-byte packs.
template <class Rd, class T>
__global__ void __launch_bounds__(kMaxThreads)
reduce_inner(Rd r, const T *in, int64_t A, int64_t K, int splits,
             typename Rd::Acc *partial, typename Rd::Out *out, int64_t *idx, bool vec, unsigned *sem)
{
    using Acc = typename Rd::Acc;
    constexpr int N = 16 / sizeof(T) > 0 ? 16 / sizeof(T) : 1;
    int64_t row = (int64_t)blockIdx.x * blockDim.y + threadIdx.y;
    int s = blockIdx.y;
    if (splits > 1 && !sem)
        pdl_trigger(); // reduce_partials may be scheduled now; it waits for this grid
    pdl_wait();        // launched early (pdl.cuh): the kernel ahead is done
    Acc acc = r.ident();
    if (row < A) {
        const T *p = in + row * K;
        const int64_t first = (int64_t)s * blockDim.x + threadIdx.x;
        const int64_t stride = (int64_t)splits * blockDim.x;
        int64_t tail = 0; // elements before this are covered by packs
        if (vec) {
            const int64_t npacks = K / N;
            const Pack<T, N> *pp = reinterpret_cast<const Pack<T, N> *>(p);
            int64_t i = first;
            for (; i + 3 * stride < npacks; i += 4 * stride) {
                Pack<T, N> v[4];
#pragma unroll
                for (int u = 0; u < 4; u++)
                    v[u] = pp[i + u * stride];
#pragma unroll
                for (int u = 0; u < 4; u++)
#pragma unroll
                    for (int j = 0; j < N; j++)
                        acc = r.comb(acc, r.map(v[u].v[j], (i + u * stride) * N + j));
            }
            if (i < npacks) { // the last (up to 3) packs: their loads issue together
                Pack<T, N> v[3];
#pragma unroll
                for (int u = 0; u < 3; u++)
                    if (i + u * stride < npacks)
                        v[u] = pp[i + u * stride];
#pragma unroll
                for (int u = 0; u < 3; u++)
                    if (i + u * stride < npacks)
#pragma unroll
                        for (int j = 0; j < N; j++)
                            acc = r.comb(acc, r.map(v[u].v[j], (i + u * stride) * N + j));
            }
            tail = npacks * N;
        }
        for (int64_t k = tail + first; k < K; k += stride)
            acc = r.comb(acc, r.map(p[k], k));
    }
    acc = group_reduce(r, acc);
    if (threadIdx.x == 0 && row < A) {
        if (splits == 1)
            r.store(acc, out, idx, row);
        else
            partial[row * splits + s] = acc;
    }
    if (sem && splits > 1) // splits > 1: one row a block, so row < A
        inner_last_split(r, partial, splits, out, idx, sem, row);
}

template <class Rd>
__global__ void reduce_partials(Rd r, const typename Rd::Acc *partial, int splits,
                                typename Rd::Out *out, int64_t *idx)
{
    pdl_wait(); // reduce_inner's partials are written and visible
    typename Rd::Acc acc = r.ident();
    int64_t row = blockIdx.x;
    for (int i = threadIdx.x; i < splits; i += blockDim.x)
        acc = r.comb(acc, partial[row * splits + i]);
    acc = group_reduce(r, acc);
    if (threadIdx.x == 0)
        r.store(acc, out, idx, row);
}

// Outer reductions (B > 1). A block owns bx * V neighbouring columns of one
// a and its split's rows of K (a range, or with many splits interleaved
// chunks); thread (x, y) walks rows y, y + by, ... of them with V-element
// vector loads, U rows in flight (64 bytes), so a warp reads whole 128-512
// byte lines of each row. The by accumulators of a column are then combined
// through shared memory in a fixed tree, and with more than one split,
// written as partials. Those are combined either by reduce_outer_partials or
// reduce_outer_partials_lanes (a second launch) or, when the stream lends the
// launch zeroed counters (sem), by the tile's last split to finish: it counts
// the splits in sem[tile], reads every split's partial in split order and
// sets the counter back to zero for the stream's next launch. Either way the
// order is fixed, so a result is bit-identical from run to run.
constexpr int kOuterThreads = 256;
// Blocks of reduce_outer an SM is built for (its launch bounds), which caps
// it at 64 registers a thread. Without it ptxas held the kernel to 40 (six
// blocks an SM) and, short of registers, issued a thread's eight row loads
// three or four at a time, each next one after the previous ones' adds (two
// at a time for float32); with it all eight are in flight together. On the
// H200, in one process: float16 x.sum(0) 0.5 to 0.7 us faster on every
// shape but the square (the same), bfloat16 1.6 to 2.8 us (5 to 8 points of
// the copy bandwidth: it now reads as float16 does), float32 the same or up
// to 0.7 us faster. plan_outer aims for this many blocks an SM. Ops with
// wider accumulators (argmax's value and index, Welford's triple, the
// log-sum-exp pair, doubles and int64) spilled at 64 registers and are left
// to ptxas (0: no bound; a bound of 1 let a float16 sum take 72 registers,
// three blocks an SM, and lost 15 points).
constexpr int kOuterBlocksPerSm = 4;
template <class Rd> constexpr int outer_min_blocks = sizeof(typename Rd::Acc) <= 4 ? kOuterBlocksPerSm : 0;

// The by accumulators of each of a block's bx * V columns (thread (x, y)
// holds acc[0..V) of columns x * V ..) meet in smem in a fixed tree, halving
// by (a power of two) each step; the column results end in the first row,
// smem[x * V + j]. A fixed order: the same bits from run to run.
template <class Rd, int V>
__device__ __forceinline__ void column_tree(const Rd &r, const typename Rd::Acc (&acc)[V], typename Rd::Acc *smem)
{
    const int bx = blockDim.x, by = blockDim.y, tx = threadIdx.x, ty = threadIdx.y;
#pragma unroll
    for (int j = 0; j < V; j++)
        smem[(ty * bx + tx) * V + j] = acc[j];
    __syncthreads();
    for (int h = by / 2; h > 0; h /= 2) {
        if (ty < h)
#pragma unroll
            for (int j = 0; j < V; j++)
                smem[(ty * bx + tx) * V + j] =
                    r.comb(smem[(ty * bx + tx) * V + j], smem[((ty + h) * bx + tx) * V + j]);
        __syncthreads();
    }
}

// The end of one tile of a split reduce_outer with counters: every thread has
// written its partials (the first row of the tree did); the block fences them,
// counts itself in sem[tile], and the last split to arrive combines all
// splits' partials of the tile's columns. Thread (x, y) takes splits y,
// y + by, ... of its V columns in order, then the by accumulators meet in the
// same fixed tree as above, so the result does not depend on which split
// came last.
template <class Rd, int V>
__device__ void outer_last_split(const Rd &r, const typename Rd::Acc *partial, typename Rd::Out *out,
                                 int64_t *idx, unsigned *sem, typename Rd::Acc *smem, int64_t tile,
                                 int64_t a, int64_t b0, int64_t n, int64_t B)
{
    using Acc = typename Rd::Acc;
    __shared__ int last;
    const int by = blockDim.y, tx = threadIdx.x, ty = threadIdx.y;
    const unsigned splits = gridDim.y;
    __threadfence(); // this block's partials are visible before it is counted
    __syncthreads();
    if (tx == 0 && ty == 0)
        last = atomicAdd(&sem[tile], 1u) == splits - 1;
    __syncthreads();
    if (!last)
        return;
    __threadfence(); // the other splits' partials are read after their counts
    Acc acc[V];
#pragma unroll
    for (int j = 0; j < V; j++)
        acc[j] = r.ident();
    if (b0 < B) {
        // U splits a round, so that U * V loads (8) are in flight together.
        constexpr int U = V >= 8 ? 1 : 8 / V;
        const Acc *p = partial + a * B + b0;
        unsigned s = ty;
        for (; s + (U - 1) * by < splits; s += U * by) {
            Acc v[U][V];
#pragma unroll
            for (int u = 0; u < U; u++)
#pragma unroll
                for (int j = 0; j < V; j++)
                    if (b0 + j < B)
                        v[u][j] = load_partial(p + (int64_t)(s + u * by) * n + j);
#pragma unroll
            for (int u = 0; u < U; u++)
#pragma unroll
                for (int j = 0; j < V; j++)
                    if (b0 + j < B)
                        acc[j] = r.comb(acc[j], v[u][j]);
        }
        for (; s < splits; s += by)
#pragma unroll
            for (int j = 0; j < V; j++)
                if (b0 + j < B)
                    acc[j] = r.comb(acc[j], load_partial(p + (int64_t)s * n + j));
    }
    __syncthreads(); // the tile's tree above is done with smem
    column_tree<Rd, V>(r, acc, smem);
    if (ty == 0 && b0 < B)
#pragma unroll
        for (int j = 0; j < V; j++)
            if (b0 + j < B)
                r.store(smem[tx * V + j], out, idx, a * B + b0 + j);
    if (tx == 0 && ty == 0)
        sem[tile] = 0; // every split has counted: zero again for the next launch
}

// Elements per vector load of the outer kernel: up to 4 (16 bytes for
// float, 8 for half: 16-byte packs of half measured 4 points of the copy
// bandwidth slower on the H100, and grow the shared-memory exchange).
template <class T> constexpr int outer_vec()
{
    return 16 / sizeof(T) >= 4 ? 4 : 16 / sizeof(T) > 0 ? int(16 / sizeof(T)) : 1;
}

// U rows k, k + by, ... of a thread's V columns, loaded together, then folded.
template <class Rd, class T, int V, int U>
__device__ __forceinline__ void outer_rows(const Rd &r, typename Rd::Acc (&acc)[V], const T *p, int64_t k, int by,
                                           int64_t B)
{
    using P = Pack<T, V>;
    P v[U];
#pragma unroll
    for (int u = 0; u < U; u++)
        v[u] = *reinterpret_cast<const P *>(p + (k + u * by) * B);
#pragma unroll
    for (int u = 0; u < U; u++)
#pragma unroll
        for (int j = 0; j < V; j++)
            acc[j] = r.comb(acc[j], r.map(v[u].v[j], k + u * by));
}

template <class Rd, class T, int V, bool CHUNKED>
__global__ void __launch_bounds__(kOuterThreads, outer_min_blocks<Rd>)
reduce_outer(Rd r, const T *in, int64_t A, int64_t K, int64_t B, int64_t ktile,
             typename Rd::Acc *partial, typename Rd::Out *out, int64_t *idx, unsigned *sem)
{
    using Acc = typename Rd::Acc;
    // Rows in flight a thread: 64 bytes of loads, as four 16-byte packs
    // (narrow packs of 2- and 1-byte types would otherwise leave too few
    // bytes in flight to cover the memory latency).
    constexpr int U = sizeof(T) * V >= 16 ? 4 : int(64 / (sizeof(T) * V));
    __shared__ alignas(Acc) char smem_raw[sizeof(Acc) * V * kOuterThreads];
    Acc *smem = reinterpret_cast<Acc *>(smem_raw);
    const int bx = blockDim.x, by = blockDim.y, tx = threadIdx.x, ty = threadIdx.y;
    const int64_t ctiles = (B + (int64_t)bx * V - 1) / ((int64_t)bx * V);
    const int64_t k0 = (int64_t)blockIdx.y * ktile;
    const int64_t k1 = k0 + ktile < K ? k0 + ktile : K;
    if (gridDim.y > 1 && !sem)
        pdl_trigger(); // reduce_outer_partials may be scheduled now; it waits for this grid
    pdl_wait();        // launched early (pdl.cuh): the kernel ahead is done
    for (int64_t tile = blockIdx.x; tile < A * ctiles; tile += gridDim.x) {
        const int64_t a = tile / ctiles;
        const int64_t b0 = ((tile - a * ctiles) * bx + tx) * V;
        Acc acc[V];
#pragma unroll
        for (int j = 0; j < V; j++)
            acc[j] = r.ident();
        if (b0 < B) {
            const T *p = in + a * K * B + b0;
            int64_t k = k0 + ty;
            if constexpr (V > 1) { // B % V == 0: a pack never crosses a row
                using P = Pack<T, V>;
                if constexpr (CHUNKED) {
                    // Many splits: split y takes the chunks of by * U rows
                    // y, y + splits, ..., one round of loads a thread each,
                    // so that the grid moves down K together instead of each
                    // split streaming its own region far from the others.
                    // (Any cover of K by the splits gives the same result
                    // up to rounding; the scalar path below keeps ranges.)
                    const int64_t C = (int64_t)by * U, step = C * gridDim.y;
                    for (int64_t c0 = (int64_t)blockIdx.y * C; c0 < K; c0 += step) {
                        int64_t kk = c0 + ty;
                        if (kk + (U - 1) * by < K) {
                            outer_rows<Rd, T, V, U>(r, acc, p, kk, by, B);
                        } else { // the last chunk, cut by the end of K
                            for (; kk < K; kk += by) {
                                P v = *reinterpret_cast<const P *>(p + kk * B);
#pragma unroll
                                for (int j = 0; j < V; j++)
                                    acc[j] = r.comb(acc[j], r.map(v.v[j], kk));
                            }
                        }
                    }
                } else {
                    for (; k + (U - 1) * by < k1; k += U * by)
                        outer_rows<Rd, T, V, U>(r, acc, p, k, by, B);
                    for (; k < k1; k += by) {
                        P v = *reinterpret_cast<const P *>(p + k * B);
#pragma unroll
                        for (int j = 0; j < V; j++)
                            acc[j] = r.comb(acc[j], r.map(v.v[j], k));
                    }
                }
            } else { // scalar loads (a misaligned input), 4 in flight
                for (; k + 3 * by < k1; k += 4 * by) {
                    T v[4];
#pragma unroll
                    for (int u = 0; u < 4; u++)
                        v[u] = p[(k + u * by) * B];
#pragma unroll
                    for (int u = 0; u < 4; u++)
                        acc[0] = r.comb(acc[0], r.map(v[u], k + u * by));
                }
                for (; k < k1; k += by)
                    acc[0] = r.comb(acc[0], r.map(p[k * B], k));
            }
        }
        column_tree<Rd, V>(r, acc, smem);
        if (ty == 0 && b0 < B) {
#pragma unroll
            for (int j = 0; j < V; j++) {
                if (b0 + j >= B)
                    break;
                int64_t o = a * B + b0 + j;
                if (gridDim.y == 1)
                    r.store(smem[tx * V + j], out, idx, o);
                else
                    partial[(int64_t)blockIdx.y * A * B + o] = smem[tx * V + j];
            }
        }
        if (sem && gridDim.y > 1)
            outer_last_split<Rd, V>(r, partial, out, idx, sem, smem, tile, a, b0, A * B, B);
        __syncthreads(); // smem is reused by the next tile
    }
}

// Second pass of a split outer reduction: partials [splits][n]. Thread
// (x, y) of a block takes output x of the block's bx and splits y, y + by,
// ... (eight loads in flight), then the by accumulators of an output meet
// in a fixed tree through shared memory: a fixed order, so the same bits
// from run to run. The splits are spread over threads because few outputs
// and many splits (a tall x.sum(0)) would otherwise leave one thread a
// chain of L2 round trips: 66 splits of [65536, 1024] float16 cost about
// 10 % of the whole reduction when one thread walked them.
constexpr int kPartialsThreads = 1024;

template <class Rd>
__global__ void __launch_bounds__(kPartialsThreads)
reduce_outer_partials(Rd r, const typename Rd::Acc *partial, int splits, int64_t n,
                      typename Rd::Out *out, int64_t *idx)
{
    using Acc = typename Rd::Acc;
    __shared__ alignas(Acc) char smem_raw[sizeof(Acc) * kPartialsThreads];
    Acc *smem = reinterpret_cast<Acc *>(smem_raw);
    const int bx = blockDim.x, by = blockDim.y, tx = threadIdx.x, ty = threadIdx.y;
    pdl_wait(); // reduce_outer's partials are written and visible
    for (int64_t o0 = (int64_t)blockIdx.x * bx; o0 < n; o0 += (int64_t)gridDim.x * bx) {
        const int64_t o = o0 + tx;
        Acc acc = r.ident();
        if (o < n && ty < splits) { // by <= splits: every thread has a first split
            acc = partial[(int64_t)ty * n + o];
            for (int s = ty + by; s < splits; s += 8 * by) {
                Acc v[8]; // the last round too: its loads still issue together
#pragma unroll
                for (int u = 0; u < 8; u++)
                    if (s + u * by < splits)
                        v[u] = partial[(int64_t)(s + u * by) * n + o];
#pragma unroll
                for (int u = 0; u < 8; u++)
                    if (s + u * by < splits)
                        acc = r.comb(acc, v[u]);
            }
        }
        smem[ty * bx + tx] = acc;
        __syncthreads();
        for (int h = by / 2; h > 0; h /= 2) { // by is a power of two
            if (ty < h)
                smem[ty * bx + tx] = r.comb(smem[ty * bx + tx], smem[(ty + h) * bx + tx]);
            __syncthreads();
        }
        if (ty == 0 && o < n)
            r.store(smem[tx], out, idx, o);
        __syncthreads(); // smem is reused by the next outputs
    }
}

// The second pass for few outputs of many splits (a tall x.sum(0) or one of
// short rows: 16 to 2048 outputs of 32 to 528 splits), where the kernel
// above gives an output at most 64 threads and leaves each a chain of
// rounds of loads: w warps an output (w = 1..8, 32w lanes over its splits,
// l, l + 32w, ..., eight loads in flight), then a shuffle tree in each warp
// and the w warp results in order through shared memory, a fixed order. On
// the H200, in a standalone copy of both kernels, float16 x.sum(0) of
// [2^20, 64] (528 splits): 92.6 -> 96.0 % of
// the copy bandwidth with four warps an output (96.4 with eight), [2^22, 16]
// 94.1 -> 96.9 %; [65536, 1024] (66 splits) 96.6 -> 97.3 % with one warp,
// and worse with more.
template <class Rd>
__global__ void __launch_bounds__(256)
reduce_outer_partials_lanes(Rd r, const typename Rd::Acc *partial, int splits, int64_t n, int wpo,
                            typename Rd::Out *out, int64_t *idx)
{
    using Acc = typename Rd::Acc;
    __shared__ alignas(Acc) char smem_raw[sizeof(Acc) * 8];
    Acc *smem = reinterpret_cast<Acc *>(smem_raw);
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, per_block = 8 / wpo, lanes = 32 * wpo;
    const int l = (warp % wpo) * 32 + lane;
    pdl_wait(); // reduce_outer's partials are written and visible
    for (int64_t o0 = (int64_t)blockIdx.x * per_block; o0 < n; o0 += (int64_t)gridDim.x * per_block) {
        const int64_t o = o0 + warp / wpo;
        Acc acc = r.ident();
        if (o < n)
            for (int s = l; s < splits; s += 8 * lanes) {
                Acc v[8];
#pragma unroll
                for (int u = 0; u < 8; u++)
                    if (s + u * lanes < splits)
                        v[u] = partial[(int64_t)(s + u * lanes) * n + o];
#pragma unroll
                for (int u = 0; u < 8; u++)
                    if (s + u * lanes < splits)
                        acc = r.comb(acc, v[u]);
            }
        for (int off = 16; off > 0; off >>= 1)
            acc = r.comb(acc, shfl_down(acc, off));
        if (lane == 0)
            smem[warp] = acc;
        __syncthreads();
        if (threadIdx.x % lanes == 0 && o < n) {
            acc = smem[warp];
            for (int w = 1; w < wpo; w++)
                acc = r.comb(acc, smem[warp + w]);
            r.store(acc, out, idx, o);
        }
        __syncthreads(); // smem is reused by the next outputs
    }
}

static int pow2_ceil(int64_t x, int cap)
{
    int p = 1;
    while (p < x && p < cap)
        p *= 2;
    return p;
}

// How an outer reduction is laid out: block (bx, by), splits of K, rows a split.
struct OuterPlan {
    int bx, by, splits;
    int64_t ktile, tiles;
    bool chunked; // splits walk interleaved chunks of K (reduce_outer)
};

// Threads across B (up to a warp of columns), the rest of the block down K;
// when the column tiles cannot fill the GPU, K is split over blocks until
// there are kOuterBlocksPerSm blocks an SM, keeping at least 16 rows a
// thread. Four blocks with 64 bytes in flight a thread cover HBM's latency,
// and more splits measured slower: each adds a stream of rows read at the
// same time far from the others. (A sweep on the H100 over 768..2048
// threads an SM and 32..128 columns: 1024 and 32 were best or within 1 % of
// it for every shape and dtype, float32 square 95 -> 97.7 % and float16
// 88 -> 93 % of the copy bandwidth; 128 bytes in flight was worse. On the
// H200, eight blocks lost 7 to 15 points for every type, and 16-byte loads
// of eight 16-bit values 5 to 10. bfloat16 read better with six blocks than
// with four only while ptxas held the kernel to six blocks' registers.)
inline OuterPlan plan_outer(int64_t A, int64_t K, int64_t B, int V, int splits_fixed)
{
    OuterPlan p;
    int64_t cb = (B + V - 1) / V;
    p.bx = pow2_ceil(cb, 32);
    p.by = kOuterThreads / p.bx;
    if (K < p.by) {
        p.by = pow2_ceil(K, kOuterThreads);
        p.bx = pow2_ceil(cb, kOuterThreads / p.by);
    }
    // Few rows a thread (a short K, as x.sum(0) of [16, 2^22]): move threads
    // from K to the columns, so that each walks its column with its loads in
    // flight instead of meeting the others in a shared-memory tree.
    while (p.by > 1 && K < (int64_t)p.by * 16 && p.bx * 2 <= pow2_ceil(cb, kOuterThreads)) {
        p.bx *= 2;
        p.by /= 2;
    }
    p.tiles = A * ((cb + p.bx - 1) / p.bx);
    int64_t want = (int64_t)sm_count() * (kOuterBlocksPerSm * kOuterThreads / (p.bx * p.by));
    int64_t s = 1;
    if (splits_fixed > 0) {
        s = splits_fixed;
    } else if (p.tiles < want) {
        s = want / p.tiles;
        int64_t by_work = K / ((int64_t)p.by * 16);
        if (s > by_work)
            s = by_work;
        if (s > 65535)
            s = 65535;
        if (s < 1)
            s = 1;
    }
    p.ktile = K > 0 ? (K + s - 1) / s : 1;
    p.splits = K > 0 ? (int)((K + p.ktile - 1) / p.ktile) : 1;
    // Many splits (few column tiles: a tall or short-row x.sum(0)) walk
    // interleaved chunks of K rather than a range each. On the H200, in the
    // library, one process: float16 sums of [65536, 1024] (66 splits) and of
    // [2^22, 16] and [2^20, 64] (528) 89.6 / 89.0 / 87.2 -> 91.2 / 91.7 /
    // 90.6 % of the copy bandwidth, float32 the same or up to 0.4 points
    // faster, bfloat16 the same; with 8 splits (the square) ranges measured
    // 1.7 points faster in a standalone kernel. Chunking is a template
    // argument of reduce_outer, not a flag: with both walks behind a runtime
    // flag, nvcc issued the float16 and float32 loads one at a time (62 % of
    // the copy bandwidth).
    p.chunked = p.splits > 16;
    return p;
}

// How an inner reduction is laid out: threads per row, rows per block, splits.
struct Plan {
    int g, rows, splits;
};

// How many blocks of reduce_inner<Rd, T> run at once on the current device.
template <class Rd, class T> int resident_blocks()
{
    static int cache[64];
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= 64)
        return sm_count() * 2;
    if (!cache[dev]) {
        int per_sm = 0;
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce_inner<Rd, T>, kMaxThreads, 0) !=
                cudaSuccess ||
            per_sm <= 0) {
            (void)cudaGetLastError(); // the query failed: clear it, assume 2
            per_sm = 2;
        }
        cache[dev] = per_sm * sm_count();
    }
    return cache[dev];
}

template <class Rd, class T> Plan plan_inner(int64_t A, int64_t K)
{
    constexpr int N = 16 / sizeof(T) > 0 ? 16 / sizeof(T) : 1;
    Plan p{32, 8, 1};
    if (K < 2048) {
        // Short rows: the narrowest group (a power of two up to a warp)
        // that leaves each thread about 4 packs, so their loads are in
        // flight together and no lanes idle: a warp on a float16 row of 16
        // read 2 packs with 30 lanes idle.
        int64_t packs = (K + N - 1) / N;
        p.g = 1;
        while (p.g < 32 && (int64_t)p.g * 4 < packs)
            p.g *= 2;
        p.rows = 256 / p.g;
    } else {
        p.g = kMaxThreads;
        p.rows = 1;
        // Too few rows to fill the GPU: split each row so that the grid is
        // exactly what the device holds at once (one wave), but never so
        // thin that a thread gets fewer than 4 packs.
        int64_t want = resident_blocks<Rd, T>();
        if (A < want) {
            int64_t by_work = K / ((int64_t)kMaxThreads * N * 4);
            int64_t s = want / A;
            if (s > by_work)
                s = by_work;
            if (s > 65535)
                s = 65535;
            p.splits = s > 1 ? (int)s : 1;
        } else {
            // Rows enough to fill the GPU: narrow the group until each
            // thread has 4 packs, so that the loop keeps 4 loads in flight
            // (a float16 row of 8192 is 2 packs for 512 threads, read one
            // load at a time).
            while (p.g > 128 && K / N < (int64_t)p.g * 4)
                p.g /= 2;
        }
    }
    return p;
}

// Scratch bytes that run_abk<Rd, T> needs for the partials of a split.
template <class Rd, class T> size_t abk_workspace(int64_t A, int64_t K, int64_t B)
{
    if (B != 1) {
        constexpr int V = outer_vec<T>();
        OuterPlan q = plan_outer(A, K, B, B % V == 0 ? V : 1, 0);
        return q.splits > 1 ? (size_t)A * B * q.splits * sizeof(typename Rd::Acc) : 0;
    }
    Plan p = plan_inner<Rd, T>(A, K);
    return p.splits > 1 ? (size_t)A * p.splits * sizeof(typename Rd::Acc) : 0;
}

template <int OP, class T> size_t workspace_for(int64_t A, int64_t K, int64_t B)
{
    using Rd = typename RedOf<OP, T>::type;
    if constexpr (std::is_void_v<Rd>)
        return 0;
    else
        return abk_workspace<Rd, T>(A, K, B);
}

// Whether a split reduction combines its splits in its own launch (the
// counters sem, or NULL: a second launch). One launch saves the second one's
// host cost, 1.5 to 4 us a call; two launches end about 1 us sooner on the
// device, since the second, launched early with PDL, is already waiting when
// the first ends, while the last block's fence, count and reads follow its
// own streaming. So one launch where the host is the bottleneck: inputs of
// up to 16 MiB, and (outer) only when the last block reads at most 16
// partials a thread (loads). Measured on the H100 against two launches, in
// one process: x.sum() of 2^20 float32 7.5 -> 5.6 us, a bias gradient
// [512, 768].sum(0) 9.8 -> 7.0 us, [4096, 1024] float32 9.5 -> 9.1 us;
// [8192, 256] float32 (64 splits of 2 tiles, 32 loads a thread) 7.5 -> 8.3
// us, hence the load limit; from 25 MiB one launch was 0.1 to 3 us slower.
inline unsigned *one_launch_sem(unsigned *sem, size_t bytes, int64_t counters, int64_t loads)
{
    return bytes <= ((size_t)16 << 20) && counters <= PCS_STREAM_SEMAPHORES && loads <= 16 ? sem : nullptr;
}

// out[a, b] = r over in[a, :, b] for a contiguous [A, K, B] input: the
// inner kernel when B == 1, the outer one otherwise.
template <class Rd, class T>
void run_abk(const Rd &r, typename Rd::Out *o, int64_t *idx, const T *x, int64_t A, int64_t K,
             int64_t B, void *ws, cudaStream_t s, unsigned *sem = nullptr)
{
    if (A * B == 0)
        return;
    if (B != 1) {
        // The split count is fixed by the vector plan (the workspace was
        // sized for it); a misaligned input keeps it with scalar loads.
        constexpr int V = outer_vec<T>();
        bool vec = V > 1 && B % V == 0 && (uintptr_t)x % (sizeof(T) * V) == 0;
        OuterPlan q = plan_outer(A, K, B, B % V == 0 ? V : 1, 0);
        if (!vec)
            q = plan_outer(A, K, B, 1, q.splits);
        auto *partial = (typename Rd::Acc *)ws;
        dim3 grid((unsigned)(q.tiles < 0x7fffffff ? q.tiles : 0x7fffffff), q.splits);
        dim3 block(q.bx, q.by);
        const size_t bytes = (size_t)(A * K * B) * sizeof(T);
        const int64_t loads = (q.splits + q.by - 1) / q.by * (vec ? V : 1); // a thread's, in the last block
        unsigned *tsem = q.splits > 1 ? one_launch_sem(sem, bytes, q.tiles, loads) : nullptr; // a counter a tile
        if (vec && q.chunked)
            launch_kernel_pdl(reduce_outer<Rd, T, V, true>, grid, block, s, r, x, A, K, B, q.ktile, partial, o, idx,
                              tsem);
        else if (vec)
            launch_kernel_pdl(reduce_outer<Rd, T, V, false>, grid, block, s, r, x, A, K, B, q.ktile, partial, o, idx,
                              tsem);
        else
            launch_kernel_pdl(reduce_outer<Rd, T, 1, false>, grid, block, s, r, x, A, K, B, q.ktile, partial, o, idx,
                              tsem);
        if (q.splits > 1 && !tsem) {
            int64_t n = A * B, cap = (int64_t)sm_count() * 16;
            if (q.splits >= 32) {
                // Few outputs, many splits: warps an output, at most eight
                // loads a lane, one round (66 splits: a warp; 528: four).
                int wpo = 1;
                while (wpo < 8 && wpo * 256 <= q.splits)
                    wpo *= 2;
                int64_t blocks = (n * wpo + 7) / 8;
                launch_kernel_pdl(reduce_outer_partials_lanes<Rd>, (unsigned)(blocks < cap ? blocks : cap), 256, s, r,
                                  (const typename Rd::Acc *)partial, q.splits, n, wpo, o, idx);
                return;
            }
            // Outputs across (up to a warp, coalesced), splits down: about
            // eight a thread, so the loads of one output are in flight together.
            int px = pow2_ceil(n, 32);
            int py = pow2_ceil((q.splits + 7) / 8, kPartialsThreads / px);
            if (px * py < 256)
                px = pow2_ceil(n, 256 / py);
            int64_t blocks = (n + px - 1) / px;
            launch_kernel_pdl(reduce_outer_partials<Rd>, (unsigned)(blocks < cap ? blocks : cap), dim3(px, py), s,
                              r, (const typename Rd::Acc *)partial, q.splits, n, o, idx);
        }
        return;
    }
    Plan p = plan_inner<Rd, T>(A, K);
    constexpr int N = 16 / sizeof(T) > 0 ? 16 / sizeof(T) : 1;
    bool vec = ((uintptr_t)x % 16) == 0 && (K % N == 0 || A == 1) && N > 1;
    dim3 block(p.g, p.rows), grid((unsigned)((A + p.rows - 1) / p.rows), p.splits);
    auto *partial = (typename Rd::Acc *)ws;
    const size_t bytes = (size_t)(A * K) * sizeof(T);
    const int64_t loads = (p.splits + p.g - 1) / p.g; // a thread's, in the last block
    unsigned *rsem = p.splits > 1 ? one_launch_sem(sem, bytes, A, loads) : nullptr; // a counter a row
    launch_kernel_pdl(reduce_inner<Rd, T>, grid, block, s, r, x, A, K, p.splits, partial, o, idx, vec, rsem);
    if (p.splits > 1 && !rsem)
        launch_kernel_pdl(reduce_partials<Rd>, (unsigned)A, 256, s, r, partial, p.splits, o, idx);
}

} // namespace
