// ew_ternary.cu: pcs_launch_ternary (kernels.h): the ternary ops (where, clamp, lerp) for every dtype,
// over the kernels of ew_ops.cuh.
#include "ew_ops.cuh"

extern "C" int pcs_launch_ternary(int op, int dtype, void *out, const void *a, const void *b,
                                  const void *c, const pcs_kscalar *sc, int64_t n,
                                  const pcs_ew_geom *geom, cudaStream_t stream)
{
    return dispatch_dtype(dtype, [&](auto tv) -> int {
        using T = decltype(tv);
        return dispatch_op<0, PCS_NUM_TOPS>(op, [&](auto opc) -> int {
            constexpr int OP = decltype(opc)::value;
            if constexpr (!top_ok<OP, T>()) {
                return -1;
            } else {
                using F = TerF<OP, T>;
                using C = typename F::C;
                using A = typename F::A;
                F f{{from_k<C>(sc[0]), from_k<C>(sc[1]), from_k<C>(sc[2])},
                    {a == nullptr, b == nullptr, c == nullptr}};
                Args<F, A, T, T> p{(T *)out, (const A *)a, (const T *)b, (const T *)c, f};
                return launch(p, n, geom, stream);
            }
        });
    });
}
