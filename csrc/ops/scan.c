/* scan.c: cummax, cummin (values and int64 indices) and logcumsumexp along
 * any dim, as module functions and Tensor methods.
 *
 * The input becomes rows (sort.h: the dim last, contiguous), scanned by
 * scan.cu on CUDA (one cub::DeviceScan::InclusiveScanByKey over every row)
 * or by NumPy on the CPU (pycuda_sem/_ops.py), then put back in the input's
 * dim order. torch's rules: a later element wins ties (so the index is the
 * last one reaching the running extreme), NaN propagates with the index of
 * the latest NaN; logcumsumexp takes floating inputs only (integers raise,
 * as torch's "not implemented for 'Long'"). (cumsum and cumprod live with
 * the reductions, ops_reduce.c.) */
#include "ops/sort.h"

#include "tensor/copy.h"

typedef struct {
    int op, dtype;
    const void *in;
    void *out;
    int64_t *idx;
    int64_t nseg, len;
} scan_ctx;

static int scan_call(const void *c, void *ws, size_t *bytes, cudaStream_t s)
{
    const scan_ctx *a = c;
    return pcs_scan_rows(a->op, a->dtype, a->in, a->out, a->idx, a->nseg, a->len, ws, bytes, s);
}

static int scan_rows_run(int op, PcsTensor *rows, int64_t nseg, int64_t len, PcsTensor *v,
                         PcsTensor *i, const char *fname)
{
    if (nseg * len == 0)
        return 0;
    if (rows->device >= 0) {
        scan_ctx c = {op, rows->dtype, pcs_tensor_data(rows), pcs_tensor_data(v),
                      i ? pcs_tensor_data(i) : NULL, nseg, len};
        return pcs_cub_run(rows->device, fname, rows->dtype, scan_call, &c);
    }
    return pcs_np_rows("scan_rows", rows, len, v, i, Py_BuildValue("(s)", fname));
}

int pcs_cumsum_dim(bool prod, PcsTensor *src, int d, PcsTensor *out)
{
    int64_t nseg, len;
    if (src->dtype == PCS_BOOL || pcs_is_complex(src->dtype) || src->ndim == 0)
        return -2;
    len = src->sizes[d];
    nseg = len ? pcs_tensor_numel(src) / len : 0;
    if (nseg == 0 || nseg > 32 || len < 4096)
        return -2;
    bool inner = d == src->ndim - 1;
    int64_t shape[PCS_MAX_DIMS];
    PcsTensor *rows = inner ? (PcsTensor *)Py_NewRef(src) : pcs_rows_of(src, d, &nseg, &len);
    pcs_rows_shape(src, d, shape);
    PcsTensor *dst = !rows ? NULL
                     : inner ? (PcsTensor *)Py_NewRef(out)
                             : pcs_tensor_empty(src->ndim, shape, src->dtype, src->device, false);
    int r = -1;
    if (dst) {
        scan_ctx c = {prod ? PCS_SCAN_CUMPROD : PCS_SCAN_CUMSUM, src->dtype, pcs_tensor_data(rows),
                      pcs_tensor_data(dst), NULL, nseg, len};
        r = pcs_cub_run(src->device, prod ? "cumprod" : "cumsum", src->dtype, scan_call, &c);
    }
    if (r == 0 && !inner) { /* back to out's layout */
        PcsTensor *back = pcs_rows_restore((PcsTensor *)Py_NewRef(dst), d);
        r = back ? pcs_copy(out, back, false) : -1;
        Py_XDECREF(back);
    }
    Py_XDECREF(rows);
    Py_XDECREF(dst);
    return r;
}

/* cummax / cummin / logcumsumexp(input, dim, *, out=None) */
static PyObject *scan_entry(int op, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kw)
{
    static const char *const fnames[] = {"cummax", "cummin", "logcumsumexp"};
    static const char *const names[] = {"input", "dim", "out", NULL};
    const char *fname = fnames[op];
    int base = self ? -1 : 0;
    if (pcs_check_kwargs(kw, fname, names) < 0)
        return NULL;
    if (nargs > base + 2) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %d positional arguments (%zd given)", fname,
                     base + 2, nargs);
        return NULL;
    }
    PcsTensor *x = pcs_input_arg(self, args, nargs, kw, fname);
    if (!x)
        return NULL;
    PyObject *dim_o = pcs_arg(args, nargs, kw, base + 1, "dim");
    if (!dim_o) {
        PyErr_Format(PyExc_TypeError, "%s() missing required argument 'dim' (pos 2)", fname);
        return NULL;
    }
    int d = pcs_dim_arg(dim_o, x->ndim, 0, fname);
    if (d < 0)
        return NULL;
    if (pcs_is_complex(x->dtype) || (op == PCS_SCAN_LOGCUMSUMEXP && !pcs_is_float(x->dtype)))
        return pcs_not_implemented(fname, x->dtype);
    int64_t nseg, len, shape[PCS_MAX_DIMS];
    PcsTensor *rows = pcs_rows_of(x, d, &nseg, &len);
    if (!rows)
        return NULL;
    pcs_rows_shape(x, d, shape);
    bool pairs = op != PCS_SCAN_LOGCUMSUMEXP;
    PcsTensor *v = pcs_tensor_empty(x->ndim, shape, x->dtype, x->device, false);
    PcsTensor *i = v && pairs ? pcs_tensor_empty(x->ndim, shape, PCS_INT64, x->device, false) : NULL;
    int r = v && (i || !pairs) ? scan_rows_run(op, rows, nseg, len, v, i, fname) : -1;
    Py_DECREF(rows);
    if (r < 0) {
        Py_XDECREF(v);
        Py_XDECREF(i);
        return NULL;
    }
    v = pcs_rows_restore(v, d);
    PyObject *out = pcs_arg(args, nargs, kw, -1, "out");
    if (!pairs)
        return pcs_into_outs((PyObject *)v, out, 1, fname);
    i = pcs_rows_restore(i, d);
    return pcs_into_outs(pcs_values_indices(op == PCS_SCAN_CUMMAX ? PCS_RT_CUMMAX : PCS_RT_CUMMIN, v, i),
                         out, 2, fname);
}

PCS_OP_PAIR(cummax, scan_entry(PCS_SCAN_CUMMAX, self, a, n, kw))
PCS_OP_PAIR(cummin, scan_entry(PCS_SCAN_CUMMIN, self, a, n, kw))
PCS_OP_PAIR(logcumsumexp, scan_entry(PCS_SCAN_LOGCUMSUMEXP, self, a, n, kw))

#define SCAN_LIST(X)                                                                              \
    X(cummax, "Running maximum along dim, and the index where it was reached.")                 \
    X(cummin, "Running minimum along dim, and the index where it was reached.")                 \
    X(logcumsumexp, "log(cumsum(exp(x))) along dim, computed stably.")

PyMethodDef pcs_ops_scan_tmethods[] = {SCAN_LIST(PCS_T_ENTRY){NULL, NULL, 0, NULL}};
PyMethodDef pcs_ops_scan_functions[] = {SCAN_LIST(PCS_F_ENTRY){NULL, NULL, 0, NULL}};
