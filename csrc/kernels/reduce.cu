// reduce.cu: reductions (sum ... logsumexp) and scans (cumsum, cumprod)
// behind pcs_launch_reduce / pcs_launch_scan (kernels.h).
//
// The host hands over a contiguous input seen as [A, K, B] and wants
// out[a, b] = reduce(in[a, :, b]). Three kernels cover it:
//   inner     B == 1: a group of threads (a warp, or a 512-thread block when
//             K is long) per row; 16-byte vector loads, 4 in flight per
//             thread; warp shuffles, then shared memory across warps. When
//             there are too few rows to fill the GPU (the whole-tensor
//             case), each row is split over as many blocks as the GPU holds
//             at once; they stride through the row together and write
//             partial accumulators, and a second pass combines them, or,
//             for inputs of up to 16 MiB on a stream that lends counters,
//             the row's last block to finish (one launch, less host time).
//   partials  that second pass: one block per row.
//   outer     B > 1: threads across B read whole lines of each row (vector
//             loads), the block's other threads and, when the outputs are
//             too few to fill the GPU, other blocks split K (ranges, or
//             with many splits interleaved chunks); partials are combined
//             in a fixed order (a second pass, with warps an output when
//             the outputs are few and the splits many, or the tile's last
//             block as for inner), so results are bit-identical run to run.
// An op is a small struct (identity, map, combine, store); float16 and
// bfloat16 accumulate in float, integers in int64, as torch does.
#include "reduce_kernels.cuh"
#include "pdl.cuh"

namespace {

template <int OP, class T>
int run_reduce(void *out, int64_t *idx, const void *in, int64_t A, int64_t K, int64_t B,
               double param, void *ws, unsigned *sem, cudaStream_t s)
{
    using Rd = typename RedOf<OP, T>::type;
    if constexpr (std::is_void_v<Rd>) {
        return -1;
    } else {
        Rd r{K, param};
        run_abk<Rd, T>(r, (typename Rd::Out *)out, idx, (const T *)in, A, K, B, ws, s, sem);
        return 0;
    }
}

// ---------------------------------------------------------------------------
// Scans. Long lines that nothing else fits: one block per line, chunks of
// blockDim elements scanned with warp shuffles, carried from chunk to chunk
// (run_scan below picks the kernel).

template <class T, bool PROD>
__global__ void scan_lines(const T *in, T *out, int64_t K, int64_t B)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    using C = std::conditional_t<is_lowp<T>, float, compute_t<T>>;
    __shared__ char warp_raw[sizeof(C) * 32];
    __shared__ char carry_raw[sizeof(C)];
    C *warp_tot = reinterpret_cast<C *>(warp_raw);
    C *carry_p = reinterpret_cast<C *>(carry_raw);
    int64_t line = blockIdx.x, a = line / B, b = line - a * B;
    const T *p = in + a * K * B + b;
    T *q = out + a * K * B + b;
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32, nw = blockDim.x / 32;
    C carry = C(PROD ? 1 : 0);
    for (int64_t base = 0; base < K; base += blockDim.x) {
        int64_t k = base + threadIdx.x;
        C v = k < K ? to_c<C>(p[k * B]) : C(PROD ? 1 : 0);
        for (int off = 1; off < 32; off <<= 1) {
            C u = shfl_up(v, off);
            if (lane >= off)
                v = PROD ? C(v * u) : C(v + u);
        }
        if (lane == 31)
            warp_tot[warp] = v;
        __syncthreads();
        if (warp == 0) {
            C w = lane < nw ? warp_tot[lane] : C(PROD ? 1 : 0);
            for (int off = 1; off < 32; off <<= 1) {
                C u = shfl_up(w, off);
                if (lane >= off)
                    w = PROD ? C(w * u) : C(w + u);
            }
            if (lane < nw)
                warp_tot[lane] = w;
        }
        __syncthreads();
        if (warp > 0)
            v = PROD ? C(v * warp_tot[warp - 1]) : C(v + warp_tot[warp - 1]);
        v = PROD ? C(v * carry) : C(v + carry);
        if (k < K)
            q[k * B] = from_c<T>(v);
        if (threadIdx.x == blockDim.x - 1)
            *carry_p = v;
        __syncthreads();
        carry = *carry_p;
        __syncthreads();
    }
}

template <class A> __device__ __forceinline__ A shfl_last(A v)
{
    constexpr int W = sizeof(A) / 4;
    int w[W];
    memcpy(w, &v, sizeof(A));
#pragma unroll
    for (int i = 0; i < W; i++)
        w[i] = __shfl_sync(0xffffffffu, w[i], 31);
    memcpy(&v, w, sizeof(A));
    return v;
}

// Contiguous rows (B == 1) of moderate length: a warp a row, in tiles of
// 128 elements whose four coalesced loads issue together, each 32 scanned
// with shuffles and carried on. A block a row (scan_lines) synchronised the
// whole block for every 1024 elements and idled most of it on short rows.
template <class T, bool PROD>
__global__ void scan_rows_warp(const T *__restrict__ in, T *__restrict__ out, int64_t A, int64_t K)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    using C = std::conditional_t<is_lowp<T>, float, compute_t<T>>;
    const int lane = threadIdx.x & 31;
    const int64_t warps = (int64_t)gridDim.x * (blockDim.x / 32);
    for (int64_t row = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; row < A; row += warps) {
        const T *p = in + row * K;
        T *q = out + row * K;
        C carry = C(PROD ? 1 : 0);
        for (int64_t t0 = 0; t0 < K; t0 += 128) {
            C v[4];
#pragma unroll
            for (int u = 0; u < 4; u++) {
                const int64_t k = t0 + u * 32 + lane;
                v[u] = k < K ? to_c<C>(p[k]) : C(PROD ? 1 : 0);
            }
#pragma unroll
            for (int u = 0; u < 4; u++) {
                C x = v[u];
                for (int off = 1; off < 32; off <<= 1) {
                    C y = shfl_up(x, off);
                    if (lane >= off)
                        x = PROD ? C(x * y) : C(x + y);
                }
                x = PROD ? C(x * carry) : C(x + carry);
                const int64_t k = t0 + u * 32 + lane;
                if (k < K)
                    q[k] = from_c<T>(x);
                carry = shfl_last(x);
            }
        }
    }
}

// Lines across many columns (B > 1, A * B large): a thread a line, walking
// K with four loads in flight; a warp reads 32 neighbouring columns of a row
// at a time, so every access is coalesced. A block a line read each
// element from its own row, a sector a thread.
template <class T, bool PROD>
__global__ void scan_cols(const T *__restrict__ in, T *__restrict__ out, int64_t A, int64_t K, int64_t B)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    using C = std::conditional_t<is_lowp<T>, float, compute_t<T>>;
    for (int64_t line = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; line < A * B;
         line += (int64_t)gridDim.x * blockDim.x) {
        const int64_t a = line / B, b = line - a * B;
        const T *p = in + a * K * B + b;
        T *q = out + a * K * B + b;
        C acc = C(PROD ? 1 : 0);
        int64_t k = 0;
        for (; k + 3 < K; k += 4) {
            T v[4];
#pragma unroll
            for (int u = 0; u < 4; u++)
                v[u] = p[(k + u) * B];
#pragma unroll
            for (int u = 0; u < 4; u++) {
                acc = PROD ? C(acc * to_c<C>(v[u])) : C(acc + to_c<C>(v[u]));
                q[(k + u) * B] = from_c<T>(acc);
            }
        }
        for (; k < K; k++) {
            acc = PROD ? C(acc * to_c<C>(p[k * B])) : C(acc + to_c<C>(p[k * B]));
            q[k * B] = from_c<T>(acc);
        }
    }
}

template <class T, bool PROD> void run_scan(const T *in, T *out, int64_t A, int64_t K, int64_t B, cudaStream_t s)
{
    const int64_t lines = A * B, cap = (int64_t)sm_count() * 16;
    if (B == 1 && (K <= 8192 || A >= (int64_t)sm_count() * 64)) {
        const int64_t blocks = (A + 7) / 8; // 8 warps a block
        launch_kernel_pdl(scan_rows_warp<T, PROD>, (unsigned)(blocks < cap ? blocks : cap), 256, s, in, out, A, K);
    } else if (B > 1 && (lines >= 65536 || (K <= 1024 && lines >= 4096))) {
        const int64_t blocks = (lines + 255) / 256;
        launch_kernel_pdl(scan_cols<T, PROD>, (unsigned)(blocks < cap ? blocks : cap), 256, s, in, out, A, K, B);
    } else {
        const int threads = K >= 1024 ? 1024 : K > 256 ? 512 : 128;
        launch_kernel_pdl(scan_lines<T, PROD>, (unsigned)lines, threads, s, in, out, K, B);
    }
}

} // namespace

extern "C" size_t pcs_reduce_workspace(int op, int dtype, int64_t A, int64_t K, int64_t B, int device)
{
    (void)device;
    size_t bytes = 0;
    dispatch_dtype(dtype, [&](auto tv) -> int {
        using T = decltype(tv);
        return dispatch_rop<0, PCS_NUM_ROPS>(op, [&](auto opc) -> int {
            bytes = workspace_for<decltype(opc)::value, T>(A, K, B);
            return 0;
        });
    });
    return bytes;
}

extern "C" int pcs_launch_reduce(int op, int dtype, void *out, int64_t *indices, const void *in,
                                 int64_t A, int64_t K, int64_t B, double param, void *workspace,
                                 unsigned *semaphores, int device, cudaStream_t stream)
{
    (void)device;
    return dispatch_dtype(dtype, [&](auto tv) -> int {
        using T = decltype(tv);
        return dispatch_rop<0, PCS_NUM_ROPS>(op, [&](auto opc) -> int {
            return run_reduce<decltype(opc)::value, T>(out, indices, in, A, K, B, param, workspace,
                                                      semaphores, stream);
        });
    });
}

extern "C" int pcs_launch_scan(int op, int dtype, void *out, const void *in, int64_t A, int64_t K,
                               int64_t B, cudaStream_t stream)
{
    return dispatch_dtype(dtype, [&](auto tv) -> int {
        using T = decltype(tv);
        if constexpr (std::is_same_v<T, bool>) {
            return -1;
        } else {
            if (A * B == 0 || K == 0)
                return 0;
            if (op == 0)
                run_scan<T, false>((const T *)in, (T *)out, A, K, B, stream);
            else
                run_scan<T, true>((const T *)in, (T *)out, A, K, B, stream);
            return 0;
        }
    });
}
