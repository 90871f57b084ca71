/* gather.c: the dim-wise indexing ops: gather, scatter (src or value,
 * reduce=), scatter_add, scatter_reduce, index_select, index_add, index_copy,
 * index_fill, take, take_along_dim; module functions, Tensor methods and
 * the in-place forms.
 *
 * Each is a plan for the indexing engine (ops/index.h): gather-like ops
 * (gather, scatter*) walk the index tensor's shape, with the index replacing
 * the coordinate along `dim`; select-like ops (index_*) walk the tensor's
 * shape with `dim` resized to the index's length. The engine checks the
 * range, then gathers or scatters (deterministically on CUDA: sorted runs).
 * As in torch, the index must be on the tensor's device, and a negative
 * index is out of range except for take and index_fill_. */
#include "ops/index.h"

#include <string.h>

#include "tensor/copy.h"

#define T(o) ((PcsTensor *)(o))

/* ------------------------------------------------------------------------ */
/* Plans                                                                     */

static int64_t dim_size(const PcsTensor *t, int dim) { return t->ndim ? t->sizes[dim] : 1; }
static int64_t dim_stride(const PcsTensor *t, int dim) { return t->ndim ? t->strides[dim] : 0; }

static int index_dtype_check(PcsTensor *idx, const char *fname, bool int32_ok)
{
    if (idx->dtype == PCS_INT64 || (int32_ok && idx->dtype == PCS_INT32))
        return 0;
    PyErr_Format(PyExc_RuntimeError, "%s(): Expected dtype %s for index", fname,
                 int32_ok ? "int32 or int64" : "int64");
    return -1;
}

/* gather/scatter: the result is index's shape; index replaces dim. `other`
 * (scatter's src) must be at least index's size on every dim. */
static int dim_plan(pcs_index_plan *p, PcsTensor *t, int dim, PcsTensor *index, PcsTensor *other,
                    const char *fname)
{
    if (index_dtype_check(index, fname, false) < 0)
        return -1;
    int tn = t->ndim ? t->ndim : 1, in = index->ndim ? index->ndim : 1;
    if (tn != in) {
        PyErr_Format(PyExc_RuntimeError,
                     "Index tensor must have the same number of dimensions as input tensor");
        return -1;
    }
    /* src is read through its strides over index's shape: it must have
     * index's dims, each at least as large (checked below). */
    if (other && other->ndim != index->ndim) {
        PyErr_Format(PyExc_RuntimeError,
                     "Index tensor must have the same number of dimensions as src tensor");
        return -1;
    }
    for (int d = 0; d < index->ndim; d++) {
        bool bad = (d != dim && t->ndim && index->sizes[d] > t->sizes[d]) ||
                   (other && other->ndim && index->sizes[d] > other->sizes[d]);
        if (bad) {
            char a[256], b[256];
            pcs_shape_str(index->ndim, index->sizes, a, sizeof a);
            pcs_shape_str(t->ndim, t->sizes, b, sizeof b);
            PyErr_Format(PyExc_RuntimeError,
                         "Size does not match at dimension %d expected index %s to be smaller "
                         "than self %s apart from dimension %d",
                         d, a, b, dim);
            return -1;
        }
    }
    pcs_index_geom *g = &p->g;
    g->ndim = index->ndim;
    g->base = t->offset;
    p->nowrap = p->same_device = true;
    for (int d = 0; d < index->ndim; d++) {
        g->sizes[d] = index->sizes[d];
        g->bstride[d] = d == dim ? 0 : t->strides[d];
    }
    return pcs_index_plan_add(p, index, t->device, dim, dim_size(t, dim), dim_stride(t, dim), 0) < 0
               ? -1 : 0;
}

/* index_*: the result is t's shape with dim resized to index's length.
 * wrap: negative indices count from the end (index_fill_). */
static int select_plan(pcs_index_plan *p, PcsTensor *t, int dim, PcsTensor *index, bool wrap,
                       const char *fname)
{
    if (index_dtype_check(index, fname, true) < 0)
        return -1;
    if (index->ndim > 1) {
        PyErr_Format(PyExc_IndexError, "%s(): Index is supposed to be a vector", fname);
        return -1;
    }
    int64_t len = pcs_tensor_numel(index), one = 1;
    PcsTensor *iv = pcs_tensor_view(index, 1, &len);
    if (!iv)
        return -1;
    PcsTensor *it = iv;
    (void)one;
    pcs_index_geom *g = &p->g;
    g->ndim = t->ndim ? t->ndim : 1;
    g->base = t->offset;
    p->nowrap = !wrap;
    p->same_device = true;
    for (int d = 0; d < g->ndim; d++) {
        g->sizes[d] = d == dim ? len : t->sizes[d];
        g->bstride[d] = d == dim ? 0 : t->strides[d];
    }
    int r = pcs_index_plan_add(p, it, t->device, dim, dim_size(t, dim), dim_stride(t, dim), dim);
    Py_DECREF(iv);
    return r < 0 ? -1 : 0;
}

/* ------------------------------------------------------------------------ */
/* Arguments                                                                 */

typedef struct {
    PcsTensor *x;
    int dim;
    PcsTensor *index;
    PyObject *third; /* src / value / source, or NULL */
    PyObject *out;
} dim_args;

static PcsTensor *tensor_arg(PyObject *o, const char *fname, const char *what)
{
    if (!o || !PcsTensor_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be Tensor, not %.100s", fname, what,
                     o ? Py_TYPE(o)->tp_name : "nothing");
        return NULL;
    }
    return T(o);
}

/* (input, dim, index[, third]) with third named one of `third` (NULL-ended). */
static int parse_dim_args(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw,
                          const char *fname, const char *const *names, const char *const *third,
                          dim_args *a)
{
    if (pcs_check_kwargs(kw, fname, names) < 0)
        return -1;
    if (!(a->x = pcs_input_arg(self, args, nargs, kw, fname)))
        return -1;
    int base = self ? -1 : 0;
    PyObject *d = pcs_arg(args, nargs, kw, base + 1, "dim");
    int64_t d64;
    if (!d) {
        PyErr_Format(PyExc_TypeError, "%s() missing required argument 'dim'", fname);
        return -1;
    }
    if (pcs_int64_arg(d, &d64) < 0 || (a->dim = pcs_wrap_dim(d64, a->x->ndim)) < 0)
        return -1;
    if (!(a->index = tensor_arg(pcs_arg(args, nargs, kw, base + 2, "index"), fname, "index")))
        return -1;
    a->third = NULL;
    for (int i = 0; third && third[i] && !a->third; i++)
        a->third = pcs_arg(args, nargs, kw, i == 0 ? base + 3 : -1, third[i]);
    return pcs_out_arg(pcs_arg(args, nargs, kw, -1, "out"), &a->out);
}

/* A new result (a copy of x), or x itself in place. */
static PcsTensor *target_of(PcsTensor *x, bool inplace)
{
    return inplace ? (PcsTensor *)Py_NewRef(x) : pcs_tensor_contiguous(x, true);
}

static PyObject *finish(PcsTensor *target, int r, PyObject *out, const char *fname)
{
    if (r < 0) {
        Py_XDECREF(target);
        return NULL; /* NOLINT(pcs-errors): r < 0 comes with the failing call's exception */
    }
    return pcs_into_out((PyObject *)target, out, fname);
}

/* ------------------------------------------------------------------------ */
/* gather, take, take_along_dim, index_select                                */

static PyObject *gather_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "dim", "index", "sparse_grad", "out", NULL};
    dim_args a;
    if (parse_dim_args(self, args, nargs, kw, "gather", names, NULL, &a) < 0)
        return NULL;
    pcs_index_plan p;
    pcs_index_plan_init(&p);
    PcsTensor *res = dim_plan(&p, a.x, a.dim, a.index, NULL, "gather") < 0 ? NULL : pcs_index_gather(&p, a.x);
    pcs_index_plan_clear(&p);
    return pcs_into_out((PyObject *)res, a.out, "gather");
}

static PyObject *index_select_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kw)
{
    static const char *const names[] = {"input", "dim", "index", "out", NULL};
    dim_args a;
    if (parse_dim_args(self, args, nargs, kw, "index_select", names, NULL, &a) < 0)
        return NULL;
    pcs_index_plan p;
    pcs_index_plan_init(&p);
    PcsTensor *res = select_plan(&p, a.x, a.dim, a.index, false, "index_select") < 0 ? NULL
                                                                                : pcs_index_gather(&p, a.x);
    pcs_index_plan_clear(&p);
    if (res && a.x->ndim == 0) { /* a 0-dim input gives a 0-dim result */
        PcsTensor *v = pcs_tensor_view(res, 0, NULL);
        Py_DECREF(res);
        res = v;
    }
    return pcs_into_out((PyObject *)res, a.out, "index_select");
}

/* take(input, index): input as if flattened (a contiguous copy when it is
 * not). wrap: negative indices count from the end (take, not
 * take_along_dim). */
static PyObject *take_core(PcsTensor *x, PcsTensor *index, bool wrap, const char *fname)
{
    if (index_dtype_check(index, fname, false) < 0)
        return NULL;
    PcsTensor *c = pcs_tensor_contiguous(x, false);
    if (!c)
        return NULL;
    pcs_index_plan p;
    pcs_index_plan_init(&p);
    p.g.ndim = index->ndim;
    p.g.base = c->offset;
    p.same_device = true;
    p.nowrap = !wrap;
    for (int d = 0; d < index->ndim; d++)
        p.g.sizes[d] = index->sizes[d];
    PcsTensor *res = NULL;
    if (pcs_index_plan_add(&p, index, c->device, 0, pcs_tensor_numel(c), 1, 0) >= 0)
        res = pcs_index_gather(&p, c);
    pcs_index_plan_clear(&p);
    Py_DECREF(c);
    return (PyObject *)res;
}

static PyObject *take_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"input", "index", "out", NULL};
    if (pcs_check_kwargs(kw, "take", names) < 0)
        return NULL;
    PcsTensor *x = pcs_input_arg(self, args, nargs, kw, "take");
    PcsTensor *index = x ? tensor_arg(pcs_arg(args, nargs, kw, self ? 0 : 1, "index"), "take", "index") : NULL;
    PyObject *out;
    if (!index || pcs_out_arg(pcs_arg(args, nargs, kw, -1, "out"), &out) < 0)
        return NULL;
    return pcs_into_out(take_core(x, index, true, "take"), out, "take");
}

static PyObject *take_along_dim_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                      PyObject *kw)
{
    static const char *const names[] = {"input", "indices", "dim", "out", NULL};
    const char *fname = "take_along_dim";
    if (pcs_check_kwargs(kw, fname, names) < 0)
        return NULL;
    int base = self ? -1 : 0;
    PcsTensor *x = pcs_input_arg(self, args, nargs, kw, fname);
    PcsTensor *ix = x ? tensor_arg(pcs_arg(args, nargs, kw, base + 1, "indices"), fname, "indices") : NULL;
    PyObject *dobj = pcs_arg(args, nargs, kw, base + 2, "dim"), *out;
    if (!ix || pcs_out_arg(pcs_arg(args, nargs, kw, -1, "out"), &out) < 0)
        return NULL;
    if (index_dtype_check(ix, fname, false) < 0)
        return NULL;
    if (!dobj || dobj == Py_None) {
        int64_t n = pcs_tensor_numel(ix);
        PcsTensor *flat = pcs_tensor_reshape(ix, 1, &n);
        PyObject *r = flat ? take_core(x, flat, false, fname) : NULL;
        Py_XDECREF(flat);
        return pcs_into_out(r, out, fname);
    }
    int64_t d64;
    int dim;
    if (pcs_int64_arg(dobj, &d64) < 0 || (dim = pcs_wrap_dim(d64, x->ndim)) < 0)
        return NULL;
    if (x->ndim != ix->ndim) {
        PyErr_Format(PyExc_RuntimeError,
                     "torch.take_along_dim(): input and indices should have the same number of "
                     "dimensions, but got %d dimensions for input, and %d dimensions for indices",
                     x->ndim, ix->ndim);
        return NULL;
    }
    int64_t xs[PCS_MAX_DIMS], is[PCS_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) {
        int64_t a = x->sizes[d], b = ix->sizes[d];
        int64_t s = a == 1 ? b : (b == 1 || b == a) ? a : -1;
        if (d != dim && s < 0) {
            PyErr_Format(PyExc_RuntimeError,
                         "The size of tensor a (%lld) must match the size of tensor b (%lld) at "
                         "non-singleton dimension %d", (long long)a, (long long)b, d);
            return NULL;
        }
        xs[d] = d == dim ? a : s;
        is[d] = d == dim ? b : s;
    }
    PcsTensor *xe = pcs_tensor_expand(x, x->ndim, xs);
    PcsTensor *ie = xe ? pcs_tensor_expand(ix, ix->ndim, is) : NULL;
    PcsTensor *res = NULL;
    if (ie) {
        pcs_index_plan p;
        pcs_index_plan_init(&p);
        if (dim_plan(&p, xe, dim, ie, NULL, fname) == 0)
            res = pcs_index_gather(&p, xe);
        pcs_index_plan_clear(&p);
    }
    Py_XDECREF(ie);
    Py_XDECREF(xe);
    return pcs_into_out((PyObject *)res, out, fname);
}

/* ------------------------------------------------------------------------ */
/* scatter family                                                            */

static int reduce_mode(PyObject *o, bool scatter_reduce, const char *fname)
{
    static const struct { const char *name; int mode; bool legacy; } modes[] = {
        {"add", PCS_SCATTER_ADD, true},   {"multiply", PCS_SCATTER_MUL, true},
        {"sum", PCS_SCATTER_ADD, false},  {"prod", PCS_SCATTER_MUL, false},
        {"mean", PCS_SCATTER_MEAN, false}, {"amax", PCS_SCATTER_AMAX, false},
        {"amin", PCS_SCATTER_AMIN, false},
    };
    if (!o || o == Py_None)
        return scatter_reduce ? -2 : PCS_SCATTER_SET;
    if (PyUnicode_Check(o)) {
        for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
            if (modes[i].legacy != scatter_reduce &&
                PyUnicode_CompareWithASCIIString(o, modes[i].name) == 0)
                return modes[i].mode;
    }
    PyErr_Format(PyExc_RuntimeError,
                 scatter_reduce ? "%s(): reduce argument must be either sum, prod, mean, amax or amin, got %R"
                                : "%s(): reduce argument must be either add or multiply, got %R",
                 fname, o);
    return -2;
}

/* The values scattered from src: its [index.shape] corner, in t's dtype. */
static PcsTensor *src_values(PcsTensor *t, PcsTensor *src, PcsTensor *index)
{
    PcsTensor *corner = pcs_tensor_alias(src, src->offset, index->ndim, index->sizes, src->strides);
    if (!corner)
        return NULL;
    /* a copy only when src shares t's memory (x.scatter_(0, i, x)): the
     * scatter must not read what it already wrote */
    bool alias = src->storage == t->storage;
    PcsTensor *v = pcs_tensor_to(corner, t->dtype, t->device, false, alias, false);
    Py_DECREF(corner);
    PcsTensor *c = v ? pcs_tensor_contiguous(v, false) : NULL;
    Py_XDECREF(v);
    return c;
}

/* scatter / scatter_add / scatter_reduce, in place or not. mode -1: from reduce=. */
static PyObject *scatter_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw,
                               const char *fname, int mode, bool reduce_kind, bool inplace)
{
    static const char *const n_scatter[] = {"input", "dim", "index", "src", "value", "reduce", "out", NULL};
    static const char *const n_add[] = {"input", "dim", "index", "src", "out", NULL};
    static const char *const n_red[] = {"input", "dim", "index", "src", "reduce", "include_self", "out", NULL};
    static const char *const t_scatter[] = {"src", "value", NULL}, *const t_src[] = {"src", NULL};
    const char *const *names = reduce_kind ? n_red : mode == PCS_SCATTER_ADD ? n_add : n_scatter;
    dim_args a;
    if (parse_dim_args(self, args, nargs, kw, fname, names,
                       mode < 0 && !reduce_kind ? t_scatter : t_src, &a) < 0)
        return NULL;
    if (!a.third) {
        PyErr_Format(PyExc_TypeError, "%s() missing required argument 'src'", fname);
        return NULL;
    }
    int base = self ? -1 : 0;
    bool include_self = true;
    if (reduce_kind) {
        mode = reduce_mode(pcs_arg(args, nargs, kw, base + 4, "reduce"), true, fname);
        if (mode == -2)
            return NULL; /* before anything else runs Python code with the error set */
        PyObject *is = pcs_arg(args, nargs, kw, -1, "include_self");
        int v = is ? PyObject_IsTrue(is) : 1;
        if (v < 0)
            return NULL;
        include_self = v;
    } else if (mode < 0) {
        mode = reduce_mode(pcs_arg(args, nargs, kw, -1, "reduce"), false, fname);
        if (mode == -2)
            return NULL;
    }
    PcsTensor *src = PcsTensor_Check(a.third) ? T(a.third) : NULL;
    if (!src && (mode == PCS_SCATTER_ADD && !reduce_kind && names == n_add)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument 'src' must be Tensor", fname);
        return NULL;
    }
    if (src && src->dtype != a.x->dtype) {
        PyErr_Format(PyExc_RuntimeError, "%s(): Expected self.dtype to be equal to src.dtype", fname);
        return NULL;
    }
    if (src && src->device != a.x->device)
        return pcs_device_mismatch(a.x->device, src->device), NULL;
    PcsTensor *target = target_of(a.x, inplace);
    if (!target)
        return NULL;
    pcs_index_plan p;
    pcs_index_plan_init(&p);
    int r = dim_plan(&p, target, a.dim, a.index, src, fname);
    PcsTensor *v = NULL;
    if (r == 0)
        v = src ? src_values(target, src, a.index) : pcs_index_values(&p, target, a.third);
    r = v ? pcs_index_scatter(&p, target, v, mode, include_self) : -1;
    Py_XDECREF(v);
    pcs_index_plan_clear(&p);
    return finish(target, r, a.out, fname);
}

/* index_add / index_copy / index_fill, in place or not. */
static PyObject *index_op_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw,
                                const char *fname, int mode, bool fill, bool inplace)
{
    static const char *const n_src[] = {"input", "dim", "index", "source", "alpha", "out", NULL};
    static const char *const n_fill[] = {"input", "dim", "index", "value", NULL};
    static const char *const t_src[] = {"source", NULL}, *const t_fill[] = {"value", NULL};
    dim_args a;
    if (parse_dim_args(self, args, nargs, kw, fname, fill ? n_fill : n_src, fill ? t_fill : t_src, &a) < 0)
        return NULL;
    if (!a.third) {
        PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", fname, fill ? "value" : "source");
        return NULL;
    }
    PyObject *alpha = fill ? NULL : pcs_arg(args, nargs, kw, -1, "alpha");
    PcsTensor *target = target_of(a.x, inplace);
    if (!target)
        return NULL;
    pcs_index_plan p;
    pcs_index_plan_init(&p);
    int r = select_plan(&p, target, a.dim, a.index, fill, fname);
    PcsTensor *v = NULL;
    if (r == 0 && fill) {
        if (PcsTensor_Check(a.third) && T(a.third)->ndim != 0) {
            PyErr_Format(PyExc_IndexError,
                         "%s(): Expected a 0-dim value tensor, got one with %d dims", fname, T(a.third)->ndim);
        } else {
            v = pcs_index_values(&p, target, a.third);
        }
    } else if (r == 0) {
        PcsTensor *s = tensor_arg(a.third, fname, "source");
        PyObject *scaled = NULL;
        if (s && alpha && alpha != Py_None)
            scaled = pcs_binary_operator(PCS_OPR_MUL, a.third, alpha, false);
        else if (s)
            scaled = Py_NewRef(a.third);
        if (scaled) {
            PcsTensor *st = T(scaled);
            bool same = st->ndim == (target->ndim ? target->ndim : 1) || (st->ndim == 0 && target->ndim == 0);
            for (int d = 0; same && d < st->ndim; d++)
                same = st->sizes[d] == p.g.sizes[d];
            if (!same || st->device != target->device) {
                if (st->device != target->device)
                    pcs_device_mismatch(target->device, st->device);
                else
                    PyErr_Format(PyExc_RuntimeError,
                                 "%s(): source tensor shape must match self tensor shape, excluding "
                                 "the specified dimension", fname);
            } else {
                v = pcs_index_values(&p, target, scaled);
            }
            Py_DECREF(scaled);
        }
    }
    r = v ? pcs_index_scatter(&p, target, v, mode, true) : -1;
    Py_XDECREF(v);
    pcs_index_plan_clear(&p);
    return finish(target, r, a.out, fname);
}

/* ------------------------------------------------------------------------ */
/* Tables                                                                    */

/* In-place forms are Tensor methods only, as in torch. */
#define METHOD_ONLY(name, call)                                                                   \
    static PyObject *m_##name(PyObject *self, PyObject *const *a, Py_ssize_t n, PyObject *kw)    \
    {                                                                                             \
        return call;                                                                              \
    }

PCS_OP_PAIR(gather, gather_entry(self, a, n, kw))
PCS_OP_PAIR(index_select, index_select_entry(self, a, n, kw))
PCS_OP_PAIR(take, take_entry(self, a, n, kw))
PCS_OP_PAIR(take_along_dim, take_along_dim_entry(self, a, n, kw))
PCS_OP_PAIR(scatter, scatter_entry(self, a, n, kw, "scatter", -1, false, false))
METHOD_ONLY(scatter_, scatter_entry(self, a, n, kw, "scatter_", -1, false, true))
PCS_OP_PAIR(scatter_add, scatter_entry(self, a, n, kw, "scatter_add", PCS_SCATTER_ADD, false, false))
METHOD_ONLY(scatter_add_, scatter_entry(self, a, n, kw, "scatter_add_", PCS_SCATTER_ADD, false, true))
PCS_OP_PAIR(scatter_reduce, scatter_entry(self, a, n, kw, "scatter_reduce", 0, true, false))
METHOD_ONLY(scatter_reduce_, scatter_entry(self, a, n, kw, "scatter_reduce_", 0, true, true))
PCS_OP_PAIR(index_add, index_op_entry(self, a, n, kw, "index_add", PCS_SCATTER_ADD, false, false))
METHOD_ONLY(index_add_, index_op_entry(self, a, n, kw, "index_add_", PCS_SCATTER_ADD, false, true))
PCS_OP_PAIR(index_copy, index_op_entry(self, a, n, kw, "index_copy", PCS_SCATTER_SET, false, false))
METHOD_ONLY(index_copy_, index_op_entry(self, a, n, kw, "index_copy_", PCS_SCATTER_SET, false, true))
PCS_OP_PAIR(index_fill, index_op_entry(self, a, n, kw, "index_fill", PCS_SCATTER_SET, true, false))
METHOD_ONLY(index_fill_, index_op_entry(self, a, n, kw, "index_fill_", PCS_SCATTER_SET, true, true))

#define GATHER_OPS(X)                                                                             \
    X(gather, "gather(dim, index) -> the values at index along dim")                              \
    X(index_select, "index_select(dim, index) -> the slices at index along dim")                  \
    X(take, "take(index) -> the values at flat positions index")                                  \
    X(take_along_dim, "take_along_dim(indices, dim=None)")                                        \
    X(scatter, "scatter(dim, index, src|value, reduce=None), out of place")                       \
    X(scatter_add, "scatter_add(dim, index, src), out of place")                                  \
    X(scatter_reduce, "scatter_reduce(dim, index, src, reduce, include_self=True), out of place") \
    X(index_add, "index_add(dim, index, source, alpha=1), out of place")                          \
    X(index_copy, "index_copy(dim, index, source), out of place")                                 \
    X(index_fill, "index_fill(dim, index, value), out of place")
#define GATHER_INPLACE(X)                                                                         \
    X(scatter_, "scatter_(dim, index, src|value, reduce=None)")                                   \
    X(scatter_add_, "scatter_add_(dim, index, src)")                                              \
    X(scatter_reduce_, "scatter_reduce_(dim, index, src, reduce, include_self=True)")             \
    X(index_add_, "index_add_(dim, index, source, alpha=1)")                                      \
    X(index_copy_, "index_copy_(dim, index, source)")                                             \
    X(index_fill_, "index_fill_(dim, index, value)")

PyMethodDef pcs_ops_gather_tmethods[] = {
    GATHER_OPS(PCS_T_ENTRY) GATHER_INPLACE(PCS_T_ENTRY) {NULL, NULL, 0, NULL},
};

PyMethodDef pcs_ops_gather_functions[] = {
    GATHER_OPS(PCS_F_ENTRY) {NULL, NULL, 0, NULL},
};
