/* nvtx.c: NVTX annotations (torch.cuda.nvtx) through NVTX v3, which is
 * header-only: each call goes to the tool a profiler injects (Nsight
 * Systems), or to a no-op when none is attached, where push and pop return
 * -2 as torch's do. The strings are copied by NVTX before the call returns. */
#include "runtime/nvtx.h"

#include <nvtx3/nvToolsExt.h>

static const char *message(PyObject *o, const char *fname)
{
    if (!PyUnicode_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'msg' must be str, not %.100s", fname, Py_TYPE(o)->tp_name);
        return NULL;
    }
    return PyUnicode_AsUTF8(o);
}

static PyObject *range_push(PyObject *m, PyObject *msg)
{
    PCS_UNUSED(m);
    const char *s = message(msg, "range_push");
    return s ? PyLong_FromLong(nvtxRangePushA(s)) : NULL;
}

static PyObject *range_pop(PyObject *m, PyObject *noargs)
{
    PCS_UNUSED(m);
    PCS_UNUSED(noargs);
    return PyLong_FromLong(nvtxRangePop());
}

static PyObject *range_start(PyObject *m, PyObject *msg)
{
    PCS_UNUSED(m);
    const char *s = message(msg, "range_start");
    return s ? PyLong_FromUnsignedLongLong((unsigned long long)nvtxRangeStartA(s)) : NULL;
}

static PyObject *range_end(PyObject *m, PyObject *id)
{
    PCS_UNUSED(m);
    unsigned long long v = PyLong_AsUnsignedLongLong(id);
    if (v == (unsigned long long)-1 && PyErr_Occurred())
        return NULL;
    nvtxRangeEnd((nvtxRangeId_t)v);
    Py_RETURN_NONE;
}

static PyObject *mark(PyObject *m, PyObject *msg)
{
    PCS_UNUSED(m);
    const char *s = message(msg, "mark");
    if (!s)
        return NULL;
    nvtxMarkA(s);
    Py_RETURN_NONE;
}

static PyMethodDef nvtx_functions[] = {
    {"_nvtx_range_push", range_push, METH_O, "_nvtx_range_push(msg) -> depth (-2 without a profiler)."},
    {"_nvtx_range_pop", range_pop, METH_NOARGS, "_nvtx_range_pop() -> depth (-2 without a profiler)."},
    {"_nvtx_range_start", range_start, METH_O, "_nvtx_range_start(msg) -> range id."},
    {"_nvtx_range_end", range_end, METH_O, "_nvtx_range_end(range_id)."},
    {"_nvtx_mark", mark, METH_O, "_nvtx_mark(msg): an instantaneous event."},
    {NULL, NULL, 0, NULL},
};

int pcs_nvtx_init(PyObject *module)
{
    return PyModule_AddFunctions(module, nvtx_functions);
}
