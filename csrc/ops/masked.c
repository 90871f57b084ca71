/* masked.c: the boolean-mask ops: masked_fill(_), masked_select,
 * masked_scatter(_), nonzero (as_tuple=), argwhere, and one-argument
 * where(cond).
 *
 * masked_fill is torch.where(mask, value, self) in self's dtype, written in
 * place through the elementwise front door. masked_select and
 * masked_scatter are the mask forms of x[mask] and x[mask] = v (index.c);
 * on CUDA, masked_select of dense operands packs the selected elements in
 * one cub::DeviceSelect::Flagged pass. nonzero on CUDA is one
 * DeviceSelect::Flagged over positions (index_exec.c) and must read the
 * count back, so it synchronises, as torch's does. */
#include "ops/index.h"

#include <string.h>

#include "kernels/kernels.h"
#include "runtime/device.h"
#include "runtime/stream.h"
#include "tensor/copy.h"

#define T(o) ((PcsTensor *)(o))

static PcsTensor *mask_arg(PyObject *o, const char *fname)
{
    if (!o || !PcsTensor_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'mask' must be Tensor", fname);
        return NULL;
    }
    if (T(o)->dtype != PCS_BOOL) {
        PyErr_Format(PyExc_RuntimeError, "%s: expected BoolTensor for mask", fname);
        return NULL;
    }
    return T(o);
}

/* mask expanded to t's shape (torch's in-place rule: the mask broadcasts to
 * self, never self to the mask). */
static PcsTensor *mask_to(PcsTensor *mask, int ndim, const int64_t *sizes, const char *fname)
{
    bool ok = mask->ndim <= ndim;
    for (int i = 0; ok && i < mask->ndim; i++) {
        int64_t s = mask->sizes[mask->ndim - 1 - i];
        ok = s == 1 || s == sizes[ndim - 1 - i];
    }
    if (!ok) {
        char a[256], b[256];
        pcs_shape_str(mask->ndim, mask->sizes, a, sizeof a);
        pcs_shape_str(ndim, sizes, b, sizeof b);
        PyErr_Format(PyExc_RuntimeError, "%s: the mask of shape %s does not broadcast to shape %s",
                     fname, a, b);
        return NULL;
    }
    return pcs_tensor_expand(mask, ndim, sizes);
}

/* ------------------------------------------------------------------------ */
/* masked_fill                                                               */

/* target = where(m, value, target) in target's dtype (m of target's shape). */
static int fill_where(PcsTensor *target, PcsTensor *m, PyObject *value, const char *fname)
{
    PyObject *r = NULL;
    pcs_operand ops[3];
    if (pcs_operand_arg((PyObject *)m, &ops[0], fname, "mask") == 0 &&
        pcs_operand_arg(value, &ops[1], fname, "value") == 0 &&
        pcs_operand_arg((PyObject *)target, &ops[2], fname, "input") == 0) {
        pcs_ew_call c = {.arity = 3, .op = PCS_TOP_WHERE, .name = "where", .in0_dtype = PCS_BOOL,
                         .compute = target->dtype, .out_dtype = target->dtype};
        r = pcs_ew_run(&c, ops, (PyObject *)target);
    }
    Py_XDECREF(r);
    return r ? 0 : -1;
}

static PyObject *masked_fill_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                   PyObject *kw, bool inplace)
{
    const char *fname = inplace ? "masked_fill_" : "masked_fill";
    static const char *const names[] = {"input", "mask", "value", NULL};
    if (pcs_check_kwargs(kw, fname, names) < 0)
        return NULL;
    PcsTensor *x = pcs_input_arg(self, args, nargs, kw, fname);
    if (!x)
        return NULL;
    int base = self ? -1 : 0;
    PyObject *mo = pcs_arg(args, nargs, kw, base + 1, "mask");
    PyObject *value = pcs_arg(args, nargs, kw, base + 2, "value");
    if (!mo || !PcsTensor_Check(mo) || T(mo)->dtype != PCS_BOOL) {
        PyErr_Format(PyExc_RuntimeError, "%s only supports boolean masks, but got mask with dtype %s",
                     fname, mo && PcsTensor_Check(mo) ? pcs_dtypes[T(mo)->dtype].legacy : "none");
        return NULL;
    }
    if (!value) {
        PyErr_Format(PyExc_TypeError, "%s() missing required argument 'value'", fname);
        return NULL;
    }
    if (PcsTensor_Check(value) && T(value)->ndim != 0) {
        PyErr_Format(PyExc_RuntimeError,
                     "%s only supports a 0-dimensional value tensor, but got tensor with %d dimension(s).",
                     fname, T(value)->ndim);
        return NULL;
    }
    PcsTensor *m = mask_to(T(mo), x->ndim, x->sizes, fname);
    if (!m)
        return NULL;
    PcsTensor *target = inplace ? (PcsTensor *)Py_NewRef(x) : pcs_tensor_contiguous(x, true);
    if (target && fill_where(target, m, value, fname) < 0)
        Py_CLEAR(target);
    Py_DECREF(m);
    return (PyObject *)target;
}

int pcs_masked_fill_inplace(PcsTensor *x, PcsTensor *mask, PyObject *value)
{
    return fill_where(x, mask, value, "masked_fill_");
}

/* ------------------------------------------------------------------------ */
/* masked_select                                                             */

/* Dense CUDA operands: one selection pass into a buffer of the full size
 * (compact.cu: one block up to PCS_SELECT_ONE_BLOCK elements, handing the
 * count over through a host signal; CUB above), then the selected prefix
 * copied out once its count is known. */
static PcsTensor *select_flagged_cuda(PcsTensor *x, PcsTensor *m)
{
    int dev = x->device;
    int64_t n = pcs_tensor_numel(x);
    if (n == 0)
        return pcs_tensor_empty(1, &n, x->dtype, dev, false);
    if (pcs_cuda_set_device_raw(dev) < 0)
        return NULL;
    cudaStream_t st = pcs_current_stream(dev);
    size_t bytes = 0;
    int is = (int)pcs_itemsize(x->dtype);
    if (pcs_index_select_flagged(NULL, &bytes, is, NULL, NULL, NULL, NULL, NULL, n, st) < 0) {
        PyErr_SetString(PyExc_RuntimeError, "masked_select: cub::DeviceSelect sizing failed");
        return NULL;
    }
    int64_t one = 1, tb = (int64_t)bytes + 1;
    const bool small = n <= PCS_SELECT_ONE_BLOCK;
    PcsTensor *buf = pcs_tensor_empty(1, &n, x->dtype, dev, false);
    /* one block: the count comes through host-mapped memory and CUB's
     * storage is not used; above it, both live on the device */
    pcs_host_signal *sig = buf && small ? pcs_host_signal_take() : NULL;
    PcsTensor *cnt = buf && !small ? pcs_tensor_empty(1, &one, PCS_INT64, dev, false) : NULL;
    PcsTensor *temp = cnt ? pcs_tensor_empty(1, &tb, PCS_UINT8, dev, false) : NULL;
    PcsTensor *res = NULL;
    if (sig || temp) {
        int64_t count = 0;
        if (pcs_index_select_flagged(temp ? pcs_tensor_data(temp) : NULL, &bytes, is, pcs_tensor_data(x),
                                     pcs_tensor_data(m), pcs_tensor_data(buf),
                                     sig ? pcs_host_signal_value(sig) : pcs_tensor_data(cnt),
                                     sig ? pcs_host_signal_flag(sig) : NULL, n, st) < 0) {
            PyErr_SetString(PyExc_RuntimeError, "masked_select: cub::DeviceSelect::Flagged failed");
        } else if (PCS_CHECK_LAUNCH(st, "masked_select") == 0) {
            int ok = pcs_selection_count(sig, cnt, cnt ? cnt->offset : 0, st, &count);
            sig = NULL; /* used up */
            if (ok == 0) {
                /* Up to PCS_SELECT_ONE_BLOCK elements the result stays in
                 * the buffer the kernel wrote (nothing else holds it): a
                 * copy to an exact fit costs one more launch, about as
                 * much host time as the selection, to free at most 128 KB. */
                PcsTensor *head = pcs_narrow_view(buf, 0, 0, count);
                res = small ? head : (PcsTensor *)pcs_materialize(head);
            }
        }
    }
    if (sig) /* never launched: nothing can write it */
        pcs_host_signal_give(sig);
    Py_XDECREF(temp);
    Py_XDECREF(cnt);
    Py_XDECREF(buf);
    return res;
}

/* x[mask] with a CUDA mask of x's whole shape (index.c's fast path): the
 * same elements in the same order as nonzero + gather, in one
 * DeviceSelect::Flagged pass (no positions, no index tensors, no range
 * check to read back). */
PcsTensor *pcs_masked_select_dense(PcsTensor *x, PcsTensor *mask)
{
    PcsTensor *xc = pcs_tensor_contiguous(x, false);
    PcsTensor *mc = xc ? pcs_tensor_contiguous(mask, false) : NULL;
    PcsTensor *res = mc ? select_flagged_cuda(xc, mc) : NULL;
    Py_XDECREF(mc);
    Py_XDECREF(xc);
    return res;
}

static PyObject *masked_select_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                     PyObject *kw)
{
    static const char *const names[] = {"input", "mask", "out", NULL};
    if (pcs_check_kwargs(kw, "masked_select", names) < 0)
        return NULL;
    PcsTensor *x = pcs_input_arg(self, args, nargs, kw, "masked_select");
    PcsTensor *mask = x ? mask_arg(pcs_arg(args, nargs, kw, self ? 0 : 1, "mask"), "masked_select") : NULL;
    PyObject *out;
    if (!mask || pcs_out_arg(pcs_arg(args, nargs, kw, -1, "out"), &out) < 0)
        return NULL;
    if (mask->device != x->device)
        return pcs_device_mismatch(x->device, mask->device), NULL;
    pcs_operand ops[2] = {{.t = x}, {.t = mask}};
    int64_t shape[PCS_MAX_DIMS];
    int nd = pcs_broadcast_shape(ops, 2, shape);
    if (nd < 0)
        return NULL;
    PcsTensor *xe = pcs_tensor_expand(x, nd, shape);
    PcsTensor *me = xe ? pcs_tensor_expand(mask, nd, shape) : NULL;
    PyObject *res = NULL;
    if (me && x->device >= 0) {
        PcsTensor *xc = pcs_tensor_contiguous(xe, false);
        PcsTensor *mc = xc ? pcs_tensor_contiguous(me, false) : NULL;
        res = mc ? (PyObject *)select_flagged_cuda(xc, mc) : NULL;
        Py_XDECREF(mc);
        Py_XDECREF(xc);
    } else if (me) {
        res = pcs_index_getitem_advanced(xe, (PyObject *)me);
    }
    Py_XDECREF(me);
    Py_XDECREF(xe);
    return pcs_into_out(res, out, "masked_select");
}

/* ------------------------------------------------------------------------ */
/* nonzero, where(cond), masked_scatter                                      */

static PyObject *columns(PcsTensor *nz)
{
    int nd = (int)nz->sizes[1];
    PyObject *tup = PyTuple_New(nd);
    for (int d = 0; tup && d < nd; d++) {
        int64_t cnt = nz->sizes[0], st = nz->strides[0];
        PcsTensor *col = pcs_tensor_alias(nz, nz->offset + d, 1, &cnt, &st);
        if (!col)
            Py_CLEAR(tup);
        else
            PyTuple_SET_ITEM(tup, d, (PyObject *)col);
    }
    return tup;
}

PyObject *pcs_nonzero_tuple(PcsTensor *cond)
{
    int64_t one = 1;
    PcsTensor *c = cond->ndim ? (PcsTensor *)Py_NewRef(cond) : pcs_tensor_view(cond, 1, &one);
    PcsTensor *nz = c ? pcs_index_nonzero(c) : NULL;
    Py_XDECREF(c);
    PyObject *r = nz ? columns(nz) : NULL;
    Py_XDECREF(nz);
    return r;
}

static PyObject *nonzero_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw,
                               const char *fname)
{
    static const char *const names[] = {"input", "out", "as_tuple", NULL};
    if (pcs_check_kwargs(kw, fname, names) < 0)
        return NULL;
    PcsTensor *x = pcs_input_arg(self, args, nargs, kw, fname);
    PyObject *out, *at = pcs_arg(args, nargs, kw, -1, "as_tuple");
    if (!x || pcs_out_arg(pcs_arg(args, nargs, kw, -1, "out"), &out) < 0)
        return NULL;
    int as_tuple = at ? PyObject_IsTrue(at) : 0;
    if (as_tuple < 0)
        return NULL;
    if (as_tuple)
        return pcs_nonzero_tuple(x);
    return pcs_into_out((PyObject *)pcs_index_nonzero(x), out, fname);
}

static PyObject *masked_scatter_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                      PyObject *kw, bool inplace)
{
    const char *fname = inplace ? "masked_scatter_" : "masked_scatter";
    static const char *const names[] = {"input", "mask", "source", NULL};
    if (pcs_check_kwargs(kw, fname, names) < 0)
        return NULL;
    PcsTensor *x = pcs_input_arg(self, args, nargs, kw, fname);
    int base = self ? -1 : 0;
    PcsTensor *mask = x ? mask_arg(pcs_arg(args, nargs, kw, base + 1, "mask"), fname) : NULL;
    PyObject *so = mask ? pcs_arg(args, nargs, kw, base + 2, "source") : NULL;
    if (!so || !PcsTensor_Check(so)) {
        if (mask)
            PyErr_Format(PyExc_TypeError, "%s(): argument 'source' must be Tensor", fname);
        return NULL;
    }
    PcsTensor *src = T(so);
    if (src->dtype != x->dtype) {
        PyErr_Format(PyExc_RuntimeError, "masked_scatter_: expected self and source to have same dtypes but got %s and %s",
                     pcs_dtypes[x->dtype].legacy, pcs_dtypes[src->dtype].legacy);
        return NULL;
    }
    if (src->device != x->device || mask->device != x->device)
        return pcs_device_mismatch(x->device, src->device != x->device ? src->device : mask->device), NULL;
    int64_t one = 1;
    PcsTensor *target = inplace ? (PcsTensor *)Py_NewRef(x) : pcs_tensor_contiguous(x, true);
    PcsTensor *tv = !target ? NULL : target->ndim ? (PcsTensor *)Py_NewRef(target) : pcs_tensor_view(target, 1, &one);
    PcsTensor *m = tv ? mask_to(mask, tv->ndim, tv->sizes, fname) : NULL;
    PcsTensor *nz = m ? pcs_index_nonzero(m) : NULL;
    int r = -1;
    if (nz) {
        int64_t count = nz->sizes[0], total = pcs_tensor_numel(src);
        if (total < count) {
            PyErr_Format(PyExc_RuntimeError,
                         "masked_scatter: expected source to have at least %lld elements (the true "
                         "elements of mask), got %lld", (long long)count, (long long)total);
        } else {
            PcsTensor *flat = pcs_tensor_reshape(src, 1, &total);
            PcsTensor *head = flat ? pcs_narrow_view(flat, 0, 0, count) : NULL;
            PyObject *cols = head ? columns(nz) : NULL;
            if (cols)
                r = pcs_index_setitem_advanced(tv, cols, (PyObject *)head);
            Py_XDECREF(cols);
            Py_XDECREF(head);
            Py_XDECREF(flat);
        }
    }
    Py_XDECREF(nz);
    Py_XDECREF(m);
    Py_XDECREF(tv);
    if (r < 0)
        Py_CLEAR(target);
    return (PyObject *)target;
}

/* ------------------------------------------------------------------------ */
/* Tables                                                                    */

PCS_OP_PAIR(masked_fill, masked_fill_entry(self, a, n, kw, false))
PCS_OP_PAIR(masked_select, masked_select_entry(self, a, n, kw))
PCS_OP_PAIR(masked_scatter, masked_scatter_entry(self, a, n, kw, false))
PCS_OP_PAIR(nonzero, nonzero_entry(self, a, n, kw, "nonzero"))
PCS_OP_PAIR(argwhere, nonzero_entry(self, a, n, kw, "argwhere"))

static PyObject *m_masked_fill_(PyObject *self, PyObject *const *a, Py_ssize_t n, PyObject *kw)
{
    return masked_fill_entry(self, a, n, kw, true);
}

static PyObject *m_masked_scatter_(PyObject *self, PyObject *const *a, Py_ssize_t n, PyObject *kw)
{
    return masked_scatter_entry(self, a, n, kw, true);
}

#define MASKED_OPS(X)                                                                             \
    X(masked_fill, "masked_fill(mask, value): value where mask is true")                          \
    X(masked_select, "masked_select(mask): the elements where mask is true, 1-D")                 \
    X(masked_scatter, "masked_scatter(mask, source), out of place")                               \
    X(nonzero, "nonzero(*, as_tuple=False): the indices of the non-zero elements")                \
    X(argwhere, "argwhere(): nonzero()")

PyMethodDef pcs_ops_masked_tmethods[] = {
    MASKED_OPS(PCS_T_ENTRY)
    {"masked_fill_", PCS_FN(m_masked_fill_), PCS_FK, "masked_fill_(mask, value), in place"},
    {"masked_scatter_", PCS_FN(m_masked_scatter_), PCS_FK, "masked_scatter_(mask, source): the source's leading elements where mask is true"},
    {NULL, NULL, 0, NULL},
};

PyMethodDef pcs_ops_masked_functions[] = {
    MASKED_OPS(PCS_F_ENTRY) {NULL, NULL, 0, NULL},
};
