/* grad_mode.c: the thread-local autograd switches (see grad_mode.h) and
 * their Python entry points; the context managers and decorators that set
 * them (no_grad, enable_grad, set_grad_enabled, inference_mode) are thin
 * Python in pycuda_sem/autograd/grad_mode.py, as torch's are. */
#include "autograd/grad_mode.h"

/* C11 thread storage: one pair per OS thread, which is what a Python thread is. */
static _Thread_local bool grad_off;  /* zero-initialised: gradients on */
static _Thread_local bool inference; /* zero-initialised: inference mode off */

bool pcs_grad_enabled(void) { return !grad_off; }

void pcs_set_grad_enabled(bool on) { grad_off = !on; }

bool pcs_inference_mode(void) { return inference; }

void pcs_set_inference_mode(bool on) { inference = on; }

static PyObject *is_grad_enabled(PyObject *m, PyObject *noargs)
{
    PCS_UNUSED(m);
    PCS_UNUSED(noargs);
    return PyBool_FromLong(pcs_grad_enabled());
}

/* A bool argument as torch takes it: a bool (or 0/1 ints), not any truthy object. */
static int mode_arg(PyObject *arg, const char *fname, bool *out)
{
    if (!PyBool_Check(arg) && !PyLong_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'mode' must be bool, not %.100s", fname,
                     Py_TYPE(arg)->tp_name);
        return -1;
    }
    int v = PyObject_IsTrue(arg);
    if (v < 0)
        return -1;
    *out = v != 0;
    return 0;
}

static PyObject *set_grad_enabled(PyObject *m, PyObject *arg)
{
    PCS_UNUSED(m);
    bool on;
    if (mode_arg(arg, "_set_grad_enabled", &on) < 0)
        return NULL;
    pcs_set_grad_enabled(on);
    Py_RETURN_NONE;
}

static PyObject *is_inference_mode_enabled(PyObject *m, PyObject *noargs)
{
    PCS_UNUSED(m);
    PCS_UNUSED(noargs);
    return PyBool_FromLong(pcs_inference_mode());
}

static PyObject *set_inference_mode(PyObject *m, PyObject *arg)
{
    PCS_UNUSED(m);
    bool on;
    if (mode_arg(arg, "_set_inference_mode", &on) < 0)
        return NULL;
    pcs_set_inference_mode(on);
    Py_RETURN_NONE;
}

static PyMethodDef grad_mode_functions[] = {
    {"is_grad_enabled", is_grad_enabled, METH_NOARGS,
     "True when gradients are recorded in this thread (the default)."},
    {"_set_grad_enabled", set_grad_enabled, METH_O,
     "Turn gradient recording on or off for this thread."},
    {"is_inference_mode_enabled", is_inference_mode_enabled, METH_NOARGS,
     "True inside inference_mode() in this thread."},
    {"_set_inference_mode", set_inference_mode, METH_O,
     "Turn inference mode on or off for this thread."},
    {NULL, NULL, 0, NULL},
};

int pcs_grad_mode_init(PyObject *module) { return PyModule_AddFunctions(module, grad_mode_functions); }
