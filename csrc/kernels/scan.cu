// scan.cu: the scans that carry more than a running sum: cummax and cummin
// (value and index) and logcumsumexp, behind pcs_scan_rows (kernels.h).
//
// The host hands over a contiguous [nseg, seglen] block (the scanned dim
// last). One cub::DeviceScan::InclusiveScanByKey covers every row at once:
// the key of element i is its row, i / seglen, so the scan restarts at each
// row. cummax/cummin scan (value, index) pairs with torch's rule: a later
// element wins ties (>= for max, <= for min), and NaN wins over everything,
// the latest NaN over earlier ones; that choice is associative, as a scan
// needs. logcumsumexp scans log(exp(a) + exp(b)) in float (double for
// double), computed from the larger term so nothing overflows.
#include <cub/device/device_scan.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "ew_common.cuh"

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

#define GRID_STRIDE(i, n)                                                                          \
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (n);                    \
         i += (int64_t)gridDim.x * blockDim.x)

template <class T> __global__ void split_vi(const VI<compute_t<T>> *p, T *v, int64_t *idx, int64_t n)
{
    GRID_STRIDE(i, n)
    {
        v[i] = from_c<T>(p[i].v);
        idx[i] = p[i].i;
    }
}

template <class T> __global__ void narrow_lse(const lse_t<T> *p, T *v, int64_t n)
{
    GRID_STRIDE(i, n) v[i] = from_c<T>(p[i]);
}

inline unsigned grid_for(int64_t n)
{
    int64_t b = (n + 255) / 256, cap = (int64_t)sm_count() * 32;
    return (unsigned)(b < 1 ? 1 : b < cap ? b : cap);
}

inline size_t round_up(size_t b) { return (b + 255) & ~(size_t)255; }

// One inclusive scan of every row: vals (an iterator over the elements)
// into out, restarting where the key i / len changes. Two-phase as the
// launchers: ws NULL sizes the workspace (the caller's buf bytes first).
template <class V, class O, class Op>
int scan_by_row(V vals, O out, Op op, int64_t n, int64_t len, size_t buf, char *ws, size_t *ws_bytes,
                cudaStream_t s)
{
    auto keys = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), RowOf{len});
    size_t tmp_bytes = 0;
    cudaError_t e = cub::DeviceScan::InclusiveScanByKey(nullptr, tmp_bytes, keys, vals, out, op, n,
                                                        cuda::std::equal_to<>{}, s);
    if (e != cudaSuccess || !ws) {
        *ws_bytes = buf + tmp_bytes;
        return (int)e;
    }
    if (n == 0)
        return 0;
    return (int)cub::DeviceScan::InclusiveScanByKey(ws + buf, tmp_bytes, keys, vals, out, op, n,
                                                    cuda::std::equal_to<>{}, s);
}

template <class T, bool MAX>
int run_cumext(const T *x, T *out, int64_t *idx, int64_t n, int64_t len, char *ws, size_t *ws_bytes,
               cudaStream_t s)
{
    using P = VI<compute_t<T>>;
    auto vals = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), LoadVI<T>{x, len});
    P *pairs = (P *)ws;
    int r = scan_by_row(vals, pairs, PickVI<compute_t<T>, MAX>{}, n, len, round_up(n * sizeof(P)), ws,
                        ws_bytes, s);
    if (r == 0 && ws && n)
        launch_kernel(split_vi<T>, grid_for(n), 256, s, (const P *)pairs, out, idx, n);
    return r;
}

template <class T>
int run_lse(const T *x, T *out, int64_t n, int64_t len, char *ws, size_t *ws_bytes, cudaStream_t s)
{
    using A = lse_t<T>;
    constexpr bool direct = std::is_same_v<A, T>; // float and double scan into out itself
    auto vals = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), LoadLse<T>{x});
    A *acc = direct ? (A *)out : (A *)ws;
    int r = scan_by_row(vals, acc, LogAddExp<A>{}, n, len, direct ? 0 : round_up(n * sizeof(A)), ws,
                        ws_bytes, s);
    if constexpr (!direct) {
        if (r == 0 && ws && n)
            launch_kernel(narrow_lse<T>, grid_for(n), 256, s, (const A *)acc, out, n);
    }
    return r;
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
            return -1;
        }
    });
}
