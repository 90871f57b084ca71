/* index.h: the launchers of kernels/index.cu (advanced indexing, gather and
 * scatter) and kernels/compact.cu (nonzero, masked_select), declared apart from kernels.h so that adding one does
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
 * dim of size isize[k] (wrap adds isize to negative values, unless bit k of
 * nowrap makes them out of range, as torch's dim-wise ops do). x[idx], setitem,
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
    unsigned nowrap; /* bit k: index tensor k's negative values are out of range */
    int64_t base;
    int64_t sizes[PCS_MAX_DIMS];
    int64_t bstride[PCS_MAX_DIMS];
    const int64_t *idx[PCS_MAX_DIMS];
    int64_t istride[PCS_MAX_DIMS][PCS_MAX_DIMS];
    int64_t isize[PCS_MAX_DIMS];
    int64_t wstride[PCS_MAX_DIMS];
} pcs_index_geom;

/* The range-check record: host-mapped pinned memory (ops/index_check.c keeps
 * a pool of them) that a kernel writes only when it meets an out-of-range
 * index: bad[k] = 1 and value[k] one such raw value of index tensor k. The
 * host clears bad[] and done before the launch. The last block of the
 * launch to finish sets done (after every block's writes are visible), so
 * the host knows the record is final by reading it: no event, no device
 * buffer, no copy. */
typedef struct {
    int64_t bad[PCS_MAX_DIMS];
    int64_t value[PCS_MAX_DIMS];
    unsigned done;
    unsigned pad;
} pcs_index_err;

/* What a launch reports into: the record (the device pointer of its mapped
 * memory) and a device counter of the launch's finished blocks (0 between
 * launches: the last block puts it back). blocks is NULL for a launch that
 * does not mark the record final (an earlier pass of a two-pass op, or one
 * whose indices were all checked on the host). */
typedef struct {
    pcs_index_err *rec;
    unsigned *blocks;
} pcs_index_report;

/* out[i] = off(coordinate of i) for the n = prod(sizes) result elements, in
 * row-major order. An out-of-range index is reported in rep and makes its element's offset -1, which
 * the sorted scatter skips (it sorts last over the low bits), so no offset
 * ever leaves the tensor. */
int pcs_launch_index_offsets(const pcs_index_geom *g, int64_t *out, int64_t n, pcs_index_report rep,
                             cudaStream_t stream);
/* The offsets and the gather in one pass: out[i] = src[off(i)] (out
 * contiguous, n elements of `itemsize` bytes), rep as above; a bad index
 * reads element 0 of src's storage (in bounds). Four elements a thread, their
 * index loads issued before the dependent reads. */
int pcs_launch_index_gather_geom(const pcs_index_geom *g, void *out, const void *src, int itemsize,
                                 int64_t n, pcs_index_report rep, cudaStream_t stream);
/* The common case (x[idx], index_select, take, embedding-like lookups): one
 * index tensor, contiguous (idx[r] is row r), each picking a contiguous row
 * of `rowbytes` bytes of src at byte offset base + wrap(idx[r]) * wbytes:
 * out (contiguous, nrows * rowbytes) gets the rows in one pass, no offsets
 * in memory, with 16-byte (8, 4, 2, 1) loads and stores as the alignment of
 * src, out, base, wbytes and rowbytes allows. rep as above (index tensor 0);
 * wrap: negative indices count from the end (else they are out of range). */
int pcs_launch_index_gather_rows(const int64_t *idx, int64_t nrows, int64_t isize, bool wrap, void *out,
                                 const void *src, int64_t base, int64_t wbytes, int64_t rowbytes,
                                 pcs_index_report rep, cudaStream_t stream);
/* dst[off(i)] op= vals[i] for the n result elements of g, offsets computed
 * on the fly, without sorting: ADD through atomicAdd (int32, int64, float32,
 * float64; float sums then vary in the last bits from run to run, as
 * torch's default), SET a plain store of any dtype (one value broadcast:
 * duplicates write the same; else which duplicate lands is unspecified). An element with a bad index is reported in rep and
 * skipped (the others are applied). Returns -1 for other dtypes or modes
 * (then sort). */
int pcs_launch_index_scatter_atomic(int dtype, const pcs_index_geom *g, void *dst, const void *vals,
                                    int64_t n, int mode, pcs_index_report rep, cudaStream_t stream);
/* dst[off(i)] = vals[i] (itemsize bytes each) where the last i in index order
 * wins among duplicates, without sorting: win (one int32 per element of
 * dst's storage, all -1 beforehand) takes each target's highest position,
 * then the winners write. Up to PCS_SET_LAST_ONE_BLOCK values, one block
 * does it all in one launch and clears the entries of win it uses itself
 * (the caller need not). Bad indices reported in rep and skipped. -1 for
 * n past INT32_MAX or an unsupported itemsize. */
#define PCS_SET_LAST_ONE_BLOCK 8192
int pcs_launch_index_set_last(const pcs_index_geom *g, void *dst, const void *vals, int itemsize,
                              int64_t n, int32_t *win, pcs_index_report rep, cudaStream_t stream);
/* Scatter modes: SET keeps the last value in index order (deterministic). */
enum { PCS_SCATTER_SET = 0, PCS_SCATTER_ADD, PCS_SCATTER_MUL, PCS_SCATTER_MEAN,
       PCS_SCATTER_AMAX, PCS_SCATTER_AMIN };

/* Sorts the n offsets (keys) with their positions 0..n-1 (values) by a
 * stable radix sort over the low `bits` bits (CUB). temp NULL: sets *bytes
 * to the temporary storage needed and returns. pos_in is scratch (n int64). */
int pcs_index_sort(void *temp, size_t *bytes, const int64_t *off, int64_t *off_sorted,
                   int64_t *pos_in, int64_t *pos_sorted, int64_t n, int bits, cudaStream_t stream);
/* dst[k] = reduce of the values vals[pos[j]] of each run of equal sorted
 * offsets k >= 0 (a run of -1, bad indices, is skipped) (with dst[k] itself first when include_self), by
 * cub::DeviceReduce::ReduceByKey, whose fixed association makes float
 * results the same from run to run. vals has dst's dtype. temp NULL: sets
 * *bytes to the temporary storage needed and returns; uniq: n int64 of
 * scratch. */
int pcs_launch_index_scatter(int dtype, void *dst, const int64_t *off_sorted,
                             const int64_t *pos_sorted, const void *vals, int64_t n, int mode,
                             int include_self, void *temp, size_t *bytes, int64_t *uniq,
                             cudaStream_t stream);

/* Compaction (compact.cu). Up to PCS_SELECT_ONE_BLOCK elements, one block
 * selects in one launch and needs no temporary storage (sizing gives 0
 * bytes; temp may stay NULL when `done` is given), and `done` (NULL, or
 * host-mapped) is set to 1 once the count is written and fenced; above,
 * cub::DeviceSelect::Flagged, and `done` must be NULL (-1 otherwise).
 * temp and done both NULL: sizing. */
#define PCS_SELECT_ONE_BLOCK 8192
/* The positions i < n whose element of `values` (itemsize 1, 2, 4, 8 or
 * 16 bytes, contiguous) has a bit set under `mask` (applied to both 8-byte
 * halves of a 16-byte element; a float's mask leaves out its sign bits, so
 * -0.0 is zero), ascending, and their count (device int64), with the test
 * as the flag iterator: no bool copy of the input. temp NULL: sizing.
 * Returns -1 for another itemsize. */
int pcs_index_select_positions(void *temp, size_t *bytes, const void *values, int itemsize,
                               uint64_t mask, int64_t *out, int64_t *count, unsigned *done,
                               int64_t n, cudaStream_t stream);
/* The elements of `in` (itemsize bytes each, contiguous) whose flags are set,
 * packed into out, and their count (masked_select). temp NULL: sizing. */
int pcs_index_select_flagged(void *temp, size_t *bytes, int itemsize, const void *in,
                             const bool *flags, void *out, int64_t *count, unsigned *done,
                             int64_t n, cudaStream_t stream);
/* out[i, d] = the coordinate along dim d (of `sizes`) of linear position lin[i]. */
int pcs_launch_index_unravel(int64_t *out, const int64_t *lin, int64_t count, int ndim,
                             const int64_t *sizes, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
