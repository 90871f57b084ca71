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
 * launch a kernel from Python for less.
 *
 * _C._launch_bad_config() makes a launch the device refuses (too many
 * threads a block): the error must come back as a RuntimeError through the
 * same check as every op's, and the context stays usable (it is not a
 * fault).
 *
 * _C._iter_plan(t0, t1, ...) returns the iteration core's plan for the
 * tensors (t0 the output): (sizes, [strides of each], index32, contiguous),
 * so the CPU suite can check the layout logic the kernels rely on. */
#include "core/common.h"
#include "core/iter.h"
#include "kernels/kernels.h"
#include "runtime/stream.h"

/* One test launch on the current stream, checked as an op's launch is. */
static PyObject *launch_checked(void (*launch)(cudaStream_t), const char *what)
{
    cudaStream_t st;
    if (pcs_enter_current_stream(&st) < 0)
        return NULL;
    launch(st);
    if (PCS_CHECK_LAUNCH(st, what) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_fault(PyObject *m, PyObject *noargs)
{
    PCS_UNUSED(m);
    PCS_UNUSED(noargs);
    return launch_checked(pcs_launch_fault, "fault_kernel");
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

static PyObject *py_launch_bad_config(PyObject *m, PyObject *noargs)
{
    PCS_UNUSED(m);
    PCS_UNUSED(noargs);
    return launch_checked(pcs_launch_bad_config, "sleep_kernel");
}

#include "tensor/tensor.h"

static PyObject *py_iter_plan(PyObject *m, PyObject *args)
{
    PCS_UNUSED(m);
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    if (n < 1 || n > PCS_EW_OPERANDS)
        return PyErr_Format(PyExc_ValueError, "_iter_plan: 1 to %d tensors", PCS_EW_OPERANDS);
    pcs_iter_operand io[PCS_EW_OPERANDS];
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PyTuple_GET_ITEM(args, i);
        if (!PcsTensor_Check(o))
            return PyErr_Format(PyExc_TypeError, "_iter_plan: tensors only");
        PcsTensor *t = (PcsTensor *)o;
        io[i] = (pcs_iter_operand){pcs_tensor_data(t), t->ndim, t->sizes, t->strides,
                                   pcs_itemsize(t->dtype)};
    }
    PcsTensor *out = (PcsTensor *)PyTuple_GET_ITEM(args, 0);
    pcs_iter_plan p;
    pcs_iter_build(&p, out->ndim, out->sizes, (int)n, io);
    PyObject *sizes = PyList_New(p.geom.ndim), *strides = PyList_New(n);
    for (int d = 0; sizes && d < p.geom.ndim; d++)
        PyList_SET_ITEM(sizes, d, PyLong_FromLongLong(p.geom.sizes[d]));
    for (Py_ssize_t k = 0; strides && k < n; k++) {
        PyObject *l = PyList_New(p.geom.ndim);
        for (int d = 0; l && d < p.geom.ndim; d++)
            PyList_SET_ITEM(l, d, PyLong_FromLongLong(p.geom.strides[k][d]));
        PyList_SET_ITEM(strides, k, l);
    }
    return Py_BuildValue("(NNOO)", sizes, strides, p.geom.index32 ? Py_True : Py_False,
                         p.contiguous ? Py_True : Py_False);
}

static PyMethodDef testing_methods[] = {
    {"_iter_plan", py_iter_plan, METH_VARARGS,
     "_iter_plan(out, *inputs)\n\nThe iteration core's plan: (sizes, strides of each operand, "
     "index32, contiguous). Tests only."},
    {"_fault", py_fault, METH_NOARGS,
     "_fault()\n\nLaunch a kernel that writes to an illegal address (tests only: the CUDA "
     "context is unusable afterwards)."},
    {"_launch_bad_config", py_launch_bad_config, METH_NOARGS,
     "_launch_bad_config()\n\nA kernel launch with 4096 threads a block, which the device refuses "
     "(tests: the error is raised and the context stays usable)."},
    {"_launch_loop", py_launch_loop, METH_O,
     "_launch_loop(n)\n\nLaunch an empty kernel n times on the current stream from a C loop "
     "(benchmarks: the driver's cost per launch, with no Python in between)."},
    {NULL, NULL, 0, NULL},
};

int pcs_testing_init(PyObject *m)
{
    return PyModule_AddFunctions(m, testing_methods);
}
