/* random.c: random number generation: the random factories (rand, randn,
 * randint, randperm, *_like) and the in-place fills (normal_, uniform_,
 * bernoulli_, exponential_, random_). The generators they draw from, one
 * (seed, Philox offset) for the CPU and one per CUDA device, and the seeding
 * and state functions are in random_state.c.
 *
 * Every fill is counter-based (kernels/philox.h): element i of a fill uses
 * Philox block offset + i / per_block, so the CPU loop here and the GPU
 * kernel in random.cu produce the same numbers for the same state, whatever
 * the launch shape. A fill reserves its blocks by advancing the offset before
 * it runs, on the host, so nothing waits for the GPU. Non-contiguous tensors
 * are filled through a contiguous temporary in row-major order, which keeps
 * the numbering independent of strides. */
#include "ops/random.h"
#include "runtime/device.h"

#include <string.h>

#include "tensor/layout.h"
#include "ops/factories.h"
#include "tensor/copy.h"
#include "kernels/philox.h"
#include "core/scalar.h"
#include "runtime/stream.h"

#define FASTKW(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL | METH_KEYWORDS

/* ------------------------------------------------------------------------ */
/* Fills                                                                     */

/* Numbers per Philox block for this fill (see philox.h). */
static int per_block(const pcs_rng_params *p) { return p->wide ? 2 : 4; }

static void fill_cpu(void *out, int dtype, int64_t n, const pcs_rng_params *p)
{
    const int per = per_block(p);
    const int isz = pcs_itemsize(dtype);
    char *o = out;
    for (int64_t j = 0, base = 0; base < n; j++, base += per) {
        pcs_u32x4 r = pcs_philox(p->seed, p->offset + (uint64_t)j);
        float f[4];
        double d[2];
        if (p->kind != PCS_RNG_RANDINT) {
            if (p->wide)
                pcs_rng_block_f64(p, r, d);
            else
                pcs_rng_block_f32(p, r, f);
        }
        for (int l = 0; l < per && base + l < n; l++) {
            char *dst = o + (base + l) * isz;
            if (p->kind == PCS_RNG_RANDINT) {
                pcs_scalar s = {.kind = PCS_SK_INT, .i = pcs_rng_int(p, r, l)};
                pcs_scalar_store(dtype, dst, s);
            } else if (dtype == PCS_FLOAT32) {
                memcpy(dst, &f[l], 4);
            } else if (dtype == PCS_FLOAT64 && p->wide) {
                memcpy(dst, &d[l], 8);
            } else {
                /* float16/bfloat16 round from the float value, exactly as
                 * the GPU does (float -> half, round to nearest even) */
                pcs_scalar s = {.kind = PCS_SK_FLOAT, .re = p->wide ? d[l] : (double)f[l]};
                pcs_scalar_store(dtype, dst, s);
            }
        }
    }
}

/* Fills t (any strides, any device) with numbers of kind p, drawn from gen
 * (t's device's, pcs_generator_arg; seed and offset are taken from it
 * here). 0, or -1 with exception. */
static int random_fill(PcsTensor *t, pcs_rng_params *p, pcs_gen *gen)
{
    int64_t n = pcs_tensor_numel(t);
    if (n == 0)
        return 0;
    if (!pcs_tensor_is_contiguous(t)) {
        PcsTensor *tmp = pcs_tensor_empty(t->ndim, t->sizes, t->dtype, t->device, false);
        if (!tmp)
            return -1;
        int r = random_fill(tmp, p, gen);
        if (r == 0)
            r = pcs_copy(t, tmp, false);
        Py_DECREF(tmp);
        return r;
    }
    /* a complex tensor is filled as its 2n real parts (real, imag, ...) */
    int dtype = t->dtype;
    if (pcs_is_complex(dtype)) {
        dtype = pcs_real_of(dtype);
        n *= 2;
    }
    /* reserved now: later fills never overlap this one */
    pcs_gen_reserve(gen, (uint64_t)((n + per_block(p) - 1) / per_block(p)), &p->seed, &p->offset);
    if (t->device < 0) {
        Py_BEGIN_ALLOW_THREADS
        fill_cpu(pcs_tensor_data(t), dtype, n, p);
        Py_END_ALLOW_THREADS
        return 0;
    }
    PcsDeviceGuard guard;
    if (pcs_device_guard_enter(&guard, t->device) < 0)
        return -1;
    cudaStream_t stream = pcs_current_stream(t->device);
    int r = 0;
    if (pcs_launch_rng_fill(pcs_tensor_data(t), dtype, n, p, stream) < 0) {
        PyErr_Format(PyExc_RuntimeError, "random fill: unsupported dtype %s", pcs_dtypes[t->dtype].name);
        r = -1;
    } else {
        r = PCS_CHECK_LAUNCH(stream, "pcs_launch_rng_fill");
    }
    pcs_device_guard_exit(&guard);
    return r;
}

static const char *legacy_name(int dtype) { return pcs_dtypes[dtype].legacy; }

/* The fills that take floating tensors, real or complex (normal_, uniform_,
 * rand, randn: each part of a complex number drawn, as torch's). */
static int require_float_c(PcsTensor *t, const char *what)
{
    if (pcs_is_float(t->dtype) || pcs_is_complex(t->dtype))
        return 0;
    PyErr_Format(PyExc_RuntimeError, "\"%s\" not implemented for '%s'", what, legacy_name(t->dtype));
    return -1;
}

/* A float argument (pos / name), `dflt` when absent. */
static int double_arg(PyObject *const *args, Py_ssize_t nargs, PyObject *kw, Py_ssize_t pos,
                      const char *name, double dflt, double *out)
{
    PyObject *o = pcs_arg(args, nargs, kw, pos, name);
    if (!o || o == Py_None) {
        *out = dflt;
        return 0;
    }
    if (PcsTensor_Check(o)) {
        PyErr_Format(PyExc_NotImplementedError,
                     "tensor-valued '%s' is not supported by pycuda_sem's random fills; pass a number",
                     name);
        return -1;
    }
    *out = PyFloat_AsDouble(o);
    return (*out == -1.0 && PyErr_Occurred()) ? -1 : 0;
}

/* The generator= keyword of the in-place fills, for t's device: NULL with
 * exception. */
static pcs_gen *fill_generator(PyObject *const *args, Py_ssize_t nargs, PyObject *kw, PcsTensor *t)
{
    return pcs_generator_arg(kw ? pcs_arg(args, nargs, kw, -1, "generator") : NULL, t->device);
}

/* RuntimeError with a printf-formatted message (PyErr_Format has no %g). */
static PyObject *rt_error(const char *fmt, double a, double b)
{
    char buf[160];
    snprintf(buf, sizeof buf, fmt, a, b);
    PyErr_SetString(PyExc_RuntimeError, buf);
    return NULL;
}

static PyObject *fill_and_return(PcsTensor *t, pcs_rng_params *p, pcs_gen *gen)
{
    if (random_fill(t, p, gen) < 0)
        return NULL;
    return Py_NewRef((PyObject *)t);
}

static void float_params(pcs_rng_params *p, int kind, int dtype, double a, double b)
{
    if (pcs_is_complex(dtype)) {
        /* each part: torch's complex normal has std / sqrt(2) a part (a
         * variance of std^2 in all), its uniform the range in each part */
        dtype = pcs_real_of(dtype);
        if (kind == PCS_RNG_NORMAL)
            b *= 0.70710678118654752440;
    }
    memset(p, 0, sizeof *p);
    p->kind = kind;
    p->wide = dtype == PCS_FLOAT64;
    p->ubits = dtype == PCS_FLOAT16 ? 11 : dtype == PCS_BFLOAT16 ? 8 : 24;
    p->a = a;
    p->b = b;
}

/* ------------------------------------------------------------------------ */
/* In-place methods                                                          */

static PyObject *m_normal_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"mean", "std", "generator", NULL};
    double mean, std;
    pcs_gen *gen;
    if (pcs_check_kwargs(kw, "normal_", names) < 0 || !(gen = fill_generator(args, nargs, kw, (PcsTensor *)self)) ||
        double_arg(args, nargs, kw, 0, "mean", 0.0, &mean) < 0 ||
        double_arg(args, nargs, kw, 1, "std", 1.0, &std) < 0 || require_float_c((PcsTensor *)self, "normal_") < 0)
        return NULL;
    if (!(std >= 0.0))
        return rt_error("normal expects std >= 0.0, but found std %g", std, 0);
    pcs_rng_params p;
    float_params(&p, PCS_RNG_NORMAL, ((PcsTensor *)self)->dtype, mean, std);
    return fill_and_return((PcsTensor *)self, &p, gen);
}

static PyObject *m_uniform_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"from", "to", "generator", NULL};
    double lo, hi;
    pcs_gen *gen;
    if (pcs_check_kwargs(kw, "uniform_", names) < 0 || !(gen = fill_generator(args, nargs, kw, (PcsTensor *)self)) ||
        double_arg(args, nargs, kw, 0, "from", 0.0, &lo) < 0 ||
        double_arg(args, nargs, kw, 1, "to", 1.0, &hi) < 0 || require_float_c((PcsTensor *)self, "uniform_") < 0)
        return NULL;
    if (lo > hi)
        return rt_error("uniform_ expects to return a [from, to) range, but found from=%g > to=%g", lo, hi);
    pcs_rng_params p;
    float_params(&p, PCS_RNG_UNIFORM, ((PcsTensor *)self)->dtype, lo, hi);
    return fill_and_return((PcsTensor *)self, &p, gen);
}

static PyObject *m_bernoulli_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"p", "generator", NULL};
    double prob;
    PcsTensor *t = (PcsTensor *)self;
    pcs_gen *gen;
    if (pcs_check_kwargs(kw, "bernoulli_", names) < 0 || !(gen = fill_generator(args, nargs, kw, t)) ||
        double_arg(args, nargs, kw, 0, "p", 0.5, &prob) < 0)
        return NULL;
    if (!(prob >= 0.0 && prob <= 1.0))
        return rt_error("bernoulli_ expects p to be in [0, 1], but got p=%g", prob, 0);
    if (pcs_is_complex(t->dtype))
        return PyErr_Format(PyExc_NotImplementedError, "bernoulli_ on complex tensors");
    pcs_rng_params p;
    float_params(&p, PCS_RNG_BERNOULLI, t->dtype, prob, 0.0);
    return fill_and_return(t, &p, gen);
}

static PyObject *m_exponential_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"lambd", "generator", NULL};
    double lambd;
    pcs_gen *gen;
    if (pcs_check_kwargs(kw, "exponential_", names) < 0 || !(gen = fill_generator(args, nargs, kw, (PcsTensor *)self)) ||
        double_arg(args, nargs, kw, 0, "lambd", 1.0, &lambd) < 0)
        return NULL;
    if (!pcs_is_float(((PcsTensor *)self)->dtype)) /* complex too, in torch's words */
        return PyErr_Format(PyExc_RuntimeError,
                            "Exponential distribution is a continuous probability distribution. dtype must be a "
                            "floating point but you specified %s",
                            legacy_name(((PcsTensor *)self)->dtype));
    if (!(lambd > 0.0))
        return rt_error("exponential_ expects lambda > 0.0, but found lambda=%g", lambd, 0);
    pcs_rng_params p;
    float_params(&p, PCS_RNG_EXPONENTIAL, ((PcsTensor *)self)->dtype, lambd, 0.0);
    return fill_and_return((PcsTensor *)self, &p, gen);
}

/* Integers in [low, high) into any real dtype. */
static int int_params(pcs_rng_params *p, int64_t low, int64_t high)
{
    if (low >= high) {
        PyErr_Format(PyExc_RuntimeError,
                     "random_ expects 'from' to be less than 'to', but got from=%lld >= to=%lld",
                     (long long)low, (long long)high);
        return -1;
    }
    memset(p, 0, sizeof *p);
    p->kind = PCS_RNG_RANDINT;
    p->low = low;
    p->range = (uint64_t)high - (uint64_t)low;
    p->wide = p->range > 0xffffffffULL;
    return 0;
}

/* random_(): [0, 2^digits] for floats (every integer exact), [0, max] for
 * integers, as PyTorch. */
static int64_t default_random_high(int dtype)
{
    switch (dtype) {
    case PCS_BOOL: return 2;
    case PCS_UINT8: return 256;
    case PCS_INT8: return 128;
    case PCS_INT16: return 32768;
    case PCS_INT32: return 2147483648LL;
    case PCS_FLOAT16: return (1LL << 11) + 1;
    case PCS_BFLOAT16: return (1LL << 8) + 1;
    case PCS_FLOAT32: return (1LL << 24) + 1;
    case PCS_FLOAT64: return (1LL << 53) + 1;
    default: return INT64_MAX;
    }
}

static PyObject *m_random_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"from", "to", "generator", NULL};
    PcsTensor *t = (PcsTensor *)self;
    pcs_gen *gen;
    if (pcs_check_kwargs(kw, "random_", names) < 0 || !(gen = fill_generator(args, nargs, kw, t)))
        return NULL;
    if (pcs_is_complex(t->dtype))
        return PyErr_Format(PyExc_NotImplementedError, "random_ on complex tensors");
    PyObject *a = pcs_arg(args, nargs, kw, 0, "from"), *b = pcs_arg(args, nargs, kw, 1, "to");
    int64_t low = 0, high = default_random_high(t->dtype);
    if (a && a != Py_None && (!b || b == Py_None) && nargs == 1) { /* random_(to) */
        high = PyLong_AsLongLong(a);
    } else {
        if (a && a != Py_None)
            low = PyLong_AsLongLong(a);
        if (b && b != Py_None && !PyErr_Occurred()) /* not with from's error set */
            high = PyLong_AsLongLong(b);
    }
    if (PyErr_Occurred())
        return NULL;
    pcs_rng_params p;
    if (int_params(&p, low, high) < 0)
        return NULL;
    return fill_and_return(t, &p, gen);
}

PyMethodDef pcs_tensor_random_methods[] = {
    {"normal_", FASTKW(m_normal_), "normal_(mean=0, std=1): fill with normal numbers (Philox, Box-Muller)."},
    {"uniform_", FASTKW(m_uniform_), "uniform_(from=0, to=1): fill with numbers uniform in [from, to)."},
    {"bernoulli_", FASTKW(m_bernoulli_), "bernoulli_(p=0.5): fill with 1 (probability p) or 0."},
    {"exponential_", FASTKW(m_exponential_), "exponential_(lambd=1): fill with exponential numbers."},
    {"random_", FASTKW(m_random_), "random_(from=0, to=None): fill with integers in [from, to)."},
    {NULL, NULL, 0, NULL},
};

/* ------------------------------------------------------------------------ */
/* Factories                                                                 */

typedef struct {
    int dtype, device;
    bool pinned; /* checked against the device by the caller (the _like forms inherit it) */
    int format;  /* memory_format= of the _like forms, -2 when not given */
    PyObject *generator; /* generator= (borrowed from the call), NULL when not given */
} rng_opts;

static int parse_opts(PyObject *const *args, Py_ssize_t nargs, PyObject *kw, const char *fname,
                      bool like, rng_opts *o)
{
    /* memory_format= only for the *_like forms, as in torch */
    static const char *const names[] = {"dtype", "device", "generator", "requires_grad", "layout",
                                        "pin_memory", "out", "size", "low", "high", "n", NULL};
    static const char *const names_like[] = {"dtype", "device", "generator", "requires_grad", "layout",
                                             "pin_memory", "out", "input", "memory_format", NULL};
    o->dtype = -1;
    o->device = like ? -1 : pcs_default_device(); /* the *_like: the input's, unless device= */
    o->pinned = false;
    o->format = -2;
    o->generator = NULL;
    if (o->device == -2 || pcs_check_kwargs(kw, fname, like ? names_like : names) < 0)
        return -1;
    if (!kw)
        return 0;
    o->generator = pcs_arg(args, nargs, kw, -1, "generator");
    PyObject *v;
    if ((v = pcs_arg(args, nargs, kw, -1, "dtype")) && (o->dtype = pcs_dtype_arg(v, -1)) == -2)
        return -1;
    if ((v = pcs_arg(args, nargs, kw, -1, "device")) && (o->device = pcs_device_arg(v, o->device)) == -2)
        return -1;
    if ((v = pcs_arg(args, nargs, kw, -1, "pin_memory"))) {
        int p = PyObject_IsTrue(v);
        if (p < 0)
            return -1;
        o->pinned = p;
    }
    /* requires_grad= is accepted; the autograd layer's wrapper marks the result */
    if ((v = pcs_arg(args, nargs, kw, -1, "requires_grad")) && PyObject_IsTrue(v) < 0)
        return -1;
    if ((v = pcs_arg(args, nargs, kw, -1, "out")) && v != Py_None) {
        PyErr_Format(PyExc_NotImplementedError, "%s(out=...) is not supported", fname);
        return -1;
    }
    if ((v = pcs_arg(args, nargs, kw, -1, "memory_format")) &&
        (o->format = pcs_memory_format_arg(v, -2, fname)) == -1)
        return -1;
    return 0;
}

/* The end of rand/randn and of their _like forms: a new tensor of a
 * floating dtype, filled from U(0, 1) or N(0, 1) (kind). */
static PyObject *new_float_random(int ndim, const int64_t *sizes, PcsTensor *like, int fmt, int dtype,
                                  int device, bool pinned, int kind, const char *fname, PyObject *generator)
{
    pcs_gen *gen;
    if (pcs_check_pinned(pinned, device) < 0 || !(gen = pcs_generator_arg(generator, device)))
        return NULL;
    PcsTensor *t = like ? pcs_tensor_empty_as(like, fmt, dtype, device, pinned)
                        : pcs_tensor_empty(ndim, sizes, dtype, device, pinned);
    if (!t)
        return NULL;
    if (require_float_c(t, fname) < 0) {
        Py_DECREF(t);
        return NULL;
    }
    pcs_rng_params p;
    float_params(&p, kind, dtype, 0.0, 1.0);
    PyObject *r = fill_and_return(t, &p, gen);
    Py_DECREF(t);
    return r;
}

static PyObject *float_factory(PyObject *const *args, Py_ssize_t nargs, PyObject *kw, const char *fname,
                               int kind)
{
    rng_opts o;
    int64_t sizes[PCS_MAX_DIMS];
    if (parse_opts(args, nargs, kw, fname, false, &o) < 0)
        return NULL;
    PyObject *size = kw ? pcs_arg(args, nargs, kw, -1, "size") : NULL;
    int ndim = size ? pcs_parse_sizes(&size, 1, sizes) : pcs_parse_sizes(args, nargs, sizes);
    if (ndim < 0)
        return NULL;
    int dtype = o.dtype < 0 ? pcs_default_dtype() : o.dtype;
    return new_float_random(ndim, sizes, NULL, 0, dtype, o.device, o.pinned, kind, fname, o.generator);
}

static PyObject *f_rand(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    PCS_UNUSED(m);
    return float_factory(args, nargs, kw, "rand", PCS_RNG_UNIFORM);
}

static PyObject *f_randn(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    PCS_UNUSED(m);
    return float_factory(args, nargs, kw, "randn", PCS_RNG_NORMAL);
}

static PyObject *like_factory(PyObject *const *args, Py_ssize_t nargs, PyObject *kw, const char *fname,
                              int kind)
{
    rng_opts o;
    if (parse_opts(args, nargs, kw, fname, true, &o) < 0)
        return NULL;
    PyObject *in = pcs_arg(args, nargs, kw, 0, "input");
    if (!in || !PcsTensor_Check(in))
        return PyErr_Format(PyExc_TypeError, "%s() expects a tensor as its first argument", fname);
    PcsTensor *src = (PcsTensor *)in;
    PyObject *dev = kw ? pcs_arg(args, nargs, kw, -1, "device") : NULL;
    int device = (dev && dev != Py_None) ? o.device : src->device;
    int dtype = o.dtype < 0 ? src->dtype : o.dtype;
    /* torch's preserve_format by default: the result is laid out as src */
    return new_float_random(src->ndim, src->sizes, src, o.format < 0 ? PCS_FORMAT_PRESERVE : o.format,
                            dtype, device, o.pinned, kind, fname, o.generator);
}

static PyObject *f_rand_like(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    PCS_UNUSED(m);
    return like_factory(args, nargs, kw, "rand_like", PCS_RNG_UNIFORM);
}

static PyObject *f_randn_like(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    PCS_UNUSED(m);
    return like_factory(args, nargs, kw, "randn_like", PCS_RNG_NORMAL);
}

/* randint(high, size) or randint(low, high, size); int64 unless dtype=. */
static PyObject *f_randint(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    PCS_UNUSED(m);
    rng_opts o;
    pcs_gen *gen;
    if (parse_opts(args, nargs, kw, "randint", false, &o) < 0 || pcs_check_pinned(o.pinned, o.device) < 0 ||
        !(gen = pcs_generator_arg(o.generator, o.device)))
        return NULL;
    PyObject *low_o = NULL, *high_o, *size_o;
    if (nargs >= 3) {
        low_o = args[0];
        high_o = args[1];
        size_o = args[2];
    } else if (nargs == 2) {
        high_o = args[0];
        size_o = args[1];
        if (kw && pcs_arg(args, nargs, kw, -1, "low"))
            return PyErr_Format(PyExc_TypeError, "randint() got multiple values for 'low'");
    } else {
        low_o = pcs_arg(args, nargs, kw, -1, "low");
        high_o = nargs == 1 ? args[0] : pcs_arg(args, nargs, kw, -1, "high");
        size_o = pcs_arg(args, nargs, kw, -1, "size");
    }
    if (!high_o || !size_o)
        return PyErr_Format(PyExc_TypeError, "randint() missing 'high' or 'size'");
    int64_t low = 0, high;
    if ((low_o && pcs_int64_arg(low_o, &low) < 0) || pcs_int64_arg(high_o, &high) < 0)
        return NULL;
    int64_t sizes[PCS_MAX_DIMS];
    int ndim = pcs_parse_sizes(&size_o, 1, sizes);
    if (ndim < 0)
        return NULL;
    pcs_rng_params p;
    if (int_params(&p, low, high) < 0)
        return NULL;
    PcsTensor *t = pcs_tensor_empty(ndim, sizes, o.dtype < 0 ? PCS_INT64 : o.dtype, o.device,
                                    o.pinned);
    if (!t)
        return NULL;
    PyObject *r = fill_and_return(t, &p, gen);
    Py_DECREF(t);
    return r;
}

/* randperm(n): Fisher-Yates on the host with the target device's generator
 * (uniform integers from the same Philox stream), then one copy to the
 * device. A permutation is a sequential algorithm; its numbers are the same
 * on the CPU and on the GPU. */
static PyObject *f_randperm(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    PCS_UNUSED(m);
    rng_opts o;
    pcs_gen *gen;
    if (parse_opts(args, nargs, kw, "randperm", false, &o) < 0 || pcs_check_pinned(o.pinned, o.device) < 0 ||
        !(gen = pcs_generator_arg(o.generator, o.device)))
        return NULL;
    PyObject *n_o = pcs_arg(args, nargs, kw, 0, "n");
    if (!n_o)
        return PyErr_Format(PyExc_TypeError, "randperm() missing required argument 'n'");
    int64_t n;
    if (pcs_int64_arg(n_o, &n) < 0)
        return NULL;
    if (n < 0)
        return PyErr_Format(PyExc_RuntimeError, "n must be non-negative, got%lld", (long long)n);
    int dtype = o.dtype < 0 ? PCS_INT64 : o.dtype;
    PcsTensor *host = pcs_tensor_empty(1, &n, PCS_INT64, -1, false);
    if (!host)
        return NULL;
    int64_t *v = pcs_tensor_data(host);
    /* swap i with j in [i, n): two 32-bit draws (one 64-bit) per step */
    uint64_t seed, off;
    pcs_gen_reserve(gen, (uint64_t)(n + 1) / 2, &seed, &off);
    for (int64_t i = 0; i < n; i++)
        v[i] = i;
    for (int64_t i = 0; i + 1 < n; i++) {
        pcs_u32x4 r = pcs_philox(seed, off + (uint64_t)i / 2);
        uint64_t bits = pcs_join64(r.v[2 * (i % 2)], r.v[2 * (i % 2) + 1]);
        int64_t j = i + (int64_t)(bits % (uint64_t)(n - i));
        int64_t tmp = v[i];
        v[i] = v[j];
        v[j] = tmp;
    }
    PcsTensor *out = pcs_tensor_to(host, dtype, o.device, false, false, o.pinned);
    Py_DECREF(host);
    return (PyObject *)out;
}

static PyMethodDef random_methods[] = {
    {"rand", FASTKW(f_rand), "rand(*size, dtype=None, device=None, pin_memory=False): uniform numbers in [0, 1)."},
    {"randn", FASTKW(f_randn), "randn(*size, dtype=None, device=None, pin_memory=False): standard normal numbers."},
    {"rand_like", FASTKW(f_rand_like), "rand_like(t, dtype=None, device=None, pin_memory=False)\n\nUniform [0, 1) numbers in t's shape, "
     "with t's dtype and device unless given."},
    {"randn_like", FASTKW(f_randn_like), "randn_like(t, dtype=None, device=None, pin_memory=False)\n\nStandard normal numbers in t's shape, "
     "with t's dtype and device unless given."},
    {"randint", FASTKW(f_randint), "randint(low=0, high, size, dtype=int64, device=None, pin_memory=False)"},
    {"randperm", FASTKW(f_randperm), "randperm(n, dtype=int64, device=None, pin_memory=False)"},
    {NULL, NULL, 0, NULL},
};

int pcs_random_init(PyObject *module)
{
    if (pcs_random_state_init(module) < 0 || pcs_generator_init(module) < 0)
        return -1;
    return PyModule_AddFunctions(module, random_methods);
}
