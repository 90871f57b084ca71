/* module.c: pycuda_sem._C, the module object.
 *
 * Creates the exception types, reads the environment switches that are fixed
 * for the life of the process, and asks each concept file to register its
 * types and functions (pcs_<concept>_init). Nothing here touches the GPU:
 * CUDA is initialised lazily by the first call that needs it. */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "event.h"
#include "storage.h"
#include "stream.h"
#include "random.h"
#include "blas.h"
#include "fft.h"
#include "ops.h"

int pcs_memory_init(PyObject *module); /* memory.c */
int pcs_dtype_init(PyObject *module);  /* dtype.c */
int pcs_tensor_init(PyObject *module); /* tensor.c */

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
    return 0;
}

int pcs_mul_overflow_size(size_t a, size_t b, size_t *out)
{
    if (__builtin_mul_overflow(a, b, out)) {
        PyErr_SetString(PyExc_RuntimeError, "size overflows the address space");
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Module                                                                    */

static PyObject *cuda_version(PyObject *self, PyObject *noargs)
{
    PCS_UNUSED(self);
    PCS_UNUSED(noargs);
    /* CUDART_VERSION is major*1000 + minor*10, e.g. 13000 -> "13.0" */
    return PyUnicode_FromFormat("%d.%d", CUDART_VERSION / 1000, (CUDART_VERSION % 1000) / 10);
}

static PyMethodDef module_methods[] = {
    {"_cuda_version", cuda_version, METH_NOARGS,
     "The CUDA runtime version pycuda_sem was built against, as 'major.minor'."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "pycuda_sem._C",
    .m_doc = "The C core of pycuda_sem: devices, streams, events, the caching "
             "allocator, storages and tensors.",
    .m_size = -1,
    .m_methods = module_methods,
};

static bool env_flag(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

PyMODINIT_FUNC PyInit__C(void)
{
    PyObject *m = PyModule_Create(&module_def);
    if (!m)
        return NULL;
    pcs_launch_blocking = env_flag("CUDA_LAUNCH_BLOCKING");

    pcs_OutOfMemoryError = PyErr_NewExceptionWithDoc(
        "pycuda_sem.cuda.OutOfMemoryError",
        "Raised when the caching allocator cannot get device memory, even after "
        "releasing its cache and retrying.",
        PyExc_RuntimeError, NULL);
    if (!pcs_OutOfMemoryError || PyModule_AddObjectRef(m, "OutOfMemoryError", pcs_OutOfMemoryError) < 0)
        goto fail;

    if (pcs_device_init(m) < 0 || pcs_stream_init(m) < 0 || pcs_event_init(m) < 0 ||
        pcs_storage_init(m) < 0 || pcs_memory_init(m) < 0)
        goto fail;
    /* concept files added later register here, in dependency order */
    { extern int pcs_testing_init(PyObject *); if (pcs_testing_init(m) < 0) goto fail; } /* testing.c */
    if (pcs_dtype_init(m) < 0 || pcs_tensor_init(m) < 0) /* tensors (issue 3) */
        goto fail;
    if (pcs_random_init(m) < 0 || pcs_blas_init(m) < 0 || pcs_fft_init(m) < 0) /* random, matmul, fft */
        goto fail;
    if (pcs_ops_init(m) < 0) /* elementwise ops and reductions (ops.c) */
        goto fail;
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
