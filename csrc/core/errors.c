/* errors.c: the error convention's helpers (declared in common.h): CUDA
 * statuses turned into Python exceptions that name the failing call, the
 * launch check (synchronous under CUDA_LAUNCH_BLOCKING=1), the hook for
 * errors reported after a wait, checked size products. The exception
 * objects are created by the module at import. */
#include "core/common.h"

PyObject *pcs_OutOfMemoryError = NULL;
bool pcs_launch_blocking = false;

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */

int pcs_cuda_error(cudaError_t err, const char *call, const char *file, int line)
{
    /* CUDA's own names ("cudaErrorNoDevice") are what users search for. */
    if (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver) {
        PyErr_Format(PyExc_RuntimeError,
                     "no CUDA GPU is available (%s: %s)", cudaGetErrorName(err),
                     cudaGetErrorString(err));
    } else if (err == cudaErrorMemoryAllocation) {
        PyErr_Format(pcs_OutOfMemoryError, "CUDA out of memory in %s (%s:%d)", call,
                     file, line);
    } else {
        PyErr_Format(PyExc_RuntimeError, "CUDA error: %s (%s) in %s at %s:%d%s",
                     cudaGetErrorString(err), cudaGetErrorName(err), call, file, line,
                     pcs_launch_blocking
                         ? ""
                         : "\nCUDA kernel errors might be asynchronously reported at "
                           "some other API call; set CUDA_LAUNCH_BLOCKING=1 to report "
                           "them where they happen.");
    }
    /* Sticky errors stay; clear the non-sticky last error so the next call
     * does not report this one again. */
    (void)cudaGetLastError();
    return -1;
}

int pcs_check_launch(cudaStream_t stream, const char *what, const char *file, int line)
{
    cudaError_t err = cudaGetLastError();
    if (err == cudaSuccess && pcs_launch_blocking) {
        Py_BEGIN_ALLOW_THREADS
        err = cudaStreamSynchronize(stream);
        Py_END_ALLOW_THREADS
    }
    if (err != cudaSuccess)
        return pcs_cuda_error(err, what, file, line);
    return pcs_launch_blocking ? pcs_deferred_check() : 0;
}

/* ------------------------------------------------------------------------ */
/* Deferred errors                                                           */

static pcs_deferred_check_fn deferred_check;

void pcs_set_deferred_check(pcs_deferred_check_fn fn) { deferred_check = fn; }

int pcs_deferred_check(void) { return deferred_check ? deferred_check() : 0; }

int pcs_mul_overflow_size(size_t a, size_t b, size_t *out)
{
    if (__builtin_mul_overflow(a, b, out)) {
        PyErr_SetString(PyExc_RuntimeError, "size overflows the address space");
        return -1;
    }
    return 0;
}

