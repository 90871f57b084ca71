/* common.h: what every host file of pycuda_sem._C shares, the bottom of the
 * host layers (core/errors.c defines it).
 *
 * The error convention: C functions return -1 or NULL with a Python exception
 * set; every CUDA status goes through one macro family that names the
 * failing call, its file and line. Devices (lazy initialisation, the current
 * device, the device guard) are the runtime's: runtime/device.h. */
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
/* Exceptions (created by the module, python/module.c)                     */

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

/* Errors found on the device and reported later (an out-of-range CUDA index:
 * ops/index_check.c). The layer that records them registers one check; every
 * call that waits for the device (synchronize, Stream/Event.synchronize, a
 * copy or read to the host, a query that answers "done") runs it after the
 * wait: 0, or -1 with the recorded error raised. The check only reads host
 * memory and queries events: it never waits itself. */
typedef int (*pcs_deferred_check_fn)(void);
void pcs_set_deferred_check(pcs_deferred_check_fn fn);
int pcs_deferred_check(void);

/* Sizes given by Python, checked: -1 with exception on negative / overflow. */
int pcs_mul_overflow_size(size_t a, size_t b, size_t *out);

#endif /* PCS_COMMON_H */
