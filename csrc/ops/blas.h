/* blas.h: matrix products: the front door (blas_ops.c: matmul and its
 * family, checks, the CPU path) and the cuBLAS engine (blas.c: handles per
 * (device, stream), the TF32 / reduced-precision policy flags, GEMM). */
#ifndef PCS_BLAS_H
#define PCS_BLAS_H

#include "core/scalar.h"
#include "tensor/tensor.h"

/* matmul, mm, bmm, mv, dot, addmm, baddbmm as Tensor methods */
extern PyMethodDef pcs_tensor_blas_methods[];

/* The @ and @= slots of Tensor. */
PyObject *pcs_blas_nb_matmul(PyObject *a, PyObject *b);
PyObject *pcs_blas_nb_imatmul(PyObject *a, PyObject *b);

/* Module functions and the policy flags. */
int pcs_blas_init(PyObject *module);

/* ---- between blas_ops.c (front door) and blas.c (cuBLAS engine) ---------- */

/* matmul, mm, bmm, mv, dot, addmm, baddbmm as module functions */
extern PyMethodDef pcs_blas_functions[];

/* Broadcast shape of the first na dims of a and nb dims of b (right
 * aligned); its length, or -1 with torch's RuntimeError. */
int pcs_blas_broadcast_batch(const PcsTensor *a, int na, const PcsTensor *b, int nb, int64_t *out);

/* CUDA: a (..., m, k) @ b (..., k, n), both at least 2-D, same device and
 * dtype (checked by the caller), batch dims broadcast; with input (which
 * must broadcast to the result) the result is beta * input + alpha * a @ b.
 * A new contiguous tensor on the device's current stream. */
PcsTensor *pcs_blas_cuda_product(PcsTensor *a, PcsTensor *b, PcsTensor *input, pcs_scalar alpha,
                                 pcs_scalar beta);
/* CUDA: dot of two 1-D tensors of equal size, a 0-dim tensor, no sync. */
PcsTensor *pcs_blas_cuda_dot(PcsTensor *a, PcsTensor *b);

static inline pcs_scalar pcs_blas_one(void) { return (pcs_scalar){.kind = PCS_SK_INT, .i = 1}; }
static inline pcs_scalar pcs_blas_zero(void) { return (pcs_scalar){.kind = PCS_SK_INT, .i = 0}; }
static inline bool pcs_blas_scalar_is_zero(pcs_scalar s)
{
    switch (s.kind) {
    case PCS_SK_FLOAT: return s.re == 0.0;
    case PCS_SK_COMPLEX: return s.re == 0.0 && s.im == 0.0;
    default: return s.i == 0;
    }
}

#endif
