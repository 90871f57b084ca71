/* iter.h: the iteration core. An op describes its operands (the output
 * first, then the inputs: data pointer, sizes, strides, element size) and
 * gets back a launch plan (pcs_ew_geom of kernels.h): the broadcast shape
 * with size-1 dims dropped, the dims ordered by the output's strides
 * (fastest last) and neighbouring dims coalesced, whether 32-bit offsets
 * suffice, whether every operand is contiguous (and 16-byte aligned: the
 * vectorised kernels). Reductions ask whether their input can be read in
 * place as an [A, K, B] block. The memory-overlap rules of torch's
 * TensorIterator live here too. Kernels take the plan, never a tensor. */
#ifndef PCS_CORE_ITER_H
#define PCS_CORE_ITER_H

#include "core/common.h"
#include "kernels/kernels.h"

typedef struct {
    const char *data;       /* first element; NULL: a scalar, passed by value */
    int ndim;               /* right-aligned against the broadcast shape */
    const int64_t *sizes;
    const int64_t *strides; /* in elements */
    int itemsize;
} pcs_iter_operand;

typedef struct {
    pcs_ew_geom geom; /* the coalesced dims, outermost first */
    int64_t numel;
    bool contiguous;  /* every operand with memory is contiguous over the shape */
    bool vectorized;  /* ... and 16-byte aligned */
} pcs_iter_plan;

/* Broadcast shape of the operands into shape; returns its ndim, or -1 when
 * two sizes differ and neither is 1: bad[0] the shape's size so far,
 * bad[1] the operand's, bad[2] the operand's dim. */
int pcs_iter_broadcast(int nops, const pcs_iter_operand *ops, int64_t *shape, int64_t bad[3]);

/* The plan for nops (<= PCS_EW_OPERANDS) operands over shape; ops[0] is the
 * output, whose strides order the dims. */
void pcs_iter_build(pcs_iter_plan *p, int ndim, const int64_t *shape, int nops,
                    const pcs_iter_operand *ops);

/* The strides (in elements) of a new dense output over shape, following
 * the inputs' memory order as torch's TensorIterator does: the result of
 * a.t() + b.t() is itself transposed, so the op runs at contiguous speed.
 * Contiguous inputs give a contiguous output. */
void pcs_iter_output_strides(int ndim, const int64_t *shape, int nin, const pcs_iter_operand *ins,
                             int64_t *strides);

/* Reductions: a dense input whose reduced dims (mask) form one run in
 * memory order, with the kept dims in their logical order, is the block
 * [A, K, B] read in place (the result then is contiguous in logical order).
 * Returns true and fills A, K, B; false: the caller makes such a copy. */
bool pcs_iter_reduce_blocks(int ndim, const int64_t *sizes, const int64_t *strides,
                            const bool *mask, int64_t *A, int64_t *K, int64_t *B);

/* Reductions whose reduced dims are two runs in memory order with kept
 * dims between (x.sum((0, 2)) of a contiguous 3-D x): a dense input read in
 * place as [P, K1, M, K2, Q] (reduced: K1 and K2), kept dims in their
 * logical order. Returns true and fills blk; false otherwise. */
bool pcs_iter_reduce_split(int ndim, const int64_t *sizes, const int64_t *strides,
                           const bool *mask, int64_t blk[5]);

/* Strides of the dims of size > 1 pack the elements with no gap or reuse
 * (torch's non-overlapping-and-dense, in any memory order). */
bool pcs_iter_dense(const pcs_iter_operand *t);

/* torch's overlap rules for a written-to tensor `out` and the inputs: an
 * output where one memory location is more than one element (a stride-0
 * dim of size > 1), or that partly overlaps a dense input (not the exact
 * same view: in-place ops stay allowed), raises torch's RuntimeError and
 * returns -1. */
int pcs_iter_check_overlap(const pcs_iter_operand *out, int nin, const pcs_iter_operand *ins);

#endif
