// reduce_ops.cuh: the reduction ops and kernels that reduce.cu (one
// [A, K, B] pass) and reduce_split.cu (two passes, for reduced dims that
// are two runs in memory) share. See reduce.cu for the kernels' design.
#pragma once

#include <cuda/std/limits>

#include "ew_common.cuh"
#include "pdl.cuh"

using namespace pcs;

namespace {

template <class A> __device__ __forceinline__ A shfl_down(A v, int off, int width = 32)
{
    static_assert(sizeof(A) % 4 == 0, "accumulators are whole 32-bit words");
    constexpr int W = sizeof(A) / 4;
    int w[W];
    memcpy(w, &v, sizeof(A));
#pragma unroll
    for (int i = 0; i < W; i++)
        w[i] = __shfl_down_sync(0xffffffffu, w[i], off, width);
    memcpy(&v, w, sizeof(A));
    return v;
}

template <class A> __device__ __forceinline__ A shfl_up(A v, int off)
{
    constexpr int W = sizeof(A) / 4;
    int w[W];
    memcpy(w, &v, sizeof(A));
#pragma unroll
    for (int i = 0; i < W; i++)
        w[i] = __shfl_up_sync(0xffffffffu, w[i], off);
    memcpy(&v, w, sizeof(A));
    return v;
}

// Sums accumulate in int64 for integers and bool, float for 16-bit floats.
template <class T> struct sum_acc { using type = compute_t<T>; };
template <> struct sum_acc<bool> { using type = int64_t; };
template <> struct sum_acc<uint8_t> { using type = int64_t; };
template <> struct sum_acc<int8_t> { using type = int64_t; };
template <> struct sum_acc<int16_t> { using type = int64_t; };
template <> struct sum_acc<int32_t> { using type = int64_t; };
template <class T> using sum_acc_t = typename sum_acc<T>::type;
template <class T> using sum_out_t = std::conditional_t<is_int<T>, int64_t, T>;
// Real accumulation type for var/std/norm/logsumexp.
template <class T> using real_acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// ---------------------------------------------------------------------------
// The ops

template <class T, bool PROD, bool MEAN> struct RSum {
    using Acc = sum_acc_t<T>;
    using Out = sum_out_t<T>;
    int64_t K;
    double param;
    __device__ Acc ident() const { return Acc(PROD ? 1 : 0); }
    __device__ Acc map(T x, int64_t) const { return to_c<Acc>(x); }
    __device__ Acc comb(Acc a, Acc b) const { return PROD ? Acc(a * b) : Acc(a + b); }
    __device__ void store(Acc a, Out *out, int64_t *, int64_t o) const
    {
        if constexpr (MEAN)
            a = a / Acc((typename real_of<Acc>::type)K);
        out[o] = from_c<Out>(a);
    }
};

template <class T, bool MAX> struct RMax {
    using C = compute_t<T>;
    using Acc = C;
    using Out = T;
    int64_t K;
    double param;
    __device__ Acc ident() const
    {
        if constexpr (std::is_floating_point_v<C>)
            return MAX ? -cuda::std::numeric_limits<C>::infinity() : cuda::std::numeric_limits<C>::infinity();
        else
            return MAX ? cuda::std::numeric_limits<C>::lowest() : cuda::std::numeric_limits<C>::max();
    }
    __device__ Acc map(T x, int64_t) const { return to_c<C>(x); }
    // NaN wins, as in torch. b replaces a when it is beyond a or NaN; a NaN
    // a is never replaced (comparisons with NaN are false). For float, the
    // one NaN-propagating min/max instruction of sm_80 and later.
    __device__ Acc comb(Acc a, Acc b) const
    {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
        if constexpr (std::is_same_v<Acc, float>) {
            float r;
            if constexpr (MAX)
                asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
            else
                asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
            return r;
        }
#endif
        return ((MAX ? b > a : b < a) || is_nan(b)) ? b : a;
    }
    __device__ void store(Acc a, Out *out, int64_t *, int64_t o) const { out[o] = from_c<T>(a); }
};

template <class C> struct ValIdx {
    C v;
    int64_t i;
};

template <class T, bool MAX> struct RArg {
    using C = compute_t<T>;
    using Acc = ValIdx<C>;
    using Out = T;
    int64_t K;
    double param;
    __device__ Acc ident() const { return {RMax<T, MAX>{}.ident(), INT64_MAX}; }
    __device__ Acc map(T x, int64_t k) const { return {to_c<C>(x), k}; }
    __device__ Acc comb(Acc a, Acc b) const
    {
        bool an = is_nan(a.v), bn = is_nan(b.v);
        if (an || bn) {
            if (an && bn)
                return a.i < b.i ? a : b;
            return an ? a : b;
        }
        if (a.v == b.v)
            return a.i < b.i ? a : b;
        return (MAX ? a.v > b.v : a.v < b.v) ? a : b;
    }
    __device__ void store(Acc a, Out *out, int64_t *idx, int64_t o) const
    {
        if (out)
            out[o] = from_c<T>(a.v);
        if (idx)
            idx[o] = a.i;
    }
};

template <class T, bool ALL> struct RBool {
    using Acc = int;
    using Out = bool;
    int64_t K;
    double param;
    __device__ Acc ident() const { return ALL ? 1 : 0; }
    __device__ Acc map(T x, int64_t) const { return to_c<compute_t<T>>(x) != compute_t<T>(0); }
    __device__ Acc comb(Acc a, Acc b) const { return ALL ? (a & b) : (a | b); }
    __device__ void store(Acc a, Out *out, int64_t *, int64_t o) const { out[o] = a != 0; }
};

template <class R> struct Welford {
    R mean, m2, n;
};

template <class T, bool STD> struct RVar {
    using R = real_acc_t<T>;
    using Acc = Welford<R>;
    using Out = T;
    int64_t K;
    double param; // correction
    __device__ Acc ident() const { return {0, 0, 0}; }
    __device__ Acc map(T x, int64_t) const { return {to_c<R>(x), 0, 1}; }
    __device__ Acc comb(Acc a, Acc b) const
    {
        R n = a.n + b.n;
        if (n == 0)
            return a;
        R d = b.mean - a.mean;
        R f = b.n / n;
        return {a.mean + d * f, a.m2 + b.m2 + d * d * a.n * f, n};
    }
    __device__ void store(Acc a, Out *out, int64_t *, int64_t o) const
    {
        R div = a.n - R(param);
        R v = a.m2 / (div > 0 ? div : R(0));
        out[o] = from_c<T>(STD ? sqrt(v) : v);
    }
};

template <class T> struct RNorm {
    using R = real_acc_t<T>;
    using Acc = R;
    using Out = T;
    int64_t K;
    double param; // p
    __device__ Acc ident() const { return 0; }
    __device__ Acc map(T x, int64_t) const
    {
        R v = to_c<R>(x);
        R a = v < 0 ? -v : v;
        if (param == 2.0)
            return v * v;
        if (param == 1.0)
            return a;
        if (param == 0.0)
            return v != 0 ? R(1) : R(0);
        return pow(a, R(param));
    }
    __device__ Acc comb(Acc a, Acc b) const { return a + b; }
    __device__ void store(Acc a, Out *out, int64_t *, int64_t o) const
    {
        R r = param == 2.0 ? sqrt(a) : (param == 1.0 || param == 0.0) ? a : pow(a, R(1.0 / param));
        out[o] = from_c<T>(r);
    }
};

template <class R> struct MaxSum {
    R m, s;
};

template <class T> struct RLse {
    using R = real_acc_t<T>;
    using Acc = MaxSum<R>;
    using Out = T;
    int64_t K;
    double param;
    __device__ Acc ident() const { return {-cuda::std::numeric_limits<R>::infinity(), 0}; }
    __device__ Acc map(T x, int64_t) const { return {to_c<R>(x), 1}; }
    __device__ Acc comb(Acc a, Acc b) const
    {
        if (a.m != a.m || b.m != b.m)
            return {cuda::std::numeric_limits<R>::quiet_NaN(), 1};
        if (b.m > a.m) {
            Acc t = a;
            a = b;
            b = t;
        }
        if (b.m == -cuda::std::numeric_limits<R>::infinity())
            return a;
        if (a.m == cuda::std::numeric_limits<R>::infinity())
            return {a.m, 1};
        return {a.m, a.s + b.s * exp(b.m - a.m)};
    }
    __device__ void store(Acc a, Out *out, int64_t *, int64_t o) const
    {
        R r = a.s == 0 ? -cuda::std::numeric_limits<R>::infinity() : a.m + log(a.s);
        out[o] = from_c<T>(r);
    }
};

template <int OP, class T> struct RedOf { using type = void; };
template <class T> struct RedOf<PCS_ROP_SUM, T> { using type = RSum<T, false, false>; };
template <class T> struct RedOf<PCS_ROP_PROD, T> { using type = RSum<T, true, false>; };
template <class T> struct RedOf<PCS_ROP_MEAN, T> {
    using type = std::conditional_t<is_int<T>, void, RSum<T, false, true>>;
};
template <class T> struct RedOf<PCS_ROP_MAX, T> { using type = std::conditional_t<is_cx<T>, void, RMax<T, true>>; };
template <class T> struct RedOf<PCS_ROP_MIN, T> { using type = std::conditional_t<is_cx<T>, void, RMax<T, false>>; };
template <class T> struct RedOf<PCS_ROP_ARGMAX, T> { using type = std::conditional_t<is_cx<T>, void, RArg<T, true>>; };
template <class T> struct RedOf<PCS_ROP_ARGMIN, T> { using type = std::conditional_t<is_cx<T>, void, RArg<T, false>>; };
template <class T> struct RedOf<PCS_ROP_ALL, T> { using type = RBool<T, true>; };
template <class T> struct RedOf<PCS_ROP_ANY, T> { using type = RBool<T, false>; };
template <class T> struct RedOf<PCS_ROP_VAR, T> { using type = std::conditional_t<is_flt<T>, RVar<T, false>, void>; };
template <class T> struct RedOf<PCS_ROP_STD, T> { using type = std::conditional_t<is_flt<T>, RVar<T, true>, void>; };
template <class T> struct RedOf<PCS_ROP_NORM, T> { using type = std::conditional_t<is_flt<T>, RNorm<T>, void>; };
template <class T> struct RedOf<PCS_ROP_LOGSUMEXP, T> { using type = std::conditional_t<is_flt<T>, RLse<T>, void>; };

// ---------------------------------------------------------------------------
// Kernels

constexpr int kMaxThreads = 512;

// Combines the accumulators of the blockDim.x threads of each row group;
// the result is valid in threadIdx.x == 0. A group narrower than a warp (a
// power of two) shuffles within its own lanes.
template <class Rd> __device__ typename Rd::Acc group_reduce(const Rd &r, typename Rd::Acc acc)
{
    using Acc = typename Rd::Acc;
    if (blockDim.x < 32) {
        for (int off = blockDim.x / 2; off > 0; off >>= 1)
            acc = r.comb(acc, shfl_down(acc, off, blockDim.x));
        return acc;
    }
    for (int off = 16; off > 0; off >>= 1)
        acc = r.comb(acc, shfl_down(acc, off));
    if (blockDim.x == 32)
        return acc;
    __shared__ char smem_raw[sizeof(Acc) * (kMaxThreads / 32)];
    Acc *smem = reinterpret_cast<Acc *>(smem_raw);
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32, nw = blockDim.x / 32;
    if (lane == 0)
        smem[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        acc = lane < nw ? smem[lane] : r.ident();
        for (int off = 16; off > 0; off >>= 1)
            acc = r.comb(acc, shfl_down(acc, off));
    }
    return acc;
}

// Split s of a row owns packs s*G + t, s*G + t + S*G, ... (G threads a
// group, S splits): every split walks the whole row in a grid-stride loop, so
// the grid can be sized to what the GPU holds at once (no partial last wave)
// and neighbouring threads still read neighbouring 16-byte packs.
template <class Rd, class T>
__global__ void __launch_bounds__(kMaxThreads)
reduce_inner(Rd r, const T *in, int64_t A, int64_t K, int splits,
             typename Rd::Acc *partial, typename Rd::Out *out, int64_t *idx, bool vec)
{
    using Acc = typename Rd::Acc;
    constexpr int N = 16 / sizeof(T) > 0 ? 16 / sizeof(T) : 1;
    int64_t row = (int64_t)blockIdx.x * blockDim.y + threadIdx.y;
    int s = blockIdx.y;
    pdl_trigger(); // reduce_partials may be scheduled now; it waits for this grid
    Acc acc = r.ident();
    if (row < A) {
        const T *p = in + row * K;
        const int64_t first = (int64_t)s * blockDim.x + threadIdx.x;
        const int64_t stride = (int64_t)splits * blockDim.x;
        int64_t tail = 0; // elements before this are covered by packs
        if (vec) {
            const int64_t npacks = K / N;
            const Pack<T, N> *pp = reinterpret_cast<const Pack<T, N> *>(p);
            int64_t i = first;
            for (; i + 3 * stride < npacks; i += 4 * stride) {
                Pack<T, N> v[4];
#pragma unroll
                for (int u = 0; u < 4; u++)
                    v[u] = pp[i + u * stride];
#pragma unroll
                for (int u = 0; u < 4; u++)
#pragma unroll
                    for (int j = 0; j < N; j++)
                        acc = r.comb(acc, r.map(v[u].v[j], (i + u * stride) * N + j));
            }
            if (i < npacks) { // the last (up to 3) packs: their loads issue together
                Pack<T, N> v[3];
#pragma unroll
                for (int u = 0; u < 3; u++)
                    if (i + u * stride < npacks)
                        v[u] = pp[i + u * stride];
#pragma unroll
                for (int u = 0; u < 3; u++)
                    if (i + u * stride < npacks)
#pragma unroll
                        for (int j = 0; j < N; j++)
                            acc = r.comb(acc, r.map(v[u].v[j], (i + u * stride) * N + j));
            }
            tail = npacks * N;
        }
        for (int64_t k = tail + first; k < K; k += stride)
            acc = r.comb(acc, r.map(p[k], k));
    }
    acc = group_reduce(r, acc);
    if (threadIdx.x == 0 && row < A) {
        if (splits == 1)
            r.store(acc, out, idx, row);
        else
            partial[row * splits + s] = acc;
    }
}

template <class Rd>
__global__ void reduce_partials(Rd r, const typename Rd::Acc *partial, int splits,
                                typename Rd::Out *out, int64_t *idx)
{
    pdl_wait(); // reduce_inner's partials are written and visible
    typename Rd::Acc acc = r.ident();
    int64_t row = blockIdx.x;
    for (int i = threadIdx.x; i < splits; i += blockDim.x)
        acc = r.comb(acc, partial[row * splits + i]);
    acc = group_reduce(r, acc);
    if (threadIdx.x == 0)
        r.store(acc, out, idx, row);
}

// Outer reductions (B > 1). A block owns bx * V neighbouring columns of one
// a and a range of K (its split); thread (x, y) walks rows y, y + by, ...
// of the range with V-element vector loads, U rows in flight (64 bytes),
// so a warp reads whole 128-512 byte lines of each row. The by accumulators
// of a column are then combined through shared memory in a fixed tree, and with
// more than one split, written as partials for reduce_outer_partials: a
// fixed order everywhere, so a result is bit-identical from run to run.
constexpr int kOuterThreads = 256;

// Elements per vector load of the outer kernel: up to 4 (16 bytes for
// float, 8 for half: 16-byte packs of half measured 4 points of the copy
// bandwidth slower on the H100, and grow the shared-memory exchange).
template <class T> constexpr int outer_vec()
{
    return 16 / sizeof(T) >= 4 ? 4 : 16 / sizeof(T) > 0 ? int(16 / sizeof(T)) : 1;
}

template <class Rd, class T, int V>
__global__ void __launch_bounds__(kOuterThreads)
reduce_outer(Rd r, const T *in, int64_t A, int64_t K, int64_t B, int64_t ktile,
             typename Rd::Acc *partial, typename Rd::Out *out, int64_t *idx)
{
    using Acc = typename Rd::Acc;
    // Rows in flight a thread: 64 bytes of loads, as four 16-byte packs
    // (narrow packs of 2- and 1-byte types would otherwise leave too few
    // bytes in flight to cover the memory latency).
    constexpr int U = sizeof(T) * V >= 16 ? 4 : int(64 / (sizeof(T) * V));
    __shared__ char smem_raw[sizeof(Acc) * V * kOuterThreads];
    Acc *smem = reinterpret_cast<Acc *>(smem_raw);
    const int bx = blockDim.x, by = blockDim.y, tx = threadIdx.x, ty = threadIdx.y;
    const int64_t ctiles = (B + (int64_t)bx * V - 1) / ((int64_t)bx * V);
    const int64_t k0 = (int64_t)blockIdx.y * ktile;
    const int64_t k1 = k0 + ktile < K ? k0 + ktile : K;
    pdl_trigger(); // reduce_outer_partials may be scheduled now; it waits for this grid
    for (int64_t tile = blockIdx.x; tile < A * ctiles; tile += gridDim.x) {
        const int64_t a = tile / ctiles;
        const int64_t b0 = ((tile - a * ctiles) * bx + tx) * V;
        Acc acc[V];
#pragma unroll
        for (int j = 0; j < V; j++)
            acc[j] = r.ident();
        if (b0 < B) {
            const T *p = in + a * K * B + b0;
            int64_t k = k0 + ty;
            if constexpr (V > 1) { // B % V == 0: a pack never crosses a row
                using P = Pack<T, V>;
                for (; k + (U - 1) * by < k1; k += U * by) {
                    P v[U];
#pragma unroll
                    for (int u = 0; u < U; u++)
                        v[u] = *reinterpret_cast<const P *>(p + (k + u * by) * B);
#pragma unroll
                    for (int u = 0; u < U; u++)
#pragma unroll
                        for (int j = 0; j < V; j++)
                            acc[j] = r.comb(acc[j], r.map(v[u].v[j], k + u * by));
                }
                for (; k < k1; k += by) {
                    P v = *reinterpret_cast<const P *>(p + k * B);
#pragma unroll
                    for (int j = 0; j < V; j++)
                        acc[j] = r.comb(acc[j], r.map(v.v[j], k));
                }
            } else {
                for (; k + 3 * by < k1; k += 4 * by) {
                    T v[4];
#pragma unroll
                    for (int u = 0; u < 4; u++)
                        v[u] = p[(k + u * by) * B];
#pragma unroll
                    for (int u = 0; u < 4; u++)
                        acc[0] = r.comb(acc[0], r.map(v[u], k + u * by));
                }
                for (; k < k1; k += by)
                    acc[0] = r.comb(acc[0], r.map(p[k * B], k));
            }
        }
        // by is a power of two: halve it in a fixed tree.
#pragma unroll
        for (int j = 0; j < V; j++)
            smem[(ty * bx + tx) * V + j] = acc[j];
        __syncthreads();
        for (int h = by / 2; h > 0; h /= 2) {
            if (ty < h)
#pragma unroll
                for (int j = 0; j < V; j++)
                    smem[(ty * bx + tx) * V + j] =
                        r.comb(smem[(ty * bx + tx) * V + j], smem[((ty + h) * bx + tx) * V + j]);
            __syncthreads();
        }
        if (ty == 0 && b0 < B) {
#pragma unroll
            for (int j = 0; j < V; j++) {
                if (b0 + j >= B)
                    break;
                int64_t o = a * B + b0 + j;
                if (gridDim.y == 1)
                    r.store(smem[tx * V + j], out, idx, o);
                else
                    partial[(int64_t)blockIdx.y * A * B + o] = smem[tx * V + j];
            }
        }
        __syncthreads(); // smem is reused by the next tile
    }
}

// Second pass of a split outer reduction: partials [splits][n]. Thread
// (x, y) of a block takes output x of the block's bx and splits y, y + by,
// ... (eight loads in flight), then the by accumulators of an output meet
// in a fixed tree through shared memory: a fixed order, so the same bits
// from run to run. The splits are spread over threads because few outputs
// and many splits (a tall x.sum(0)) would otherwise leave one thread a
// chain of L2 round trips: 66 splits of [65536, 1024] float16 cost about
// 10 % of the whole reduction when one thread walked them.
constexpr int kPartialsThreads = 1024;

template <class Rd>
__global__ void __launch_bounds__(kPartialsThreads)
reduce_outer_partials(Rd r, const typename Rd::Acc *partial, int splits, int64_t n,
                      typename Rd::Out *out, int64_t *idx)
{
    using Acc = typename Rd::Acc;
    __shared__ char smem_raw[sizeof(Acc) * kPartialsThreads];
    Acc *smem = reinterpret_cast<Acc *>(smem_raw);
    const int bx = blockDim.x, by = blockDim.y, tx = threadIdx.x, ty = threadIdx.y;
    pdl_wait(); // reduce_outer's partials are written and visible
    for (int64_t o0 = (int64_t)blockIdx.x * bx; o0 < n; o0 += (int64_t)gridDim.x * bx) {
        const int64_t o = o0 + tx;
        Acc acc = r.ident();
        if (o < n && ty < splits) { // by <= splits: every thread has a first split
            acc = partial[(int64_t)ty * n + o];
            for (int s = ty + by; s < splits; s += 8 * by) {
                Acc v[8]; // the last round too: its loads still issue together
#pragma unroll
                for (int u = 0; u < 8; u++)
                    if (s + u * by < splits)
                        v[u] = partial[(int64_t)(s + u * by) * n + o];
#pragma unroll
                for (int u = 0; u < 8; u++)
                    if (s + u * by < splits)
                        acc = r.comb(acc, v[u]);
            }
        }
        smem[ty * bx + tx] = acc;
        __syncthreads();
        for (int h = by / 2; h > 0; h /= 2) { // by is a power of two
            if (ty < h)
                smem[ty * bx + tx] = r.comb(smem[ty * bx + tx], smem[(ty + h) * bx + tx]);
            __syncthreads();
        }
        if (ty == 0 && o < n)
            r.store(smem[tx], out, idx, o);
        __syncthreads(); // smem is reused by the next outputs
    }
}

static int pow2_ceil(int64_t x, int cap)
{
    int p = 1;
    while (p < x && p < cap)
        p *= 2;
    return p;
}

// How an outer reduction is laid out: block (bx, by), splits of K, rows a split.
struct OuterPlan {
    int bx, by, splits;
    int64_t ktile, tiles;
};

// Threads across B (up to a warp of columns), the rest of the block down K;
// when the column tiles cannot fill the GPU, K is split over blocks until
// there are 1024 threads an SM (four blocks), keeping at least 16 rows a
// thread. Four blocks with 64 bytes in flight a thread cover HBM's latency,
// and more splits measured slower: each adds a stream of rows read at the
// same time far from the others. (A sweep on the H100 over 768..2048
// threads an SM and 32..128 columns: 1024 and 32 were best or within 1 % of
// it for every shape and dtype, float32 square 95 -> 97.7 % and float16
// 88 -> 93 % of the copy bandwidth; 128 bytes in flight was worse.)
inline OuterPlan plan_outer(int64_t A, int64_t K, int64_t B, int V, int splits_fixed)
{
    OuterPlan p;
    int64_t cb = (B + V - 1) / V;
    p.bx = pow2_ceil(cb, 32);
    p.by = kOuterThreads / p.bx;
    if (K < p.by) {
        p.by = pow2_ceil(K, kOuterThreads);
        p.bx = pow2_ceil(cb, kOuterThreads / p.by);
    }
    // Few rows a thread (a short K, as x.sum(0) of [16, 2^22]): move threads
    // from K to the columns, so that each walks its column with its loads in
    // flight instead of meeting the others in a shared-memory tree.
    while (p.by > 1 && K < (int64_t)p.by * 16 && p.bx * 2 <= pow2_ceil(cb, kOuterThreads)) {
        p.bx *= 2;
        p.by /= 2;
    }
    p.tiles = A * ((cb + p.bx - 1) / p.bx);
    int64_t want = (int64_t)sm_count() * (1024 / (p.bx * p.by));
    int64_t s = 1;
    if (splits_fixed > 0) {
        s = splits_fixed;
    } else if (p.tiles < want) {
        s = want / p.tiles;
        int64_t by_work = K / ((int64_t)p.by * 16);
        if (s > by_work)
            s = by_work;
        if (s > 65535)
            s = 65535;
        if (s < 1)
            s = 1;
    }
    p.ktile = K > 0 ? (K + s - 1) / s : 1;
    p.splits = K > 0 ? (int)((K + p.ktile - 1) / p.ktile) : 1;
    return p;
}

// How an inner reduction is laid out: threads per row, rows per block, splits.
struct Plan {
    int g, rows, splits;
};

// How many blocks of reduce_inner<Rd, T> run at once on the current device.
template <class Rd, class T> int resident_blocks()
{
    static int cache[64];
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= 64)
        return sm_count() * 2;
    if (!cache[dev]) {
        int per_sm = 0;
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce_inner<Rd, T>, kMaxThreads, 0) !=
                cudaSuccess ||
            per_sm <= 0) {
            (void)cudaGetLastError(); // the query failed: clear it, assume 2
            per_sm = 2;
        }
        cache[dev] = per_sm * sm_count();
    }
    return cache[dev];
}

template <class Rd, class T> Plan plan_inner(int64_t A, int64_t K)
{
    constexpr int N = 16 / sizeof(T) > 0 ? 16 / sizeof(T) : 1;
    Plan p{32, 8, 1};
    if (K < 2048) {
        // Short rows: the narrowest group (a power of two up to a warp)
        // that leaves each thread about 4 packs, so their loads are in
        // flight together and no lanes idle: a warp on a float16 row of 16
        // read 2 packs with 30 lanes idle.
        int64_t packs = (K + N - 1) / N;
        p.g = 1;
        while (p.g < 32 && (int64_t)p.g * 4 < packs)
            p.g *= 2;
        p.rows = 256 / p.g;
    } else {
        p.g = kMaxThreads;
        p.rows = 1;
        // Too few rows to fill the GPU: split each row so that the grid is
        // exactly what the device holds at once (one wave), but never so
        // thin that a thread gets fewer than 4 packs.
        int64_t want = resident_blocks<Rd, T>();
        if (A < want) {
            int64_t by_work = K / ((int64_t)kMaxThreads * N * 4);
            int64_t s = want / A;
            if (s > by_work)
                s = by_work;
            if (s > 65535)
                s = 65535;
            p.splits = s > 1 ? (int)s : 1;
        } else {
            // Rows enough to fill the GPU: narrow the group until each
            // thread has 4 packs, so that the loop keeps 4 loads in flight
            // (a float16 row of 8192 is 2 packs for 512 threads, read one
            // load at a time).
            while (p.g > 128 && K / N < (int64_t)p.g * 4)
                p.g /= 2;
        }
    }
    return p;
}

// Scratch bytes that run_abk<Rd, T> needs for the partials of a split.
template <class Rd, class T> size_t abk_workspace(int64_t A, int64_t K, int64_t B)
{
    if (B != 1) {
        OuterPlan q = plan_outer(A, K, B, B % outer_vec<T>() == 0 ? outer_vec<T>() : 1, 0);
        return q.splits > 1 ? (size_t)A * B * q.splits * sizeof(typename Rd::Acc) : 0;
    }
    Plan p = plan_inner<Rd, T>(A, K);
    return p.splits > 1 ? (size_t)A * p.splits * sizeof(typename Rd::Acc) : 0;
}

template <int OP, class T> size_t workspace_for(int64_t A, int64_t K, int64_t B)
{
    using Rd = typename RedOf<OP, T>::type;
    if constexpr (std::is_void_v<Rd>)
        return 0;
    else
        return abk_workspace<Rd, T>(A, K, B);
}

// out[a, b] = r over in[a, :, b] for a contiguous [A, K, B] input: the
// inner kernel when B == 1, the outer one otherwise.
template <class Rd, class T>
void run_abk(const Rd &r, typename Rd::Out *o, int64_t *idx, const T *x, int64_t A, int64_t K,
             int64_t B, void *ws, cudaStream_t s)
{
    if (A * B == 0)
        return;
    if (B != 1) {
        // The split count is fixed by the vector plan (the workspace was
        // sized for it); a misaligned input keeps it with scalar loads.
        constexpr int V = outer_vec<T>();
        bool vec = V > 1 && B % V == 0 && (uintptr_t)x % (sizeof(T) * V) == 0;
        OuterPlan q = plan_outer(A, K, B, B % V == 0 ? V : 1, 0);
        if (!vec)
            q = plan_outer(A, K, B, 1, q.splits);
        auto *partial = (typename Rd::Acc *)ws;
        dim3 grid((unsigned)(q.tiles < 0x7fffffff ? q.tiles : 0x7fffffff), q.splits);
        dim3 block(q.bx, q.by);
        if (vec)
            launch_kernel(reduce_outer<Rd, T, V>, grid, block, s, r, x, A, K, B, q.ktile, partial, o, idx);
        else
            launch_kernel(reduce_outer<Rd, T, 1>, grid, block, s, r, x, A, K, B, q.ktile, partial, o, idx);
        if (q.splits > 1) {
            // Outputs across (up to a warp, coalesced), splits down: about
            // eight a thread, so the loads of one output are in flight together.
            int64_t n = A * B;
            int px = pow2_ceil(n, 32);
            int py = pow2_ceil((q.splits + 7) / 8, kPartialsThreads / px);
            if (px * py < 256)
                px = pow2_ceil(n, 256 / py);
            int64_t blocks = (n + px - 1) / px, cap = (int64_t)sm_count() * 16;
            launch_kernel_pdl(reduce_outer_partials<Rd>, (unsigned)(blocks < cap ? blocks : cap), dim3(px, py), s,
                              r, (const typename Rd::Acc *)partial, q.splits, n, o, idx);
        }
        return;
    }
    Plan p = plan_inner<Rd, T>(A, K);
    constexpr int N = 16 / sizeof(T) > 0 ? 16 / sizeof(T) : 1;
    bool vec = ((uintptr_t)x % 16) == 0 && (K % N == 0 || A == 1) && N > 1;
    dim3 block(p.g, p.rows), grid((unsigned)((A + p.rows - 1) / p.rows), p.splits);
    auto *partial = (typename Rd::Acc *)ws;
    launch_kernel(reduce_inner<Rd, T>, grid, block, s, r, x, A, K, p.splits, partial, o, idx, vec);
    if (p.splits > 1)
        launch_kernel_pdl(reduce_partials<Rd>, (unsigned)A, 256, s, r, partial, p.splits, o, idx);
}

template <int I, int COUNT, class F> inline int dispatch_rop(int op, F &&f)
{
    if constexpr (I >= COUNT)
        return -1;
    else
        return op == I ? f(std::integral_constant<int, I>{}) : dispatch_rop<I + 1, COUNT>(op, f);
}

} // namespace
