/* tensor_args.c: helpers every tensor file shares: pycuda_sem.Size (the
 * tuple that sizes come back as), geometry facts (numel, contiguity, default
 * strides, dim wrapping) and argument parsing (sizes as varargs or a
 * sequence, device arguments, positional-or-keyword lookup). */
#include "tensor/copy.h"
#include "tensor/tensor.h"

#include <string.h>

#include "runtime/device.h"
#include "core/memory_format.h"

/* ------------------------------------------------------------------------ */
/* pycuda_sem.Size: a tuple that prints like torch.Size                      */

static PyObject *size_repr(PyObject *self)
{
    PyObject *list = PySequence_List(self);
    if (!list)
        return NULL;
    PyObject *r = PyUnicode_FromFormat("pycuda_sem.Size(%R)", list);
    Py_DECREF(list);
    return r;
}

static PyObject *size_numel(PyObject *self, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    int64_t n = 1;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(self); i++) {
        int64_t v = PyLong_AsLongLong(PyTuple_GET_ITEM(self, i));
        if (v == -1 && PyErr_Occurred())
            return NULL;
        if (__builtin_mul_overflow(n, v, &n)) {
            PyErr_SetString(PyExc_RuntimeError, "numel: integer multiplication overflow");
            return NULL;
        }
    }
    return PyLong_FromLongLong(n);
}

static PyMethodDef size_methods[] = {
    {"numel", size_numel, METH_NOARGS, "Number of elements of a tensor of this size."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject PcsSize_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pycuda_sem.Size",
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_TUPLE_SUBCLASS,
    .tp_doc = "The sizes of a tensor: a tuple of ints.",
    .tp_repr = size_repr,
    .tp_methods = size_methods,
};

bool pcs_size_check(PyObject *obj) { return Py_TYPE(obj) == &PcsSize_Type; }

PyObject *pcs_size_new(int ndim, const int64_t *sizes)
{
    PyObject *tup = PyTuple_New(ndim);
    if (!tup)
        return NULL;
    for (int i = 0; i < ndim; i++) {
        PyObject *v = PyLong_FromLongLong(sizes[i]);
        if (!v) {
            Py_DECREF(tup);
            return NULL;
        }
        PyTuple_SET_ITEM(tup, i, v);
    }
    PyObject *args = PyTuple_Pack(1, tup);
    Py_DECREF(tup);
    if (!args)
        return NULL;
    PyObject *r = PyTuple_Type.tp_new(&PcsSize_Type, args, NULL);
    Py_DECREF(args);
    return r;
}

/* ------------------------------------------------------------------------ */
/* Geometry helpers                                                          */

int64_t pcs_tensor_numel(const PcsTensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++)
        n *= t->sizes[i];
    return n;
}

void pcs_contiguous_strides(int ndim, const int64_t *sizes, int64_t *strides)
{
    int64_t s = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        strides[i] = s;
        s *= sizes[i] > 1 ? sizes[i] : 1;
    }
}

bool pcs_tensor_is_contiguous(const PcsTensor *t)
{
    /* torch's rule: size-1 dims may have any stride; empty is contiguous. */
    int64_t expected = 1;
    for (int i = t->ndim - 1; i >= 0; i--) {
        if (t->sizes[i] == 0)
            return true;
        if (t->sizes[i] != 1) {
            if (t->strides[i] != expected)
                return false;
            expected *= t->sizes[i];
        }
    }
    return true;
}

int pcs_wrap_dim(int64_t dim, int ndim)
{
    int n = ndim > 0 ? ndim : 1;
    if (dim < -n || dim >= n) {
        PyErr_Format(PyExc_IndexError,
                     "Dimension out of range (expected to be in range of [%d, %d], but got %lld)",
                     -n, n - 1, (long long)dim);
        return -1;
    }
    return (int)(dim < 0 ? dim + n : dim);
}

static int size_from_obj(PyObject *o, int64_t *out)
{
    if (!PyIndex_Check(o)) {
        PyErr_Format(PyExc_TypeError, "sizes must be ints or a sequence of ints, not %.100s",
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    PyObject *v = PyNumber_Index(o);
    if (!v)
        return -1;
    long long s = PyLong_AsLongLong(v);
    Py_DECREF(v);
    if (s == -1 && PyErr_Occurred())
        return -1;
    *out = s;
    return 0;
}

int pcs_int64_arg(PyObject *obj, int64_t *out)
{
    long long v = PyLong_AsLongLong(obj);
    if (v == -1 && PyErr_Occurred())
        return -1;
    *out = v;
    return 0;
}

int pcs_parse_sizes(PyObject *const *args, Py_ssize_t nargs, int64_t *sizes)
{
    int n = pcs_parse_ints(args, nargs, sizes);
    for (int i = 0; i < n; i++) {
        if (sizes[i] < 0) {
            PyErr_Format(PyExc_RuntimeError,
                         "Trying to create tensor with negative dimension %lld",
                         (long long)sizes[i]);
            return -1;
        }
    }
    return n;
}

PyObject *pcs_sequence_tuple(PyObject *obj, const char *msg)
{
    if (PyTuple_Check(obj))
        return Py_NewRef(obj);
    PyObject *seq = PySequence_Fast(obj, msg);
    if (!seq || PyTuple_Check(seq))
        return seq;
    PyObject *tup = PyList_AsTuple(seq);
    Py_DECREF(seq);
    return tup;
}

int pcs_parse_ints(PyObject *const *args, Py_ssize_t nargs, int64_t *sizes)
{
    /* Reading an item calls its __index__, which may change a list argument:
     * the items are read from a tuple that owns them. Varargs are owned by
     * the caller for the whole call. */
    PyObject *seq = NULL;
    if (nargs == 1 && !PyIndex_Check(args[0])) {
        seq = pcs_sequence_tuple(args[0], "sizes must be ints or a sequence of ints");
        if (!seq)
            return -1;
        args = &PyTuple_GET_ITEM(seq, 0);
        nargs = PyTuple_GET_SIZE(seq);
    }
    int r = (int)nargs;
    if (nargs > PCS_MAX_DIMS) {
        PyErr_Format(PyExc_RuntimeError, "tensors have at most %d dimensions", PCS_MAX_DIMS);
        r = -1;
    }
    for (Py_ssize_t i = 0; r >= 0 && i < nargs; i++) {
        if (size_from_obj(args[i], &sizes[i]) < 0)
            r = -1;
    }
    Py_XDECREF(seq);
    return r;
}

int pcs_device_arg(PyObject *obj, int dflt)
{
    if (obj == NULL || obj == Py_None)
        return dflt;
    int type, index;
    if (pcs_device_parse(obj, &type, &index) < 0)
        return -2;
    if (type == PCS_CPU)
        return -1;
    if (pcs_require_cuda() < 0)
        return -2;
    if (index < 0)
        index = pcs_current_device();
    if (pcs_check_device(index) < 0)
        return -2;
    return index;
}

/* ------------------------------------------------------------------------ */
/* Argument helpers shared by the tensor files                               */

PyObject *pcs_arg(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, Py_ssize_t pos,
                  const char *name)
{
    if (pos >= 0 && pos < nargs)
        return args[pos];
    if (!kwnames)
        return NULL;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(kwnames); i++)
        if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, i), name) == 0)
            return args[nargs + i];
    return NULL;
}

int pcs_check_kwargs(PyObject *kwnames, const char *fname, const char *const *names)
{
    if (!kwnames)
        return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(kwnames); i++) {
        PyObject *k = PyTuple_GET_ITEM(kwnames, i);
        bool ok = false;
        for (const char *const *n = names; *n && !ok; n++)
            ok = PyUnicode_CompareWithASCIIString(k, *n) == 0;
        if (!ok) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", fname, k);
            return -1;
        }
    }
    return 0;
}

int pcs_memory_format_only_arg(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                               const char *fname, Py_ssize_t max_pos, int dflt)
{
    static const char *const names[] = {"memory_format", NULL};
    if (pcs_check_kwargs(kwnames, fname, names) < 0)
        return -1;
    if (nargs > max_pos) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %zd positional argument(s) (%zd given)", fname,
                     max_pos, nargs);
        return -1;
    }
    return pcs_memory_format_arg(pcs_arg(args, nargs, kwnames, 0, "memory_format"), dflt, fname);
}

int pcs_size_init(PyObject *m)
{
    PcsSize_Type.tp_base = &PyTuple_Type;
    if (PyType_Ready(&PcsSize_Type) < 0)
        return -1;
    return PyModule_AddObjectRef(m, "Size", (PyObject *)&PcsSize_Type);
}
