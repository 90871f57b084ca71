/* module.c: pycuda_sem._C, the module object.
 *
 * Creates the exception types, reads the environment switches that are fixed
 * for the life of the process, and asks each concept file to register its
 * types and functions (pcs_<concept>_init). Nothing here touches the GPU:
 * CUDA is initialised lazily by the first call that needs it. */
#include "core/common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/device.h"
#include "runtime/event.h"
#include "runtime/nvtx.h"
#include "tensor/storage.h"
#include "runtime/stream.h"
#include "ops/random.h"
#include "ops/blas.h"
#include "ops/fft.h"
#include "ops/ops.h"
#include "autograd/autograd.h"
#include "autograd/anomaly.h"
#include "autograd/grad_mode.h"
#include "distributed/nccl.h"
#include "runtime/nccl_lib.h"

#include "runtime/memory.h"
int pcs_dtype_init(PyObject *module);  /* dtype.c */
int pcs_memory_format_init(PyObject *module); /* memory_format.c */
int pcs_tensor_type_init(PyObject *module); /* tensor_type.c */

/* ------------------------------------------------------------------------ */
/* Module                                                                    */

static PyObject *cuda_version(PyObject *self, PyObject *noargs)
{
    PCS_UNUSED(self);
    PCS_UNUSED(noargs);
    /* CUDART_VERSION is major*1000 + minor*10, e.g. 13000 -> "13.0" */
    return PyUnicode_FromFormat("%d.%d", CUDART_VERSION / 1000, (CUDART_VERSION % 1000) / 10);
}

/* The GPU architectures the build compiled its kernels for, as nvcc's
 * gencode targets ("sm_80 sm_90 compute_90"): setup.py passes them in, since
 * only the build knows them (a device reports its own capability, not the
 * binary's). torch.cuda.get_arch_list() splits the string. */
#ifndef PCS_ARCH_LIST
#define PCS_ARCH_LIST ""
#endif

static PyObject *cuda_arch_flags(PyObject *self, PyObject *noargs)
{
    PCS_UNUSED(self);
    PCS_UNUSED(noargs);
    return PyUnicode_FromString(PCS_ARCH_LIST);
}

static PyMethodDef module_methods[] = {
    {"_cuda_version", cuda_version, METH_NOARGS,
     "The CUDA runtime version pycuda_sem was built against, as 'major.minor'."},
    {"_cuda_arch_flags", cuda_arch_flags, METH_NOARGS,
     "The architectures the kernels were compiled for (cuda.get_arch_list)."},
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
        pcs_storage_init(m) < 0 || pcs_cuda_ipc_init(m) < 0 ||
        pcs_storage_share_init(m) < 0 || pcs_memory_init(m) < 0 || pcs_nvtx_init(m) < 0)
        goto fail;
    /* concept files added later register here, in dependency order */
    { extern int pcs_testing_init(PyObject *); if (pcs_testing_init(m) < 0) goto fail; } /* testing.c */
    if (pcs_dtype_init(m) < 0 || pcs_memory_format_init(m) < 0 || pcs_tensor_type_init(m) < 0) /* tensors */
        goto fail;
    if (pcs_random_init(m) < 0 || pcs_blas_init(m) < 0 || pcs_fft_init(m) < 0) /* random, matmul, fft */
        goto fail;
    if (pcs_ops_init(m) < 0) /* elementwise ops and reductions (ops.c) */
        goto fail;
    if (pcs_grad_mode_init(m) < 0 || pcs_anomaly_init(m) < 0) /* autograd's switches */
        goto fail;
    /* autograd: the graph, the engine, and last the wrapping of every op
     * registered above so that calls on tensors that require grad record */
    if (pcs_meta_init() < 0 || pcs_node_init(m) < 0 || pcs_function_init(m) < 0 ||
        pcs_record_init(m) < 0 || pcs_engine_init(m) < 0 || pcs_ag_wrap_module(m) < 0)
        goto fail;
    /* NCCL (loaded at first use) and its communicators, after the autograd
     * wrapping: collectives are not differentiable ops */
    if (pcs_nccl_lib_init(m) < 0 || pcs_nccl_init(m) < 0)
        goto fail;
    /* DLPack exchange and the in-place geometry primitives: not ops either */
    if (pcs_dlpack_init(m) < 0 || pcs_tensor_set_init(m) < 0)
        goto fail;
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
