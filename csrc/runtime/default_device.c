/* default_device.c: the device factories use when they are given none
 * (torch.set_default_device, and a torch.device used as a context manager:
 * `with torch.device("cuda"): model = Net()`).
 *
 * The setting is one code: -1 the CPU (the start), -3 CUDA with no index
 * (the current device at each factory call, as torch resolves it), k >= 0
 * cuda:k. Factories read it through pcs_default_device() where device= is
 * absent; the *_like factories keep their input's device, as torch's. A
 * `with` block saves the code it replaces on a stack and puts it back on
 * exit, so blocks nest. The setting is process-wide (the GIL orders it);
 * torch keeps it per thread. */
#include "runtime/device.h"

static int g_default = -1;
#define STACK_MAX 64
static int g_stack[STACK_MAX];
static int g_depth;

static int code_of(PcsDevice *d)
{
    return d->type == PCS_CPU ? -1 : (d->index < 0 ? -3 : d->index);
}

bool pcs_default_device_is_set(void)
{
    return g_default != -1;
}

int pcs_default_device(void)
{
    if (g_default == -1)
        return -1;
    if (pcs_require_cuda() < 0)
        return -2;
    int index = g_default == -3 ? pcs_current_device() : g_default;
    return pcs_check_device(index) < 0 ? -2 : index;
}

PyObject *pcs_device_enter(PyObject *self, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    if (g_depth >= STACK_MAX) {
        PyErr_SetString(PyExc_RuntimeError, "torch.device context managers nested too deeply");
        return NULL;
    }
    g_stack[g_depth++] = g_default;
    g_default = code_of((PcsDevice *)self);
    return Py_NewRef(self);
}

PyObject *pcs_device_exit(PyObject *self, PyObject *args)
{
    PCS_UNUSED(self);
    PCS_UNUSED(args);
    if (g_depth > 0)
        g_default = g_stack[--g_depth];
    Py_RETURN_FALSE;
}

/* _set_default_device(device or None) */
static PyObject *py_set_default_device(PyObject *m, PyObject *arg)
{
    PCS_UNUSED(m);
    if (arg == Py_None) {
        g_default = -1;
        Py_RETURN_NONE;
    }
    int type, index;
    if (pcs_device_parse(arg, &type, &index) < 0)
        return NULL;
    g_default = type == PCS_CPU ? -1 : (index < 0 ? -3 : index);
    Py_RETURN_NONE;
}

/* _get_default_device(): the device factories use now */
static PyObject *py_get_default_device(PyObject *m, PyObject *noargs)
{
    PCS_UNUSED(m);
    PCS_UNUSED(noargs);
    if (g_default == -1)
        return pcs_device_new(PCS_CPU, -1);
    int index = pcs_default_device();
    return index < 0 ? NULL : pcs_device_new(PCS_CUDA, index);
}

static PyMethodDef default_device_functions[] = {
    {"_set_default_device", py_set_default_device, METH_O,
     "_set_default_device(device)\n\nThe device factories use without device= (None: the CPU)."},
    {"_get_default_device", py_get_default_device, METH_NOARGS,
     "_get_default_device()\n\nThe device factories use without device=, resolved."},
    {NULL, NULL, 0, NULL},
};

int pcs_default_device_init(PyObject *module)
{
    return PyModule_AddFunctions(module, default_device_functions);
}
