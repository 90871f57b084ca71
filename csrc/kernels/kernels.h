/* kernels.h: the only door into device code.
 *
 * Host files (C11) include this header; the .cu files implement it with
 * extern "C" launchers. Nothing here knows about Python: launchers take raw
 * pointers, dtype ids, geometry and a stream, enqueue work and return. They do
 * not check the launch themselves; the caller runs PCS_CHECK_LAUNCH right
 * after, so that errors carry the caller's context and CUDA_LAUNCH_BLOCKING
 * is honoured in one place. */
#ifndef PCS_KERNELS_H
#define PCS_KERNELS_H

#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Scalar types, shared by host and device code. The order is fixed: the
 * promotion table in dtype.c and the dispatch switch in copy.cu index by it. */
typedef enum {
    PCS_BOOL = 0,
    PCS_UINT8,
    PCS_INT8,
    PCS_INT16,
    PCS_INT32,
    PCS_INT64,
    PCS_FLOAT16,
    PCS_BFLOAT16,
    PCS_FLOAT32,
    PCS_FLOAT64,
    PCS_COMPLEX64,
    PCS_COMPLEX128,
    PCS_NUM_DTYPES
} pcs_dtype;

/* Tensors have at most this many dimensions (kernels receive the geometry
 * by value, so it bounds the parameter size). */
#define PCS_MAX_DIMS 16

/* Strided geometry of one elementwise launch, copy or fill, planned by the
 * iteration core (core/iter.h): the shared shape, outermost dim first and
 * the fastest last, with each operand's strides in elements. strides[0] is
 * the output's (a copy's destination), strides[1..3] the inputs' (0
 * broadcasts). index32: the element count and every operand's offsets fit
 * in int32, so kernels may index in 32 bits (fast divisions, fewer
 * registers); otherwise they use 64-bit offsets. */
#define PCS_EW_OPERANDS 4
typedef struct {
    int ndim;
    int index32;
    int64_t sizes[PCS_MAX_DIMS];
    int64_t strides[PCS_EW_OPERANDS][PCS_MAX_DIMS];
} pcs_ew_geom;

/* dst[i] = (dst_dtype) src[i] for n elements (geom: strides[0] dst's,
 * strides[1] src's). geom NULL means both sides are contiguous (the
 * vectorized fast path). Same-dtype copies whose two fastest dims differ (a
 * transpose, a permuted copy) go through a shared-memory tiled kernel.
 * Returns 0, or -1 for a dtype the launcher does not know (nothing is
 * launched then). */
int pcs_launch_copy(void *dst, int dst_dtype, const void *src, int src_dtype, int64_t n,
                    const pcs_ew_geom *geom, cudaStream_t stream);

/* A same-dtype copy (geom as above) whose two fastest dims differ, moved
 * through shared-memory tiles as raw words of `itemsize` bytes (1, 2, 4, 8
 * or 16) (transpose.cu). Returns 1 when it launched, 0 when geom is not a
 * transpose worth tiling (nothing is launched; the caller copies it). */
int pcs_launch_transpose(void *dst, const void *src, int itemsize, const pcs_ew_geom *geom,
                         cudaStream_t stream);

/* Writes the `itemsize`-byte pattern `value` (1, 2, 4, 8 or 16 bytes) into n
 * elements of dst; geom (only strides[0] used) NULL means contiguous. */
int pcs_launch_fill(void *dst, int itemsize, const void *value, int64_t n,
                    const pcs_ew_geom *geom, cudaStream_t stream);

/* ---- testing (testing.cu) ----------------------------------------------- */

/* Keeps the GPU busy on `stream` for about `cycles` clock cycles, as
 * torch.cuda._sleep does: tests and benchmarks use it to hold a stream while
 * they check ordering, concurrency and timing. */
void pcs_launch_sleep(int64_t cycles, cudaStream_t stream);

/* A launch every GPU refuses (4096 threads a block): tests check that a
 * failed launch raises at the op and leaves the context usable. */
void pcs_launch_bad_config(cudaStream_t stream);

/* ---- random numbers, FFT helpers (random.cu, fft.cu) ----------------------- */

/* The fill parameters and the numbering scheme are in philox.h. */
struct pcs_rng_params;

/* Writes n Philox numbers (p: kind, parameters, seed, offset) into
 * contiguous out of `dtype` (bool, integers, float16/bfloat16/32/64).
 * Returns -1 for a dtype it does not know (nothing is launched). */
int pcs_launch_rng_fill(void *out, int dtype, int64_t n, const struct pcs_rng_params *p,
                        cudaStream_t stream);

/* Scales n contiguous floats (is_double 0) or doubles in place: even
 * positions by s_even, odd ones by s_odd. On complex data (interleaved re,
 * im) that is FFT normalisation and conjugation (s_odd = -s_even) in one
 * pass; on real data pass s_even == s_odd. */
void pcs_launch_fft_scale(void *data, int is_double, int64_t n, double s_even, double s_odd,
                          cudaStream_t stream);

/* ---- compute: elementwise ops, reductions, scans (ew_*.cu, reduce.cu) */
/* Launched by ops*.c. Every operand of one launch has the same compute dtype
 * (the host casts first where dtypes differ); outputs are that dtype except
 * where an op says otherwise. A NULL input pointer means "use the matching
 * scalar" (a Python number or a 0-dim CPU tensor joining a CUDA op). Each
 * launcher returns 0, or -1 for an (op, dtype) pair it does not implement,
 * in which case nothing is launched. */

/* Binary ops. Output dtype: bool for EQ..LOGICAL_XOR, else the compute dtype.
 * ADD_ALPHA is a + alpha * b (alpha in scalars[2]); DIV_TRUNC/DIV_FLOOR are
 * div's rounding modes; REMAINDER and DIV_FLOOR follow Python's signs.
 * THRESHOLD_BWD(g, r) is relu's backward in one pass: r <= 0 ? 0 : g (a NaN
 * in r lets g through, as torch's threshold_backward). GELU_BWD(g, x) and
 * GELU_TANH_BWD(g, x) are gelu's backward in one pass, g * gelu'(x), for
 * approximate='none' and 'tanh' (floating dtypes only). */
typedef enum {
    PCS_BOP_ADD = 0, PCS_BOP_SUB, PCS_BOP_ADD_ALPHA, PCS_BOP_MUL, PCS_BOP_DIV,
    PCS_BOP_DIV_TRUNC, PCS_BOP_DIV_FLOOR, PCS_BOP_REMAINDER, PCS_BOP_POW,
    PCS_BOP_MAXIMUM, PCS_BOP_MINIMUM, PCS_BOP_ATAN2, PCS_BOP_THRESHOLD_BWD,
    PCS_BOP_EQ, PCS_BOP_NE, PCS_BOP_LT, PCS_BOP_LE, PCS_BOP_GT, PCS_BOP_GE,
    PCS_BOP_LOGICAL_AND, PCS_BOP_LOGICAL_OR, PCS_BOP_LOGICAL_XOR,
    PCS_BOP_BITWISE_AND, PCS_BOP_BITWISE_OR, PCS_BOP_BITWISE_XOR,
    PCS_BOP_LSHIFT, PCS_BOP_RSHIFT, PCS_BOP_GELU_BWD, PCS_BOP_GELU_TANH_BWD,
    PCS_NUM_BOPS
} pcs_binary_op;

/* Unary ops. Output dtype: bool for ISNAN..LOGICAL_NOT, the real dtype for
 * ABS of a complex input, else the compute dtype. NAN_TO_NUM takes
 * (nan, posinf, neginf) in params[0..2]. */
typedef enum {
    PCS_UOP_NEG = 0, PCS_UOP_ABS, PCS_UOP_SIGN, PCS_UOP_EXP, PCS_UOP_EXP2, PCS_UOP_EXPM1,
    PCS_UOP_LOG, PCS_UOP_LOG2, PCS_UOP_LOG10, PCS_UOP_LOG1P, PCS_UOP_SQRT, PCS_UOP_RSQRT,
    PCS_UOP_SIN, PCS_UOP_COS, PCS_UOP_TAN, PCS_UOP_ASIN, PCS_UOP_ACOS, PCS_UOP_ATAN,
    PCS_UOP_SINH, PCS_UOP_COSH, PCS_UOP_TANH, PCS_UOP_SIGMOID, PCS_UOP_RELU, PCS_UOP_GELU,
    PCS_UOP_GELU_TANH, PCS_UOP_FLOOR, PCS_UOP_CEIL, PCS_UOP_ROUND, PCS_UOP_TRUNC,
    PCS_UOP_FRAC, PCS_UOP_RECIPROCAL, PCS_UOP_SQUARE, PCS_UOP_NAN_TO_NUM,
    PCS_UOP_ERF, PCS_UOP_ERFC, PCS_UOP_ERFINV, PCS_UOP_LGAMMA, PCS_UOP_DIGAMMA, PCS_UOP_TRIGAMMA,
    PCS_UOP_BITWISE_NOT,
    PCS_UOP_ISNAN, PCS_UOP_ISINF, PCS_UOP_ISFINITE, PCS_UOP_LOGICAL_NOT,
    PCS_NUM_UOPS
} pcs_unary_op;

/* Ternary ops: WHERE(cond: bool, x, y), CLAMP(x, lo, hi) = min(max(x, lo), hi),
 * LERP(start, end, weight). */
typedef enum { PCS_TOP_WHERE = 0, PCS_TOP_CLAMP, PCS_TOP_LERP, PCS_NUM_TOPS } pcs_ternary_op;

/* A host value for a kernel: integers use i, floats re, complex re and im. */
typedef struct {
    int64_t i;
    double re, im;
} pcs_kscalar;

/* geom NULL: every tensor operand is contiguous with n elements (the
 * vectorized fast path). scalars has 3 entries (a, b, extra). */
int pcs_launch_binary(int op, int dtype, void *out, const void *a, const void *b,
                      const pcs_kscalar *scalars, int64_t n, const pcs_ew_geom *geom,
                      cudaStream_t stream);
int pcs_launch_unary(int op, int dtype, void *out, const void *a, const pcs_kscalar *params,
                     int64_t n, const pcs_ew_geom *geom, cudaStream_t stream);
int pcs_launch_ternary(int op, int dtype, void *out, const void *a, const void *b,
                       const void *c, const pcs_kscalar *scalars, int64_t n,
                       const pcs_ew_geom *geom, cudaStream_t stream);

/* Reductions over a contiguous input seen as [A, K, B]: out[a, b] combines
 * in[a, :, b]. Output dtypes: SUM/PROD int64 for bool and integers, else
 * the input's; MEAN/MAX/MIN/LOGSUMEXP the input's; ARGMAX/ARGMIN write
 * values (the input's dtype, when out != NULL) and int64 indices (when
 * indices != NULL); ALL/ANY one byte 0/1 (bool, or uint8 for uint8);
 * VAR/STD/NORM the real dtype. param: the correction for VAR/STD, p for
 * NORM (0, 1, 2 or any other finite p). workspace: bytes from
 * pcs_reduce_workspace, on the same stream. semaphores: NULL, or
 * PCS_STREAM_SEMAPHORES counters that are zero when the launch runs
 * (pcs_stream_semaphores); an outer reduction split over blocks then
 * combines its splits in the same launch, and leaves the counters zero. */
#define PCS_STREAM_SEMAPHORES 4096
typedef enum {
    PCS_ROP_SUM = 0, PCS_ROP_PROD, PCS_ROP_MEAN, PCS_ROP_MAX, PCS_ROP_MIN,
    PCS_ROP_ARGMAX, PCS_ROP_ARGMIN, PCS_ROP_ALL, PCS_ROP_ANY, PCS_ROP_VAR, PCS_ROP_STD,
    PCS_ROP_NORM, PCS_ROP_LOGSUMEXP,
    PCS_NUM_ROPS
} pcs_reduce_op;

size_t pcs_reduce_workspace(int op, int dtype, int64_t A, int64_t K, int64_t B, int device);
int pcs_launch_reduce(int op, int dtype, void *out, int64_t *indices, const void *in, int64_t A,
                      int64_t K, int64_t B, double param, void *workspace, unsigned *semaphores,
                      int device, cudaStream_t stream);

/* Reductions whose reduced dims are two runs in memory: a contiguous
 * [P, K1, M, K2, Q] input reduced over K1 and K2 into out [P, M, Q] (the
 * dtype as pcs_launch_reduce writes it), in two passes without copying the
 * input. pcs_reduce_split_plan returns -1 when the op cannot be split this
 * way (argmax/argmin, var/std), else 0 and the workspace bytes that
 * pcs_launch_reduce_split needs (always some: the first pass's results). */
int pcs_reduce_split_plan(int op, int dtype, int64_t P, int64_t K1, int64_t M, int64_t K2,
                          int64_t Q, size_t *bytes);
int pcs_launch_reduce_split(int op, int dtype, void *out, const void *in, int64_t P, int64_t K1,
                            int64_t M, int64_t K2, int64_t Q, double param, void *workspace,
                            cudaStream_t stream);

/* Inclusive scans along K of a contiguous [A, K, B] input; op 0 sums,
 * 1 multiplies; out has the input's dtype. */
int pcs_launch_scan(int op, int dtype, void *out, const void *in, int64_t A, int64_t K, int64_t B,
                    cudaStream_t stream);

/* ---- sorting, selection and the extra scans (sort.cu, select.cu, scan.cu) */
/* All CUB, with temporary storage the caller takes from the caching
 * allocator on the same stream. Each two-phase launcher is first called
 * with ws == NULL to learn the workspace size (*ws_bytes), then with a
 * workspace of that size to run (a size of 0 is never read: any non-NULL
 * address runs). They return 0; -1 for a dtype they do not
 * handle (complex; nothing launched); -3 for a size past CUB's 32-bit
 * counts (a sorted row of 2^31 elements or more); or a positive cudaError_t
 * from CUB, whose own error checks clear the runtime's last error, so the
 * caller must report it. Inputs are contiguous [nseg, seglen] blocks with
 * the working dim last. */

/* Stable sort of each row (torch's order: NaN last ascending, first
 * descending, -0.0 equal to +0.0). values (the input's dtype) and int64
 * indices may each be NULL (not both); indices NULL sorts keys only.
 * narrow: a caller that waits for the device anyway allows one wait here,
 * so that one long row of integers sorts only the bits its keys differ in. */
int pcs_sort_rows(int dtype, const void *in, void *values, int64_t *indices, int64_t nseg,
                  int64_t seglen, int descending, int narrow, void *ws, size_t *ws_bytes,
                  cudaStream_t stream);

/* The first k of each row in pcs_sort_rows' order (descending when
 * largest), values and int64 indices (either may be NULL for rows of at
 * most PCS_TOPK_ONE_TILE) into [nseg, k] contiguous outputs: block sorts of
 * tiles of the row (cub::BlockRadixSort), then a sort of the tiles'
 * candidates. A row of at most PCS_TOPK_ONE_TILE elements is one tile,
 * sorted by one block in one launch, for any k (k == seglen sorts it
 * whole). -2 (nothing launched) when k is outside [1, PCS_TOPK_MAX_K] for
 * longer rows, or past the row, or for several rows shorter than
 * PCS_TOPK_MIN_ROW: the caller sorts the rows instead. Two-phase. */
#define PCS_TOPK_ONE_TILE 4096
#define PCS_TOPK_MIN_ROW 256
#define PCS_TOPK_MAX_K 256
int pcs_topk_rows(int dtype, const void *in, int64_t nseg, int64_t seglen, int64_t k, int largest,
                  void *values, int64_t *indices, void *ws, size_t *ws_bytes, cudaStream_t stream);

/* One value and its index per sorted row (sorted ascending, with the
 * indices of pcs_sort_rows): KTH takes position k; MEDIAN the lower median,
 * or the first NaN if the row has one; NANMEDIAN the lower median of the
 * numbers; MODE the longest run of equal values (the smallest such value),
 * with the last index of its run. */
typedef enum { PCS_PICK_KTH = 0, PCS_PICK_MEDIAN, PCS_PICK_NANMEDIAN, PCS_PICK_MODE } pcs_pick_op;
int pcs_launch_sort_pick(int op, int dtype, const void *sorted, const int64_t *sorted_idx,
                         int64_t nseg, int64_t seglen, int64_t k, void *out, int64_t *out_idx,
                         cudaStream_t stream);

/* MODE of a few long sorted rows (as pcs_launch_sort_pick, the same
 * answers) with device-wide CUB: the runs longer than one
 * (DeviceRunLengthEncode::NonTrivialRuns), the first longest
 * (DeviceReduce::ArgMax), its last element; rows one after another, for
 * rows too long for one thread. Two-phase. */
int pcs_mode_rows(int dtype, const void *sorted, const int64_t *sorted_idx, int64_t nseg,
                  int64_t seglen, void *out, int64_t *out_idx, void *ws, size_t *ws_bytes,
                  cudaStream_t stream);

/* Runs of equal neighbours in x[0..n) (NaN never equals NaN): uniq[r] the
 * value of run r, counts[r] its length (both sized n), inverse[perm[i]] (or
 * inverse[i] when perm is NULL) the run of element i, when inverse != NULL;
 * *num the number of runs (a device int64). counts may be NULL when inverse
 * is and n <= INT32_MAX (the values alone). Two-phase. */
int pcs_unique_runs(int dtype, const void *x, const int64_t *perm, int64_t n, void *uniq,
                    int64_t *counts, int64_t *inverse, int64_t *num, void *ws, size_t *ws_bytes,
                    cudaStream_t stream);

/* unique / unique_consecutive of the m rows of a contiguous [m, w] block
 * (the slices along dim): uniq [m, w] and counts [m] hold the first *num
 * (a device int64) rows, in lexicographic order for unique (consecutive 0),
 * inverse [m] the output row of each input row. Two-phase (select.cu). */
int pcs_unique_dim(int dtype, const void *x, int64_t m, int64_t w, int consecutive, void *uniq,
                   int64_t *counts, int64_t *inverse, int64_t *num, void *ws, size_t *ws_bytes,
                   cudaStream_t stream);

/* out[i] = torch's searchsorted of vals[i] in row (seq_rows == 1 ? 0 :
 * i / per_row) of seq ([seq_rows, len], sorter of the same shape or NULL);
 * int32 or int64 out. */
int pcs_launch_searchsorted(int dtype, const void *seq, const int64_t *sorter, int64_t seq_rows,
                            int64_t len, const void *vals, int64_t n, int64_t per_row, int right,
                            int out_int32, void *out, cudaStream_t stream);

/* bincount of non-negative int64 x[0..n) into `bins` bins. Unweighted: int64
 * out through cub::DeviceHistogram (two-phase). Weighted (weights of
 * wdtype float32 or float64): out of that dtype, zeroed by the caller,
 * accumulated with atomics (no workspace). */
int pcs_bincount(const int64_t *x, int64_t n, const void *weights, int wdtype, int64_t bins,
                 void *out, void *ws, size_t *ws_bytes, cudaStream_t stream);

/* histc with torch's CUDA bin rule (x == hi in the last bin, outside [lo,
 * hi] and NaN dropped); out of the input's (floating) dtype. Two-phase. */
int pcs_histc(int dtype, const void *x, int64_t n, int64_t bins, double lo, double hi, void *out,
              void *ws, size_t *ws_bytes, cudaStream_t stream);

/* cummax / cummin (values and int64 indices), logcumsumexp, cumsum and
 * cumprod (values; not bool) of each row. Two-phase. */
typedef enum {
    PCS_SCAN_CUMMAX = 0, PCS_SCAN_CUMMIN, PCS_SCAN_LOGCUMSUMEXP, PCS_SCAN_CUMSUM, PCS_SCAN_CUMPROD
} pcs_scan_op;
int pcs_scan_rows(int op, int dtype, const void *in, void *out, int64_t *indices, int64_t nseg,
                  int64_t seglen, void *ws, size_t *ws_bytes, cudaStream_t stream);

/* Test only (faults.cu): a kernel that writes to an illegal address. */
void pcs_launch_fault(cudaStream_t stream);

/* ---- factories whose values are a function of the index (ranges.cu) ---- */

typedef enum { PCS_RANGE_ARANGE = 0, PCS_RANGE_SPACED } pcs_range_kind;

/* ARANGE: is_int ? i0 + istep * i (int64) : d0 + dstep * i (double).
 * SPACED (linspace; logspace when is_log): from d0 to d1 in steps of
 * dstep, the first half counted up from d0 and the second down from d1 (both
 * ends exact), in float when in_float, then base ** value when is_log. */
typedef struct {
    int is_int, in_float, is_log;
    int64_t i0, istep;
    double d0, d1, dstep, base;
} pcs_range_params;

/* Fills out[0..n) of `dtype`; -1 for a complex dtype (nothing launched). */
int pcs_launch_range(int kind, void *out, int dtype, int64_t n, const pcs_range_params *p,
                     cudaStream_t stream);
/* An identity matrix rows x cols, contiguous, in one pass. */
int pcs_launch_eye(void *out, int dtype, int64_t rows, int64_t cols, cudaStream_t stream);
/* tril_indices / triu_indices: out is [2, pcs_tri_prefix(rows, ...)]
 * contiguous, of an integer dtype (-1 otherwise). */
int pcs_launch_tri_indices(void *out, int dtype, int64_t rows, int64_t cols, int64_t offset,
                           int upper, cudaStream_t stream);

/* ---- softmax, cat, triangles (softmax.cu, cat.cu, tri.cu) ------------------ */

/* softmax (log 0) or log_softmax (log 1) along K of a contiguous [A, K, B]
 * input into a contiguous out of the same shape and dtype (float16,
 * bfloat16, float32, float64; -1 for others, nothing launched). workspace:
 * pcs_softmax_workspace's bytes on the current device (a few long rows
 * split over several blocks each; 0 bytes: NULL), on the same stream. */
size_t pcs_softmax_workspace(int dtype, int64_t A, int64_t K, int64_t B);
int pcs_launch_softmax(int dtype, int log, void *out, const void *in, int64_t A, int64_t K,
                       int64_t B, void *workspace, cudaStream_t stream);

/* The gradient gx of softmax (log 0) or log_softmax (log 1) along K of
 * [A, K, B], from the incoming gradient g and the op's output y, all three
 * contiguous, of one floating dtype (-1 for others, nothing launched)
 * (softmax_bwd.cu). */
int pcs_launch_softmax_backward(int dtype, int log, void *gx, const void *g, const void *y,
                                int64_t A, int64_t K, int64_t B, cudaStream_t stream);

/* cat of up to PCS_CAT_BATCH contiguous inputs of one dtype into a
 * contiguous out seen as [outer, out_cols]: input i, [outer, cols[i]],
 * lands at column offset[i] of every row (cat.cu). -1 for an itemsize
 * other than 1, 2, 4, 8, 16 (nothing launched). */
#define PCS_CAT_BATCH 64
typedef struct {
    const void *src[PCS_CAT_BATCH];
    int64_t offset[PCS_CAT_BATCH];
    int64_t cols[PCS_CAT_BATCH];
    int n;
} pcs_cat_batch;
int pcs_launch_cat(void *out, int itemsize, int64_t outer, int64_t out_cols,
                   const pcs_cat_batch *batch, cudaStream_t stream);

/* tril (upper 0) / triu (upper 1) with diagonal k of a contiguous [batch,
 * rows, cols] block of `itemsize`-byte elements (1, 2, 4, 8 or 16; -1
 * otherwise). out may be in. */
int pcs_launch_tri(void *out, const void *in, int itemsize, int64_t batch, int64_t rows,
                   int64_t cols, int64_t k, int upper, cudaStream_t stream);

#ifdef __CUDACC__
#define PCS_HOST_DEVICE __host__ __device__
#else
#define PCS_HOST_DEVICE
#endif

/* Products and sums rounded one at a time on both sides: nvcc would fuse
 * a * b + c into one FMA (one rounding) where the host compiler does not,
 * and the ranges must give the same bits on the CPU and the GPU. */
#ifdef __CUDA_ARCH__
#define PCS_DMUL(a, b) __dmul_rn((a), (b))
#define PCS_DADD(a, b) __dadd_rn((a), (b))
#define PCS_FMUL(a, b) __fmul_rn((a), (b))
#define PCS_FADD(a, b) __fadd_rn((a), (b))
#else
#define PCS_DMUL(a, b) ((double)(a) * (double)(b))
#define PCS_DADD(a, b) ((double)(a) + (double)(b))
#define PCS_FMUL(a, b) ((float)(a) * (float)(b))
#define PCS_FADD(a, b) ((float)(a) + (float)(b))
#endif

/* Element i of n of a SPACED range; the host's CPU path and the kernel
 * evaluate this same function, so both devices give the same values. */
static inline PCS_HOST_DEVICE double pcs_spaced_value(const pcs_range_params *p, int64_t i,
                                                      int64_t n)
{
    double v;
    if (n == 1)
        v = p->d0;
    else if (p->in_float)
        v = i < n / 2 ? PCS_FADD((float)p->d0, PCS_FMUL((float)p->dstep, (float)i))
                      : PCS_FADD((float)p->d1, -PCS_FMUL((float)p->dstep, (float)(n - i - 1)));
    else
        v = i < n / 2 ? PCS_DADD(p->d0, PCS_DMUL(p->dstep, (double)i))
                      : PCS_DADD(p->d1, -PCS_DMUL(p->dstep, (double)(n - i - 1)));
    if (p->is_log)
        v = p->in_float ? (double)powf((float)p->base, (float)v) : pow(p->base, v);
    return v;
}

/* The number of entries of a lower (upper) triangle with `offset` in the
 * rows [0, r) of a rows x cols matrix, in closed form so each row finds its
 * place with no scan. Row i of the lower triangle holds clamp(i+offset+1,
 * 0, cols) entries; of the upper one, cols - clamp(i+offset, 0, cols). */
static inline PCS_HOST_DEVICE int64_t pcs_clamped_sum(int64_t r, int64_t s, int64_t cols)
{
    /* sum over i in [0, r) of clamp(i + s, 0, cols) */
    if (r <= 0 || cols <= 0)
        return 0;
    int64_t lo = 1 - s, hi = cols - s;
    lo = lo < 0 ? 0 : lo > r ? r : lo;
    hi = hi < lo ? lo : hi > r ? r : hi;
    return (hi - lo) * s + (lo + hi - 1) * (hi - lo) / 2 + (r - hi) * cols;
}

static inline PCS_HOST_DEVICE int64_t pcs_tri_prefix(int64_t r, int64_t cols, int64_t offset,
                                                     int upper)
{
    return upper ? r * (cols > 0 ? cols : 0) - pcs_clamped_sum(r, offset, cols)
                 : pcs_clamped_sum(r, offset + 1, cols);
}

/* ---- fused training layers (norm.cu, xent.cu, dropout.cu) ------------------- */

/* layer_norm (rms 0) or rms_norm (rms 1) of `rows` contiguous rows of N values:
 * y = (x - mean) * rstd * w + b with rstd = 1 / sqrt(var + eps), the biased
 * variance (rms: no mean is taken, rstd = 1 / sqrt(mean(x^2) + eps)). w and b
 * (dtype, N values) may be NULL; mean (NULL for rms) and rstd get one value a
 * row in the accumulation type: float, double for float64. One block a row,
 * the row read once (kept in registers or shared memory when it fits). */
int pcs_launch_norm_fwd(int dtype, int rms, void *y, void *mean, void *rstd, const void *x,
                        const void *w, const void *b, int64_t rows, int64_t N, double eps,
                        cudaStream_t stream);
/* Its backward. gx (may be NULL): one block a row,
 *   gx = rstd * (dxh - mean(dxh) - xh * mean(dxh * xh)), dxh = gy * w, xh = (x - mean) * rstd
 * (rms: without the mean(dxh) term). gw = sum_rows gy * xh and gb = sum_rows gy
 * (either may be NULL) without atomics: `parts` blocks of columns each sum a
 * fixed slice of the rows into work (accumulation type, 2 * parts * N values),
 * then a second kernel adds the parts in order, so the result is the same on
 * every run. */
int pcs_launch_norm_bwd(int dtype, int rms, void *gx, void *gw, void *gb, const void *gy,
                        const void *x, const void *mean, const void *rstd, const void *w,
                        int64_t rows, int64_t N, void *work, int parts, cudaStream_t stream);
/* The `parts` pcs_launch_norm_bwd wants (work holds 2 * parts * N values):
 * with_gx and rows of up to 4096 take the one-pass kernel, a part a block. */
int pcs_norm_bwd_parts(int64_t rows, int64_t N, int with_gx);

/* Cross entropy with class indices over `rows` contiguous rows of C logits x
 * (dtype) and int64 targets t, one block a row, the row read once:
 *   lse[r]  = log sum_c exp x[r, c]
 *   loss[r] = 0 where t[r] == ignore, else
 *             (1 - ls) w[t] (lse - x[t]) + ls / C * sum_c w[c] (lse - x[c])
 * w (accumulation type, C values) NULL means all ones; loss and lse are the
 * accumulation type (float, double for float64). A target outside [0, C)
 * gives a NaN loss. */
int pcs_launch_xent_fwd(int dtype, void *loss, void *lse, const void *x, const int64_t *t,
                        const void *w, int64_t rows, int64_t C, int64_t ignore, double ls,
                        cudaStream_t stream);
/* Its backward in one pass: with p = exp(x - lse) and W = sum_c w[c],
 *   gx[r, c] = 0 where t[r] == ignore, else
 *              g[r * gstride] ((1 - ls) w[t] (p_c - [c == t]) + ls / C (W p_c - w[c]))
 * g (accumulation type) has stride gstride (0: one value for every row). */
int pcs_launch_xent_bwd(int dtype, void *gx, const void *g, int64_t gstride, const void *x,
                        const int64_t *t, const void *w, const void *lse, int64_t rows, int64_t C,
                        int64_t ignore, double ls, cudaStream_t stream);

/* The reduction of pcs_launch_xent_fwd's row losses (dtype: their
 * accumulation type, float or double) in one block, in a fixed order:
 * out[1] = the denominator, the sum over rows with t[r] != ignore of w[t[r]]
 * (1 without w), out[0] = sum of loss, divided by out[1] when mean. Meant
 * for a few thousand rows: one block reads them all. */
int pcs_launch_xent_reduce(int dtype, void *out, const void *loss, const int64_t *t, const void *w,
                           int64_t rows, int64_t C, int64_t ignore, int mean, cudaStream_t stream);

/* Dropout over n contiguous elements: element i is kept when the uniform of
 * Philox word i % 4 of block offset + i / 4 under seed (philox.h's pcs_u01f,
 * the numbers bernoulli_ uses) is below keep; y = kept ? x * scale : 0. The
 * host computes the same function (ops/dropout.c), so one seed gives one mask
 * on the CPU and on the GPU. Backward is the same call on the gradient. */
int pcs_launch_dropout(int dtype, void *y, const void *x, int64_t n, uint64_t seed,
                       uint64_t offset, float keep, double scale, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* PCS_KERNELS_H */
