/* sort.h: what the sorting, selection and scan files share.
 *
 *   sort.c    sort, argsort, msort, topk, kthvalue, median, nanmedian, mode,
 *             and the helpers below
 *   select.c  unique, unique_consecutive, bincount, histc, count_nonzero
 *   search.c  searchsorted, bucketize
 *   scan.c    cummax, cummin, logcumsumexp
 *
 * Every op along a dim works on "rows": the input with that dim moved last,
 * made contiguous, seen as [nseg, seglen]. The CUDA launchers of sort.cu and
 * scan.cu and the NumPy kernels of pycuda_sem/_ops.py both take rows, so the
 * layout is handled once, here, for both devices. */
#ifndef PCS_OPS_SORT_H
#define PCS_OPS_SORT_H

#include "ops/ops.h"

/* ---- rows ------------------------------------------------------------------ */

/* x with dim d moved last, contiguous (x itself when it already is); a 0-dim
 * x is one row of one. *nseg, *seglen: the row count and length. */
PcsTensor *pcs_rows_of(PcsTensor *x, int d, int64_t *nseg, int64_t *seglen);
/* The shape of x with dim d moved last (ndim of x; 0-dim stays 0-dim). */
void pcs_rows_shape(const PcsTensor *x, int d, int64_t *sizes);
/* A result r laid out as rows (shape pcs_rows_shape) back in x's dim order,
 * contiguous. Steals r. */
PcsTensor *pcs_rows_restore(PcsTensor *r, int d);
/* A result of one value per row: shape of x without dim d, or with it as 1
 * when keepdim. Steals r (contiguous, nseg elements). */
PcsTensor *pcs_rows_reduced(PcsTensor *r, const PcsTensor *x, int d, bool keepdim);

/* Stable sort of each row of a rows block (either device) into vals and/or
 * idx (rows-shaped, either NULL): NaN last ascending, -0.0 == +0.0.
 * narrow: the caller synchronises anyway, so a long row of integers may
 * wait once to sort only the bits its keys differ in (pcs_sort_rows). */
int pcs_sort_block(PcsTensor *rows, int64_t nseg, int64_t len, bool desc, bool narrow,
                   PcsTensor *vals, PcsTensor *idx, const char *fname);

/* cumsum (cumprod when prod) of a contiguous CUDA tensor along d into out
 * (same shape and dtype) through CUB's device-wide scans (scan.c), when the
 * tensor is a few long lines (at most 32 of at least 4096), which
 * ops_reduce.c's one-block-per-line kernel cannot spread over the GPU; a
 * line that is not innermost goes through a transposed copy. 0; -1 with
 * exception; -2 (no exception) where it does not apply. */
int pcs_cumsum_dim(bool prod, PcsTensor *src, int d, PcsTensor *out);

/* ---- arguments ------------------------------------------------------------- */

/* The wrapped dim of `obj` (an int; NULL/None gives dflt) for a tensor of
 * ndim dims: IndexError "Dimension out of range ..." as torch. -1 on error. */
int pcs_dim_arg(PyObject *obj, int ndim, int64_t dflt, const char *fname);
/* A bool argument (NULL/None gives dflt); -1 with exception. */
int pcs_flag_arg(PyObject *obj, bool dflt);
/* (pcs_input_arg: ops.h, op_common.c) */

/* ---- devices --------------------------------------------------------------- */

/* A uint8 workspace of `bytes` on dev from the caching allocator (current
 * stream); NULL result without error when bytes == 0 (*ws is then NULL). */
int pcs_workspace(size_t bytes, int dev, PcsTensor **ws);
/* Turns a sort.cu / scan.cu launcher status into an exception: 0 stays 0;
 * -1 NotImplementedError for the dtype; -3 NotImplementedError for sizes
 * past CUB's 32-bit counts; a positive cudaError_t RuntimeError naming op. */
int pcs_cub_status(int status, const char *op, int dtype);
/* The device and stream to launch on (sets the device); NULL stream and -1
 * on error. */
int pcs_launch_stream(int dev, cudaStream_t *stream);
/* A two-phase launcher of sort.cu / scan.cu bound to its arguments (ctx):
 * ws NULL sizes the workspace into *ws_bytes, else it runs. */
typedef int (*pcs_cub_call)(const void *ctx, void *ws, size_t *ws_bytes, cudaStream_t stream);
/* Runs one on dev's current stream: sizes the workspace, takes it from the
 * caching allocator, runs, checks the launch. 0; -1 with exception (as
 * pcs_cub_status); -2, no exception, when the call declines (topk). */
int pcs_cub_run(int dev, const char *op, int dtype, pcs_cub_call call, const void *ctx);
/* Calls pycuda_sem._ops.<name>(*args) (args a new tuple, stolen) and
 * returns its result. */
PyObject *pcs_np_call(const char *name, PyObject *args);
/* A tensor of `dtype` holding a NumPy array's values (a CPU tensor). */
PcsTensor *pcs_np_tensor(PyObject *arr, int dtype);

/* A number from a reducing method of t (t.min(), t.max()): waits for the
 * device. 0, or -1 with exception (select.c). */
int pcs_reduced_int(PcsTensor *t, const char *method, int64_t *out);
int pcs_reduced_double(PcsTensor *t, const char *method, double *out);

/* ---- results --------------------------------------------------------------- */

/* torch.return_types.<name>(values, indices); steals both. */
enum { PCS_RT_SORT, PCS_RT_TOPK, PCS_RT_KTHVALUE, PCS_RT_MEDIAN, PCS_RT_NANMEDIAN, PCS_RT_MODE,
       PCS_RT_CUMMAX, PCS_RT_CUMMIN, PCS_RT_COUNT };
PyObject *pcs_values_indices(int which, PcsTensor *values, PcsTensor *indices);
/* Copies each result into the out= tensors (a tuple or list of n tensors,
 * or one tensor when n == 1), which must have the results' shapes (no
 * resizing, as the reductions' out=). Steals res; returns out (NULL: res). */
PyObject *pcs_into_outs(PyObject *res, PyObject *out, int n, const char *fname);

/* Runs pycuda_sem._ops.<fn>(x, n, vout, iout, *extra) for a CPU rows block:
 * x the rows (NumPy computes in float32 for bfloat16), n the row length,
 * vout/iout views of v (a float32 stand-in for bfloat16, copied back) and of
 * the int64 i, either NULL (None). extra: a tuple, stolen (NULL: failed
 * build, exception set). 0 or -1. */
int pcs_np_rows(const char *fn, PcsTensor *rows, int64_t n, PcsTensor *v, PcsTensor *i,
                PyObject *extra);

/* ---- the tables (merged by ops.c) --------------------------------------- */


extern PyMethodDef pcs_ops_sort_tmethods[], pcs_ops_sort_functions[];
extern PyMethodDef pcs_ops_select_tmethods[], pcs_ops_select_functions[];
extern PyMethodDef pcs_ops_scan_tmethods[], pcs_ops_scan_functions[];
extern PyMethodDef pcs_ops_search_functions[];
int pcs_ops_sort_init(PyObject *module); /* the return_types structs */

#endif
