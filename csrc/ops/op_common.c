/* op_common.c: small helpers the op files share: the input argument of a
 * function/method pair, int arguments with defaults, torch's device error,
 * shapes in messages, narrowed views, a fresh copy of a view, zero-filled
 * results, results copied into out=, and the return_types struct sequences
 * that print as torch's. */
#include "ops/ops.h"

#include <string.h>
#include <structmember.h>

#include "tensor/copy.h"

PcsTensor *pcs_input_arg(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw,
                         const char *fname)
{
    PyObject *x = self ? self : pcs_arg(args, nargs, kw, 0, "input");
    if (!x || !PcsTensor_Check(x)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'input' (position 1) must be Tensor, not %.100s",
                     fname, x ? Py_TYPE(x)->tp_name : "nothing");
        return NULL;
    }
    return (PcsTensor *)x;
}

int pcs_int_arg_or(PyObject *o, int64_t dflt, int64_t *out)
{
    if (!o || o == Py_None) {
        *out = dflt;
        return 0;
    }
    return pcs_int64_arg(o, out);
}

int pcs_device_mismatch(int a, int b)
{
    char x[32], y[32];
    if (a < 0)
        snprintf(x, sizeof x, "cpu");
    else
        snprintf(x, sizeof x, "cuda:%d", a);
    if (b < 0)
        snprintf(y, sizeof y, "cpu");
    else
        snprintf(y, sizeof y, "cuda:%d", b);
    PyErr_Format(PyExc_RuntimeError,
                 "Expected all tensors to be on the same device, but found at least two devices, "
                 "%s and %s!",
                 x, y);
    return -1;
}

void pcs_shape_str(int ndim, const int64_t *s, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < ndim && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, i ? ", %lld" : "%lld", (long long)s[i]);
    if (k < n)
        snprintf(buf + k, n - k, "]");
}

PcsTensor *pcs_narrow_view(PcsTensor *t, int dim, int64_t start, int64_t len)
{
    int64_t sizes[PCS_MAX_DIMS];
    memcpy(sizes, t->sizes, t->ndim * sizeof(int64_t));
    sizes[dim] = len;
    return pcs_tensor_alias(t, t->offset + (len ? start * t->strides[dim] : 0), t->ndim, sizes,
                            t->strides);
}

PyObject *pcs_materialize(PcsTensor *v)
{
    if (!v) /* NOLINT(pcs-errors): the caller's view builder set the exception */
        return NULL;
    PcsTensor *res = pcs_tensor_empty(v->ndim, v->sizes, v->dtype, v->device, false);
    if (res && pcs_copy(res, v, false) < 0)
        Py_CLEAR(res);
    Py_DECREF(v);
    return (PyObject *)res;
}

PcsTensor *pcs_zeros_tensor(int ndim, const int64_t *sizes, int dtype, int device)
{
    static const unsigned char zero[16] = {0};
    PcsTensor *t = pcs_tensor_empty(ndim, sizes, dtype, device, false);
    if (t && pcs_tensor_numel(t) && pcs_fill_bytes(t, zero) < 0)
        Py_CLEAR(t);
    return t;
}

PyObject *pcs_into_out(PyObject *res, PyObject *out, const char *fname)
{
    if (!res || !out || res == out)
        return res;
    PcsTensor *o = (PcsTensor *)out, *r = (PcsTensor *)res;
    int rc = -1;
    if (o->device != r->device) {
        pcs_device_mismatch(r->device, o->device);
    } else if (o->ndim != r->ndim || memcmp(o->sizes, r->sizes, o->ndim * sizeof(int64_t)) != 0) {
        char a[256], b[256];
        pcs_shape_str(o->ndim, o->sizes, a, sizeof a);
        pcs_shape_str(r->ndim, r->sizes, b, sizeof b);
        PyErr_Format(PyExc_RuntimeError,
                     "%s(): out= has shape %s but the result has shape %s (pycuda_sem does not "
                     "resize out=)",
                     fname, a, b);
    } else {
        rc = pcs_copy(o, r, false);
    }
    Py_DECREF(res);
    return rc < 0 ? NULL : Py_NewRef(out);
}

PyObject *pcs_np_out(PcsTensor *t, PcsTensor **tmp)
{
    *tmp = NULL;
    if (pcs_ops_cpu_dtype(t->dtype) != t->dtype) {
        *tmp = pcs_tensor_empty(t->ndim, t->sizes, pcs_ops_cpu_dtype(t->dtype), -1, false);
        PyObject *a = *tmp ? pcs_tensor_numpy(*tmp) : NULL;
        if (!a)
            Py_CLEAR(*tmp);
        return a;
    }
    return pcs_tensor_numpy(t);
}

int pcs_np_done(PcsTensor *t, PcsTensor *tmp)
{
    if (!tmp)
        return 0;
    int r = pcs_copy(t, tmp, false);
    Py_DECREF(tmp);
    return r;
}

/* torch's repr of its return_types (torch/csrc/utils/structseq.cpp): the type
 * name and "(", then one "name=repr(value)" a line, ")" after the last. */
static PyObject *return_type_repr(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    Py_ssize_t n = PyTuple_GET_SIZE(self);
    PyObject *parts = PyList_New(0);
    PyObject *head = parts ? PyUnicode_FromFormat("%s(\n", tp->tp_name) : NULL;
    int bad = !head || PyList_Append(parts, head) < 0;
    Py_XDECREF(head);
    for (Py_ssize_t i = 0; i < n && !bad; i++) {
        PyObject *s = PyUnicode_FromFormat("%s=%R%s", tp->tp_members[i].name, PyTuple_GET_ITEM(self, i),
                                           i + 1 < n ? ",\n" : ")");
        bad = !s || PyList_Append(parts, s) < 0;
        Py_XDECREF(s);
    }
    PyObject *empty = bad ? NULL : PyUnicode_FromString("");
    PyObject *r = empty ? PyUnicode_Join(empty, parts) : NULL;
    Py_XDECREF(empty);
    Py_XDECREF(parts);
    return r;
}

PyTypeObject *pcs_return_type_new(PyStructSequence_Desc *desc)
{
    PyTypeObject *tp = PyStructSequence_NewType(desc);
    if (!tp)
        return NULL;
    tp->tp_repr = return_type_repr;
    PyType_Modified(tp);
    return tp;
}

PyObject *pcs_py_attr(PyObject **cache, const char *module, const char *name)
{
    if (!*cache && !(*cache = PyImport_ImportModule(module)))
        return NULL;
    PyObject *f = PyObject_GetAttrString(*cache, name);
    if (!f)
        return NULL;
    Py_DECREF(f); /* the module keeps it */
    return f;
}
