/* tensor_index.c: t[index] and t[index] = value.
 *
 * Basic indexing here: ints, slices with positive steps, Ellipsis, None and
 * 0-dim integer tensors (which act as ints). Every such index gives a view;
 * assignment writes through that view with copy_ or fill_. Indexing with
 * integer or boolean tensors, lists or bools ("advanced indexing") gathers
 * and scatters, which is op work: the ops layer (ops/index.c) installs two
 * hooks at init (pcs_tensor_set_index_hooks), and an index expression with
 * any advanced item goes to them whole. The tensor layer never calls up. */
#include "tensor/copy.h"
#include "tensor/tensor.h"

#include <string.h>

typedef struct {
    int64_t offset;
    int ndim;
    int64_t sizes[PCS_MAX_DIMS];
    int64_t strides[PCS_MAX_DIMS];
} view_geom;

static bool is_int_index(PyObject *o)
{
    if (PyBool_Check(o))
        return false;
    if (PyLong_Check(o))
        return true;
    if (PcsTensor_Check(o)) {
        PcsTensor *t = (PcsTensor *)o;
        return t->ndim == 0 && pcs_is_integral(t->dtype, false);
    }
    return PyIndex_Check(o) && !PySequence_Check(o);
}

static pcs_getitem_hook advanced_get;
static pcs_setitem_hook advanced_set;

void pcs_tensor_set_index_hooks(pcs_getitem_hook get, pcs_setitem_hook set)
{
    advanced_get = get;
    advanced_set = set;
}

/* 1 (no exception) for an advanced item, else -1 with IndexError. */
static int unsupported(PyObject *o)
{
    if (PcsTensor_Check(o) || PyList_Check(o) || PyBool_Check(o) ||
        (PySequence_Check(o) && !PyUnicode_Check(o) && !PyBytes_Check(o)))
        return 1;
    PyErr_Format(PyExc_IndexError,
                 "only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                 "Variables are valid indices (got %.100s)",
                 Py_TYPE(o)->tp_name);
    return -1;
}

int pcs_index_check_counts(int ellipses, int consumed, int ndim)
{
    if (ellipses > 1) {
        PyErr_SetString(PyExc_IndexError, "an index can only have a single ellipsis ('...')");
        return -1;
    }
    if (consumed > ndim) {
        PyErr_Format(PyExc_IndexError, "too many indices for tensor of dimension %d", ndim);
        return -1;
    }
    return 0;
}

int pcs_index_slice(PyObject *slice, int64_t size, int64_t *start, int64_t *len, int64_t *step)
{
    Py_ssize_t b, e, s;
    if (PySlice_Unpack(slice, &b, &e, &s) < 0)
        return -1;
    if (s <= 0) {
        PyErr_SetString(PyExc_ValueError, "step must be greater than zero");
        return -1;
    }
    *len = PySlice_AdjustIndices((Py_ssize_t)size, &b, &e, s);
    *start = b;
    *step = s;
    return 0;
}

/* Applies the index expression to t's geometry: 0, 1 (no exception) when
 * it holds an advanced item, or -1 with exception. */
static int apply_index(PcsTensor *t, PyObject *index, view_geom *g)
{
    PyObject *const *items;
    Py_ssize_t n;
    if (PyTuple_Check(index)) {
        items = &PyTuple_GET_ITEM(index, 0);
        n = PyTuple_GET_SIZE(index);
    } else {
        items = &index;
        n = 1;
    }
    int consumed = 0, ellipses = 0, added = 0, ints = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = items[i];
        if (o == Py_Ellipsis)
            ellipses++;
        else if (o == Py_None)
            added++;
        else if (PySlice_Check(o))
            consumed++;
        else if (is_int_index(o))
            consumed++, ints++;
        else
            return unsupported(o);
    }
    if (pcs_index_check_counts(ellipses, consumed, t->ndim) < 0)
        return -1;
    /* The result's dims, known before g's fixed arrays are written: slices
     * and Ellipsis keep dims, ints drop one, None adds one. */
    if (pcs_check_ndim((int64_t)t->ndim - ints + added, PyExc_IndexError) < 0)
        return -1;
    g->offset = t->offset;
    g->ndim = 0;
    int src = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = items[i];
        if (o == Py_Ellipsis) {
            for (int k = 0; k < t->ndim - consumed; k++, src++) {
                g->sizes[g->ndim] = t->sizes[src];
                g->strides[g->ndim++] = t->strides[src];
            }
        } else if (o == Py_None) {
            g->sizes[g->ndim] = 1;
            g->strides[g->ndim++] = src < t->ndim ? t->sizes[src] * t->strides[src] : 1;
        } else if (PySlice_Check(o)) {
            int64_t start, len, step;
            if (pcs_index_slice(o, t->sizes[src], &start, &len, &step) < 0)
                return -1;
            g->offset += start * t->strides[src];
            g->sizes[g->ndim] = len;
            g->strides[g->ndim++] = t->strides[src] * step;
            src++;
        } else {
            PyObject *v = PyNumber_Index(o);
            if (!v)
                return -1;
            long long idx = PyLong_AsLongLong(v);
            Py_DECREF(v);
            if (idx == -1 && PyErr_Occurred())
                return -1;
            int64_t size = t->sizes[src];
            if (idx < -size || idx >= size) {
                PyErr_Format(PyExc_IndexError,
                             "index %lld is out of bounds for dimension %d with size %lld", idx,
                             src, (long long)size);
                return -1;
            }
            if (idx < 0)
                idx += size;
            g->offset += idx * t->strides[src];
            src++;
        }
    }
    for (; src < t->ndim; src++) { /* trailing dims are kept whole */
        g->sizes[g->ndim] = t->sizes[src];
        g->strides[g->ndim++] = t->strides[src];
    }
    return 0;
}

static PyObject *no_advanced(void)
{
    PyErr_SetString(PyExc_NotImplementedError,
                    "advanced indexing needs the ops layer, which installs it at import");
    return NULL;
}

PyObject *pcs_tensor_getitem(PyObject *self, PyObject *index)
{
    PcsTensor *t = (PcsTensor *)self;
    /* Fast path: t[i] with a plain int. */
    if (PyLong_CheckExact(index) && t->ndim > 0) {
        long long i = PyLong_AsLongLong(index);
        if (i == -1 && PyErr_Occurred())
            return NULL;
        return (PyObject *)pcs_tensor_select(t, 0, i);
    }
    view_geom g;
    int r = apply_index(t, index, &g);
    if (r == 1)
        return advanced_get ? advanced_get(t, index) : no_advanced();
    if (r < 0)
        return NULL;
    return (PyObject *)pcs_tensor_alias(t, g.offset, g.ndim, g.sizes, g.strides);
}

int pcs_tensor_setitem(PyObject *self, PyObject *index, PyObject *value)
{
    if (!value) {
        PyErr_SetString(PyExc_TypeError, "tensor elements cannot be deleted");
        return -1;
    }
    PcsTensor *t = (PcsTensor *)self;
    view_geom g;
    int ar = apply_index(t, index, &g);
    if (ar == 1) {
        if (advanced_set)
            return advanced_set(t, index, value);
        no_advanced();
        return -1;
    }
    if (ar < 0)
        return -1;
    PcsTensor *view = pcs_tensor_alias(t, g.offset, g.ndim, g.sizes, g.strides);
    if (!view)
        return -1;
    int r;
    if (PcsTensor_Check(value)) {
        r = pcs_copy(view, (PcsTensor *)value, false);
    } else if (PySequence_Check(value) && !PyUnicode_Check(value)) {
        /* t[...] = [1, 2, 3]: a tensor of view's dtype, then copy. */
        PcsTensor *src = pcs_tensor_from_data(value, t->dtype, -1, false);
        r = src ? pcs_copy(view, src, false) : -1;
        Py_XDECREF(src);
    } else {
        r = pcs_tensor_fill(view, value);
    }
    Py_DECREF(view);
    return r;
}
