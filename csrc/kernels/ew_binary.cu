// ew_binary.cu: pcs_launch_binary (kernels.h): the binary ops (add ... rshift)
// for every dtype, over the kernels of ew_ops.cuh.
#include "ew_ops.cuh"

extern "C" int pcs_launch_binary(int op, int dtype, void *out, const void *a, const void *b,
                                 const pcs_kscalar *sc, int64_t n, const pcs_ew_geom *geom,
                                 cudaStream_t stream)
{
    return dispatch_dtype(dtype, [&](auto tv) -> int {
        using T = decltype(tv);
        return dispatch_op<0, PCS_NUM_BOPS>(op, [&](auto opc) -> int {
            constexpr int OP = decltype(opc)::value;
            if constexpr (!bop_ok<OP, T>()) {
                return -1;
            } else {
                using F = BinF<OP, T>;
                using C = typename F::C;
                F f{from_k<C>(sc[0]), from_k<C>(sc[1]), from_k<C>(sc[2]), a == nullptr, b == nullptr};
                Args<F, T, T, char> p{(typename F::Out *)out, (const T *)a, (const T *)b, nullptr, f};
                return launch(p, n, geom, stream);
            }
        });
    });
}
