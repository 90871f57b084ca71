/* index.h (ops): the indexing engine the indexing ops share (index_exec.c).
 *
 * An indexing op describes what it reads or writes as a plan: the geometry
 * of kernels/index.h (a result shape; for each result element an offset
 * into the indexed tensor's storage, from basic strides and int64 index
 * tensors) plus the index tensors themselves. The engine turns a plan into
 * offsets (checking every index against its dim on the host before any
 * element is touched: on CUDA through a min/max the offsets kernel records
 * and one small synchronising read back), then gathers through them or
 * scatters values into them (SET: the last value in index order wins; ADD,
 * MUL, MEAN, AMAX, AMIN reduce each run of equal offsets in index order, so
 * CUDA results are deterministic). On the CPU the same geometry is walked by
 * a C loop and the reductions run in NumPy (pycuda_sem/_ops.py).
 *   index_exec.c  the engine: offsets, gather, scatter, nonzero
 *   index.c       x[...] and x[...] = v with tensors, lists and masks;
 *                 index_put_, index_put
 *   gather.c      gather, scatter*, index_select, index_add_/copy_/fill_,
 *                 take, take_along_dim
 *   masked.c      masked_fill, masked_select, masked_scatter_, nonzero,
 *                 where(cond) */
#ifndef PCS_OPS_INDEX_H
#define PCS_OPS_INDEX_H

#include "kernels/index.h"
#include "ops/ops.h"
#include "runtime/host_signal.h"

typedef struct {
    pcs_index_geom g;                /* g.idx is filled by the engine */
    PcsTensor *idx[PCS_MAX_DIMS];    /* owned: int64, on the indexed tensor's device */
    int dim[PCS_MAX_DIMS];           /* the dim each one indexes, named in errors */
    bool host_checked[PCS_MAX_DIMS]; /* its range was checked on the host */
    bool uniform;                    /* pcs_index_values saw one value (a number) */
    /* Set before pcs_index_plan_add, for torch's dim-wise ops (gather,
     * scatter, index_select, index_add_ ...): negative indices are out of
     * range (nowrap), and the index must be on the tensor's device. */
    bool nowrap, same_device;
} pcs_index_plan;

/* An empty plan (no result dims, no index tensors). */
void pcs_index_plan_init(pcs_index_plan *p);
/* Drops the plan's index tensors. */
void pcs_index_plan_clear(pcs_index_plan *p);
/* Adds an index tensor (int, any device: moved to `device` as int64; a CUDA
 * tensor indexing a CPU one or another GPU raises as torch). A CPU index
 * for a CUDA tensor is range-checked on the host before it is copied over,
 * so the op needs no read back for it. It indexes a
 * dim of size `size` and stride `wstride` (named `dim` in errors); its dims
 * are the result's dims first, first + 1, ... (size-1 dims broadcast), so
 * p->g.ndim and sizes must be set before. Returns its slot or -1. */
int pcs_index_plan_add(pcs_index_plan *p, PcsTensor *idx, int device, int dim, int64_t size,
                       int64_t wstride, int first);
/* IndexError "index 10 is out of bounds for dimension 0 with size 4"; -1. */
int pcs_index_oob(int64_t index, int dim, int64_t size);

/* The offsets (int64, p->g's shape, on t's device), after the range check. */
PcsTensor *pcs_index_offsets(pcs_index_plan *p, PcsTensor *t);
/* A new contiguous tensor of the plan's shape with src's elements. */
PcsTensor *pcs_index_gather(pcs_index_plan *p, PcsTensor *src);
/* Writes vals (contiguous, dst's dtype and device, the plan's shape) into dst. */
int pcs_index_scatter(pcs_index_plan *p, PcsTensor *dst, PcsTensor *vals, int mode,
                      bool include_self);
/* vals for a scatter: value (tensor, number or nested list) as a contiguous
 * tensor of dst's dtype and device broadcast to the plan's shape (torch's
 * "shape mismatch" IndexError otherwise); never aliases dst. */
PcsTensor *pcs_index_values(pcs_index_plan *p, PcsTensor *dst, PyObject *value);

/* The count of a selection just launched on `st` (index_exec.c): through
 * the host signal when there is one (up to PCS_SELECT_ONE_BLOCK elements
 * one block raises its flag after the count), else read back from element
 * `at` of owner's storage with a stream synchronisation. The signal is used
 * up either way. 0, or -1 with an exception. */
int pcs_selection_count(pcs_host_signal *sig, PcsTensor *owner, int64_t at, cudaStream_t st,
                        int64_t *count);
/* nonzero(mask): [count, ndim] int64 on mask's device (syncs on CUDA). */
PcsTensor *pcs_index_nonzero(PcsTensor *mask);

/* x[mask] for a CUDA bool mask of x's shape: masked_select (masked.c). */
PcsTensor *pcs_masked_select_dense(PcsTensor *x, PcsTensor *mask);
/* x[mask] = value: where(mask, value, x) written into x (mask of x's shape). */
int pcs_masked_fill_inplace(PcsTensor *x, PcsTensor *mask, PyObject *value);
/* torch.use_deterministic_algorithms for the scatters (index_exec.c). */
bool pcs_index_deterministic(void);
void pcs_index_set_deterministic(bool on);

/* The hooks tensor/tensor_index.c calls for advanced indices (index.c). */
PyObject *pcs_index_getitem_advanced(PcsTensor *t, PyObject *index);
int pcs_index_setitem_advanced(PcsTensor *t, PyObject *index, PyObject *value);
/* where(cond) with one argument: nonzero(cond, as_tuple=True) (masked.c). */
PyObject *pcs_nonzero_tuple(PcsTensor *cond);

extern PyMethodDef pcs_ops_index_tmethods[], pcs_ops_index_functions[];   /* index.c */
extern PyMethodDef pcs_ops_gather_tmethods[], pcs_ops_gather_functions[]; /* gather.c */
extern PyMethodDef pcs_ops_masked_tmethods[], pcs_ops_masked_functions[]; /* masked.c */

#endif
