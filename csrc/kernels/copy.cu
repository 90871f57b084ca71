// copy.cu: strided copies, dtype casts and fills on the GPU.
//
// One kernel template covers every (destination, source) dtype pair; the
// host-side dispatch below instantiates all 144 pairs from the dtype list
// once, so no per-dtype code is written by hand. Conversions follow the
// rules of the host table in scalar.c: integers wrap, floats convert to
// integers through int64, complex -> real keeps the real part, anything ->
// bool is "non-zero". Same-dtype copies move raw bytes (1..16-byte carriers)
// so they never convert at all.
//
// Paths: contiguous on both sides -> each thread moves VEC elements with
// packed loads when the pointers are aligned (the bandwidth path); otherwise
// the general strided path computes offsets from the (coalesced) geometry.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <string.h>

#include <type_traits>

#include "kernels.h"
#include "launch.cuh"

namespace {

struct alignas(8) c64 {
    float re, im;
};
struct alignas(16) c128 {
    double re, im;
};
struct alignas(16) b16 {
    uint64_t lo, hi;
};

// ---------------------------------------------------------------------------
// Conversions: load into a wide value of the source's kind, store from it.

template <typename T> struct Kind;  // 0 int-like, 1 float, 2 complex
template <> struct Kind<bool> { static constexpr int k = 0; };
template <> struct Kind<uint8_t> { static constexpr int k = 0; };
template <> struct Kind<int8_t> { static constexpr int k = 0; };
template <> struct Kind<int16_t> { static constexpr int k = 0; };
template <> struct Kind<int32_t> { static constexpr int k = 0; };
template <> struct Kind<int64_t> { static constexpr int k = 0; };
template <> struct Kind<__half> { static constexpr int k = 1; };
template <> struct Kind<__nv_bfloat16> { static constexpr int k = 1; };
template <> struct Kind<float> { static constexpr int k = 1; };
template <> struct Kind<double> { static constexpr int k = 1; };
template <> struct Kind<c64> { static constexpr int k = 2; };
template <> struct Kind<c128> { static constexpr int k = 2; };

// The wide float of a source: float for 16/32-bit floats (so float -> half
// rounds once), double for double.
__device__ __forceinline__ float widef(__half v) { return __half2float(v); }
__device__ __forceinline__ float widef(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float widef(float v) { return v; }
__device__ __forceinline__ double widef(double v) { return v; }

template <typename D> __device__ __forceinline__ D from_int(int64_t v)
{
    if constexpr (std::is_same_v<D, bool>) return v != 0;
    else if constexpr (std::is_same_v<D, __half>) return __float2half_rn((float)v);
    else if constexpr (std::is_same_v<D, __nv_bfloat16>) return __float2bfloat16_rn((float)v);
    else if constexpr (std::is_same_v<D, c64>) return c64{(float)v, 0.f};
    else if constexpr (std::is_same_v<D, c128>) return c128{(double)v, 0.};
    else return (D)v;
}

template <typename D, typename W> __device__ __forceinline__ D from_float(W v)
{
    if constexpr (std::is_same_v<D, bool>) return v != (W)0;
    else if constexpr (std::is_same_v<D, __half>) return __float2half_rn((float)v);
    else if constexpr (std::is_same_v<D, __nv_bfloat16>) return __float2bfloat16_rn((float)v);
    else if constexpr (std::is_same_v<D, float>) return (float)v;
    else if constexpr (std::is_same_v<D, double>) return (double)v;
    else if constexpr (std::is_same_v<D, c64>) return c64{(float)v, 0.f};
    else if constexpr (std::is_same_v<D, c128>) return c128{(double)v, 0.};
    else {
        // through int64 so negative values wrap like the CPU path; NaN and
        // out-of-range inputs are clamped to keep the conversion defined
        double d = (double)v;
        int64_t i = d != d ? 0 : d >= 9.2233720368547758e18 ? INT64_MAX
                   : d <= -9.2233720368547758e18 ? INT64_MIN : (int64_t)d;
        return (D)(uint64_t)i;
    }
}

template <typename D, typename S> __device__ __forceinline__ D convert(S v)
{
    if constexpr (std::is_same_v<D, S>) return v;
    else if constexpr (Kind<S>::k == 0) return from_int<D>((int64_t)v);
    else if constexpr (Kind<S>::k == 1) return from_float<D>(widef(v));
    else {  // complex source
        if constexpr (std::is_same_v<D, bool>) return v.re != 0 || v.im != 0;
        else if constexpr (std::is_same_v<D, c64>) return c64{(float)v.re, (float)v.im};
        else if constexpr (std::is_same_v<D, c128>) return c128{(double)v.re, (double)v.im};
        else return from_float<D>(v.re);
    }
}

// ---------------------------------------------------------------------------
// Kernels

constexpr int THREADS = 256;
constexpr int VEC = 4;

template <typename T, int N> struct alignas(sizeof(T) * N) Pack {
    T v[N];
};

template <typename D, typename S>
__global__ void copy_contig(D *__restrict__ dst, const S *__restrict__ src, int64_t n)
{
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    bool aligned = ((uintptr_t)dst % sizeof(Pack<D, VEC>)) == 0 &&
                   ((uintptr_t)src % sizeof(Pack<S, VEC>)) == 0;
    if (aligned) {
        int64_t nvec = n / VEC;
        for (int64_t v = i; v < nvec; v += stride) {
            Pack<S, VEC> in = reinterpret_cast<const Pack<S, VEC> *>(src)[v];
            Pack<D, VEC> out;
#pragma unroll
            for (int k = 0; k < VEC; k++)
                out.v[k] = convert<D>(in.v[k]);
            reinterpret_cast<Pack<D, VEC> *>(dst)[v] = out;
        }
        for (int64_t j = nvec * VEC + i; j < n; j += stride)
            dst[j] = convert<D>(src[j]);
    } else {
        for (int64_t j = i; j < n; j += stride)
            dst[j] = convert<D>(src[j]);
    }
}

template <typename D, typename S>
__global__ void copy_strided(D *dst, const S *src, int64_t n, pcs_copy_geom g)
{
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        int64_t rem = i, doff = 0, soff = 0;
        for (int d = g.ndim - 1; d >= 0; d--) {
            int64_t c = rem % g.sizes[d];
            rem /= g.sizes[d];
            doff += c * g.dst_strides[d];
            soff += c * g.src_strides[d];
        }
        dst[doff] = convert<D>(src[soff]);
    }
}

template <typename T>
__global__ void fill_kernel(T *dst, T value, int64_t n, pcs_copy_geom g, bool contig)
{
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        int64_t off = i;
        if (!contig) {
            int64_t rem = i;
            off = 0;
            for (int d = g.ndim - 1; d >= 0; d--) {
                off += (rem % g.sizes[d]) * g.dst_strides[d];
                rem /= g.sizes[d];
            }
        }
        dst[off] = value;
    }
}

unsigned blocks_for(int64_t work)
{
    int64_t b = (work + THREADS - 1) / THREADS;
    // grid-stride loops cover the rest; this many blocks fill any GPU
    return (unsigned)(b < 1 ? 1 : b > 65536 ? 65536 : b);
}

template <typename D, typename S>
void launch_pair(void *dst, const void *src, int64_t n, const pcs_copy_geom *g, cudaStream_t st)
{
    if (!g)
        pcs::launch_kernel(copy_contig<D, S>, blocks_for((n + VEC - 1) / VEC), THREADS, st, (D *)dst,
                           (const S *)src, n);
    else
        pcs::launch_kernel(copy_strided<D, S>, blocks_for(n), THREADS, st, (D *)dst, (const S *)src, n, *g);
}

// ---------------------------------------------------------------------------
// Dispatch from dtype ids to types: one switch, used for both sides.

template <typename T> struct Tag {
    using type = T;
};

template <typename F> bool with_type(int dtype, F &&f)
{
    switch (dtype) {
    case PCS_BOOL: f(Tag<bool>{}); return true;
    case PCS_UINT8: f(Tag<uint8_t>{}); return true;
    case PCS_INT8: f(Tag<int8_t>{}); return true;
    case PCS_INT16: f(Tag<int16_t>{}); return true;
    case PCS_INT32: f(Tag<int32_t>{}); return true;
    case PCS_INT64: f(Tag<int64_t>{}); return true;
    case PCS_FLOAT16: f(Tag<__half>{}); return true;
    case PCS_BFLOAT16: f(Tag<__nv_bfloat16>{}); return true;
    case PCS_FLOAT32: f(Tag<float>{}); return true;
    case PCS_FLOAT64: f(Tag<double>{}); return true;
    case PCS_COMPLEX64: f(Tag<c64>{}); return true;
    case PCS_COMPLEX128: f(Tag<c128>{}); return true;
    default: return false;
    }
}

// Raw-byte carriers for same-dtype copies and fills.
template <typename F> bool with_carrier(int itemsize, F &&f)
{
    switch (itemsize) {
    case 1: f(Tag<uint8_t>{}); return true;
    case 2: f(Tag<uint16_t>{}); return true;
    case 4: f(Tag<uint32_t>{}); return true;
    case 8: f(Tag<uint64_t>{}); return true;
    case 16: f(Tag<b16>{}); return true;
    default: return false;
    }
}

int dtype_size(int dtype)
{
    static const int sizes[PCS_NUM_DTYPES] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8, 8, 16};
    return dtype >= 0 && dtype < PCS_NUM_DTYPES ? sizes[dtype] : 0;
}

}  // namespace

extern "C" int pcs_launch_copy(void *dst, int dst_dtype, const void *src, int src_dtype,
                               int64_t n, const pcs_copy_geom *geom, cudaStream_t stream)
{
    if (n <= 0)
        return 0;
    if (dst_dtype == src_dtype) {
        bool ok = with_carrier(dtype_size(dst_dtype), [&](auto t) {
            using T = typename decltype(t)::type;
            launch_pair<T, T>(dst, src, n, geom, stream);
        });
        return ok ? 0 : -1;
    }
    bool inner_ok = true;
    bool ok = with_type(dst_dtype, [&](auto d) {
        inner_ok = with_type(src_dtype, [&](auto s) {
            using D = typename decltype(d)::type;
            using S = typename decltype(s)::type;
            if constexpr (!std::is_same_v<D, S>)
                launch_pair<D, S>(dst, src, n, geom, stream);
        });
    });
    return ok && inner_ok ? 0 : -1;
}

extern "C" int pcs_launch_fill(void *dst, int itemsize, const void *value, int64_t n,
                               const pcs_copy_geom *geom, cudaStream_t stream)
{
    if (n <= 0)
        return 0;
    pcs_copy_geom g;
    if (geom)
        g = *geom;
    else
        g.ndim = 0;
    bool ok = with_carrier(itemsize, [&](auto t) {
        using T = typename decltype(t)::type;
        T v;
        memcpy(&v, value, sizeof v);
        pcs::launch_kernel(fill_kernel<T>, blocks_for(n), THREADS, stream, (T *)dst, v, n, g, geom == nullptr);
    });
    return ok ? 0 : -1;
}
