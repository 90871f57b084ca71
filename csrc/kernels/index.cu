// index.cu: advanced indexing, gather and scatter, behind the launchers of
// index.h (nonzero and masked_select's compaction are in compact.cu).
//
// Every op reduces to element offsets (index.h says how): one kernel turns
// the geometry into offsets (or gathers through them directly), reporting a
// bad index in a host-mapped record, so the host checks the range without a
// copy and no device-side assert (which would kill the context) runs.
// Gathers move bytes per element size (whole rows with 16-byte accesses in
// the common one-index case); deterministic scatters sort the offsets (CUB
// radix sort, stable) and reduce the runs of equal offsets with
// cub::DeviceReduce::ReduceByKey; the default ADD of int32/int64/float32/float64 and SET use
// atomics / plain stores instead (index_exec.c decides).
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cuda/std/limits>

#include "ew_common.cuh"
#include "index.h"
#include "offsets.cuh"
#include "pdl.cuh"

using namespace pcs;

namespace {

struct alignas(16) Bytes16 {
    uint64_t lo, hi;
};

inline dim3 grid_for(int64_t n, int block)
{
    int64_t blocks = (n + block - 1) / block, cap = (int64_t)sm_count() * 32;
    return dim3((unsigned)(blocks < cap ? (blocks > 0 ? blocks : 1) : cap));
}

// ---------------------------------------------------------------------------
// Offsets, and the gather that reads through them

// A bad index: recorded in the host-mapped record (rare; plain stores, any
// one bad value per index tensor will do), made visible to the host before
// the block counts itself finished (report_done).
__device__ __noinline__ void report_bad(pcs_index_err *err, int k, int64_t v)
{
    err->value[k] = v;
    err->bad[k] = 1;
    __threadfence_system();
}

// The end of every block of a launch that reports into rep: the last block
// to finish puts the counter back to 0 and sets the record's done flag. The
// host reads the flag instead of recording and querying an event after the
// launch (about 0.4 us of host time an op). report_bad made its writes
// visible to the host before its block reached the barrier below, so they
// precede the block's count and the done flag. A grid of one block (the
// small ops) needs no count. rep.blocks is the same for the whole grid, so
// the barrier is reached by every thread or none.
__device__ __forceinline__ void report_done(const pcs_index_report &rep)
{
    if (!rep.blocks)
        return;
    __syncthreads();
    if (threadIdx.x != 0)
        return;
    const unsigned nb = gridDim.x * gridDim.y * gridDim.z;
    if (nb > 1) {
        if (atomicAdd(rep.blocks, 1u) != nb - 1)
            return;
        *rep.blocks = 0; // for the record's next launch
    }
    __threadfence(); // the count (and the reset) before the flag
    *(volatile unsigned *)&rep.rec->done = 1;
}

// The geometry as a kernel parameter, with a multiply-shift divider
// (offsets.cuh's FastDiv) for each result size, for the 32-bit coordinate
// path (results under 2^31 elements): a divide by a value known only at run
// time is some 20 instructions, this is 3, and the address arithmetic is
// most of what a gather thread does besides waiting for memory. ONE (a
// single index tensor, the common case) keeps one index tensor's strides:
// about 600 bytes of parameters instead of 2.9 KB, which the launch copies
// (0.3 us of host time on the H100).
template <bool ONE> struct Geom {
    static constexpr int NI = ONE ? 1 : PCS_MAX_DIMS;
    int ndim, nidx;
    unsigned nowrap;
    int64_t base;
    int64_t sizes[PCS_MAX_DIMS];
    int64_t bstride[PCS_MAX_DIMS];
    const int64_t *idx[NI];
    int64_t istride[NI][PCS_MAX_DIMS];
    int64_t isize[NI];
    int64_t wstride[NI];
    FastDiv div[PCS_MAX_DIMS];
};

template <bool ONE> Geom<ONE> make_geom(const pcs_index_geom &g)
{
    Geom<ONE> f;
    f.ndim = g.ndim;
    f.nidx = g.nidx;
    f.nowrap = g.nowrap;
    f.base = g.base;
    for (int d = 0; d < PCS_MAX_DIMS; d++) {
        const bool in = d < g.ndim;
        f.sizes[d] = in ? g.sizes[d] : 1;
        f.bstride[d] = in ? g.bstride[d] : 0;
        f.div[d].init(in && g.sizes[d] > 0 && g.sizes[d] <= INT32_MAX ? (uint32_t)g.sizes[d] : 1);
    }
    for (int k = 0; k < Geom<ONE>::NI; k++) {
        const bool in = k < g.nidx;
        f.idx[k] = in ? g.idx[k] : nullptr;
        f.isize[k] = in ? g.isize[k] : 0;
        f.wstride[k] = in ? g.wstride[k] : 0;
        for (int d = 0; d < PCS_MAX_DIMS; d++)
            f.istride[k][d] = in && d < g.ndim ? g.istride[k][d] : 0;
    }
    return f;
}

// The offset of result element i (index.h's formula), or -1 when one of its
// indices is out of range (reported in err). I: the type
// coordinates are split in (32 bits when the result has under 2^31
// elements, with the dividers above). ONE: a single index tensor (gather,
// scatter, index_select, x[idx]), whose running index offset stays in a
// register; the general case keeps one per index tensor in an array that
// the run-time count leaves in local memory.
template <class I, bool ONE>
__device__ __forceinline__ int64_t index_offset(const Geom<ONE> &g, I i, pcs_index_err *err)
{
    bool bad = false;
    I rem = i;
    int64_t off = g.base, ioff[ONE ? 1 : PCS_MAX_DIMS];
    const int nidx = ONE ? 1 : g.nidx;
    for (int k = 0; k < nidx; k++)
        ioff[k] = 0;
    for (int d = g.ndim - 1; d >= 0; d--) {
        I s = (I)g.sizes[d], q;
        if constexpr (sizeof(I) == 4)
            q = g.div[d].div(rem);
        else
            q = rem / s;
        const I c = rem - q * s;
        rem = q;
        off += (int64_t)c * g.bstride[d];
        for (int k = 0; k < nidx; k++)
            ioff[k] += (int64_t)c * g.istride[k][d];
    }
    for (int k = 0; k < nidx; k++) {
        int64_t v = g.idx[k][ioff[k]];
        const int64_t lo = (g.nowrap >> k) & 1u ? 0 : -g.isize[k];
        int64_t w = v < 0 ? v + g.isize[k] : v;
        if (v < lo || v >= g.isize[k]) {
            report_bad(err, k, v);
            bad = true; // reported, never followed
        }
        off += w * g.wstride[k];
    }
    return bad ? -1 : off;
}

// f(std::bool_constant<g.nidx == 1>): the kernel variant for the geometry.
template <class F> void by_nidx(const pcs_index_geom &g, F &&f)
{
    if (g.nidx == 1)
        f(std::true_type{});
    else
        f(std::false_type{});
}

constexpr int UNROLL = 4;

template <class I, bool ONE>
__global__ void __launch_bounds__(256) offsets_kernel(Geom<ONE> g, int64_t *out, I n, pcs_index_report rep)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    const I step = (I)gridDim.x * blockDim.x;
    for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        out[i] = index_offset<I, ONE>(g, i, rep.rec);
    }
    report_done(rep);
}

// x[idx], gather, take in one pass: no offsets in memory; UNROLL elements a
// thread (a block covers UNROLL * 256 consecutive ones, each access still
// coalesced), the index loads of all of them issued before the dependent
// reads of src. A bad index reads element 0 (in bounds); the host reports
// it at the next synchronising call.
template <class E, class I, bool ONE>
__global__ void __launch_bounds__(256) gather_fused(Geom<ONE> g, E *out, const E *src, I n, pcs_index_report rep)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    const I step = (I)gridDim.x * blockDim.x * UNROLL;
    for (I i0 = (I)blockIdx.x * blockDim.x * UNROLL + threadIdx.x; i0 < n; i0 += step) {
        int64_t off[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            I i = i0 + (I)u * blockDim.x;
            off[u] = i < n ? index_offset<I, ONE>(g, i, rep.rec) : 0;
            off[u] = off[u] < 0 ? 0 : off[u];
        }
        E v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++)
            if (i0 + (I)u * blockDim.x < n)
                v[u] = src[off[u]];
#pragma unroll
        for (int u = 0; u < UNROLL; u++)
            if (i0 + (I)u * blockDim.x < n)
                out[i0 + (I)u * blockDim.x] = v[u];
    }
    report_done(rep);
}

inline dim3 grid_unrolled(int64_t n, int block)
{
    return grid_for((n + UNROLL - 1) / UNROLL, block);
}

template <class E>
void gather_geom(const pcs_index_geom *g, void *out, const void *src, int64_t n, pcs_index_report rep,
                 cudaStream_t st)
{
    by_nidx(*g, [&](auto one) {
        constexpr bool ONE = decltype(one)::value;
        if (n <= INT32_MAX - 4 * 256 * UNROLL)
            launch_kernel_pdl(gather_fused<E, uint32_t, ONE>, grid_unrolled(n, 256), 256, st,
                          make_geom<ONE>(*g), (E *)out, (const E *)src, (uint32_t)n, rep);
        else
            launch_kernel_pdl(gather_fused<E, int64_t, ONE>, grid_unrolled(n, 256), 256, st,
                          make_geom<ONE>(*g), (E *)out, (const E *)src, n, rep);
    });
}

// Rows: V-byte chunks; chunk e of the result is chunk c = e % per of row
// r = e / per, read from src row wrap(idx[r]). per == 1 (one chunk a row,
// the x[idx] case) skips the division.
template <class V, bool ONE>
__global__ void __launch_bounds__(256) gather_rows_kernel(const int64_t *__restrict__ idx, int64_t isize, int64_t lo,
                                                          V *__restrict__ out, const char *__restrict__ src,
                                                          int64_t base, int64_t wbytes, int64_t per,
                                                          int64_t total, pcs_index_report rep)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    const int64_t step = (int64_t)gridDim.x * blockDim.x * UNROLL;
    for (int64_t e0 = (int64_t)blockIdx.x * blockDim.x * UNROLL + threadIdx.x; e0 < total; e0 += step) {
        const V *p[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            int64_t e = e0 + (int64_t)u * blockDim.x;
            int64_t r = ONE ? e : e / per, c = ONE ? 0 : e - r * per;
            int64_t v = e < total ? idx[r] : 0;
            int64_t w = v < 0 ? v + isize : v;
            if (v < lo || v >= isize) {
                report_bad(rep.rec, 0, v);
                w = 0;
            }
            p[u] = (const V *)(src + base + w * wbytes) + c;
        }
        V x[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++)
            if (e0 + (int64_t)u * blockDim.x < total)
                x[u] = *p[u];
#pragma unroll
        for (int u = 0; u < UNROLL; u++)
            if (e0 + (int64_t)u * blockDim.x < total)
                out[e0 + (int64_t)u * blockDim.x] = x[u];
    }
    report_done(rep);
}

template <class V>
void gather_rows(const int64_t *idx, int64_t nrows, int64_t isize, int64_t lo, void *out, const void *src,
                 int64_t base, int64_t wbytes, int64_t rowbytes, pcs_index_report rep, cudaStream_t st)
{
    int64_t per = rowbytes / (int64_t)sizeof(V), total = nrows * per;
    if (per == 1)
        launch_kernel_pdl(gather_rows_kernel<V, true>, grid_unrolled(total, 256), 256, st, idx, isize, lo,
                      (V *)out, (const char *)src, base, wbytes, per, total, rep);
    else
        launch_kernel_pdl(gather_rows_kernel<V, false>, grid_unrolled(total, 256), 256, st, idx, isize, lo,
                      (V *)out, (const char *)src, base, wbytes, per, total, rep);
}

// ---------------------------------------------------------------------------
// Scatter without sorting: atomics (ADD) or plain stores (SET)

// The offsets computed on the fly, elements with a bad index reported and
// skipped: no offsets array in memory, no sort, no separate range check. UNROLL elements a thread, as in
// gather_fused: the index and value loads of all of them issued before the
// atomics, so more of them are in flight.
template <class T, class I, bool ONE>
__global__ void __launch_bounds__(256) scatter_atomic_kernel(Geom<ONE> g, T *dst, const T *vals, I n,
                                                             int add, pcs_index_report rep)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    const I step = (I)gridDim.x * blockDim.x * UNROLL;
    for (I i0 = (I)blockIdx.x * blockDim.x * UNROLL + threadIdx.x; i0 < n; i0 += step) {
        int64_t off[UNROLL];
        T v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            I i = i0 + (I)u * blockDim.x;
            off[u] = i < n ? index_offset<I, ONE>(g, i, rep.rec) : -1;
            if (i < n)
                v[u] = vals[i];
        }
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            if (off[u] < 0)
                continue;
            T *d = dst + off[u];
            if (!add) {
                *d = v[u];
            } else if constexpr (std::is_same_v<T, int64_t>) {
                atomicAdd((unsigned long long *)d, (unsigned long long)v[u]);
            } else if constexpr (std::is_same_v<T, int32_t> || std::is_same_v<T, float> ||
                                 std::is_same_v<T, double>) {
                atomicAdd(d, v[u]);
            }
        }
    }
    report_done(rep);
}

template <class T>
void scatter_atomic(const pcs_index_geom *g, void *dst, const void *vals, int64_t n, int add,
                    pcs_index_report rep, cudaStream_t st)
{
    by_nidx(*g, [&](auto one) {
        constexpr bool ONE = decltype(one)::value;
        if (n <= INT32_MAX - 4 * 256 * UNROLL)
            launch_kernel_pdl(scatter_atomic_kernel<T, uint32_t, ONE>, grid_unrolled(n, 256), 256, st,
                          make_geom<ONE>(*g), (T *)dst, (const T *)vals, (uint32_t)n, add, rep);
        else
            launch_kernel_pdl(scatter_atomic_kernel<T, int64_t, ONE>, grid_unrolled(n, 256), 256, st,
                          make_geom<ONE>(*g), (T *)dst, (const T *)vals, n, add, rep);
    });
}

// ---------------------------------------------------------------------------
// SET of many values, deterministically without sorting: the last writer in
// index order wins. Pass 1 claims each target for its highest position
// (atomicMax into win, one int32 a storage element, -1 beforehand); pass 2
// lets the winners write. Two light passes instead of a radix sort and a
// reduction, for targets small enough that win costs little to clear.

template <class I, bool ONE>
__global__ void __launch_bounds__(256) set_claim(Geom<ONE> g, int32_t *win, I n, pcs_index_err *err)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    const I step = (I)gridDim.x * blockDim.x;
    for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        const int64_t o = index_offset<I, ONE>(g, i, err);
        if (o >= 0)
            atomicMax(win + o, (int32_t)i);
    }
}

template <class E, class I, bool ONE>
__global__ void __launch_bounds__(256) set_write(Geom<ONE> g, E *dst, const E *vals, const int32_t *win, I n,
                                                 pcs_index_report rep)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    const I step = (I)gridDim.x * blockDim.x;
    for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        const int64_t o = index_offset<I, ONE>(g, i, rep.rec);
        if (o >= 0 && win[o] == (int32_t)i)
            dst[o] = vals[i];
    }
    report_done(rep);
}

// A few values (n <= PCS_SET_LAST_ONE_BLOCK): one block clears the claims of
// its targets, claims, and writes, with a barrier between the steps, in one
// launch and no memset (x[idx] = v of 1024 values had cost 10 us of host
// time, a memset and two launches, against torch's 7).
constexpr int ONE_BLOCK_THREADS = 1024, ONE_BLOCK_ITEMS = PCS_SET_LAST_ONE_BLOCK / ONE_BLOCK_THREADS;

template <class E, bool ONE>
__global__ void __launch_bounds__(ONE_BLOCK_THREADS) set_last_block(Geom<ONE> g, E *dst, const E *vals, int32_t *win,
                                                                    uint32_t n, pcs_index_report rep)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    int64_t o[ONE_BLOCK_ITEMS];
#pragma unroll
    for (int u = 0; u < ONE_BLOCK_ITEMS; u++) {
        const uint32_t i = u * ONE_BLOCK_THREADS + threadIdx.x;
        o[u] = i < n ? index_offset<uint32_t, ONE>(g, i, rep.rec) : -1;
        if (o[u] >= 0)
            win[o[u]] = -1;
    }
    __syncthreads(); // the block's global writes are seen by the block after it
#pragma unroll
    for (int u = 0; u < ONE_BLOCK_ITEMS; u++)
        if (o[u] >= 0)
            atomicMax(win + o[u], (int32_t)(u * ONE_BLOCK_THREADS + threadIdx.x));
    __syncthreads();
#pragma unroll
    for (int u = 0; u < ONE_BLOCK_ITEMS; u++) {
        const uint32_t i = u * ONE_BLOCK_THREADS + threadIdx.x;
        if (o[u] >= 0 && win[o[u]] == (int32_t)i)
            dst[o[u]] = vals[i];
    }
    report_done(rep);
}

template <class E>
void set_last(const pcs_index_geom *g, void *dst, const void *vals, int64_t n, int32_t *win,
              pcs_index_report rep, cudaStream_t st)
{
    by_nidx(*g, [&](auto one) {
        constexpr bool ONE = decltype(one)::value;
        const Geom<ONE> f = make_geom<ONE>(*g);
        if (n <= PCS_SET_LAST_ONE_BLOCK) {
            launch_kernel_pdl(set_last_block<E, ONE>, 1, ONE_BLOCK_THREADS, st, f, (E *)dst, (const E *)vals, win,
                          (uint32_t)n, rep);
            return;
        }
        launch_kernel_pdl(set_claim<uint32_t, ONE>, grid_for(n, 256), 256, st, f, win, (uint32_t)n,
                      rep.rec); // set_write, after it, marks the record final
        launch_kernel_pdl(set_write<E, uint32_t, ONE>, grid_for(n, 256), 256, st, f, (E *)dst, (const E *)vals,
                      (const int32_t *)win, (uint32_t)n, rep);
    });
}

// ---------------------------------------------------------------------------
// Scatter: runs of equal sorted offsets reduced by cub::DeviceReduce::
// ReduceByKey (a scan with a fixed tile structure: the same association of
// the run's values on every run, so float results are bit-identical from run
// to run, and long runs are reduced in parallel rather than by one thread),
// then one thread a run folds in dst itself and writes.

template <class C> __device__ __forceinline__ C combine(C acc, C v, int mode)
{
    switch (mode) {
    case PCS_SCATTER_MUL: return acc * v;
    case PCS_SCATTER_AMAX:
    case PCS_SCATTER_AMIN:
        if constexpr (!is_cx<C>) {
            if (is_nan(acc) || is_nan(v)) // NaN wins, as torch's amax/amin
                return is_nan(acc) ? acc : v;
            return mode == PCS_SCATTER_AMAX ? (v > acc ? v : acc) : (v < acc ? v : acc);
        } else {
            return acc;
        }
    default: return acc + v;
    }
}

// A run's reduction so far and how many values it holds (MEAN divides by it).
template <class C> struct RunAcc {
    C v;
    int64_t c;
};

// Associative, not commutative: a comes before b in index order, so SET
// keeps the last value of the run (the stable sort kept index order).
template <class C> struct RunOp {
    int mode;
    __device__ __forceinline__ RunAcc<C> operator()(const RunAcc<C> &a, const RunAcc<C> &b) const
    {
        if (mode == PCS_SCATTER_SET)
            return b;
        return {combine<C>(a.v, b.v, mode), a.c + b.c};
    }
};

// The value at sorted position j: vals[pos[j]], in the accumulation type.
template <class T> struct LoadAt {
    const T *vals;
    __device__ __forceinline__ RunAcc<compute_t<T>> operator()(int64_t p) const
    {
        return {to_c<compute_t<T>>(vals[p]), 1};
    }
};

template <class T>
__global__ void __launch_bounds__(256) scatter_apply(T *dst, const int64_t *key,
                                                     const RunAcc<compute_t<T>> *agg,
                                                     const int64_t *nruns, int mode, int self)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    using C = compute_t<T>;
    const int64_t n = *nruns, step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        const int64_t k = key[i];
        if (k < 0) // the run of bad indices (reported by the offsets kernel)
            continue;
        C acc = agg[i].v;
        int64_t cnt = agg[i].c;
        if (mode != PCS_SCATTER_SET && self) { // dst's own value first
            acc = combine<C>(to_c<C>(dst[k]), acc, mode);
            cnt++;
        }
        if (mode == PCS_SCATTER_MEAN) { // cnt: the run, plus self when included
            if constexpr (is_cx<C>) {
                acc = acc / C((typename C::value_type)cnt);
            } else if constexpr (std::is_floating_point_v<C>) {
                acc = acc / (C)cnt;
            } else { // integers: floor division, as torch
                C q = acc / (C)cnt;
                if (acc % (C)cnt != 0 && acc < 0)
                    q -= 1;
                acc = q;
            }
        }
        dst[k] = from_c<T>(acc);
    }
}

inline size_t round_up(size_t x) { return (x + 255) / 256 * 256; }

// temp NULL: *bytes = what the run needs (aggregates, the run count, CUB's
// storage). uniq: n int64 of scratch for the runs' offsets.
template <class T>
int scatter_sorted(T *dst, const int64_t *key, const int64_t *pos, const T *vals, int64_t n,
                   int mode, int self, void *temp, size_t *bytes, int64_t *uniq, cudaStream_t st)
{
    using A = RunAcc<compute_t<T>>;
    const size_t agg_bytes = round_up((size_t)n * sizeof(A)), head = agg_bytes + 256;
    auto in = thrust::make_transform_iterator(pos, LoadAt<T>{vals});
    size_t cub_bytes = 0;
    if (!temp) {
        if (cub::DeviceReduce::ReduceByKey(nullptr, cub_bytes, key, uniq, in, (A *)nullptr,
                                           (int64_t *)nullptr, RunOp<compute_t<T>>{mode}, n,
                                           st) != cudaSuccess)
            return -1;
        *bytes = head + cub_bytes;
        return 0;
    }
    A *agg = (A *)temp;
    int64_t *nruns = (int64_t *)((char *)temp + agg_bytes);
    cub_bytes = *bytes - head;
    if (cub::DeviceReduce::ReduceByKey((char *)temp + head, cub_bytes, key, uniq, in, agg, nruns,
                                       RunOp<compute_t<T>>{mode}, n, st) != cudaSuccess)
        return -1;
    launch_kernel_pdl(scatter_apply<T>, grid_for(n, 256), 256, st, dst, uniq, agg, nruns, mode, self);
    return 0;
}

__global__ void iota_kernel(int64_t *out, int64_t n)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        out[i] = i;
}

} // namespace

extern "C" int pcs_launch_index_offsets(const pcs_index_geom *g, int64_t *out, int64_t n,
                                        pcs_index_report rep, cudaStream_t stream)
{
    if (n <= 0)
        return 0;
    by_nidx(*g, [&](auto one) {
        constexpr bool ONE = decltype(one)::value;
        if (n <= INT32_MAX)
            launch_kernel_pdl(offsets_kernel<uint32_t, ONE>, grid_for(n, 256), 256, stream, make_geom<ONE>(*g),
                          out, (uint32_t)n, rep);
        else
            launch_kernel_pdl(offsets_kernel<int64_t, ONE>, grid_for(n, 256), 256, stream, make_geom<ONE>(*g),
                          out, n, rep);
    });
    return 0;
}

extern "C" int pcs_launch_index_gather_geom(const pcs_index_geom *g, void *out, const void *src,
                                            int itemsize, int64_t n, pcs_index_report rep,
                                            cudaStream_t stream)
{
    if (n <= 0)
        return 0;
    switch (itemsize) {
    case 1: gather_geom<uint8_t>(g, out, src, n, rep, stream); return 0;
    case 2: gather_geom<uint16_t>(g, out, src, n, rep, stream); return 0;
    case 4: gather_geom<uint32_t>(g, out, src, n, rep, stream); return 0;
    case 8: gather_geom<uint64_t>(g, out, src, n, rep, stream); return 0;
    case 16: gather_geom<Bytes16>(g, out, src, n, rep, stream); return 0;
    default: return -1;
    }
}

extern "C" int pcs_launch_index_gather_rows(const int64_t *idx, int64_t nrows, int64_t isize, bool wrap, void *out,
                                            const void *src, int64_t base, int64_t wbytes,
                                            int64_t rowbytes, pcs_index_report rep, cudaStream_t stream)
{
    if (nrows <= 0 || rowbytes <= 0)
        return 0;
    const int64_t lo = wrap ? -isize : 0; // the lowest index in range
    uint64_t a = (uint64_t)(uintptr_t)src | (uint64_t)(uintptr_t)out | (uint64_t)base |
                 (uint64_t)wbytes | (uint64_t)rowbytes;
    if (a % 16 == 0)
        gather_rows<Bytes16>(idx, nrows, isize, lo, out, src, base, wbytes, rowbytes, rep, stream);
    else if (a % 8 == 0)
        gather_rows<uint64_t>(idx, nrows, isize, lo, out, src, base, wbytes, rowbytes, rep, stream);
    else if (a % 4 == 0)
        gather_rows<uint32_t>(idx, nrows, isize, lo, out, src, base, wbytes, rowbytes, rep, stream);
    else if (a % 2 == 0)
        gather_rows<uint16_t>(idx, nrows, isize, lo, out, src, base, wbytes, rowbytes, rep, stream);
    else
        gather_rows<uint8_t>(idx, nrows, isize, lo, out, src, base, wbytes, rowbytes, rep, stream);
    return 0;
}

extern "C" int pcs_launch_index_scatter_atomic(int dtype, const pcs_index_geom *g, void *dst,
                                               const void *vals, int64_t n, int mode,
                                               pcs_index_report rep, cudaStream_t stream)
{
    if (mode != PCS_SCATTER_ADD && mode != PCS_SCATTER_SET)
        return -1;
    int add = mode == PCS_SCATTER_ADD;
    if (n <= 0)
        return 0;
    if (!add) { // plain stores move bytes: any dtype, by its size
        switch (dtype) {
        case PCS_BOOL: case PCS_UINT8: case PCS_INT8:
            scatter_atomic<uint8_t>(g, dst, vals, n, 0, rep, stream); return 0;
        case PCS_INT16: case PCS_FLOAT16: case PCS_BFLOAT16:
            scatter_atomic<uint16_t>(g, dst, vals, n, 0, rep, stream); return 0;
        case PCS_INT32: case PCS_FLOAT32:
            scatter_atomic<uint32_t>(g, dst, vals, n, 0, rep, stream); return 0;
        case PCS_INT64: case PCS_FLOAT64: case PCS_COMPLEX64:
            scatter_atomic<uint64_t>(g, dst, vals, n, 0, rep, stream); return 0;
        case PCS_COMPLEX128: scatter_atomic<Bytes16>(g, dst, vals, n, 0, rep, stream); return 0;
        default: return -1;
        }
    }
    switch (dtype) {
    case PCS_INT32: scatter_atomic<int32_t>(g, dst, vals, n, add, rep, stream); return 0;
    case PCS_INT64: scatter_atomic<int64_t>(g, dst, vals, n, add, rep, stream); return 0;
    case PCS_FLOAT32: scatter_atomic<float>(g, dst, vals, n, add, rep, stream); return 0;
    case PCS_FLOAT64: scatter_atomic<double>(g, dst, vals, n, add, rep, stream); return 0;
    default: return -1;
    }
}

extern "C" int pcs_launch_index_set_last(const pcs_index_geom *g, void *dst, const void *vals,
                                         int itemsize, int64_t n, int32_t *win, pcs_index_report rep,
                                         cudaStream_t stream)
{
    if (n <= 0)
        return 0;
    if (n > INT32_MAX)
        return -1;
    switch (itemsize) {
    case 1: set_last<uint8_t>(g, dst, vals, n, win, rep, stream); return 0;
    case 2: set_last<uint16_t>(g, dst, vals, n, win, rep, stream); return 0;
    case 4: set_last<uint32_t>(g, dst, vals, n, win, rep, stream); return 0;
    case 8: set_last<uint64_t>(g, dst, vals, n, win, rep, stream); return 0;
    case 16: set_last<Bytes16>(g, dst, vals, n, win, rep, stream); return 0;
    default: return -1;
    }
}

extern "C" int pcs_index_sort(void *temp, size_t *bytes, const int64_t *off, int64_t *off_sorted,
                              int64_t *pos_in, int64_t *pos_sorted, int64_t n, int bits,
                              cudaStream_t stream)
{
    if (temp && n > 0)
        launch_kernel_pdl(iota_kernel, grid_for(n, 256), 256, stream, pos_in, n);
    cudaError_t e = cub::DeviceRadixSort::SortPairs(temp, *bytes, off, off_sorted, pos_in, pos_sorted,
                                                    n, 0, bits, stream);
    return e == cudaSuccess ? 0 : -1;
}

extern "C" int pcs_launch_index_scatter(int dtype, void *dst, const int64_t *off_sorted,
                                        const int64_t *pos_sorted, const void *vals, int64_t n,
                                        int mode, int include_self, void *temp, size_t *bytes,
                                        int64_t *uniq, cudaStream_t stream)
{
    if (n <= 0) {
        *bytes = 0;
        return 0;
    }
    return dispatch_dtype(dtype, [&](auto tag) {
        using T = decltype(tag);
        return scatter_sorted<T>((T *)dst, off_sorted, pos_sorted, (const T *)vals, n, mode,
                                 include_self, temp, bytes, uniq, stream);
    });
}
