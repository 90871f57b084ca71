/* sort.c: sort, argsort, msort, topk, kthvalue, median, nanmedian and mode,
 * as module functions and Tensor methods, and the helpers the sorting,
 * selection and scan files share (sort.h: rows, arguments, workspaces,
 * return types).
 *
 * Each op moves its dim last and makes the input contiguous ("rows",
 * [nseg, seglen]), then runs on that block: on CUDA through sort.cu (CUB's
 * radix and segmented sorts, then one pick kernel for kthvalue, median,
 * nanmedian and mode), on the CPU through NumPy's stable argsort
 * (pycuda_sem/_ops.py). Results come back in the input's dim order,
 * contiguous. Sorts are always stable (stable=False allows it, and torch's
 * own CUDA sort is stable too), NaN sorts as the largest value and -0.0
 * equals +0.0. topk on CUDA with k <= PCS_TOPK_MAX_K sorts tiles of each
 * row in shared memory and then only the tiles' candidates; otherwise, and
 * on the CPU, it sorts whole rows and keeps the first k. Either way the
 * result is sorted (sorted=False allows it). */
#include "ops/sort.h"

#include <math.h>
#include <string.h>

#include "runtime/device.h"
#include "runtime/stream.h"
#include "tensor/copy.h"

/* ------------------------------------------------------------------------ */
/* Rows                                                                      */

void pcs_rows_shape(const PcsTensor *x, int d, int64_t *sizes)
{
    int k = 0;
    for (int i = 0; i < x->ndim; i++)
        if (i != d)
            sizes[k++] = x->sizes[i];
    if (x->ndim)
        sizes[k] = x->sizes[d];
}

PcsTensor *pcs_rows_of(PcsTensor *x, int d, int64_t *nseg, int64_t *seglen)
{
    int64_t sizes[PCS_MAX_DIMS], strides[PCS_MAX_DIMS];
    int nd = x->ndim, k = 0;
    *nseg = 1;
    for (int i = 0; i < nd; i++)
        if (i != d) {
            *nseg *= x->sizes[i];
            sizes[k] = x->sizes[i];
            strides[k++] = x->strides[i];
        }
    if (nd) {
        sizes[k] = x->sizes[d];
        strides[k] = x->strides[d];
    }
    *seglen = nd ? x->sizes[d] : 1;
    if (nd == 0 || d == nd - 1) /* already in row order: no view to make */
        return pcs_tensor_contiguous(x, false);
    PcsTensor *v = pcs_tensor_alias(x, x->offset, nd, sizes, strides);
    if (!v)
        return NULL;
    PcsTensor *c = pcs_tensor_contiguous(v, false);
    Py_DECREF(v);
    return c;
}

PcsTensor *pcs_rows_restore(PcsTensor *r, int d)
{
    if (!r || r->ndim == 0 || d == r->ndim - 1)
        return r;
    int nd = r->ndim;
    int64_t sizes[PCS_MAX_DIMS], strides[PCS_MAX_DIMS];
    for (int i = 0; i < nd; i++) {
        int src = i < d ? i : i == d ? nd - 1 : i - 1;
        sizes[i] = r->sizes[src];
        strides[i] = r->strides[src];
    }
    PcsTensor *v = pcs_tensor_alias(r, r->offset, nd, sizes, strides);
    Py_DECREF(r);
    if (!v)
        return NULL;
    PcsTensor *c = pcs_tensor_contiguous(v, false);
    Py_DECREF(v);
    return c;
}

PcsTensor *pcs_rows_reduced(PcsTensor *r, const PcsTensor *x, int d, bool keepdim)
{
    if (!r)
        return NULL;
    int64_t sizes[PCS_MAX_DIMS];
    int k = 0;
    for (int i = 0; i < x->ndim; i++)
        if (i != d || keepdim)
            sizes[k++] = i == d ? 1 : x->sizes[i];
    PcsTensor *v = pcs_tensor_view(r, k, sizes);
    Py_DECREF(r);
    return v;
}

/* ------------------------------------------------------------------------ */
/* Arguments                                                                 */

int pcs_dim_arg(PyObject *obj, int ndim, int64_t dflt, const char *fname)
{
    int64_t d = dflt;
    if (obj && obj != Py_None) {
        if (PyBool_Check(obj) || !PyIndex_Check(obj)) {
            PyErr_Format(PyExc_TypeError, "%s(): argument 'dim' must be int, not %.100s", fname,
                         Py_TYPE(obj)->tp_name);
            return -1;
        }
        if (pcs_int64_arg(obj, &d) < 0)
            return -1;
    }
    return pcs_wrap_dim(d, ndim);
}

int pcs_flag_arg(PyObject *obj, bool dflt)
{
    if (!obj || obj == Py_None)
        return dflt;
    return PyObject_IsTrue(obj);
}

/* ------------------------------------------------------------------------ */
/* Devices                                                                   */

int pcs_workspace(size_t bytes, int dev, PcsTensor **ws)
{
    /* Never empty: the launchers read a NULL workspace as a size query. */
    int64_t n = bytes ? (int64_t)bytes : 1;
    *ws = pcs_tensor_empty(1, &n, PCS_UINT8, dev, false);
    return *ws ? 0 : -1;
}

int pcs_cub_status(int status, const char *op, int dtype)
{
    if (status == 0)
        return 0;
    if (status == -1) {
        pcs_not_implemented(op, dtype);
    } else if (status == -3) {
        PyErr_Format(PyExc_NotImplementedError,
                     "%s: rows of 2^31 elements or more are not implemented in pycuda_sem on CUDA",
                     op);
    } else {
        char what[96];
        snprintf(what, sizeof what, "CUB (%s)", op);
        pcs_cuda_error((cudaError_t)status, what, __FILE__, __LINE__);
    }
    return -1;
}

int pcs_launch_stream(int dev, cudaStream_t *stream)
{
    *stream = NULL;
    if (pcs_cuda_set_device_raw(dev) < 0)
        return -1;
    *stream = pcs_current_stream(dev);
    return 0;
}

int pcs_cub_run(int dev, const char *op, int dtype, pcs_cub_call call, const void *ctx)
{
    cudaStream_t s;
    size_t bytes = 0;
    PcsTensor *ws = NULL;
    if (pcs_launch_stream(dev, &s) < 0)
        return -1;
    int st = call(ctx, NULL, &bytes, s);
    if (st == -2)
        return -2;
    /* A workspace of no bytes is never read, so any address other than
     * NULL (which asks for the size) will do: no allocation then. */
    static char no_bytes;
    int r = pcs_cub_status(st, op, dtype);
    if (r == 0 && bytes)
        r = pcs_workspace(bytes, dev, &ws);
    if (r == 0)
        r = pcs_cub_status(call(ctx, ws ? pcs_tensor_data(ws) : (void *)&no_bytes, &bytes, s), op, dtype);
    if (r == 0)
        r = PCS_CHECK_LAUNCH(s, op);
    Py_XDECREF(ws);
    return r;
}

PyObject *pcs_np_call(const char *name, PyObject *args)
{
    if (!args) /* NOLINT(pcs-errors): the caller's Py_BuildValue failed and set it */
        return NULL;
    PyObject *fn = pcs_ops_numpy_fn(name);
    PyObject *r = fn ? PyObject_Call(fn, args, NULL) : NULL;
    Py_DECREF(args);
    return r;
}

int pcs_np_rows(const char *fn, PcsTensor *rows, int64_t n, PcsTensor *v, PcsTensor *i,
                PyObject *extra)
{
    if (!extra)
        return -1;
    PcsTensor *vt = NULL;
    PyObject *xa = pcs_ops_numpy_in(rows, rows->dtype);
    PyObject *va = xa ? (v ? pcs_np_out(v, &vt) : Py_NewRef(Py_None)) : NULL;
    PyObject *ia = va ? (i ? pcs_tensor_numpy(i) : Py_NewRef(Py_None)) : NULL;
    PyObject *head = ia ? Py_BuildValue("OLOO", xa, (long long)n, va, ia) : NULL;
    PyObject *args = head ? PySequence_Concat(head, extra) : NULL;
    PyObject *rr = args ? pcs_np_call(fn, args) : NULL;
    int r = rr ? pcs_np_done(v, vt) : -1;
    if (!rr)
        Py_XDECREF(vt);
    Py_XDECREF(rr);
    Py_XDECREF(head);
    Py_XDECREF(xa);
    Py_XDECREF(va);
    Py_XDECREF(ia);
    Py_DECREF(extra);
    return r;
}

PcsTensor *pcs_np_tensor(PyObject *arr, int dtype)
{
    if (!arr)
        return NULL;
    PcsTensor *t = pcs_tensor_from_numpy(arr);
    if (!t)
        return NULL;
    PcsTensor *r = pcs_tensor_to(t, dtype, -1, false, false, false);
    Py_DECREF(t);
    return r;
}

/* ------------------------------------------------------------------------ */
/* Results                                                                   */

static PyTypeObject *rt_types[PCS_RT_COUNT];
static const char *const rt_names[PCS_RT_COUNT] = {"sort", "topk", "kthvalue", "median",
                                                    "nanmedian", "mode", "cummax", "cummin"};

PyObject *pcs_values_indices(int which, PcsTensor *values, PcsTensor *indices)
{
    if (!values || !indices) {
        Py_XDECREF(values);
        Py_XDECREF(indices);
        /* NOLINT(pcs-errors): a NULL part is a failed earlier step, exception set */
        return NULL;
    }
    PyObject *r = PyStructSequence_New(rt_types[which]);
    if (!r) {
        Py_DECREF(values);
        Py_DECREF(indices);
        return NULL;
    }
    PyStructSequence_SetItem(r, 0, (PyObject *)values);
    PyStructSequence_SetItem(r, 1, (PyObject *)indices);
    return r;
}

PyObject *pcs_into_outs(PyObject *res, PyObject *out, int n, const char *fname)
{
    if (!res || !out || out == Py_None)
        return res;
    PyObject *outs = n == 1 ? PyTuple_Pack(1, out)
                            : (PyTuple_Check(out) || PyList_Check(out)) ? PySequence_Tuple(out) : NULL;
    if (!outs) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_TypeError, "%s(): argument 'out' must be a tuple of %d Tensors", fname, n);
        Py_DECREF(res);
        return NULL;
    }
    PyObject *items = n == 1 ? PyTuple_Pack(1, res) : PySequence_Tuple(res);
    int ok = items && PyTuple_GET_SIZE(outs) == n && PyTuple_GET_SIZE(items) == n;
    if (items && !ok)
        PyErr_Format(PyExc_TypeError, "%s(): argument 'out' must be a tuple of %d Tensors", fname, n);
    for (int i = 0; ok && i < n; i++) {
        PyObject *o = PyTuple_GET_ITEM(outs, i), *t = PyTuple_GET_ITEM(items, i);
        if (!PcsTensor_Check(o)) {
            PyErr_Format(PyExc_TypeError, "%s(): argument 'out' must be a tuple of %d Tensors", fname, n);
            ok = 0;
            break;
        }
        PcsTensor *ot = (PcsTensor *)o, *tt = (PcsTensor *)t;
        if (ot->ndim != tt->ndim || memcmp(ot->sizes, tt->sizes, tt->ndim * sizeof(int64_t)) != 0) {
            PyErr_Format(PyExc_RuntimeError, "%s(): out= must have the result's shape (no resizing)", fname);
            ok = 0;
        } else if (pcs_copy(ot, tt, false) < 0) {
            ok = 0;
        }
    }
    Py_XDECREF(items);
    Py_DECREF(res);
    if (!ok) {
        Py_DECREF(outs);
        /* NOLINT(pcs-errors): every way to !ok set an exception (or a call failed) */
        return NULL;
    }
    if (n == 1) {
        PyObject *o = Py_NewRef(PyTuple_GET_ITEM(outs, 0));
        Py_DECREF(outs);
        return o;
    }
    return outs;
}

/* ------------------------------------------------------------------------ */
/* The sort of rows                                                          */

/* The arguments of a sort (or topk) launch, for pcs_cub_run. */
typedef struct {
    int dtype, desc, narrow;
    const void *in;
    void *vals;
    int64_t *idx;
    int64_t nseg, len, k;
} sort_ctx;

static int sort_call(const void *c, void *ws, size_t *bytes, cudaStream_t s)
{
    const sort_ctx *a = c;
    return pcs_sort_rows(a->dtype, a->in, a->vals, a->idx, a->nseg, a->len, a->desc, a->narrow, ws,
                         bytes, s);
}

static int topk_call(const void *c, void *ws, size_t *bytes, cudaStream_t s)
{
    const sort_ctx *a = c;
    return pcs_topk_rows(a->dtype, a->in, a->nseg, a->len, a->k, a->desc, a->vals, a->idx, ws, bytes, s);
}

int pcs_sort_block(PcsTensor *rows, int64_t nseg, int64_t len, bool desc, bool narrow, PcsTensor *vals,
                   PcsTensor *idx, const char *fname)
{
    if (nseg * len == 0)
        return 0;
    if (rows->device >= 0) {
        sort_ctx c = {rows->dtype, desc, narrow, pcs_tensor_data(rows), vals ? pcs_tensor_data(vals) : NULL,
                      idx ? (int64_t *)pcs_tensor_data(idx) : NULL, nseg, len, len};
        /* Rows that fit one tile: one block sorts each, in one launch. */
        int r = len <= PCS_TOPK_ONE_TILE ? pcs_cub_run(rows->device, fname, rows->dtype, topk_call, &c) : -2;
        return r != -2 ? r : pcs_cub_run(rows->device, fname, rows->dtype, sort_call, &c);
    }
    return pcs_np_rows("sort_rows", rows, len, vals, idx, Py_BuildValue("(O)", desc ? Py_True : Py_False));
}

/* A sortable dtype: everything but complex (torch: "sort(): not implemented
 * for complex"). */
static int check_sortable(const PcsTensor *x, const char *fname)
{
    if (pcs_is_complex(x->dtype)) {
        pcs_not_implemented(fname, x->dtype);
        return -1;
    }
    return 0;
}

/* sort along d: values and/or indices, in x's shape. */
static int sort_dim(PcsTensor *x, int d, bool desc, bool want_vals, bool want_idx, PcsTensor **vals,
                    PcsTensor **idx, const char *fname)
{
    *vals = *idx = NULL;
    if (check_sortable(x, fname) < 0)
        return -1;
    int64_t nseg, len, shape[PCS_MAX_DIMS];
    PcsTensor *rows = pcs_rows_of(x, d, &nseg, &len);
    if (!rows)
        return -1;
    pcs_rows_shape(x, d, shape);
    PcsTensor *v = want_vals ? pcs_tensor_empty(x->ndim, shape, x->dtype, x->device, false) : NULL;
    PcsTensor *i = want_idx ? pcs_tensor_empty(x->ndim, shape, PCS_INT64, x->device, false) : NULL;
    int r = (want_vals && !v) || (want_idx && !i) ? -1
                                                  : pcs_sort_block(rows, nseg, len, desc, false, v, i, fname);
    Py_DECREF(rows);
    if (r < 0) {
        Py_XDECREF(v);
        Py_XDECREF(i);
        return -1;
    }
    *vals = v ? pcs_rows_restore(v, d) : NULL;
    *idx = i ? pcs_rows_restore(i, d) : NULL;
    if ((want_vals && !*vals) || (want_idx && !*idx)) {
        Py_CLEAR(*vals);
        Py_CLEAR(*idx);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Entries                                                                   */

static int max_positional(const char *fname, Py_ssize_t nargs, Py_ssize_t most)
{
    if (nargs <= most)
        return 0;
    PyErr_Format(PyExc_TypeError, "%s() takes at most %zd positional arguments (%zd given)", fname,
                 most, nargs);
    return -1;
}

/* sort(input, dim=-1, descending=False, stable=False, *, out=None) */
static PyObject *sort_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw,
                            int mode)
{
    const char *fname = mode == 1 ? "argsort" : mode == 2 ? "msort" : "sort";
    static const char *const names[] = {"input", "dim", "descending", "stable", "out", NULL};
    int base = self ? -1 : 0;
    if (pcs_check_kwargs(kw, fname, names) < 0 || max_positional(fname, nargs, mode == 2 ? base + 1 : base + 4) < 0)
        return NULL;
    PcsTensor *x = pcs_input_arg(self, args, nargs, kw, fname);
    if (!x)
        return NULL;
    PyObject *dim_o = mode == 2 ? NULL : pcs_arg(args, nargs, kw, base + 1, "dim");
    PyObject *desc_o = mode == 2 ? NULL : pcs_arg(args, nargs, kw, base + 2, "descending");
    PyObject *stable_o = mode == 2 ? NULL : pcs_arg(args, nargs, kw, base + 3, "stable");
    PyObject *out;
    if (mode == 1 && pcs_arg(args, nargs, kw, -1, "out")) {
        PyErr_SetString(PyExc_TypeError, "argsort() got an unexpected keyword argument 'out'");
        return NULL;
    }
    out = pcs_arg(args, nargs, kw, -1, "out");
    int d = pcs_dim_arg(dim_o, x->ndim, mode == 2 ? 0 : -1, fname);
    int desc = d < 0 ? -1 : pcs_flag_arg(desc_o, false);
    int stable = desc < 0 ? -1 : pcs_flag_arg(stable_o, false);
    if (stable < 0)
        return NULL;
    PcsTensor *v, *i;
    if (sort_dim(x, d, desc, mode != 1, mode != 2, &v, &i, fname) < 0)
        return NULL;
    if (mode == 1)
        return (PyObject *)i;
    if (mode == 2)
        return pcs_into_outs((PyObject *)v, out, 1, fname);
    return pcs_into_outs(pcs_values_indices(PCS_RT_SORT, v, i), out, 2, fname);
}

/* topk on CUDA through pcs_topk_rows (block sorts of tiles): 0 with the
 * results; 1 (no exception) where it does not apply (k past
 * PCS_TOPK_MAX_K ...), so the caller sorts whole rows; -1 on error. */
static int topk_cuda(PcsTensor *x, int d, int64_t k, bool largest, PcsTensor **vals, PcsTensor **idx)
{
    *vals = *idx = NULL;
    if (check_sortable(x, "topk") < 0)
        return -1;
    int64_t nseg, len, shape[PCS_MAX_DIMS];
    if (pcs_tensor_numel(x) == 0)
        return 1;
    PcsTensor *rows = pcs_rows_of(x, d, &nseg, &len);
    if (!rows)
        return -1;
    pcs_rows_shape(x, d, shape);
    if (x->ndim)
        shape[x->ndim - 1] = k;
    PcsTensor *v = pcs_tensor_empty(x->ndim, shape, x->dtype, x->device, false);
    PcsTensor *i = v ? pcs_tensor_empty(x->ndim, shape, PCS_INT64, x->device, false) : NULL;
    int r = -1;
    if (i) {
        sort_ctx c = {x->dtype, largest, 0, pcs_tensor_data(rows), pcs_tensor_data(v), pcs_tensor_data(i),
                      nseg, len, k};
        r = pcs_cub_run(x->device, "topk", x->dtype, topk_call, &c);
    }
    Py_DECREF(rows);
    if (r < 0) {
        Py_XDECREF(v);
        Py_XDECREF(i);
        return r == -2 ? 1 : -1; /* -2: declined (no exception): sort whole rows */
    }
    *vals = pcs_rows_restore(v, d);
    *idx = pcs_rows_restore(i, d);
    if (!*vals || !*idx) {
        Py_CLEAR(*vals);
        Py_CLEAR(*idx);
        return -1;
    }
    return 0;
}

/* topk(input, k, dim=-1, largest=True, sorted=True, *, out=None) */
static PyObject *topk_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "k", "dim", "largest", "sorted", "out", NULL};
    int base = self ? -1 : 0;
    if (pcs_check_kwargs(kw, "topk", names) < 0 || max_positional("topk", nargs, base + 5) < 0)
        return NULL;
    PcsTensor *x = pcs_input_arg(self, args, nargs, kw, "topk");
    if (!x)
        return NULL;
    PyObject *k_o = pcs_arg(args, nargs, kw, base + 1, "k");
    int64_t k;
    if (!k_o) {
        PyErr_SetString(PyExc_TypeError, "topk() missing required argument 'k' (pos 2)");
        return NULL;
    }
    if (pcs_int64_arg(k_o, &k) < 0)
        return NULL;
    int d = pcs_dim_arg(pcs_arg(args, nargs, kw, base + 2, "dim"), x->ndim, -1, "topk");
    int largest = d < 0 ? -1 : pcs_flag_arg(pcs_arg(args, nargs, kw, base + 3, "largest"), true);
    int sorted = largest < 0 ? -1 : pcs_flag_arg(pcs_arg(args, nargs, kw, base + 4, "sorted"), true);
    if (sorted < 0)
        return NULL;
    int64_t len = x->ndim ? x->sizes[d] : 1;
    if (k < 0 || k > len) {
        PyErr_SetString(PyExc_RuntimeError, "selected index k out of range");
        return NULL;
    }
    PcsTensor *v, *i;
    int fast = x->device >= 0 && k > 0 ? topk_cuda(x, d, k, largest, &v, &i) : 1;
    if (fast < 0)
        return NULL;
    if (fast == 0)
        return pcs_into_outs(pcs_values_indices(PCS_RT_TOPK, v, i), pcs_arg(args, nargs, kw, -1, "out"),
                             2, "topk");
    if (sort_dim(x, d, largest, true, true, &v, &i, "topk") < 0)
        return NULL;
    if (x->ndim) { /* the first k along d, contiguous */
        PcsTensor *parts[2] = {v, i};
        for (int p = 0; p < 2; p++) {
            int64_t sizes[PCS_MAX_DIMS];
            memcpy(sizes, parts[p]->sizes, sizeof sizes);
            sizes[d] = k;
            PcsTensor *nv = pcs_tensor_alias(parts[p], parts[p]->offset, parts[p]->ndim, sizes,
                                             parts[p]->strides);
            PcsTensor *c = nv ? pcs_tensor_contiguous(nv, false) : NULL;
            Py_XDECREF(nv);
            Py_SETREF(parts[p], c);
        }
        v = parts[0];
        i = parts[1];
    }
    return pcs_into_outs(pcs_values_indices(PCS_RT_TOPK, v, i), pcs_arg(args, nargs, kw, -1, "out"),
                         2, "topk");
}

/* mode of rows this long, when there are this few, takes CUB's device-wide
 * run-length encoding (pcs_mode_rows) instead of one thread a row. */
#define MODE_LONG_ROW 65536
#define MODE_FEW_ROWS 8

typedef struct {
    int dtype;
    const void *sorted;
    const int64_t *sidx;
    int64_t nseg, len;
    void *out;
    int64_t *out_idx;
} mode_ctx;

static int mode_call(const void *c, void *ws, size_t *bytes, cudaStream_t s)
{
    const mode_ctx *a = c;
    return pcs_mode_rows(a->dtype, a->sorted, a->sidx, a->nseg, a->len, a->out, a->out_idx, ws, bytes, s);
}

/* One (value, index) per row of x along d: kthvalue (k 0-based), median,
 * nanmedian, mode. Returns values and indices shaped [nseg]. */
static int pick_dim(int op, PcsTensor *x, int d, int64_t k, PcsTensor **vals, PcsTensor **idx,
                    const char *fname)
{
    static const char *const np_ops[] = {"kth", "median", "nanmedian", "mode"};
    *vals = *idx = NULL;
    if (check_sortable(x, fname) < 0)
        return -1;
    int64_t nseg, len, shape[PCS_MAX_DIMS];
    PcsTensor *rows = pcs_rows_of(x, d, &nseg, &len);
    if (!rows)
        return -1;
    PcsTensor *v = pcs_tensor_empty(1, &nseg, x->dtype, x->device, false);
    PcsTensor *i = v ? pcs_tensor_empty(1, &nseg, PCS_INT64, x->device, false) : NULL;
    PcsTensor *sv = NULL, *si = NULL;
    int r = i ? 0 : -1;
    if (r == 0 && nseg * len > 0 && x->device >= 0) {
        pcs_rows_shape(x, d, shape);
        sv = pcs_tensor_empty(x->ndim, shape, x->dtype, x->device, false);
        si = sv ? pcs_tensor_empty(x->ndim, shape, PCS_INT64, x->device, false) : NULL;
        r = si ? pcs_sort_block(rows, nseg, len, false, false, sv, si, fname) : -1;
        cudaStream_t s;
        if (r == 0 && op == PCS_PICK_MODE && len >= MODE_LONG_ROW && nseg <= MODE_FEW_ROWS) {
            mode_ctx c = {x->dtype, pcs_tensor_data(sv), pcs_tensor_data(si), nseg, len,
                          pcs_tensor_data(v), pcs_tensor_data(i)};
            r = pcs_cub_run(x->device, fname, x->dtype, mode_call, &c);
        } else {
            if (r == 0)
                r = pcs_launch_stream(x->device, &s);
            if (r == 0)
                r = pcs_cub_status(pcs_launch_sort_pick(op, x->dtype, pcs_tensor_data(sv),
                                                        pcs_tensor_data(si), nseg, len, k,
                                                        pcs_tensor_data(v), pcs_tensor_data(i), s),
                                   fname, x->dtype);
            if (r == 0)
                r = PCS_CHECK_LAUNCH(s, fname);
        }
    } else if (r == 0 && nseg * len > 0) {
        r = pcs_np_rows("pick_rows", rows, len, v, i, Py_BuildValue("sL", np_ops[op], (long long)k));
    }
    Py_XDECREF(sv);
    Py_XDECREF(si);
    Py_DECREF(rows);
    if (r < 0) {
        Py_XDECREF(v);
        Py_XDECREF(i);
        return -1;
    }
    *vals = v;
    *idx = i;
    return 0;
}

/* kthvalue(input, k, dim=-1, keepdim=False) / median, nanmedian,
 * mode(input, dim, keepdim=False). median and nanmedian without dim:
 * the value alone over the flattened input. */
static PyObject *pick_entry(int op, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kw)
{
    static const char *const fnames[] = {"kthvalue", "median", "nanmedian", "mode"};
    static const int rts[] = {PCS_RT_KTHVALUE, PCS_RT_MEDIAN, PCS_RT_NANMEDIAN, PCS_RT_MODE};
    static const char *const names_k[] = {"input", "k", "dim", "keepdim", "out", NULL};
    static const char *const names[] = {"input", "dim", "keepdim", "out", NULL};
    const char *fname = fnames[op];
    int base = self ? -1 : 0, shift = op == PCS_PICK_KTH;
    if (pcs_check_kwargs(kw, fname, shift ? names_k : names) < 0 ||
        max_positional(fname, nargs, base + 3 + shift) < 0)
        return NULL;
    PcsTensor *x = pcs_input_arg(self, args, nargs, kw, fname);
    if (!x)
        return NULL;
    int64_t k = 0;
    if (shift) {
        PyObject *k_o = pcs_arg(args, nargs, kw, base + 1, "k");
        if (!k_o) {
            PyErr_SetString(PyExc_TypeError, "kthvalue() missing required argument 'k' (pos 2)");
            return NULL;
        }
        if (pcs_int64_arg(k_o, &k) < 0)
            return NULL;
    }
    PyObject *dim_o = pcs_arg(args, nargs, kw, base + 1 + shift, "dim");
    PyObject *out = pcs_arg(args, nargs, kw, -1, "out");
    bool whole = (op == PCS_PICK_MEDIAN || op == PCS_PICK_NANMEDIAN) && (!dim_o || dim_o == Py_None);
    if (whole) { /* the flattened input, one value */
        if (check_sortable(x, fname) < 0)
            return NULL;
        int64_t n = pcs_tensor_numel(x);
        if (n == 0) {
            if (!pcs_is_float(x->dtype)) {
                PyErr_Format(PyExc_IndexError, "%s(): Expected reduction dim to be specified for input.numel() == 0.", fname);
                return NULL;
            }
            PcsTensor *e = pcs_tensor_empty(0, NULL, x->dtype, x->device, false);
            PyObject *nan = e ? PyFloat_FromDouble(NAN) : NULL;
            int r = nan ? pcs_tensor_fill(e, nan) : -1;
            Py_XDECREF(nan);
            if (r < 0) {
                Py_XDECREF(e);
                return NULL;
            }
            return pcs_into_outs((PyObject *)e, out, 1, fname);
        }
        PcsTensor *flat = pcs_tensor_reshape(x, 1, &n), *v, *i;
        if (!flat)
            return NULL;
        int r = pick_dim(op, flat, 0, 0, &v, &i, fname);
        if (r < 0) {
            Py_DECREF(flat);
            return NULL;
        }
        Py_DECREF(i);
        v = pcs_rows_reduced(v, flat, 0, false);
        Py_DECREF(flat);
        return pcs_into_outs((PyObject *)v, out, 1, fname);
    }
    int d = pcs_dim_arg(dim_o, x->ndim, -1, fname);
    int keepdim = d < 0 ? -1 : pcs_flag_arg(pcs_arg(args, nargs, kw, base + 2 + shift, "keepdim"), false);
    if (keepdim < 0)
        return NULL;
    int64_t len = x->ndim ? x->sizes[d] : 1;
    if (shift) {
        if (k < 1 || k > len) {
            PyErr_Format(PyExc_IndexError, "kthvalue(): selected number k out of range for dimension %d", d);
            return NULL;
        }
        k -= 1;
    } else if (len == 0) {
        PyErr_Format(PyExc_IndexError, "%s(): Expected reduction dim %d to have non-zero size.", fname, d);
        return NULL;
    }
    PcsTensor *v, *i;
    if (pick_dim(op, x, d, k, &v, &i, fname) < 0)
        return NULL;
    v = pcs_rows_reduced(v, x, d, keepdim);
    i = pcs_rows_reduced(i, x, d, keepdim);
    return pcs_into_outs(pcs_values_indices(rts[op], v, i), out, 2, fname);
}

/* ------------------------------------------------------------------------ */
/* Tables                                                                    */

PCS_OP_PAIR(sort, sort_entry(self, a, n, kw, 0))
PCS_OP_PAIR(argsort, sort_entry(self, a, n, kw, 1))
PCS_OP_PAIR(msort, sort_entry(self, a, n, kw, 2))
PCS_OP_PAIR(topk, topk_entry(self, a, n, kw))
PCS_OP_PAIR(kthvalue, pick_entry(PCS_PICK_KTH, self, a, n, kw))
PCS_OP_PAIR(median, pick_entry(PCS_PICK_MEDIAN, self, a, n, kw))
PCS_OP_PAIR(nanmedian, pick_entry(PCS_PICK_NANMEDIAN, self, a, n, kw))
PCS_OP_PAIR(mode, pick_entry(PCS_PICK_MODE, self, a, n, kw))

#define SORT_LIST(X)                                                                              \
    X(sort, "Sorted values and their indices along dim (stable; NaN last).")                     \
    X(argsort, "Indices that sort along dim.")                                                   \
    X(msort, "Values sorted along dim 0.")                                                       \
    X(topk, "The k largest (or smallest) values along dim, and their indices.")                 \
    X(kthvalue, "The k-th smallest value along dim, and its index.")                             \
    X(median, "Lower median (NaN if any); with dim, (values, indices).")                         \
    X(nanmedian, "Lower median ignoring NaN; with dim, (values, indices).")                      \
    X(mode, "Most frequent value along dim (the smallest among ties), and an index.")

PyMethodDef pcs_ops_sort_tmethods[] = {SORT_LIST(PCS_T_ENTRY){NULL, NULL, 0, NULL}};
PyMethodDef pcs_ops_sort_functions[] = {SORT_LIST(PCS_F_ENTRY){NULL, NULL, 0, NULL}};

static PyStructSequence_Field vi_fields[] = {
    {"values", "the values"}, {"indices", "their indices along dim"}, {NULL, NULL}};

int pcs_ops_sort_init(PyObject *m)
{
    static char type_names[PCS_RT_COUNT][48];
    static PyStructSequence_Desc descs[PCS_RT_COUNT];
    for (int i = 0; i < PCS_RT_COUNT; i++) {
        if (rt_types[i])
            continue;
        snprintf(type_names[i], sizeof type_names[i], "pycuda_sem.return_types.%s", rt_names[i]);
        descs[i] = (PyStructSequence_Desc){type_names[i], "(values, indices)", vi_fields, 2};
        if (!(rt_types[i] = pcs_return_type_new(&descs[i])))
            return -1;
    }
    for (int i = 0; i < PCS_RT_COUNT; i++) {
        char attr[48];
        snprintf(attr, sizeof attr, "_return_types_%s", rt_names[i]);
        if (PyModule_AddObjectRef(m, attr, (PyObject *)rt_types[i]) < 0)
            return -1;
    }
    return 0;
}
