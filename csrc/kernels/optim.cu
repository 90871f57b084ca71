// optim.cu: multi-tensor optimizer steps (Adam/AdamW, SGD, Adagrad, RMSprop),
// behind pcs_launch_optim (optim.h).
//
// An optimizer step is a few elementwise updates over every parameter; one
// launch per tensor per op (the composed form) costs a launch and a full
// pass over memory each. Here one launch updates a batch of up to
// PCS_OPTIM_BATCH tensors, every list at once, reading each element once
// and writing it once: torch's fused/multi_tensor_apply idea.
//
// Work split: each tensor is cut into chunks of kChunk elements, numbered
// across the batch (chunk_start is the prefix sum). Blocks stride over the
// chunk numbers; a block finds its tensor by a binary search over
// chunk_start (in parameter memory, the same index for the whole block, so
// the reads are broadcasts). The grid is what fits on the GPU at once, so
// there are no waves of late blocks. Inside a chunk, threads move 16-byte
// packs, kIlp of them in flight per list, when every list of the tensor is
// 16-byte aligned (chunks start at multiples of kChunk, so the chunk is
// too); the tail and misaligned tensors go element by element.
//
// Math is in float for float16/bfloat16/float32 (torch's opmath) and in
// double for float64, in the order torch's fused kernels use.
#include <stdint.h>

#include "ew_common.cuh"
#include "optim.h"
#include "pdl.cuh"

using namespace pcs;

namespace {

constexpr int kThreads = 256;
// Blocks resident per SM the compiler must allow for: 4 caps registers at
// 64 (1024 threads an SM); double needs twice the registers for its values.
template <class T> constexpr int kMinBlocks = sizeof(T) == 8 ? 2 : 4;
constexpr int kChunk = 16384; // 8 passes of 256 threads x 8 elements
constexpr int L = PCS_OPTIM_LISTS;

// Kernel parameters beyond 4 KiB need CUDA 12.1 and a recent driver.
static_assert(sizeof(pcs_optim_batch) + 128 < 4096, "optimizer batch exceeds the kernel parameter limit");

// The hyperparameters in the type the kernel computes in.
// The 1 - x weights are taken in double before the cast, as torch's Python
// does (1 - beta2 is computed in double there): 1 - float(0.999) is off by
// 1.3e-5 relative, a bias that moves every Adam step and shows in the loss
// after a few dozen steps.
template <class C> struct Hyper {
    C lr, wd, eps, b1, b2, mom, damp, alpha;
    C omb1, omb2, omdamp, omalpha; // 1 - beta1, 1 - beta2, 1 - dampening, 1 - alpha
    int flags;
};

template <class C> Hyper<C> hyper_as(const pcs_optim_hyper &h)
{
    return {C(h.lr),           C(h.weight_decay),   C(h.eps),           C(h.beta1),
            C(h.beta2),        C(h.momentum),       C(h.dampening),     C(h.alpha),
            C(1.0 - h.beta1),  C(1.0 - h.beta2),    C(1.0 - h.dampening), C(1.0 - h.alpha),
            h.flags};
}

// torch.maximum keeps NaN (the composed amsgrad path uses it)
template <class C> __device__ __forceinline__ C nan_max(C a, C b) { return (a != a || a > b) ? a : b; }

// ---------------------------------------------------------------------------
// The update rules. v[0] param, v[1] grad, v[2..4] the state (optim.h);
// s0, s1 the tensor's step-dependent constants. Each rule writes back the
// param and the state it owns; the grad is never stored.

// The gradient the SGD, Adagrad and RMSprop rules step with: negated when
// maximizing, plus weight_decay * param (L2 decay, coupled to the gradient).
template <class C> __device__ __forceinline__ C decayed_grad(const Hyper<C> &h, C p, C grad)
{
    C g = (h.flags & PCS_OPTIM_MAXIMIZE) ? -grad : grad;
    return h.wd != C(0) ? g + h.wd * p : g;
}

template <class C> struct AdamRule {
    Hyper<C> h;
    __device__ __forceinline__ void operator()(C *v, C step_size, C bc2_sqrt) const
    {
        C p = v[0], g = (h.flags & PCS_OPTIM_MAXIMIZE) ? -v[1] : v[1];
        if (h.wd != C(0)) {
            if (h.flags & PCS_OPTIM_ADAMW)
                p -= h.lr * h.wd * p;
            else
                g += p * h.wd;
        }
        // torch's exp_avg.lerp_(grad, 1 - beta1) and mul_(beta2).addcmul_(...)
        C m = v[2] + h.omb1 * (g - v[2]);
        C sq = h.b2 * v[3] + h.omb2 * g * g;
        C denom;
        if (h.flags & PCS_OPTIM_AMSGRAD) {
            v[4] = nan_max(v[4], sq);
            denom = acc_sqrt(v[4]) / bc2_sqrt + h.eps;
        } else {
            denom = acc_sqrt(sq) / bc2_sqrt + h.eps;
        }
        v[0] = p - step_size * (m / denom); // torch's addcdiv_(m, denom, -step_size)
        v[2] = m;
        v[3] = sq;
    }
};

template <class C> struct SgdRule {
    Hyper<C> h;
    __device__ __forceinline__ void operator()(C *v, C, C) const
    {
        C p = v[0], g = decayed_grad(h, p, v[1]);
        if (h.mom != C(0)) {
            C buf = (h.flags & PCS_OPTIM_FIRST_STEP) ? g : h.mom * v[2] + h.omdamp * g;
            v[2] = buf;
            g = (h.flags & PCS_OPTIM_NESTEROV) ? g + h.mom * buf : buf;
        }
        v[0] = p - h.lr * g;
    }
};

template <class C> struct AdagradRule {
    Hyper<C> h;
    __device__ __forceinline__ void operator()(C *v, C clr, C) const
    {
        C p = v[0], g = decayed_grad(h, p, v[1]);
        C sum = v[2] + g * g;
        v[2] = sum;
        v[0] = p - clr * (g / (acc_sqrt(sum) + h.eps));
    }
};

template <class C> struct RmspropRule {
    Hyper<C> h;
    __device__ __forceinline__ void operator()(C *v, C, C) const
    {
        C p = v[0], g = decayed_grad(h, p, v[1]);
        C sa = h.alpha * v[2] + h.omalpha * g * g;
        v[2] = sa;
        C avg;
        if (h.flags & PCS_OPTIM_CENTERED) {
            C ga = v[3] + h.omalpha * (g - v[3]);
            v[3] = ga;
            avg = acc_sqrt(sa - ga * ga) + h.eps;
        } else {
            avg = acc_sqrt(sa) + h.eps;
        }
        if (h.mom > C(0)) {
            C buf = h.mom * v[4] + g / avg;
            v[4] = buf;
            v[0] = p - h.lr * buf;
        } else {
            v[0] = p - h.lr * (g / avg);
        }
    }
};

// ---------------------------------------------------------------------------
// The multi-tensor kernel

template <class T, class Rule>
__global__ void __launch_bounds__(kThreads, kMinBlocks<T>) multi_tensor(pcs_optim_batch b, Rule rule)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    using C = compute_t<T>;
    constexpr int V = 16 / sizeof(T); // elements of a 16-byte pack
    // packs in flight per list: 8 elements (4 for double) a thread, which
    // keeps every variant within the 64 registers that 4 blocks an SM allow
    constexpr int kIlp = V == 8 ? 1 : 2;
    using P = Pack<T, V>;
    const int total = b.chunk_start[b.n];
    for (int c = blockIdx.x; c < total; c += gridDim.x) {
        int lo = 0, hi = b.n - 1; // the last tensor whose first chunk is <= c
        while (lo < hi) {
            int mid = (lo + hi + 1) >> 1;
            if (b.chunk_start[mid] <= c)
                lo = mid;
            else
                hi = mid - 1;
        }
        const int64_t start = (int64_t)(c - b.chunk_start[lo]) * kChunk;
        const int64_t left = b.numel[lo] - start;
        const int n = left < kChunk ? (int)left : kChunk;
        T *p[L];
        bool aligned = true;
#pragma unroll
        for (int l = 0; l < L; l++) {
            p[l] = b.ptr[l][lo] ? (T *)b.ptr[l][lo] + start : nullptr;
            aligned &= ((uintptr_t)p[l] & 15) == 0;
        }
        const C s0 = C(b.scal[0][lo]), s1 = C(b.scal[1][lo]);
        int done = 0;
        if (aligned) {
            const int packs = n / V;
            for (int i = threadIdx.x; i < packs; i += kThreads * kIlp) {
                P r[kIlp][L];
                // every load of the kIlp packs first, so they are in flight together
#pragma unroll
                for (int k = 0; k < kIlp; k++) {
                    const int q = i + k * kThreads;
#pragma unroll
                    for (int l = 0; l < L; l++)
                        if (q < packs && p[l])
                            r[k][l] = ((const P *)p[l])[q];
                }
#pragma unroll
                for (int k = 0; k < kIlp; k++) {
                    const int q = i + k * kThreads;
                    if (q >= packs)
                        continue;
#pragma unroll
                    for (int j = 0; j < V; j++) {
                        C v[L];
#pragma unroll
                        for (int l = 0; l < L; l++)
                            v[l] = p[l] ? to_c<C>(r[k][l].v[j]) : C(0);
                        rule(v, s0, s1);
#pragma unroll
                        for (int l = 0; l < L; l++)
                            if (l != 1)
                                r[k][l].v[j] = from_c<T>(v[l]);
                    }
#pragma unroll
                    for (int l = 0; l < L; l++)
                        if (l != 1 && p[l])
                            ((P *)p[l])[q] = r[k][l];
                }
            }
            done = packs * V;
        }
        for (int i = done + threadIdx.x; i < n; i += kThreads) {
            C v[L];
#pragma unroll
            for (int l = 0; l < L; l++)
                v[l] = p[l] ? to_c<C>(p[l][i]) : C(0);
            rule(v, s0, s1);
#pragma unroll
            for (int l = 0; l < L; l++)
                if (l != 1 && p[l])
                    p[l][i] = from_c<T>(v[l]);
        }
    }
}

template <class T, class Rule> int run(const pcs_optim_batch *in, Rule rule, cudaStream_t st)
{
    pcs_optim_batch b = *in;
    int32_t at = 0;
    for (int i = 0; i < b.n; i++) {
        b.chunk_start[i] = at;
        at += (int32_t)((b.numel[i] + kChunk - 1) / kChunk);
    }
    b.chunk_start[b.n] = at;
    if (at == 0)
        return 0;
    // Blocks that fit at once, asked once per instantiation (one GPU model per process).
    static int per_sm = 0;
    if (!per_sm) {
        int k = 0;
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&k, multi_tensor<T, Rule>, kThreads, 0) != cudaSuccess) {
            (void)cudaGetLastError(); // not sticky; a guess serves
            k = 2;
        }
        per_sm = k < 1 ? 1 : k;
    }
    const int cap = sm_count() * per_sm;
    launch_kernel_pdl(multi_tensor<T, Rule>, dim3(at < cap ? at : cap), dim3(kThreads), st, b, rule);
    return 0;
}

template <class T> int by_algo(const pcs_optim_hyper *h, const pcs_optim_batch *b, cudaStream_t st)
{
    using C = compute_t<T>;
    const Hyper<C> k = hyper_as<C>(*h);
    switch (h->algo) {
    case PCS_OPTIM_ADAM: return run<T>(b, AdamRule<C>{k}, st);
    case PCS_OPTIM_SGD: return run<T>(b, SgdRule<C>{k}, st);
    case PCS_OPTIM_ADAGRAD: return run<T>(b, AdagradRule<C>{k}, st);
    case PCS_OPTIM_RMSPROP: return run<T>(b, RmspropRule<C>{k}, st);
    default: return -1;
    }
}

} // namespace

extern "C" int pcs_launch_optim(int dtype, const pcs_optim_hyper *h, const pcs_optim_batch *b,
                                cudaStream_t stream)
{
    if (b->n < 0 || b->n > PCS_OPTIM_BATCH)
        return -1;
    if (b->n == 0)
        return 0;
    switch (dtype) {
    case PCS_FLOAT16: return by_algo<__half>(h, b, stream);
    case PCS_BFLOAT16: return by_algo<__nv_bfloat16>(h, b, stream);
    case PCS_FLOAT32: return by_algo<float>(h, b, stream);
    case PCS_FLOAT64: return by_algo<double>(h, b, stream);
    default: return -1;
    }
}
