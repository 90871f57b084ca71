/* diag.c: diagonals and triangles: diagonal (a view), diag, diag_embed,
 * tril and triu (tril_, triu_).
 *
 * diag and diag_embed write through a diagonal view of a zeroed result, so
 * the copy core does the work. tril/triu have a kernel (kernels/tri.cu)
 * that reads and writes each element once; on the CPU they copy and clear
 * rows with memset. */
#include "ops/ops.h"

#include <string.h>

#include "kernels/kernels.h"
#include "runtime/device.h"
#include "runtime/stream.h"
#include "tensor/copy.h"

#define T(o) ((PcsTensor *)(o))

/* ------------------------------------------------------------------------ */
/* diagonal, diag, diag_embed                                                */

/* The view of the diagonal `offset` of dims d1, d2 (wrapped, distinct),
 * appended as the last dim. */
static PcsTensor *diag_view(PcsTensor *t, int64_t offset, int d1, int d2)
{
    if (d1 == d2) {
        PyErr_Format(PyExc_RuntimeError, "diagonal dimensions cannot be identical %d, %d", d1, d2);
        return NULL;
    }
    int64_t s1 = t->sizes[d1], s2 = t->sizes[d2], n;
    if (offset >= 0)
        n = s2 - offset < s1 ? s2 - offset : s1;
    else
        n = s1 + offset < s2 ? s1 + offset : s2;
    if (n < 0)
        n = 0;
    int64_t off = t->offset;
    if (n > 0)
        off += offset >= 0 ? offset * t->strides[d2] : -offset * t->strides[d1];
    int64_t sizes[PCS_MAX_DIMS], strides[PCS_MAX_DIMS];
    int k = 0;
    for (int i = 0; i < t->ndim; i++) {
        if (i == d1 || i == d2)
            continue;
        sizes[k] = t->sizes[i];
        strides[k++] = t->strides[i];
    }
    sizes[k] = n;
    strides[k++] = t->strides[d1] + t->strides[d2];
    return pcs_tensor_alias(t, off, k, sizes, strides);
}

/* n + |offset|, the side of a matrix with n entries on diagonal offset;
 * -1 with RuntimeError when it overflows. */
static int64_t embed_side(int64_t n, int64_t offset)
{
    int64_t m;
    if (offset == INT64_MIN || __builtin_add_overflow(n, offset < 0 ? -offset : offset, &m)) {
        PyErr_Format(PyExc_RuntimeError, "diagonal offset %lld is too large", (long long)offset);
        return -1;
    }
    return m;
}

/* (input, offset=0, dim1, dim2) of diagonal and diag_embed. */
static PcsTensor *diag_args(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw,
                            const char *fname, int64_t dflt1, int64_t dflt2, int64_t *off,
                            int64_t *a, int64_t *b)
{
    static const char *const names[] = {"input", "offset", "dim1", "dim2", NULL};
    if (pcs_check_kwargs(kw, fname, names) < 0)
        return NULL;
    PcsTensor *t = pcs_input_arg(self, args, nargs, kw, fname);
    if (!t)
        return NULL;
    int base = self ? -1 : 0;
    if (pcs_int_arg_or(pcs_arg(args, nargs, kw, base + 1, "offset"), 0, off) < 0 ||
        pcs_int_arg_or(pcs_arg(args, nargs, kw, base + 2, "dim1"), dflt1, a) < 0 ||
        pcs_int_arg_or(pcs_arg(args, nargs, kw, base + 3, "dim2"), dflt2, b) < 0)
        return NULL;
    return t;
}

static PyObject *diagonal_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kw)
{
    int64_t off, a, b;
    PcsTensor *t = diag_args(self, args, nargs, kw, "diagonal", 0, 1, &off, &a, &b);
    if (!t)
        return NULL;
    if (t->ndim < 2) {
        PyErr_Format(PyExc_RuntimeError, "diagonal(): expected a tensor with at least 2 dimensions, "
                                         "got %d", t->ndim);
        return NULL;
    }
    int d1 = pcs_wrap_dim(a, t->ndim), d2 = d1 < 0 ? -1 : pcs_wrap_dim(b, t->ndim);
    if (d2 < 0)
        return NULL;
    return (PyObject *)diag_view(t, off, d1, d2);
}

/* (input, diagonal=0, *, out=None) of diag, tril and triu. */
static PcsTensor *diagonal_k_args(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kw, const char *fname, int64_t *k, PyObject **out)
{
    static const char *const names[] = {"input", "diagonal", "out", NULL};
    if (pcs_check_kwargs(kw, fname, names) < 0)
        return NULL;
    PcsTensor *t = pcs_input_arg(self, args, nargs, kw, fname);
    if (!t)
        return NULL;
    if (pcs_int_arg_or(pcs_arg(args, nargs, kw, self ? 0 : 1, "diagonal"), 0, k) < 0 ||
        pcs_out_arg(pcs_arg(args, nargs, kw, -1, "out"), out) < 0)
        return NULL;
    return t;
}

static PyObject *diag_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    int64_t k;
    PyObject *out;
    PcsTensor *t = diagonal_k_args(self, args, nargs, kw, "diag", &k, &out);
    if (!t)
        return NULL;
    PyObject *res;
    if (t->ndim == 1) {
        int64_t m = embed_side(t->sizes[0], k), sz[2] = {m, m};
        if (m < 0)
            return NULL;
        PcsTensor *z = pcs_zeros_tensor(2, sz, t->dtype, t->device);
        PcsTensor *v = z ? diag_view(z, k, 0, 1) : NULL;
        int r = v ? pcs_copy(v, t, false) : -1;
        Py_XDECREF(v);
        if (r < 0)
            Py_CLEAR(z);
        res = (PyObject *)z;
    } else if (t->ndim == 2) {
        res = pcs_materialize(diag_view(t, k, 0, 1));
    } else {
        PyErr_Format(PyExc_RuntimeError, "diag(): Supports 1D or 2D tensors. Got %dD", t->ndim);
        return NULL;
    }
    return pcs_into_out(res, out, "diag");
}

static PyObject *diag_embed_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kw)
{
    int64_t off, a, b;
    PcsTensor *t = diag_args(self, args, nargs, kw, "diag_embed", -2, -1, &off, &a, &b);
    if (!t)
        return NULL;
    if (t->ndim < 1) {
        PyErr_SetString(PyExc_RuntimeError, "diag_embed(): input must be at least 1-D");
        return NULL;
    }
    int nd = t->ndim + 1;
    if (pcs_check_ndim(nd, PyExc_RuntimeError) < 0)
        return NULL;
    int d1 = pcs_wrap_dim(a, nd), d2 = d1 < 0 ? -1 : pcs_wrap_dim(b, nd);
    if (d2 < 0)
        return NULL;
    if (d1 == d2) {
        PyErr_Format(PyExc_RuntimeError, "diagonal dimensions cannot be identical %d, %d", d1, d2);
        return NULL;
    }
    int64_t m = embed_side(t->sizes[t->ndim - 1], off), sizes[PCS_MAX_DIMS];
    if (m < 0)
        return NULL;
    int lo = d1 < d2 ? d1 : d2, hi = d1 < d2 ? d2 : d1;
    for (int i = 0, k = 0; i < nd; i++)
        sizes[i] = (i == lo || i == hi) ? m : t->sizes[k++];
    PcsTensor *z = pcs_zeros_tensor(nd, sizes, t->dtype, t->device);
    PcsTensor *v = z ? diag_view(z, off, d1, d2) : NULL;
    int r = v ? pcs_copy(v, t, false) : -1;
    Py_XDECREF(v);
    if (r < 0)
        Py_CLEAR(z);
    return (PyObject *)z;
}

/* ------------------------------------------------------------------------ */
/* tril, triu                                                                */

/* Clears the other triangle of contiguous c in place (CPU), row by row. */
static void tri_cpu(PcsTensor *c, int64_t k, bool upper)
{
    int64_t rows = c->sizes[c->ndim - 2], cols = c->sizes[c->ndim - 1];
    int64_t batch = rows && cols ? pcs_tensor_numel(c) / (rows * cols) : 0;
    size_t isz = (size_t)pcs_itemsize(c->dtype);
    char *base = pcs_tensor_data(c);
    for (int64_t b = 0; b < batch; b++) {
        for (int64_t r = 0; r < rows; r++) {
            char *row = base + ((b * rows + r) * cols) * isz;
            /* tril keeps columns <= r + k; triu keeps columns >= r + k */
            int64_t lo = upper ? 0 : r + k + 1, hi = upper ? r + k : cols;
            lo = lo < 0 ? 0 : lo > cols ? cols : lo;
            hi = hi < 0 ? 0 : hi > cols ? cols : hi;
            if (hi > lo)
                memset(row + lo * isz, 0, (size_t)(hi - lo) * isz);
        }
    }
}

/* The triangle of t into a new tensor, or into t itself when inplace. */
static PyObject *tri_run(PcsTensor *t, int64_t k, bool upper, bool inplace, PyObject *out)
{
    const char *fname = upper ? "triu" : "tril";
    if (t->ndim < 2) {
        PyErr_Format(PyExc_RuntimeError, "%s: input tensor must have at least 2 dimensions", fname);
        return NULL;
    }
    /* Beyond rows + cols every diagonal is on one side: clamping k keeps
     * r + k from overflowing and changes nothing. */
    int64_t lim = t->sizes[t->ndim - 2] + t->sizes[t->ndim - 1];
    k = k > lim ? lim : k < -lim ? -lim : k;
    PcsTensor *res;
    if (t->device < 0) {
        res = inplace && pcs_tensor_is_contiguous(t) ? (PcsTensor *)Py_NewRef(t)
                                                       : pcs_tensor_contiguous(t, true);
        if (!res)
            return NULL;
        if (pcs_tensor_numel(res))
            tri_cpu(res, k, upper);
    } else {
        PcsTensor *c = pcs_tensor_contiguous(t, false);
        if (!c)
            return NULL;
        res = inplace && c == t ? (PcsTensor *)Py_NewRef(t)
                                : pcs_tensor_empty(t->ndim, t->sizes, t->dtype, t->device, false);
        int64_t rows = t->sizes[t->ndim - 2], cols = t->sizes[t->ndim - 1];
        int64_t batch = rows && cols ? pcs_tensor_numel(t) / (rows * cols) : 0;
        int r = res ? 0 : -1;
        if (r == 0 && batch && (r = pcs_cuda_set_device_raw(t->device)) == 0) {
            cudaStream_t st = pcs_current_stream(t->device);
            if (pcs_launch_tri(pcs_tensor_data(res), pcs_tensor_data(c), pcs_itemsize(t->dtype), batch,
                               rows, cols, k, upper, st) < 0) {
                pcs_not_implemented(fname, t->dtype);
                r = -1;
            } else {
                r = PCS_CHECK_LAUNCH(st, fname);
            }
        }
        Py_DECREF(c);
        if (r < 0) {
            Py_XDECREF(res);
            return NULL;
        }
    }
    return pcs_into_out((PyObject *)res, inplace ? (PyObject *)t : out, fname);
}

static PyObject *tri_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw,
                           bool upper, bool inplace)
{
    const char *fname = upper ? "triu" : "tril";
    int64_t k;
    PyObject *out;
    PcsTensor *t = diagonal_k_args(self, args, nargs, kw, fname, &k, &out);
    if (!t)
        return NULL;
    if (out && T(out)->device != t->device)
        return pcs_device_mismatch(t->device, T(out)->device), NULL;
    return tri_run(t, k, upper, inplace, out);
}

/* ------------------------------------------------------------------------ */
/* Tables                                                                    */

PCS_OP_PAIR(diagonal, diagonal_entry(self, a, n, kw))
PCS_OP_PAIR(diag, diag_entry(self, a, n, kw))
PCS_OP_PAIR(diag_embed, diag_embed_entry(self, a, n, kw))
PCS_OP_PAIR(tril, tri_entry(self, a, n, kw, false, false))
PCS_OP_PAIR(triu, tri_entry(self, a, n, kw, true, false))

static PyObject *m_tril_(PyObject *self, PyObject *const *a, Py_ssize_t n, PyObject *kw)
{
    return tri_entry(self, a, n, kw, false, true);
}

static PyObject *m_triu_(PyObject *self, PyObject *const *a, Py_ssize_t n, PyObject *kw)
{
    return tri_entry(self, a, n, kw, true, true);
}

#define DIAG_LIST(X)                                                                              \
    X(diagonal, "diagonal(input, offset=0, dim1=0, dim2=1)\n\nA view of a diagonal, as the "       \
                "last dim.")                                                                      \
    X(diag, "diag(input, diagonal=0, *, out=None)\n\n1-D: a matrix with input on a diagonal; "    \
            "2-D: a copy of a diagonal.")                                                         \
    X(diag_embed, "diag_embed(input, offset=0, dim1=-2, dim2=-1)\n\nMatrices (dims dim1, dim2) "  \
                  "with the last dim of input on a diagonal.")                                    \
    X(tril, "tril(input, diagonal=0, *, out=None)\n\nThe lower triangle of the last two dims, "  \
            "the rest zeroed.")                                                                   \
    X(triu, "triu(input, diagonal=0, *, out=None)\n\nThe upper triangle of the last two dims, "  \
            "the rest zeroed.")

PyMethodDef pcs_ops_diag_tmethods[] = {
    DIAG_LIST(PCS_T_ENTRY)
    {"tril_", PCS_FN(m_tril_), PCS_FK, "tril_(diagonal=0)\n\nIn-place tril."},
    {"triu_", PCS_FN(m_triu_), PCS_FK, "triu_(diagonal=0)\n\nIn-place triu."},
    {NULL, NULL, 0, NULL},
};

PyMethodDef pcs_ops_diag_functions[] = {
    DIAG_LIST(PCS_F_ENTRY)
    {NULL, NULL, 0, NULL},
};
