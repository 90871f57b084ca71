/* Test-only entry points: _C._fault() launches a kernel that faults on the
 * current stream (csrc/kernels/faults.cu). A device fault leaves the CUDA
 * context unusable for the rest of the process, as in PyTorch: call it only
 * in a subprocess (tests/test_faults.py). */
#include "common.h"
#include "kernels/kernels.h"
#include "stream.h"

static PyObject *py_fault(PyObject *m, PyObject *noargs)
{
    PCS_UNUSED(m);
    PCS_UNUSED(noargs);
    if (pcs_require_cuda() < 0)
        return NULL;
    int dev = pcs_current_device();
    if (pcs_cuda_set_device_raw(dev) < 0)
        return NULL;
    cudaStream_t st = pcs_current_stream(dev);
    pcs_launch_fault(st);
    if (PCS_CHECK_LAUNCH(st, "fault_kernel") < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef testing_methods[] = {
    {"_fault", py_fault, METH_NOARGS,
     "_fault()\n\nLaunch a kernel that writes to an illegal address (tests only: the CUDA "
     "context is unusable afterwards)."},
    {NULL, NULL, 0, NULL},
};

int pcs_testing_init(PyObject *m)
{
    return PyModule_AddFunctions(m, testing_methods);
}
