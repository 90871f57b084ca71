/* reduce.h: what the reduction front door (ops_reduce.c) and the code that
 * runs a reduction on a device (reduce_exec.c) share. Internal to ops/. */
#ifndef PCS_OPS_REDUCE_H
#define PCS_OPS_REDUCE_H

#include "ops/ops.h"

typedef struct {
    int op;          /* pcs_reduce_op */
    const char *name;
    int in_dtype;    /* input is cast to this first */
    int out_dtype;   /* dtype of the result the user sees */
    double param;
} red_call;

/* Reduce x over mask into res (values, keepdim shape, the kernel's dtype)
 * and/or idx (int64 indices): on CUDA through reduce.cu's kernels, on the
 * CPU through NumPy. 0, or -1 with an exception set. */
int pcs_reduce_exec_cuda(const red_call *c, PcsTensor *x, const bool *mask, PcsTensor *res,
                         PcsTensor *idx);
int pcs_reduce_exec_cpu(const red_call *c, PcsTensor *x, const bool *mask, PcsTensor *res,
                        PcsTensor *idx);


#endif
