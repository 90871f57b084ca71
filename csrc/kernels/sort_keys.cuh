// sort_keys.cuh: what the sorting and selection kernels (sort.cu, select.cu)
// share: the order-preserving unsigned keys that let CUB sort every dtype in
// torch's order (NaN last, -0.0 equal to +0.0), grid-stride loops, the
// workspace carving of the two-phase launchers, and CUB's sort of rows.
#pragma once

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "ew_common.cuh"

namespace pcs {

// ---------------------------------------------------------------------------
// Keys

template <class T> struct ukey_of;
template <> struct ukey_of<bool> { using type = uint8_t; };
template <> struct ukey_of<uint8_t> { using type = uint8_t; };
template <> struct ukey_of<int8_t> { using type = uint8_t; };
template <> struct ukey_of<int16_t> { using type = uint16_t; };
template <> struct ukey_of<int32_t> { using type = uint32_t; };
template <> struct ukey_of<int64_t> { using type = uint64_t; };
template <> struct ukey_of<__half> { using type = uint16_t; };
template <> struct ukey_of<__nv_bfloat16> { using type = uint16_t; };
template <> struct ukey_of<float> { using type = uint32_t; };
template <> struct ukey_of<double> { using type = uint64_t; };
template <class T> using ukey_t = typename ukey_of<T>::type;

template <class T> constexpr bool sortable = !is_cx<T>;

// The bits of x, as the unsigned key type.
template <class T> __device__ __forceinline__ ukey_t<T> bits_of(T x)
{
    ukey_t<T> u;
    memcpy(&u, &x, sizeof u);
    return u;
}

// The order-preserving key of x; merge_zero maps -0.0 to +0.0's key.
template <class T> __device__ __forceinline__ ukey_t<T> to_key(T x, bool merge_zero, bool desc)
{
    using U = ukey_t<T>;
    constexpr U top = U(U(1) << (sizeof(U) * 8 - 1));
    U u = bits_of(x);
    if constexpr (is_flt<T>) {
        if (is_nan(to_c<double>(x)))
            u = U(~U(0));
        else {
            if (merge_zero && u == top)
                u = 0;
            u = (u & top) ? U(~u) : U(u | top);
        }
    } else if constexpr (std::is_signed_v<T>) {
        u = U(u ^ top);
    }
    return desc ? U(~u) : u;
}

// Inverse of to_key, exact except where to_key merged bit patterns: a NaN
// comes back as the canonical quiet NaN, a merged -0.0 as +0.0 (the
// keys-only path does not merge zeros; the path with indices reads zeros and
// NaNs back from the input).
template <class T> __device__ __forceinline__ T from_key(ukey_t<T> u, bool desc)
{
    using U = ukey_t<T>;
    constexpr U top = U(U(1) << (sizeof(U) * 8 - 1));
    if (desc)
        u = U(~u);
    if constexpr (is_flt<T>) {
        if (u == U(~U(0)))
            u = std::is_same_v<T, float> ? U(0x7fc00000u) : std::is_same_v<T, double> ? U(0x7ff8000000000000ull)
              : std::is_same_v<T, __half> ? U(0x7e00u) : U(0x7fc0u);
        else
            u = (u & top) ? U(u & ~top) : U(~u);
    } else if constexpr (std::is_signed_v<T>) {
        u = U(u ^ top);
    }
    T x;
    memcpy(&x, &u, sizeof x);
    return x;
}

// Grid for a grid-stride loop over n elements.
inline unsigned grid_for(int64_t n, int threads = 256)
{
    int64_t b = (n + threads - 1) / threads, cap = (int64_t)sm_count() * 32;
    return (unsigned)(b < 1 ? 1 : b < cap ? b : cap);
}

#define GRID_STRIDE(i, n)                                                                          \
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (n);                    \
         i += (int64_t)gridDim.x * blockDim.x)

struct RowStart {
    int64_t len;
    __host__ __device__ int64_t operator()(int64_t r) const { return r * len; }
};
using RowIt = thrust::transform_iterator<RowStart, thrust::counting_iterator<int64_t>>;

// Carves 256-byte aligned pieces out of one workspace (and, with base NULL,
// only counts the bytes).
struct Carve {
    char *base;
    size_t used = 0;
    template <class P> P *take(size_t bytes)
    {
        size_t at = used;
        used += (bytes + 255) & ~(size_t)255;
        return base ? (P *)(base + at) : nullptr;
    }
    // The last piece, CUB's temporary storage, into *tmp; true (with
    // *ws_bytes set) when this call only sizes the workspace.
    bool sized(size_t tmp_bytes, void **tmp, size_t *ws_bytes)
    {
        *tmp = take<char>(tmp_bytes);
        if (base)
            return false;
        *ws_bytes = used;
        return true;
    }
};

// Whether nseg rows of seglen keys sort one row at a time, each with the
// device-wide DeviceRadixSort, rather than together with
// DeviceSegmentedSort, which gives every long row a single block: a few
// long rows then leave most of the GPU idle ([16, 2^22] float32 ran at
// 0.18x torch, [2, 2^23] at 0.02x). Measured on the H100 (float32 with
// indices): a row sorted alone costs about 60 us plus 0.05 us a thousand
// keys; a segmented sort with a block a row about 6 us a thousand keys of
// the longest row, whatever the count up to a block an SM. So a row at a
// time wins while nseg (seglen + 2^20) < 120 seglen: 16 rows of 2^20 (1.02x
// torch), not 64 of 2^18 nor 8 of 2^16. (sort.cu sorts rows shorter than
// 2^20 of keys up to 32 bits together under composite keys first.)
inline bool rows_one_at_a_time(int64_t nseg, int64_t seglen)
{
    return nseg > 1 && nseg * (seglen + (int64_t(1) << 20)) < 120 * seglen;
}

// DeviceRadixSort of each row in turn, in the rows' slices of the double
// buffers, with one temporary storage (the stream orders the rows). Every
// row has the same length and bit range, so CUB makes the same number of
// passes and leaves each in the same buffer; a row that ended in the other
// one (never seen) would be copied across rather than trusted.
template <class U>
cudaError_t sort_rows_in_turn(void *tmp, size_t &tmp_bytes, cub::DoubleBuffer<U> &keys,
                              cub::DoubleBuffer<int32_t> *vals, int64_t nseg, int64_t seglen,
                              cudaStream_t s)
{
    const int n = (int)seglen, eb = (int)sizeof(U) * 8;
    int ksel = keys.selector, vsel = vals ? vals->selector : 0;
    for (int64_t r = 0; r < (tmp ? nseg : 1); r++) {
        const int64_t at = r * seglen;
        cub::DoubleBuffer<U> kr(keys.d_buffers[0] + at, keys.d_buffers[1] + at);
        kr.selector = keys.selector;
        cudaError_t e;
        if (vals) {
            cub::DoubleBuffer<int32_t> vr(vals->d_buffers[0] + at, vals->d_buffers[1] + at);
            vr.selector = vals->selector;
            e = cub::DeviceRadixSort::SortPairs(tmp, tmp_bytes, kr, vr, n, 0, eb, s);
            if (e == cudaSuccess && tmp && r == 0)
                vsel = vr.selector;
            else if (e == cudaSuccess && tmp && vr.selector != vsel)
                e = cudaMemcpyAsync(vals->d_buffers[vsel] + at, vr.Current(), seglen * sizeof(int32_t),
                                    cudaMemcpyDeviceToDevice, s);
        } else {
            e = cub::DeviceRadixSort::SortKeys(tmp, tmp_bytes, kr, n, 0, eb, s);
        }
        if (e == cudaSuccess && tmp && r == 0)
            ksel = kr.selector;
        else if (e == cudaSuccess && tmp && kr.selector != ksel)
            e = cudaMemcpyAsync(keys.d_buffers[ksel] + at, kr.Current(), seglen * sizeof(U),
                                cudaMemcpyDeviceToDevice, s);
        if (e != cudaSuccess)
            return e;
    }
    keys.selector = ksel;
    if (vals)
        vals->selector = vsel;
    return cudaSuccess;
}

// CUB's part of a sort of `n` keys of type U in nseg rows (pairs: int32
// values). end_bit > 0 (one row only): every key agrees on the bits from
// end_bit up, so the radix passes cover bits [0, end_bit) alone.
template <class U>
cudaError_t cub_sort(void *tmp, size_t &tmp_bytes, cub::DoubleBuffer<U> &keys,
                     cub::DoubleBuffer<int32_t> *vals, int64_t n, int64_t nseg, int64_t seglen,
                     cudaStream_t s, int end_bit = 0)
{
    RowIt begin(thrust::counting_iterator<int64_t>(0), RowStart{seglen});
    RowIt end(thrust::counting_iterator<int64_t>(1), RowStart{seglen});
    if (rows_one_at_a_time(nseg, seglen))
        return sort_rows_in_turn(tmp, tmp_bytes, keys, vals, nseg, seglen, s);
    if (nseg == 1) {
        const int eb = end_bit > 0 ? end_bit : (int)sizeof(U) * 8;
        if (vals)
            return cub::DeviceRadixSort::SortPairs(tmp, tmp_bytes, keys, *vals, (int)n, 0, eb, s);
        return cub::DeviceRadixSort::SortKeys(tmp, tmp_bytes, keys, (int)n, 0, eb, s);
    }
    if (vals)
        return cub::DeviceSegmentedSort::StableSortPairs(tmp, tmp_bytes, keys, *vals, n, nseg, begin,
                                                         end, s);
    return cub::DeviceSegmentedSort::StableSortKeys(tmp, tmp_bytes, keys, n, nseg, begin, end, s);
}

} // namespace pcs
