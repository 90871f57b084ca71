// scan.cu: the scans that carry more than a running sum: cummax and cummin
// (value and index) and logcumsumexp, behind pcs_scan_rows (kernels.h).
//
// The host hands over a contiguous [nseg, seglen] block (the scanned dim
// last). One cub::DeviceScan::InclusiveScanByKey covers every row at once:
// the key of element i is its row, i / seglen, so the scan restarts at each
// row. cummax/cummin scan (value, index) pairs, written straight into the
// values and indices through a zip of the two outputs, with torch's rule: a later
// element wins ties (>= for max, <= for min), and NaN wins over everything,
// the latest NaN over earlier ones; that choice is associative, as a scan
// needs. cumsum and cumprod of a few long rows come here too (ops_reduce.c's
// one-block-per-line kernel cannot fill the GPU with them). logcumsumexp
// scans log(exp(a) + exp(b)) in float (double for
// double), computed from the larger term so nothing overflows, and rounds to
// float16/bfloat16 as it stores. No workspace beyond CUB's own, no second
// pass. Small inputs take one block a row instead (scan_block_rows).
#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/iterator/transform_output_iterator.h>
#include <thrust/iterator/zip_iterator.h>

#include "ew_common.cuh"
#include "pdl.cuh"

using namespace pcs;

namespace {

template <class C> struct VI {
    C v;
    int64_t i;
};

template <class T> using lse_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

struct RowOf {
    int64_t len;
    __host__ __device__ int64_t operator()(int64_t i) const { return i / len; }
};

template <class T> struct LoadVI {
    const T *x;
    int64_t len;
    __host__ __device__ VI<compute_t<T>> operator()(int64_t i) const
    {
        return {to_c<compute_t<T>>(x[i]), i % len};
    }
};

template <class T> struct LoadLse {
    const T *x;
    __host__ __device__ lse_t<T> operator()(int64_t i) const { return to_c<lse_t<T>>(x[i]); }
};

// a: the scan so far, b: the next part (later elements).
template <class C, bool MAX> struct PickVI {
    __device__ VI<C> operator()(const VI<C> &a, const VI<C> &b) const
    {
        bool take_b;
        if (is_nan(b.v))
            take_b = true;
        else if (is_nan(a.v))
            take_b = false;
        else
            take_b = MAX ? !(b.v < a.v) : !(b.v > a.v);
        return take_b ? b : a;
    }
};

template <class A> struct LogAddExp {
    __device__ A operator()(A a, A b) const
    {
        if (a != a || b != b)
            return a + b; // NaN
        A mx = a > b ? a : b, mn = a > b ? b : a;
        if (mn == -cuda::std::numeric_limits<A>::infinity() || mx == cuda::std::numeric_limits<A>::infinity())
            return mx;
        return mx + log1p(exp(mn - mx));
    }
};

template <class T> struct SplitVI {
    __host__ __device__ thrust::tuple<T, int64_t> operator()(const VI<compute_t<T>> &p) const
    {
        return thrust::make_tuple(from_c<T>(p.v), p.i);
    }
};

// cumsum / cumprod: the running sum or product in the type the existing
// scans use (float for float16/bfloat16), rounded as stored.
template <class T> using sum_t = std::conditional_t<is_lowp<T>, float, compute_t<T>>;
template <class T> struct LoadSum {
    const T *x;
    __host__ __device__ sum_t<T> operator()(int64_t i) const { return to_c<sum_t<T>>(x[i]); }
};
template <class T> struct StoreSum {
    __host__ __device__ T operator()(sum_t<T> a) const { return from_c<T>(a); }
};
template <class A, bool PROD> struct SumOp {
    __device__ A operator()(A a, A b) const { return PROD ? A(a * b) : A(a + b); }
};

template <class T> struct StoreLse {
    __host__ __device__ T operator()(lse_t<T> a) const { return from_c<T>(a); }
};

// Small inputs (rows up to 2048 elements, 2^16 elements in all): a block a
// row, each thread scanning ITEMS consecutive elements in registers, and
// cub::BlockScan joining the threads. One launch and no workspace, where
// the device-wide scan takes two or three launches: cummax of 1024
// elements cost 11 us of host time against torch's 8. (A warp a row, 32
// elements a step, was tried first: a single row of 1024 then costs 32
// dependent steps of shuffles, and logcumsumexp's took 26 us of GPU time.)
constexpr int BLOCK_ROWS_MAX_LEN = 2048, BLOCK_ROWS_MAX_N = 1 << 16, SCAN_THREADS = 256;

// vals and out as scan_by_row's. Threads past the row's end repeat its last
// element: they come after every real one, so nothing real sees them.
template <int ITEMS, class V, class O, class Op>
__global__ void __launch_bounds__(SCAN_THREADS) scan_block_rows(V vals, O out, Op op, int64_t nseg, int64_t len)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    using E = typename std::iterator_traits<V>::value_type;
    using Scan = cub::BlockScan<E, SCAN_THREADS>;
    __shared__ typename Scan::TempStorage tmp;
    for (int64_t row = blockIdx.x; row < nseg; row += gridDim.x) {
        E items[ITEMS];
        const int64_t k0 = (int64_t)threadIdx.x * ITEMS;
#pragma unroll
        for (int j = 0; j < ITEMS; j++)
            items[j] = vals[row * len + (k0 + j < len ? k0 + j : len - 1)];
        Scan(tmp).InclusiveScan(items, items, op);
#pragma unroll
        for (int j = 0; j < ITEMS; j++)
            if (k0 + j < len)
                out[row * len + k0 + j] = items[j];
        __syncthreads(); // tmp is reused by the next row
    }
}

template <class V, class O, class Op>
void launch_block_rows(V vals, O out, Op op, int64_t nseg, int64_t len, cudaStream_t s)
{
    int64_t cap = (int64_t)sm_count() * 8;
    dim3 grid((unsigned)(nseg < cap ? nseg : cap));
    if (len <= SCAN_THREADS)
        launch_kernel_pdl(scan_block_rows<1, V, O, Op>, grid, SCAN_THREADS, s, vals, out, op, nseg, len);
    else if (len <= 4 * SCAN_THREADS)
        launch_kernel_pdl(scan_block_rows<4, V, O, Op>, grid, SCAN_THREADS, s, vals, out, op, nseg, len);
    else
        launch_kernel_pdl(scan_block_rows<8, V, O, Op>, grid, SCAN_THREADS, s, vals, out, op, nseg, len);
}

// One inclusive scan of every row: vals (an iterator over the elements)
// into out, restarting where the key i / len changes. Two-phase as the
// launchers: ws NULL sizes the workspace (CUB's temporary storage only).
// SMALL: small inputs go to scan_block_rows (cumsum and cumprod come here
// only with a few long rows, so they leave it out and instantiate less).
template <bool SMALL = true, class V, class O, class Op>
int scan_by_row(V vals, O out, Op op, int64_t n, int64_t len, char *ws, size_t *ws_bytes, cudaStream_t s)
{
    size_t tmp_bytes = 0;
    cudaError_t e;
    if constexpr (SMALL) {
        if (n > 0 && len <= BLOCK_ROWS_MAX_LEN && n <= BLOCK_ROWS_MAX_N) {
            if (!ws) { // no workspace
                *ws_bytes = 0;
                return 0;
            }
            launch_block_rows(vals, out, op, n / len, len, s);
            return 0;
        }
    }
    if (len >= n) {
        // one row: a plain scan, with no keys to carry and compare
        e = cub::DeviceScan::InclusiveScan(nullptr, tmp_bytes, vals, out, op, n, s);
        if (e != cudaSuccess || !ws) {
            *ws_bytes = tmp_bytes;
            return (int)e;
        }
        return n == 0 ? 0 : (int)cub::DeviceScan::InclusiveScan(ws, tmp_bytes, vals, out, op, n, s);
    }
    auto keys = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), RowOf{len});
    e = cub::DeviceScan::InclusiveScanByKey(nullptr, tmp_bytes, keys, vals, out, op, n,
                                            cuda::std::equal_to<>{}, s);
    if (e != cudaSuccess || !ws) {
        *ws_bytes = tmp_bytes;
        return (int)e;
    }
    if (n == 0)
        return 0;
    return (int)cub::DeviceScan::InclusiveScanByKey(ws, tmp_bytes, keys, vals, out, op, n,
                                                    cuda::std::equal_to<>{}, s);
}

template <class T, bool MAX>
int run_cumext(const T *x, T *out, int64_t *idx, int64_t n, int64_t len, char *ws, size_t *ws_bytes,
               cudaStream_t s)
{
    // The pairs go straight to the two outputs: the scan writes a (value,
    // index) tuple through a zip of (out, idx).
    auto vals = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), LoadVI<T>{x, len});
    auto dst = thrust::make_transform_output_iterator(thrust::make_zip_iterator(out, idx), SplitVI<T>{});
    return scan_by_row(vals, dst, PickVI<compute_t<T>, MAX>{}, n, len, ws, ws_bytes, s);
}

template <class T>
int run_lse(const T *x, T *out, int64_t n, int64_t len, char *ws, size_t *ws_bytes, cudaStream_t s)
{
    using A = lse_t<T>;
    auto vals = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), LoadLse<T>{x});
    auto dst = thrust::make_transform_output_iterator(out, StoreLse<T>{}); // rounded once, at the end
    return scan_by_row(vals, dst, LogAddExp<A>{}, n, len, ws, ws_bytes, s);
}

// One row: a plain scan, no keys; several: by row, as the others.
template <class T, bool PROD>
int run_cumsum(const T *x, T *out, int64_t n, int64_t len, char *ws, size_t *ws_bytes, cudaStream_t s)
{
    auto vals = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), LoadSum<T>{x});
    auto dst = thrust::make_transform_output_iterator(out, StoreSum<T>{});
    if (n != len)
        return scan_by_row<false>(vals, dst, SumOp<sum_t<T>, PROD>{}, n, len, ws, ws_bytes, s);
    size_t tmp_bytes = 0;
    cudaError_t e = cub::DeviceScan::InclusiveScan(nullptr, tmp_bytes, vals, dst, SumOp<sum_t<T>, PROD>{}, n, s);
    if (e != cudaSuccess || !ws) {
        *ws_bytes = tmp_bytes;
        return (int)e;
    }
    if (n == 0)
        return 0;
    return (int)cub::DeviceScan::InclusiveScan(ws, tmp_bytes, vals, dst, SumOp<sum_t<T>, PROD>{}, n, s);
}

} // namespace

extern "C" int pcs_scan_rows(int op, int dtype, const void *in, void *out, int64_t *indices,
                             int64_t nseg, int64_t seglen, void *ws, size_t *ws_bytes, cudaStream_t s)
{
    int64_t n = nseg * seglen;
    if (seglen == 0)
        n = 0;
    return dispatch_dtype(dtype, [&](auto tv) -> int {
        using T = decltype(tv);
        if constexpr (is_cx<T>) {
            return -1;
        } else {
            const T *x = (const T *)in;
            char *w = (char *)ws;
            if (op == PCS_SCAN_CUMMAX)
                return run_cumext<T, true>(x, (T *)out, indices, n, seglen ? seglen : 1, w, ws_bytes, s);
            if (op == PCS_SCAN_CUMMIN)
                return run_cumext<T, false>(x, (T *)out, indices, n, seglen ? seglen : 1, w, ws_bytes, s);
            if constexpr (is_flt<T>) {
                if (op == PCS_SCAN_LOGCUMSUMEXP)
                    return run_lse<T>(x, (T *)out, n, seglen ? seglen : 1, w, ws_bytes, s);
            }
            if constexpr (!std::is_same_v<T, bool>) {
                if (op == PCS_SCAN_CUMSUM)
                    return run_cumsum<T, false>(x, (T *)out, n, seglen ? seglen : 1, w, ws_bytes, s);
                if (op == PCS_SCAN_CUMPROD)
                    return run_cumsum<T, true>(x, (T *)out, n, seglen ? seglen : 1, w, ws_bytes, s);
            }
            return -1;
        }
    });
}
