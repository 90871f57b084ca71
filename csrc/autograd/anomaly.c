/* anomaly.c: anomaly detection (see anomaly.h). Off, it costs one flag test
 * a node; on, it trades speed for diagnosis as torch's does: a Python stack
 * capture per recorded op and a device-to-host check per gradient. */
#include "autograd/anomaly.h"

static bool enabled = false;
static bool check_nan = true;

bool pcs_anomaly_enabled(void) { return enabled; }

int pcs_anomaly_note_forward(PcsNode *n)
{
    static PyObject *format_stack = NULL;
    if (!format_stack) {
        PyObject *mod = PyImport_ImportModule("traceback");
        format_stack = mod ? PyObject_GetAttrString(mod, "format_stack") : NULL;
        Py_XDECREF(mod);
        if (!format_stack)
            return -1;
    }
    PyObject *stack = PyObject_CallNoArgs(format_stack);
    if (!stack)
        return -1;
    if (!n->metadata && !(n->metadata = PyDict_New())) {
        Py_DECREF(stack);
        return -1;
    }
    int rc = PyDict_SetItemString(n->metadata, "traceback_", stack);
    Py_DECREF(stack);
    return rc;
}

/* 1 if tensor g holds a nan, 0 if not, -1 with an exception. */
static int has_nan(PyObject *g)
{
    if (!PcsTensor_Check(g))
        return 0;
    int dt = ((PcsTensor *)g)->dtype;
    if (!pcs_is_float(dt) && !pcs_is_complex(dt))
        return 0;
    PyObject *mask = PyObject_CallMethod(g, "isnan", NULL);
    PyObject *any = mask ? PyObject_CallMethod(mask, "any", NULL) : NULL;
    Py_XDECREF(mask);
    if (!any)
        return -1;
    int r = PyObject_IsTrue(any); /* one host read of the flag */
    Py_DECREF(any);
    return r;
}

int pcs_anomaly_check_grads(PcsNode *n, PyObject *const *grads, int n_grads)
{
    if (!enabled || !check_nan)
        return 0;
    for (int i = 0; i < n_grads; i++) {
        if (!grads[i] || grads[i] == Py_None)
            continue;
        int r = has_nan(grads[i]);
        if (r < 0)
            return -1;
        if (r) {
            PyErr_Format(PyExc_RuntimeError, "Function '%U' returned nan values in its %dth output.", n->name, i);
            return -1;
        }
    }
    return 0;
}

void pcs_anomaly_report(PcsNode *n)
{
    if (!enabled || !n->metadata)
        return;
    PyObject *stack = PyDict_GetItemString(n->metadata, "traceback_"); /* borrowed */
    if (!stack || !PyList_Check(stack))
        return;
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    PyObject *empty = PyUnicode_FromString("");
    PyObject *text = empty ? PyUnicode_Join(empty, stack) : NULL;
    Py_XDECREF(empty);
    if (text) {
        PyObject *msg = PyUnicode_FromFormat("Error detected in %U. Traceback of forward call that "
                                             "caused the error:\n%U", n->name, text);
        if (msg) {
            const char *s = PyUnicode_AsUTF8(msg);
            if (!s || PyErr_WarnEx(PyExc_UserWarning, s, 1) < 0)
                PyErr_Clear(); /* the backward's own error is the one to raise */
            Py_DECREF(msg);
        }
        Py_DECREF(text);
    }
    PyErr_Clear();
    PyErr_Restore(et, ev, tb);
}

/* _set_anomaly_enabled(enabled, check_nan=True) */
static PyObject *set_anomaly(PyObject *m, PyObject *const *a, Py_ssize_t nargs)
{
    PCS_UNUSED(m);
    if (nargs < 1 || nargs > 2) {
        PyErr_SetString(PyExc_TypeError, "_set_anomaly_enabled(enabled, check_nan=True)");
        return NULL;
    }
    int on = PyObject_IsTrue(a[0]);
    if (on < 0)
        return NULL;
    int nan = nargs == 2 ? PyObject_IsTrue(a[1]) : 1;
    if (nan < 0)
        return NULL;
    enabled = on;
    check_nan = nan;
    Py_RETURN_NONE;
}

static PyObject *is_anomaly_enabled(PyObject *m, PyObject *noargs)
{
    PCS_UNUSED(m);
    PCS_UNUSED(noargs);
    return PyBool_FromLong(enabled);
}

static PyObject *is_anomaly_check_nan_enabled(PyObject *m, PyObject *noargs)
{
    PCS_UNUSED(m);
    PCS_UNUSED(noargs);
    return PyBool_FromLong(check_nan);
}

static PyMethodDef anomaly_functions[] = {
    {"_set_anomaly_enabled", (PyCFunction)(void (*)(void))set_anomaly, METH_FASTCALL,
     "_set_anomaly_enabled(enabled, check_nan=True): switch anomaly detection (process-wide)."},
    {"is_anomaly_enabled", is_anomaly_enabled, METH_NOARGS, "Whether anomaly detection is on."},
    {"is_anomaly_check_nan_enabled", is_anomaly_check_nan_enabled, METH_NOARGS,
     "Whether anomaly detection checks gradients for nan."},
    {NULL, NULL, 0, NULL},
};

int pcs_anomaly_init(PyObject *module)
{
    return PyModule_AddFunctions(module, anomaly_functions);
}
