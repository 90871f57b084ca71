/* select.c: unique, unique_consecutive, bincount, histc and count_nonzero,
 * as module functions and Tensor methods. (searchsorted and bucketize are in
 * search.c.)
 *
 * unique sorts the flattened input (sort.c's rows machinery, CUB on CUDA)
 * and finds the runs of equal neighbours (pcs_unique_runs: a run-length
 * encoding, or a scan of the run heads when the inverse is wanted);
 * unique_consecutive finds the runs without sorting. NaN never
 * equals NaN, so each NaN is its own value, as in torch. The number of
 * values is data-dependent, so on CUDA it is read back (the host waits for
 * the device there, as torch does). With dim=, the slices along dim are the
 * rows of an [m, w] block, sorted lexicographically on CUDA (a stable sort of
 * each column's keys, last column first) before their runs are found.
 * bincount without weights uses cub::DeviceHistogram; with weights, and histc (whose
 * last bin includes its upper edge, which CUB's half-open bins cannot say),
 * atomics. bincount and histc read the data's range back first, as torch. */
#include "ops/sort.h"

#include <math.h>
#include <string.h>

#include "tensor/copy.h"

/* A Python number from calling a reducing method of t (t.min(), t.max()):
 * waits for the device. */
static PyObject *reduced_item(PcsTensor *t, const char *method)
{
    PyObject *r = PyObject_CallMethod((PyObject *)t, method, NULL);
    if (!r)
        return NULL;
    PyObject *v = PcsTensor_Check(r) ? pcs_tensor_item((PcsTensor *)r) : NULL;
    if (!v && !PyErr_Occurred())
        PyErr_Format(PyExc_TypeError, "%s() did not return a tensor", method);
    Py_DECREF(r);
    return v;
}

int pcs_reduced_int(PcsTensor *t, const char *method, int64_t *out)
{
    PyObject *v = reduced_item(t, method);
    if (!v)
        return -1;
    int r = pcs_int64_arg(v, out);
    Py_DECREF(v);
    return r;
}

int pcs_reduced_double(PcsTensor *t, const char *method, double *out)
{
    PyObject *v = reduced_item(t, method);
    if (!v)
        return -1;
    *out = PyFloat_AsDouble(v);
    Py_DECREF(v);
    return *out == -1.0 && PyErr_Occurred() ? -1 : 0;
}

static PcsTensor *narrow1(PcsTensor *t, int64_t n)
{
    PcsTensor *v = pcs_tensor_alias(t, t->offset, 1, &n, t->strides);
    Py_DECREF(t);
    return v;
}

/* ------------------------------------------------------------------------ */
/* unique / unique_consecutive                                               */

typedef struct {
    int dtype;
    const void *x;
    const int64_t *perm;
    int64_t n;
    void *uniq;
    int64_t *counts, *inverse, *num;
} runs_ctx;

static int runs_call(const void *c, void *ws, size_t *bytes, cudaStream_t s)
{
    const runs_ctx *a = c;
    return pcs_unique_runs(a->dtype, a->x, a->perm, a->n, a->uniq, a->counts, a->inverse, a->num, ws,
                           bytes, s);
}

/* The runs of a flat contiguous CUDA tensor xs (sorted for unique); perm
 * maps sorted positions to input positions (NULL: identity). *counts is left
 * NULL when neither the counts nor the inverse are wanted (the values alone
 * are one select pass, lighter than a run-length encoding). */
static int unique_cuda(PcsTensor *xs, PcsTensor *perm, bool want_inv, bool want_counts,
                       PcsTensor **uniq, PcsTensor **inv, PcsTensor **counts)
{
    int64_t n = pcs_tensor_numel(xs), one = 1;
    int dev = xs->device;
    /* the inverse's kernels fill the counts anyway, as do those for more
     * than INT32_MAX elements (CUB's select takes an int count) */
    bool need_counts = want_counts || want_inv || n > INT32_MAX;
    *uniq = pcs_tensor_empty(1, &n, xs->dtype, dev, false);
    bool ok = *uniq != NULL;
    *counts = ok && need_counts ? pcs_tensor_empty(1, &n, PCS_INT64, dev, false) : NULL;
    ok = ok && (!need_counts || *counts);
    *inv = ok && want_inv ? pcs_tensor_empty(1, &n, PCS_INT64, dev, false) : NULL;
    ok = ok && (!want_inv || *inv);
    PcsTensor *num = ok ? pcs_tensor_empty(1, &one, PCS_INT64, dev, false) : NULL;
    int r = -1;
    if (num) {
        runs_ctx c = {xs->dtype, pcs_tensor_data(xs), perm ? pcs_tensor_data(perm) : NULL, n,
                      pcs_tensor_data(*uniq), *counts ? pcs_tensor_data(*counts) : NULL,
                      *inv ? pcs_tensor_data(*inv) : NULL, pcs_tensor_data(num)};
        r = pcs_cub_run(dev, "unique", xs->dtype, runs_call, &c);
    }
    int64_t m = 0;
    if (r == 0)
        r = pcs_read_element(num, &m); /* waits for the device */
    Py_XDECREF(num);
    if (r == 0 && (m < 0 || m > n)) {
        PyErr_SetString(PyExc_RuntimeError, "unique: the device returned an impossible count");
        r = -1;
    }
    if (r == 0) {
        *uniq = narrow1(*uniq, m);
        if (*counts)
            *counts = narrow1(*counts, m);
        if (!*uniq || (need_counts && !*counts))
            r = -1;
    }
    if (r < 0) {
        Py_CLEAR(*uniq);
        Py_CLEAR(*counts);
        Py_CLEAR(*inv);
    }
    return r;
}

/* *counts may come back NULL on CUDA when !want_counts && !want_inv. */
static int unique_flat(PcsTensor *x, bool consecutive, bool want_inv, bool want_counts,
                       PcsTensor **uniq, PcsTensor **inv, PcsTensor **counts)
{
    *uniq = *inv = *counts = NULL;
    int64_t n = pcs_tensor_numel(x);
    PcsTensor *flat = pcs_tensor_reshape(x, 1, &n);
    PcsTensor *xs = flat ? pcs_tensor_contiguous(flat, false) : NULL;
    Py_XDECREF(flat);
    if (!xs)
        return -1;
    int r = 0;
    if (x->device >= 0) {
        PcsTensor *sorted = NULL, *perm = NULL;
        if (!consecutive) {
            sorted = pcs_tensor_empty(1, &n, x->dtype, x->device, false);
            perm = sorted && want_inv ? pcs_tensor_empty(1, &n, PCS_INT64, x->device, false) : NULL;
            r = sorted && (perm || !want_inv) ? 0 : -1;
            if (r == 0)
                r = pcs_sort_block(xs, 1, n, false, true, sorted, perm, "unique");
        }
        if (r == 0)
            r = unique_cuda(sorted ? sorted : xs, perm, want_inv, want_counts, uniq, inv, counts);
        Py_XDECREF(sorted);
        Py_XDECREF(perm);
    } else {
        PyObject *xa = pcs_ops_numpy_in(xs, xs->dtype);
        PyObject *t = xa ? pcs_np_call("unique_flat", Py_BuildValue("OO", xa, consecutive ? Py_True : Py_False))
                         : NULL;
        Py_XDECREF(xa);
        if (!t || !PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 3) {
            if (t && !PyErr_Occurred())
                PyErr_SetString(PyExc_RuntimeError, "unique: the NumPy kernel returned no 3-tuple");
            Py_XDECREF(t);
            r = -1;
        } else {
            *uniq = pcs_np_tensor(PyTuple_GET_ITEM(t, 0), x->dtype);
            *inv = *uniq && want_inv ? pcs_np_tensor(PyTuple_GET_ITEM(t, 1), PCS_INT64) : NULL;
            *counts = *uniq && (*inv || !want_inv) ? pcs_np_tensor(PyTuple_GET_ITEM(t, 2), PCS_INT64) : NULL;
            Py_DECREF(t);
            r = *counts ? 0 : -1;
        }
    }
    Py_DECREF(xs);
    if (r == 0 && *inv) { /* inverse has the input's shape */
        PcsTensor *iv = pcs_tensor_reshape(*inv, x->ndim, x->sizes);
        Py_SETREF(*inv, iv);
        r = iv ? 0 : -1;
    }
    if (r < 0) {
        Py_CLEAR(*uniq);
        Py_CLEAR(*inv);
        Py_CLEAR(*counts);
    }
    return r;
}

/* The dim-d slices of x as the rows of a contiguous [m, w] block (a 0-dim x
 * is one row of one). */
static PcsTensor *slices_first(PcsTensor *x, int d, int64_t *sizes)
{
    int64_t strides[PCS_MAX_DIMS];
    int nd = x->ndim, k = 1;
    sizes[0] = nd ? x->sizes[d] : 1;
    strides[0] = nd ? x->strides[d] : 1;
    for (int i = 0; i < nd; i++)
        if (i != d) {
            sizes[k] = x->sizes[i];
            strides[k++] = x->strides[i];
        }
    PcsTensor *v = pcs_tensor_alias(x, x->offset, nd ? nd : 1, sizes, strides);
    PcsTensor *c = v ? pcs_tensor_contiguous(v, false) : NULL;
    Py_XDECREF(v);
    return c;
}

typedef struct {
    int dtype, consecutive;
    const void *x;
    int64_t m, w;
    void *uniq;
    int64_t *counts, *inverse, *num;
} udim_ctx;

static int udim_call(const void *c, void *ws, size_t *bytes, cudaStream_t s)
{
    const udim_ctx *a = c;
    return pcs_unique_dim(a->dtype, a->x, a->m, a->w, a->consecutive, a->uniq, a->counts, a->inverse,
                          a->num, ws, bytes, s);
}

/* unique / unique_consecutive along d: the values (x's shape with d
 * shortened), the 1-D inverse and the counts. CUDA: pcs_unique_dim; the
 * CPU: NumPy. */
static int unique_dim(PcsTensor *x, int d, bool consecutive, PcsTensor **uniq, PcsTensor **inv,
                      PcsTensor **counts)
{
    *uniq = *inv = *counts = NULL;
    int64_t sizes[PCS_MAX_DIMS], one = 1, num = 0;
    int nd = x->ndim ? x->ndim : 1;
    PcsTensor *xc = slices_first(x, d, sizes);
    if (!xc)
        return -1;
    int64_t m = sizes[0], w = 1;
    for (int i = 1; i < nd; i++)
        w *= sizes[i];
    int r = -1;
    if (x->device >= 0) {
        PcsTensor *u = pcs_tensor_empty(nd, sizes, x->dtype, x->device, false);
        PcsTensor *cn = u ? pcs_tensor_empty(1, &m, PCS_INT64, x->device, false) : NULL;
        PcsTensor *iv = cn ? pcs_tensor_empty(1, &m, PCS_INT64, x->device, false) : NULL;
        PcsTensor *nt = iv ? pcs_tensor_empty(1, &one, PCS_INT64, x->device, false) : NULL;
        if (nt) {
            udim_ctx c = {x->dtype, consecutive, pcs_tensor_data(xc), m, w, pcs_tensor_data(u),
                          pcs_tensor_data(cn), pcs_tensor_data(iv), pcs_tensor_data(nt)};
            r = pcs_cub_run(x->device, "unique", x->dtype, udim_call, &c);
        }
        if (r == 0)
            r = pcs_read_element(nt, &num); /* waits for the device */
        if (r == 0 && (num < 0 || num > m)) {
            PyErr_SetString(PyExc_RuntimeError, "unique: the device returned an impossible count");
            r = -1;
        }
        Py_XDECREF(nt);
        if (r == 0) { /* the first num slices, dim d back in its place, contiguous */
            int64_t os[PCS_MAX_DIMS], ost[PCS_MAX_DIMS];
            for (int i = 0; i < nd; i++) {
                int src = !x->ndim ? 0 : i < d ? i + 1 : i == d ? 0 : i;
                os[i] = src == 0 ? num : u->sizes[src];
                ost[i] = u->strides[src];
            }
            PcsTensor *v = pcs_tensor_alias(u, u->offset, nd, os, ost);
            *uniq = v ? pcs_tensor_contiguous(v, false) : NULL;
            Py_XDECREF(v);
            *counts = narrow1(cn, num);
            cn = NULL;
            *inv = iv;
            iv = NULL;
            r = *uniq && *counts ? 0 : -1;
        }
        Py_XDECREF(u);
        Py_XDECREF(cn);
        Py_XDECREF(iv);
    } else {
        PyObject *xa = pcs_ops_numpy_in(xc, xc->dtype);
        PyObject *t = xa ? pcs_np_call("unique_dim", Py_BuildValue("OiO", xa, 0, consecutive ? Py_True : Py_False))
                         : NULL;
        Py_XDECREF(xa);
        if (t && PyTuple_Check(t) && PyTuple_GET_SIZE(t) == 3) {
            PcsTensor *u = pcs_np_tensor(PyTuple_GET_ITEM(t, 0), x->dtype);
            *inv = u ? pcs_np_tensor(PyTuple_GET_ITEM(t, 1), PCS_INT64) : NULL;
            *counts = *inv ? pcs_np_tensor(PyTuple_GET_ITEM(t, 2), PCS_INT64) : NULL;
            if (*counts) { /* dim 0 of the slices back to d */
                int64_t os[PCS_MAX_DIMS], ost[PCS_MAX_DIMS];
                for (int i = 0; i < nd; i++) {
                    int src = !x->ndim ? 0 : i < d ? i + 1 : i == d ? 0 : i;
                    os[i] = u->sizes[src];
                    ost[i] = u->strides[src];
                }
                PcsTensor *v = pcs_tensor_alias(u, u->offset, nd, os, ost);
                *uniq = v ? pcs_tensor_contiguous(v, false) : NULL;
                Py_XDECREF(v);
            }
            Py_XDECREF(u);
            r = *uniq ? 0 : -1;
        } else if (t || !PyErr_Occurred()) {
            PyErr_SetString(PyExc_RuntimeError, "unique: the NumPy kernel returned no 3-tuple");
        }
        Py_XDECREF(t);
    }
    Py_DECREF(xc);
    if (r < 0) {
        Py_CLEAR(*uniq);
        Py_CLEAR(*inv);
        Py_CLEAR(*counts);
    }
    return r;
}

/* unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None),
 * unique_consecutive(input, return_inverse=False, return_counts=False, dim=None) */
static PyObject *unique_entry(bool consecutive, PyObject *self, PyObject *const *args,
                              Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names_u[] = {"input", "sorted", "return_inverse", "return_counts", "dim", NULL};
    static const char *const names_c[] = {"input", "return_inverse", "return_counts", "dim", NULL};
    const char *fname = consecutive ? "unique_consecutive" : "unique";
    int base = self ? -1 : 0, sh = consecutive ? 0 : 1;
    if (pcs_check_kwargs(kw, fname, consecutive ? names_c : names_u) < 0)
        return NULL;
    if (nargs > base + 4 + sh) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %d positional arguments", fname, base + 4 + sh);
        return NULL;
    }
    PcsTensor *x = pcs_input_arg(self, args, nargs, kw, fname);
    if (!x)
        return NULL;
    int sorted = consecutive ? 1 : pcs_flag_arg(pcs_arg(args, nargs, kw, base + 1, "sorted"), true);
    int inv = sorted < 0 ? -1 : pcs_flag_arg(pcs_arg(args, nargs, kw, base + 1 + sh, "return_inverse"), false);
    int cnt = inv < 0 ? -1 : pcs_flag_arg(pcs_arg(args, nargs, kw, base + 2 + sh, "return_counts"), false);
    if (cnt < 0)
        return NULL;
    if (pcs_is_complex(x->dtype))
        return pcs_not_implemented(fname, x->dtype);
    PyObject *dim_o = pcs_arg(args, nargs, kw, base + 3 + sh, "dim");
    PcsTensor *u = NULL, *iv = NULL, *c = NULL;
    if (dim_o && dim_o != Py_None) {
        int d = pcs_dim_arg(dim_o, x->ndim, 0, fname);
        if (d < 0 || unique_dim(x, x->ndim ? d : 0, consecutive, &u, &iv, &c) < 0)
            return NULL;
    } else if (unique_flat(x, consecutive, inv, cnt, &u, &iv, &c) < 0) {
        return NULL;
    }
    if (!inv && !cnt) {
        Py_XDECREF(iv);
        Py_XDECREF(c);
        return (PyObject *)u;
    }
    PyObject *r = PyTuple_New(1 + inv + cnt);
    if (!r) {
        Py_XDECREF(u);
        Py_XDECREF(iv);
        Py_XDECREF(c);
        return NULL;
    }
    PyTuple_SET_ITEM(r, 0, (PyObject *)u);
    if (inv)
        PyTuple_SET_ITEM(r, 1, (PyObject *)iv);
    else
        Py_XDECREF(iv);
    if (cnt)
        PyTuple_SET_ITEM(r, 1 + inv, (PyObject *)c);
    else
        Py_XDECREF(c);
    return r;
}

/* ------------------------------------------------------------------------ */
/* bincount / histc / count_nonzero                                          */

/* The arguments of a bincount or histc launch, for pcs_cub_run. */
typedef struct {
    int dtype; /* bincount: the output's; histc: the input's */
    const void *x, *weights;
    int64_t n, bins;
    double lo, hi;
    void *out;
} hist_ctx;

static int bincount_call(const void *c, void *ws, size_t *bytes, cudaStream_t s)
{
    const hist_ctx *a = c;
    return pcs_bincount(a->x, a->n, a->weights, a->dtype, a->bins, a->out, ws, bytes, s);
}

static int histc_call(const void *c, void *ws, size_t *bytes, cudaStream_t s)
{
    const hist_ctx *a = c;
    return pcs_histc(a->dtype, a->x, a->n, a->bins, a->lo, a->hi, a->out, ws, bytes, s);
}

/* bincount(input, weights=None, minlength=0) */
static PyObject *bincount_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "weights", "minlength", NULL};
    int base = self ? -1 : 0;
    if (pcs_check_kwargs(kw, "bincount", names) < 0)
        return NULL;
    PcsTensor *x = pcs_input_arg(self, args, nargs, kw, "bincount");
    if (!x)
        return NULL;
    PyObject *w_o = pcs_arg(args, nargs, kw, base + 1, "weights");
    PyObject *ml_o = pcs_arg(args, nargs, kw, base + 2, "minlength");
    int64_t minlength = 0;
    if (ml_o && pcs_int64_arg(ml_o, &minlength) < 0)
        return NULL;
    if (minlength < 0) {
        PyErr_SetString(PyExc_RuntimeError, "minlength should be >= 0");
        return NULL;
    }
    if (x->ndim != 1 || !pcs_is_integral(x->dtype, false)) {
        PyErr_SetString(PyExc_RuntimeError, "bincount only supports 1-d non-negative integral inputs.");
        return NULL;
    }
    PcsTensor *w = NULL;
    if (w_o && w_o != Py_None) {
        if (!PcsTensor_Check(w_o)) {
            PyErr_SetString(PyExc_TypeError, "bincount(): argument 'weights' must be Tensor");
            return NULL;
        }
        w = (PcsTensor *)w_o;
        if (w->ndim != 1 || w->sizes[0] != x->sizes[0]) {
            PyErr_SetString(PyExc_RuntimeError, "weights should be 1-d and have the same length as input");
            return NULL;
        }
        if (w->device != x->device) {
            PyErr_SetString(PyExc_RuntimeError, "Expected all tensors to be on the same device (bincount(): weights)");
            return NULL;
        }
        if (pcs_is_complex(w->dtype))
            return pcs_not_implemented("bincount", w->dtype);
    }
    int odt = w ? (w->dtype == PCS_FLOAT32 ? PCS_FLOAT32 : PCS_FLOAT64) : PCS_INT64;
    int64_t n = x->sizes[0], lo = 0, hi = -1;
    if (n && (pcs_reduced_int(x, "min", &lo) < 0 || pcs_reduced_int(x, "max", &hi) < 0))
        return NULL;
    if (lo < 0) {
        PyErr_SetString(PyExc_RuntimeError, "bincount only supports 1-d non-negative integral inputs.");
        return NULL;
    }
    int64_t bins = hi + 1 > minlength ? hi + 1 : minlength;
    PcsTensor *res = NULL;
    if (x->device < 0) {
        PcsTensor *xi = pcs_tensor_to(x, PCS_INT64, -1, false, false, false);
        PcsTensor *wd = xi && w ? pcs_tensor_to(w, odt, -1, false, false, false) : NULL;
        PyObject *xa = xi && (wd || !w) ? pcs_tensor_numpy(xi) : NULL;
        PyObject *wa = xa ? (wd ? pcs_tensor_numpy(wd) : Py_NewRef(Py_None)) : NULL;
        PyObject *ra = wa ? pcs_np_call("bincount", Py_BuildValue("OOL", xa, wa, (long long)bins)) : NULL;
        res = pcs_np_tensor(ra, odt);
        Py_XDECREF(ra);
        Py_XDECREF(xa);
        Py_XDECREF(wa);
        Py_XDECREF(xi);
        Py_XDECREF(wd);
        return (PyObject *)res;
    }
    PcsTensor *xi = pcs_tensor_to(x, PCS_INT64, x->device, false, false, false);
    PcsTensor *xc = xi ? pcs_tensor_contiguous(xi, false) : NULL;
    PcsTensor *wd = xc && w ? pcs_tensor_to(w, odt, w->device, false, false, false) : NULL;
    PcsTensor *wc = wd ? pcs_tensor_contiguous(wd, false) : NULL;
    Py_XDECREF(xi);
    Py_XDECREF(wd);
    res = xc && (wc || !w) ? pcs_tensor_empty(1, &bins, odt, x->device, false) : NULL;
    int r = res ? 0 : -1;
    if (r == 0 && (w || n == 0)) { /* atomics add into zeros; no sample: all zeros */
        PyObject *zero = PyLong_FromLong(0);
        r = zero ? pcs_tensor_fill(res, zero) : -1;
        Py_XDECREF(zero);
    }
    if (r == 0 && n && bins) {
        hist_ctx c = {odt, pcs_tensor_data(xc), wc ? pcs_tensor_data(wc) : NULL, n, bins, 0.0, 0.0,
                      pcs_tensor_data(res)};
        r = pcs_cub_run(x->device, "bincount", odt, bincount_call, &c);
    }
    Py_XDECREF(xc);
    Py_XDECREF(wc);
    if (r < 0) {
        Py_XDECREF(res);
        return NULL;
    }
    return (PyObject *)res;
}

/* histc(input, bins=100, min=0, max=0, *, out=None) */
static PyObject *histc_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "bins", "min", "max", "out", NULL};
    int base = self ? -1 : 0;
    if (pcs_check_kwargs(kw, "histc", names) < 0)
        return NULL;
    PcsTensor *x = pcs_input_arg(self, args, nargs, kw, "histc");
    if (!x)
        return NULL;
    PyObject *b_o = pcs_arg(args, nargs, kw, base + 1, "bins");
    PyObject *lo_o = pcs_arg(args, nargs, kw, base + 2, "min");
    PyObject *hi_o = pcs_arg(args, nargs, kw, base + 3, "max");
    int64_t bins = 100;
    double lo = 0, hi = 0;
    if (b_o && pcs_int64_arg(b_o, &bins) < 0)
        return NULL;
    if (lo_o && (lo = PyFloat_AsDouble(lo_o)) == -1.0 && PyErr_Occurred())
        return NULL;
    if (hi_o && (hi = PyFloat_AsDouble(hi_o)) == -1.0 && PyErr_Occurred())
        return NULL;
    if (!pcs_is_float(x->dtype) || (x->device >= 0 && x->dtype == PCS_BFLOAT16))
        return pcs_not_implemented("histc", x->dtype);
    if (x->device >= 0 && x->dtype == PCS_FLOAT16) { /* torch's _histc_cuda refuses half */
        PyErr_SetString(PyExc_RuntimeError, "HalfTensor is not supported");
        return NULL;
    }
    if (bins <= 0) {
        PyErr_SetString(PyExc_RuntimeError, "torch.histc: bins must be > 0");
        return NULL;
    }
    if (lo > hi) {
        PyErr_SetString(PyExc_RuntimeError, "torch.histc: max must be larger than min");
        return NULL;
    }
    int64_t n = pcs_tensor_numel(x);
    if (lo == hi && n) {
        if (pcs_reduced_double(x, "min", &lo) < 0 || pcs_reduced_double(x, "max", &hi) < 0)
            return NULL;
    }
    if (lo == hi) {
        lo -= 1;
        hi += 1;
    }
    if (!isfinite(lo) || !isfinite(hi)) {
        char msg[128]; /* PyErr_Format has no %g */
        snprintf(msg, sizeof msg, "torch.histc: range of [%g, %g] is not finite", lo, hi);
        PyErr_SetString(PyExc_RuntimeError, msg);
        return NULL;
    }
    PcsTensor *xc = pcs_tensor_contiguous(x, false);
    PcsTensor *res = xc ? pcs_tensor_empty(1, &bins, x->dtype, x->device, false) : NULL;
    int r = res ? 0 : -1;
    if (r == 0 && x->device >= 0) {
        hist_ctx c = {x->dtype, pcs_tensor_data(xc), NULL, n, bins, lo, hi, pcs_tensor_data(res)};
        r = pcs_cub_run(x->device, "histc", x->dtype, histc_call, &c);
    } else if (r == 0) {
        PcsTensor *rt = NULL;
        PyObject *xa = pcs_ops_numpy_in(xc, x->dtype);
        PyObject *ra = xa ? pcs_np_out(res, &rt) : NULL;
        PyObject *rr = ra ? pcs_np_call("histc", Py_BuildValue("OLddO", xa, (long long)bins, lo, hi, ra)) : NULL;
        r = rr ? pcs_np_done(res, rt) : -1;
        if (!rr)
            Py_XDECREF(rt);
        Py_XDECREF(rr);
        Py_XDECREF(xa);
        Py_XDECREF(ra);
    }
    Py_XDECREF(xc);
    if (r < 0) {
        Py_XDECREF(res);
        return NULL;
    }
    return pcs_into_outs((PyObject *)res, pcs_arg(args, nargs, kw, -1, "out"), 1, "histc");
}

/* count_nonzero(input, dim=None): (input != 0).sum(dim), int64. */
static PyObject *count_nonzero_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                     PyObject *kw)
{
    static const char *const names[] = {"input", "dim", NULL};
    int base = self ? -1 : 0;
    if (pcs_check_kwargs(kw, "count_nonzero", names) < 0)
        return NULL;
    PcsTensor *x = pcs_input_arg(self, args, nargs, kw, "count_nonzero");
    if (!x)
        return NULL;
    PyObject *dim = pcs_arg(args, nargs, kw, base + 1, "dim");
    PyObject *zero = PyLong_FromLong(0);
    PyObject *ne = zero ? pcs_binary_operator(PCS_OPR_NE, (PyObject *)x, zero, false) : NULL;
    Py_XDECREF(zero);
    if (!ne)
        return NULL;
    PyObject *name = PyUnicode_FromString("sum");
    /* one argument (a tuple of dims must not become the argument list) */
    PyObject *r = name ? PyObject_CallMethodOneArg(ne, name, dim ? dim : Py_None) : NULL;
    Py_XDECREF(name);
    Py_DECREF(ne);
    return r;
}

/* ------------------------------------------------------------------------ */
/* Tables                                                                    */

PCS_OP_PAIR(unique, unique_entry(false, self, a, n, kw))
PCS_OP_PAIR(unique_consecutive, unique_entry(true, self, a, n, kw))
PCS_OP_PAIR(bincount, bincount_entry(self, a, n, kw))
PCS_OP_PAIR(histc, histc_entry(self, a, n, kw))
PCS_OP_PAIR(count_nonzero, count_nonzero_entry(self, a, n, kw))

#define SELECT_LIST(X)                                                                            \
    X(unique, "Sorted unique values; return_inverse, return_counts, dim (CPU) as torch.")       \
    X(unique_consecutive, "Collapses runs of equal neighbours; return_inverse, return_counts.")  \
    X(bincount, "Counts of each non-negative integer (weighted with weights=).")                 \
    X(histc, "Histogram of bins equal bins between min and max (the data's range if equal).")   \
    X(count_nonzero, "Number of non-zero elements (over dim).")

PyMethodDef pcs_ops_select_tmethods[] = {SELECT_LIST(PCS_T_ENTRY){NULL, NULL, 0, NULL}};
PyMethodDef pcs_ops_select_functions[] = {
    SELECT_LIST(PCS_F_ENTRY)
    {NULL, NULL, 0, NULL},
};
