/* blas.c: matrix products. matmul (and @) with torch's rules, mm, bmm, mv,
 * dot, addmm, baddbmm; the TF32 and reduced-precision policy flags; one
 * cuBLAS handle per (device, stream).
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
 * PyTorch does; it shows in memory_allocated() after the first product.
 *
 * CPU tensors go to NumPy's matmul (float16/bfloat16 computed in float32),
 * after the same shape and dtype checks, so errors read the same. */
#include "blas.h"

#include <cublas_v2.h>
#include <limits.h>
#include <string.h>

#include "copy.h"
#include "scalar.h"
#include "stream.h"

#define FASTKW(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL | METH_KEYWORDS

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
    double re = s.kind == PCS_SK_FLOAT || s.kind == PCS_SK_COMPLEX ? s.re : (double)s.i;
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

/* beta * input + alpha * (a @ b), all in NumPy. */
static PyObject *cpu_product(PcsTensor *a, PcsTensor *b, PcsTensor *input, pcs_scalar alpha,
                             pcs_scalar beta, bool is_dot)
{
    PyObject *np = numpy_mod(), *x = NULL, *y = NULL, *r = NULL;
    if (!np || !(x = np_operand(a)) || !(y = np_operand(b)))
        goto done;
    r = PyObject_CallMethod(np, is_dot ? "dot" : "matmul", "OO", x, y);
    if (r && input) {
        PyObject *al = pcs_scalar_to_py(alpha.kind == PCS_SK_COMPLEX ? PCS_COMPLEX128 : PCS_FLOAT64, alpha);
        PyObject *be = pcs_scalar_to_py(beta.kind == PCS_SK_COMPLEX ? PCS_COMPLEX128 : PCS_FLOAT64, beta);
        PyObject *in = np_operand(input), *t1 = NULL, *t2 = NULL, *sum = NULL;
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
    return r ? from_np(PyObject_CallMethod(np, "asarray", "O", r), a->dtype) : NULL;
}

/* ------------------------------------------------------------------------ */
/* The products                                                              */

static pcs_scalar one_scalar(void) { return (pcs_scalar){.kind = PCS_SK_INT, .i = 1}; }
static pcs_scalar zero_scalar(void) { return (pcs_scalar){.kind = PCS_SK_INT, .i = 0}; }

static bool scalar_is_zero(pcs_scalar s)
{
    switch (s.kind) {
    case PCS_SK_FLOAT: return s.re == 0.0;
    case PCS_SK_COMPLEX: return s.re == 0.0 && s.im == 0.0;
    default: return s.i == 0;
    }
}

/* Broadcast batch shapes (right-aligned), torch's message on mismatch. */
static int broadcast_batch(const PcsTensor *a, int na, const PcsTensor *b, int nb, int64_t *out)
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
static PcsTensor *cuda_product(PcsTensor *a, PcsTensor *b, PcsTensor *input, pcs_scalar alpha,
                               pcs_scalar beta)
{
    int64_t m = a->sizes[a->ndim - 2], k = a->sizes[a->ndim - 1], n = b->sizes[b->ndim - 1];
    int64_t bshape[PCS_MAX_DIMS], osz[PCS_MAX_DIMS];
    int nb = broadcast_batch(a, a->ndim - 2, b, b->ndim - 2, bshape);
    if (nb < 0)
        return NULL;
    for (int i = 0; i < nb; i++)
        osz[i] = bshape[i];
    osz[nb] = m;
    osz[nb + 1] = n;
    PcsTensor *C = pcs_tensor_empty(nb + 2, osz, a->dtype, a->device, false);
    if (!C)
        return NULL;
    if (input && !scalar_is_zero(beta)) {
        if (pcs_copy(C, input, false) < 0) /* broadcasts input, as addmm does */
            goto fail;
    } else {
        beta = zero_scalar();
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
static PcsTensor *cuda_dot(PcsTensor *a, PcsTensor *b)
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
        return cpu_product(a, b, NULL, one_scalar(), zero_scalar(), true);
    return (PyObject *)cuda_dot(a, b);
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
    if (broadcast_batch(a, a->ndim > 2 ? a->ndim - 2 : 0, b, b->ndim > 2 ? b->ndim - 2 : 0, bshape) < 0)
        return NULL;
    if (dev < 0)
        return cpu_product(a, b, NULL, one_scalar(), zero_scalar(), false);
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
    PcsTensor *C = (a2 && b2) ? cuda_product(a2, b2, NULL, one_scalar(), zero_scalar()) : NULL;
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
    *out = one_scalar();
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
    return (PyObject *)cuda_product(m1, m2, input, alpha, beta);
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
    static PyObject *t_##fname(PyObject *self, PyObject *const *args, Py_ssize_t nargs,    \
                               PyObject *kw)                                               \
    {                                                                                      \
        PyObject *all[8];                                                                  \
        Py_ssize_t nkw = kw ? PyTuple_GET_SIZE(kw) : 0;                                    \
        if (nargs + nkw > 7)                                                               \
            return PyErr_Format(PyExc_TypeError, #fname "(): too many arguments");         \
        all[0] = self;                                                                     \
        memcpy(all + 1, args, (nargs + nkw) * sizeof(PyObject *));                         \
        return f_##fname(NULL, all, nargs + 1, kw);                                        \
    }

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
        static const char *const names[] = {"input", batched ? "batch1" : "mat1",          \
                                            batched ? "batch2" : "mat2", "beta", "alpha",  \
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
    static PyObject *t_##fname(PyObject *self, PyObject *const *args, Py_ssize_t nargs,    \
                               PyObject *kw)                                               \
    {                                                                                      \
        PyObject *all[8];                                                                  \
        Py_ssize_t nkw = kw ? PyTuple_GET_SIZE(kw) : 0;                                    \
        if (nargs + nkw > 7)                                                               \
            return PyErr_Format(PyExc_TypeError, #fname "(): too many arguments");         \
        all[0] = self;                                                                     \
        memcpy(all + 1, args, (nargs + nkw) * sizeof(PyObject *));                         \
        return f_##fname(NULL, all, nargs + 1, kw);                                        \
    }

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

static PyMethodDef blas_methods[] = {
    {"matmul", FASTKW(f_matmul), "matmul(input, other): matrix product with broadcasting."},
    {"mm", FASTKW(f_mm), "mm(input, mat2)"},
    {"bmm", FASTKW(f_bmm), "bmm(input, mat2)"},
    {"mv", FASTKW(f_mv), "mv(input, vec)"},
    {"dot", FASTKW(f_dot), "dot(input, tensor)"},
    {"addmm", FASTKW(f_addmm), "addmm(input, mat1, mat2, *, beta=1, alpha=1)"},
    {"baddbmm", FASTKW(f_baddbmm), "baddbmm(input, batch1, batch2, *, beta=1, alpha=1)"},
    {"_get_matmul_flag", f_get_flag, METH_O, "Reads a matmul policy flag."},
    {"_set_matmul_flag", (PyCFunction)(void (*)(void))f_set_flag, METH_FASTCALL, "Sets a matmul policy flag."},
    {"set_float32_matmul_precision", f_set_precision, METH_O,
     "'highest' (no TF32), 'high' or 'medium' (TF32 allowed)."},
    {"get_float32_matmul_precision", f_get_precision, METH_NOARGS,
     "'highest' when allow_tf32 is False, else 'high' (or 'medium' if set)."},
    {NULL, NULL, 0, NULL},
};

int pcs_blas_init(PyObject *module) { return PyModule_AddFunctions(module, blas_methods); }
