// softmax_cluster.cuh: softmax and log_softmax of long rows a little over one
// wave, each row split over a cluster of CS blocks (compute capability 9.0).
//
// A block a row holds at most one row of 128 KiB an SM (in registers, or
// in shared memory), so 133 rows of 65536 float16 values on 132 SMs ran
// as two waves, or as a block a row reading its row twice with one
// block's loads in flight (0.81x torch). Here the CS blocks of a cluster
// each keep their share of the row (a contiguous run of its packs, at most
// 64 KiB, so three blocks fit an SM; or, in clusters of 3 blocks of 256
// threads, at most 44 KiB, five an SM) in shared memory, read once; their
// maxima and sums meet through distributed shared memory in rank order, so
// every block of the row, and every run, gets the same statistics; each
// block then writes its share from shared memory.
#pragma once

#include <cooperative_groups.h>

#include "pdl.cuh"
#include "softmax_rows.cuh"

namespace pcs {
namespace softmax_cluster {
using namespace softmax_rows;

// Packs a thread keeps in flight while it loads its block's share.
constexpr int CLUSTER_UNROLL = 4;

// v combined over the CS blocks of the cluster (OP 0: NaN-first max, 1:
// sum), in rank order; slot is this block's shared word for it, written by
// thread 0 (v is the same in every thread of the block).
template <int OP, int CS, class A> __device__ __forceinline__ A cluster_combine(A v, A *slot)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    namespace cg = cooperative_groups;
    cg::cluster_group cl = cg::this_cluster();
    if (threadIdx.x == 0)
        *slot = v;
    cl.sync(); // every block's word is written
    A r = *cl.map_shared_rank(slot, 0);
#pragma unroll
    for (int c = 1; c < CS; c++) {
        const A o = *cl.map_shared_rank(slot, c);
        r = OP == 0 ? nan_max(r, o) : r + o;
    }
    return r;
#else
    return v;
#endif
}

// The kernel: block b is rank b % CS of row b / CS's cluster; the grid is
// rows * CS blocks of NT threads, launched with cluster dimension CS and
// (packs of the row / CS, rounded up) * 16 bytes of dynamic shared memory;
// MINB blocks an SM (3 of 512 threads with shares up to 64 KiB, 5 of 256
// with shares up to 44 KiB).
template <class T, int VEC, bool LOG, int CS, int NT = BLOCK, int MINB = 3>
__global__ void __launch_bounds__(NT, MINB) softmax_cluster_rows(T *out, const T *in, int64_t K)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    pdl_wait(); // launched early (pdl.cuh): nothing global before this
    namespace cg = cooperative_groups;
    using A = compute_t<T>;
    using P = Pack<T, VEC>;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    P *cache = reinterpret_cast<P *>(smem_raw);
    __shared__ A red[NT / 32], xch[2];
    const int rank = (int)(blockIdx.x % CS);
    const int64_t row = blockIdx.x / CS;
    const T *xr = in + row * K;
    const RowParts<T, VEC> pt(xr, K);
    const P *x = reinterpret_cast<const P *>(xr + pt.h);
    const int64_t share = (pt.nvec + CS - 1) / CS, lo = rank * share;
    const int64_t hi = lo + share < pt.nvec ? lo + share : pt.nvec;
    const int64_t e = rank == 0 ? pt.extra(threadIdx.x) : -1; // the scalar ends go to rank 0
    A ev = e >= 0 ? to_c<A>(xr[e]) : neg_inf<A>(), m = ev;
    // Loads as 16-byte words, CLUSTER_UNROLL in flight, stored to shared
    // memory as loaded (an array of bfloat16 packs in their place spilled
    // 42 bytes a thread); each thread reads back only what it wrote, so no
    // barrier is needed before the block's reductions.
    for (int64_t i0 = lo + threadIdx.x; i0 < hi; i0 += CLUSTER_UNROLL * NT) {
        uint4 raw[CLUSTER_UNROLL];
#pragma unroll
        for (int u = 0; u < CLUSTER_UNROLL; u++)
            if (i0 + u * NT < hi)
                raw[u] = *reinterpret_cast<const uint4 *>(x + i0 + u * NT);
#pragma unroll
        for (int u = 0; u < CLUSTER_UNROLL; u++) {
            if (i0 + u * NT < hi) {
                reinterpret_cast<uint4 *>(cache)[i0 + u * NT - lo] = raw[u];
                const P pk = from_words<P>(raw[u]);
#pragma unroll
                for (int j = 0; j < VEC; j++)
                    m = nan_max(m, to_c<A>(pk.v[j]));
            }
        }
    }
    m = cluster_combine<0, CS>(block_reduce<0, NT / 32>(m, red), &xch[0]);
    const RowExp<T> ex(m);
    A s = A(0);
    if (e >= 0)
        s += ex(ev);
    for (int64_t i = lo + threadIdx.x; i < hi; i += NT) {
        const P pk = cache[i - lo];
#pragma unroll
        for (int j = 0; j < VEC; j++)
            s += ex(to_c<A>(pk.v[j]));
    }
    s = cluster_combine<1, CS>(block_reduce<1, NT / 32>(s, red), &xch[1]);
    const A k_ = row_k(s, LOG);
    T *yr = out + row * K;
    P *y = reinterpret_cast<P *>(yr + pt.h);
    if (e >= 0)
        yr[e] = from_c<T>(finish<LOG>(ev, ex, k_));
    for (int64_t i = lo + threadIdx.x; i < hi; i += NT) {
        const P pk = cache[i - lo];
        P o;
#pragma unroll
        for (int j = 0; j < VEC; j++)
            o.v[j] = from_c<T>(finish<LOG>(to_c<A>(pk.v[j]), ex, k_));
        y[i] = o;
    }
    cg::this_cluster().sync(); // the others have read this block's sum word
#endif
}

// Launches softmax_cluster_rows kernel k (of T) over grid blocks in
// clusters of cs. A launch the device refuses (clusters it cannot place,
// as under some sharing modes) is cleared and false returned, so that the
// caller runs its other kernels instead.
template <class T>
inline bool launch_cluster_rows(const void *k, T *out, const T *in, int64_t K, dim3 grid, int cs, int nt, size_t smem,
                                cudaStream_t st)
{
    void *params[] = {(void *)&out, (void *)&in, (void *)&K};
    if (launch_raw_cluster(k, grid, dim3((unsigned)nt), smem, params, st, (unsigned)cs) == cudaSuccess)
        return true;
    (void)cudaGetLastError();
    return false;
}

} // namespace softmax_cluster
} // namespace pcs
