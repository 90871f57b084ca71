/* blas.h: matrix products (blas.c): cuBLAS handles per (device, stream),
 * the TF32 / reduced-precision policy flags, matmul and its family. */
#ifndef PCS_BLAS_H
#define PCS_BLAS_H

#include "tensor.h"

/* matmul, mm, bmm, mv, dot, addmm, baddbmm as Tensor methods */
extern PyMethodDef pcs_tensor_blas_methods[];

/* The @ and @= slots of Tensor. */
PyObject *pcs_blas_nb_matmul(PyObject *a, PyObject *b);
PyObject *pcs_blas_nb_imatmul(PyObject *a, PyObject *b);

/* Module functions and the policy flags. */
int pcs_blas_init(PyObject *module);

#endif
