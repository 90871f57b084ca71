/* ranges.c: the factories whose values follow from the index: arange,
 * linspace, logspace, eye, tril_indices, triu_indices.
 *
 * On CUDA each one is a single kernel launch on the current stream into
 * memory from the caching allocator: no host staging, no copy, no sync. The
 * CPU path evaluates the same formulas (kernels.h shares them with the
 * device code), so a factory gives the same values on both devices. */
#include "ops/factories.h"

#include <math.h>

#include "ops/ops.h"
#include "runtime/device.h"
#include "runtime/stream.h"

#define FASTKW(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL | METH_KEYWORDS

/* After a launcher on t's device: -1 with NotImplementedError when it knew
 * no such dtype, else the launch check. */
static int launch(PcsTensor *t, const char *name, int lr)
{
    if (lr < 0) {
        pcs_not_implemented(name, t->dtype);
        return -1;
    }
    return PCS_CHECK_LAUNCH(pcs_current_stream(t->device), name);
}

/* A 1-D range of n elements on the options' device. */
static PyObject *fill_range(int kind, int64_t n, int dtype, const pcs_factory_opts *o,
                            const pcs_range_params *p)
{
    const char *name = kind == PCS_RANGE_ARANGE ? "arange" : p->is_log ? "logspace" : "linspace";
    if (pcs_is_complex(dtype))
        return pcs_not_implemented(name, dtype);
    PcsTensor *t = pcs_tensor_empty(1, &n, dtype, o->device, o->pinned);
    if (!t)
        return NULL;
    if (o->device >= 0) {
        if (pcs_cuda_set_device_raw(o->device) < 0 ||
            launch(t, name, pcs_launch_range(kind, pcs_tensor_data(t), dtype, n, p,
                                             pcs_current_stream(o->device))) < 0)
            Py_CLEAR(t);
        return (PyObject *)t;
    }
    char *out = pcs_tensor_data(t);
    int isz = pcs_itemsize(dtype);
    for (int64_t i = 0; i < n; i++) {
        pcs_scalar v = {PCS_SK_FLOAT, 0, 0, 0};
        if (kind == PCS_RANGE_SPACED) {
            v.re = pcs_spaced_value(p, i, n);
        } else if (p->is_int) {
            v.kind = PCS_SK_INT;
            v.i = p->i0 + p->istep * i;
        } else {
            v.re = PCS_DADD(p->d0, PCS_DMUL(p->dstep, (double)i));
        }
        pcs_scalar_store(dtype, out + i * isz, v);
    }
    return (PyObject *)t;
}

static PyObject *f_arange(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    PCS_UNUSED(m);
    static const char *const extra[] = {"start", "end", "step", NULL};
    pcs_factory_opts o;
    if (pcs_factory_opts_parse(args, nargs, kw, "arange", extra, &o) < 0)
        return NULL;
    PyObject *a = pcs_arg(args, nargs, kw, 0, "start"), *b = pcs_arg(args, nargs, kw, 1, "end"),
             *c = pcs_arg(args, nargs, kw, 2, "step");
    if (!a && b) { /* arange(end=5) */
        a = b;
        b = NULL;
    }
    if (!a)
        return PyErr_Format(PyExc_TypeError, "arange() missing required argument 'end'");
    pcs_scalar start = {PCS_SK_INT, 0, 0, 0}, end, step = {PCS_SK_INT, 1, 0, 0};
    if (b) {
        if (pcs_number_arg(a, &start) < 0 || pcs_number_arg(b, &end) < 0)
            return NULL;
    } else if (pcs_number_arg(a, &end) < 0) {
        return NULL;
    }
    if (c && pcs_number_arg(c, &step) < 0)
        return NULL;
    bool all_int = start.kind <= PCS_SK_INT && end.kind <= PCS_SK_INT && step.kind <= PCS_SK_INT;
    if (start.kind == PCS_SK_COMPLEX || end.kind == PCS_SK_COMPLEX || step.kind == PCS_SK_COMPLEX)
        return PyErr_Format(PyExc_TypeError, "arange() does not take complex numbers");
    int dtype = o.dtype >= 0 ? o.dtype : all_int ? PCS_INT64 : pcs_default_dtype();
    /* torch counts an integer range in int64, so all three must fit it: an
     * int in [2^63, 2^64) is refused there with its checked-conversion error */
    const pcs_scalar *ends[3] = {&start, &end, &step};
    for (int i = 0; pcs_is_integral(dtype, false) && i < 3; i++)
        if (pcs_scalar_check_fits(PCS_INT64, *ends[i], PCS_CHECK_FILL) < 0)
            return NULL;
    double s0 = pcs_scalar_as_double(start), e0 = pcs_scalar_as_double(end),
           st = pcs_scalar_as_double(step);
    if (st == 0)
        return PyErr_Format(PyExc_RuntimeError, "step must be nonzero");
    if (!isfinite(s0) || !isfinite(e0))
    {
        char msg[128];
        snprintf(msg, sizeof msg, "unsupported range: %g -> %g", s0, e0);
        PyErr_SetString(PyExc_RuntimeError, msg);
        return NULL;
    }
    if ((st > 0 && e0 < s0) || (st < 0 && e0 > s0))
        return PyErr_Format(PyExc_RuntimeError, "upper bound and larger bound inconsistent with step sign");
    int64_t n;
    /* exact for large int64 ranges; a u64 bound (an int in [2^63, 2^64))
     * has only its bit pattern in .i, so it counts through the doubles */
    if (all_int && !start.u64 && !end.u64 && !step.u64)
        n = step.i > 0 ? (end.i - start.i + step.i - 1) / step.i : (start.i - end.i - step.i - 1) / -step.i;
    else
        n = (int64_t)ceil((e0 - s0) / st);
    pcs_range_params p = {0};
    p.is_int = all_int && pcs_is_integral(dtype, true);
    p.i0 = start.i;
    p.istep = step.i;
    p.d0 = s0;
    p.dstep = st;
    return fill_range(PCS_RANGE_ARANGE, n, dtype, &o, &p);
}

/* linspace, and logspace when log: base ** linspace(start, end, steps). */
static PyObject *spaced(PyObject *const *args, Py_ssize_t nargs, PyObject *kw, bool log)
{
    const char *fname = log ? "logspace" : "linspace";
    static const char *const extra_lin[] = {"start", "end", "steps", NULL};
    static const char *const extra_log[] = {"start", "end", "steps", "base", NULL};
    const char *const *extra = log ? extra_log : extra_lin;
    pcs_factory_opts o;
    if (pcs_factory_opts_parse(args, nargs, kw, fname, extra, &o) < 0)
        return NULL;
    PyObject *a = pcs_arg(args, nargs, kw, 0, "start"), *b = pcs_arg(args, nargs, kw, 1, "end"),
             *c = pcs_arg(args, nargs, kw, 2, "steps");
    if (!a || !b || !c)
        return PyErr_Format(PyExc_TypeError, "%s(start, end, steps%s, *, dtype=None, device=None)",
                            fname, log ? ", base=10.0" : "");
    double base = 0;
    PyObject *bo = log ? pcs_arg(args, nargs, kw, 3, "base") : NULL;
    if (log) {
        pcs_scalar bs = {PCS_SK_FLOAT, 0, 10.0, 0};
        if (bo && pcs_number_arg(bo, &bs) < 0)
            return NULL;
        if (bs.kind == PCS_SK_COMPLEX)
            return PyErr_Format(PyExc_NotImplementedError, "logspace with a complex base is not supported");
        base = pcs_scalar_as_double(bs);
    }
    pcs_scalar s0, e0;
    int64_t steps;
    if (pcs_int64_arg(c, &steps) < 0 || pcs_number_arg(a, &s0) < 0 || pcs_number_arg(b, &e0) < 0)
        return NULL;
    if (steps < 0)
        return PyErr_Format(PyExc_RuntimeError, "number of steps must be non-negative");
    if (s0.kind == PCS_SK_COMPLEX || e0.kind == PCS_SK_COMPLEX)
        return PyErr_Format(PyExc_NotImplementedError, "%s with complex ends is not supported", fname);
    int dtype = o.dtype >= 0 ? o.dtype : pcs_default_dtype();
    double start = pcs_scalar_as_double(s0), end = pcs_scalar_as_double(e0);
    int64_t n = steps;
    pcs_range_params p = {0};
    p.in_float = dtype == PCS_FLOAT32;
    p.d0 = start;
    p.d1 = end;
    p.is_log = log;
    p.base = base;
    if (p.in_float)
        p.dstep = n > 1 ? ((float)end - (float)start) / (float)(n - 1) : 0;
    else
        p.dstep = n > 1 ? (end - start) / (double)(n - 1) : 0;
    return fill_range(PCS_RANGE_SPACED, n, dtype, &o, &p);
}

static PyObject *f_linspace(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    PCS_UNUSED(m);
    return spaced(args, nargs, kw, false);
}

static PyObject *f_logspace(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    PCS_UNUSED(m);
    return spaced(args, nargs, kw, true);
}

static PyObject *f_eye(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    PCS_UNUSED(m);
    static const char *const extra[] = {"n", "m", NULL};
    pcs_factory_opts o;
    if (pcs_factory_opts_parse(args, nargs, kw, "eye", extra, &o) < 0)
        return NULL;
    PyObject *a = pcs_arg(args, nargs, kw, 0, "n"), *b = pcs_arg(args, nargs, kw, 1, "m");
    if (!a)
        return PyErr_Format(PyExc_TypeError, "eye(n, m=None, *, dtype=None, device=None)");
    int64_t sizes[2];
    sizes[0] = PyLong_AsLongLong(a);
    if (sizes[0] == -1 && PyErr_Occurred()) /* before m's __index__ runs */
        return NULL;
    sizes[1] = b && b != Py_None ? PyLong_AsLongLong(b) : sizes[0];
    if (PyErr_Occurred())
        return NULL;
    if (sizes[0] < 0 || sizes[1] < 0)
        return PyErr_Format(PyExc_RuntimeError, "n and m must be greater or equal to 0");
    int dtype = o.dtype >= 0 ? o.dtype : pcs_default_dtype();
    if (o.device >= 0) { /* one pass writes the zeros and the ones */
        PcsTensor *t = pcs_tensor_empty(2, sizes, dtype, o.device, false);
        if (t && launch(t, "eye", pcs_launch_eye(pcs_tensor_data(t), dtype, sizes[0], sizes[1],
                                                 pcs_current_stream(o.device))) < 0)
            Py_CLEAR(t);
        return (PyObject *)t;
    }
    PcsTensor *t = pcs_tensor_zeros(2, sizes, dtype, o.device, o.pinned);
    if (!t)
        return NULL;
    /* The diagonal is a strided view: one fill, on whichever device. */
    int64_t dn = sizes[0] < sizes[1] ? sizes[0] : sizes[1], ds = sizes[1] + 1;
    PcsTensor *diag = pcs_tensor_alias(t, 0, 1, &dn, &ds);
    PyObject *one = PyLong_FromLong(1);
    int r = diag && one ? pcs_tensor_fill(diag, one) : -1;
    Py_XDECREF(one);
    Py_XDECREF(diag);
    if (r < 0)
        Py_CLEAR(t);
    return (PyObject *)t;
}


/* tril_indices / triu_indices(row, col, offset=0, *, dtype=int64, device=None) */
static PyObject *tri_indices(PyObject *const *args, Py_ssize_t nargs, PyObject *kw, int upper)
{
    const char *fname = upper ? "triu_indices" : "tril_indices";
    static const char *const extra[] = {"row", "col", "offset", NULL};
    pcs_factory_opts o;
    if (pcs_factory_opts_parse(args, nargs, kw, fname, extra, &o) < 0)
        return NULL;
    PyObject *ro = pcs_arg(args, nargs, kw, 0, "row"), *co = pcs_arg(args, nargs, kw, 1, "col"),
             *oo = pcs_arg(args, nargs, kw, 2, "offset");
    if (!ro || !co)
        return PyErr_Format(PyExc_TypeError, "%s(row, col, offset=0, *, dtype=torch.long, device=None)",
                            fname);
    int64_t v[3] = {0, 0, 0};
    PyObject *given[3] = {ro, co, oo};
    for (int i = 0; i < 3; i++) {
        if (!given[i])
            continue;
        if (!PyIndex_Check(given[i]) || PyBool_Check(given[i]))
            return PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be int, not %s", fname,
                                extra[i], Py_TYPE(given[i])->tp_name);
        v[i] = PyLong_AsLongLong(given[i]);
        if (v[i] == -1 && PyErr_Occurred())
            return NULL;
    }
    if (v[0] < 0 || v[1] < 0)
        return PyErr_Format(PyExc_RuntimeError, "%s must be non-negative, got%lld",
                            v[0] < 0 ? "row" : "col", (long long)(v[0] < 0 ? v[0] : v[1]));
    int dtype = o.dtype >= 0 ? o.dtype : PCS_INT64;
    if (dtype != PCS_INT64 && dtype != PCS_INT32)
        return pcs_not_implemented(fname, dtype);
    /* rows and cols past 2^31 would overflow the count long before memory */
    if (v[0] > INT32_MAX || v[1] > INT32_MAX || v[2] > INT32_MAX || v[2] < -INT32_MAX)
        return PyErr_Format(PyExc_RuntimeError, "%s: row, col and offset must be below 2^31", fname);
    int64_t sizes[2] = {2, pcs_tri_prefix(v[0], v[1], v[2], upper)};
    PcsTensor *t = pcs_tensor_empty(2, sizes, dtype, o.device, o.pinned);
    if (!t)
        return NULL;
    if (o.device >= 0) {
        if (pcs_cuda_set_device_raw(o.device) < 0 ||
            launch(t, fname, pcs_launch_tri_indices(pcs_tensor_data(t), dtype, v[0], v[1], v[2],
                                                    upper, pcs_current_stream(o.device))) < 0)
            Py_CLEAR(t);
        return (PyObject *)t;
    }
    char *out = pcs_tensor_data(t);
    int isz = pcs_itemsize(dtype);
    int64_t k = 0, total = sizes[1];
    for (int64_t r = 0; r < v[0]; r++) {
        int64_t c0 = upper ? (r + v[2] > 0 ? r + v[2] : 0) : 0;
        int64_t c1 = upper ? v[1] : (r + v[2] + 1 < v[1] ? r + v[2] + 1 : v[1]);
        for (int64_t c = c0; c < c1; c++, k++) {
            pcs_scalar_store(dtype, out + k * isz, (pcs_scalar){PCS_SK_INT, r, 0, 0});
            pcs_scalar_store(dtype, out + (total + k) * isz, (pcs_scalar){PCS_SK_INT, c, 0, 0});
        }
    }
    return (PyObject *)t;
}

static PyObject *f_tril_indices(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    PCS_UNUSED(m);
    return tri_indices(args, nargs, kw, 0);
}

static PyObject *f_triu_indices(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    PCS_UNUSED(m);
    return tri_indices(args, nargs, kw, 1);
}

static PyMethodDef range_functions[] = {
    {"arange", FASTKW(f_arange), "arange(start=0, end, step=1, dtype=None, device=None, pin_memory=False)\n\nValues from start up to "
     "(not including) end; int64 for integer arguments, the default dtype otherwise."},
    {"linspace", FASTKW(f_linspace), "linspace(start, end, steps, dtype=None, device=None, pin_memory=False)\n\n`steps` evenly spaced "
     "values from start to end inclusive."},
    {"eye", FASTKW(f_eye), "eye(n, m=None, dtype=None, device=None, pin_memory=False)\n\nAn n x m (n x n) matrix with ones on "
     "the diagonal."},
    {"logspace", FASTKW(f_logspace), "logspace(start, end, steps, base=10.0, dtype=None, device=None, pin_memory=False)\n\n"
     "base ** linspace(start, end, steps)."},
    {"tril_indices", FASTKW(f_tril_indices), "tril_indices(row, col, offset=0, *, dtype=int64, device=None)\n\n"
     "The row and column indices of the lower triangle of a row x col matrix (with `offset` "
     "diagonals above the main one), as a 2 x N tensor in row-major order."},
    {"triu_indices", FASTKW(f_triu_indices), "triu_indices(row, col, offset=0, *, dtype=int64, device=None)\n\n"
     "The row and column indices of the upper triangle of a row x col matrix (from the "
     "`offset`-th diagonal), as a 2 x N tensor in row-major order."},
    {NULL, NULL, 0, NULL},
};

int pcs_ranges_init(PyObject *module) { return PyModule_AddFunctions(module, range_functions); }
