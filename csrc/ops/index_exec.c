/* index_exec.c: the indexing engine (ops/index.h): plans to offsets, and
 * offsets to gathers, scatters and nonzero, on both devices.
 *
 * The range check happens here, once, for every indexing op: on the CPU the
 * offsets loop raises at the first bad index in index order; on CUDA the
 * kernel that computes the offsets (the gather, the atomic scatter, or the
 * offsets kernel before a sort) writes a bad index into a record in
 * host-mapped pinned memory (kernels/index.h) and never follows it: a
 * gather reads element 0, a scatter skips the element, so nothing reads or
 * writes outside the tensor. The op does not wait: the record is queued
 * (ops/index_check.c) and the first call that waits for the device
 * afterwards raises IndexError. No device-side assert: the CUDA context
 * stays usable. Under CUDA_LAUNCH_BLOCKING=1 the op waits and raises
 * itself.
 *
 * Scatters: ADD into int32/int64 tensors, and into float32/float64 ones
 * unless deterministic algorithms are requested
 * (pycuda_sem.use_deterministic_algorithms, off by default as in torch),
 * run one atomicAdd pass over the offsets; SET of one value (x[idx] = 1.0,
 * index_fill_), and of many values from SET_PLAIN_MIN unless deterministic,
 * one plain store pass; else SET of many values into a tensor not much
 * larger than them, two passes of claims (the last in index order wins).
 * Otherwise (and for the other modes and dtypes) the offsets are sorted and
 * each run of equal offsets is reduced in index order (SET: the last value
 * wins). */
#include "ops/index.h"
#include "ops/index_check.h"

#include <string.h>

#include "runtime/device.h"
#include "runtime/stream.h"
#include "tensor/copy.h"

/* ------------------------------------------------------------------------ */
/* Deterministic algorithms (torch.use_deterministic_algorithms)             */

static bool deterministic;

bool pcs_index_deterministic(void) { return deterministic; }
void pcs_index_set_deterministic(bool on) { deterministic = on; }

/* ------------------------------------------------------------------------ */
/* Plans                                                                     */

void pcs_index_plan_init(pcs_index_plan *p)
{
    memset(p, 0, sizeof *p);
}

void pcs_index_plan_clear(pcs_index_plan *p)
{
    for (int k = 0; k < p->g.nidx; k++)
        Py_CLEAR(p->idx[k]);
    p->g.nidx = 0;
}

int pcs_index_oob(int64_t index, int dim, int64_t size)
{
    PyErr_Format(PyExc_IndexError, "index %lld is out of bounds for dimension %d with size %lld",
                 (long long)index, dim, (long long)size);
    return -1;
}

int pcs_index_plan_add(pcs_index_plan *p, PcsTensor *idx, int device, int dim, int64_t size,
                       int64_t wstride, int first)
{
    if (p->g.nidx >= PCS_MAX_DIMS) {
        PyErr_Format(PyExc_IndexError, "too many index tensors (at most %d)", PCS_MAX_DIMS);
        return -1;
    }
    if (pcs_is_float(idx->dtype) || pcs_is_complex(idx->dtype) || idx->dtype == PCS_BOOL) {
        PyErr_SetString(PyExc_IndexError,
                        "tensors used as indices must be long, int, byte or bool tensors");
        return -1;
    }
    /* A CPU index may index a CUDA tensor (moved over) unless the op wants
     * one device, as torch's dim-wise ops do; other mixes raise. */
    bool mixed = idx->device != device && (p->same_device || idx->device >= 0);
    if (mixed) {
        int named = p->same_device ? idx->device : device; /* the device the message names */
        char d[32];
        if (named < 0)
            snprintf(d, sizeof d, "cpu");
        else
            snprintf(d, sizeof d, "cuda:%d", named);
        if (p->same_device)
            PyErr_Format(PyExc_RuntimeError,
                         "Expected all tensors to be on the same device, but got index is on %s, "
                         "different from other tensors", d);
        else
            PyErr_Format(PyExc_RuntimeError,
                         "indices should be either on cpu or on the same device as the indexed "
                         "tensor (%s)", d);
        return -1;
    }
    bool host = false;
    const int64_t lo = p->nowrap ? 0 : -size; /* the lowest index in range */
    PcsTensor *c;
    if (idx->device < 0 && device >= 0) {
        /* on the host: check here, in index order, then copy over */
        PcsTensor *l = pcs_tensor_to(idx, PCS_INT64, -1, false, false, false);
        PcsTensor *h = l ? pcs_tensor_contiguous(l, false) : NULL;
        Py_XDECREF(l);
        if (!h)
            return -1;
        const int64_t *v = pcs_tensor_data(h);
        for (int64_t i = 0, n = pcs_tensor_numel(h); i < n; i++) {
            if (v[i] < lo || v[i] >= size) {
                Py_DECREF(h);
                return pcs_index_oob(v[i], dim, size);
            }
        }
        c = pcs_tensor_to(h, PCS_INT64, device, false, false, false);
        Py_DECREF(h);
        host = true;
    } else {
        c = pcs_tensor_to(idx, PCS_INT64, device, false, false, false);
    }
    if (!c)
        return -1;
    int k = p->g.nidx++;
    p->host_checked[k] = host;
    p->idx[k] = c;
    p->dim[k] = dim;
    p->g.isize[k] = size;
    if (p->nowrap)
        p->g.nowrap |= 1u << k; /* kernels/index.h: negatives out of range */
    p->g.wstride[k] = wstride;
    for (int d = 0; d < p->g.ndim; d++) {
        int j = d - first; /* the index tensor's own dim, right-aligned */
        p->g.istride[k][d] = j >= 0 && j < c->ndim && c->sizes[j] != 1 ? c->strides[j] : 0;
    }
    return k;
}

static int64_t plan_numel(const pcs_index_plan *p)
{
    int64_t n = 1;
    for (int d = 0; d < p->g.ndim; d++)
        n *= p->g.sizes[d];
    return n;
}

static PcsTensor *empty1(int64_t n, int dtype, int device)
{
    return pcs_tensor_empty(1, &n, dtype, device, false);
}

/* ------------------------------------------------------------------------ */
/* Offsets                                                                   */

static int offsets_cpu(pcs_index_plan *p, int64_t *out, int64_t n)
{
    const pcs_index_geom *g = &p->g;
    for (int64_t i = 0; i < n; i++) {
        int64_t rem = i, off = g->base, ioff[PCS_MAX_DIMS] = {0};
        for (int d = g->ndim - 1; d >= 0; d--) {
            int64_t c = rem % g->sizes[d];
            rem /= g->sizes[d];
            off += c * g->bstride[d];
            for (int k = 0; k < g->nidx; k++)
                ioff[k] += c * g->istride[k][d];
        }
        for (int k = 0; k < g->nidx; k++) {
            int64_t v = g->idx[k][ioff[k]];
            int64_t w = v < 0 ? v + g->isize[k] : v;
            if (v < ((g->nowrap >> k) & 1u ? 0 : -g->isize[k]) || v >= g->isize[k])
                return pcs_index_oob(v, p->dim[k], g->isize[k]);
            off += w * g->wstride[k];
        }
        out[i] = off;
    }
    return 0;
}

/* The one-index row case of pcs_launch_index_gather_rows: the result dims
 * split into a prefix the (contiguous) index tensor spans with no basic
 * stride, and a suffix it does not span that walks a contiguous row of the
 * source. Sets the rows, the row length (elements) or returns false. */
static bool rows_case(const pcs_index_geom *g, int64_t *nrows, int64_t *row)
{
    if (g->nidx != 1)
        return false;
    int d = g->ndim - 1;
    int64_t r = 1, n = 1, expect = 1;
    for (; d >= 0; d--) {
        if (g->sizes[d] == 1)
            continue;
        if (g->istride[0][d] != 0 || g->bstride[d] != expect)
            break;
        r *= g->sizes[d];
        expect *= g->sizes[d];
    }
    for (expect = 1; d >= 0; d--) {
        if (g->sizes[d] == 1)
            continue;
        if (g->bstride[d] != 0 || g->istride[0][d] != expect)
            return false;
        n *= g->sizes[d];
        expect *= g->sizes[d];
    }
    *nrows = n;
    *row = r;
    return true;
}

/* Puts the index tensors' pointers in the geometry; returns whether some
 * index tensor still needs its range checked on the device (one that came
 * from the host was checked there). */
static bool launch_setup(pcs_index_plan *p)
{
    bool need = false;
    for (int k = 0; k < p->g.nidx; k++) {
        p->g.idx[k] = pcs_tensor_data(p->idx[k]);
        need = need || !p->host_checked[k];
    }
    return need;
}

/* Runs the offsets kernel (off != NULL) or the fused gather into res (src
 * != NULL), then queues the range check (when some index tensor was not
 * checked on the host). */
static int run_cuda(pcs_index_plan *p, PcsTensor *off, PcsTensor *src, PcsTensor *res, int64_t n,
                    int device)
{
    bool need = launch_setup(p) && n > 0;
    if (pcs_cuda_set_device_raw(device) < 0)
        return -1;
    cudaStream_t st = pcs_current_stream(device);
    pcs_index_check *slot = pcs_index_check_take(device);
    if (!slot)
        return -1;
    const pcs_index_geom *g = &p->g;
    int lr, r;
    int64_t nrows, row, is = src ? (int64_t)pcs_itemsize(src->dtype) : 0;
    if (off)
        lr = pcs_launch_index_offsets(g, pcs_tensor_data(off), n, pcs_index_check_report(slot, need), st);
    else if (rows_case(g, &nrows, &row))
        lr = pcs_launch_index_gather_rows(g->idx[0], nrows, g->isize[0], !(g->nowrap & 1u),
                                          pcs_tensor_data(res),
                                          src->storage->data, g->base * is, g->wstride[0] * is,
                                          row * is, pcs_index_check_report(slot, need), st);
    else
        lr = pcs_launch_index_gather_geom(g, pcs_tensor_data(res), src->storage->data, (int)is, n,
                                          pcs_index_check_report(slot, need), st);
    if (lr < 0) {
        PyErr_SetString(PyExc_RuntimeError, "index: unsupported element size");
        r = -1;
    } else {
        r = PCS_CHECK_LAUNCH(st, off ? "index offsets" : "index gather");
    }
    return pcs_index_check_finish(slot, p, st, device, r, lr < 0, need);
}

PcsTensor *pcs_index_offsets(pcs_index_plan *p, PcsTensor *t)
{
    (void)launch_setup(p); /* the pointers, for the CPU loop too */
    int64_t n = plan_numel(p);
    PcsTensor *off = pcs_tensor_empty(p->g.ndim, p->g.sizes, PCS_INT64, t->device, false);
    if (!off)
        return NULL;
    int r = t->device < 0 ? offsets_cpu(p, pcs_tensor_data(off), n)
                          : run_cuda(p, off, NULL, NULL, n, t->device);
    if (r < 0)
        Py_CLEAR(off);
    return off;
}

/* ------------------------------------------------------------------------ */
/* Gather and scatter                                                        */

PcsTensor *pcs_index_gather(pcs_index_plan *p, PcsTensor *src)
{
    int64_t n = plan_numel(p);
    PcsTensor *res = pcs_tensor_empty(p->g.ndim, p->g.sizes, src->dtype, src->device, false);
    if (!res)
        return NULL;
    if (src->device >= 0) { /* one fused pass; a bad index is reported later */
        if (run_cuda(p, NULL, src, res, n, src->device) < 0)
            Py_CLEAR(res);
        return res;
    }
    PcsTensor *off = pcs_index_offsets(p, src);
    if (!off) {
        Py_DECREF(res);
        return NULL;
    }
    size_t is = pcs_itemsize(src->dtype);
    const int64_t *o = pcs_tensor_data(off);
    char *dst = pcs_tensor_data(res);
    const char *base = src->storage->data;
    for (int64_t i = 0; i < n; i++)
        memcpy(dst + i * is, base + o[i] * is, is);
    Py_DECREF(off);
    return res;
}

/* The whole storage of t as a 1-D tensor (the frame offsets index). */
static PcsTensor *storage_flat(PcsTensor *t)
{
    int64_t n = (int64_t)(t->storage->nbytes / pcs_itemsize(t->dtype)), one = 1;
    return pcs_tensor_alias(t, 0, 1, &n, &one);
}

static int scatter_reduce_cpu(PcsTensor *dst, PcsTensor *off, PcsTensor *vals, int mode,
                              bool include_self)
{
    PyObject *fn = pcs_ops_numpy_fn("index_scatter");
    if (!fn)
        return -1;
    PcsTensor *flat = storage_flat(dst);
    if (!flat)
        return -1;
    int cd = pcs_ops_cpu_dtype(dst->dtype);
    PcsTensor *work = cd == dst->dtype ? (PcsTensor *)Py_NewRef(flat)
                                       : pcs_tensor_to(flat, cd, -1, false, true, false);
    PyObject *fa = work ? pcs_tensor_numpy(work) : NULL;
    PyObject *oa = fa ? pcs_tensor_numpy(off) : NULL;
    PyObject *va = oa ? pcs_ops_numpy_in(vals, cd) : NULL;
    PyObject *rr = va ? PyObject_CallFunction(fn, "OOOii", fa, oa, va, mode, (int)include_self) : NULL;
    int r = rr ? 0 : -1;
    if (r == 0 && work != flat)
        r = pcs_copy(flat, work, false);
    Py_XDECREF(rr);
    Py_XDECREF(va);
    Py_XDECREF(oa);
    Py_XDECREF(fa);
    Py_XDECREF(work);
    Py_DECREF(flat);
    return r;
}

static int bit_length(uint64_t x)
{
    int b = 0;
    while (x) {
        b++;
        x >>= 1;
    }
    return b ? b : 1;
}

static int scatter_cuda(PcsTensor *dst, PcsTensor *off, PcsTensor *vals, int64_t n, int mode,
                        bool include_self)
{
    int dev = dst->device;
    if (pcs_cuda_set_device_raw(dev) < 0)
        return -1;
    cudaStream_t st = pcs_current_stream(dev);
    int bits = bit_length((uint64_t)(dst->storage->nbytes / pcs_itemsize(dst->dtype)));
    size_t bytes = 0, sbytes = 0;
    if (pcs_index_sort(NULL, &bytes, NULL, NULL, NULL, NULL, n, bits, st) < 0) {
        PyErr_SetString(PyExc_RuntimeError, "index scatter: cub::DeviceRadixSort sizing failed");
        return -1;
    }
    if (pcs_launch_index_scatter(dst->dtype, NULL, NULL, NULL, NULL, n, mode, include_self, NULL,
                                 &sbytes, NULL, st) < 0) {
        pcs_not_implemented("scatter", dst->dtype);
        return -1;
    }
    /* the sort's storage, then the reduction's: one buffer of the larger */
    bytes = bytes > sbytes ? bytes : sbytes;
    PcsTensor *scratch = empty1(3 * n, PCS_INT64, dev);
    PcsTensor *temp = scratch ? empty1((int64_t)bytes + 1, PCS_UINT8, dev) : NULL;
    int r = temp ? 0 : -1;
    if (r == 0) {
        /* s: sorted offsets | positions 0..n-1, then the runs' offsets | sorted positions */
        int64_t *s = pcs_tensor_data(scratch);
        const int64_t *o = pcs_tensor_data(off);
        size_t tb = bytes;
        if (pcs_index_sort(pcs_tensor_data(temp), &tb, o, s, s + n, s + 2 * n, n, bits, st) < 0) {
            PyErr_SetString(PyExc_RuntimeError, "index scatter: cub::DeviceRadixSort failed");
            r = -1;
        } else if ((r = PCS_CHECK_LAUNCH(st, "index sort")) == 0) {
            if (pcs_launch_index_scatter(dst->dtype, dst->storage->data, s, s + 2 * n,
                                         pcs_tensor_data(vals), n, mode, include_self,
                                         pcs_tensor_data(temp), &sbytes, s + n, st) < 0) {
                PyErr_SetString(PyExc_RuntimeError,
                                "index scatter: cub::DeviceReduce::ReduceByKey failed");
                r = -1;
            } else {
                r = PCS_CHECK_LAUNCH(st, "index scatter");
            }
        }
    }
    Py_XDECREF(temp);
    Py_XDECREF(scratch);
    return r;
}

/* SET of many values takes plain stores from this many (deterministic
 * algorithms off), as torch's index_put_ does: which duplicate lands is then
 * unspecified. Below it, and with deterministic algorithms, the last value
 * in index order wins (claims or a sort), as on the CPU. */
#define SET_PLAIN_MIN ((int64_t)1 << 16)

/* The one-pass scatter applies: ADD (with self) of int32/int64 always (its
 * atomics are exact and order-free) and of float32/float64 unless
 * deterministic algorithms are requested; SET of one value (a number) of
 * any dtype always (whichever duplicate lands last, the result is the
 * same), and of many values past SET_PLAIN_MIN unless deterministic. */
static bool scatter_atomic_ok(const pcs_index_plan *p, int dtype, int mode, bool include_self, int64_t n)
{
    if (mode == PCS_SCATTER_ADD && include_self) {
        if (dtype == PCS_INT32 || dtype == PCS_INT64)
            return true;
        return !deterministic && (dtype == PCS_FLOAT32 || dtype == PCS_FLOAT64);
    }
    return mode == PCS_SCATTER_SET && (p->uniform || (!deterministic && n >= SET_PLAIN_MIN));
}

/* The one-pass scatter: offsets computed, checked and applied in one
 * kernel (no offsets array, no sort); an element with a bad index is
 * skipped and reported as run_cuda's are. */
static int scatter_atomic(pcs_index_plan *p, PcsTensor *dst, PcsTensor *vals, int64_t n, int mode)
{
    bool need = launch_setup(p) && n > 0; /* n == 0 launches nothing that could finish the record */
    int dev = dst->device;
    if (pcs_cuda_set_device_raw(dev) < 0)
        return -1;
    cudaStream_t st = pcs_current_stream(dev);
    pcs_index_check *slot = pcs_index_check_take(dev);
    if (!slot)
        return -1;
    int r, lr = pcs_launch_index_scatter_atomic(dst->dtype, &p->g, dst->storage->data,
                                                pcs_tensor_data(vals), n, mode,
                                                pcs_index_check_report(slot, need), st);
    if (lr < 0) {
        (void)pcs_not_implemented("scatter", dst->dtype);
        r = -1;
    } else {
        r = PCS_CHECK_LAUNCH(st, "index scatter (atomic)");
    }
    return pcs_index_check_finish(slot, p, st, dev, r, lr < 0, need);
}

static int64_t storage_numel(const PcsTensor *t)
{
    return (int64_t)(t->storage->nbytes / pcs_itemsize(t->dtype));
}

/* SET of many values by claims (kernels/index.h) rather than a sort, when
 * the claim array (an int32 per element of dst's storage) is cheap next to
 * sorting n offsets with their positions. */
static bool set_last_ok(const PcsTensor *dst, int mode, int64_t n)
{
    return mode == PCS_SCATTER_SET && n <= INT32_MAX && storage_numel(dst) <= 16 * n + (1 << 20);
}

static int scatter_set_last(pcs_index_plan *p, PcsTensor *dst, PcsTensor *vals, int64_t n)
{
    bool need = launch_setup(p) && n > 0; /* n == 0 launches nothing that could finish the record */
    int dev = dst->device;
    if (pcs_cuda_set_device_raw(dev) < 0)
        return -1;
    cudaStream_t st = pcs_current_stream(dev);
    int64_t s = storage_numel(dst);
    PcsTensor *win = empty1(s, PCS_INT32, dev);
    if (!win)
        return -1;
    cudaError_t me = n <= PCS_SET_LAST_ONE_BLOCK /* the kernel clears what it uses */
                         ? cudaSuccess
                         : cudaMemsetAsync(pcs_tensor_data(win), 0xFF, (size_t)s * sizeof(int32_t), st);
    pcs_index_check *slot = me == cudaSuccess ? pcs_index_check_take(dev) : NULL;
    if (!slot) {
        Py_DECREF(win); /* freed in stream order: nothing was launched on it */
        return me == cudaSuccess ? -1 : pcs_cuda_error(me, "cudaMemsetAsync", __FILE__, __LINE__);
    }
    int r, lr = pcs_launch_index_set_last(&p->g, dst->storage->data, pcs_tensor_data(vals),
                                          (int)pcs_itemsize(dst->dtype), n, pcs_tensor_data(win),
                                          pcs_index_check_report(slot, need), st);
    if (lr < 0) {
        (void)pcs_not_implemented("scatter", dst->dtype);
        r = -1;
    } else {
        r = PCS_CHECK_LAUNCH(st, "index scatter (last value wins)");
    }
    Py_DECREF(win); /* the caching allocator reuses it in stream order */
    return pcs_index_check_finish(slot, p, st, dev, r, lr < 0, need);
}

int pcs_index_scatter(pcs_index_plan *p, PcsTensor *dst, PcsTensor *vals, int mode,
                      bool include_self)
{
    int64_t n0 = plan_numel(p);
    if (dst->device >= 0 && n0 > 0 && scatter_atomic_ok(p, dst->dtype, mode, include_self, n0))
        return scatter_atomic(p, dst, vals, n0, mode);
    if (dst->device >= 0 && n0 > 0 && set_last_ok(dst, mode, n0))
        return scatter_set_last(p, dst, vals, n0);
    PcsTensor *off = pcs_index_offsets(p, dst);
    if (!off)
        return -1;
    int64_t n = plan_numel(p);
    int r = 0;
    if (n == 0) {
        r = 0;
    } else if (dst->device >= 0) {
        r = scatter_cuda(dst, off, vals, n, mode, include_self);
    } else if (mode == PCS_SCATTER_SET) {
        /* in index order, so the last value wins, as on CUDA */
        size_t is = pcs_itemsize(dst->dtype);
        const int64_t *o = pcs_tensor_data(off);
        const char *v = pcs_tensor_data(vals);
        char *base = dst->storage->data;
        for (int64_t i = 0; i < n; i++)
            memcpy(base + o[i] * is, v + i * is, is);
    } else {
        r = scatter_reduce_cpu(dst, off, vals, mode, include_self);
    }
    Py_DECREF(off);
    return r;
}

/* torch drops leading size-1 dims of a value with more dims than the result. */
PcsTensor *pcs_index_values(pcs_index_plan *p, PcsTensor *dst, PyObject *value)
{
    PcsTensor *v;
    if (PcsTensor_Check(value)) {
        PcsTensor *vt = (PcsTensor *)value;
        bool alias = vt->storage == dst->storage;
        v = pcs_tensor_to(vt, dst->dtype, dst->device, false, alias, false);
    } else if (PySequence_Check(value) && !PyUnicode_Check(value)) {
        v = pcs_tensor_from_data(value, dst->dtype, dst->device, false);
    } else { /* a number: filled at the result's shape at once (one launch, no copy) */
        const pcs_index_geom *g = &p->g;
        v = pcs_tensor_empty(g->ndim, g->sizes, dst->dtype, dst->device, false);
        if (v && pcs_tensor_fill(v, value) < 0)
            Py_CLEAR(v);
        p->uniform = true;
        return v;
    }
    if (!v)
        return NULL;
    p->uniform = pcs_tensor_numel(v) == 1; /* every duplicate writes the same value */
    const pcs_index_geom *g = &p->g;
    int lead = 0;
    while (v->ndim - lead > g->ndim && v->sizes[lead] == 1)
        lead++;
    int vn = v->ndim - lead;
    bool ok = vn <= g->ndim;
    for (int i = 0; ok && i < vn; i++) {
        int64_t s = v->sizes[lead + i], r = g->sizes[g->ndim - vn + i];
        ok = s == r || s == 1;
    }
    if (!ok) {
        char a[256], b[256];
        pcs_shape_str(v->ndim, v->sizes, a, sizeof a);
        pcs_shape_str(g->ndim, g->sizes, b, sizeof b);
        PyErr_Format(PyExc_RuntimeError,
                     "shape mismatch: value tensor of shape %s cannot be broadcast to indexing "
                     "result of shape %s", a, b);
        Py_DECREF(v);
        return NULL;
    }
    PcsTensor *sq = pcs_tensor_reshape(v, vn, v->sizes + lead);
    Py_DECREF(v);
    PcsTensor *e = sq ? pcs_tensor_expand(sq, g->ndim, g->sizes) : NULL;
    Py_XDECREF(sq);
    PcsTensor *c = e ? pcs_tensor_contiguous(e, false) : NULL;
    Py_XDECREF(e);
    return c;
}

/* ------------------------------------------------------------------------ */
/* nonzero                                                                   */

/* The bits that make an element of `dtype` non-zero: all of them, but a
 * float's sign bits (-0.0 is zero), in each part of a complex. */
static uint64_t nonzero_mask(int dtype)
{
    switch (dtype) {
    case PCS_FLOAT16:
    case PCS_BFLOAT16: return 0x7fffu;
    case PCS_FLOAT32: return 0x7fffffffu;
    case PCS_FLOAT64:
    case PCS_COMPLEX128: return 0x7fffffffffffffffull; /* each half of a complex128 */
    case PCS_COMPLEX64: return 0x7fffffff7fffffffull;
    default: return ~0ull;
    }
}

int pcs_selection_count(pcs_host_signal *sig, PcsTensor *owner, int64_t at, cudaStream_t st,
                        int64_t *count)
{
    if (sig)
        return pcs_host_signal_wait(sig, st, count);
    int64_t z[1] = {0};
    PcsTensor *cnt = pcs_tensor_alias(owner, at, 0, z, z);
    int ok = cnt ? pcs_read_element(cnt, count) : -1;
    Py_XDECREF(cnt);
    return ok;
}

/* b: contiguous, any dtype. */
static PcsTensor *nonzero_cuda(PcsTensor *b)
{
    int dev = b->device;
    int64_t n = pcs_tensor_numel(b);
    if (n == 0) { /* nothing to select: CUB need not run (nor write a count) */
        int64_t sizes[2] = {0, b->ndim};
        return pcs_tensor_empty(2, sizes, PCS_INT64, dev, false);
    }
    if (pcs_cuda_set_device_raw(dev) < 0)
        return NULL;
    cudaStream_t st = pcs_current_stream(dev);
    size_t bytes = 0;
    int isz = pcs_itemsize(b->dtype);
    uint64_t mask = nonzero_mask(b->dtype);
    if (pcs_index_select_positions(NULL, &bytes, NULL, isz, mask, NULL, NULL, NULL, n, st) < 0) {
        PyErr_SetString(PyExc_RuntimeError, "nonzero: cub::DeviceSelect sizing failed");
        return NULL;
    }
    const bool small = n <= PCS_SELECT_ONE_BLOCK;
    PcsTensor *lin = empty1(n + 1, PCS_INT64, dev); /* the positions, then the count */
    /* small inputs hand the count over through host-mapped memory and use
     * no CUB storage */
    pcs_host_signal *sig = lin && small ? pcs_host_signal_take() : NULL;
    PcsTensor *temp = lin && !small ? empty1((int64_t)bytes + 1, PCS_UINT8, dev) : NULL;
    PcsTensor *res = NULL;
    int64_t *l = lin ? pcs_tensor_data(lin) : NULL;
    if (sig || temp) {
        int64_t count = 0;
        if (pcs_index_select_positions(temp ? pcs_tensor_data(temp) : NULL, &bytes, pcs_tensor_data(b),
                                       isz, mask, l, sig ? pcs_host_signal_value(sig) : l + n,
                                       sig ? pcs_host_signal_flag(sig) : NULL, n, st) < 0) {
            PyErr_SetString(PyExc_RuntimeError, "nonzero: cub::DeviceSelect::Flagged failed");
        } else if (PCS_CHECK_LAUNCH(st, "nonzero") == 0) {
            int ok = pcs_selection_count(sig, lin, lin->offset + n, st, &count);
            sig = NULL; /* used up */
            int64_t sizes[2] = {count, b->ndim};
            if (ok == 0 && small && b->ndim == 1) {
                /* 1-D and small: the positions are the result, a [count, 1]
                 * view of the buffer they were written to (nothing else
                 * holds it), which saves a copy's launch */
                static const int64_t unit[2] = {1, 1};
                res = pcs_tensor_alias(lin, lin->offset, 2, sizes, unit);
            } else if (ok == 0 && (res = pcs_tensor_empty(2, sizes, PCS_INT64, dev, false)) && count > 0) {
                /* 1-D: the positions are the coordinates (a copy, no kernel) */
                int lr = 0;
                if (b->ndim == 1) {
                    cudaError_t ce = cudaMemcpyAsync(pcs_tensor_data(res), l, (size_t)count * sizeof(int64_t),
                                                     cudaMemcpyDeviceToDevice, st);
                    lr = ce == cudaSuccess ? 0 : pcs_cuda_error(ce, "cudaMemcpyAsync", __FILE__, __LINE__);
                } else if (pcs_launch_index_unravel(pcs_tensor_data(res), l, count, b->ndim, b->sizes, st) < 0 ||
                           PCS_CHECK_LAUNCH(st, "nonzero unravel") < 0) {
                    lr = -1;
                }
                if (lr < 0)
                    Py_CLEAR(res);
            }
        }
    }
    if (sig) /* never launched: nothing can write it */
        pcs_host_signal_give(sig);
    Py_XDECREF(temp);
    Py_XDECREF(lin);
    return res;
}

PcsTensor *pcs_index_nonzero(PcsTensor *mask)
{
    /* CUDA reads any dtype (the test is in CUB's flag iterator); the CPU
     * path hands NumPy a bool copy */
    PcsTensor *b = mask->device >= 0 ? (PcsTensor *)Py_NewRef(mask)
                                     : pcs_tensor_to(mask, PCS_BOOL, mask->device, false, false, false);
    PcsTensor *c = b ? pcs_tensor_contiguous(b, false) : NULL;
    Py_XDECREF(b);
    if (!c)
        return NULL;
    PcsTensor *res = NULL;
    if (c->device >= 0) {
        res = nonzero_cuda(c);
    } else {
        PyObject *fn = pcs_ops_numpy_fn("nonzero");
        PyObject *a = fn ? pcs_tensor_numpy(c) : NULL;
        PyObject *r = a ? PyObject_CallOneArg(fn, a) : NULL;
        res = r ? pcs_tensor_from_numpy(r) : NULL;
        Py_XDECREF(r);
        Py_XDECREF(a);
    }
    Py_DECREF(c);
    return res;
}
