/* Test-only entry points.
 *
 * _C._fault() launches a kernel that faults on the current stream
 * (csrc/kernels/faults.cu). A device fault leaves the CUDA context unusable
 * for the rest of the process, as in PyTorch: call it only in a subprocess
 * (tests/test_faults.py).
 *
 * _C._launch_loop(n) launches the empty sleep kernel n times from a C loop,
 * with no Python between the launches. The benchmark times it to show the
 * driver's own cost per launch in the same run as `a + b`: no runtime can
 * launch a kernel from Python for less. */
#include "core/common.h"
#include "kernels/kernels.h"
#include "runtime/stream.h"

static PyObject *py_fault(PyObject *m, PyObject *noargs)
{
    PCS_UNUSED(m);
    PCS_UNUSED(noargs);
    cudaStream_t st;
    if (pcs_enter_current_stream(&st) < 0)
        return NULL;
    pcs_launch_fault(st);
    if (PCS_CHECK_LAUNCH(st, "fault_kernel") < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_launch_loop(PyObject *m, PyObject *arg)
{
    PCS_UNUSED(m);
    long long n = PyLong_AsLongLong(arg);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    if (n < 0)
        return PyErr_Format(PyExc_ValueError, "_launch_loop: n must be >= 0, got %lld", n);
    cudaStream_t st;
    if (pcs_enter_current_stream(&st) < 0)
        return NULL;
    for (long long i = 0; i < n; i++)
        pcs_launch_sleep(0, st);
    if (PCS_CHECK_LAUNCH(st, "sleep_kernel") < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef testing_methods[] = {
    {"_fault", py_fault, METH_NOARGS,
     "_fault()\n\nLaunch a kernel that writes to an illegal address (tests only: the CUDA "
     "context is unusable afterwards)."},
    {"_launch_loop", py_launch_loop, METH_O,
     "_launch_loop(n)\n\nLaunch an empty kernel n times on the current stream from a C loop "
     "(benchmarks: the driver's cost per launch, with no Python in between)."},
    {NULL, NULL, 0, NULL},
};

int pcs_testing_init(PyObject *m)
{
    return PyModule_AddFunctions(m, testing_methods);
}
