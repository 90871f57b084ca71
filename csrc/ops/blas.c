/* blas.c: the cuBLAS engine behind the matrix products: the TF32 and
 * reduced-precision policy flags, one cuBLAS handle per (device, stream), and
 * the CUDA product itself. The front door (argument parsing, shape and dtype
 * checks with torch's messages, the CPU path, the method tables) is
 * blas_ops.c.
 *
 * How a product reaches cuBLAS: cuBLAS is column-major, our tensors are
 * row-major views, so C = A @ B is computed as C^T = B^T A^T, which needs no
 * data movement: a row-major matrix is its transpose in column-major order.
 * Each operand is described by (rows, cols, row stride, column stride, batch
 * stride); if one of the two strides is 1 the operand goes in as it is, with
 * op N or op T (so `x @ w.t()` reads w where it lies); otherwise, or when
 * batch dimensions do not collapse to one stride, it is copied contiguous
 * first. Batched products use strided-batched GEMM; broadcast batch
 * dimensions have stride 0 and cost nothing. A batched A times a 2-D B whose
 * batch and row dimensions collapse becomes one large GEMM.
 *
 * Handles: created lazily per (device, stream), bound to the stream once
 * (streams live until the process ends, so the pair never goes stale), with
 * a workspace from the caching allocator held for the handle's life, as
 * PyTorch does; it shows in memory_allocated() after the first product. */
#include "ops/blas.h"
#include "runtime/device.h"

#include <cublas_v2.h>
#include <limits.h>
#include <string.h>

#include "tensor/copy.h"
#include "core/scalar.h"
#include "runtime/stream.h"

/* ------------------------------------------------------------------------ */
/* cuBLAS status checks                                                      */

static int cublas_error(cublasStatus_t st, const char *call, const char *file, int line)
{
    PyErr_Format(st == CUBLAS_STATUS_ALLOC_FAILED ? pcs_OutOfMemoryError : PyExc_RuntimeError,
                 "cuBLAS error: %s (%d) in %s at %s:%d", cublasGetStatusString(st), (int)st, call,
                 file, line);
    return -1;
}

#define PCS_CUBLAS_CHECK_GOTO(call, label)                                     \
    do {                                                                       \
        cublasStatus_t pcs_st_ = (call);                                       \
        if (pcs_st_ != CUBLAS_STATUS_SUCCESS) {                                \
            cublas_error(pcs_st_, #call, __FILE__, __LINE__);                  \
            goto label;                                                        \
        }                                                                      \
    } while (0)

/* ------------------------------------------------------------------------ */
/* Policy flags                                                              */

/* allow_tf32 defaults to True as the CUDA semantics note says (PyTorch 1.7
 * to 1.11); PyTorch 1.12 and later default it to False. */
static bool allow_tf32 = true;
static bool allow_fp16_rr = true, allow_bf16_rr = true;
static bool cudnn_allow_tf32 = true; /* no convolutions here: kept for scripts */
/* float32 matmul precision: "highest" iff !allow_tf32; "medium" is kept
 * apart from "high" only to be reported back. */
static bool precision_medium = false;

/* ------------------------------------------------------------------------ */
/* Handles                                                                   */

typedef struct {
    int device;
    cudaStream_t stream;
    cublasHandle_t handle;
    pcs_block *workspace;
} handle_entry;

static handle_entry *handles = NULL;
static size_t n_handles = 0, cap_handles = 0;

/* Hopper wants 32 MiB for its split-K kernels; PyTorch uses the same. */
static size_t workspace_bytes(int device)
{
    int major = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess)
        major = 8;
    return major >= 9 ? (size_t)32 << 20 : (size_t)4 << 20;
}

/* The handle for (device, stream); the device must be the runtime's current
 * one. NULL with exception on failure. */
static cublasHandle_t get_handle(int device, cudaStream_t stream)
{
    static size_t last = 0; /* most calls repeat the previous pair */
    if (last < n_handles && handles[last].device == device && handles[last].stream == stream)
        return handles[last].handle;
    for (size_t i = 0; i < n_handles; i++) {
        if (handles[i].device == device && handles[i].stream == stream) {
            last = i;
            return handles[i].handle;
        }
    }
    if (n_handles == cap_handles) {
        size_t cap = cap_handles ? cap_handles * 2 : 8;
        handle_entry *h = PyMem_RawRealloc(handles, cap * sizeof *h);
        if (!h)
            return PyErr_NoMemory(), NULL;
        handles = h;
        cap_handles = cap;
    }
    handle_entry e = {device, stream, NULL, NULL};
    size_t ws = workspace_bytes(device);
    PCS_CUBLAS_CHECK_GOTO(cublasCreate(&e.handle), fail);
    PCS_CUBLAS_CHECK_GOTO(cublasSetStream(e.handle, stream), fail);
    pcs_status st = pcs_alloc(device, ws, stream, &e.workspace);
    if (st != PCS_OK) {
        pcs_alloc_raise(st);
        goto fail;
    }
    PCS_CUBLAS_CHECK_GOTO(cublasSetWorkspace(e.handle, pcs_block_ptr(e.workspace), ws), fail);
    handles[n_handles] = e;
    last = n_handles++;
    return e.handle;
fail:
    if (e.workspace)
        pcs_free(e.workspace);
    if (e.handle)
        cublasDestroy(e.handle);
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* CUDA path                                                                 */

/* A batch of matrices inside one tensor: element (b, r, c) is at element
 * b*sb + r*sr + c*sc from ptr. `own` keeps the memory (or a copy) alive. */
typedef struct {
    PcsTensor *own;
    char *ptr;
    int64_t batch, rows, cols, sb, sr, sc;
} mats;

/* Whether cuBLAS can read the matrices as they lie: op and leading
 * dimension of X^T in column-major terms (see the top of the file). */
static bool mat_layout(const mats *x, cublasOperation_t *op, int64_t *ld)
{
    int64_t r = x->rows, c = x->cols;
    if ((x->sc == 1 || c == 1) && (r == 1 || x->sr >= (c > 1 ? c : 1))) {
        *op = CUBLAS_OP_N;
        *ld = r == 1 ? (c > 1 ? c : 1) : x->sr;
        return *ld <= INT_MAX;
    }
    if ((x->sr == 1 || r == 1) && (c == 1 || x->sc >= (r > 1 ? r : 1))) {
        *op = CUBLAS_OP_T;
        *ld = c == 1 ? (r > 1 ? r : 1) : x->sc;
        return *ld <= INT_MAX;
    }
    return false;
}

/* Describes t (..., rows, cols) broadcast to the batch shape bshape (nb
 * dims) as mats, copying when the layout needs it. */
static int mats_from(PcsTensor *t, int nb, const int64_t *bshape, mats *out)
{
    int tb = t->ndim - 2;
    int64_t rows = t->sizes[tb], cols = t->sizes[tb + 1];
    int64_t bstr[PCS_MAX_DIMS];
    for (int i = 0; i < nb; i++) {
        int j = i - (nb - tb);
        bstr[i] = (j < 0 || t->sizes[j] == 1) ? 0 : t->strides[j];
    }
    /* collapse the batch dims (size-1 dims drop out) */
    int64_t batch = 1, sb = 0, inner_size = 1, inner_stride = 0;
    bool ok = true, first = true;
    for (int i = nb - 1; i >= 0; i--) {
        if (bshape[i] == 1)
            continue;
        if (first) {
            sb = bstr[i];
            first = false;
        } else if (bstr[i] != inner_stride * inner_size) {
            ok = false;
        }
        inner_size = bshape[i];
        inner_stride = bstr[i];
        batch *= bshape[i];
    }
    out->own = (PcsTensor *)Py_NewRef(t);
    out->batch = batch;
    out->rows = rows;
    out->cols = cols;
    out->sb = sb;
    out->sr = t->strides[tb];
    out->sc = t->strides[tb + 1];
    out->ptr = pcs_tensor_data(t);
    cublasOperation_t op;
    int64_t ld;
    if (ok && mat_layout(out, &op, &ld))
        return 0;
    /* materialise (batch, rows, cols) contiguous */
    int64_t sz[PCS_MAX_DIMS + 2], st[PCS_MAX_DIMS + 2];
    for (int i = 0; i < nb; i++) {
        sz[i] = bshape[i];
        st[i] = bstr[i];
    }
    sz[nb] = rows;
    sz[nb + 1] = cols;
    st[nb] = out->sr;
    st[nb + 1] = out->sc;
    PcsTensor *view = pcs_tensor_alias(t, t->offset, nb + 2, sz, st);
    Py_CLEAR(out->own);
    if (!view)
        return -1;
    PcsTensor *c = pcs_tensor_contiguous(view, true);
    Py_DECREF(view);
    if (!c)
        return -1;
    out->own = c;
    out->ptr = pcs_tensor_data(c);
    out->sb = rows * cols;
    out->sr = cols;
    out->sc = 1;
    return 0;
}

typedef struct {
    cudaDataType_t type;
    cublasComputeType_t compute;
    bool wide; /* alpha/beta as double */
} gemm_types;

static gemm_types types_of(int dtype)
{
    gemm_types g = {CUDA_R_32F, CUBLAS_COMPUTE_32F, false};
    switch (dtype) {
    case PCS_FLOAT16: g.type = CUDA_R_16F; break;
    case PCS_BFLOAT16: g.type = CUDA_R_16BF; break;
    case PCS_FLOAT32:
        g.compute = allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
        break;
    case PCS_FLOAT64: g = (gemm_types){CUDA_R_64F, CUBLAS_COMPUTE_64F, true}; break;
    case PCS_COMPLEX64:
        g.type = CUDA_C_32F;
        g.compute = allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
        break;
    default: g = (gemm_types){CUDA_C_64F, CUBLAS_COMPUTE_64F, true}; break;
    }
    return g;
}

/* alpha or beta in the compute type's scalar form */
typedef union {
    float f[2];
    double d[2];
} blas_scalar;

static blas_scalar make_scalar(pcs_scalar s, bool wide)
{
    blas_scalar b;
    /* the scalar's true value: an int in [2^63, 2^64) is flagged u64 and
     * holds only its bit pattern in s.i, which read as int64 is negative */
    double re = pcs_scalar_as_double(s);
    double im = s.kind == PCS_SK_COMPLEX ? s.im : 0.0;
    if (wide) {
        b.d[0] = re;
        b.d[1] = im;
    } else {
        b.f[0] = (float)re;
        b.f[1] = (float)im;
    }
    return b;
}

/* C (contiguous, batch x m x n) = alpha * A @ B + beta * C on the device's
 * current stream. */
static int gemm(mats *A, mats *B, PcsTensor *C, int64_t batch, int64_t m, int64_t n, int64_t k,
                pcs_scalar alpha, pcs_scalar beta)
{
    if (m == 0 || n == 0 || batch == 0)
        return 0;
    cublasOperation_t opa, opb;
    int64_t lda, ldb;
    if (!mat_layout(A, &opa, &lda) || !mat_layout(B, &opb, &ldb)) {
        PyErr_SetString(PyExc_RuntimeError, "internal error: matmul operand layout");
        return -1;
    }
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX || batch > INT_MAX) {
        PyErr_SetString(PyExc_RuntimeError, "matmul: dimensions beyond 2^31-1 are not supported");
        return -1;
    }
    int device = C->device, r = -1;
    PcsDeviceGuard guard;
    if (pcs_device_guard_enter(&guard, device) < 0)
        return -1;
    cudaStream_t stream = pcs_current_stream(device);
    cublasHandle_t h = get_handle(device, stream);
    if (!h)
        goto done;
    gemm_types g = types_of(C->dtype);
    blas_scalar al = make_scalar(alpha, g.wide), be = make_scalar(beta, g.wide);
    bool rr = C->dtype == PCS_FLOAT16 ? allow_fp16_rr : C->dtype == PCS_BFLOAT16 ? allow_bf16_rr : true;
    PCS_CUBLAS_CHECK_GOTO(cublasSetMathMode(h, rr ? CUBLAS_DEFAULT_MATH
                                                  : CUBLAS_DEFAULT_MATH |
                                                        CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION),
                          done);
    int ldc = (int)(n > 1 ? n : 1);
    if (k == 0) { /* nothing is read; the leading dimensions must only be legal */
        lda = m > 1 ? m : 1;
        ldb = ldc;
    }
    if (batch == 1) {
        PCS_CUBLAS_CHECK_GOTO(cublasGemmEx(h, opb, opa, (int)n, (int)m, (int)k, &al, B->ptr, g.type,
                                           (int)ldb, A->ptr, g.type, (int)lda, &be,
                                           pcs_tensor_data(C), g.type, ldc, g.compute,
                                           CUBLAS_GEMM_DEFAULT),
                              done);
    } else {
        PCS_CUBLAS_CHECK_GOTO(
            cublasGemmStridedBatchedEx(h, opb, opa, (int)n, (int)m, (int)k, &al, B->ptr, g.type,
                                       (int)ldb, B->sb, A->ptr, g.type, (int)lda, A->sb, &be,
                                       pcs_tensor_data(C), g.type, ldc, m * n, (int)batch, g.compute,
                                       CUBLAS_GEMM_DEFAULT),
            done);
    }
    r = PCS_CHECK_LAUNCH(stream, "cublasGemmEx");
done:
    pcs_device_guard_exit(&guard);
    return r;
}

int pcs_blas_broadcast_batch(const PcsTensor *a, int na, const PcsTensor *b, int nb, int64_t *out)
{
    int n = na > nb ? na : nb;
    for (int i = 0; i < n; i++) {
        int ia = i - (n - na), ib = i - (n - nb);
        int64_t sa = ia >= 0 ? a->sizes[ia] : 1, sb = ib >= 0 ? b->sizes[ib] : 1;
        if (sa != sb && sa != 1 && sb != 1) {
            PyErr_Format(PyExc_RuntimeError,
                         "The size of tensor a (%lld) must match the size of tensor b (%lld) at "
                         "non-singleton dimension %d",
                         (long long)sa, (long long)sb, i);
            return -1;
        }
        out[i] = sa == 1 ? sb : sa;
    }
    return n;
}

/* The general product on CUDA: a (..., m, k) @ b (..., k, n) with batch
 * broadcasting (both at least 2-D here), plus beta * input when input is
 * given (broadcast to the result). Result: contiguous (batch..., m, n). */
PcsTensor *pcs_blas_cuda_product(PcsTensor *a, PcsTensor *b, PcsTensor *input, pcs_scalar alpha,
                                  pcs_scalar beta)
{
    int64_t m = a->sizes[a->ndim - 2], k = a->sizes[a->ndim - 1], n = b->sizes[b->ndim - 1];
    int64_t bshape[PCS_MAX_DIMS], osz[PCS_MAX_DIMS];
    int nb = pcs_blas_broadcast_batch(a, a->ndim - 2, b, b->ndim - 2, bshape);
    if (nb < 0)
        return NULL;
    for (int i = 0; i < nb; i++)
        osz[i] = bshape[i];
    osz[nb] = m;
    osz[nb + 1] = n;
    PcsTensor *C = pcs_tensor_empty(nb + 2, osz, a->dtype, a->device, false);
    if (!C)
        return NULL;
    if (input && !pcs_blas_scalar_is_zero(beta)) {
        if (pcs_copy(C, input, false) < 0) /* broadcasts input, as addmm does */
            goto fail;
    } else {
        beta = pcs_blas_zero();
    }
    mats A = {0}, B = {0};
    int64_t batch = 1;
    for (int i = 0; i < nb; i++)
        batch *= bshape[i];
    /* Fold the batch of A into its rows when B has none and A's batch and
     * row dims collapse: one large GEMM instead of many small ones. */
    bool fold = b->ndim == 2 && a->ndim > 2;
    for (int i = 0; fold && i < a->ndim - 2; i++)
        fold = a->sizes[i] == 1 || a->strides[i] == a->strides[i + 1] * a->sizes[i + 1];
    int r;
    if (fold) {
        int64_t sz[2] = {batch * m, k}, st[2] = {a->strides[a->ndim - 2], a->strides[a->ndim - 1]};
        PcsTensor *a2 = pcs_tensor_alias(a, a->offset, 2, sz, st);
        if (!a2)
            goto fail;
        int64_t none[1] = {1};
        r = mats_from(a2, 0, none, &A);
        Py_DECREF(a2);
        if (r == 0)
            r = mats_from(b, 0, none, &B);
        if (r == 0)
            r = gemm(&A, &B, C, 1, batch * m, n, k, alpha, beta);
    } else {
        r = mats_from(a, nb, bshape, &A);
        if (r == 0)
            r = mats_from(b, nb, bshape, &B);
        if (r == 0)
            r = gemm(&A, &B, C, batch, m, n, k, alpha, beta);
    }
    Py_XDECREF(A.own);
    Py_XDECREF(B.own);
    if (r < 0)
        goto fail;
    return C;
fail:
    Py_DECREF(C);
    return NULL;
}

/* dot of two 1-D tensors on CUDA: cublasDotEx writing to device memory, so
 * nothing waits for the result. */
PcsTensor *pcs_blas_cuda_dot(PcsTensor *a, PcsTensor *b)
{
    int64_t n = a->sizes[0];
    PcsTensor *out = pcs_tensor_empty(0, NULL, a->dtype, a->device, false);
    if (!out)
        return NULL;
    if (n == 0) {
        unsigned char zero[16] = {0};
        if (pcs_fill_bytes(out, zero) < 0)
            Py_CLEAR(out);
        return out;
    }
    if (n > INT_MAX || a->strides[0] > INT_MAX || b->strides[0] > INT_MAX) {
        Py_DECREF(out);
        PyErr_SetString(PyExc_RuntimeError, "dot: sizes beyond 2^31-1 are not supported");
        return NULL;
    }
    gemm_types g = types_of(a->dtype);
    cudaDataType_t exec = g.wide ? (pcs_is_complex(a->dtype) ? CUDA_C_64F : CUDA_R_64F)
                                 : (pcs_is_complex(a->dtype) ? CUDA_C_32F : CUDA_R_32F);
    int r = -1;
    PcsDeviceGuard guard;
    if (pcs_device_guard_enter(&guard, a->device) < 0) {
        Py_DECREF(out);
        return NULL;
    }
    cudaStream_t stream = pcs_current_stream(a->device);
    cublasHandle_t h = get_handle(a->device, stream);
    if (!h)
        goto done;
    PCS_CUBLAS_CHECK_GOTO(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE), done);
    cublasStatus_t st = cublasDotEx(h, (int)n, pcs_tensor_data(a), g.type, (int)a->strides[0],
                                    pcs_tensor_data(b), g.type, (int)b->strides[0], pcs_tensor_data(out),
                                    g.type, exec);
    cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST);
    if (st != CUBLAS_STATUS_SUCCESS) {
        cublas_error(st, "cublasDotEx", __FILE__, __LINE__);
        goto done;
    }
    r = PCS_CHECK_LAUNCH(stream, "cublasDotEx");
done:
    pcs_device_guard_exit(&guard);
    if (r < 0)
        Py_CLEAR(out);
    return out;
}

/* A view of t with its sizes replaced (t contiguous). */
/* ------------------------------------------------------------------------ */
/* Flags                                                                     */

static bool *flag_of(PyObject *name)
{
    const char *s = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
    if (!s)
        return NULL;
    if (!strcmp(s, "allow_tf32"))
        return &allow_tf32;
    if (!strcmp(s, "allow_fp16_reduced_precision_reduction"))
        return &allow_fp16_rr;
    if (!strcmp(s, "allow_bf16_reduced_precision_reduction"))
        return &allow_bf16_rr;
    if (!strcmp(s, "cudnn_allow_tf32"))
        return &cudnn_allow_tf32;
    return NULL;
}

static PyObject *f_get_flag(PyObject *m, PyObject *name)
{
    PCS_UNUSED(m);
    bool *f = flag_of(name);
    if (!f)
        return PyErr_Format(PyExc_AttributeError, "unknown matmul flag %R", name);
    return PyBool_FromLong(*f);
}

static PyObject *f_set_flag(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    PCS_UNUSED(m);
    if (nargs != 2)
        return PyErr_Format(PyExc_TypeError, "_set_matmul_flag(name, value)");
    bool *f = flag_of(args[0]);
    if (!f)
        return PyErr_Format(PyExc_AttributeError, "unknown matmul flag %R", args[0]);
    int v = PyObject_IsTrue(args[1]);
    if (v < 0)
        return NULL;
    *f = v;
    if (f == &allow_tf32 && !v)
        precision_medium = false;
    Py_RETURN_NONE;
}

static PyObject *f_set_precision(PyObject *m, PyObject *arg)
{
    PCS_UNUSED(m);
    const char *s = PyUnicode_Check(arg) ? PyUnicode_AsUTF8(arg) : NULL;
    if (s && !strcmp(s, "highest")) {
        allow_tf32 = false;
        precision_medium = false;
    } else if (s && (!strcmp(s, "high") || !strcmp(s, "medium"))) {
        allow_tf32 = true;
        precision_medium = s[0] == 'm';
    } else {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_RuntimeError,
                         "Invalid precision %R: expected 'highest', 'high' or 'medium'", arg);
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *f_get_precision(PyObject *m, PyObject *noargs)
{
    PCS_UNUSED(m);
    PCS_UNUSED(noargs);
    return PyUnicode_FromString(!allow_tf32 ? "highest" : precision_medium ? "medium" : "high");
}

static PyMethodDef flag_methods[] = {
    {"_get_matmul_flag", f_get_flag, METH_O, "Reads a matmul policy flag."},
    {"_set_matmul_flag", (PyCFunction)(void (*)(void))f_set_flag, METH_FASTCALL, "Sets a matmul policy flag."},
    {"set_float32_matmul_precision", f_set_precision, METH_O,
     "'highest' (no TF32), 'high' or 'medium' (TF32 allowed)."},
    {"get_float32_matmul_precision", f_get_precision, METH_NOARGS,
     "'highest' when allow_tf32 is False, else 'high' (or 'medium' if set)."},
    {NULL, NULL, 0, NULL},
};

int pcs_blas_init(PyObject *module)
{
    if (PyModule_AddFunctions(module, flag_methods) < 0)
        return -1;
    return PyModule_AddFunctions(module, pcs_blas_functions); /* blas_ops.c */
}
