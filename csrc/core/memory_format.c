/* memory_format.c: the memory format objects and the strides they name
 * (memory_format.h). Four singletons of one small type, compared by
 * identity, as torch's; they pickle as their module attribute. */
#include "core/memory_format.h"

#include <string.h>

typedef struct {
    PyObject_HEAD
    int id;
} PcsMemoryFormat;

static const char *const format_names[PCS_NUM_FORMATS] = {
    "contiguous_format", "channels_last", "channels_last_3d", "preserve_format"};

static PcsMemoryFormat format_objects[PCS_NUM_FORMATS];

static PyObject *format_repr(PyObject *self)
{
    return PyUnicode_FromFormat("pycuda_sem.%s", format_names[((PcsMemoryFormat *)self)->id]);
}

static PyObject *format_reduce(PyObject *self, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    return PyUnicode_FromString(format_names[((PcsMemoryFormat *)self)->id]);
}

static PyMethodDef format_methods[] = {
    {"__reduce__", format_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject PcsMemoryFormat_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pycuda_sem.memory_format",
    .tp_basicsize = sizeof(PcsMemoryFormat),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An order of a tensor's dims in memory, e.g. pycuda_sem.channels_last.",
    .tp_repr = format_repr,
    .tp_methods = format_methods,
};

int pcs_memory_format_arg(PyObject *obj, int dflt, const char *fname)
{
    if (!obj || obj == Py_None)
        return dflt;
    if (!PyObject_TypeCheck(obj, &PcsMemoryFormat_Type)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'memory_format' must be a memory_format, not %s",
                     fname, Py_TYPE(obj)->tp_name);
        return -1;
    }
    return ((PcsMemoryFormat *)obj)->id;
}

/* The dims from the fastest to the slowest in memory for a format, or
 * NULL for row-major. */
static const int *channels_order(int fmt, int ndim)
{
    static const int cl2d[4] = {1, 3, 2, 0};    /* C fastest, then W, H, N */
    static const int cl3d[5] = {1, 4, 3, 2, 0}; /* C, W, H, D, N */
    if (fmt == PCS_FORMAT_CHANNELS_LAST && ndim == 4)
        return cl2d;
    if (fmt == PCS_FORMAT_CHANNELS_LAST_3D && ndim == 5)
        return cl3d;
    return NULL;
}

int pcs_format_strides(int fmt, int ndim, const int64_t *sizes, int64_t *strides)
{
    if (fmt == PCS_FORMAT_PRESERVE) {
        PyErr_SetString(PyExc_RuntimeError, "preserve memory format is unsupported here");
        return -1;
    }
    const int *order = channels_order(fmt, ndim);
    if (fmt != PCS_FORMAT_CONTIGUOUS && !order) {
        PyErr_Format(PyExc_RuntimeError, "required rank %d tensor to use %s format",
                     fmt == PCS_FORMAT_CHANNELS_LAST ? 4 : 5, format_names[fmt]);
        return -1;
    }
    int64_t next = 1;
    for (int i = 0; i < ndim; i++) {
        int d = order ? order[i] : ndim - 1 - i;
        strides[d] = next;
        next *= sizes[d] > 1 ? sizes[d] : 1;
    }
    return 0;
}

bool pcs_format_matches(int fmt, int ndim, const int64_t *sizes, const int64_t *strides)
{
    const int *order = channels_order(fmt, ndim);
    if (fmt != PCS_FORMAT_CONTIGUOUS && !order)
        return false;
    int64_t expect = 1;
    for (int i = 0; i < ndim; i++) {
        int d = order ? order[i] : ndim - 1 - i;
        if (sizes[d] == 0)
            return true;
        if (sizes[d] == 1)
            continue;
        if (strides[d] != expect)
            return false;
        expect *= sizes[d];
    }
    return true;
}

int pcs_suggest_format(int ndim, const int64_t *sizes, const int64_t *strides)
{
    if (pcs_format_matches(PCS_FORMAT_CONTIGUOUS, ndim, sizes, strides))
        return PCS_FORMAT_CONTIGUOUS;
    if (pcs_format_matches(PCS_FORMAT_CHANNELS_LAST, ndim, sizes, strides))
        return PCS_FORMAT_CHANNELS_LAST;
    if (pcs_format_matches(PCS_FORMAT_CHANNELS_LAST_3D, ndim, sizes, strides))
        return PCS_FORMAT_CHANNELS_LAST_3D;
    return PCS_FORMAT_CONTIGUOUS;
}

int pcs_memory_format_init(PyObject *m)
{
    if (PyType_Ready(&PcsMemoryFormat_Type) < 0)
        return -1;
    for (int i = 0; i < PCS_NUM_FORMATS; i++) {
        /* Statically allocated singletons, as the dtypes. */
        PyObject_Init((PyObject *)&format_objects[i], &PcsMemoryFormat_Type);
        format_objects[i].id = i;
        if (PyModule_AddObjectRef(m, format_names[i], (PyObject *)&format_objects[i]) < 0)
            return -1;
    }
    return PyModule_AddObjectRef(m, "memory_format", (PyObject *)&PcsMemoryFormat_Type);
}
