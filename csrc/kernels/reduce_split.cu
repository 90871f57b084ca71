// reduce_split.cu: reductions whose reduced dims are two runs in memory
// with kept dims between them (x.sum((0, 2)) of a [P, K1, M, K2, Q]
// block), behind pcs_launch_reduce_split (kernels.h).
//
// Instead of a permuted copy of the input (a full extra read and write),
// two [A, K, B] passes of reduce_kernels.cuh's kernels: the first reduces K2
// and stores the raw accumulators ([P, K1, M, Q], in the accumulation type:
// float for float16 sums, Welford-free ops only), the second combines them
// over K1 and stores the result as the op's one-pass store would. Both
// passes combine in a fixed order, so the result is bit-identical from run
// to run; it differs from a one-pass result only in summation order.
#include "reduce_kernels.cuh"

namespace {

// First pass: the op's map and combine, then the accumulator as it is.
template <class Rd> struct RawAcc : Rd {
    using Acc = typename Rd::Acc;
    using Out = Acc;
    __device__ void store(Acc a, Out *out, int64_t *, int64_t o) const { out[o] = a; }
};

// Second pass: accumulators in, so map is the identity; the op's store.
template <class Rd> struct FromAcc : Rd {
    using Acc = typename Rd::Acc;
    __device__ Acc map(Acc a, int64_t) const { return a; }
};

// Ops whose partial results combine without their element index (not
// argmax) and whose accumulator moves as whole vector packs (a power of
// two in bytes: not Welford's three fields).
template <int OP, class T> constexpr bool splittable()
{
    using Rd = typename RedOf<OP, T>::type;
    if constexpr (std::is_void_v<Rd>) {
        return false;
    } else {
        constexpr size_t a = sizeof(typename Rd::Acc);
        return OP != PCS_ROP_ARGMAX && OP != PCS_ROP_ARGMIN && (a & (a - 1)) == 0;
    }
}

inline size_t align256(size_t n) { return (n + 255) & ~(size_t)255; }

template <int OP, class T>
int split_plan(int64_t P, int64_t K1, int64_t M, int64_t K2, int64_t Q, size_t *bytes)
{
    if constexpr (!splittable<OP, T>()) {
        return -1;
    } else {
        using Rd = typename RedOf<OP, T>::type;
        using Acc = typename Rd::Acc;
        size_t inter = align256((size_t)(P * K1 * M * Q) * sizeof(Acc));
        size_t w1 = abk_workspace<RawAcc<Rd>, T>(P * K1 * M, K2, Q);
        size_t w2 = abk_workspace<FromAcc<Rd>, Acc>(P, K1, M * Q);
        *bytes = inter + (w1 > w2 ? w1 : w2);
        return 0;
    }
}

template <int OP, class T>
int run_split(void *out, const void *in, int64_t P, int64_t K1, int64_t M, int64_t K2, int64_t Q,
              double param, void *ws, cudaStream_t s)
{
    if constexpr (!splittable<OP, T>()) {
        return -1;
    } else {
        using Rd = typename RedOf<OP, T>::type;
        using Acc = typename Rd::Acc;
        Acc *inter = (Acc *)ws;
        void *rest = (char *)ws + align256((size_t)(P * K1 * M * Q) * sizeof(Acc));
        RawAcc<Rd> r1{{K1 * K2, param}};
        FromAcc<Rd> r2{{K1 * K2, param}};
        run_abk<RawAcc<Rd>, T>(r1, inter, nullptr, (const T *)in, P * K1 * M, K2, Q, rest, s);
        run_abk<FromAcc<Rd>, Acc>(r2, (typename Rd::Out *)out, nullptr, inter, P, K1, M * Q, rest, s);
        return 0;
    }
}

} // namespace

extern "C" int pcs_reduce_split_plan(int op, int dtype, int64_t P, int64_t K1, int64_t M, int64_t K2,
                                     int64_t Q, size_t *bytes)
{
    return dispatch_dtype(dtype, [&](auto tv) -> int {
        using T = decltype(tv);
        return dispatch_rop<0, PCS_NUM_ROPS>(op, [&](auto opc) -> int {
            return split_plan<decltype(opc)::value, T>(P, K1, M, K2, Q, bytes);
        });
    });
}

extern "C" int pcs_launch_reduce_split(int op, int dtype, void *out, const void *in, int64_t P,
                                       int64_t K1, int64_t M, int64_t K2, int64_t Q, double param,
                                       void *workspace, cudaStream_t stream)
{
    return dispatch_dtype(dtype, [&](auto tv) -> int {
        using T = decltype(tv);
        return dispatch_rop<0, PCS_NUM_ROPS>(op, [&](auto opc) -> int {
            return run_split<decltype(opc)::value, T>(out, in, P, K1, M, K2, Q, param, workspace,
                                                      stream);
        });
    });
}
