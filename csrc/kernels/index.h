/* index.h: the launchers of kernels/index.cu (advanced indexing, gather and
 * scatter, nonzero), declared apart from kernels.h so that adding one does
 * not recompile every kernel file. Only the ops that index include it.
 *
 * Every indexing op is described the same way: a result shape, and for each
 * result element the element offset (into the indexed tensor's storage) it
 * reads or writes:
 *     off(c) = base + sum_d c[d] * bstride[d]
 *                   + sum_k wrap(idx_k[sum_d c[d] * istride[k][d]]) * wstride[k]
 * where c is the element's coordinate in the result, bstride the strides the
 * basic (sliced) dims walk, and idx_k the int64 index tensors (broadcast to
 * the result through istride, 0 on dims they do not span), each indexing a
 * dim of size isize[k] (wrap adds isize to negative values). x[idx], setitem,
 * index_put_, index_select, gather, scatter, take, index_add_ ... all build
 * this geometry on the host (ops/index_geom.c) and differ only in what they
 * do with the offsets. */
#ifndef PCS_KERNELS_INDEX_H
#define PCS_KERNELS_INDEX_H

#include "kernels.h"

#ifndef __cplusplus
#include <stdbool.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int ndim;  /* result dims */
    int nidx;  /* index tensors */
    int64_t base;
    int64_t sizes[PCS_MAX_DIMS];
    int64_t bstride[PCS_MAX_DIMS];
    const int64_t *idx[PCS_MAX_DIMS];
    int64_t istride[PCS_MAX_DIMS][PCS_MAX_DIMS];
    int64_t isize[PCS_MAX_DIMS];
    int64_t wstride[PCS_MAX_DIMS];
} pcs_index_geom;

/* out[i] = off(coordinate of i) for the n = prod(sizes) result elements, in
 * row-major order. minmax (device, 2 * nidx int64) receives each index
 * tensor's smallest and largest raw value, so the host can raise IndexError
 * before anything reads or writes through the offsets; an out-of-range
 * index contributes 0 to its offset, so no offset ever leaves the tensor. */
int pcs_launch_index_offsets(const pcs_index_geom *g, int64_t *out, int64_t n, int64_t *minmax,
                             cudaStream_t stream);
/* The offsets and the gather in one pass: out[i] = src[off(i)] (out
 * contiguous, n elements of `itemsize` bytes), minmax as above; a bad index
 * reads element 0 and the caller discards out. */
int pcs_launch_index_gather_geom(const pcs_index_geom *g, void *out, const void *src, int itemsize,
                                 int64_t n, int64_t *minmax, cudaStream_t stream);
/* Scatter modes: SET keeps the last value in index order (deterministic). */
enum { PCS_SCATTER_SET = 0, PCS_SCATTER_ADD, PCS_SCATTER_MUL, PCS_SCATTER_MEAN,
       PCS_SCATTER_AMAX, PCS_SCATTER_AMIN };

/* Sorts the n offsets (keys) with their positions 0..n-1 (values) by a
 * stable radix sort over the low `bits` bits (CUB). temp NULL: sets *bytes
 * to the temporary storage needed and returns. pos_in is scratch (n int64). */
int pcs_index_sort(void *temp, size_t *bytes, const int64_t *off, int64_t *off_sorted,
                   int64_t *pos_in, int64_t *pos_sorted, int64_t n, int bits, cudaStream_t stream);
/* dst[k] = reduce of the values vals[pos[j]] of each run of equal sorted
 * offsets k (with dst[k] itself first when include_self), in index order,
 * so that float sums are the same from run to run. vals has dst's dtype. */
int pcs_launch_index_scatter(int dtype, void *dst, const int64_t *off_sorted,
                             const int64_t *pos_sorted, const void *vals, int64_t n, int mode,
                             int include_self, cudaStream_t stream);

/* The positions i < n with flags[i] != 0, ascending, and their count
 * (device int64), through cub::DeviceSelect::Flagged. temp NULL: sizing. */
int pcs_index_select_positions(void *temp, size_t *bytes, const bool *flags, int64_t *out, int64_t *count,
                      int64_t n, cudaStream_t stream);
/* The elements of `in` (itemsize bytes each, contiguous) whose flags are set,
 * packed into out, and their count (masked_select). temp NULL: sizing. */
int pcs_index_select_flagged(void *temp, size_t *bytes, int itemsize, const void *in,
                             const bool *flags, void *out, int64_t *count, int64_t n,
                             cudaStream_t stream);
/* out[i, d] = the coordinate along dim d (of `sizes`) of linear position lin[i]. */
int pcs_launch_index_unravel(int64_t *out, const int64_t *lin, int64_t count, int ndim,
                             const int64_t *sizes, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
