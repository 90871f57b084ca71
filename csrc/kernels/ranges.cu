// ranges.cu: the factories whose values are a function of the index
// (arange, linspace, logspace, eye, tril_indices, triu_indices), written on
// the device in one launch with no host staging. Each formula is the one the
// CPU path of ops/ranges.c evaluates, in the same precision, so a factory
// gives the same values on both devices.
#include "ew_common.cuh"
#include "pdl.cuh"

namespace {

constexpr int THREADS = 256;

inline unsigned blocks_for(int64_t n)
{
    int64_t b = (n + THREADS - 1) / THREADS, cap = (int64_t)pcs::sm_count() * 8;
    return (unsigned)(b < cap ? (b > 0 ? b : 1) : cap);
}

template <class T>
__global__ void arange_kernel(T *out, int64_t n, pcs_range_params p)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        if (p.is_int)
            out[i] = pcs::from_c<T>(p.i0 + p.istep * i);
        else
            out[i] = pcs::from_c<T>(PCS_DADD(p.d0, PCS_DMUL(p.dstep, (double)i)));
    }
}

template <class T>
__global__ void linspace_kernel(T *out, int64_t n, pcs_range_params p)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        out[i] = pcs::from_c<T>(pcs_spaced_value(&p, i, n));
    }
}

template <class T>
__global__ void eye_kernel(T *out, int64_t rows, int64_t cols)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    int64_t n = rows * cols;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        out[i] = pcs::from_c<T>(i / cols == i % cols ? 1 : 0);
}

// One thread a row: row r's entries start at pcs_tri_prefix(r) in both
// output rows (the row indices, then the column indices).
template <class T>
__global__ void tri_kernel(T *out, int64_t rows, int64_t cols, int64_t offset, int upper,
                           int64_t total)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    for (int64_t r = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; r < rows;
         r += (int64_t)gridDim.x * blockDim.x) {
        int64_t k = pcs_tri_prefix(r, cols, offset, upper);
        int64_t c0 = upper ? (r + offset > 0 ? r + offset : 0) : 0;
        int64_t c1 = upper ? cols : (r + offset + 1 < cols ? r + offset + 1 : cols);
        for (int64_t c = c0; c < c1; c++, k++) {
            out[k] = (T)r;
            out[total + k] = (T)c;
        }
    }
}

} // namespace

extern "C" int pcs_launch_range(int kind, void *out, int dtype, int64_t n,
                                const pcs_range_params *p, cudaStream_t stream)
{
    if (n <= 0)
        return 0;
    pcs_range_params q = *p;
    return pcs::dispatch_dtype(dtype, [&](auto t) {
        using T = decltype(t);
        if constexpr (pcs::is_cx<T>) {
            return -1; // complex ranges are refused by the host
        } else {
            if (kind == PCS_RANGE_ARANGE)
                pcs::launch_kernel_pdl(arange_kernel<T>, blocks_for(n), THREADS, stream, (T *)out, n, q);
            else
                pcs::launch_kernel_pdl(linspace_kernel<T>, blocks_for(n), THREADS, stream, (T *)out, n, q);
            return 0;
        }
    });
}

extern "C" int pcs_launch_eye(void *out, int dtype, int64_t rows, int64_t cols, cudaStream_t stream)
{
    if (rows <= 0 || cols <= 0)
        return 0;
    return pcs::dispatch_dtype(dtype, [&](auto t) {
        using T = decltype(t);
        pcs::launch_kernel_pdl(eye_kernel<T>, blocks_for(rows * cols), THREADS, stream, (T *)out, rows,
                           cols);
        return 0;
    });
}

extern "C" int pcs_launch_tri_indices(void *out, int dtype, int64_t rows, int64_t cols,
                                      int64_t offset, int upper, cudaStream_t stream)
{
    int64_t total = pcs_tri_prefix(rows, cols, offset, upper);
    if (total <= 0)
        return 0;
    return pcs::dispatch_dtype(dtype, [&](auto t) {
        using T = decltype(t);
        if constexpr (pcs::is_flt<T> || pcs::is_cx<T> || std::is_same_v<T, bool>) {
            return -1; // torch: integer index dtypes only
        } else {
            pcs::launch_kernel_pdl(tri_kernel<T>, blocks_for(rows), THREADS, stream, (T *)out, rows,
                               cols, offset, upper, total);
            return 0;
        }
    });
}
