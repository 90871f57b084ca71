/* search.c: searchsorted and bucketize, as module functions (torch has no
 * Tensor methods for them).
 *
 * torch's binary search (Bucketization.cuh: a NaN sorts past every number)
 * over the innermost dim of the sorted sequence, 1-D or one row per leading
 * index of the values: on CUDA a kernel of sort.cu (no library has a batched
 * search), on the CPU the same search vectorised in NumPy
 * (pycuda_sem/_ops.py). The two operands promote to one dtype. A sorter is
 * checked on the host to lie inside the row (the host waits for the device
 * then), so no search reads outside it. */
#include "ops/sort.h"

#include <string.h>

#include "tensor/copy.h"

/* ------------------------------------------------------------------------ */
/* searchsorted / bucketize                                                  */

static void shape_str(const PcsTensor *t, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < t->ndim && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, i ? ", %lld" : "%lld", (long long)t->sizes[i]);
    if (k < n)
        snprintf(buf + k, n - k, "]");
}

/* The values argument: a tensor, or a number made a 0-dim tensor on seq's device. */
static PcsTensor *values_arg(PyObject *v, const PcsTensor *seq, const char *fname)
{
    if (v && PcsTensor_Check(v))
        return (PcsTensor *)Py_NewRef(v);
    if (v && (PyLong_Check(v) || PyFloat_Check(v) || PyBool_Check(v)))
        return pcs_tensor_from_data(v, -1, seq->device, false);
    PyErr_Format(PyExc_TypeError, "%s(): argument 'input' must be Tensor or Number, not %.100s", fname,
                 v ? Py_TYPE(v)->tp_name : "nothing");
    return NULL;
}

static PyObject *search_run(PcsTensor *seq, PcsTensor *vals0, PyObject *sorter_o, bool right,
                            bool out_int32, PyObject *out, const char *fname)
{
    char a[160], b[160];
    if (seq->ndim == 0) {
        PyErr_Format(PyExc_RuntimeError, "%s(): boundaries tensor should have positive dimension, but got 0 dimension", fname);
        return NULL;
    }
    bool one_d = seq->ndim == 1;
    if (!one_d && (vals0->ndim != seq->ndim ||
                   memcmp(vals0->sizes, seq->sizes, (seq->ndim - 1) * sizeof(int64_t)) != 0)) {
        shape_str(seq, a, sizeof a);
        shape_str(vals0, b, sizeof b);
        PyErr_Format(PyExc_RuntimeError,
                     "%s(): boundaries tensor should be 1 dimension or the first N-1 dimensions of "
                     "boundaries tensor and input value tensor must match, but we got boundaries "
                     "tensor %s and input value tensor %s", fname, a, b);
        return NULL;
    }
    if (seq->device != vals0->device) {
        PyErr_Format(PyExc_RuntimeError, "Expected all tensors to be on the same device, but found at "
                     "least two devices (%s(): boundaries and input)", fname);
        return NULL;
    }
    PcsTensor *sorter = NULL;
    if (sorter_o && sorter_o != Py_None) {
        if (!PcsTensor_Check(sorter_o)) {
            PyErr_Format(PyExc_TypeError, "%s(): argument 'sorter' must be Tensor", fname);
            return NULL;
        }
        sorter = (PcsTensor *)sorter_o;
        if (sorter->dtype != PCS_INT64) {
            PyErr_Format(PyExc_RuntimeError, "%s(): sorter must be a tensor of long dtype but it got %s",
                         fname, pcs_dtypes[sorter->dtype].legacy);
            return NULL;
        }
        if (sorter->ndim != seq->ndim || memcmp(sorter->sizes, seq->sizes, seq->ndim * sizeof(int64_t)) != 0) {
            shape_str(seq, a, sizeof a);
            shape_str(sorter, b, sizeof b);
            PyErr_Format(PyExc_RuntimeError, "%s(): boundary and sorter must have the same size, but got "
                         "boundary tensor %s and got sorter tensor %s", fname, a, b);
            return NULL;
        }
        if (sorter->device != seq->device) {
            PyErr_Format(PyExc_RuntimeError, "Expected all tensors to be on the same device (%s(): sorter)", fname);
            return NULL;
        }
        int64_t lo = 0, hi = 0, len = seq->sizes[seq->ndim - 1];
        if (pcs_tensor_numel(sorter) &&
            (pcs_reduced_int(sorter, "min", &lo) < 0 || pcs_reduced_int(sorter, "max", &hi) < 0))
            return NULL;
        if (lo < 0 || hi >= len) { /* never read outside a row, on either device */
            PyErr_Format(PyExc_RuntimeError, "%s(): sorter index out of range", fname);
            return NULL;
        }
    }
    pcs_operand ops[2];
    if (pcs_operand_from((PyObject *)seq, &ops[0]) != 0 || pcs_operand_from((PyObject *)vals0, &ops[1]) != 0)
        return NULL;
    int dt = pcs_result_type(ops, 2);
    if (dt < 0)
        return NULL;
    if (pcs_is_complex(dt))
        return pcs_not_implemented(fname, dt);
    PcsTensor *s0 = pcs_tensor_to(seq, dt, seq->device, false, false, false);
    PcsTensor *sc = s0 ? pcs_tensor_contiguous(s0, false) : NULL;
    PcsTensor *v0 = sc ? pcs_tensor_to(vals0, dt, vals0->device, false, false, false) : NULL;
    PcsTensor *vc = v0 ? pcs_tensor_contiguous(v0, false) : NULL;
    PcsTensor *so = vc && sorter ? pcs_tensor_contiguous(sorter, false) : NULL;
    Py_XDECREF(s0);
    Py_XDECREF(v0);
    PcsTensor *res = vc && (so || !sorter)
                         ? pcs_tensor_empty(vals0->ndim, vals0->sizes, out_int32 ? PCS_INT32 : PCS_INT64,
                                            vals0->device, false)
                         : NULL;
    int r = res ? 0 : -1;
    int64_t len = seq->sizes[seq->ndim - 1], n = vc ? pcs_tensor_numel(vc) : 0;
    int64_t seq_rows = one_d ? 1 : (len ? pcs_tensor_numel(seq) / len : 0);
    int64_t per_row = vals0->ndim ? vals0->sizes[vals0->ndim - 1] : 1;
    if (r == 0 && n && vals0->device >= 0) {
        cudaStream_t s;
        r = pcs_launch_stream(vals0->device, &s);
        if (r == 0)
            r = pcs_cub_status(pcs_launch_searchsorted(dt, pcs_tensor_data(sc), so ? pcs_tensor_data(so) : NULL,
                                                       seq_rows, len, pcs_tensor_data(vc), n, per_row, right,
                                                       out_int32, pcs_tensor_data(res), s),
                               fname, dt);
        if (r == 0)
            r = PCS_CHECK_LAUNCH(s, fname);
    } else if (r == 0 && n) {
        PyObject *sa = pcs_ops_numpy_in(sc, dt);
        PyObject *oa = sa && so ? pcs_tensor_numpy(so) : sa ? Py_NewRef(Py_None) : NULL;
        PyObject *va = oa ? pcs_ops_numpy_in(vc, dt) : NULL;
        PyObject *ra = va ? pcs_tensor_numpy(res) : NULL;
        PyObject *rr = ra ? pcs_np_call("searchsorted_rows",
                                        Py_BuildValue("OOOLLOO", sa, oa, va, (long long)len, (long long)per_row,
                                                      right ? Py_True : Py_False, ra))
                          : NULL;
        r = rr ? 0 : -1;
        Py_XDECREF(rr);
        Py_XDECREF(sa);
        Py_XDECREF(oa);
        Py_XDECREF(va);
        Py_XDECREF(ra);
    }
    Py_XDECREF(sc);
    Py_XDECREF(vc);
    Py_XDECREF(so);
    if (r < 0) {
        Py_XDECREF(res);
        return NULL;
    }
    return pcs_into_outs((PyObject *)res, out, 1, fname);
}

/* searchsorted(sorted_sequence, input, *, out_int32=False, right=False,
 * side=None, out=None, sorter=None) */
static PyObject *searchsorted_entry(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    PCS_UNUSED(m);
    static const char *const names[] = {"sorted_sequence", "input", "self", "out_int32", "right", "side",
                                        "out", "sorter", NULL};
    const char *fname = "searchsorted";
    if (pcs_check_kwargs(kw, fname, names) < 0)
        return NULL;
    if (nargs > 2) {
        PyErr_SetString(PyExc_TypeError, "searchsorted() takes 2 positional arguments");
        return NULL;
    }
    PyObject *seq_o = pcs_arg(args, nargs, kw, 0, "sorted_sequence");
    if (!seq_o || !PcsTensor_Check(seq_o)) {
        PyErr_SetString(PyExc_TypeError, "searchsorted(): argument 'sorted_sequence' must be Tensor");
        return NULL;
    }
    PcsTensor *seq = (PcsTensor *)seq_o;
    PyObject *v_o = pcs_arg(args, nargs, kw, 1, "input");
    if (!v_o)
        v_o = pcs_arg(args, nargs, kw, -1, "self");
    int i32 = pcs_flag_arg(pcs_arg(args, nargs, kw, -1, "out_int32"), false);
    PyObject *right_o = pcs_arg(args, nargs, kw, -1, "right");
    int right = i32 < 0 ? -1 : pcs_flag_arg(right_o, false);
    if (right < 0)
        return NULL;
    PyObject *side = pcs_arg(args, nargs, kw, -1, "side");
    if (side && side != Py_None) {
        int is_right = PyUnicode_Check(side) ? PyUnicode_CompareWithASCIIString(side, "right") == 0 : -1;
        int is_left = PyUnicode_Check(side) ? PyUnicode_CompareWithASCIIString(side, "left") == 0 : -1;
        if (!is_right && !is_left) {
            PyErr_Format(PyExc_RuntimeError, "torch.searchsorted(): side can only be 'left' or 'right' but got %U", side);
            return NULL;
        }
        if (is_left == -1) {
            PyErr_SetString(PyExc_TypeError, "searchsorted(): argument 'side' must be str");
            return NULL;
        }
        if (right_o && right_o != Py_None && right != is_right) {
            PyErr_Format(PyExc_RuntimeError, "torch.searchsorted(): side and right can't be set to opposites, "
                         "got side of %s while right was %s", is_right ? "right" : "left",
                         right ? "True" : "False");
            return NULL;
        }
        right = is_right;
    }
    PcsTensor *vals = values_arg(v_o, seq, fname);
    if (!vals)
        return NULL;
    PyObject *r = search_run(seq, vals, pcs_arg(args, nargs, kw, -1, "sorter"), right, i32,
                             pcs_arg(args, nargs, kw, -1, "out"), fname);
    Py_DECREF(vals);
    return r;
}

/* bucketize(input, boundaries, *, out_int32=False, right=False, out=None) */
static PyObject *bucketize_entry(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    PCS_UNUSED(m);
    static const char *const names[] = {"input", "boundaries", "out_int32", "right", "out", NULL};
    if (pcs_check_kwargs(kw, "bucketize", names) < 0)
        return NULL;
    if (nargs > 2) {
        PyErr_SetString(PyExc_TypeError, "bucketize() takes 2 positional arguments");
        return NULL;
    }
    PyObject *b_o = pcs_arg(args, nargs, kw, 1, "boundaries");
    if (!b_o || !PcsTensor_Check(b_o)) {
        PyErr_SetString(PyExc_TypeError, "bucketize(): argument 'boundaries' must be Tensor");
        return NULL;
    }
    PcsTensor *bnd = (PcsTensor *)b_o;
    if (bnd->ndim != 1) {
        PyErr_Format(PyExc_RuntimeError, "boundaries tensor must be 1 dimension, but got dim(%d)", bnd->ndim);
        return NULL;
    }
    int i32 = pcs_flag_arg(pcs_arg(args, nargs, kw, -1, "out_int32"), false);
    int right = i32 < 0 ? -1 : pcs_flag_arg(pcs_arg(args, nargs, kw, -1, "right"), false);
    if (right < 0)
        return NULL;
    PcsTensor *vals = values_arg(pcs_arg(args, nargs, kw, 0, "input"), bnd, "bucketize");
    if (!vals)
        return NULL;
    PyObject *r = search_run(bnd, vals, NULL, right, i32, pcs_arg(args, nargs, kw, -1, "out"), "bucketize");
    Py_DECREF(vals);
    return r;
}

PyMethodDef pcs_ops_search_functions[] = {
    {"searchsorted", PCS_FN(searchsorted_entry), PCS_FK, "Indices where values would be inserted into sorted rows."},
    {"bucketize", PCS_FN(bucketize_entry), PCS_FK, "Bucket index of each value among 1-D boundaries."},
    {NULL, NULL, 0, NULL},
};
