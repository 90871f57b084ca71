// ew_unary.cu: pcs_launch_unary (kernels.h): the unary ops (neg ... nan_to_num) for every dtype,
// over the kernels of ew_ops.cuh.
#include "ew_ops.cuh"

extern "C" int pcs_launch_unary(int op, int dtype, void *out, const void *a,
                                const pcs_kscalar *params, int64_t n, const pcs_ew_geom *geom,
                                cudaStream_t stream)
{
    return dispatch_dtype(dtype, [&](auto tv) -> int {
        using T = decltype(tv);
        return dispatch_op<0, PCS_NUM_UOPS>(op, [&](auto opc) -> int {
            constexpr int OP = decltype(opc)::value;
            if constexpr (!uop_ok<OP, T>()) {
                return -1;
            } else {
                using F = UnF<OP, T>;
                using C = typename F::C;
                F f{{from_k<C>(params[0]), from_k<C>(params[1]), from_k<C>(params[2])}};
                Args<F, T, char, char> p{(typename F::Out *)out, (const T *)a, nullptr, nullptr, f};
                return launch(p, n, geom, stream);
            }
        });
    });
}
