/* index.c: advanced indexing: x[idx] and x[idx] = v where the index holds
 * integer or boolean tensors, lists or bools, mixed with ints, slices, None
 * and Ellipsis; index_put_ and index_put.
 *
 * torch's algorithm (torch/csrc/autograd/python_variable_indexing.cpp):
 * ints, slices, None and Ellipsis first shape a "working" view (ints select,
 * None adds a size-1 dim); each boolean mask with k dims becomes k index
 * tensors (the columns of its nonzero), a bool (Python or 0-dim tensor) a
 * size-1 dim indexed by [0] or by nothing; the index tensors broadcast
 * together to a shape B, which replaces the indexed dims in the result when
 * they are adjacent and goes to the front when a slice or None separates
 * them. That gives a plan for the indexing engine (ops/index.h), which
 * gathers for getitem and scatters (the last value in index order wins) for
 * setitem. tensor/tensor_index.c hands index expressions with advanced items
 * to the two hooks at the end of this file, installed by pcs_ops_init. */
#include "ops/index.h"

#include <string.h>

#include "tensor/copy.h"

#define T(o) ((PcsTensor *)(o))
#define MAX_ITEMS 64

enum { IT_INT, IT_SLICE, IT_NONE, IT_ELLIPSIS, IT_INDEX, IT_MASK, IT_BOOL };

typedef struct {
    int kind;
    PyObject *obj;   /* borrowed from the items tuple */
    PcsTensor *t;    /* owned: the index or mask tensor */
    int64_t value;   /* IT_INT's index, IT_BOOL's truth */
} item;

typedef struct {
    int ndim;
    int64_t offset;
    int64_t sizes[PCS_MAX_DIMS], strides[PCS_MAX_DIMS];
    PcsTensor *adv[PCS_MAX_DIMS]; /* owned: the index tensor of a working dim, or NULL */
} work;

static void work_clear(work *w)
{
    for (int i = 0; i < w->ndim; i++)
        Py_CLEAR(w->adv[i]);
}

/* ------------------------------------------------------------------------ */
/* Items                                                                     */

/* Classifies o; converts lists and sequences to tensors (an empty one is an
 * int64 index, as torch). */
static int classify(PyObject *o, item *it)
{
    it->obj = o;
    it->t = NULL;
    if (o == Py_None) {
        it->kind = IT_NONE;
    } else if (o == Py_Ellipsis) {
        it->kind = IT_ELLIPSIS;
    } else if (PySlice_Check(o)) {
        it->kind = IT_SLICE;
    } else if (PyBool_Check(o)) {
        it->kind = IT_BOOL;
        it->value = o == Py_True;
    } else if (PyLong_Check(o) || (!PcsTensor_Check(o) && PyIndex_Check(o) && !PySequence_Check(o))) {
        it->kind = IT_INT;
        PyObject *v = PyNumber_Index(o);
        long long x = v ? PyLong_AsLongLong(v) : -1;
        Py_XDECREF(v);
        if (x == -1 && PyErr_Occurred())
            return -1;
        it->value = x;
    } else if (PcsTensor_Check(o) || (PySequence_Check(o) && !PyUnicode_Check(o) && !PyBytes_Check(o))) {
        PcsTensor *t;
        if (PcsTensor_Check(o)) {
            t = (PcsTensor *)Py_NewRef(o);
        } else {
            Py_ssize_t len = PySequence_Size(o);
            if (len < 0)
                return -1;
            t = pcs_tensor_from_data(o, len ? -1 : PCS_INT64, PCS_DEVICE_UNSET, false);
            if (!t)
                return -1;
        }
        it->t = t;
        if (t->dtype == PCS_BOOL || t->dtype == PCS_UINT8) {
            if (t->ndim == 0) {
                unsigned char b = 0;
                PcsTensor *bt = pcs_tensor_to(t, PCS_BOOL, t->device, false, false, false);
                int r = bt ? pcs_read_element(bt, &b) : -1;
                Py_XDECREF(bt);
                if (r < 0)
                    return -1;
                it->kind = IT_BOOL;
                it->value = b != 0;
            } else {
                it->kind = IT_MASK;
            }
        } else if (pcs_is_float(t->dtype) || pcs_is_complex(t->dtype)) {
            PyErr_SetString(PyExc_IndexError,
                            "tensors used as indices must be long, int, byte or bool tensors");
            return -1;
        } else if (t->ndim == 0) {
            int64_t v = 0;
            PcsTensor *lt = pcs_tensor_to(t, PCS_INT64, t->device, false, false, false);
            int r = lt ? pcs_read_element(lt, &v) : -1;
            Py_XDECREF(lt);
            if (r < 0)
                return -1;
            it->kind = IT_INT;
            it->value = v;
        } else {
            it->kind = IT_INDEX;
        }
    } else {
        PyErr_Format(PyExc_IndexError,
                     "only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                     "Variables are valid indices (got %.100s)",
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    return 0;
}

static int add_dim(work *w, int64_t size, int64_t stride, PcsTensor *adv)
{
    if (w->ndim >= PCS_MAX_DIMS) {
        Py_XDECREF(adv);
        return pcs_check_ndim(PCS_MAX_DIMS + 1, PyExc_IndexError);
    }
    w->sizes[w->ndim] = size;
    w->strides[w->ndim] = stride;
    w->adv[w->ndim++] = adv;
    return 0;
}

/* The mask's nonzero columns become index tensors of the working dims
 * [j, j + mask.ndim), after torch's shape check. */
static int expand_mask(work *w, int j, PcsTensor *mask)
{
    for (int m = 0; m < mask->ndim; m++) {
        if (mask->sizes[m] != w->sizes[j + m]) {
            char a[256], b[256];
            pcs_shape_str(mask->ndim, mask->sizes, a, sizeof a);
            pcs_shape_str(w->ndim, w->sizes, b, sizeof b);
            PyErr_Format(PyExc_IndexError,
                         "The shape of the mask %s at index %d does not match the shape of the "
                         "indexed tensor %s at index %d",
                         a, m, b, j + m);
            return -1;
        }
    }
    PcsTensor *nz = pcs_index_nonzero(mask);
    if (!nz)
        return -1;
    int r = 0;
    for (int m = 0; m < mask->ndim && r == 0; m++) {
        int64_t cnt = nz->sizes[0], st = nz->strides[0];
        PcsTensor *col = pcs_tensor_alias(nz, nz->offset + m, 1, &cnt, &st);
        if (!col)
            r = -1;
        else
            w->adv[j + m] = col;
    }
    Py_DECREF(nz);
    return r;
}

/* Builds the working view and its index tensors from the items. */
static int build_work(PcsTensor *t, item *its, int n, work *w)
{
    int consumed = 0, ellipses = 0;
    for (int i = 0; i < n; i++) {
        int k = its[i].kind;
        if (k == IT_ELLIPSIS)
            ellipses++;
        else if (k == IT_INT || k == IT_SLICE || k == IT_INDEX)
            consumed++;
        else if (k == IT_MASK)
            consumed += its[i].t->ndim;
    }
    if (pcs_index_check_counts(ellipses, consumed, t->ndim) < 0)
        return -1;
    w->offset = t->offset;
    int src = 0, mask_at[MAX_ITEMS];
    for (int i = 0; i < n; i++) {
        item *it = &its[i];
        mask_at[i] = -1;
        switch (it->kind) {
        case IT_ELLIPSIS:
            for (int k = 0; k < t->ndim - consumed; k++, src++)
                if (add_dim(w, t->sizes[src], t->strides[src], NULL) < 0)
                    return -1;
            break;
        case IT_NONE:
            if (add_dim(w, 1, 0, NULL) < 0)
                return -1;
            break;
        case IT_BOOL: {
            int64_t len = it->value ? 1 : 0;
            PcsTensor *z = pcs_zeros_tensor(1, &len, PCS_INT64, -1);
            if (!z || add_dim(w, 1, 0, z) < 0)
                return -1;
            break;
        }
        case IT_SLICE: {
            int64_t start, len, step;
            if (pcs_index_slice(it->obj, t->sizes[src], &start, &len, &step) < 0)
                return -1;
            w->offset += start * t->strides[src];
            if (add_dim(w, len, t->strides[src] * step, NULL) < 0)
                return -1;
            src++;
            break;
        }
        case IT_INT: {
            int64_t size = t->sizes[src], idx = it->value;
            if (idx < -size || idx >= size)
                return pcs_index_oob(idx, src, size);
            w->offset += (idx < 0 ? idx + size : idx) * t->strides[src];
            src++;
            break;
        }
        case IT_INDEX:
            if (add_dim(w, t->sizes[src], t->strides[src], (PcsTensor *)Py_NewRef(it->t)) < 0)
                return -1;
            src++;
            break;
        case IT_MASK:
            mask_at[i] = w->ndim;
            for (int m = 0; m < it->t->ndim; m++, src++)
                if (add_dim(w, t->sizes[src], t->strides[src], NULL) < 0)
                    return -1;
            break;
        }
    }
    for (; src < t->ndim; src++)
        if (add_dim(w, t->sizes[src], t->strides[src], NULL) < 0)
            return -1;
    for (int i = 0; i < n; i++)
        if (mask_at[i] >= 0 && expand_mask(w, mask_at[i], its[i].t) < 0)
            return -1;
    return 0;
}

/* The plan of t[items] from its working view. */
static int build_plan(PcsTensor *t, work *w, pcs_index_plan *p)
{
    int64_t B[PCS_MAX_DIMS];
    int nb = 0, first = -1, last = -1, nadv = 0;
    for (int j = 0; j < w->ndim; j++) {
        PcsTensor *a = w->adv[j];
        if (!a)
            continue;
        if (first < 0)
            first = j;
        last = j;
        nadv++;
        /* broadcast a's shape into B, right-aligned */
        if (a->ndim > nb) {
            memmove(B + (a->ndim - nb), B, nb * sizeof(int64_t));
            for (int d = 0; d < a->ndim - nb; d++)
                B[d] = 1;
            nb = a->ndim;
        }
        for (int d = 0; d < a->ndim; d++) {
            int64_t *s = &B[nb - a->ndim + d], v = a->sizes[d];
            if (*s == 1)
                *s = v;
            else if (v != 1 && v != *s) {
                char msg[1024];
                size_t k = (size_t)snprintf(msg, sizeof msg, "shape mismatch: indexing tensors could not be broadcast together with shapes ");
                for (int q = 0, c = 0; q < w->ndim && k < sizeof msg; q++) {
                    if (!w->adv[q])
                        continue;
                    char sh[256];
                    pcs_shape_str(w->adv[q]->ndim, w->adv[q]->sizes, sh, sizeof sh);
                    k += (size_t)snprintf(msg + k, sizeof msg - k, c++ ? ", %s" : "%s", sh);
                }
                PyErr_SetString(PyExc_IndexError, msg);
                return -1;
            }
        }
    }
    bool adjacent = last - first + 1 == nadv;
    int nbasic = w->ndim - nadv;
    if (pcs_check_ndim((int64_t)nbasic + nb, PyExc_IndexError) < 0)
        return -1;
    int bpos = adjacent ? first : 0, r = 0;
    pcs_index_geom *g = &p->g;
    g->base = w->offset;
    /* basic dims in order around the block B at bpos */
    for (int j = 0; j < w->ndim; j++) {
        if (w->adv[j])
            continue;
        int before = 0;
        for (int q = 0; q < j; q++)
            before += !w->adv[q];
        int rd = before + ((adjacent && j < first) ? 0 : nb);
        g->sizes[rd] = w->sizes[j];
        g->bstride[rd] = w->strides[j];
    }
    for (int d = 0; d < nb; d++) {
        g->sizes[bpos + d] = B[d];
        g->bstride[bpos + d] = 0;
    }
    g->ndim = nbasic + nb;
    for (int j = 0; j < w->ndim && r == 0; j++) {
        PcsTensor *a = w->adv[j];
        if (a && pcs_index_plan_add(p, a, t->device, j, w->sizes[j], w->strides[j],
                                    bpos + nb - a->ndim) < 0)
            r = -1;
    }
    return r;
}

/* index: a tuple, or one item. */
static int plan_index(PcsTensor *t, PyObject *index, pcs_index_plan *p)
{
    PyObject *tup = PyTuple_Check(index) ? Py_NewRef(index) : PyTuple_Pack(1, index);
    if (!tup)
        return -1;
    Py_ssize_t n = PyTuple_GET_SIZE(tup);
    if (n > MAX_ITEMS) {
        Py_DECREF(tup);
        PyErr_Format(PyExc_IndexError, "too many indices for tensor of dimension %d", t->ndim);
        return -1;
    }
    item its[MAX_ITEMS];
    work w;
    memset(&w, 0, sizeof w);
    int r = 0, done = 0;
    for (; done < n && r == 0; done++)
        r = classify(PyTuple_GET_ITEM(tup, done), &its[done]);
    if (r == 0)
        r = build_work(t, its, (int)n, &w);
    if (r == 0)
        r = build_plan(t, &w, p);
    for (int i = 0; i < done; i++)
        Py_XDECREF(its[i].t);
    work_clear(&w);
    Py_DECREF(tup);
    if (r < 0)
        pcs_index_plan_clear(p);
    return r;
}

/* ------------------------------------------------------------------------ */
/* The hooks and index_put                                                   */

/* The mask when index is one bool tensor of t's whole shape (not 0-dim) on
 * t's device: x[mask] is then masked_select, x[mask] = number masked_fill_. */
static PcsTensor *whole_mask(PcsTensor *t, PyObject *index)
{
    if (PyTuple_Check(index) && PyTuple_GET_SIZE(index) == 1)
        index = PyTuple_GET_ITEM(index, 0);
    if (!PcsTensor_Check(index))
        return NULL;
    PcsTensor *m = T(index);
    if (m->dtype != PCS_BOOL || m->device != t->device || m->ndim != t->ndim || m->ndim == 0)
        return NULL;
    for (int d = 0; d < m->ndim; d++)
        if (m->sizes[d] != t->sizes[d])
            return NULL;
    return m;
}

PyObject *pcs_index_getitem_advanced(PcsTensor *t, PyObject *index)
{
    PcsTensor *m = t->device >= 0 ? whole_mask(t, index) : NULL;
    if (m)
        return (PyObject *)pcs_masked_select_dense(t, m);
    pcs_index_plan p;
    pcs_index_plan_init(&p);
    if (plan_index(t, index, &p) < 0)
        return NULL;
    PcsTensor *res = pcs_index_gather(&p, t);
    pcs_index_plan_clear(&p);
    return (PyObject *)res;
}

static int index_put(PcsTensor *t, PyObject *index, PyObject *value, int mode)
{
    pcs_index_plan p;
    pcs_index_plan_init(&p);
    if (plan_index(t, index, &p) < 0)
        return -1;
    PcsTensor *v = pcs_index_values(&p, t, value);
    int r = v ? pcs_index_scatter(&p, t, v, mode, true) : -1;
    Py_XDECREF(v);
    pcs_index_plan_clear(&p);
    return r;
}

int pcs_index_setitem_advanced(PcsTensor *t, PyObject *index, PyObject *value)
{
    /* a number through a whole mask: masked_fill_ (no nonzero, no sync) */
    bool number = PyFloat_Check(value) || PyLong_Check(value);
    if (number && (PyFloat_Check(value) ? pcs_is_float(t->dtype) || pcs_is_complex(t->dtype)
                                        : t->dtype != PCS_BOOL || PyBool_Check(value))) {
        PcsTensor *m = whole_mask(t, index);
        if (m)
            return pcs_masked_fill_inplace(t, m, value);
    }
    return index_put(t, index, value, PCS_SCATTER_SET);
}

/* index_put_(indices, values, accumulate=False): indices a sequence of
 * tensors (None: the whole dim). */
static PyObject *index_put_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kw, bool inplace)
{
    const char *fname = inplace ? "index_put_" : "index_put";
    static const char *const names[] = {"input", "indices", "values", "accumulate", NULL};
    if (pcs_check_kwargs(kw, fname, names) < 0)
        return NULL;
    PcsTensor *x = pcs_input_arg(self, args, nargs, kw, fname);
    if (!x)
        return NULL;
    int base = self ? -1 : 0;
    PyObject *ind = pcs_arg(args, nargs, kw, base + 1, "indices");
    PyObject *val = pcs_arg(args, nargs, kw, base + 2, "values");
    PyObject *acc = pcs_arg(args, nargs, kw, base + 3, "accumulate");
    if (!ind || !val) {
        PyErr_Format(PyExc_TypeError, "%s() missing required arguments 'indices' and 'values'", fname);
        return NULL;
    }
    if (!PcsTensor_Check(val)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'values' must be Tensor, not %.100s", fname,
                     Py_TYPE(val)->tp_name);
        return NULL;
    }
    if (T(val)->dtype != x->dtype) {
        PyErr_Format(PyExc_RuntimeError,
                     "Index put requires the source and destination dtypes match, got %s for the "
                     "destination and %s for the source.",
                     pcs_dtypes[x->dtype].legacy, pcs_dtypes[T(val)->dtype].legacy);
        return NULL;
    }
    int accumulate = acc ? PyObject_IsTrue(acc) : 0;
    if (accumulate < 0)
        return NULL;
    PyObject *tup = pcs_sequence_tuple(ind, "index_put_(): argument 'indices' must be tuple of Tensors");
    if (!tup)
        return NULL;
    /* None in indices means the whole dim, as a slice */
    Py_ssize_t n = PyTuple_GET_SIZE(tup);
    PyObject *items = PyTuple_New(n);
    for (Py_ssize_t i = 0; items && i < n; i++) {
        PyObject *o = PyTuple_GET_ITEM(tup, i);
        PyObject *v = o == Py_None ? PySlice_New(NULL, NULL, NULL) : Py_NewRef(o);
        if (!v)
            Py_CLEAR(items);
        else
            PyTuple_SET_ITEM(items, i, v);
    }
    Py_DECREF(tup);
    if (!items)
        return NULL;
    PcsTensor *target = inplace ? (PcsTensor *)Py_NewRef(x) : pcs_tensor_contiguous(x, true);
    int r = target ? index_put(target, items, val, accumulate ? PCS_SCATTER_ADD : PCS_SCATTER_SET) : -1;
    Py_DECREF(items);
    if (r < 0)
        Py_CLEAR(target);
    return (PyObject *)target;
}

PCS_OP_PAIR(index_put_, index_put_entry(self, a, n, kw, true))
PCS_OP_PAIR(index_put, index_put_entry(self, a, n, kw, false))

PyMethodDef pcs_ops_index_tmethods[] = {
    {"index_put_", PCS_FN(m_index_put_), PCS_FK, "index_put_(indices, values, accumulate=False)"},
    {"index_put", PCS_FN(m_index_put), PCS_FK, "index_put(indices, values, accumulate=False)"},
    {NULL, NULL, 0, NULL},
};

static PyObject *f_set_deterministic(PyObject *self, PyObject *arg)
{
    (void)self;
    int on = PyObject_IsTrue(arg);
    if (on < 0)
        return NULL;
    pcs_index_set_deterministic(on);
    Py_RETURN_NONE;
}

static PyObject *f_get_deterministic(PyObject *self, PyObject *noargs)
{
    (void)self;
    (void)noargs;
    return PyBool_FromLong(pcs_index_deterministic());
}

PyMethodDef pcs_ops_index_functions[] = {
    {"_set_deterministic_algorithms", f_set_deterministic, METH_O,
     "_set_deterministic_algorithms(mode): the flag use_deterministic_algorithms sets"},
    {"_get_deterministic_algorithms", f_get_deterministic, METH_NOARGS,
     "_get_deterministic_algorithms() -> bool"},
    {"index_put_", PCS_FN(f_index_put_), PCS_FK, "index_put_(input, indices, values, accumulate=False)"},
    {"index_put", PCS_FN(f_index_put), PCS_FK, "index_put(input, indices, values, accumulate=False)"},
    {NULL, NULL, 0, NULL},
};
