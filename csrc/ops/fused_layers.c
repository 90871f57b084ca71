/* fused_layers.c: the fused training layers' private ops, each a forward and
 * a backward that autograd's formulas call (pycuda_sem/autograd/_formulas_nn.py)
 * and nn.functional routes to:
 *
 *   _layer_norm(input, n, weight, bias, eps, rms) -> (y, mean, rstd), or (y, rstd) for rms
 *   _layer_norm_backward(grad, input, mean, rstd, weight, n, rms, need) -> (gx, gw, gb)
 *   _cross_entropy(input, target, weight, ignore_index, label_smoothing) -> (loss, lse)
 *   _cross_entropy_backward(grad, input, target, weight, lse, ignore_index, label_smoothing)
 *   _philox_dropout(input, p, seed, offset) -> y, and _rng_reserve(device, n) -> (seed, offset)
 *
 * Norms work on the trailing n elements of each row (rows = numel / n);
 * mean/rstd/loss/lse are in the accumulation type (float32, float64 for
 * float64 inputs). CUDA runs the kernels of kernels/norm.cu, xent.cu and
 * dropout.cu; the CPU runs NumPy twins (pycuda_sem/_ops.py) in float32 (or
 * float64), float16 and bfloat16 rounded once at the end, as the kernels do.
 * Dropout's mask is computed here for the CPU with the same Philox words as
 * the kernel (kernels/philox.h), so one seed gives one mask on both. */
#include "ops/ops.h"

#include <math.h>
#include <string.h>

#include "kernels/kernels.h"
#include "kernels/philox.h"
#include "ops/random.h"
#include "runtime/device.h"
#include "runtime/stream.h"
#include "tensor/copy.h"

#define T(o) ((PcsTensor *)(o))

/* ---- helpers ------------------------------------------------------------- */

static int acc_dtype(int dt) { return dt == PCS_FLOAT64 ? PCS_FLOAT64 : PCS_FLOAT32; }

/* t as a contiguous tensor of dtype dt on its device (new reference). */
static PcsTensor *as_dense(PcsTensor *t, int dt)
{
    PcsTensor *c = pcs_tensor_to(t, dt, t->device, false, false, false);
    if (!c)
        return NULL;
    PcsTensor *r = pcs_tensor_contiguous(c, false);
    Py_DECREF(c);
    return r;
}

/* An optional tensor argument: NULL for None/absent, TypeError otherwise. */
static int opt_tensor(PyObject *o, const char *fname, const char *what, PcsTensor **out)
{
    *out = NULL;
    if (!o || o == Py_None)
        return 0;
    if (!PcsTensor_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s(): '%s' must be a Tensor or None", fname, what);
        return -1;
    }
    *out = T(o);
    return 0;
}

static int req_tensor(PyObject *o, const char *fname, const char *what, PcsTensor **out)
{
    if (opt_tensor(o, fname, what, out) < 0)
        return -1;
    if (!*out) {
        PyErr_Format(PyExc_TypeError, "%s(): '%s' must be a Tensor", fname, what);
        return -1;
    }
    return 0;
}

static int same_device(PcsTensor *x, PcsTensor *o, const char *fname)
{
    if (o && o->device != x->device) {
        PyErr_Format(PyExc_RuntimeError,
                     "%s(): Expected all tensors to be on the same device, but found at least two "
                     "devices",
                     fname);
        return -1;
    }
    return 0;
}

static int double_of(PyObject *o, double *v)
{
    *v = PyFloat_AsDouble(o);
    return (*v == -1.0 && PyErr_Occurred()) ? -1 : 0;
}

/* A NumPy view of t, or None for NULL (new reference). */
static PyObject *np_or_none(PcsTensor *t) { return t ? pcs_tensor_numpy(t) : Py_NewRef(Py_None); }

/* Calls _ops.<name>(arrays of ts..., extra...) for CPU tensors. */
static int cpu_call(const char *name, PcsTensor **ts, int nt, PyObject *extra)
{
    PyObject *fn = pcs_ops_numpy_fn(name);
    if (!fn)
        return -1;
    PyObject *args = PyTuple_New(nt + (extra ? PyTuple_GET_SIZE(extra) : 0));
    if (!args)
        return -1;
    for (int i = 0; i < nt; i++) {
        PyObject *a = np_or_none(ts[i]);
        if (!a) {
            Py_DECREF(args);
            return -1;
        }
        PyTuple_SET_ITEM(args, i, a);
    }
    for (Py_ssize_t i = 0; extra && i < PyTuple_GET_SIZE(extra); i++)
        PyTuple_SET_ITEM(args, nt + i, Py_NewRef(PyTuple_GET_ITEM(extra, i)));
    PyObject *r = PyObject_Call(fn, args, NULL);
    Py_DECREF(args);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

/* The result `tmp` computed in the accumulation type, as dtype dt (steals tmp). */
static PcsTensor *finish_as(PcsTensor *tmp, int dt)
{
    if (!tmp || tmp->dtype == dt)
        return tmp;
    PcsTensor *r = pcs_tensor_to(tmp, dt, tmp->device, false, false, false);
    Py_DECREF(tmp);
    return r;
}

static PcsTensor *empty_like_shape(PcsTensor *x, int dt) { return pcs_tensor_empty(x->ndim, x->sizes, dt, x->device, false); }

static PcsTensor *empty1(int64_t n, int dt, int device) { return pcs_tensor_empty(1, &n, dt, device, false); }

static int launch_done(int rc, int device, const char *name, int dtype, cudaStream_t st)
{
    if (rc < 0) {
        pcs_not_implemented(name, dtype);
        return -1;
    }
    (void)device;
    return PCS_CHECK_LAUNCH(st, name);
}

#define CLEAR(...)                                                                                 \
    do {                                                                                           \
        PyObject *objs_[] = {__VA_ARGS__};                                                         \
        for (size_t i_ = 0; i_ < sizeof(objs_) / sizeof(void *); i_++)                             \
            Py_XDECREF(objs_[i_]);                                                                 \
    } while (0)

/* ---- layer norm / rms norm -------------------------------------------------- */

/* rows and n of x for a trailing size n, or -1 with RuntimeError. */
static int64_t norm_rows(PcsTensor *x, int64_t n, const char *fname)
{
    int64_t numel = pcs_tensor_numel(x);
    if (n <= 0 || numel % n != 0) {
        PyErr_Format(PyExc_RuntimeError, "%s(): %lld does not divide the input's %lld elements", fname,
                     (long long)n, (long long)numel);
        return -1;
    }
    return numel / n;
}

static int check_affine(PcsTensor *x, PcsTensor *w, int64_t n, const char *fname)
{
    if (!w)
        return 0;
    if (same_device(x, w, fname) < 0)
        return -1;
    if (pcs_tensor_numel(w) != n) {
        PyErr_Format(PyExc_RuntimeError, "%s(): weight and bias need %lld elements", fname, (long long)n);
        return -1;
    }
    return 0;
}

static PyObject *f_layer_norm(PyObject *m, PyObject *const *a, Py_ssize_t na, PyObject *kw)
{
    PCS_UNUSED(m);
    static const char *const names[] = {"input", "n", "weight", "bias", "eps", "rms", NULL};
    const char *fname = "_layer_norm";
    if (pcs_check_kwargs(kw, fname, names) < 0)
        return NULL;
    PcsTensor *x, *w, *b;
    int64_t n;
    double eps;
    PyObject *no = pcs_arg(a, na, kw, 1, "n"), *eo = pcs_arg(a, na, kw, 4, "eps");
    PyObject *ro = pcs_arg(a, na, kw, 5, "rms");
    if (req_tensor(pcs_arg(a, na, kw, 0, "input"), fname, "input", &x) < 0 ||
        opt_tensor(pcs_arg(a, na, kw, 2, "weight"), fname, "weight", &w) < 0 ||
        opt_tensor(pcs_arg(a, na, kw, 3, "bias"), fname, "bias", &b) < 0)
        return NULL;
    if (!no || !eo) {
        PyErr_Format(PyExc_TypeError, "%s() needs n and eps", fname);
        return NULL;
    }
    if (pcs_int64_arg(no, &n) < 0 || double_of(eo, &eps) < 0)
        return NULL;
    int rms = ro ? PyObject_IsTrue(ro) : 0;
    if (rms < 0)
        return NULL;
    if (!pcs_is_float(x->dtype))
        return pcs_not_implemented(rms ? "rms_norm" : "layer_norm", x->dtype);
    int64_t rows = norm_rows(x, n, fname);
    if (rows < 0 || check_affine(x, w, n, fname) < 0 || check_affine(x, b, n, fname) < 0)
        return NULL;
    const int dt = x->dtype, acc = acc_dtype(dt);
    const bool cpu = x->device < 0;
    const int cdt = cpu ? acc : dt; /* the CPU computes in the accumulation type */
    PcsTensor *xc = as_dense(x, cdt), *wc = NULL, *bc = NULL, *y = NULL, *mean = NULL, *rstd = NULL;
    PyObject *res = NULL;
    if (!xc || (w && !(wc = as_dense(w, cdt))) || (b && !(bc = as_dense(b, cdt))))
        goto done;
    if (!(y = empty_like_shape(x, cdt)) || (!rms && !(mean = empty1(rows, acc, x->device))) ||
        !(rstd = empty1(rows, acc, x->device)))
        goto done;
    if (rows && n) {
        if (cpu) {
            PcsTensor *ts[] = {y, mean, rstd, xc, wc, bc};
            PyObject *extra = Py_BuildValue("(di)", eps, rms);
            int r = extra ? cpu_call("layer_norm", ts, 6, extra) : -1;
            Py_XDECREF(extra);
            if (r < 0)
                goto done;
        } else {
            PcsDeviceGuard g;
            if (pcs_device_guard_enter(&g, x->device) < 0)
                goto done;
            cudaStream_t st = pcs_current_stream(x->device);
            int rc = pcs_launch_norm_fwd(dt, rms, pcs_tensor_data(y), mean ? pcs_tensor_data(mean) : NULL,
                                         pcs_tensor_data(rstd), pcs_tensor_data(xc),
                                         wc ? pcs_tensor_data(wc) : NULL, bc ? pcs_tensor_data(bc) : NULL,
                                         rows, n, eps, st);
            int r = launch_done(rc, x->device, fname, dt, st);
            pcs_device_guard_exit(&g);
            if (r < 0)
                goto done;
        }
    }
    y = finish_as(y, dt);
    if (y)
        res = rms ? PyTuple_Pack(2, y, rstd) : PyTuple_Pack(3, y, mean, rstd);
done:
    CLEAR((PyObject *)xc, (PyObject *)wc, (PyObject *)bc, (PyObject *)y, (PyObject *)mean,
          (PyObject *)rstd);
    return res;
}

/* need: a 3-tuple of bools (gx, gw, gb) */
static PyObject *f_layer_norm_backward(PyObject *m, PyObject *const *a, Py_ssize_t na, PyObject *kw)
{
    PCS_UNUSED(m);
    static const char *const names[] = {"grad", "input", "mean", "rstd", "weight", "n", "rms", "need", NULL};
    const char *fname = "_layer_norm_backward";
    if (pcs_check_kwargs(kw, fname, names) < 0)
        return NULL;
    PcsTensor *gy, *x, *mean, *rstd, *w;
    int64_t n;
    PyObject *no = pcs_arg(a, na, kw, 5, "n"), *ro = pcs_arg(a, na, kw, 6, "rms");
    PyObject *need = pcs_arg(a, na, kw, 7, "need");
    if (req_tensor(pcs_arg(a, na, kw, 0, "grad"), fname, "grad", &gy) < 0 ||
        req_tensor(pcs_arg(a, na, kw, 1, "input"), fname, "input", &x) < 0 ||
        opt_tensor(pcs_arg(a, na, kw, 2, "mean"), fname, "mean", &mean) < 0 ||
        req_tensor(pcs_arg(a, na, kw, 3, "rstd"), fname, "rstd", &rstd) < 0 ||
        opt_tensor(pcs_arg(a, na, kw, 4, "weight"), fname, "weight", &w) < 0)
        return NULL;
    if (!no || !ro || !need || !PyTuple_Check(need) || PyTuple_GET_SIZE(need) != 3) {
        PyErr_Format(PyExc_TypeError, "%s() needs n, rms and need=(gx, gw, gb)", fname);
        return NULL;
    }
    int rms = PyObject_IsTrue(ro), want[3];
    if (pcs_int64_arg(no, &n) < 0 || rms < 0)
        return NULL;
    for (int i = 0; i < 3; i++)
        if ((want[i] = PyObject_IsTrue(PyTuple_GET_ITEM(need, i))) < 0)
            return NULL;
    if (!rms && !mean) {
        PyErr_Format(PyExc_TypeError, "%s(): layer_norm's backward needs the mean", fname);
        return NULL;
    }
    if (!pcs_is_float(x->dtype))
        return pcs_not_implemented(fname, x->dtype);
    int64_t rows = norm_rows(x, n, fname);
    if (rows < 0 || check_affine(x, w, n, fname) < 0 || same_device(x, gy, fname) < 0 ||
        same_device(x, rstd, fname) < 0 || same_device(x, mean, fname) < 0)
        return NULL;
    if (pcs_tensor_numel(gy) != pcs_tensor_numel(x) || pcs_tensor_numel(rstd) != rows ||
        (mean && pcs_tensor_numel(mean) != rows)) {
        PyErr_Format(PyExc_RuntimeError, "%s(): grad, mean and rstd do not match the input", fname);
        return NULL;
    }
    const int dt = x->dtype, acc = acc_dtype(dt);
    const bool cpu = x->device < 0;
    const int cdt = cpu ? acc : dt;
    PcsTensor *xc = as_dense(x, cdt), *gc = NULL, *wc = NULL, *mc = NULL, *rc = NULL;
    PcsTensor *out[3] = {NULL, NULL, NULL}, *work = NULL;
    PyObject *res = NULL;
    if (!xc || !(gc = as_dense(gy, cdt)) || (w && !(wc = as_dense(w, cdt))) ||
        !(rc = as_dense(rstd, acc)) || (mean && !(mc = as_dense(mean, acc))))
        goto done;
    if ((want[0] && !(out[0] = empty_like_shape(x, cdt))) ||
        (want[1] && !(out[1] = empty1(n, cdt, x->device))) ||
        (want[2] && !(out[2] = empty1(n, cdt, x->device))))
        goto done;
    if (rows == 0) {
        /* column sums over no rows */
        for (int i = 1; i < 3; i++) {
            const char z[16] = {0}; /* 0.0 in every floating dtype */
            if (out[i] && pcs_fill_bytes(out[i], z) < 0)
                goto done;
        }
    } else if (cpu) {
        PcsTensor *ts[] = {out[0], out[1], out[2], gc, xc, rms ? NULL : mc, rc, wc};
        PyObject *extra = Py_BuildValue("(i)", rms);
        int r = extra ? cpu_call("layer_norm_backward", ts, 8, extra) : -1;
        Py_XDECREF(extra);
        if (r < 0)
            goto done;
    } else if (want[0] || want[1] || want[2]) {
        int parts = pcs_norm_bwd_parts(rows, n, want[0]);
        if ((want[1] || want[2]) && !(work = empty1(2 * (int64_t)parts * n, acc, x->device)))
            goto done;
        PcsDeviceGuard g;
        if (pcs_device_guard_enter(&g, x->device) < 0)
            goto done;
        cudaStream_t st = pcs_current_stream(x->device);
        void *d[3];
        for (int i = 0; i < 3; i++)
            d[i] = out[i] ? pcs_tensor_data(out[i]) : NULL;
        int lr = pcs_launch_norm_bwd(dt, rms, d[0], d[1], d[2], pcs_tensor_data(gc), pcs_tensor_data(xc),
                                     mc ? pcs_tensor_data(mc) : NULL, pcs_tensor_data(rc),
                                     wc ? pcs_tensor_data(wc) : NULL, rows, n,
                                     work ? pcs_tensor_data(work) : NULL, parts, st);
        int r = launch_done(lr, x->device, fname, dt, st);
        pcs_device_guard_exit(&g);
        if (r < 0)
            goto done;
    }
    if (!(res = PyTuple_New(3)))
        goto done;
    for (int i = 0; i < 3; i++) {
        PcsTensor *o = out[i] ? finish_as(out[i], dt) : NULL;
        out[i] = NULL;
        if (want[i] && !o) {
            Py_CLEAR(res);
            goto done;
        }
        PyTuple_SET_ITEM(res, i, o ? (PyObject *)o : Py_NewRef(Py_None));
    }
done:
    CLEAR((PyObject *)xc, (PyObject *)gc, (PyObject *)wc, (PyObject *)mc, (PyObject *)rc,
          (PyObject *)work, (PyObject *)out[0], (PyObject *)out[1], (PyObject *)out[2]);
    return res;
}

/* ---- cross entropy with class indices --------------------------------------- */

/* Shared argument checks: x [N, C] floating, t [N] int64, w [C] or NULL. */
static int xent_args(PcsTensor *x, PcsTensor *t, PcsTensor *w, const char *fname)
{
    if (!pcs_is_float(x->dtype)) {
        pcs_not_implemented(fname, x->dtype);
        return -1;
    }
    if (x->ndim != 2 || t->ndim != 1 || t->sizes[0] != x->sizes[0] || t->dtype != PCS_INT64) {
        PyErr_Format(PyExc_RuntimeError, "%s(): needs [N, C] logits and [N] int64 targets", fname);
        return -1;
    }
    if (same_device(x, t, fname) < 0 || same_device(x, w, fname) < 0)
        return -1;
    if (w && pcs_tensor_numel(w) != x->sizes[1]) {
        PyErr_Format(PyExc_RuntimeError, "%s(): weight needs %lld elements", fname, (long long)x->sizes[1]);
        return -1;
    }
    return 0;
}

/* The host's twin of pcs_launch_xent_reduce for CPU tensors: red[0] the
 * sum of the row losses (over the denominator when mean), red[1] the
 * denominator, summed in double. */
static void xent_reduce_host(PcsTensor *red, const PcsTensor *loss, const PcsTensor *t, const PcsTensor *w,
                             int64_t N, int64_t C, int64_t ignore, bool mean)
{
    const int dt = loss->dtype, isz = pcs_itemsize(dt);
    const char *lp = pcs_tensor_data(loss), *wp = w ? pcs_tensor_data(w) : NULL;
    const int64_t *tp = pcs_tensor_data(t);
    double l = 0, d = 0;
    for (int64_t r = 0; r < N; r++) {
        l += pcs_scalar_as_double(pcs_scalar_load(dt, lp + r * isz));
        if (tp[r] != ignore)
            d += (wp && tp[r] >= 0 && tp[r] < C) ? pcs_scalar_as_double(pcs_scalar_load(dt, wp + tp[r] * isz)) : 1.0;
    }
    pcs_scalar v = {PCS_SK_FLOAT, 0, mean ? l / d : l, 0};
    char *rp = pcs_tensor_data(red);
    pcs_scalar_store(dt, rp, v);
    v.re = d;
    pcs_scalar_store(dt, rp + isz, v);
}

/* _cross_entropy(input, target, weight, ignore_index, label_smoothing, reduction=0) -> (loss, lse)
 * reduction 0: loss holds a value a row; 1 (sum) or 2 (mean): (loss, lse,
 * denominator), loss the 0-dim reduced loss and denominator the summed
 * weight of the rows not ignored (two 0-dim views of one [2] buffer that
 * one more launch fills). */
static PyObject *f_cross_entropy(PyObject *m, PyObject *const *a, Py_ssize_t na, PyObject *kw)
{
    PCS_UNUSED(m);
    const char *fname = "_cross_entropy";
    static const char *const names[] = {"input", "target", "weight", "ignore_index", "label_smoothing",
                                        "reduction", NULL};
    if (pcs_check_kwargs(kw, fname, names) < 0)
        return NULL;
    PcsTensor *x, *t, *w;
    int64_t ignore, reduction = 0;
    double ls;
    PyObject *io = pcs_arg(a, na, kw, 3, "ignore_index"), *lo = pcs_arg(a, na, kw, 4, "label_smoothing"),
             *ro = pcs_arg(a, na, kw, 5, "reduction");
    if (ro && pcs_int64_arg(ro, &reduction) < 0)
        return NULL;
    if (reduction < 0 || reduction > 2) {
        PyErr_Format(PyExc_ValueError, "%s(): reduction must be 0 (none), 1 (sum) or 2 (mean)", fname);
        return NULL;
    }
    if (req_tensor(pcs_arg(a, na, kw, 0, "input"), fname, "input", &x) < 0 ||
        req_tensor(pcs_arg(a, na, kw, 1, "target"), fname, "target", &t) < 0 ||
        opt_tensor(pcs_arg(a, na, kw, 2, "weight"), fname, "weight", &w) < 0)
        return NULL;
    if (!io || !lo) {
        PyErr_Format(PyExc_TypeError, "%s() needs ignore_index and label_smoothing", fname);
        return NULL;
    }
    if (pcs_int64_arg(io, &ignore) < 0 || double_of(lo, &ls) < 0 || xent_args(x, t, w, fname) < 0)
        return NULL;
    const int dt = x->dtype, acc = acc_dtype(dt);
    const bool cpu = x->device < 0;
    const int64_t N = x->sizes[0], C = x->sizes[1];
    PcsTensor *xc = as_dense(x, cpu ? acc : dt), *tc = NULL, *wc = NULL, *loss = NULL, *lse = NULL,
              *red = NULL;
    PyObject *res = NULL;
    if (!xc || !(tc = as_dense(t, PCS_INT64)) || (w && !(wc = as_dense(w, acc))) ||
        !(loss = empty1(N, acc, x->device)) || !(lse = empty1(N, acc, x->device)) ||
        (reduction && !(red = empty1(2, acc, x->device))))
        goto done;
    if (N && C) {
        if (cpu) {
            PcsTensor *ts[] = {loss, lse, xc, tc, wc};
            PyObject *extra = Py_BuildValue("(Ld)", (long long)ignore, ls);
            int r = extra ? cpu_call("cross_entropy", ts, 5, extra) : -1;
            Py_XDECREF(extra);
            if (r < 0)
                goto done;
        } else {
            PcsDeviceGuard g;
            if (pcs_device_guard_enter(&g, x->device) < 0)
                goto done;
            cudaStream_t st = pcs_current_stream(x->device);
            int rc = pcs_launch_xent_fwd(dt, pcs_tensor_data(loss), pcs_tensor_data(lse), pcs_tensor_data(xc),
                                         pcs_tensor_data(tc), wc ? pcs_tensor_data(wc) : NULL, N, C,
                                         ignore, ls, st);
            int r = launch_done(rc, x->device, fname, dt, st);
            if (r == 0 && red)
                r = launch_done(pcs_launch_xent_reduce(acc, pcs_tensor_data(red), pcs_tensor_data(loss),
                                                       pcs_tensor_data(tc), wc ? pcs_tensor_data(wc) : NULL,
                                                       N, C, ignore, reduction == 2, st),
                                x->device, fname, acc, st);
            pcs_device_guard_exit(&g);
            if (r < 0)
                goto done;
        }
    }
    if (red) {
        if (!(N && C)) { /* nothing to sum: 0, and a mean of nothing is 0 / 0 */
            unsigned char bytes[16];
            pcs_scalar_store(acc, bytes, (pcs_scalar){PCS_SK_FLOAT, 0, reduction == 2 ? NAN : 0.0, 0});
            if (pcs_fill_bytes(red, bytes) < 0)
                goto done;
        } else if (cpu) {
            xent_reduce_host(red, loss, tc, wc, N, C, ignore, reduction == 2);
        }
    }
    if (red) {
        /* the reduced loss is the op's own 0-dim output (its grad_fn is this
         * op's node, as torch's NllLossBackward0 is), the denominator a third */
        PcsTensor *l0 = pcs_tensor_alias(red, red->offset, 0, NULL, NULL);
        PcsTensor *d0 = l0 ? pcs_tensor_alias(red, red->offset + 1, 0, NULL, NULL) : NULL;
        if (d0)
            res = PyTuple_Pack(3, l0, lse, d0);
        Py_XDECREF(l0);
        Py_XDECREF(d0);
    } else {
        res = PyTuple_Pack(2, loss, lse);
    }
done:
    CLEAR((PyObject *)xc, (PyObject *)tc, (PyObject *)wc, (PyObject *)loss, (PyObject *)lse, (PyObject *)red);
    return res;
}

/* _cross_entropy_backward(grad, input, target, weight, lse, ignore_index, label_smoothing) */
static PyObject *f_cross_entropy_backward(PyObject *m, PyObject *const *a, Py_ssize_t na, PyObject *kw)
{
    PCS_UNUSED(m);
    const char *fname = "_cross_entropy_backward";
    static const char *const names[] = {"grad", "input", "target", "weight", "lse", "ignore_index",
                                        "label_smoothing", NULL};
    if (pcs_check_kwargs(kw, fname, names) < 0)
        return NULL;
    PcsTensor *g, *x, *t, *w, *lse;
    int64_t ignore;
    double ls;
    PyObject *io = pcs_arg(a, na, kw, 5, "ignore_index"), *lo = pcs_arg(a, na, kw, 6, "label_smoothing");
    if (req_tensor(pcs_arg(a, na, kw, 0, "grad"), fname, "grad", &g) < 0 ||
        req_tensor(pcs_arg(a, na, kw, 1, "input"), fname, "input", &x) < 0 ||
        req_tensor(pcs_arg(a, na, kw, 2, "target"), fname, "target", &t) < 0 ||
        opt_tensor(pcs_arg(a, na, kw, 3, "weight"), fname, "weight", &w) < 0 ||
        req_tensor(pcs_arg(a, na, kw, 4, "lse"), fname, "lse", &lse) < 0)
        return NULL;
    if (!io || !lo) {
        PyErr_Format(PyExc_TypeError, "%s() needs ignore_index and label_smoothing", fname);
        return NULL;
    }
    if (pcs_int64_arg(io, &ignore) < 0 || double_of(lo, &ls) < 0 || xent_args(x, t, w, fname) < 0 ||
        same_device(x, g, fname) < 0 || same_device(x, lse, fname) < 0)
        return NULL;
    const int dt = x->dtype, acc = acc_dtype(dt);
    const bool cpu = x->device < 0;
    const int64_t N = x->sizes[0], C = x->sizes[1];
    if (pcs_tensor_numel(lse) != N || !(pcs_tensor_numel(g) == N || pcs_tensor_numel(g) == 1)) {
        PyErr_Format(PyExc_RuntimeError, "%s(): grad and lse need one value a row", fname);
        return NULL;
    }
    /* one gradient value for every row (a mean or sum): stride 0, no copy */
    const int64_t gstride = (pcs_tensor_numel(g) == 1 && N != 1) ? 0 : 1;
    PcsTensor *xc = as_dense(x, cpu ? acc : dt), *tc = NULL, *wc = NULL, *gc = NULL, *lc = NULL, *gx = NULL;
    PyObject *res = NULL;
    if (!xc || !(tc = as_dense(t, PCS_INT64)) || (w && !(wc = as_dense(w, acc))) ||
        !(gc = as_dense(g, acc)) || !(lc = as_dense(lse, acc)) || !(gx = empty_like_shape(xc, xc->dtype)))
        goto done;
    if (N && C) {
        if (cpu) {
            PcsTensor *ts[] = {gx, gc, xc, tc, wc, lc};
            PyObject *extra = Py_BuildValue("(Ld)", (long long)ignore, ls);
            int r = extra ? cpu_call("cross_entropy_backward", ts, 6, extra) : -1;
            Py_XDECREF(extra);
            if (r < 0)
                goto done;
        } else {
            PcsDeviceGuard gd;
            if (pcs_device_guard_enter(&gd, x->device) < 0)
                goto done;
            cudaStream_t st = pcs_current_stream(x->device);
            int rc = pcs_launch_xent_bwd(dt, pcs_tensor_data(gx), pcs_tensor_data(gc), gstride,
                                         pcs_tensor_data(xc), pcs_tensor_data(tc),
                                         wc ? pcs_tensor_data(wc) : NULL, pcs_tensor_data(lc), N, C,
                                         ignore, ls, st);
            int r = launch_done(rc, x->device, fname, dt, st);
            pcs_device_guard_exit(&gd);
            if (r < 0)
                goto done;
        }
    }
    gx = finish_as(gx, dt);
    res = (PyObject *)gx;
    gx = NULL;
done:
    CLEAR((PyObject *)xc, (PyObject *)tc, (PyObject *)wc, (PyObject *)gc, (PyObject *)lc, (PyObject *)gx);
    return res;
}

/* ---- dropout ------------------------------------------------------------------- */

/* _rng_reserve(device_index, n) -> (seed, offset): Philox blocks for n
 * elements (4 a block) of the device's generator (-1: the CPU). */
static PyObject *f_rng_reserve(PyObject *m, PyObject *const *a, Py_ssize_t na)
{
    PCS_UNUSED(m);
    int64_t dev, n;
    if (na != 2 || pcs_int64_arg(a[0], &dev) < 0 || pcs_int64_arg(a[1], &n) < 0) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "_rng_reserve(device, n)");
        return NULL;
    }
    uint64_t seed, offset;
    pcs_rng_reserve((int)dev, (uint64_t)((n + 3) / 4), &seed, &offset);
    return Py_BuildValue("(KK)", (unsigned long long)seed, (unsigned long long)offset);
}

/* _philox_dropout(input, p, seed, offset): kept elements scaled by 1 / (1 - p) */
static PyObject *f_philox_dropout(PyObject *m, PyObject *const *a, Py_ssize_t na, PyObject *kw)
{
    PCS_UNUSED(m);
    const char *fname = "_philox_dropout";
    static const char *const names[] = {"input", "p", "seed", "offset", NULL};
    if (pcs_check_kwargs(kw, fname, names) < 0)
        return NULL;
    PcsTensor *x;
    double p;
    PyObject *po = pcs_arg(a, na, kw, 1, "p"), *so = pcs_arg(a, na, kw, 2, "seed");
    PyObject *oo = pcs_arg(a, na, kw, 3, "offset");
    if (req_tensor(pcs_arg(a, na, kw, 0, "input"), fname, "input", &x) < 0)
        return NULL;
    if (!po || !so || !oo) {
        PyErr_Format(PyExc_TypeError, "%s() needs p, seed and offset", fname);
        return NULL;
    }
    unsigned long long seed = PyLong_AsUnsignedLongLong(so);
    if (PyErr_Occurred())
        return NULL;
    unsigned long long offset = PyLong_AsUnsignedLongLong(oo);
    if (PyErr_Occurred() || double_of(po, &p) < 0)
        return NULL;
    if (!pcs_is_float(x->dtype))
        return pcs_not_implemented("dropout", x->dtype);
    const int dt = x->dtype, acc = acc_dtype(dt);
    const float keep = (float)(1.0 - p);
    /* torch's scale: 1 / keep in the accumulation type */
    const double scale = acc == PCS_FLOAT64 ? 1.0 / (1.0 - p) : (double)(1.0f / keep);
    const int64_t n = pcs_tensor_numel(x);
    const bool cpu = x->device < 0;
    PcsTensor *xc = as_dense(x, cpu ? acc : dt), *y = NULL, *mask = NULL;
    PyObject *res = NULL;
    if (!xc || !(y = empty_like_shape(x, xc->dtype)))
        goto done;
    if (n && cpu) {
        /* the kernel's mask, word for word (kernels/dropout.cu) */
        if (!(mask = empty_like_shape(x, PCS_BOOL)))
            goto done;
        unsigned char *mk = pcs_tensor_data(mask);
        Py_BEGIN_ALLOW_THREADS
        for (int64_t j = 0; j * 4 < n; j++) {
            pcs_u32x4 r = pcs_philox(seed, offset + (uint64_t)j);
            for (int l = 0; l < 4 && j * 4 + l < n; l++)
                mk[j * 4 + l] = pcs_u01f(r.v[l]) < keep;
        }
        Py_END_ALLOW_THREADS
        PcsTensor *ts[] = {y, xc, mask};
        PyObject *extra = Py_BuildValue("(d)", scale);
        int r = extra ? cpu_call("philox_dropout", ts, 3, extra) : -1;
        Py_XDECREF(extra);
        if (r < 0)
            goto done;
    } else if (n) {
        PcsDeviceGuard g;
        if (pcs_device_guard_enter(&g, x->device) < 0)
            goto done;
        cudaStream_t st = pcs_current_stream(x->device);
        int rc = pcs_launch_dropout(dt, pcs_tensor_data(y), pcs_tensor_data(xc), n, seed, offset, keep,
                                    scale, st);
        int r = launch_done(rc, x->device, fname, dt, st);
        pcs_device_guard_exit(&g);
        if (r < 0)
            goto done;
    }
    y = finish_as(y, dt);
    res = (PyObject *)y;
    y = NULL;
done:
    CLEAR((PyObject *)xc, (PyObject *)y, (PyObject *)mask);
    return res;
}

/* ---- tables ----------------------------------------------------------------- */

#define FK PCS_FK
#define FN(f) PCS_FN(f)

PyMethodDef pcs_ops_fused_functions[] = {
    {"_layer_norm", FN(f_layer_norm), FK,
     "_layer_norm(input, n, weight, bias, eps, rms) -> (y, mean, rstd), (y, rstd) for rms: the "
     "norm over the trailing n elements, one kernel."},
    {"_layer_norm_backward", FN(f_layer_norm_backward), FK,
     "_layer_norm_backward(grad, input, mean, rstd, weight, n, rms, need) -> (gx, gw, gb)."},
    {"_cross_entropy", FN(f_cross_entropy), FK,
     "_cross_entropy(input, target, weight, ignore_index, label_smoothing, reduction=0) -> (loss, lse): per-row "
     "cross entropy of [N, C] logits with int64 class indices, one kernel; reduction 1 (sum) or 2 (mean): "
     "loss is [2], the reduced loss and its denominator, one more kernel."},
    {"_cross_entropy_backward", FN(f_cross_entropy_backward), FK,
     "_cross_entropy_backward(grad, input, target, weight, lse, ignore_index, label_smoothing)."},
    {"_rng_reserve", (PyCFunction)(void (*)(void))f_rng_reserve, METH_FASTCALL,
     "_rng_reserve(device, n) -> (seed, offset): Philox blocks for n elements."},
    {"_philox_dropout", FN(f_philox_dropout), FK,
     "_philox_dropout(input, p, seed, offset): dropout whose mask is a function of (seed, offset, "
     "index), the same on the CPU and the GPU."},
    {NULL, NULL, 0, NULL},
};
