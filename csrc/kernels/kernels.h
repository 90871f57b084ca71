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

/* The geometry of an elementwise copy: a shared shape and each side's
 * strides, in elements. Host code coalesces dimensions before launching so
 * kernels usually see one or two. */
typedef struct {
    int ndim;
    int64_t sizes[PCS_MAX_DIMS];
    int64_t dst_strides[PCS_MAX_DIMS];
    int64_t src_strides[PCS_MAX_DIMS];
} pcs_copy_geom;

/* dst[i] = (dst_dtype) src[i] for n elements. geom NULL means both sides are
 * contiguous (the vectorized fast path). Returns 0, or -1 for a dtype the
 * launcher does not know (nothing is launched then). */
int pcs_launch_copy(void *dst, int dst_dtype, const void *src, int src_dtype, int64_t n,
                    const pcs_copy_geom *geom, cudaStream_t stream);

/* Writes the `itemsize`-byte pattern `value` (1, 2, 4, 8 or 16 bytes) into n
 * elements of dst; geom (only dst_strides used) NULL means contiguous. */
int pcs_launch_fill(void *dst, int itemsize, const void *value, int64_t n,
                    const pcs_copy_geom *geom, cudaStream_t stream);

/* ---- testing (testing.cu) ----------------------------------------------- */

/* Keeps the GPU busy on `stream` for about `cycles` clock cycles, as
 * torch.cuda._sleep does: tests and benchmarks use it to hold a stream while
 * they check ordering, concurrency and timing. */
void pcs_launch_sleep(int64_t cycles, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* PCS_KERNELS_H */
