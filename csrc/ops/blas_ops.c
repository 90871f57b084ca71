/* blas_ops.c: the front door of the matrix products: matmul (and @, @=),
 * mm, bmm, mv, dot, addmm, baddbmm as functions and Tensor methods. Checks
 * devices, dtypes and shapes with torch's messages, applies torch.matmul's
 * rules for 1-D operands, then hands CUDA tensors to the cuBLAS engine
 * (blas.c) and CPU tensors to NumPy's matmul (float16/bfloat16 computed in
 * float32), after the same checks, so errors read the same on both. */
#include "ops/blas.h"
#include "ops/ops.h"

#include <string.h>

#include "tensor/copy.h"
#include "core/scalar.h"

#define FASTKW(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL | METH_KEYWORDS

/* ------------------------------------------------------------------------ */
/* Checks shared by every product                                            */

static const char *type_name(int dtype)
{
    /* PyTorch's C++ names, which its error messages print */
    static const char *names[PCS_NUM_DTYPES] = {
        "bool", "unsigned char", "signed char", "short", "int", "long int", "c10::Half",
        "c10::BFloat16", "float", "double", "c10::complex<float>", "c10::complex<double>"};
    return names[dtype];
}

static void device_str(int device, char *buf, size_t n)
{
    if (device < 0)
        snprintf(buf, n, "cpu");
    else
        snprintf(buf, n, "cuda:%d", device);
}

/* Same device and dtype for all n operands; the device is returned. */
static int check_operands(PcsTensor **ts, int n, const char *what)
{
    for (int i = 1; i < n; i++) {
        if (ts[i]->device != ts[0]->device) {
            char a[32], b[32];
            device_str(ts[0]->device, a, sizeof a);
            device_str(ts[i]->device, b, sizeof b);
            PyErr_Format(PyExc_RuntimeError,
                         "Expected all tensors to be on the same device, but found at least two "
                         "devices, %s and %s! (when checking arguments for %s)",
                         a, b, what);
            return -2;
        }
        if (ts[i]->dtype != ts[0]->dtype) {
            PyErr_Format(PyExc_RuntimeError,
                         "expected m1 and m2 to have the same dtype, but got: %s != %s",
                         type_name(ts[0]->dtype), type_name(ts[i]->dtype));
            return -2;
        }
    }
    int dt = ts[0]->dtype;
    if (ts[0]->device >= 0 && !pcs_is_float(dt) && !pcs_is_complex(dt)) {
        PyErr_Format(PyExc_RuntimeError, "\"%s_cuda\" not implemented for '%s'", what,
                     pcs_dtypes[dt].legacy);
        return -2;
    }
    return ts[0]->device;
}

static int mm_mismatch(int64_t m, int64_t k1, int64_t k2, int64_t n)
{
    PyErr_Format(PyExc_RuntimeError, "mat1 and mat2 shapes cannot be multiplied (%lldx%lld and %lldx%lld)",
                 (long long)m, (long long)k1, (long long)k2, (long long)n);
    return -1;
}

/* ------------------------------------------------------------------------ */
/* CPU path: NumPy                                                           */

static PyObject *numpy_mod(void)
{
    static PyObject *np = NULL;
    if (!np)
        np = PyImport_ImportModule("numpy");
    return np;
}

/* NumPy view of t for computing: float16/bfloat16 widened to float32. */
static PyObject *np_operand(PcsTensor *t)
{
    if (pcs_ops_check_cpu_size(t) < 0)
        return NULL;
    if (t->dtype == PCS_FLOAT16 || t->dtype == PCS_BFLOAT16) {
        PcsTensor *f = pcs_tensor_to(t, PCS_FLOAT32, -1, false, false, false);
        if (!f)
            return NULL;
        PyObject *a = pcs_tensor_numpy(f);
        Py_DECREF(f);
        return a;
    }
    return pcs_tensor_numpy(t);
}

/* A NumPy result as a new tensor of `dtype`. */
static PyObject *from_np(PyObject *arr, int dtype)
{
    if (!arr)
        return NULL;
    /* copy(): C order and, unlike ascontiguousarray, keeps 0-d results 0-d */
    PyObject *c = PyObject_CallMethod(arr, "copy", NULL);
    Py_DECREF(arr);
    if (!c)
        return NULL;
    PcsTensor *t = pcs_tensor_from_numpy(c);
    Py_DECREF(c);
    if (!t)
        return NULL;
    PcsTensor *r = pcs_tensor_to(t, dtype, -1, false, false, false);
    Py_DECREF(t);
    return (PyObject *)r;
}

/* alpha or beta as the Python number NumPy scales with. Floating products
 * take its true value as a float (complex when it is one); pcs_scalar_to_py
 * reads a u64 int through pcs_scalar_as_double. Integer products take an
 * int of the dtype, as torch's CPU gemm converts alpha and beta with
 * Scalar::to<scalar_t>: a float would turn the sum into float64 arithmetic
 * (inexact past 2^53), and a value the dtype cannot hold (2**63 for int64)
 * is refused with torch's message instead of saturating. */
static PyObject *coef_to_py(int dtype, pcs_scalar s)
{
    if (pcs_is_integral(dtype, false)) {
        /* through the dtype's memory, so that -1 reaches uint8 as 255 */
        unsigned char v[16];
        if (pcs_scalar_check_fits(dtype, s, PCS_CHECK_FILL) < 0)
            return NULL;
        pcs_scalar_store(dtype, v, s);
        return pcs_scalar_to_py(dtype, pcs_scalar_load(dtype, v));
    }
    return pcs_scalar_to_py(s.kind == PCS_SK_COMPLEX ? PCS_COMPLEX128 : PCS_FLOAT64, s);
}

/* beta * input + alpha * (a @ b), all in NumPy. */
static PyObject *cpu_product(PcsTensor *a, PcsTensor *b, PcsTensor *input, pcs_scalar alpha,
                             pcs_scalar beta, bool is_dot)
{
    PyObject *np = numpy_mod(), *x = NULL, *y = NULL, *r = NULL;
    if (!np || !(x = np_operand(a)) || !(y = np_operand(b)))
        goto done;
    r = PyObject_CallMethod(np, is_dot ? "dot" : "matmul", "OO", x, y);
    if (r && input) {
        PyObject *al = coef_to_py(a->dtype, alpha), *be = al ? coef_to_py(a->dtype, beta) : NULL;
        PyObject *in = al && be ? np_operand(input) : NULL, *t1 = NULL, *t2 = NULL, *sum = NULL;
        if (al && be && in && (t1 = PyNumber_Multiply(al, r)) && (t2 = PyNumber_Multiply(be, in)))
            sum = PyNumber_Add(t1, t2);
        Py_XDECREF(al);
        Py_XDECREF(be);
        Py_XDECREF(in);
        Py_XDECREF(t1);
        Py_XDECREF(t2);
        Py_SETREF(r, sum);
    }
done:
    Py_XDECREF(x);
    Py_XDECREF(y);
    if (!r)
        return NULL;
    PyObject *arr = PyObject_CallMethod(np, "asarray", "O", r);
    Py_DECREF(r);
    return from_np(arr, a->dtype);
}

/* ------------------------------------------------------------------------ */
/* The products                                                              */

static PyObject *reshape_contig(PcsTensor *t, int ndim, const int64_t *sizes)
{
    int64_t st[PCS_MAX_DIMS];
    pcs_contiguous_strides(ndim, sizes, st);
    PyObject *r = (PyObject *)pcs_tensor_alias(t, t->offset, ndim, sizes, st);
    Py_DECREF(t);
    return r;
}

static PyObject *dot_impl(PcsTensor *a, PcsTensor *b, const char *name)
{
    PcsTensor *ops[2] = {a, b};
    if (a->ndim != 1 || b->ndim != 1)
        return PyErr_Format(PyExc_RuntimeError, "1D tensors expected, but got %dD and %dD tensors",
                            a->ndim, b->ndim);
    if (a->sizes[0] != b->sizes[0])
        return PyErr_Format(PyExc_RuntimeError,
                            "inconsistent tensor size, expected tensor [%lld] and src [%lld] to have "
                            "the same number of elements, but got %lld and %lld elements respectively",
                            (long long)a->sizes[0], (long long)b->sizes[0], (long long)a->sizes[0],
                            (long long)b->sizes[0]);
    int dev = check_operands(ops, 2, name);
    if (dev == -2)
        return NULL;
    if (dev < 0)
        return cpu_product(a, b, NULL, pcs_blas_one(), pcs_blas_zero(), true);
    return (PyObject *)pcs_blas_cuda_dot(a, b);
}

/* torch.matmul's rules: 1-D operands gain a dim that the result drops. */
static PyObject *matmul_impl(PcsTensor *a, PcsTensor *b)
{
    if (a->ndim == 0 || b->ndim == 0)
        return PyErr_Format(PyExc_RuntimeError,
                            "both arguments to matmul need to be at least 1D, but they are %dD and %dD",
                            a->ndim, b->ndim);
    if (a->ndim == 1 && b->ndim == 1)
        return dot_impl(a, b, "matmul");
    int64_t ka = a->sizes[a->ndim - 1], kb = b->sizes[b->ndim == 1 ? 0 : b->ndim - 2];
    if (ka != kb)
        return mm_mismatch(a->ndim == 1 ? 1 : a->sizes[a->ndim - 2], ka, kb,
                           b->ndim == 1 ? 1 : b->sizes[b->ndim - 1]),
               NULL;
    PcsTensor *ops[2] = {a, b};
    int dev = check_operands(ops, 2, "matmul");
    if (dev == -2)
        return NULL;
    int64_t bshape[PCS_MAX_DIMS];
    if (pcs_blas_broadcast_batch(a, a->ndim > 2 ? a->ndim - 2 : 0, b, b->ndim > 2 ? b->ndim - 2 : 0, bshape) < 0)
        return NULL;
    if (dev < 0)
        return cpu_product(a, b, NULL, pcs_blas_one(), pcs_blas_zero(), false);
    /* promote 1-D operands: (k) -> (1, k) on the left, (k, 1) on the right */
    PcsTensor *a2 = a, *b2 = b;
    if (a->ndim == 1) {
        int64_t sz[2] = {1, a->sizes[0]}, st[2] = {a->sizes[0] * a->strides[0], a->strides[0]};
        a2 = pcs_tensor_alias(a, a->offset, 2, sz, st);
    } else {
        Py_INCREF(a2);
    }
    if (b->ndim == 1) {
        int64_t sz[2] = {b->sizes[0], 1}, st[2] = {b->strides[0], 1};
        b2 = pcs_tensor_alias(b, b->offset, 2, sz, st);
    } else {
        Py_INCREF(b2);
    }
    PcsTensor *C = (a2 && b2) ? pcs_blas_cuda_product(a2, b2, NULL, pcs_blas_one(), pcs_blas_zero()) : NULL;
    Py_XDECREF(a2);
    Py_XDECREF(b2);
    if (!C || (a->ndim != 1 && b->ndim != 1))
        return (PyObject *)C;
    /* drop the added dim: sizes of C without the m (a 1-D) or n (b 1-D) dim */
    int64_t sz[PCS_MAX_DIMS];
    int nd = 0;
    for (int i = 0; i < C->ndim; i++) {
        if ((a->ndim == 1 && i == C->ndim - 2) || (b->ndim == 1 && i == C->ndim - 1))
            continue;
        sz[nd++] = C->sizes[i];
    }
    return reshape_contig(C, nd, sz);
}

static int scalar_kw(PyObject *const *args, Py_ssize_t nargs, PyObject *kw, const char *name,
                     pcs_scalar *out)
{
    PyObject *o = kw ? pcs_arg(args, nargs, kw, -1, name) : NULL;
    *out = pcs_blas_one();
    return o ? pcs_scalar_from_py(o, out) : 0;
}

/* addmm / baddbmm: beta * input + alpha * (m1 @ m2). */
static PyObject *add_product(PcsTensor *input, PcsTensor *m1, PcsTensor *m2, pcs_scalar beta,
                             pcs_scalar alpha, bool batched)
{
    const char *name = batched ? "baddbmm" : "addmm";
    int nd = batched ? 3 : 2;
    if (m1->ndim != nd || m2->ndim != nd)
        return PyErr_Format(PyExc_RuntimeError, batched ? "batch1 must be a 3D tensor" : "mat1 must be a matrix, got %d-D tensor", m1->ndim != nd ? m1->ndim : m2->ndim);
    if (batched && m1->sizes[0] != m2->sizes[0])
        return PyErr_Format(PyExc_RuntimeError, "batch1 and batch2 must have same number of batches, got %lld and %lld",
                            (long long)m1->sizes[0], (long long)m2->sizes[0]);
    if (m1->sizes[nd - 1] != m2->sizes[nd - 2])
        return mm_mismatch(m1->sizes[nd - 2], m1->sizes[nd - 1], m2->sizes[nd - 2], m2->sizes[nd - 1]), NULL;
    PcsTensor *ops[3] = {m1, m2, input};
    int dev = check_operands(ops, 3, name);
    if (dev == -2)
        return NULL;
    /* input must broadcast to the result */
    int64_t osz[3] = {m1->sizes[0], m1->sizes[nd - 2], m2->sizes[nd - 1]};
    if (!batched) {
        osz[0] = m1->sizes[0];
        osz[1] = m2->sizes[1];
    }
    if (input->ndim > nd)
        goto bad_input;
    for (int i = 0; i < input->ndim; i++) {
        int64_t s = input->sizes[input->ndim - 1 - i], o = osz[nd - 1 - i];
        if (s != o && s != 1)
            goto bad_input;
    }
    if (dev < 0)
        return cpu_product(m1, m2, input, alpha, beta, false);
    return (PyObject *)pcs_blas_cuda_product(m1, m2, input, alpha, beta);
bad_input:
    return PyErr_Format(PyExc_RuntimeError,
                        "%s: the input (%d-D, last size %lld) cannot be broadcast to the result", name,
                        input->ndim, (long long)(input->ndim ? input->sizes[input->ndim - 1] : 1));
}

/* ------------------------------------------------------------------------ */
/* Python entry points                                                       */

static int tensor_args(PyObject *const *args, Py_ssize_t nargs, PyObject *kw, const char *fname,
                       const char *const *names, int n, PcsTensor **out)
{
    for (int i = 0; i < n; i++) {
        PyObject *o = pcs_arg(args, nargs, kw, i, names[i]);
        if (!o || !PcsTensor_Check(o)) {
            PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be Tensor", fname, names[i]);
            return -1;
        }
        out[i] = (PcsTensor *)o;
    }
    PyObject *o = kw ? pcs_arg(args, nargs, kw, -1, "out") : NULL;
    if (o && o != Py_None) {
        PyErr_Format(PyExc_NotImplementedError, "%s(out=...) is not supported by pycuda_sem", fname);
        return -1;
    }
    return 0;
}

/* The Tensor method t_NAME calls the module function f_NAME with self as its
 * first argument: the vectorcall array gets self prepended (keyword values
 * follow the positional ones in it, so they move along). None of these
 * functions takes more than 7 arguments, hence the fixed array. */
typedef PyObject *(*fastkw_fn)(PyObject *, PyObject *const *, Py_ssize_t, PyObject *);

static PyObject *call_as_method(fastkw_fn f, const char *fname, PyObject *self,
                                PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    PyObject *all[8];
    Py_ssize_t nkw = kw ? PyTuple_GET_SIZE(kw) : 0;
    if (nargs + nkw > 7)
        return PyErr_Format(PyExc_TypeError, "%s(): too many arguments", fname);
    all[0] = self;
    memcpy(all + 1, args, (nargs + nkw) * sizeof(PyObject *));
    return f(NULL, all, nargs + 1, kw);
}

#define METHOD_OF(fname)                                                                   \
    static PyObject *t_##fname(PyObject *self, PyObject *const *args, Py_ssize_t nargs,    \
                               PyObject *kw)                                               \
    {                                                                                      \
        return call_as_method(f_##fname, #fname, self, args, nargs, kw);                   \
    }

#define BINARY_ENTRY(fname, n0, n1, body)                                                  \
    static PyObject *f_##fname(PyObject *m, PyObject *const *args, Py_ssize_t nargs,       \
                               PyObject *kw)                                               \
    {                                                                                      \
        PCS_UNUSED(m);                                                                     \
        static const char *const names[] = {n0, n1, "out", NULL};                          \
        PcsTensor *t[2];                                                                   \
        if (pcs_check_kwargs(kw, #fname, names) < 0 ||                                     \
            tensor_args(args, nargs, kw, #fname, names, 2, t) < 0)                         \
            return NULL;                                                                   \
        PcsTensor *a = t[0], *b = t[1];                                                    \
        body                                                                               \
    }                                                                                      \
    METHOD_OF(fname)

BINARY_ENTRY(matmul, "input", "other", { return matmul_impl(a, b); })

BINARY_ENTRY(mm, "input", "mat2", {
    if (a->ndim != 2)
        return PyErr_Format(PyExc_RuntimeError, "self must be a matrix");
    if (b->ndim != 2)
        return PyErr_Format(PyExc_RuntimeError, "mat2 must be a matrix");
    return matmul_impl(a, b);
})

BINARY_ENTRY(bmm, "input", "mat2", {
    if (a->ndim != 3)
        return PyErr_Format(PyExc_RuntimeError, "batch1 must be a 3D tensor");
    if (b->ndim != 3)
        return PyErr_Format(PyExc_RuntimeError, "batch2 must be a 3D tensor");
    if (a->sizes[0] != b->sizes[0] || a->sizes[2] != b->sizes[1])
        return PyErr_Format(PyExc_RuntimeError,
                            "Expected size for first two dimensions of batch2 tensor to be: [%lld, %lld] "
                            "but got: [%lld, %lld].",
                            (long long)a->sizes[0], (long long)a->sizes[2], (long long)b->sizes[0],
                            (long long)b->sizes[1]);
    return matmul_impl(a, b);
})

BINARY_ENTRY(mv, "input", "vec", {
    if (a->ndim != 2 || b->ndim != 1)
        return PyErr_Format(PyExc_RuntimeError, "vector + matrix @ vector expected, got 1, %d, %d",
                            a->ndim, b->ndim);
    if (a->sizes[1] != b->sizes[0])
        return PyErr_Format(PyExc_RuntimeError, "size mismatch, got input (%lld), mat (%lldx%lld), vec (%lld)",
                            (long long)a->sizes[0], (long long)a->sizes[0], (long long)a->sizes[1],
                            (long long)b->sizes[0]);
    return matmul_impl(a, b);
})

BINARY_ENTRY(dot, "input", "tensor", {
    if (a->dtype != b->dtype)
        return PyErr_Format(PyExc_RuntimeError,
                            "dot : expected both vectors to have same dtype, but found %s and %s",
                            pcs_dtypes[a->dtype].legacy, pcs_dtypes[b->dtype].legacy);
    return dot_impl(a, b, "dot");
})

#define ADD_ENTRY(fname, batched)                                                          \
    static PyObject *f_##fname(PyObject *m, PyObject *const *args, Py_ssize_t nargs,       \
                               PyObject *kw)                                               \
    {                                                                                      \
        PCS_UNUSED(m);                                                                     \
        static const char *const names[] = {"input", (batched) ? "batch1" : "mat1",        \
                                            (batched) ? "batch2" : "mat2", "beta", "alpha",\
                                            "out", NULL};                                  \
        PcsTensor *t[3];                                                                   \
        pcs_scalar beta, alpha;                                                            \
        if (pcs_check_kwargs(kw, #fname, names) < 0 ||                                     \
            tensor_args(args, nargs, kw, #fname, names, 3, t) < 0 ||                       \
            scalar_kw(args, nargs, kw, "beta", &beta) < 0 ||                               \
            scalar_kw(args, nargs, kw, "alpha", &alpha) < 0)                               \
            return NULL;                                                                   \
        if (nargs > 3)                                                                     \
            return PyErr_Format(PyExc_TypeError, #fname "(): beta and alpha are keyword-only"); \
        return add_product(t[0], t[1], t[2], beta, alpha, batched);                        \
    }                                                                                      \
    METHOD_OF(fname)

ADD_ENTRY(addmm, false)
ADD_ENTRY(baddbmm, true)

PyObject *pcs_blas_nb_matmul(PyObject *a, PyObject *b)
{
    if (!PcsTensor_Check(a) || !PcsTensor_Check(b))
        Py_RETURN_NOTIMPLEMENTED;
    return matmul_impl((PcsTensor *)a, (PcsTensor *)b);
}

PyObject *pcs_blas_nb_imatmul(PyObject *a, PyObject *b)
{
    if (!PcsTensor_Check(a) || !PcsTensor_Check(b))
        Py_RETURN_NOTIMPLEMENTED;
    PcsTensor *r = (PcsTensor *)matmul_impl((PcsTensor *)a, (PcsTensor *)b);
    if (!r)
        return NULL;
    PcsTensor *t = (PcsTensor *)a;
    bool same = r->ndim == t->ndim;
    for (int i = 0; same && i < t->ndim; i++)
        same = r->sizes[i] == t->sizes[i];
    int rc = same ? pcs_copy(t, r, false) : -1;
    if (!same)
        PyErr_SetString(PyExc_RuntimeError, "a @= b: the product must have the shape of a");
    Py_DECREF(r);
    return rc < 0 ? NULL : Py_NewRef(a);
}

PyMethodDef pcs_tensor_blas_methods[] = {
    {"matmul", FASTKW(t_matmul), "self @ other, with torch.matmul's rules."},
    {"mm", FASTKW(t_mm), "Matrix product of two 2-D tensors."},
    {"bmm", FASTKW(t_bmm), "Batched matrix product of two 3-D tensors."},
    {"mv", FASTKW(t_mv), "Matrix-vector product."},
    {"dot", FASTKW(t_dot), "Dot product of two 1-D tensors."},
    {"addmm", FASTKW(t_addmm), "beta * self + alpha * (mat1 @ mat2)"},
    {"baddbmm", FASTKW(t_baddbmm), "beta * self + alpha * (batch1 @ batch2)"},
    {NULL, NULL, 0, NULL},
};


PyMethodDef pcs_blas_functions[] = {
    {"matmul", FASTKW(f_matmul), "matmul(input, other): matrix product with broadcasting."},
    {"mm", FASTKW(f_mm), "mm(input, mat2)\n\n(n x m) @ (m x p) -> (n x p) for 2-D tensors on one device, through "
     "cuBLAS on the current stream (TF32 per backends.cuda.matmul.allow_tf32). "
     "RuntimeError when the shapes cannot be multiplied."},
    {"bmm", FASTKW(f_bmm), "bmm(input, mat2)\n\n(b x n x m) @ (b x m x p) -> (b x n x p): one strided-batched "
     "cuBLAS call. RuntimeError for mismatched batches or shapes."},
    {"mv", FASTKW(f_mv), "mv(input, vec)\n\n(n x m) @ (m) -> (n)."},
    {"dot", FASTKW(f_dot), "dot(input, tensor)\n\nThe 0-dim dot product of two 1-D tensors of the same length "
     "and dtype."},
    {"addmm", FASTKW(f_addmm), "addmm(input, mat1, mat2, *, beta=1, alpha=1)\n\nbeta * input + alpha * (mat1 @ mat2), "
     "input broadcast to the product's shape; one GEMM with cuBLAS's beta."},
    {"baddbmm", FASTKW(f_baddbmm), "baddbmm(input, batch1, batch2, *, beta=1, alpha=1)\n\nbeta * input + alpha * "
     "(batch1 @ batch2) for batches of matrices."},
    {NULL, NULL, 0, NULL},
};
