// dropout.cu: pcs_launch_dropout (kernels.h): dropout in one pass. Each
// thread takes one Philox block (kernels/philox.h) and the 4 elements it
// decides: element i is kept when pcs_u01f(word i % 4 of block offset + i / 4)
// < keep, the rule bernoulli_ uses, and ops/fused_layers.c computes the same
// mask on the CPU. y = x * scale * kept (a NaN or inf input stays NaN where
// dropped, as torch's x * mask * scale). The backward is the same call on
// the gradient (dropout is linear in x), so no mask is stored.
#include "ew_common.cuh"
#include "philox.h"
#include "pdl.cuh"

using namespace pcs;

namespace {

// VEC: x and y aligned to a Pack of 4 and n a multiple of 4, so each
// thread's block of 4 elements moves as one load and one store.
template <class T, bool VEC>
__global__ void dropout_kernel(T *y, const T *x, int64_t n, uint64_t seed, uint64_t offset,
                               float keep, compute_t<T> scale)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    using A = compute_t<T>;
    const int64_t blocks = (n + 3) / 4;
    for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < blocks;
         j += (int64_t)gridDim.x * blockDim.x) {
        Pack<T, 4> in;
        if constexpr (VEC) {
            in = reinterpret_cast<const Pack<T, 4> *>(x)[j];
        } else {
#pragma unroll
            for (int l = 0; l < 4; l++)
                in.v[l] = j * 4 + l < n ? x[j * 4 + l] : T();
        }
        const pcs_u32x4 r = pcs_philox(seed, offset + (uint64_t)j);
        Pack<T, 4> out;
#pragma unroll
        for (int l = 0; l < 4; l++) {
            A m = pcs_u01f(r.v[l]) < keep ? A(1) : A(0);
            out.v[l] = from_c<T>(to_c<A>(in.v[l]) * scale * m);
        }
        if constexpr (VEC) {
            reinterpret_cast<Pack<T, 4> *>(y)[j] = out;
        } else {
#pragma unroll
            for (int l = 0; l < 4; l++)
                if (j * 4 + l < n)
                    y[j * 4 + l] = out.v[l];
        }
    }
}

} // namespace

extern "C" int pcs_launch_dropout(int dtype, void *y, const void *x, int64_t n, uint64_t seed,
                                  uint64_t offset, float keep, double scale, cudaStream_t stream)
{
    if (n <= 0)
        return 0;
    return dispatch_dtype(dtype, [&](auto tag) -> int {
        using T = decltype(tag);
        if constexpr (!is_flt<T>) {
            return -1;
        } else {
            using A = compute_t<T>;
            int64_t blocks = (n + 3) / 4, grid = (blocks + 255) / 256, cap = (int64_t)sm_count() * 32;
            const bool vec = n % 4 == 0 && (uintptr_t)x % sizeof(Pack<T, 4>) == 0 &&
                             (uintptr_t)y % sizeof(Pack<T, 4>) == 0;
            dim3 g((unsigned)(grid < cap ? grid : cap));
            if (vec)
                launch_kernel_pdl(dropout_kernel<T, true>, g, dim3(256), stream, (T *)y, (const T *)x, n,
                              seed, offset, keep, (A)scale);
            else
                launch_kernel_pdl(dropout_kernel<T, false>, g, dim3(256), stream, (T *)y, (const T *)x,
                              n, seed, offset, keep, (A)scale);
            return 0;
        }
    });
}
