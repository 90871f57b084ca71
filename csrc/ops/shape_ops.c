/* shape_ops.c: ops that rearrange elements without computing on them: flip
 * (fliplr, flipud), roll, repeat, tile, repeat_interleave, movedim
 * (moveaxis). Diagonals and triangles are diag.c.
 *
 * Most are one or a few copies through the copy core (tensor/copy.c) with
 * geometry chosen here, so they run at copy bandwidth on every layout with
 * no kernel of their own:
 *   flip      the input seen with negative strides on the flipped dims,
 *             copied into a new tensor;
 *   roll      for each rolled dim, two pieces swap places: one copy per
 *             combination of pieces (2 for one dim, 4 for two);
 *   repeat    the result seen as [r0, s0, r1, s1, ...], the input as the
 *             same shape with stride 0 on the r dims: one copy;
 *   repeat_interleave with one count: the same with the r dim after s.
 */
#include "ops/ops.h"

#include <string.h>

#include "kernels/kernels.h"
#include "runtime/device.h"
#include "runtime/stream.h"
#include "tensor/copy.h"

#define T(o) ((PcsTensor *)(o))

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */

/* Dims given as varargs ints, one sequence, or one int; -1 with exception. */
static int dims_list(PyObject *const *args, Py_ssize_t nargs, int64_t *out)
{
    if (nargs == 1 && PyIndex_Check(args[0]) && !PcsTensor_Check(args[0]))
        return pcs_int64_arg(args[0], out) < 0 ? -1 : 1;
    return pcs_parse_ints(args, nargs, out);
}

/* A mask of the given dims (wrapped); duplicate dims raise as torch. */
static int dims_mask(const int64_t *dims, int n, int ndim, bool *mask)
{
    memset(mask, 0, PCS_MAX_DIMS * sizeof(bool));
    for (int i = 0; i < n; i++) {
        int d = pcs_wrap_dim(dims[i], ndim);
        if (d < 0)
            return -1;
        if (ndim && mask[d]) {
            PyErr_Format(PyExc_RuntimeError, "dim %d appears multiple times in the list of dims", d);
            return -1;
        }
        if (ndim)
            mask[d] = true;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* flip                                                                      */

static PyObject *flip_mask(PcsTensor *t, const bool *mask)
{
    int64_t strides[PCS_MAX_DIMS], offset = t->offset;
    bool empty = pcs_tensor_numel(t) == 0;
    for (int d = 0; d < t->ndim; d++) {
        strides[d] = t->strides[d];
        if (mask[d] && !empty) {
            offset += (t->sizes[d] - 1) * t->strides[d];
            strides[d] = -strides[d];
        }
    }
    /* A negative-stride view never leaves this function: the copy core reads
     * it and the result is a fresh tensor. */
    return pcs_materialize(pcs_tensor_alias(t, offset, t->ndim, t->sizes, strides));
}

static PyObject *flip_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "dims", NULL};
    if (pcs_check_kwargs(kw, "flip", names) < 0)
        return NULL;
    PcsTensor *t = pcs_input_arg(self, args, nargs, kw, "flip");
    if (!t)
        return NULL;
    PyObject *dobj = pcs_arg(args, nargs, kw, self ? -1 : 1, "dims");
    int64_t dims[PCS_MAX_DIMS];
    int n;
    if (dobj)
        n = dims_list(&dobj, 1, dims);
    else if (self && nargs > 0)
        n = dims_list(args, nargs, dims);
    else {
        PyErr_SetString(PyExc_TypeError, "flip() missing required argument 'dims'");
        return NULL;
    }
    bool mask[PCS_MAX_DIMS];
    if (n < 0 || dims_mask(dims, n, t->ndim, mask) < 0)
        return NULL;
    return flip_mask(t, mask);
}

static PyObject *flip_lr_ud(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw,
                            bool lr)
{
    PcsTensor *t = pcs_input_arg(self, args, nargs, kw, lr ? "fliplr" : "flipud");
    if (!t)
        return NULL;
    if (t->ndim < (lr ? 2 : 1)) {
        PyErr_Format(PyExc_RuntimeError, "Input must be >= %d-d.", lr ? 2 : 1);
        return NULL;
    }
    bool mask[PCS_MAX_DIMS] = {false};
    mask[lr ? 1 : 0] = true;
    return flip_mask(t, mask);
}

/* ------------------------------------------------------------------------ */
/* roll                                                                      */

/* Rolls t by shift[d] along each dim d with shift[d] != 0 (already in
 * [0, size)): 2^k copies of pieces, k the number of rolled dims. */
static PyObject *roll_shifts(PcsTensor *t, const int64_t *shift)
{
    PcsTensor *res = pcs_tensor_empty(t->ndim, t->sizes, t->dtype, t->device, false);
    if (!res || pcs_tensor_numel(t) == 0)
        return (PyObject *)res;
    int rolled[PCS_MAX_DIMS], k = 0;
    for (int d = 0; d < t->ndim; d++)
        if (shift[d])
            rolled[k++] = d;
    for (uint32_t combo = 0; combo < (1u << k); combo++) {
        int64_t sizes[PCS_MAX_DIMS], soff = t->offset, doff = res->offset;
        memcpy(sizes, t->sizes, t->ndim * sizeof(int64_t));
        for (int j = 0; j < k; j++) {
            int d = rolled[j];
            int64_t n = t->sizes[d], s = shift[d];
            if (combo & (1u << j)) { /* the tail [n - s, n) lands at the front */
                sizes[d] = s;
                soff += (n - s) * t->strides[d];
            } else { /* the head [0, n - s) moves to [s, n) */
                sizes[d] = n - s;
                doff += s * res->strides[d];
            }
        }
        PcsTensor *sv = pcs_tensor_alias(t, soff, t->ndim, sizes, t->strides);
        PcsTensor *dv = sv ? pcs_tensor_alias(res, doff, res->ndim, sizes, res->strides) : NULL;
        int r = dv ? pcs_copy(dv, sv, false) : -1;
        Py_XDECREF(sv);
        Py_XDECREF(dv);
        if (r < 0) {
            Py_DECREF(res);
            return NULL;
        }
    }
    return (PyObject *)res;
}

static int64_t wrap_shift(int64_t s, int64_t n) { return n ? ((s % n) + n) % n : 0; }

static PyObject *roll_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "shifts", "dims", NULL};
    if (pcs_check_kwargs(kw, "roll", names) < 0)
        return NULL;
    PcsTensor *t = pcs_input_arg(self, args, nargs, kw, "roll");
    if (!t)
        return NULL;
    int base = self ? -1 : 0;
    PyObject *so = pcs_arg(args, nargs, kw, base + 1, "shifts"),
             *dobj = pcs_arg(args, nargs, kw, base + 2, "dims");
    if (!so) {
        PyErr_SetString(PyExc_TypeError, "roll() missing required argument 'shifts'");
        return NULL;
    }
    int64_t shifts[PCS_MAX_DIMS], dims[PCS_MAX_DIMS];
    int ns = dims_list(&so, 1, shifts), nd = 0;
    if (ns < 0 || (dobj && dobj != Py_None && (nd = dims_list(&dobj, 1, dims)) < 0))
        return NULL;
    if (nd == 0) {
        if (ns != 1) {
            PyErr_Format(PyExc_RuntimeError, "shifts and dimensions must align. shifts: %d, dims:%d",
                         ns, nd);
            return NULL;
        }
        /* No dims: the flattened tensor rolls, and keeps its shape. */
        int64_t n = pcs_tensor_numel(t), s = wrap_shift(shifts[0], n);
        PcsTensor *flat = pcs_tensor_reshape(t, 1, &n);
        if (!flat)
            return NULL;
        PyObject *r = roll_shifts(flat, &s);
        Py_DECREF(flat);
        if (!r)
            return NULL;
        PcsTensor *v = pcs_tensor_view(T(r), t->ndim, t->sizes);
        Py_DECREF(r);
        return (PyObject *)v;
    }
    if (ns != nd) {
        PyErr_Format(PyExc_RuntimeError, "shifts and dimensions must align. shifts: %d, dims:%d", ns,
                     nd);
        return NULL;
    }
    int64_t total[PCS_MAX_DIMS] = {0};
    for (int i = 0; i < nd; i++) {
        int d = pcs_wrap_dim(dims[i], t->ndim);
        if (d < 0)
            return NULL;
        if (t->ndim == 0)
            continue;
        total[d] = wrap_shift(total[d] + wrap_shift(shifts[i], t->sizes[d]), t->sizes[d]);
    }
    return roll_shifts(t, total);
}

/* ------------------------------------------------------------------------ */
/* repeat, tile, repeat_interleave                                           */

/* One copy from src into dst over a geometry of n dims: each dim has a size,
 * a stride in dst and one in src (0 where src repeats). */
static int geom_copy(PcsTensor *dst, int64_t doff, PcsTensor *src, int64_t soff, int n,
                     const int64_t *sizes, const int64_t *dstr, const int64_t *sstr)
{
    PcsTensor *dv = pcs_tensor_alias(dst, doff, n, sizes, dstr);
    PcsTensor *sv = dv ? pcs_tensor_alias(src, soff, n, sizes, sstr) : NULL;
    int r = sv ? pcs_copy(dv, sv, false) : -1;
    Py_XDECREF(dv);
    Py_XDECREF(sv);
    return r;
}

/* The result of repeating contiguous c (ndim dims) rep times along dim d. */
static PcsTensor *repeat_one(PcsTensor *c, int d, int64_t rep)
{
    int64_t sizes[PCS_MAX_DIMS], A = 1, B = 1;
    memcpy(sizes, c->sizes, c->ndim * sizeof(int64_t));
    for (int i = 0; i < c->ndim; i++) {
        if (i < d)
            A *= c->sizes[i];
        else if (i > d)
            B *= c->sizes[i];
    }
    int64_t s = c->sizes[d];
    sizes[d] = s * rep;
    PcsTensor *res = pcs_tensor_empty(c->ndim, sizes, c->dtype, c->device, false);
    if (!res || pcs_tensor_numel(res) == 0)
        return res;
    const int64_t g[3] = {A, rep, s * B}, ds[3] = {rep * s * B, s * B, 1}, ss[3] = {s * B, 0, 1};
    if (geom_copy(res, 0, c, c->offset, 3, g, ds, ss) < 0)
        Py_CLEAR(res);
    return res;
}

static PyObject *repeat_sizes(PcsTensor *t, const int64_t *reps, int n)
{
    if (n < t->ndim) {
        PyErr_SetString(PyExc_RuntimeError, "Number of dimensions of repeat dims can not be smaller "
                                            "than number of dimensions of tensor");
        return NULL;
    }
    int lead = n - t->ndim;
    int64_t psz[PCS_MAX_DIMS], pst[PCS_MAX_DIMS], osz[PCS_MAX_DIMS];
    for (int i = 0; i < n; i++) {
        psz[i] = i < lead ? 1 : t->sizes[i - lead];
        pst[i] = i < lead ? 0 : t->strides[i - lead];
        if (reps[i] < 0) {
            osz[i] = reps[i]; /* pcs_check_shape names it */
        } else if (__builtin_mul_overflow(psz[i], reps[i], &osz[i])) {
            PyErr_SetString(PyExc_RuntimeError, "repeat: the result's size overflows");
            return NULL;
        }
    }
    if (pcs_check_shape(n, osz) < 0)
        return NULL;
    PcsTensor *res = pcs_tensor_empty(n, osz, t->dtype, t->device, false);
    if (!res || pcs_tensor_numel(res) == 0)
        return (PyObject *)res;
    /* The one-copy geometry: (r_i, s_i) pairs, size-1 entries dropped. */
    int64_t g[2 * PCS_MAX_DIMS], ds[2 * PCS_MAX_DIMS], ss[2 * PCS_MAX_DIMS];
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (reps[i] != 1) {
            g[k] = reps[i];
            ds[k] = psz[i] * res->strides[i];
            ss[k++] = 0;
        }
        if (psz[i] != 1) {
            g[k] = psz[i];
            ds[k] = res->strides[i];
            ss[k++] = pst[i];
        }
    }
    if (k == 0) {
        g[0] = 1;
        ds[0] = ss[0] = 1;
        k = 1;
    }
    if (k <= PCS_MAX_DIMS) {
        if (geom_copy(res, 0, t, t->offset, k, g, ds, ss) < 0)
            Py_CLEAR(res);
        return (PyObject *)res;
    }
    /* Too many dims for one geometry: one dim at a time. */
    Py_DECREF(res);
    PcsTensor *padded = pcs_tensor_reshape(t, n, psz);
    PcsTensor *cur = padded ? pcs_tensor_contiguous(padded, false) : NULL;
    Py_XDECREF(padded);
    for (int i = 0; cur && i < n; i++) {
        if (reps[i] == 1)
            continue;
        PcsTensor *next = repeat_one(cur, i, reps[i]);
        Py_SETREF(cur, next);
    }
    return (PyObject *)cur;
}

static PyObject *m_repeat(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"repeats", NULL};
    if (pcs_check_kwargs(kw, "repeat", names) < 0)
        return NULL;
    PyObject *r = kw ? pcs_arg(args, nargs, kw, -1, "repeats") : NULL;
    int64_t reps[PCS_MAX_DIMS];
    int n = r ? dims_list(&r, 1, reps) : dims_list(args, nargs, reps);
    return n < 0 ? NULL : repeat_sizes(T(self), reps, n);
}

static PyObject *tile_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "dims", NULL};
    if (pcs_check_kwargs(kw, "tile", names) < 0)
        return NULL;
    PcsTensor *t = pcs_input_arg(self, args, nargs, kw, "tile");
    if (!t)
        return NULL;
    PyObject *dobj = pcs_arg(args, nargs, kw, self ? -1 : 1, "dims");
    int64_t dims[PCS_MAX_DIMS], reps[PCS_MAX_DIMS];
    int n = dobj ? dims_list(&dobj, 1, dims) : self ? dims_list(args, nargs, dims) : -2;
    if (n == -2)
        PyErr_SetString(PyExc_TypeError, "tile() missing required argument 'dims'");
    if (n < 0)
        return NULL;
    /* Fewer dims than the tensor: ones are prepended. */
    int pad = t->ndim > n ? t->ndim - n : 0;
    for (int i = 0; i < pad; i++)
        reps[i] = 1;
    memcpy(reps + pad, dims, n * sizeof(int64_t));
    return repeat_sizes(t, reps, n + pad);
}

/* 0..n-1 as int64 on `device` (repeat_interleave(repeats) alone). */
static PcsTensor *arange_i64(int64_t n, int device)
{
    PcsTensor *c = pcs_tensor_empty(1, &n, PCS_INT64, -1, false);
    if (!c)
        return NULL;
    int64_t *p = pcs_tensor_data(c);
    for (int64_t i = 0; i < n; i++)
        p[i] = i;
    if (device < 0)
        return c;
    PcsTensor *d = pcs_tensor_to(c, PCS_INT64, device, false, false, false);
    Py_DECREF(c);
    return d;
}

/* x repeated along d: counts[i] times for entry i (n == 1: every entry). */
static PyObject *interleave(PcsTensor *x, int d, const int64_t *counts, int64_t n)
{
    int64_t s = x->sizes[d], total = 0;
    bool overflow = false;
    for (int64_t i = 0; i < n; i++) {
        if (counts[i] < 0) {
            PyErr_SetString(PyExc_RuntimeError, "repeats can not be negative");
            return NULL;
        }
        overflow |= __builtin_add_overflow(total, counts[i], &total);
    }
    if (n == 1)
        overflow = __builtin_mul_overflow(s, counts[0], &total);
    if (overflow) {
        PyErr_SetString(PyExc_RuntimeError, "repeat_interleave: the result's size overflows");
        return NULL;
    }
    int64_t sizes[PCS_MAX_DIMS];
    memcpy(sizes, x->sizes, x->ndim * sizeof(int64_t));
    sizes[d] = total;
    if (pcs_check_shape(x->ndim, sizes) < 0)
        return NULL;
    PcsTensor *res = pcs_tensor_empty(x->ndim, sizes, x->dtype, x->device, false);
    if (!res || pcs_tensor_numel(res) == 0)
        return (PyObject *)res;
    int64_t g[PCS_MAX_DIMS], ds[PCS_MAX_DIMS], ss[PCS_MAX_DIMS];
    /* [..., run, count, ...]: a run of consecutive entries with one count
     * is one copy (all of them when the count is uniform). */
    int64_t at = 0;
    for (int64_t i = 0; i < s;) {
        int64_t c = counts[n == 1 ? 0 : i], j = i + 1;
        while (n != 1 && j < s && counts[j] == c)
            j++;
        if (n == 1)
            j = s;
        if (c > 0) {
            int k = 0;
            for (int q = 0; q < x->ndim; q++) {
                if (q == d) {
                    g[k] = j - i;
                    ds[k] = c * res->strides[q];
                    ss[k++] = x->strides[q];
                    g[k] = c;
                    ds[k] = res->strides[q];
                    ss[k++] = 0;
                } else {
                    g[k] = x->sizes[q];
                    ds[k] = res->strides[q];
                    ss[k++] = x->strides[q];
                }
            }
            if (geom_copy(res, at * res->strides[d], x, x->offset + i * x->strides[d], k, g, ds,
                          ss) < 0) {
                Py_DECREF(res);
                return NULL;
            }
        }
        at += c * (j - i);
        i = j;
    }
    return (PyObject *)res;
}

static PyObject *repeat_interleave_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                         PyObject *kw)
{
    static const char *const names[] = {"input", "repeats", "dim", "output_size", NULL};
    if (pcs_check_kwargs(kw, "repeat_interleave", names) < 0)
        return NULL;
    PcsTensor *t = pcs_input_arg(self, args, nargs, kw, "repeat_interleave");
    if (!t)
        return NULL;
    int base = self ? -1 : 0;
    PyObject *ro = pcs_arg(args, nargs, kw, base + 1, "repeats"),
             *dobj = pcs_arg(args, nargs, kw, base + 2, "dim"),
             *oso = pcs_arg(args, nargs, kw, -1, "output_size");
    PcsTensor *owned = NULL, *x = t;
    PyObject *res = NULL;
    int64_t *counts = NULL, n = 1, one = 0, out_size = -1;
    if (pcs_int_arg_or(oso, -1, &out_size) < 0)
        return NULL;
    if (!ro && !self) { /* repeat_interleave(repeats): 0..n-1 repeated */
        if (t->ndim != 1) {
            PyErr_SetString(PyExc_RuntimeError, "repeat_interleave only accept 1D vector as repeat");
            return NULL;
        }
        ro = (PyObject *)t;
        if (!(owned = arange_i64(t->sizes[0], t->device)))
            return NULL;
        x = owned;
    } else if (!ro) {
        PyErr_SetString(PyExc_TypeError, "repeat_interleave() missing required argument 'repeats'");
        return NULL;
    }
    int64_t dim64;
    bool flat = !dobj || dobj == Py_None;
    if (flat) {
        int64_t numel = pcs_tensor_numel(x);
        PcsTensor *f = pcs_tensor_reshape(x, 1, &numel);
        if (!f)
            goto out;
        Py_XSETREF(owned, f);
        x = f;
        dim64 = 0;
    } else if (pcs_int64_arg(dobj, &dim64) < 0) {
        goto out;
    }
    int d = pcs_wrap_dim(dim64, x->ndim);
    if (d < 0)
        goto out;
    if (x->ndim == 0) { /* a 0-dim input with a dim: as a 1-element vector */
        int64_t one1 = 1;
        PcsTensor *f = pcs_tensor_reshape(x, 1, &one1);
        if (!f)
            goto out;
        Py_XSETREF(owned, f);
        x = f;
    }
    if (PcsTensor_Check(ro)) {
        PcsTensor *rt = T(ro);
        if (rt->ndim > 1) {
            PyErr_SetString(PyExc_RuntimeError, "repeats must be 0-dim or 1-dim tensor");
            goto out;
        }
        if (pcs_is_float(rt->dtype) || pcs_is_complex(rt->dtype)) {
            PyErr_Format(PyExc_RuntimeError,
                         "repeat_interleave: repeats must have an integral dtype, not %s",
                         pcs_dtypes[rt->dtype].legacy);
            goto out;
        }
        if (rt->device != t->device && rt->ndim > 0 && pcs_tensor_numel(rt) != 1) {
            PyErr_SetString(PyExc_RuntimeError,
                            "Expected all tensors to be on the same device, but found at least "
                            "two devices");
            goto out;
        }
        PyObject *lst = pcs_tensor_tolist(rt);
        if (!lst)
            goto out;
        if (PyList_Check(lst)) {
            PyObject *tup = PySequence_Tuple(lst);
            Py_DECREF(lst);
            if (!tup)
                goto out;
            n = PyTuple_GET_SIZE(tup);
            counts = PyMem_Malloc((n ? n : 1) * sizeof(int64_t));
            for (int64_t i = 0; counts && i < n; i++) {
                if (pcs_int64_arg(PyTuple_GET_ITEM(tup, i), &counts[i]) < 0) {
                    PyMem_Free(counts);
                    counts = NULL;
                    n = -1;
                }
            }
            Py_DECREF(tup);
            if (!counts) {
                if (n >= 0)
                    PyErr_NoMemory();
                goto out;
            }
        } else {
            int r = pcs_int64_arg(lst, &one);
            Py_DECREF(lst);
            if (r < 0)
                goto out;
        }
    } else if (pcs_int64_arg(ro, &one) < 0) {
        goto out;
    }
    if (counts && n == 1) { /* a one-element repeats broadcasts */
        one = counts[0];
        PyMem_Free(counts);
        counts = NULL;
    }
    if (counts && n != x->sizes[d]) {
        PyErr_Format(PyExc_RuntimeError,
                     "repeats must have the same size as input along dim, but got repeats.size(0) "
                     "= %lld and input.size(%d) = %lld",
                     (long long)n, d, (long long)x->sizes[d]);
        goto out;
    }
    res = counts ? interleave(x, d, counts, n) : interleave(x, d, &one, 1);
    if (res && out_size >= 0 && T(res)->sizes[d] != out_size) {
        PyErr_Format(PyExc_RuntimeError,
                     "repeat_interleave: output_size %lld does not match the repeats' sum %lld",
                     (long long)out_size, (long long)T(res)->sizes[d]);
        Py_CLEAR(res);
    }
out:
    PyMem_Free(counts);
    Py_XDECREF(owned);
    return res;
}

/* ------------------------------------------------------------------------ */
/* movedim                                                                   */

static int movedim_dims(PyObject *o, int ndim, int64_t *out, const char *what)
{
    int n = dims_list(&o, 1, out);
    if (n < 0)
        return -1;
    bool seen[PCS_MAX_DIMS] = {false};
    for (int i = 0; i < n; i++) {
        int d = pcs_wrap_dim(out[i], ndim);
        if (d < 0)
            return -1;
        if (seen[d]) {
            PyErr_Format(PyExc_RuntimeError, "movedim: repeated dim in `%s`", what);
            return -1;
        }
        seen[d] = true;
        out[i] = d;
    }
    return n;
}

static PyObject *movedim_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kw)
{
    static const char *const names[] = {"input", "source", "destination", NULL};
    if (pcs_check_kwargs(kw, "movedim", names) < 0)
        return NULL;
    PcsTensor *t = pcs_input_arg(self, args, nargs, kw, "movedim");
    if (!t)
        return NULL;
    int base = self ? -1 : 0;
    PyObject *so = pcs_arg(args, nargs, kw, base + 1, "source"),
             *dst = pcs_arg(args, nargs, kw, base + 2, "destination");
    if (!so || !dst) {
        PyErr_SetString(PyExc_TypeError, "movedim() missing required arguments 'source' and 'destination'");
        return NULL;
    }
    int64_t src[PCS_MAX_DIMS], des[PCS_MAX_DIMS];
    int ns = movedim_dims(so, t->ndim, src, "source");
    int nd = ns < 0 ? -1 : movedim_dims(dst, t->ndim, des, "destination");
    if (nd < 0)
        return NULL;
    if (ns != nd) {
        PyErr_Format(PyExc_RuntimeError,
                     "movedim: Invalid source or destination dims: source (%d dims) should "
                     "contain the same number of dims as destination (%d dims)",
                     ns, nd);
        return NULL;
    }
    int n = t->ndim, order[PCS_MAX_DIMS];
    bool src_used[PCS_MAX_DIMS] = {false}, dst_used[PCS_MAX_DIMS] = {false};
    for (int i = 0; i < n; i++)
        order[i] = -1;
    for (int i = 0; i < ns && n; i++) {
        order[des[i]] = (int)src[i];
        src_used[src[i]] = dst_used[des[i]] = true;
    }
    /* The other dims keep their relative order in the free places. */
    for (int i = 0, j = 0; i < n; i++) {
        if (src_used[i])
            continue;
        while (dst_used[j])
            j++;
        order[j++] = i;
    }
    int64_t sizes[PCS_MAX_DIMS], strides[PCS_MAX_DIMS];
    for (int i = 0; i < n; i++) {
        sizes[i] = t->sizes[order[i]];
        strides[i] = t->strides[order[i]];
    }
    return (PyObject *)pcs_tensor_alias(t, t->offset, n, sizes, strides);
}

/* ------------------------------------------------------------------------ */
/* Tables                                                                    */

PCS_OP_PAIR(flip, flip_entry(self, a, n, kw))
PCS_OP_PAIR(fliplr, flip_lr_ud(self, a, n, kw, true))
PCS_OP_PAIR(flipud, flip_lr_ud(self, a, n, kw, false))
PCS_OP_PAIR(roll, roll_entry(self, a, n, kw))
PCS_OP_PAIR(tile, tile_entry(self, a, n, kw))
PCS_OP_PAIR(repeat_interleave, repeat_interleave_entry(self, a, n, kw))
PCS_OP_PAIR(movedim, movedim_entry(self, a, n, kw))

#define FK PCS_FK
#define FN(f) PCS_FN(f)
#define SHAPE_LIST(X)                                                                             \
    X(flip, "flip(input, dims)\n\nA copy with the order of entries reversed along dims.")          \
    X(fliplr, "fliplr(input)\n\nflip along dim 1 (a copy).")                                      \
    X(flipud, "flipud(input)\n\nflip along dim 0 (a copy).")                                      \
    X(roll, "roll(input, shifts, dims=None)\n\nEntries shifted circularly along dims (the "       \
            "flattened tensor without dims).")                                                    \
    X(tile, "tile(input, dims)\n\nThe tensor repeated dims[i] times along dim i (ones prepended " \
            "to short dims).")                                                                    \
    X(repeat_interleave, "repeat_interleave(input, repeats, dim=None, *, output_size=None)\n\n"   \
                         "Each entry repeated `repeats` times (an int or one count per entry).")  \
    X(movedim, "movedim(input, source, destination)\n\nA view with dims moved to new places.")

PyMethodDef pcs_ops_shape_tmethods[] = {
    SHAPE_LIST(PCS_T_ENTRY)
    {"moveaxis", FN(m_movedim), FK, "moveaxis(source, destination)\n\nAlias of movedim()."},
    {"repeat", FN(m_repeat), FK,
     "repeat(*repeats)\n\nThe tensor repeated repeats[i] times along dim i (a copy)."},
    {NULL, NULL, 0, NULL},
};

PyMethodDef pcs_ops_shape_functions[] = {
    SHAPE_LIST(PCS_F_ENTRY)
    {"moveaxis", FN(f_movedim), FK, "moveaxis(input, source, destination)\n\nAlias of movedim()."},
    {NULL, NULL, 0, NULL},
};
