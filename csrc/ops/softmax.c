/* softmax.c: softmax and log_softmax along one dim (torch.*, Tensor.*; the
 * nn.functional forms are Python over these).
 *
 * dtype= casts the input first (torch's softmax(x.half(), dtype=float32)
 * computes in float32). Only floating dtypes compute. On CUDA the input is
 * presented to kernels/softmax.cu as a contiguous [A, K, B] block (copied
 * to contiguous first when it is not): a warp or a block per row when the
 * dim is the last (B == 1), a thread per line across B otherwise. On the
 * CPU NumPy computes on zero-copy views (pycuda_sem/_ops.py), float16 and
 * bfloat16 in float32. _softmax_backward is autograd's one-kernel gradient
 * on CUDA (kernels/softmax_bwd.cu). */
#include "ops/ops.h"

#include <string.h>

#include "kernels/kernels.h"
#include "runtime/device.h"
#include "runtime/stream.h"
#include "tensor/copy.h"

#define T(o) ((PcsTensor *)(o))

/* t's shape seen as [A, K, B] around dim (K = 1 for a 0-dim t). */
static void around_dim(const PcsTensor *t, int dim, int64_t *A, int64_t *K, int64_t *B)
{
    *A = *B = 1;
    *K = t->ndim ? t->sizes[dim] : 1;
    for (int i = 0; i < t->ndim; i++) {
        if (i < dim)
            *A *= t->sizes[i];
        else if (i > dim)
            *B *= t->sizes[i];
    }
}

static int softmax_cuda(PcsTensor *x, int dim, bool log, PcsTensor *res)
{
    PcsTensor *c = pcs_tensor_contiguous(x, false);
    if (!c)
        return -1;
    int64_t A, K, B;
    around_dim(c, dim, &A, &K, &B);
    PcsTensor *ws = NULL;
    int r = pcs_cuda_set_device_raw(c->device);
    if (r == 0) {
        /* a few long rows split over blocks: their partial (max, sum) pairs */
        int64_t wb = (int64_t)pcs_softmax_workspace(c->dtype, A, K, B);
        if (wb > 0 && !(ws = pcs_tensor_empty(1, &wb, PCS_UINT8, c->device, false)))
            r = -1;
    }
    if (r == 0) {
        cudaStream_t st = pcs_current_stream(c->device);
        const char *name = log ? "log_softmax" : "softmax";
        if (pcs_launch_softmax(c->dtype, log, pcs_tensor_data(res), pcs_tensor_data(c), A, K, B,
                               ws ? pcs_tensor_data(ws) : NULL, st) < 0) {
            pcs_not_implemented(name, c->dtype);
            r = -1;
        } else {
            r = PCS_CHECK_LAUNCH(st, name);
        }
    }
    Py_XDECREF(ws);
    Py_DECREF(c);
    return r;
}

static int softmax_cpu(PcsTensor *x, int dim, bool log, PcsTensor *res)
{
    PyObject *fn = pcs_ops_numpy_fn("softmax");
    if (!fn || pcs_ops_check_cpu_size(x) < 0)
        return -1;
    PcsTensor *tmp = NULL, *target = res;
    if (pcs_ops_cpu_dtype(res->dtype) != res->dtype) { /* bfloat16: through float32 */
        if (!(tmp = pcs_tensor_empty(res->ndim, res->sizes, pcs_ops_cpu_dtype(res->dtype), -1, false)))
            return -1;
        target = tmp;
    }
    PyObject *xa = pcs_ops_numpy_in(x, x->dtype), *oa = xa ? pcs_tensor_numpy(target) : NULL;
    PyObject *rr = oa ? PyObject_CallFunction(fn, "OOii", oa, xa, x->ndim ? dim : 0, (int)log) : NULL;
    int r = rr ? 0 : -1;
    if (r == 0 && tmp)
        r = pcs_copy(res, tmp, false);
    Py_XDECREF(rr);
    Py_XDECREF(oa);
    Py_XDECREF(xa);
    Py_XDECREF(tmp);
    return r;
}

/* softmax / log_softmax(input, dim, dtype=None, *, out=None) */
static PyObject *softmax_entry(bool log, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kw)
{
    const char *fname = log ? "log_softmax" : "softmax";
    static const char *const names[] = {"input", "dim", "dtype", "out", NULL};
    if (pcs_check_kwargs(kw, fname, names) < 0)
        return NULL;
    int base = self ? -1 : 0;
    PyObject *xo = self ? self : pcs_arg(args, nargs, kw, 0, "input");
    if (!xo || !PcsTensor_Check(xo)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'input' (position 1) must be Tensor", fname);
        return NULL;
    }
    PcsTensor *x = T(xo);
    PyObject *dobj = pcs_arg(args, nargs, kw, base + 1, "dim");
    if (!dobj || dobj == Py_None) {
        PyErr_Format(PyExc_TypeError, "%s() missing required argument 'dim'", fname);
        return NULL;
    }
    int64_t d64;
    PyObject *out;
    if (pcs_int64_arg(dobj, &d64) < 0 || pcs_out_arg(pcs_arg(args, nargs, kw, -1, "out"), &out) < 0)
        return NULL;
    int dt = pcs_dtype_arg(pcs_arg(args, nargs, kw, base + 2, "dtype"), -1);
    if (dt == -2)
        return NULL;
    if (dt < 0)
        dt = x->dtype;
    if (!pcs_is_float(dt))
        return pcs_not_implemented(log ? "log_softmax_lastdim_kernel_impl" : "softmax_lastdim_kernel_impl", dt);
    int dim = pcs_wrap_dim(d64, x->ndim);
    if (dim < 0)
        return NULL;
    if (out) {
        PcsTensor *o = T(out);
        if (o->device != x->device || o->ndim != x->ndim ||
            memcmp(o->sizes, x->sizes, x->ndim * sizeof(int64_t)) != 0 || o->dtype != dt) {
            PyErr_Format(PyExc_RuntimeError,
                         "%s(): out= must be on the input's device with its shape and the result's "
                         "dtype %s (no resizing)",
                         fname, pcs_dtypes[dt].legacy);
            return NULL;
        }
    }
    PcsTensor *xc = pcs_tensor_to(x, dt, x->device, false, false, false);
    if (!xc)
        return NULL;
    PcsTensor *res = pcs_tensor_empty(x->ndim, x->sizes, dt, x->device, false);
    int r = res ? 0 : -1;
    if (r == 0 && pcs_tensor_numel(res))
        r = x->device >= 0 ? softmax_cuda(xc, dim, log, res) : softmax_cpu(xc, dim, log, res);
    Py_DECREF(xc);
    if (r == 0 && out) {
        r = pcs_copy(T(out), res, false);
        Py_DECREF(res);
        return r < 0 ? NULL : Py_NewRef(out);
    }
    if (r < 0) {
        Py_XDECREF(res);
        return NULL;
    }
    return (PyObject *)res;
}

/* _softmax_backward(grad, output, dim, log): the gradient of softmax (log
 * false) or log_softmax (log true) from the op's output, along dim of CUDA
 * tensors, in one kernel. autograd's formula calls it when grad mode is off
 * during backward and composes the gradient from differentiable ops
 * otherwise (create_graph, the CPU). */
static PyObject *f_softmax_backward(PyObject *m, PyObject *const *a, Py_ssize_t na, PyObject *kw)
{
    PCS_UNUSED(m);
    const char *fname = "_softmax_backward";
    static const char *const names[] = {"grad", "output", "dim", "log", NULL};
    if (pcs_check_kwargs(kw, fname, names) < 0)
        return NULL;
    PyObject *go = pcs_arg(a, na, kw, 0, "grad"), *yo = pcs_arg(a, na, kw, 1, "output");
    PyObject *dobj = pcs_arg(a, na, kw, 2, "dim"), *lo = pcs_arg(a, na, kw, 3, "log");
    if (!go || !yo || !dobj || !lo || !PcsTensor_Check(go) || !PcsTensor_Check(yo)) {
        PyErr_Format(PyExc_TypeError, "%s(grad, output, dim, log): grad and output must be Tensors", fname);
        return NULL;
    }
    PcsTensor *g = T(go), *y = T(yo);
    int64_t d64;
    if (pcs_int64_arg(dobj, &d64) < 0)
        return NULL;
    const int log = PyObject_IsTrue(lo);
    if (log < 0)
        return NULL;
    if (y->device < 0 || g->device != y->device) {
        PyErr_Format(PyExc_RuntimeError, "%s(): grad and output must be CUDA tensors on one device", fname);
        return NULL;
    }
    if (g->dtype != y->dtype || !pcs_is_float(y->dtype)) {
        PyErr_Format(PyExc_RuntimeError, "%s(): grad and output must share a floating dtype (got %s and %s)",
                     fname, pcs_dtypes[g->dtype].legacy, pcs_dtypes[y->dtype].legacy);
        return NULL;
    }
    if (g->ndim != y->ndim || memcmp(g->sizes, y->sizes, y->ndim * sizeof(int64_t)) != 0) {
        PyErr_Format(PyExc_RuntimeError, "%s(): grad and output must have the same shape", fname);
        return NULL;
    }
    const int dim = pcs_wrap_dim(d64, y->ndim);
    if (dim < 0)
        return NULL;
    PcsTensor *gc = pcs_tensor_contiguous(g, false), *yc = gc ? pcs_tensor_contiguous(y, false) : NULL;
    PcsTensor *res = yc ? pcs_tensor_empty(y->ndim, y->sizes, y->dtype, y->device, false) : NULL;
    int r = res ? 0 : -1;
    const int64_t n = res ? pcs_tensor_numel(res) : 0;
    if (r == 0 && n && (r = pcs_cuda_set_device_raw(y->device)) == 0) {
        int64_t A, K, B;
        around_dim(y, dim, &A, &K, &B);
        cudaStream_t st = pcs_current_stream(y->device);
        if (pcs_launch_softmax_backward(y->dtype, log, pcs_tensor_data(res), pcs_tensor_data(gc),
                                        pcs_tensor_data(yc), A, K, B, st) < 0) {
            pcs_not_implemented(fname, y->dtype);
            r = -1;
        } else {
            r = PCS_CHECK_LAUNCH(st, fname);
        }
    }
    Py_XDECREF(gc);
    Py_XDECREF(yc);
    if (r < 0) {
        Py_XDECREF(res);
        return NULL;
    }
    return (PyObject *)res;
}

PCS_OP_PAIR(softmax, softmax_entry(false, self, a, n, kw))
PCS_OP_PAIR(log_softmax, softmax_entry(true, self, a, n, kw))

#define FK PCS_FK
#define FN(f) PCS_FN(f)

PyMethodDef pcs_ops_softmax_tmethods[] = {
    {"softmax", FN(m_softmax), FK,
     "softmax(dim, dtype=None)\n\nexp(x) / sum(exp(x)) along dim, computed stably."},
    {"log_softmax", FN(m_log_softmax), FK,
     "log_softmax(dim, dtype=None)\n\nx - logsumexp(x) along dim."},
    {NULL, NULL, 0, NULL},
};

PyMethodDef pcs_ops_softmax_functions[] = {
    {"softmax", FN(f_softmax), FK,
     "softmax(input, dim, dtype=None, *, out=None)\n\nexp(x) / sum(exp(x)) along dim "
     "(dtype= casts the input first)."},
    {"log_softmax", FN(f_log_softmax), FK,
     "log_softmax(input, dim, dtype=None, *, out=None)\n\nx - logsumexp(x) along dim."},
    {"_softmax_backward", FN(f_softmax_backward), FK,
     "_softmax_backward(grad, output, dim, log)\n\nThe gradient of softmax or log_softmax from its "
     "output, along dim of CUDA tensors, in one kernel."},
    {NULL, NULL, 0, NULL},
};
