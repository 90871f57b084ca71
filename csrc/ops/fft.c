/* fft.c: FFTs on CUDA through cuFFT, and the per-device LRU plan cache that
 * torch.backends.cuda.cufft_plan_cache controls.
 *
 * One primitive, _fft_cuda(x, kind, dims, sizes, norm, forward, conj_in,
 * conj_out), does every transform of pycuda_sem.fft: c2c, r2c (rfft,
 * ihfft) and c2r (irfft, hfft) over up to three dims. It promotes the dtype
 * as torch does, zero-pads or trims the signal dims, moves them last and
 * makes the data contiguous (one copy, only when needed), runs one cuFFT plan
 * over the batch, then scales (and conjugates, for the Hermitian transforms)
 * in one extra pass only when the norm asks for it. The result is returned
 * in the input's dim order (a permuted view when dims were moved).
 *
 * Plans are keyed by (type, rank, signal sizes, batch) and live in an LRU
 * list per device; max_size bounds it (4096 by default, as PyTorch on CUDA
 * 10+), shrinking evicts from the cold end, 0 disables caching. Plans are
 * made with auto-allocation off: each execution takes its work area from the
 * caching allocator on the current stream and gives it back right after,
 * which is safe because a block freed on a stream is reused only by work
 * queued later on that stream. cufftSetStream binds the plan to the current
 * stream at every execution. */
#include "ops/fft.h"
#include "runtime/device.h"

#include <cufft.h>
#include <math.h>
#include <string.h>

#include "ops/factories.h"
#include "tensor/copy.h"
#include "runtime/stream.h"

/* ------------------------------------------------------------------------ */
/* cuFFT status checks                                                       */

static const char *cufft_name(cufftResult r)
{
    switch (r) {
    case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_TYPE: return "CUFFT_INVALID_TYPE";
    case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
    case CUFFT_NOT_SUPPORTED: return "CUFFT_NOT_SUPPORTED";
    default: return "cuFFT error";
    }
}

static int cufft_error(cufftResult r, const char *call, const char *file, int line)
{
    PyErr_Format(r == CUFFT_ALLOC_FAILED ? pcs_OutOfMemoryError : PyExc_RuntimeError,
                 "cuFFT error: %s (%d) in %s at %s:%d", cufft_name(r), (int)r, call, file, line);
    return -1;
}

#define PCS_CUFFT_CHECK_GOTO(call, label)                                      \
    do {                                                                       \
        cufftResult pcs_r_ = (call);                                           \
        if (pcs_r_ != CUFFT_SUCCESS) {                                         \
            cufft_error(pcs_r_, #call, __FILE__, __LINE__);                    \
            goto label;                                                        \
        }                                                                      \
    } while (0)

/* ------------------------------------------------------------------------ */
/* Plan cache                                                                */

typedef struct {
    int type; /* cufftType */
    int rank;
    long long n[3];
    long long batch;
} plan_key;

typedef struct plan_entry {
    plan_key key;
    cufftHandle plan;
    size_t work_size;
    /* What the plan was last bound to: cufftSetStream costs a measurable
     * part of a small transform's host time, and only this file binds it. */
    cudaStream_t stream;
    bool stream_set;
    struct plan_entry *prev, *next; /* prev: hotter */
} plan_entry;

typedef struct {
    plan_entry *head, *tail;
    int64_t size, max_size;
    bool ready;
} plan_cache;

#define PCS_CUFFT_DEFAULT_MAX 4096

static plan_cache caches[PCS_MAX_DEVICES];

static plan_cache *cache_of(int device)
{
    plan_cache *c = &caches[device];
    if (!c->ready) {
        c->max_size = PCS_CUFFT_DEFAULT_MAX;
        c->ready = true;
    }
    return c;
}

static void unlink_entry(plan_cache *c, plan_entry *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        c->head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        c->tail = e->prev;
    e->prev = e->next = NULL;
    c->size--;
}

static void push_front(plan_cache *c, plan_entry *e)
{
    e->prev = NULL;
    e->next = c->head;
    if (c->head)
        c->head->prev = e;
    c->head = e;
    if (!c->tail)
        c->tail = e;
    c->size++;
}

/* Destroys a plan on its device. cufftDestroy frees device memory, which
 * waits for work still using it, so eviction is always safe. */
static void destroy_entry(int device, plan_entry *e)
{
    /* also runs on error paths: an exception already set must survive */
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    PcsDeviceGuard g;
    if (pcs_device_guard_enter(&g, device) == 0) {
        cufftDestroy(e->plan);
        pcs_device_guard_exit(&g);
    } else {
        PyErr_Clear();
    }
    PyErr_Restore(et, ev, tb);
    PyMem_RawFree(e);
}

static void shrink_to(int device, int64_t limit)
{
    plan_cache *c = cache_of(device);
    while (c->size > limit && c->tail) {
        plan_entry *e = c->tail;
        unlink_entry(c, e);
        destroy_entry(device, e);
    }
}

/* The plan for key on the current device, checked out of the cache (made on
 * a miss): the caller owns it until release_plan. A plan binds one stream and
 * one work area, and making the work area can release the GIL (cudaMalloc),
 * so a plan in use must be out of another thread's reach: a second thread
 * asking for the same key meanwhile makes a plan of its own, and eviction
 * (shrink_to) never sees an entry in use. */
static plan_entry *get_plan(int device, const plan_key *key)
{
    plan_cache *c = cache_of(device);
    for (plan_entry *e = c->head; e; e = e->next) {
        if (!memcmp(&e->key, key, sizeof *key)) {
            unlink_entry(c, e);
            return e;
        }
    }
    plan_entry *e = PyMem_RawCalloc(1, sizeof *e);
    if (!e)
        return PyErr_NoMemory(), NULL;
    e->key = *key;
    long long n[3] = {key->n[0], key->n[1], key->n[2]};
    PCS_CUFFT_CHECK_GOTO(cufftCreate(&e->plan), fail_alloc);
    PCS_CUFFT_CHECK_GOTO(cufftSetAutoAllocation(e->plan, 0), fail);
    PCS_CUFFT_CHECK_GOTO(cufftMakePlanMany64(e->plan, key->rank, n, NULL, 1, 0, NULL, 1, 0,
                                             (cufftType)key->type, key->batch, &e->work_size),
                         fail);
    return e;
fail:
    cufftDestroy(e->plan);
fail_alloc:
    PyMem_RawFree(e);
    return NULL;
}

/* Gives a checked-out plan back: the hottest entry of the cache, unless
 * caching is off (max_size 0) or another thread has cached the same key
 * meanwhile; then it is destroyed. */
static void release_plan(int device, plan_entry *e)
{
    plan_cache *c = cache_of(device);
    bool dup = false;
    for (plan_entry *o = c->head; o && !dup; o = o->next)
        dup = !memcmp(&o->key, &e->key, sizeof e->key);
    if (c->max_size == 0 || dup) {
        destroy_entry(device, e);
        return;
    }
    push_front(c, e);
    shrink_to(device, c->max_size);
}

/* ------------------------------------------------------------------------ */
/* Transform                                                                 */

enum { KIND_C2C = 0, KIND_R2C = 1, KIND_C2R = 2 };
enum { NORM_NONE = 0, NORM_BY_N = 1, NORM_BY_SQRT_N = 2 };

/* The dtype a transform computes in (torch's promotion): integers and
 * 16-bit floats go to float32/complex64. */
static int compute_dtype(int dtype, int kind)
{
    bool dbl = dtype == PCS_FLOAT64 || dtype == PCS_COMPLEX128;
    if (kind == KIND_R2C)
        return dbl ? PCS_FLOAT64 : PCS_FLOAT32;
    return dbl ? PCS_COMPLEX128 : PCS_COMPLEX64;
}

/* x trimmed or zero-padded to `sizes` (a view when only trimming). */
static PcsTensor *resize(PcsTensor *x, const int64_t *sizes)
{
    bool pad = false, trim = false;
    int64_t common[PCS_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++) {
        pad |= sizes[i] > x->sizes[i];
        trim |= sizes[i] < x->sizes[i];
        common[i] = sizes[i] < x->sizes[i] ? sizes[i] : x->sizes[i];
    }
    if (!pad && !trim)
        return (PcsTensor *)Py_NewRef(x);
    PcsTensor *src = pcs_tensor_alias(x, x->offset, x->ndim, common, x->strides);
    if (!src || !pad)
        return src;
    PcsTensor *z = pcs_tensor_zeros(x->ndim, sizes, x->dtype, x->device, false);
    PcsTensor *dst = z ? pcs_tensor_alias(z, z->offset, z->ndim, common, z->strides) : NULL;
    int r = dst ? pcs_copy(dst, src, false) : -1;
    Py_XDECREF(dst);
    Py_DECREF(src);
    if (r < 0)
        Py_CLEAR(z);
    return z;
}

static int exec_plan(cufftHandle plan, int type, void *in, void *out, int forward)
{
    int dir = forward ? CUFFT_FORWARD : CUFFT_INVERSE;
    switch (type) {
    case CUFFT_C2C: PCS_CUFFT_CHECK_GOTO(cufftExecC2C(plan, in, out, dir), fail); break;
    case CUFFT_Z2Z: PCS_CUFFT_CHECK_GOTO(cufftExecZ2Z(plan, in, out, dir), fail); break;
    case CUFFT_R2C: PCS_CUFFT_CHECK_GOTO(cufftExecR2C(plan, in, out), fail); break;
    case CUFFT_D2Z: PCS_CUFFT_CHECK_GOTO(cufftExecD2Z(plan, in, out), fail); break;
    case CUFFT_C2R: PCS_CUFFT_CHECK_GOTO(cufftExecC2R(plan, in, out), fail); break;
    default: PCS_CUFFT_CHECK_GOTO(cufftExecZ2D(plan, in, out), fail); break;
    }
    return 0;
fail:
    return -1;
}

static void scale_data(PcsTensor *t, double s_even, double s_odd, cudaStream_t stream)
{
    int64_t n = pcs_tensor_numel(t) * (pcs_is_complex(t->dtype) ? 2 : 1);
    int dbl = t->dtype == PCS_FLOAT64 || t->dtype == PCS_COMPLEX128;
    pcs_launch_fft_scale(pcs_tensor_data(t), dbl, n, s_even, s_odd, stream);
}

/* The transform on contiguous data laid out (batch dims..., signal dims)
 * with the signal dims last: x is the (promoted, resized, permuted,
 * contiguous) input; out_sizes the full output shape in the same order. */
static PcsTensor *run_transform(PcsTensor *x, int kind, int rank, const int64_t *signal,
                                const int64_t *out_sizes, int norm, bool forward, bool conj_in,
                                bool conj_out)
{
    int dev = x->device;
    bool dbl = x->dtype == PCS_FLOAT64 || x->dtype == PCS_COMPLEX128;
    int out_dtype = kind == KIND_C2R ? (dbl ? PCS_FLOAT64 : PCS_FLOAT32)
                                     : (dbl ? PCS_COMPLEX128 : PCS_COMPLEX64);
    PcsTensor *out = pcs_tensor_empty(x->ndim, out_sizes, out_dtype, dev, false);
    if (!out)
        return NULL;
    int64_t N = 1, batch = 1;
    for (int i = 0; i < rank; i++)
        N *= signal[i];
    for (int i = 0; i < x->ndim - rank; i++)
        batch *= x->sizes[i];
    if (pcs_tensor_numel(out) == 0)
        return out;
    plan_key key;
    memset(&key, 0, sizeof key);
    key.type = kind == KIND_C2C ? (dbl ? CUFFT_Z2Z : CUFFT_C2C)
               : kind == KIND_R2C ? (dbl ? CUFFT_D2Z : CUFFT_R2C)
                                  : (dbl ? CUFFT_Z2D : CUFFT_C2R);
    key.rank = rank;
    for (int i = 0; i < rank; i++)
        key.n[i] = signal[i];
    key.batch = batch;

    int r = -1;
    PcsDeviceGuard guard;
    if (pcs_device_guard_enter(&guard, dev) < 0) {
        Py_DECREF(out);
        return NULL;
    }
    cudaStream_t stream = pcs_current_stream(dev);
    pcs_block *work = NULL;
    plan_entry *e = get_plan(dev, &key);
    if (!e)
        goto done;
    if (conj_in) {
        scale_data(x, 1.0, -1.0, stream); /* x is our own copy here */
        if (PCS_CHECK_LAUNCH(stream, "pcs_launch_fft_scale") < 0)
            goto done;
    }
    if (!e->stream_set || e->stream != stream) {
        PCS_CUFFT_CHECK_GOTO(cufftSetStream(e->plan, stream), done);
        e->stream = stream;
        e->stream_set = true;
    }
    if (e->work_size) {
        pcs_status st = pcs_alloc(dev, e->work_size, stream, &work);
        if (st != PCS_OK) {
            pcs_alloc_raise(st);
            goto done;
        }
        PCS_CUFFT_CHECK_GOTO(cufftSetWorkArea(e->plan, pcs_block_ptr(work)), done);
    }
    if (exec_plan(e->plan, key.type, pcs_tensor_data(x), pcs_tensor_data(out), forward) < 0)
        goto done;
    if (PCS_CHECK_LAUNCH(stream, "cufftExec") < 0)
        goto done;
    double s = norm == NORM_BY_N ? 1.0 / (double)N : norm == NORM_BY_SQRT_N ? 1.0 / sqrt((double)N) : 1.0;
    if (s != 1.0 || conj_out) {
        scale_data(out, s, conj_out ? -s : s, stream);
        if (PCS_CHECK_LAUNCH(stream, "pcs_launch_fft_scale") < 0)
            goto done;
    }
    r = 0;
done:
    if (work)
        pcs_free(work); /* stream-ordered: reused only by later work on this stream */
    if (e)
        release_plan(dev, e);
    pcs_device_guard_exit(&guard);
    if (r < 0)
        Py_CLEAR(out);
    return out;
}

/* _fft_cuda(x, kind, dims, sizes, norm, forward, conj_in, conj_out):
 * dims are distinct non-negative dims (at most 3), sizes the signal length
 * along each (for c2r, the output length of the last one). */
static PyObject *f_fft_cuda(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    PCS_UNUSED(m);
    if (nargs != 8 || !PcsTensor_Check(args[0]))
        return PyErr_Format(PyExc_TypeError,
                            "_fft_cuda(x, kind, dims, sizes, norm, forward, conj_in, conj_out)");
    PcsTensor *x0 = (PcsTensor *)args[0];
    /* A private function, but a Python user can call it: every argument is
     * checked as a public one would be, one at a time, so that no check runs
     * with an earlier one's exception pending. */
    long kind = PyLong_AsLong(args[1]);
    if (kind == -1 && PyErr_Occurred())
        return NULL;
    long norm = PyLong_AsLong(args[4]);
    if (norm == -1 && PyErr_Occurred())
        return NULL;
    if (kind < KIND_C2C || kind > KIND_C2R)
        return PyErr_Format(PyExc_ValueError, "_fft_cuda: kind must be 0 (c2c), 1 (r2c) or 2 (c2r), not %ld", kind);
    if (norm < NORM_NONE || norm > NORM_BY_SQRT_N)
        return PyErr_Format(PyExc_ValueError, "_fft_cuda: norm must be 0, 1 or 2, not %ld", norm);
    int forward = PyObject_IsTrue(args[5]);
    int conj_in = forward < 0 ? -1 : PyObject_IsTrue(args[6]);
    int conj_out = conj_in < 0 ? -1 : PyObject_IsTrue(args[7]);
    if (conj_out < 0)
        return NULL;
    if (x0->device < 0 || x0->ndim == 0)
        return PyErr_Format(PyExc_RuntimeError, "_fft_cuda: expected a CUDA tensor of 1 or more dims");
    /* dims None: the last dim; sizes None: the input's (the host-loop case
     * of fft(x) costs no tuples) */
    int64_t dims[PCS_MAX_DIMS], sig[PCS_MAX_DIMS];
    int nd = 1, ns;
    dims[0] = x0->ndim - 1;
    if (args[2] != Py_None && (nd = pcs_parse_ints(&args[2], 1, dims)) < 0)
        return NULL;
    if (args[3] == Py_None) {
        ns = nd;
        for (int i = 0; i < nd; i++) {
            int64_t m = (dims[i] >= 0 && dims[i] < x0->ndim) ? x0->sizes[dims[i]] : 1;
            sig[i] = (kind == KIND_C2R && i == nd - 1) ? (m > INT64_MAX / 2 ? -1 : 2 * (m - 1)) : m;
        }
    } else if ((ns = pcs_parse_ints(&args[3], 1, sig)) < 0) {
        return NULL;
    }
    if (nd != ns || nd < 1)
        return PyErr_Format(PyExc_RuntimeError, "_fft_cuda: need one size per dim");
    if (nd > 3)
        return PyErr_Format(PyExc_NotImplementedError,
                            "pycuda_sem.fft on CUDA transforms at most 3 dims at once (got %d); "
                            "apply the transform in steps of up to 3 dims",
                            nd);
    bool is_fft_dim[PCS_MAX_DIMS] = {false};
    for (int i = 0; i < nd; i++) {
        if (dims[i] < 0 || dims[i] >= x0->ndim || is_fft_dim[dims[i]])
            return PyErr_Format(PyExc_RuntimeError, "_fft_cuda: invalid or repeated dim %lld",
                                (long long)dims[i]);
        if (sig[i] < 1)
            return PyErr_Format(PyExc_RuntimeError, "Invalid number of data points (%lld) specified",
                                (long long)sig[i]);
        is_fft_dim[dims[i]] = true;
    }
    if (kind == KIND_R2C && pcs_is_complex(x0->dtype))
        return PyErr_Format(PyExc_RuntimeError, "rfft expects a real input tensor, but got %s",
                            pcs_dtypes[x0->dtype].legacy);

    /* 1. promote */
    PcsTensor *x = pcs_tensor_to(x0, compute_dtype(x0->dtype, (int)kind), x0->device, false, false, false);
    if (!x)
        return NULL;
    /* 2. trim / zero-pad the signal dims (c2r: input is n/2+1 long) */
    int64_t want[PCS_MAX_DIMS];
    memcpy(want, x->sizes, x->ndim * sizeof(int64_t));
    for (int i = 0; i < nd; i++)
        want[dims[i]] = (kind == KIND_C2R && i == nd - 1) ? sig[i] / 2 + 1 : sig[i];
    Py_SETREF(x, resize(x, want));
    if (!x)
        return NULL;
    /* 3. batch dims first, signal dims last, contiguous */
    int perm[PCS_MAX_DIMS], k = 0;
    for (int d = 0; d < x->ndim; d++)
        if (!is_fft_dim[d])
            perm[k++] = d;
    for (int i = 0; i < nd; i++)
        perm[k++] = (int)dims[i];
    int64_t psz[PCS_MAX_DIMS], pst[PCS_MAX_DIMS], osz[PCS_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++) {
        psz[i] = x->sizes[perm[i]];
        pst[i] = x->strides[perm[i]];
        osz[i] = psz[i];
    }
    bool identity = true;
    for (int i = 0; i < x->ndim; i++)
        identity &= perm[i] == i;
    PcsTensor *xp = identity ? x : pcs_tensor_alias(x, x->offset, x->ndim, psz, pst);
    if (!identity)
        Py_DECREF(x);
    if (!xp)
        return NULL;
    /* c2r overwrites its input and conj_in scales it in place: own copy */
    bool own = kind == KIND_C2R || conj_in;
    x = pcs_tensor_contiguous(xp, false);
    Py_DECREF(xp);
    if (!x)
        return NULL;
    if (own && x->storage == x0->storage) {
        Py_SETREF(x, pcs_tensor_contiguous(x, true));
        if (!x)
            return NULL;
    }
    if (kind == KIND_R2C)
        osz[x->ndim - 1] = sig[nd - 1] / 2 + 1;
    else if (kind == KIND_C2R)
        osz[x->ndim - 1] = sig[nd - 1];
    PcsTensor *out = run_transform(x, (int)kind, nd, sig, osz, (int)norm, forward, conj_in, conj_out);
    Py_DECREF(x);
    if (!out)
        return NULL;
    /* 4. back to the input's dim order (a view) */
    if (identity)
        return (PyObject *)out;
    int64_t rsz[PCS_MAX_DIMS], rst[PCS_MAX_DIMS];
    for (int i = 0; i < out->ndim; i++) {
        rsz[perm[i]] = out->sizes[i];
        rst[perm[i]] = out->strides[i];
    }
    PcsTensor *res = pcs_tensor_alias(out, out->offset, out->ndim, rsz, rst);
    Py_DECREF(out);
    return (PyObject *)res;
}

/* _fft_roll(x, shifts, dims): torch.roll for fftshift / ifftshift, any
 * device, through narrowed copies (two per rolled dim). */
static PcsTensor *narrow(PcsTensor *t, int dim, int64_t start, int64_t len)
{
    int64_t sz[PCS_MAX_DIMS];
    memcpy(sz, t->sizes, t->ndim * sizeof(int64_t));
    sz[dim] = len;
    return pcs_tensor_alias(t, t->offset + start * t->strides[dim], t->ndim, sz, t->strides);
}

static PyObject *f_fft_roll(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    PCS_UNUSED(m);
    if (nargs != 3 || !PcsTensor_Check(args[0]))
        return PyErr_Format(PyExc_TypeError, "_fft_roll(x, shifts, dims)");
    PcsTensor *x = (PcsTensor *)args[0];
    int64_t shifts[PCS_MAX_DIMS], dims[PCS_MAX_DIMS];
    int ns = pcs_parse_ints(&args[1], 1, shifts), nd = ns < 0 ? -1 : pcs_parse_ints(&args[2], 1, dims);
    if (ns < 0 || nd < 0)
        return NULL;
    if (ns != nd)
        return PyErr_Format(PyExc_RuntimeError, "shifts and dimensions must align. shifts: %d, dims:%d", ns, nd);
    /* Every dim is checked before anything is made: a 0-dim tensor has no
     * size to roll along (torch's roll asks self.size(dim) and fails). */
    int wd[PCS_MAX_DIMS];
    for (int i = 0; i < nd; i++) {
        if ((wd[i] = pcs_wrap_dim(dims[i], x->ndim)) < 0)
            return NULL;
        if (x->ndim == 0)
            return PyErr_Format(PyExc_IndexError,
                                "Dimension specified as %lld but tensor has no dimensions",
                                (long long)dims[i]);
    }
    PcsTensor *cur = pcs_tensor_contiguous(x, true);
    for (int i = 0; cur && i < nd; i++) {
        int d = wd[i];
        int64_t n = cur->sizes[d];
        int64_t s = n ? shifts[i] % n : 0; /* in (-n, n): s + n cannot overflow */
        if (s < 0)
            s += n;
        if (s == 0)
            continue;
        PcsTensor *out = pcs_tensor_empty(cur->ndim, cur->sizes, cur->dtype, cur->device, false);
        PcsTensor *a = NULL, *b = NULL, *c = NULL, *e = NULL;
        int r = -1;
        if (out && (a = narrow(cur, d, n - s, s)) && (b = narrow(out, d, 0, s)) &&
            (c = narrow(cur, d, 0, n - s)) && (e = narrow(out, d, s, n - s)))
            r = (pcs_copy(b, a, false) == 0 && pcs_copy(e, c, false) == 0) ? 0 : -1;
        Py_XDECREF(a);
        Py_XDECREF(b);
        Py_XDECREF(c);
        Py_XDECREF(e);
        Py_DECREF(cur);
        cur = out;
        if (r < 0)
            Py_CLEAR(cur);
    }
    return (PyObject *)cur;
}

/* ------------------------------------------------------------------------ */
/* Cache controls (backends.cuda.cufft_plan_cache[device])                   */

static int cache_device(PyObject *o)
{
    long d = PyLong_AsLong(o);
    if (d == -1 && PyErr_Occurred())
        return -1;
    if (d < 0 || d >= PCS_MAX_DEVICES) {
        PyErr_Format(PyExc_RuntimeError, "cufft_plan_cache: invalid device index %ld", d);
        return -1;
    }
    /* a cache exists only for a device this process can see */
    if (pcs_check_device((int)d) < 0)
        return -1;
    return (int)d;
}

static PyObject *f_cache_size(PyObject *m, PyObject *dev)
{
    PCS_UNUSED(m);
    int d = cache_device(dev);
    return d < 0 ? NULL : PyLong_FromLongLong(cache_of(d)->size);
}

static PyObject *f_cache_max_size(PyObject *m, PyObject *dev)
{
    PCS_UNUSED(m);
    int d = cache_device(dev);
    return d < 0 ? NULL : PyLong_FromLongLong(cache_of(d)->max_size);
}

static PyObject *f_cache_set_max_size(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    PCS_UNUSED(m);
    if (nargs != 2)
        return PyErr_Format(PyExc_TypeError, "_cufft_set_max_size(device, n)");
    int d = cache_device(args[0]);
    if (d < 0)
        return NULL;
    long long n = PyLong_AsLongLong(args[1]);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    if (n < 0)
        return PyErr_Format(PyExc_RuntimeError,
                            "cuFFT plan cache size must be non-negative, but got %lld", n);
    cache_of(d)->max_size = n;
    shrink_to(d, n);
    Py_RETURN_NONE;
}

static PyObject *f_cache_clear(PyObject *m, PyObject *dev)
{
    PCS_UNUSED(m);
    int d = cache_device(dev);
    if (d < 0)
        return NULL;
    shrink_to(d, 0);
    Py_RETURN_NONE;
}

#define FAST(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL

static PyMethodDef fft_methods[] = {
    {"_fft_cuda", FAST(f_fft_cuda), "The cuFFT transform behind pycuda_sem.fft on CUDA tensors."},
    {"_fft_roll", FAST(f_fft_roll), "roll(x, shifts, dims) for fftshift/ifftshift."},
    {"_cufft_cache_size", f_cache_size, METH_O, "Plans cached for a device."},
    {"_cufft_cache_max_size", f_cache_max_size, METH_O, "Capacity of a device's plan cache."},
    {"_cufft_cache_set_max_size", FAST(f_cache_set_max_size), "Sets the capacity (evicts LRU plans)."},
    {"_cufft_cache_clear", f_cache_clear, METH_O, "Destroys every cached plan of a device."},
    {NULL, NULL, 0, NULL},
};

int pcs_fft_init(PyObject *module) { return PyModule_AddFunctions(module, fft_methods); }
