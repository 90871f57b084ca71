/* split.c: splitting a tensor into views: split (by a size or a list of
 * sizes), chunk, tensor_split (sections or indices), and the function forms
 * of the view methods narrow, unbind, swapaxes and swapdims. Every piece is
 * a narrowed view of the input (shared storage), as torch's are; lists of
 * sizes are read from tuple snapshots. */
#include "ops/ops.h"

#include <string.h>

#define T(o) ((PcsTensor *)(o))

/* dim as an int64 (dflt when absent). */
static int dim_arg(PyObject *o, int64_t dflt, int64_t *out) { return pcs_int_arg_or(o, dflt, out); }

/* ------------------------------------------------------------------------ */
/* Splitting                                                                 */

/* A sequence of ints as a PyMem array (free with PyMem_Free); -1 with exception. */
static Py_ssize_t int64_list(PyObject *obj, const char *what, int64_t **out)
{
    *out = NULL;
    PyObject *tup = pcs_sequence_tuple(obj, what);
    if (!tup)
        return -1;
    Py_ssize_t n = PyTuple_GET_SIZE(tup);
    int64_t *v = PyMem_Malloc((n ? n : 1) * sizeof(int64_t));
    if (!v) {
        Py_DECREF(tup);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (pcs_int64_arg(PyTuple_GET_ITEM(tup, i), &v[i]) < 0) {
            PyMem_Free(v);
            Py_DECREF(tup);
            return -1;
        }
    }
    Py_DECREF(tup);
    *out = v;
    return n;
}

/* An integer tensor's values as a PyMem array (syncs for CUDA). */
static Py_ssize_t int64_list_tensor(PcsTensor *t, const char *fname, int64_t **out)
{
    *out = NULL;
    if (pcs_is_float(t->dtype) || pcs_is_complex(t->dtype) || t->dtype == PCS_BOOL) {
        PyErr_Format(PyExc_RuntimeError,
                     "%s expected tensor_indices_or_sections to have integer dtype, but got %s",
                     fname, pcs_dtypes[t->dtype].legacy);
        return -1;
    }
    PyObject *lst = pcs_tensor_tolist(t);
    if (!lst)
        return -1;
    if (t->ndim == 0) { /* one number: a list of one */
        PyObject *one = PyTuple_Pack(1, lst);
        Py_SETREF(lst, one);
        if (!lst)
            return -1;
    }
    Py_ssize_t n = int64_list(lst, "expected a list of ints", out);
    Py_DECREF(lst);
    return n;
}

/* The tuple of views of t along dim with the given lengths (summing to
 * at most the dim's size). */
static PyObject *split_views(PcsTensor *t, int dim, const int64_t *starts, const int64_t *lens,
                             Py_ssize_t n)
{
    PyObject *tup = PyTuple_New(n);
    for (Py_ssize_t i = 0; tup && i < n; i++) {
        PyObject *v = (PyObject *)pcs_narrow_view(t, dim, starts[i], lens[i]);
        if (!v)
            Py_CLEAR(tup);
        else
            PyTuple_SET_ITEM(tup, i, v);
    }
    return tup;
}

/* Splits into consecutive pieces of the given sizes. */
static PyObject *split_sizes(PcsTensor *t, int dim, const int64_t *lens, Py_ssize_t n)
{
    int64_t *starts = PyMem_Malloc((n ? n : 1) * sizeof(int64_t));
    if (!starts)
        return PyErr_NoMemory();
    int64_t at = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        starts[i] = at;
        at += lens[i];
    }
    PyObject *r = split_views(t, dim, starts, lens, n);
    PyMem_Free(starts);
    return r;
}

static PyObject *split_even(PcsTensor *t, int dim, int64_t size)
{
    int64_t dsize = t->sizes[dim];
    if (size < 0) {
        PyErr_Format(PyExc_RuntimeError,
                     "split expects split_size be non-negative, but got split_size=%lld",
                     (long long)size);
        return NULL;
    }
    if (size == 0 && dsize != 0) {
        PyErr_Format(PyExc_RuntimeError,
                     "split_size can only be 0 if dimension size is 0, but got dimension size of "
                     "%lld",
                     (long long)dsize);
        return NULL;
    }
    /* ceil(dsize / size) without dsize + size - 1, which overflows near 2^63 */
    int64_t pieces = size == 0 ? 1 : dsize / size + (dsize % size != 0);
    if (pieces == 0)
        pieces = 1;
    if (pieces > PY_SSIZE_T_MAX / (Py_ssize_t)sizeof(int64_t))
        return PyErr_NoMemory(); /* one view a piece could never be held */
    Py_ssize_t n = (Py_ssize_t)pieces;
    int64_t *lens = PyMem_Malloc(n * sizeof(int64_t));
    if (!lens)
        return PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < n; i++)
        lens[i] = size == 0 ? 0 : (i + 1 < n ? size : dsize - size * (int64_t)(n - 1));
    PyObject *r = split_sizes(t, dim, lens, n);
    PyMem_Free(lens);
    return r;
}

static int split_dim(PcsTensor *t, PyObject *dobj, const char *fname, int *dim)
{
    if (t->ndim == 0) {
        PyErr_Format(PyExc_RuntimeError, "%s expects at least a 1-dimensional tensor", fname);
        return -1;
    }
    int64_t d;
    if (dim_arg(dobj, 0, &d) < 0)
        return -1;
    return (*dim = pcs_wrap_dim(d, t->ndim)) < 0 ? -1 : 0;
}

/* split(tensor, split_size_or_sections, dim=0) and Tensor.split(split_size, dim=0) */
static PyObject *split_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"tensor", "split_size_or_sections", "split_size", "dim",
                                        NULL};
    if (pcs_check_kwargs(kw, "split", names) < 0)
        return NULL;
    int base = self ? -1 : 0;
    PyObject *x = self ? self : pcs_arg(args, nargs, kw, 0, "tensor");
    if (!x || !PcsTensor_Check(x)) {
        PyErr_SetString(PyExc_TypeError, "split(): argument 'tensor' must be Tensor");
        return NULL;
    }
    PyObject *s = pcs_arg(args, nargs, kw, base + 1, "split_size_or_sections");
    if (!s)
        s = pcs_arg(args, nargs, kw, -1, "split_size");
    if (!s) {
        PyErr_SetString(PyExc_TypeError, "split() missing required argument 'split_size'");
        return NULL;
    }
    int dim;
    if (split_dim(T(x), pcs_arg(args, nargs, kw, base + 2, "dim"), "split", &dim) < 0)
        return NULL;
    if (PyIndex_Check(s) && !PcsTensor_Check(s)) {
        int64_t size;
        return pcs_int64_arg(s, &size) < 0 ? NULL : split_even(T(x), dim, size);
    }
    int64_t *lens;
    Py_ssize_t n = int64_list(s, "split(): split_size must be an int or a sequence of ints", &lens);
    if (n < 0)
        return NULL;
    int64_t sum = 0;
    bool neg = false;
    for (Py_ssize_t i = 0; i < n; i++) {
        neg |= lens[i] < 0;
        sum += lens[i];
    }
    PyObject *r = NULL;
    if (neg || sum != T(x)->sizes[dim]) {
        PyObject *lst = PySequence_List(s);
        PyObject *repr = lst ? PyObject_Repr(lst) : NULL;
        if (repr && neg)
            PyErr_Format(PyExc_RuntimeError,
                         "split_with_sizes expects split_sizes have only non-negative entries, "
                         "but got split_sizes=%U",
                         repr);
        else if (repr)
            PyErr_Format(PyExc_RuntimeError,
                         "split_with_sizes expects split_sizes to sum exactly to %lld (input "
                         "tensor's size at dimension %d), but got split_sizes=%U",
                         (long long)T(x)->sizes[dim], dim, repr);
        Py_XDECREF(repr);
        Py_XDECREF(lst);
    } else {
        r = split_sizes(T(x), dim, lens, n);
    }
    PyMem_Free(lens);
    return r;
}

/* chunk(input, chunks, dim=0) */
static PyObject *chunk_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "chunks", "dim", NULL};
    if (pcs_check_kwargs(kw, "chunk", names) < 0)
        return NULL;
    int base = self ? -1 : 0;
    PyObject *x = self ? self : pcs_arg(args, nargs, kw, 0, "input");
    if (!x || !PcsTensor_Check(x)) {
        PyErr_SetString(PyExc_TypeError, "chunk(): argument 'input' must be Tensor");
        return NULL;
    }
    PyObject *c = pcs_arg(args, nargs, kw, base + 1, "chunks");
    int64_t chunks;
    int dim;
    if (!c) {
        PyErr_SetString(PyExc_TypeError, "chunk() missing required argument 'chunks'");
        return NULL;
    }
    if (pcs_int64_arg(c, &chunks) < 0)
        return NULL;
    if (T(x)->ndim == 0) {
        PyErr_SetString(PyExc_RuntimeError, "chunk expects at least a 1-dimensional tensor");
        return NULL;
    }
    if (chunks <= 0) {
        PyErr_Format(PyExc_RuntimeError, "chunk expects `chunks` to be greater than 0, got: %lld",
                     (long long)chunks);
        return NULL;
    }
    if (split_dim(T(x), pcs_arg(args, nargs, kw, base + 2, "dim"), "chunk", &dim) < 0)
        return NULL;
    int64_t dsize = T(x)->sizes[dim];
    int64_t size = dsize / chunks + (dsize % chunks != 0);
    if (size == 0 && dsize == 0) { /* `chunks` empty pieces */
        if (chunks > PY_SSIZE_T_MAX / (Py_ssize_t)sizeof(int64_t))
            return PyErr_NoMemory();
        int64_t *zeros = PyMem_Calloc((size_t)chunks, sizeof(int64_t));
        if (!zeros)
            return PyErr_NoMemory();
        PyObject *r = split_sizes(T(x), dim, zeros, (Py_ssize_t)chunks);
        PyMem_Free(zeros);
        return r;
    }
    return split_even(T(x), dim, size);
}

/* tensor_split(input, indices_or_sections, dim=0) */
static PyObject *tensor_split_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kw)
{
    static const char *const names[] = {"input", "indices_or_sections", "sections", "indices",
                                        "tensor_indices_or_sections", "dim", NULL};
    if (pcs_check_kwargs(kw, "tensor_split", names) < 0)
        return NULL;
    int base = self ? -1 : 0;
    PyObject *x = self ? self : pcs_arg(args, nargs, kw, 0, "input");
    if (!x || !PcsTensor_Check(x)) {
        PyErr_SetString(PyExc_TypeError, "tensor_split(): argument 'input' must be Tensor");
        return NULL;
    }
    PyObject *s = pcs_arg(args, nargs, kw, base + 1, "indices_or_sections");
    const char *alt[] = {"sections", "indices", "tensor_indices_or_sections"};
    for (int i = 0; i < 3 && !s; i++)
        s = pcs_arg(args, nargs, kw, -1, alt[i]);
    if (!s) {
        PyErr_SetString(PyExc_TypeError, "tensor_split() missing required argument 'indices_or_sections'");
        return NULL;
    }
    PcsTensor *t = T(x);
    if (t->ndim == 0) {
        PyErr_SetString(PyExc_RuntimeError,
                        "tensor_split expected at least a 1-dimensional tensor, but got a tensor "
                        "with 0 dims");
        return NULL;
    }
    int dim;
    if (split_dim(t, pcs_arg(args, nargs, kw, base + 2, "dim"), "tensor_split", &dim) < 0)
        return NULL;
    int64_t dsize = t->sizes[dim];
    int64_t *idx = NULL, sections = 0;
    Py_ssize_t n = -2; /* -2: sections, else the number of indices */
    if (PcsTensor_Check(s)) {
        PcsTensor *st = T(s);
        if (st->ndim > 1) {
            PyErr_Format(PyExc_RuntimeError,
                         "tensor_split expected tensor_indices_or_sections to be a zero-dimensional "
                         "or one-dimensional tensor, but got a tensor with %d dims",
                         st->ndim);
            return NULL;
        }
        n = int64_list_tensor(st, "tensor_split", &idx);
        if (n < 0)
            return NULL;
        if (st->ndim == 0) {
            sections = n ? idx[0] : 0;
            n = -2;
        }
    } else if (PyIndex_Check(s)) {
        if (pcs_int64_arg(s, &sections) < 0)
            return NULL;
    } else if ((n = int64_list(s, "tensor_split(): indices_or_sections must be an int or a "
                                  "sequence of ints",
                               &idx)) < 0) {
        return NULL;
    }
    PyObject *r = NULL;
    if (n == -2) {
        if (sections <= 0) {
            PyErr_Format(PyExc_RuntimeError, "number of sections must be larger than 0, got %lld",
                         (long long)sections);
            goto out;
        }
        if (sections > PY_SSIZE_T_MAX / (Py_ssize_t)sizeof(int64_t)) {
            PyErr_NoMemory();
            goto out;
        }
        int64_t *lens = PyMem_Malloc((size_t)sections * sizeof(int64_t));
        if (!lens) {
            PyErr_NoMemory();
            goto out;
        }
        int64_t q = dsize / sections, extra = dsize % sections;
        for (int64_t i = 0; i < sections; i++)
            lens[i] = q + (i < extra);
        r = split_sizes(t, dim, lens, (Py_ssize_t)sections);
        PyMem_Free(lens);
    } else {
        /* Slices [0:i0], [i0:i1], ..., [ik:] with slice semantics (negative
         * indices wrap, everything clamps, an end before its start is empty). */
        int64_t *starts = PyMem_Malloc((n + 1) * sizeof(int64_t));
        int64_t *lens = PyMem_Malloc((n + 1) * sizeof(int64_t));
        if (!starts || !lens) {
            PyMem_Free(starts);
            PyMem_Free(lens);
            PyErr_NoMemory();
            goto out;
        }
        int64_t start = 0;
        for (Py_ssize_t i = 0; i <= n; i++) {
            int64_t end = i < n ? idx[i] : dsize;
            if (end < 0)
                end += dsize;
            end = end < 0 ? 0 : end > dsize ? dsize : end;
            int64_t s0 = start < 0 ? 0 : start > dsize ? dsize : start;
            starts[i] = s0;
            lens[i] = end > s0 ? end - s0 : 0;
            start = i < n ? idx[i] : dsize;
            if (start < 0)
                start += dsize;
        }
        r = split_views(t, dim, starts, lens, n + 1);
        PyMem_Free(starts);
        PyMem_Free(lens);
    }
out:
    PyMem_Free(idx);
    return r;
}

/* ------------------------------------------------------------------------ */
/* Function forms of view methods: torch.narrow(x, ...) is x.narrow(...)     */

static PyObject *forward(const char *name, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    if (nargs < 1 || !PcsTensor_Check(args[0])) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'input' (position 1) must be Tensor", name);
        return NULL;
    }
    PyObject *n = PyUnicode_InternFromString(name);
    if (!n)
        return NULL;
    PyObject *r = PyObject_VectorcallMethod(n, args, (size_t)nargs, kw);
    Py_DECREF(n);
    return r;
}

#define FORWARD(name)                                                                             \
    static PyObject *f_##name(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *kw)       \
    {                                                                                             \
        PCS_UNUSED(m);                                                                            \
        return forward(#name, a, n, kw);                                                          \
    }
FORWARD(narrow)
FORWARD(unbind)
FORWARD(swapaxes)
FORWARD(swapdims)
#undef FORWARD

/* ------------------------------------------------------------------------ */
/* Tables                                                                    */

PCS_OP_PAIR(split, split_entry(self, a, n, kw))
PCS_OP_PAIR(chunk, chunk_entry(self, a, n, kw))
PCS_OP_PAIR(tensor_split, tensor_split_entry(self, a, n, kw))

#define FK PCS_FK
#define FN(f) PCS_FN(f)

PyMethodDef pcs_ops_split_tmethods[] = {
    {"split", FN(m_split), FK,
     "split(split_size, dim=0)\n\nViews of consecutive pieces of split_size along dim (the last "
     "may be smaller), or of the given list of sizes."},
    {"chunk", FN(m_chunk), FK,
     "chunk(chunks, dim=0)\n\nAt most `chunks` views of equal size along dim (the last may be "
     "smaller)."},
    {"tensor_split", FN(m_tensor_split), FK,
     "tensor_split(indices_or_sections, dim=0)\n\nViews: `sections` pieces as equal as possible, "
     "or the pieces between the given indices."},
    {NULL, NULL, 0, NULL},
};

PyMethodDef pcs_ops_split_functions[] = {
    {"split", FN(f_split), FK,
     "split(tensor, split_size_or_sections, dim=0)\n\nTensor.split as a function."},
    {"chunk", FN(f_chunk), FK, "chunk(input, chunks, dim=0)\n\nTensor.chunk as a function."},
    {"tensor_split", FN(f_tensor_split), FK,
     "tensor_split(input, indices_or_sections, dim=0)\n\nTensor.tensor_split as a function."},
    {"narrow", FN(f_narrow), FK, "narrow(input, dim, start, length)\n\nTensor.narrow as a function (a view)."},
    {"unbind", FN(f_unbind), FK, "unbind(input, dim=0)\n\nTensor.unbind as a function (views)."},
    {"swapaxes", FN(f_swapaxes), FK, "swapaxes(input, axis0, axis1)\n\nAlias of transpose (a view)."},
    {"swapdims", FN(f_swapdims), FK, "swapdims(input, dim0, dim1)\n\nAlias of transpose (a view)."},
    {NULL, NULL, 0, NULL},
};
