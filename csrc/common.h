/* common.h: what every host file of pycuda_sem._C shares.
 *
 * - the error convention: C functions return -1 or NULL with a Python
 *   exception set; every CUDA status goes through one macro family that names
 *   the failing call, its file and line;
 * - lazy CUDA initialisation: nothing touches the GPU at import; the first
 *   call that needs a GPU asks the runtime how many there are;
 * - the device guard, which switches the runtime's current device only when it
 *   has to (cudaSetDevice is not free and is per thread).
 */
#ifndef PCS_COMMON_H
#define PCS_COMMON_H

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>
#include <cuda_runtime.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PCS_MAX_DEVICES 64

#define PCS_UNUSED(x) ((void)(x))

/* ------------------------------------------------------------------------ */
/* Exceptions (created in module.c)                                          */

extern PyObject *pcs_OutOfMemoryError; /* subclass of RuntimeError */

/* Sets RuntimeError naming the CUDA call, its status and where it was made;
 * returns -1 so that callers can `return pcs_cuda_error(...)`. */
int pcs_cuda_error(cudaError_t err, const char *call, const char *file, int line);

#define PCS_CUDA_CHECK(call)                                                   \
    do {                                                                       \
        cudaError_t pcs_err_ = (call);                                         \
        if (pcs_err_ != cudaSuccess)                                           \
            return pcs_cuda_error(pcs_err_, #call, __FILE__, __LINE__);        \
    } while (0)

#define PCS_CUDA_CHECK_NULL(call)                                              \
    do {                                                                       \
        cudaError_t pcs_err_ = (call);                                         \
        if (pcs_err_ != cudaSuccess) {                                         \
            pcs_cuda_error(pcs_err_, #call, __FILE__, __LINE__);               \
            return NULL;                                                       \
        }                                                                      \
    } while (0)

#define PCS_CUDA_CHECK_GOTO(call, label)                                       \
    do {                                                                       \
        cudaError_t pcs_err_ = (call);                                         \
        if (pcs_err_ != cudaSuccess) {                                         \
            pcs_cuda_error(pcs_err_, #call, __FILE__, __LINE__);               \
            goto label;                                                        \
        }                                                                      \
    } while (0)

/* Checks the last launch. Under CUDA_LAUNCH_BLOCKING=1 it also waits for the
 * stream, so a fault is reported by the call that caused it. */
int pcs_check_launch(cudaStream_t stream, const char *what, const char *file, int line);
#define PCS_CHECK_LAUNCH(stream, what) pcs_check_launch((stream), (what), __FILE__, __LINE__)

extern bool pcs_launch_blocking; /* CUDA_LAUNCH_BLOCKING=1, read at import */

/* ------------------------------------------------------------------------ */
/* Lazy initialisation and the current device (device.c)                     */

/* Number of visible GPUs; 0 (and no exception) when there are none or no
 * driver. Never creates a context. */
int pcs_device_count(void);

/* 0 when at least one GPU exists, else -1 with RuntimeError ("no CUDA GPU is
 * available"). Call before anything that needs CUDA. */
int pcs_require_cuda(void);

/* Validates an ordinal against device_count (IndexError-like RuntimeError,
 * as torch's "invalid device ordinal"); -1 on error. */
int pcs_check_device(int index);

/* The calling thread's current device (0 until set). No exception. */
int pcs_current_device(void);

/* Makes `index` the thread's current device (validated, cudaSetDevice only if
 * the runtime's device differs). -1 with exception on error. */
int pcs_set_device(int index);

/* Makes `index` the runtime's device for the calling thread without changing
 * the user-visible current device: used around work on a given device. */
int pcs_cuda_set_device_raw(int index);

/* Scoped device switch: enter returns -1 on error; exit restores. */
typedef struct {
    int prev;
    int switched;
} PcsDeviceGuard;
int pcs_device_guard_enter(PcsDeviceGuard *g, int index);
void pcs_device_guard_exit(PcsDeviceGuard *g);

/* Sizes given by Python, checked: -1 with exception on negative / overflow. */
int pcs_mul_overflow_size(size_t a, size_t b, size_t *out);

#endif /* PCS_COMMON_H */
