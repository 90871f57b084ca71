// compact.cu: stream compaction behind index.h's nonzero and masked_select
// launchers: the positions of the non-zero elements (nonzero, x[mask]'s
// indices), the flagged elements themselves (masked_select, x[mask] of a
// whole-shape mask), and the unravelling of positions into coordinates.
//
// Large inputs go through cub::DeviceSelect::Flagged, which launches two
// kernels (its tile-state initialisation, then the select pass). Up to
// PCS_SELECT_ONE_BLOCK elements one block does the whole selection in one
// launch, with no temporary storage: each thread tests a run of elements,
// cub::BlockScan numbers the hits, each thread writes its own. Both callers
// wait for the count right after, so the launch saved comes straight off
// the host time of nonzero and x[mask] on small tensors; the count can go
// to host-mapped memory with a flag raised after it (runtime/host_signal.h),
// so the host need not copy it back and synchronise the stream.
#include <cub/block/block_scan.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "ew_common.cuh"
#include "index.h"
#include "pdl.cuh"

using namespace pcs;

namespace {

using Bytes16 = Pack<uint64_t, 2>;

constexpr int kOneBlockThreads = 512;
constexpr int kOneBlockItems = PCS_SELECT_ONE_BLOCK / kOneBlockThreads;

// Whether element i has a bit set under mask: W words of the element's
// size, or (H = 2) two 8-byte halves of a 16-byte one.
template <class W, int H> struct NonZeroBits {
    const W *p;
    uint64_t mask;
    __host__ __device__ bool operator()(int64_t i) const
    {
        uint64_t bits = (uint64_t)p[i * H];
        if constexpr (H == 2)
            bits |= (uint64_t)p[i * H + 1];
        return (bits & mask) != 0;
    }
};

struct FlagAt {
    const bool *f;
    __device__ bool operator()(int64_t i) const { return f[i]; }
};

// What a hit writes: its position (nonzero) or its element (masked_select).
struct PutPosition {
    int64_t *out;
    __device__ void operator()(int i, int slot) const { out[slot] = i; }
};

template <class E> struct PutElement {
    const E *in;
    E *out;
    __device__ void operator()(int i, int slot) const { out[slot] = in[i]; }
};

// The whole selection of n <= PCS_SELECT_ONE_BLOCK elements in one block:
// thread t tests elements [t * ITEMS, (t + 1) * ITEMS), the block scan gives
// each thread the slot of its first hit, and the hits keep their order.
template <class Flag, class Put>
__global__ void __launch_bounds__(kOneBlockThreads)
select_one_block(Flag flag, Put put, int64_t *count, unsigned *done, int n)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    using Scan = cub::BlockScan<int, kOneBlockThreads>;
    __shared__ typename Scan::TempStorage tmp;
    const int base = threadIdx.x * kOneBlockItems;
    unsigned hits = 0; // bit j: element base + j is selected
    int mine = 0;
#pragma unroll
    for (int j = 0; j < kOneBlockItems; j++)
        if (base + j < n && flag(base + j)) {
            hits |= 1u << j;
            mine++;
        }
    int slot = 0, total = 0;
    Scan(tmp).ExclusiveSum(mine, slot, total);
#pragma unroll
    for (int j = 0; j < kOneBlockItems; j++)
        if (hits & (1u << j))
            put(base + j, slot++);
    if (threadIdx.x == 0) {
        *count = total;
        if (done) { // the count (and, in stream order, all before it) is final
            __threadfence_system();
            *(volatile unsigned *)done = 1;
        }
    }
}
static_assert(kOneBlockItems <= 32, "the hits of a thread are one 32-bit word");

template <class Flag, class Put>
void launch_one_block(Flag flag, Put put, int64_t *count, unsigned *done, int64_t n, cudaStream_t st)
{
    launch_kernel_pdl(select_one_block<Flag, Put>, 1, kOneBlockThreads, st, flag, put, count, done, (int)n);
}

template <class W, int H>
int select_positions(void *temp, size_t *bytes, const void *values, uint64_t mask, int64_t *out,
                     int64_t *count, unsigned *done, int64_t n, cudaStream_t stream)
{
    NonZeroBits<W, H> test{(const W *)values, mask};
    if (n <= PCS_SELECT_ONE_BLOCK) {
        if (temp || done) // not the sizing call
            launch_one_block(test, PutPosition{out}, count, done, n, stream);
        *bytes = 0;
        return 0;
    }
    if (done)
        return -1; // CUB's count kernel raises no flag
    thrust::counting_iterator<int64_t> it(0);
    auto flags = thrust::make_transform_iterator(it, test);
    cudaError_t e = cub::DeviceSelect::Flagged(temp, *bytes, it, flags, out, count, n, stream);
    return e == cudaSuccess ? 0 : -1;
}

template <class E>
int select_flagged(void *temp, size_t *bytes, const void *in, const bool *flags, void *out,
                   int64_t *count, unsigned *done, int64_t n, cudaStream_t st)
{
    if (n <= PCS_SELECT_ONE_BLOCK) {
        if (temp || done) // not the sizing call
            launch_one_block(FlagAt{flags}, PutElement<E>{(const E *)in, (E *)out}, count, done, n, st);
        *bytes = 0;
        return 0;
    }
    if (done)
        return -1;
    return cub::DeviceSelect::Flagged(temp, *bytes, (const E *)in, flags, (E *)out, count, n, st) ==
                   cudaSuccess
               ? 0
               : -1;
}

struct Dims {
    int64_t s[PCS_MAX_DIMS];
};

__global__ void unravel_kernel(int64_t *out, const int64_t *lin, int64_t count, int ndim, Dims sz)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += step) {
        int64_t rem = lin[i];
        for (int d = ndim - 1; d >= 0; d--) {
            out[i * ndim + d] = rem % sz.s[d];
            rem /= sz.s[d];
        }
    }
}

} // namespace

extern "C" int pcs_index_select_positions(void *temp, size_t *bytes, const void *values, int itemsize,
                                          uint64_t mask, int64_t *out, int64_t *count, unsigned *done,
                                          int64_t n, cudaStream_t stream)
{
    switch (itemsize) {
    case 1: return select_positions<uint8_t, 1>(temp, bytes, values, mask, out, count, done, n, stream);
    case 2: return select_positions<uint16_t, 1>(temp, bytes, values, mask, out, count, done, n, stream);
    case 4: return select_positions<uint32_t, 1>(temp, bytes, values, mask, out, count, done, n, stream);
    case 8: return select_positions<uint64_t, 1>(temp, bytes, values, mask, out, count, done, n, stream);
    case 16: return select_positions<uint64_t, 2>(temp, bytes, values, mask, out, count, done, n, stream);
    default: return -1;
    }
}

extern "C" int pcs_index_select_flagged(void *temp, size_t *bytes, int itemsize, const void *in,
                                        const bool *flags, void *out, int64_t *count, unsigned *done,
                                        int64_t n, cudaStream_t stream)
{
    switch (itemsize) {
    case 1: return select_flagged<uint8_t>(temp, bytes, in, flags, out, count, done, n, stream);
    case 2: return select_flagged<uint16_t>(temp, bytes, in, flags, out, count, done, n, stream);
    case 4: return select_flagged<uint32_t>(temp, bytes, in, flags, out, count, done, n, stream);
    case 8: return select_flagged<uint64_t>(temp, bytes, in, flags, out, count, done, n, stream);
    case 16: return select_flagged<Bytes16>(temp, bytes, in, flags, out, count, done, n, stream);
    default: return -1;
    }
}

extern "C" int pcs_launch_index_unravel(int64_t *out, const int64_t *lin, int64_t count, int ndim,
                                        const int64_t *sizes, cudaStream_t stream)
{
    if (count <= 0 || ndim <= 0)
        return 0;
    Dims d = {};
    for (int i = 0; i < ndim && i < PCS_MAX_DIMS; i++)
        d.s[i] = sizes[i];
    int64_t blocks = (count + 255) / 256, cap = (int64_t)sm_count() * 32;
    launch_kernel_pdl(unravel_kernel, (unsigned)(blocks < cap ? blocks : cap), 256, stream, out, lin, count,
                  ndim, d);
    return 0;
}
