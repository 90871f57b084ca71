// sort.cu: sorting on the GPU, through CUB, behind the launchers of
// kernels.h's "sorting and selection" section: segmented sorts (values, and
// the int64 indices where each value came from), the picks that read one
// sorted row (kthvalue, median, nanmedian, mode), topk with small k (block
// sorts of tiles, then a sort of their candidates), and searchsorted. (unique
// and the histograms are in select.cu; the keys in sort_keys.cuh.)
//
// Sorting. The host hands over a contiguous [nseg, seglen] block (the sorted
// dim last). Every key is first mapped (sort_keys.cuh) to an unsigned integer of its width
// whose order is torch's order: integers with the sign bit flipped, floats
// with the usual sign twiddle, every NaN to the largest key (NaN sorts last,
// whatever its sign bit or payload: x86 makes 0/0 a negative NaN) and, when
// indices are wanted, -0.0 to +0.0's key (equal keys, so the stable sort
// keeps their order, as torch). Descending is the same sort of the
// complemented keys, which stays stable. So CUB sorts only four key types
// (uint8/16/32/64), ascending: one row with DeviceRadixSort, several with
// DeviceSegmentedSort, in double buffers so no copy is made. Values come back
// by un-mapping the keys; with indices, the zeros and NaNs (whose keys merged
// bit patterns) are read from the input through their index, so -0.0 stays
// -0.0 and NaN payloads survive.
// Indices sort as int32 (a row holds fewer than 2^31 elements) and are
// widened to int64 as they are written: 4 bytes less per element per pass.
#include <cub/block/block_load.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_run_length_encode.cuh>

#include "sort_keys.cuh"

using namespace pcs;

namespace {

// span != NULL: also the OR (span[0]) and the AND (span[1]) of all keys,
// whose XOR marks the bits on which some keys differ.
// K wider than the key (composite keys): the row number goes above the
// key's bits, so one sort of all rows keeps them apart.
template <class T, class K = ukey_t<T>>
__global__ void make_keys(const T *in, K *keys, int32_t *iota, int64_t n, int64_t seglen, bool desc,
                          ukey_t<T> *span)
{
    using U = ukey_t<T>;
    U o = 0, a = U(~U(0));
    GRID_STRIDE(i, n)
    {
        const U k = to_key(in[i], iota != nullptr, desc);
        if constexpr (sizeof(K) > sizeof(U))
            keys[i] = K(k) | (K(i / seglen) << (sizeof(U) * 8));
        else
            keys[i] = k;
        o |= k;
        a &= k;
        if (iota)
            iota[i] = (int32_t)(i % seglen);
    }
    if constexpr (sizeof(U) == 4 || sizeof(U) == 8) {
        if (!span) // uniform: the whole grid returns here or none of it
            return;
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) {
            o |= __shfl_xor_sync(0xffffffffu, o, off);
            a &= __shfl_xor_sync(0xffffffffu, a, off);
        }
        if ((threadIdx.x & 31) == 0) {
            using W = std::conditional_t<sizeof(U) == 8, unsigned long long, unsigned int>;
            atomicOr((W *)span, (W)o);
            atomicAnd((W *)span + 1, (W)a);
        }
    }
}

// The bits [0, b) on which the n keys of one row may differ, b >= 1: the
// keys' OR and AND, made with them, read back. That is a synchronisation,
// so only callers that wait for the device anyway ask for it (unique, whose
// result size is data-dependent), and only for integer keys of a long row,
// where the sort it shortens costs a thousand times more. Integers of a
// small range, the common case (indices, labels, token ids), then sort in
// 2 or 3 radix passes instead of 8.
template <class U> int span_bits(const U *span, cudaStream_t s, int *end_bit)
{
    U h[2];
    cudaError_t e = cudaMemcpyAsync(h, span, sizeof h, cudaMemcpyDeviceToHost, s);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(s);
    if (e != cudaSuccess)
        return (int)e;
    U diff = h[0] ^ h[1];
    int b = 1;
    while (b < (int)sizeof(U) * 8 && (diff >> b) != 0)
        b++;
    *end_bit = b;
    return 0;
}

// (K: the stored key type, whose low bits are the key.)
template <class T, class K>
__global__ void keys_to_values(const K *keys, T *values, int64_t n, bool desc)
{
    GRID_STRIDE(i, n) values[i] = from_key<T>(ukey_t<T>(keys[i]), desc);
}

// The outputs of a sort with indices: indices widened to int64; values
// un-mapped from the sorted keys, except the two keys that merged several bit
// patterns (zero: -0.0 and +0.0; NaN: every payload), which are read back
// from the input through the index, so every value keeps its bits while the
// common case stays a coalesced pass.
template <class T, class K>
__global__ void finish_pairs(const T *in, const K *keys, const int32_t *idx, T *values,
                             int64_t *indices, int64_t n, int64_t seglen, bool desc)
{
    using U = ukey_t<T>;
    constexpr U top = U(U(1) << (sizeof(U) * 8 - 1));
    GRID_STRIDE(i, n)
    {
        int32_t j = idx[i];
        if (indices)
            indices[i] = j;
        if (!values)
            continue;
        U u = U(keys[i]);
        U asc = desc ? U(~u) : u;
        if (is_flt<T> && (asc == top || asc == U(~U(0))))
            values[i] = in[i - i % seglen + j];
        else
            values[i] = from_key<T>(u, desc);
    }
}

// Rows sorted together, in one device-wide sort, rather than by
// DeviceSegmentedSort, which gives each row a single block ([8, 2^16]
// float32 ran at 0.32x torch, [64, 2^18] at 0.65x; 1.61x and 1.01x
// together, H100): up to max_rows rows of more than 16384 keys. Rows of
// 2^20 keys and more, when few enough, sort one at a time instead (the
// extra key bits cost more passes than the launches they save); short rows
// (a block sorts one in shared memory) and more rows keep the segmented
// sort. Returns the bits of a row number (0: not together).
int together_bits(int64_t nseg, int64_t seglen, int64_t max_rows)
{
    if (nseg < 2 || nseg > max_rows || seglen <= 16384 || nseg * seglen > INT32_MAX ||
        (seglen >= (int64_t(1) << 20) && rows_one_at_a_time(nseg, seglen)))
        return 0;
    int rb = 1;
    while ((int64_t(1) << rb) < nseg)
        rb++;
    return rb;
}

// Keys of up to 32 bits sort together as composite keys, the row number
// above the key's bits: the width of those (0: too wide, 64-bit keys). Up
// to 256 rows (40-bit keys): on the H200 against the segmented sort, in
// one process, float32 [96, 2^17] 1101 -> 862 us (0.82x -> 1.05x torch),
// [256, 2^16] 1216 -> 1113 us, [200, 40000] 661 -> 594 us; at 512 rows the
// two were even.
template <class U> int composite_bits(int64_t nseg, int64_t seglen)
{
    const int rb = together_bits(nseg, seglen, 256);
    const int b = (int)sizeof(U) * 8 + rb;
    return rb && b <= 64 ? b : 0;
}

// 64-bit keys leave no room for the row number: a stable sort of all keys
// (values: their index in the whole block), then a stable sort of those
// indices by their row number, which keeps each row's keys in order; the
// values are read back from the input through the index, bit for bit.
// The row numbers take a byte up to 256 rows, two beyond. Against the
// segmented sort on the H200, in one process (int64; float64 the same):
// [256, 2^16] 3270 -> 1876 us (0.83x -> 1.44x torch), [96, 2^17] 3009 ->
// 1466, [512, 32768] 3238 -> 1994 (0.85x -> 1.37x), [4096, 16385] 11200 ->
// 7341 (0.94x -> 1.44x).
template <class R> __global__ void row_numbers(const int32_t *idx, R *rows, int64_t n, int64_t seglen)
{
    GRID_STRIDE(i, n) rows[i] = (R)(idx[i] / seglen);
}

template <class T>
__global__ void gather_sorted(const T *in, const int32_t *idx, T *values, int64_t *indices, int64_t n,
                              int64_t seglen)
{
    GRID_STRIDE(i, n)
    {
        const int32_t g = idx[i];
        if (indices)
            indices[i] = g % seglen;
        if (values)
            values[i] = in[g];
    }
}

template <class T, class R>
int run_sort_twice(const T *in, T *values, int64_t *indices, int64_t nseg, int64_t seglen, bool desc,
                   int rb, char *base, size_t *ws_bytes, cudaStream_t s)
{
    using U = ukey_t<T>;
    const int n = (int)(nseg * seglen); // together_bits checked n <= INT32_MAX
    Carve c{base};
    U *k0 = c.take<U>((size_t)n * sizeof(U)), *k1 = c.take<U>((size_t)n * sizeof(U));
    int32_t *v0 = c.take<int32_t>((size_t)n * 4), *v1 = c.take<int32_t>((size_t)n * 4);
    R *r0 = c.take<R>((size_t)n * sizeof(R)), *r1 = c.take<R>((size_t)n * sizeof(R));
    cub::DoubleBuffer<U> keys(k0, k1);
    cub::DoubleBuffer<int32_t> vals(v0, v1);
    cub::DoubleBuffer<R> rows(r0, r1);
    size_t b1 = 0, b2 = 0;
    cudaError_t e = cub::DeviceRadixSort::SortPairs(nullptr, b1, keys, vals, n, 0, (int)sizeof(U) * 8, s);
    if (e == cudaSuccess)
        e = cub::DeviceRadixSort::SortPairs(nullptr, b2, rows, vals, n, 0, rb, s);
    if (e != cudaSuccess)
        return (int)e;
    size_t tmp_bytes = b1 > b2 ? b1 : b2;
    void *tmp;
    if (c.sized(tmp_bytes, &tmp, ws_bytes))
        return 0;
    // iota over the whole block (seglen n): each key's global index
    launch_kernel(make_keys<T>, grid_for(n), 256, s, in, k0, v0, (int64_t)n, (int64_t)n, desc,
                  (U *)nullptr);
    if ((e = cudaGetLastError()) != cudaSuccess ||
        (e = cub::DeviceRadixSort::SortPairs(tmp, tmp_bytes, keys, vals, n, 0, (int)sizeof(U) * 8, s)) !=
            cudaSuccess)
        return (int)e;
    launch_kernel(row_numbers<R>, grid_for(n), 256, s, (const int32_t *)vals.Current(), rows.Current(),
                  (int64_t)n, seglen);
    if ((e = cudaGetLastError()) != cudaSuccess ||
        (e = cub::DeviceRadixSort::SortPairs(tmp, tmp_bytes, rows, vals, n, 0, rb, s)) != cudaSuccess)
        return (int)e;
    launch_kernel(gather_sorted<T>, grid_for(n), 256, s, in, (const int32_t *)vals.Current(), values,
                  indices, (int64_t)n, seglen);
    return 0;
}

// The sort through composite keys K (uint32 or uint64) of `bits` bits.
template <class T, class K>
int run_sort_composite(const T *in, T *values, int64_t *indices, int64_t nseg, int64_t seglen, bool desc,
                       int bits, char *base, size_t *ws_bytes, cudaStream_t s)
{
    const int n = (int)(nseg * seglen); // composite_bits checked n <= INT32_MAX
    const bool pairs = indices != nullptr;
    Carve c{base};
    K *k0 = c.take<K>((size_t)n * sizeof(K)), *k1 = c.take<K>((size_t)n * sizeof(K));
    int32_t *v0 = pairs ? c.take<int32_t>((size_t)n * 4) : nullptr;
    int32_t *v1 = pairs ? c.take<int32_t>((size_t)n * 4) : nullptr;
    cub::DoubleBuffer<K> keys(k0, k1);
    cub::DoubleBuffer<int32_t> vals(v0, v1);
    auto sort = [&](void *tmp, size_t &bytes) {
        return pairs ? cub::DeviceRadixSort::SortPairs(tmp, bytes, keys, vals, n, 0, bits, s)
                     : cub::DeviceRadixSort::SortKeys(tmp, bytes, keys, n, 0, bits, s);
    };
    size_t tmp_bytes = 0;
    cudaError_t e = sort(nullptr, tmp_bytes);
    if (e != cudaSuccess)
        return (int)e;
    void *tmp;
    if (c.sized(tmp_bytes, &tmp, ws_bytes))
        return 0;
    launch_kernel(make_keys<T, K>, grid_for(n), 256, s, in, k0, v0, (int64_t)n, seglen, desc,
                  (ukey_t<T> *)nullptr);
    if ((e = cudaGetLastError()) != cudaSuccess || (e = sort(tmp, tmp_bytes)) != cudaSuccess)
        return (int)e;
    if (pairs)
        launch_kernel(finish_pairs<T, K>, grid_for(n), 256, s, in, (const K *)keys.Current(),
                      (const int32_t *)vals.Current(), values, indices, (int64_t)n, seglen, desc);
    else
        launch_kernel(keys_to_values<T, K>, grid_for(n), 256, s, (const K *)keys.Current(), values,
                      (int64_t)n, desc);
    return 0;
}

// The whole sort; with base == NULL only sizes the workspace into *ws_bytes.
template <class T>
int run_sort(const T *in, T *values, int64_t *indices, int64_t nseg, int64_t seglen, bool desc,
             bool narrow_ok, char *base, size_t *ws_bytes, cudaStream_t s)
{
    using U = ukey_t<T>;
    int64_t n = nseg * seglen;
    bool pairs = indices != nullptr;
    if (seglen > INT32_MAX || (nseg == 1 && n > INT32_MAX))
        return -3;
    if constexpr (sizeof(U) == 8) {
        // rows numbered in one byte up to 256 rows, two bytes beyond
        if (const int rb = together_bits(nseg, seglen, 65535))
            return rb <= 8 ? run_sort_twice<T, uint8_t>(in, values, indices, nseg, seglen, desc, rb, base, ws_bytes, s)
                           : run_sort_twice<T, uint16_t>(in, values, indices, nseg, seglen, desc, rb, base, ws_bytes, s);
    } else if (const int cb = composite_bits<U>(nseg, seglen)) {
        if (cb <= 32)
            return run_sort_composite<T, uint32_t>(in, values, indices, nseg, seglen, desc, cb, base,
                                                   ws_bytes, s);
        return run_sort_composite<T, uint64_t>(in, values, indices, nseg, seglen, desc, cb, base,
                                               ws_bytes, s);
    }
    Carve c{base};
    U *k0 = c.take<U>(n * sizeof(U)), *k1 = c.take<U>(n * sizeof(U));
    int32_t *v0 = pairs ? c.take<int32_t>(n * 4) : nullptr, *v1 = pairs ? c.take<int32_t>(n * 4) : nullptr;
    // integer keys of one long row, for a caller that synchronises anyway
    // (unique): sort only the bits on which they differ
    const bool narrow = narrow_ok && is_int<T> && sizeof(U) >= 4 && nseg == 1 && n >= (1 << 20);
    U *span = narrow ? c.take<U>(2 * sizeof(U)) : nullptr;
    cub::DoubleBuffer<U> keys(k0, k1);
    cub::DoubleBuffer<int32_t> vals(v0, v1);
    size_t tmp_bytes = 0;
    cudaError_t e = cub_sort<U>(nullptr, tmp_bytes, keys, pairs ? &vals : nullptr, n, nseg, seglen, s);
    if (e != cudaSuccess)
        return (int)e;
    void *tmp;
    if (c.sized(tmp_bytes, &tmp, ws_bytes))
        return 0;
    if (n == 0)
        return 0;
    if (span && ((e = cudaMemsetAsync(span, 0, sizeof(U), s)) != cudaSuccess ||
                 (e = cudaMemsetAsync(span + 1, 0xff, sizeof(U), s)) != cudaSuccess))
        return (int)e;
    launch_kernel(make_keys<T>, grid_for(n), 256, s, in, k0, v0, n, seglen, desc, span);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return (int)e;
    int end_bit = 0, r;
    if (span && (r = span_bits(span, s, &end_bit)) != 0)
        return r;
    // fewer bits need no more storage than all of them (sized above)
    e = cub_sort<U>(tmp, tmp_bytes, keys, pairs ? &vals : nullptr, n, nseg, seglen, s, end_bit);
    if (e != cudaSuccess)
        return (int)e;
    if (pairs)
        launch_kernel(finish_pairs<T, U>, grid_for(n), 256, s, in, (const U *)keys.Current(),
                      (const int32_t *)vals.Current(), values, indices, n, seglen, desc);
    else
        launch_kernel(keys_to_values<T, U>, grid_for(n), 256, s, (const U *)keys.Current(), values, n,
                      desc);
    return 0;
}

// ---------------------------------------------------------------------------
// Picks from sorted rows: one thread a row.

template <class T> __device__ __forceinline__ bool nan_at(const T *row, int64_t j)
{
    return is_nan(to_c<compute_t<T>>(row[j]));
}

// The number of non-NaN values of an ascending row (NaN sort last).
template <class T> __device__ int64_t count_numbers(const T *row, int64_t len)
{
    int64_t lo = 0, hi = len;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (nan_at(row, mid))
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

template <class T>
__global__ void pick_rows(int op, const T *sorted, const int64_t *sidx, int64_t nseg, int64_t len,
                          int64_t k, T *out, int64_t *out_idx)
{
    using C = compute_t<T>;
    GRID_STRIDE(r, nseg)
    {
        const T *row = sorted + r * len;
        const int64_t *irow = sidx + r * len;
        int64_t pos = 0;
        if (op == PCS_PICK_KTH) {
            pos = k;
        } else if (op == PCS_PICK_MEDIAN || op == PCS_PICK_NANMEDIAN) {
            int64_t cnt = is_flt<T> ? count_numbers(row, len) : len;
            if (op == PCS_PICK_MEDIAN)
                pos = cnt < len ? cnt : (len - 1) / 2; // a NaN is the median (the first one)
            else
                pos = cnt ? (cnt - 1) / 2 : 0;
        } else { // mode: the longest run, the smallest value among equals, its last index
            int64_t best = 0, best_len = 0, start = 0;
            for (int64_t j = 1; j <= len; j++) {
                if (j == len || !(to_c<C>(row[j]) == to_c<C>(row[j - 1]))) {
                    if (j - start > best_len) {
                        best_len = j - start;
                        best = j - 1;
                    }
                    start = j;
                }
            }
            pos = best;
        }
        out[r] = row[pos];
        out_idx[r] = irow[pos];
    }
}

// mode of a few long rows, device-wide: the runs of equal values longer than
// one (cub::DeviceRunLengthEncode::NonTrivialRuns, == so NaNs stay apart),
// the first longest of them (cub::DeviceReduce::ArgMax over the lengths,
// zeroed past the last run), and its last element; no run longer than one
// means every value is its own run, and the first (smallest) wins.
__global__ void mode_finish(const int32_t *offsets, const int32_t *lengths, const int32_t *best_len,
                            const int64_t *best, int64_t *pos)
{
    *pos = *best_len > 0 ? (int64_t)offsets[*best] + lengths[*best] - 1 : 0;
}

template <class T>
__global__ void mode_store(const T *row, const int64_t *sidx, const int64_t *pos, T *out, int64_t *out_idx)
{
    *out = row[*pos];
    *out_idx = sidx[*pos];
}

// ---------------------------------------------------------------------------
// searchsorted: torch's binary searches (Bucketization.cuh), NaN included

template <class T, class O>
__global__ void search_rows(const T *seq, const int64_t *sorter, int64_t seq_rows, int64_t len,
                            const T *vals, int64_t n, int64_t per_row, bool right, O *out)
{
    using C = compute_t<T>;
    GRID_STRIDE(i, n)
    {
        int64_t row = seq_rows == 1 ? 0 : i / per_row;
        const T *s = seq + row * len;
        const int64_t *so = sorter ? sorter + row * len : nullptr;
        C v = to_c<C>(vals[i]);
        int64_t lo = 0, hi = len;
        while (lo < hi) {
            int64_t mid = lo + ((hi - lo) >> 1);
            C m = to_c<C>(s[so ? so[mid] : mid]);
            bool go_right = right ? !(m > v) : !(m >= v);
            if (go_right)
                lo = mid + 1;
            else
                hi = mid;
        }
        out[i] = (O)lo;
    }
}

// One short sequence for every value (the common bucketize case): each block
// copies it into shared memory once and searches there with 32-bit indices,
// so the ~log2(len) dependent reads per value cost shared-memory latency
// rather than L1/L2's. Same comparisons as search_rows.
constexpr int64_t SEARCH_SMEM_BYTES = 16384;

template <class T, class O>
__global__ void search_smem(const T *seq, int len, const T *vals, int64_t n, bool right, O *out)
{
    using C = compute_t<T>;
    extern __shared__ __align__(16) unsigned char sm_raw[];
    C *sh = reinterpret_cast<C *>(sm_raw);
    for (int k = threadIdx.x; k < len; k += blockDim.x)
        sh[k] = to_c<C>(seq[k]);
    __syncthreads();
    GRID_STRIDE(i, n)
    {
        const C v = to_c<C>(vals[i]);
        int lo = 0, hi = len;
        while (lo < hi) {
            const int mid = (lo + hi) >> 1;
            const C m = sh[mid];
            if (right ? !(m > v) : !(m >= v))
                lo = mid + 1;
            else
                hi = mid;
        }
        out[i] = (O)lo;
    }
}

// ---------------------------------------------------------------------------
// topk with small k: each block sorts one tile of a row in shared memory
// (cub::BlockLoad, cub::BlockRadixSort) and keeps its first k; a row of one
// tile writes them out at once, longer rows sort their tiles' candidates
// (k per tile) with the segmented sort above and keep the first k of those.
// Keys are to_key's, so the order is the full sort's. Padding past the row's
// end gets the largest key and comes after any real key equal to it: the
// block sort is stable in the blocked order, where padding is last, and the
// candidates of the last (the only partial) tile come last in their row.

template <int THREADS, int ITEMS> struct TopkTile {
    static constexpr int threads = THREADS, items = ITEMS, size = THREADS * ITEMS;
};
using TopkSmall = TopkTile<128, 8>;  // rows up to 1024: one tile
using TopkLarge = TopkTile<256, 16>; // longer rows: tiles of 4096
static_assert(TopkLarge::size == PCS_TOPK_ONE_TILE, "kernels.h promises one tile up to this");

// The rank-th key of the tile (and its element), out where the caller wants it:
// candidates for the second stage, or the outputs of a one-tile row.
template <class T, class U>
__device__ __forceinline__ void topk_emit(int rank, U key, int32_t pos, const T *r, int64_t row,
                                          int64_t tiles, int64_t tile, int k, T *values,
                                          int64_t *indices, U *ckeys, int32_t *cidx)
{
    if (ckeys) {
        int64_t o = (row * tiles + tile) * k + rank;
        ckeys[o] = key;
        cidx[o] = pos;
    } else { // one tile: rank < k <= len, so pos is a real element
        int64_t o = row * k + rank;
        if (values)
            values[o] = r[pos];
        if (indices)
            indices[o] = pos;
    }
}

template <class T, class Cfg>
__global__ void __launch_bounds__(Cfg::threads)
    topk_tiles(const T *in, int64_t len, int64_t tiles, int k, bool largest, T *values,
               int64_t *indices, ukey_t<T> *ckeys, int32_t *cidx)
{
    using U = ukey_t<T>;
    constexpr int TH = Cfg::threads;
    using Load = cub::BlockLoad<T, TH, Cfg::items, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
    using Sort = cub::BlockRadixSort<U, TH, Cfg::items, int32_t>;
    using SortMins = cub::BlockRadixSort<U, TH, 1>;
    using SortCands = cub::BlockRadixSort<U, TH, 1, int32_t>;
    using Scan = cub::BlockScan<int, TH>;
    __shared__ union {
        typename Load::TempStorage load;
        typename Sort::TempStorage sort;
        typename SortMins::TempStorage mins;
        typename SortCands::TempStorage cands;
        typename Scan::TempStorage scan;
    } tmp;
    __shared__ U cand_key[TH];
    __shared__ int32_t cand_pos[TH];
    __shared__ U bound;
    int64_t row = blockIdx.x / tiles, tile = blockIdx.x % tiles;
    const T *r = in + row * len;
    int64_t base = tile * (int64_t)Cfg::size;
    int valid = (int)(len - base < Cfg::size ? len - base : Cfg::size);
    T x[Cfg::items];
    Load(tmp.load).Load(r + base, x, valid, T{});
    __syncthreads(); // the sorts reuse the load's shared memory
    U keys[Cfg::items];
    int32_t idx[Cfg::items];
    U lo = U(~U(0));
#pragma unroll
    for (int i = 0; i < Cfg::items; i++) { // blocked: item i of thread t is element t * items + i
        int p = threadIdx.x * Cfg::items + i;
        keys[i] = p < valid ? to_key(x[i], true, largest) : U(~U(0));
        idx[i] = p < valid ? (int32_t)(base + p) : INT32_MAX;
        lo = keys[i] < lo ? keys[i] : lo;
    }
    // A small k needs no full sort of the tile: the k-th smallest of the
    // threads' smallest keys bounds the tile's first k from above (k threads
    // hold a key at most that), so only keys up to it are candidates. When
    // they fit one a thread, they alone are sorted; ties to the bound are
    // all kept, and the candidates keep the tile's order, so the first k are
    // the full sort's. (k and valid are the block's, so all threads agree.)
    if (k <= TH && valid > TH) {
        U m[1] = {lo};
        SortMins(tmp.mins).Sort(m);
        if ((int)threadIdx.x == k - 1)
            bound = m[0];
        __syncthreads();
        U b = bound;
        int n = 0, at, total;
#pragma unroll
        for (int i = 0; i < Cfg::items; i++)
            n += keys[i] <= b;
        Scan(tmp.scan).ExclusiveSum(n, at, total);
        if (total <= TH) {
#pragma unroll
            for (int i = 0; i < Cfg::items; i++)
                if (keys[i] <= b) {
                    cand_key[at] = keys[i];
                    cand_pos[at++] = idx[i];
                }
            __syncthreads();
            bool real = (int)threadIdx.x < total;
            U ck[1] = {real ? cand_key[threadIdx.x] : U(~U(0))};
            int32_t cp[1] = {real ? cand_pos[threadIdx.x] : INT32_MAX};
            SortCands(tmp.cands).Sort(ck, cp); // one item a thread: thread t holds rank t
            if ((int)threadIdx.x < k)
                topk_emit(threadIdx.x, ck[0], cp[0], r, row, tiles, tile, k, values, indices, ckeys, cidx);
            return;
        }
        __syncthreads(); // the full sort reuses the scan's shared memory
    }
    Sort(tmp.sort).Sort(keys, idx);
#pragma unroll
    for (int i = 0; i < Cfg::items; i++) {
        int rank = threadIdx.x * Cfg::items + i;
        if (rank < k)
            topk_emit(rank, keys[i], idx[i], r, row, tiles, tile, k, values, indices, ckeys, cidx);
    }
}

template <class T>
__global__ void topk_pick(const T *in, int64_t len, const int32_t *cidx, int64_t ncand, int64_t k,
                          int64_t n, T *values, int64_t *indices)
{
    GRID_STRIDE(i, n)
    {
        int64_t row = i / k;
        int32_t j = cidx[row * ncand + i % k];
        values[i] = in[row * len + j];
        indices[i] = j;
    }
}

template <class T, class Cfg>
int run_topk(const T *in, int64_t nseg, int64_t len, int64_t k, bool largest, T *values,
             int64_t *indices, char *base, size_t *ws_bytes, cudaStream_t s)
{
    using U = ukey_t<T>;
    int64_t tiles = (len + Cfg::size - 1) / Cfg::size, ncand = tiles * k, n = nseg * ncand;
    Carve c{base};
    if (tiles == 1) {
        if (!base) {
            *ws_bytes = 0;
            return 0;
        }
        launch_kernel(topk_tiles<T, Cfg>, (unsigned)nseg, Cfg::threads, s, in, len, tiles, (int)k,
                      largest, values, indices, (U *)nullptr, (int32_t *)nullptr);
        return 0;
    }
    if (n > INT32_MAX || nseg * tiles > INT32_MAX)
        return -2;
    U *k0 = c.take<U>(n * sizeof(U)), *k1 = c.take<U>(n * sizeof(U));
    int32_t *v0 = c.take<int32_t>(n * 4), *v1 = c.take<int32_t>(n * 4);
    cub::DoubleBuffer<U> keys(k0, k1);
    cub::DoubleBuffer<int32_t> vals(v0, v1);
    size_t tmp_bytes = 0;
    cudaError_t e = cub_sort<U>(nullptr, tmp_bytes, keys, &vals, n, nseg, ncand, s);
    if (e != cudaSuccess)
        return (int)e;
    void *tmp;
    if (c.sized(tmp_bytes, &tmp, ws_bytes))
        return 0;
    launch_kernel(topk_tiles<T, Cfg>, (unsigned)(nseg * tiles), Cfg::threads, s, in, len, tiles, (int)k,
                  largest, (T *)nullptr, (int64_t *)nullptr, k0, v0);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return (int)e;
    if ((e = cub_sort<U>(tmp, tmp_bytes, keys, &vals, n, nseg, ncand, s)) != cudaSuccess)
        return (int)e;
    launch_kernel(topk_pick<T>, grid_for(nseg * k), 256, s, in, len, (const int32_t *)vals.Current(), ncand,
                  k, nseg * k, values, indices);
    return 0;
}

} // namespace

// ---------------------------------------------------------------------------
// The launchers

extern "C" int pcs_sort_rows(int dtype, const void *in, void *values, int64_t *indices, int64_t nseg,
                             int64_t seglen, int descending, int narrow, void *ws, size_t *ws_bytes,
                             cudaStream_t s)
{
    return dispatch_dtype(dtype, [&](auto tv) -> int {
        using T = decltype(tv);
        if constexpr (!sortable<T>)
            return -1;
        else
            return run_sort<T>((const T *)in, (T *)values, indices, nseg, seglen, descending != 0,
                               narrow != 0, (char *)ws, ws_bytes, s);
    });
}

extern "C" int pcs_topk_rows(int dtype, const void *in, int64_t nseg, int64_t seglen, int64_t k,
                             int largest, void *values, int64_t *indices, void *ws, size_t *ws_bytes,
                             cudaStream_t s)
{
    bool one_tile = seglen <= TopkLarge::size; // then any k works: the whole row is sorted at once
    if (k < 1 || (k > PCS_TOPK_MAX_K && !one_tile) || k > seglen || seglen > INT32_MAX || nseg > INT32_MAX)
        return -2;
    // Many short rows would leave most of each block's tile empty: the
    // segmented sort handles those (with warp-sized sorts) instead.
    if (nseg > 1 && seglen < PCS_TOPK_MIN_ROW)
        return -2;
    return dispatch_dtype(dtype, [&](auto tv) -> int {
        using T = decltype(tv);
        if constexpr (!sortable<T>) {
            return -1;
        } else {
            if (seglen <= TopkSmall::size)
                return run_topk<T, TopkSmall>((const T *)in, nseg, seglen, k, largest != 0, (T *)values,
                                              indices, (char *)ws, ws_bytes, s);
            return run_topk<T, TopkLarge>((const T *)in, nseg, seglen, k, largest != 0, (T *)values,
                                          indices, (char *)ws, ws_bytes, s);
        }
    });
}

extern "C" int pcs_launch_sort_pick(int op, int dtype, const void *sorted, const int64_t *sidx,
                                    int64_t nseg, int64_t seglen, int64_t k, void *out,
                                    int64_t *out_idx, cudaStream_t s)
{
    return dispatch_dtype(dtype, [&](auto tv) -> int {
        using T = decltype(tv);
        if constexpr (!sortable<T>) {
            return -1;
        } else {
            if (nseg == 0 || seglen == 0)
                return 0;
            launch_kernel(pick_rows<T>, grid_for(nseg, 128), 128, s, op, (const T *)sorted, sidx, nseg,
                          seglen, k, (T *)out, out_idx);
            return 0;
        }
    });
}

extern "C" int pcs_mode_rows(int dtype, const void *sorted, const int64_t *sidx, int64_t nseg,
                             int64_t seglen, void *out, int64_t *out_idx, void *ws, size_t *ws_bytes,
                             cudaStream_t s)
{
    return dispatch_dtype(dtype, [&](auto tv) -> int {
        using T = decltype(tv);
        if constexpr (!sortable<T>) {
            return -1;
        } else {
            if (seglen > INT32_MAX)
                return -3;
            int n = (int)seglen;
            Carve c{(char *)ws};
            int32_t *offsets = c.take<int32_t>(seglen * 4), *lengths = c.take<int32_t>(seglen * 4);
            int32_t *best_len = c.take<int32_t>(4);
            int64_t *best = c.take<int64_t>(8), *num = c.take<int64_t>(8), *pos = c.take<int64_t>(8);
            size_t runs_bytes = 0, max_bytes = 0;
            cudaError_t e = cub::DeviceRunLengthEncode::NonTrivialRuns(nullptr, runs_bytes, (const T *)sorted,
                                                                       offsets, lengths, num, n, s);
            if (e == cudaSuccess)
                e = cub::DeviceReduce::ArgMax(nullptr, max_bytes, lengths, best_len, best, seglen, s);
            if (e != cudaSuccess)
                return (int)e;
            void *tmp;
            if (c.sized(runs_bytes > max_bytes ? runs_bytes : max_bytes, &tmp, ws_bytes))
                return 0;
            for (int64_t r = 0; r < nseg && seglen > 0; r++) {
                const T *row = (const T *)sorted + r * seglen;
                if ((e = cudaMemsetAsync(lengths, 0, seglen * 4, s)) != cudaSuccess ||
                    (e = cub::DeviceRunLengthEncode::NonTrivialRuns(tmp, runs_bytes, row, offsets, lengths, num,
                                                                    n, s)) != cudaSuccess ||
                    (e = cub::DeviceReduce::ArgMax(tmp, max_bytes, lengths, best_len, best, seglen, s)) !=
                        cudaSuccess)
                    return (int)e;
                launch_kernel(mode_finish, 1, 1, s, (const int32_t *)offsets, (const int32_t *)lengths,
                              (const int32_t *)best_len, (const int64_t *)best, pos);
                launch_kernel(mode_store<T>, 1, 1, s, row, sidx + r * seglen, (const int64_t *)pos,
                              (T *)out + r, out_idx + r);
            }
            return 0;
        }
    });
}

extern "C" int pcs_launch_searchsorted(int dtype, const void *seq, const int64_t *sorter,
                                       int64_t seq_rows, int64_t len, const void *vals, int64_t n,
                                       int64_t per_row, int right, int out_int32, void *out,
                                       cudaStream_t s)
{
    return dispatch_dtype(dtype, [&](auto tv) -> int {
        using T = decltype(tv);
        if constexpr (!sortable<T>) {
            return -1;
        } else {
            if (n == 0)
                return 0;
            using C = compute_t<T>;
            const int64_t smem = len * (int64_t)sizeof(C);
            if (seq_rows == 1 && !sorter && len > 0 && smem <= SEARCH_SMEM_BYTES) {
                // enough blocks to fill the GPU, each paying for one copy
                unsigned g = grid_for(n);
                unsigned cap = (unsigned)sm_count() * 8;
                g = g < cap ? g : cap;
                if (out_int32)
                    launch_kernel_smem(search_smem<T, int32_t>, g, 256, (size_t)smem, s, (const T *)seq, (int)len,
                                       (const T *)vals, n, right != 0, (int32_t *)out);
                else
                    launch_kernel_smem(search_smem<T, int64_t>, g, 256, (size_t)smem, s, (const T *)seq, (int)len,
                                       (const T *)vals, n, right != 0, (int64_t *)out);
                return 0;
            }
            if (out_int32)
                launch_kernel(search_rows<T, int32_t>, grid_for(n), 256, s, (const T *)seq, sorter,
                              seq_rows, len, (const T *)vals, n, per_row, right != 0, (int32_t *)out);
            else
                launch_kernel(search_rows<T, int64_t>, grid_for(n), 256, s, (const T *)seq, sorter,
                              seq_rows, len, (const T *)vals, n, per_row, right != 0, (int64_t *)out);
            return 0;
        }
    });
}
