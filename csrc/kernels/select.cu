// select.cu: the selection kernels behind kernels.h: unique and
// unique_consecutive (flat: a run-length encoding, or a scan of run heads
// when the inverse is wanted; along a dim: the slices sorted
// lexicographically, then their runs) and the histograms (bincount, histc).
// The flat unique runs over values the host has sorted with pcs_sort_rows.
#include <cub/device/device_histogram.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

#include "sort_keys.cuh"

using namespace pcs;

namespace {

// ---------------------------------------------------------------------------
// unique / unique_consecutive over a (sorted, for unique) flat input

template <class T> __global__ void run_heads(const T *x, int64_t *run, int64_t n)
{
    using C = compute_t<T>;
    // NaN != NaN: each NaN is its own run, as torch's unique.
    GRID_STRIDE(i, n) run[i] = i == 0 || !(to_c<C>(x[i]) == to_c<C>(x[i - 1]));
}

template <class T>
__global__ void run_outputs(const T *x, const int64_t *run, const int64_t *perm, int64_t n, T *uniq,
                            int64_t *starts, int64_t *inverse)
{
    GRID_STRIDE(i, n)
    {
        int64_t r = run[i] - 1;
        if (i == 0 || run[i] != run[i - 1]) {
            uniq[r] = x[i];
            if (starts)
                starts[r] = i;
        }
        if (inverse)
            inverse[perm ? perm[i] : i] = r;
    }
}

__global__ void run_counts(const int64_t *starts, const int64_t *run, int64_t n, int64_t *counts,
                           int64_t *num)
{
    int64_t m = run[n - 1];
    if (blockIdx.x == 0 && threadIdx.x == 0)
        *num = m;
    GRID_STRIDE(j, m) counts[j] = (j + 1 < m ? starts[j + 1] : n) - starts[j];
}

// ---------------------------------------------------------------------------
// unique / unique_consecutive along a dim: the slices are the rows of an
// [m, w] block. unique orders them lexicographically by least significant
// column first: a stable sort of each column's keys (sort_keys.cuh's order),
// from the last column to the first, carrying the row permutation. Rows are
// then equal when every element is (== on the values, so a NaN makes a row
// unique, and -0.0 equals +0.0).

__global__ void iota_rows(int64_t *perm, int64_t m)
{
    GRID_STRIDE(i, m) perm[i] = i;
}

template <class T>
__global__ void column_keys(const T *x, const int64_t *perm, int64_t m, int64_t w, int64_t c,
                            ukey_t<T> *keys, int32_t *pos)
{
    GRID_STRIDE(i, m)
    {
        keys[i] = to_key(x[perm[i] * w + c], true, false);
        pos[i] = (int32_t)i;
    }
}

__global__ void reorder_rows(const int64_t *perm, const int32_t *order, int64_t m, int64_t *out)
{
    GRID_STRIDE(i, m) out[i] = perm[order[i]];
}

template <class T>
__global__ void row_heads(const T *x, const int64_t *perm, int64_t m, int64_t w, int64_t *run)
{
    using C = compute_t<T>;
    GRID_STRIDE(i, m)
    {
        bool head = i == 0;
        for (int64_t c = 0; !head && c < w; c++)
            head = !(to_c<C>(x[perm[i] * w + c]) == to_c<C>(x[perm[i - 1] * w + c]));
        run[i] = head;
    }
}

template <class T>
__global__ void row_outputs(const T *x, const int64_t *perm, const int64_t *run, int64_t m, int64_t w,
                            T *uniq, int64_t *starts, int64_t *inverse)
{
    GRID_STRIDE(i, m)
    {
        int64_t r = run[i] - 1;
        if (i == 0 || run[i] != run[i - 1]) {
            starts[r] = i;
            for (int64_t c = 0; c < w; c++)
                uniq[r * w + c] = x[perm[i] * w + c];
        }
        inverse[perm[i]] = r;
    }
}

// ---------------------------------------------------------------------------
// Histograms

__global__ void widen_counts(const int *c, int64_t *out, int64_t n)
{
    GRID_STRIDE(i, n) out[i] = c[i];
}

template <class W, class O>
__global__ void weighted_bincount(const int64_t *x, const W *w, int64_t n, O *out)
{
    GRID_STRIDE(i, n) atomicAdd(out + x[i], (O)to_c<O>(w[i]));
}

// torch's CUDA bin rule (SummaryOps.cu): outside [lo, hi] (NaN too) is
// dropped, x == hi falls in the last bin.
template <class T>
__global__ void histc_kernel(const T *x, int64_t n, int64_t bins, double lo, double hi,
                             unsigned long long *counts)
{
    using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
    GRID_STRIDE(i, n)
    {
        A v = to_c<A>(x[i]);
        if (!(v >= (A)lo && v <= (A)hi))
            continue;
        int64_t b = (int64_t)((v - (A)lo) * (A)bins / ((A)hi - (A)lo));
        if (b == bins)
            b -= 1;
        atomicAdd(counts + b, 1ull);
    }
}

template <class T> __global__ void counts_to(const unsigned long long *c, T *out, int64_t n)
{
    GRID_STRIDE(i, n) out[i] = from_c<T>((double)c[i]);
}


} // namespace

// ---------------------------------------------------------------------------
// The launchers

extern "C" int pcs_unique_runs(int dtype, const void *x, const int64_t *perm, int64_t n, void *uniq,
                               int64_t *counts, int64_t *inverse, int64_t *num, void *ws,
                               size_t *ws_bytes, cudaStream_t s)
{
    return dispatch_dtype(dtype, [&](auto tv) -> int {
        using T = decltype(tv);
        if constexpr (!sortable<T>) {
            return -1;
        } else {
            Carve c{(char *)ws};
            size_t tmp_bytes = 0;
            cudaError_t e;
            if (!inverse && !counts && n <= INT32_MAX) {
                // the values alone: one select of the run heads (== on the
                // values, as below)
                e = cub::DeviceSelect::Unique(nullptr, tmp_bytes, (const T *)x, (T *)uniq, num, (int)n, s);
                if (e != cudaSuccess || !ws) {
                    *ws_bytes = tmp_bytes;
                    return (int)e;
                }
                if (n == 0)
                    return (int)cudaMemsetAsync(num, 0, sizeof(int64_t), s);
                return (int)cub::DeviceSelect::Unique(ws, tmp_bytes, (const T *)x, (T *)uniq, num, (int)n, s);
            }
            if (!inverse && n <= INT32_MAX) {
                // values and counts only: one run-length encoding (== on the
                // values, so NaNs stay apart)
                e = cub::DeviceRunLengthEncode::Encode(nullptr, tmp_bytes, (const T *)x, (T *)uniq, counts,
                                                       num, (int)n, s);
                if (e != cudaSuccess || !ws) {
                    *ws_bytes = tmp_bytes;
                    return (int)e;
                }
                if (n == 0)
                    return (int)cudaMemsetAsync(num, 0, sizeof(int64_t), s);
                return (int)cub::DeviceRunLengthEncode::Encode(ws, tmp_bytes, (const T *)x, (T *)uniq, counts,
                                                               num, (int)n, s);
            }
            // with the inverse: the run of each element, a scan of the run heads
            int64_t *run = c.take<int64_t>(n * 8);
            int64_t *starts = c.take<int64_t>(n * 8);
            e = cub::DeviceScan::InclusiveSum(nullptr, tmp_bytes, run, run, n, s);
            if (e != cudaSuccess)
                return (int)e;
            void *tmp;
            if (c.sized(tmp_bytes, &tmp, ws_bytes))
                return 0;
            if (n == 0)
                return (int)cudaMemsetAsync(num, 0, sizeof(int64_t), s);
            launch_kernel(run_heads<T>, grid_for(n), 256, s, (const T *)x, run, n);
            if ((e = cub::DeviceScan::InclusiveSum(tmp, tmp_bytes, run, run, n, s)) != cudaSuccess)
                return (int)e;
            launch_kernel(run_outputs<T>, grid_for(n), 256, s, (const T *)x, (const int64_t *)run, perm,
                          n, (T *)uniq, starts, inverse);
            launch_kernel(run_counts, grid_for(n), 256, s, (const int64_t *)starts, (const int64_t *)run,
                          n, counts, num);
            return 0;
        }
    });
}

extern "C" int pcs_unique_dim(int dtype, const void *x, int64_t m, int64_t w, int consecutive,
                              void *uniq, int64_t *counts, int64_t *inverse, int64_t *num, void *ws,
                              size_t *ws_bytes, cudaStream_t s)
{
    return dispatch_dtype(dtype, [&](auto tv) -> int {
        using T = decltype(tv);
        if constexpr (!sortable<T>) {
            return -1;
        } else {
            using U = ukey_t<T>;
            if (m > INT32_MAX)
                return -3;
            const T *xt = (const T *)x;
            Carve c{(char *)ws};
            int64_t *perm = c.take<int64_t>(m * 8), *other = c.take<int64_t>(m * 8);
            int64_t *run = c.take<int64_t>(m * 8), *starts = c.take<int64_t>(m * 8);
            U *k0 = c.take<U>(m * sizeof(U)), *k1 = c.take<U>(m * sizeof(U));
            int32_t *v0 = c.take<int32_t>(m * 4), *v1 = c.take<int32_t>(m * 4);
            cub::DoubleBuffer<U> keys(k0, k1);
            cub::DoubleBuffer<int32_t> vals(v0, v1);
            size_t sort_bytes = 0, scan_bytes = 0;
            cudaError_t e = cub_sort<U>(nullptr, sort_bytes, keys, &vals, m, 1, m, s);
            if (e == cudaSuccess)
                e = cub::DeviceScan::InclusiveSum(nullptr, scan_bytes, run, run, m, s);
            if (e != cudaSuccess)
                return (int)e;
            void *tmp;
            if (c.sized(sort_bytes > scan_bytes ? sort_bytes : scan_bytes, &tmp, ws_bytes))
                return 0;
            if (m == 0)
                return (int)cudaMemsetAsync(num, 0, sizeof(int64_t), s);
            launch_kernel(iota_rows, grid_for(m), 256, s, perm, m);
            for (int64_t col = consecutive ? -1 : w - 1; col >= 0; col--) {
                cub::DoubleBuffer<U> kb(k0, k1); // CUB moves the selectors: start afresh
                cub::DoubleBuffer<int32_t> vb(v0, v1);
                launch_kernel(column_keys<T>, grid_for(m), 256, s, xt, (const int64_t *)perm, m, w, col, k0, v0);
                if ((e = cub_sort<U>(tmp, sort_bytes, kb, &vb, m, 1, m, s)) != cudaSuccess)
                    return (int)e;
                launch_kernel(reorder_rows, grid_for(m), 256, s, (const int64_t *)perm,
                              (const int32_t *)vb.Current(), m, other);
                int64_t *t = perm;
                perm = other;
                other = t;
            }
            launch_kernel(row_heads<T>, grid_for(m), 256, s, xt, (const int64_t *)perm, m, w, run);
            if ((e = cub::DeviceScan::InclusiveSum(tmp, scan_bytes, run, run, m, s)) != cudaSuccess)
                return (int)e;
            launch_kernel(row_outputs<T>, grid_for(m), 256, s, xt, (const int64_t *)perm, (const int64_t *)run,
                          m, w, (T *)uniq, starts, inverse);
            launch_kernel(run_counts, grid_for(m), 256, s, (const int64_t *)starts, (const int64_t *)run, m,
                          counts, num);
            return 0;
        }
    });
}

extern "C" int pcs_bincount(const int64_t *x, int64_t n, const void *weights, int wdtype,
                            int64_t bins, void *out, void *ws, size_t *ws_bytes, cudaStream_t s)
{
    if (weights) { // out is zeroed by the caller, float32 or float64
        if (!ws) {
            *ws_bytes = 0;
            return 0;
        }
        if (n == 0)
            return 0;
        if (wdtype == PCS_FLOAT32)
            launch_kernel(weighted_bincount<float, float>, grid_for(n), 256, s, x, (const float *)weights,
                          n, (float *)out);
        else if (wdtype == PCS_FLOAT64)
            launch_kernel(weighted_bincount<double, double>, grid_for(n), 256, s, x,
                          (const double *)weights, n, (double *)out);
        else
            return -1;
        return 0;
    }
    if (n > INT32_MAX || bins > INT32_MAX - 1)
        return -3;
    Carve c{(char *)ws};
    int *counts = c.take<int>(bins * sizeof(int));
    size_t tmp_bytes = 0;
    cudaError_t e = cub::DeviceHistogram::HistogramEven(nullptr, tmp_bytes, x, counts, (int)bins + 1,
                                                        (int64_t)0, (int64_t)bins, (int)n, s);
    if (e != cudaSuccess)
        return (int)e;
    void *tmp;
    if (c.sized(tmp_bytes, &tmp, ws_bytes))
        return 0;
    if (bins == 0)
        return 0;
    e = cub::DeviceHistogram::HistogramEven(tmp, tmp_bytes, x, counts, (int)bins + 1, (int64_t)0,
                                            (int64_t)bins, (int)n, s);
    if (e != cudaSuccess)
        return (int)e;
    launch_kernel(widen_counts, grid_for(bins), 256, s, (const int *)counts, (int64_t *)out, bins);
    return 0;
}

extern "C" int pcs_histc(int dtype, const void *x, int64_t n, int64_t bins, double lo, double hi,
                         void *out, void *ws, size_t *ws_bytes, cudaStream_t s)
{
    return dispatch_dtype(dtype, [&](auto tv) -> int {
        using T = decltype(tv);
        if constexpr (!is_flt<T>) {
            return -1;
        } else {
            Carve c{(char *)ws};
            auto *counts = c.take<unsigned long long>(bins * 8);
            if (!ws) {
                *ws_bytes = c.used;
                return 0;
            }
            if (bins == 0)
                return 0;
            cudaError_t e = cudaMemsetAsync(counts, 0, bins * 8, s);
            if (e != cudaSuccess)
                return (int)e;
            if (n)
                launch_kernel(histc_kernel<T>, grid_for(n), 256, s, (const T *)x, n, bins, lo, hi, counts);
            launch_kernel(counts_to<T>, grid_for(bins), 256, s, (const unsigned long long *)counts, (T *)out,
                          bins);
            return 0;
        }
    });
}
