/* memory.c: torch.cuda's memory-management functions over the caching
 * allocator: memory_allocated and friends, memory_stats with PyTorch's keys,
 * memory_snapshot, empty_cache and the per-process memory fraction; and the
 * boundary where allocator status codes become Python exceptions.
 *
 * Without a GPU (or before any allocation) the figures are 0 and the resets
 * and empty_cache are no-ops, as PyTorch's are before CUDA is initialised.
 * memory_allocated() is on users' hot paths (logged every step), so it is a
 * plain C function with a lock-free read. */
#include "core/common.h"

#include "runtime/allocator.h"
#include "runtime/device.h"
#include "runtime/memory.h"

#include <stdio.h>

/* -1 with no exception: no GPU and no device named, so report zeros. */
static int device_or_none(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                          const char *fname)
{
    if (nargs == 0 && !kwnames && pcs_device_count() == 0)
        return -1;
    if (nargs == 1 && !kwnames && args[0] == Py_None && pcs_device_count() == 0)
        return -1;
    int dev = pcs_parse_opt_device(args, nargs, kwnames, fname);
    return dev < 0 ? -2 : dev;
}

#define DEVICE_OR_RETURN(dev, fname, on_none)                                     \
    int dev = device_or_none(args, nargs, kwnames, fname);                         \
    if ((dev) == -2)                                                               \
        return NULL;                                                               \
    if ((dev) == -1)                                                               \
        return on_none;

static PyObject *py_memory_allocated(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                     PyObject *kwnames)
{
    PCS_UNUSED(m);
    /* fast path: no argument, GPU present */
    if (nargs == 0 && !kwnames && pcs_device_count() > 0)
        return PyLong_FromLongLong(pcs_alloc_allocated_bytes(pcs_current_device()));
    DEVICE_OR_RETURN(dev, "memory_allocated", PyLong_FromLong(0));
    return PyLong_FromLongLong(pcs_alloc_allocated_bytes(dev));
}

static PyObject *py_memory_reserved(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames)
{
    PCS_UNUSED(m);
    DEVICE_OR_RETURN(dev, "memory_reserved", PyLong_FromLong(0));
    return PyLong_FromLongLong(pcs_alloc_reserved_bytes(dev));
}

static PyObject *py_max_memory_allocated(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                         PyObject *kwnames)
{
    PCS_UNUSED(m);
    DEVICE_OR_RETURN(dev, "max_memory_allocated", PyLong_FromLong(0));
    pcs_device_stats st;
    pcs_alloc_get_stats(dev, &st);
    return PyLong_FromLongLong(st.allocated_bytes[PCS_POOL_ALL].peak);
}

static PyObject *py_max_memory_reserved(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                        PyObject *kwnames)
{
    PCS_UNUSED(m);
    DEVICE_OR_RETURN(dev, "max_memory_reserved", PyLong_FromLong(0));
    pcs_device_stats st;
    pcs_alloc_get_stats(dev, &st);
    return PyLong_FromLongLong(st.reserved_bytes[PCS_POOL_ALL].peak);
}

static PyObject *py_reset_peak_memory_stats(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                            PyObject *kwnames)
{
    PCS_UNUSED(m);
    DEVICE_OR_RETURN(dev, "reset_peak_memory_stats", Py_NewRef(Py_None));
    pcs_alloc_reset_peak_stats(dev);
    Py_RETURN_NONE;
}

static PyObject *py_reset_accumulated_memory_stats(PyObject *m, PyObject *const *args,
                                                   Py_ssize_t nargs, PyObject *kwnames)
{
    PCS_UNUSED(m);
    DEVICE_OR_RETURN(dev, "reset_accumulated_memory_stats", Py_NewRef(Py_None));
    pcs_alloc_reset_accumulated_stats(dev);
    Py_RETURN_NONE;
}

static PyObject *py_empty_cache(PyObject *m, PyObject *noargs)
{
    PCS_UNUSED(m);
    PCS_UNUSED(noargs);
    int n = pcs_device_count();
    for (int dev = 0; dev < n; dev++) {
        pcs_status st = pcs_alloc_empty_cache(dev);
        if (st != PCS_OK)
            return pcs_alloc_raise(st), NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *py_set_per_process_memory_fraction(PyObject *m, PyObject *args, PyObject *kwds)
{
    PCS_UNUSED(m);
    static char *kwlist[] = {"fraction", "device", NULL};
    double fraction;
    PyObject *devobj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "d|O:set_per_process_memory_fraction", kwlist,
                                     &fraction, &devobj))
        return NULL;
    if (!(fraction >= 0.0 && fraction <= 1.0)) {
        PyErr_Format(PyExc_ValueError, "Invalid fraction value: %R. Allowed range: 0~1",
                     PyTuple_GET_ITEM(args, 0));
        return NULL;
    }
    int dev = pcs_cuda_device_arg(devobj);
    if (dev < 0)
        return NULL;
    pcs_status st = pcs_alloc_set_memory_fraction(dev, fraction);
    if (st != PCS_OK)
        return pcs_alloc_raise(st), NULL;
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------------ */
/* Allocator errors as exceptions                                            */

/* Human sizes as PyTorch prints them in its OOM message. */
static void format_size(char *buf, size_t n, size_t bytes)
{
    if (bytes < 1024)
        snprintf(buf, n, "%zu bytes", bytes);
    else if (bytes < (size_t)1024 * 1024)
        snprintf(buf, n, "%.2f KiB", bytes / 1024.0);
    else if (bytes < (size_t)1024 * 1024 * 1024)
        snprintf(buf, n, "%.2f MiB", bytes / 1048576.0);
    else
        snprintf(buf, n, "%.2f GiB", bytes / 1073741824.0);
}

int pcs_alloc_raise(pcs_status st)
{
    const pcs_alloc_error *e = pcs_alloc_last_error();
    switch (st) {
    case PCS_OK:
        return 0;
    case PCS_ERR_HOST_OOM:
        PyErr_NoMemory();
        return -1;
    case PCS_ERR_CUDA:
        return pcs_cuda_error(e->cuda_error, e->cuda_call ? e->cuda_call : "allocator", __FILE__,
                              __LINE__);
    case PCS_ERR_OOM: {
        char req[32], tot[32], fre[32], alc[32], res[32], lim[32];
        format_size(req, sizeof req, e->requested);
        format_size(tot, sizeof tot, e->device_total);
        format_size(fre, sizeof fre, e->device_free);
        format_size(alc, sizeof alc, e->allocated);
        format_size(res, sizeof res, e->reserved > e->allocated ? e->reserved - e->allocated : 0);
        char extra[160] = "";
        if (e->fraction_limit) {
            format_size(lim, sizeof lim, e->fraction_limit);
            snprintf(extra, sizeof extra,
                     " This process may use at most %s (set_per_process_memory_fraction).", lim);
        }
        PyErr_Format(pcs_OutOfMemoryError,
                     "CUDA out of memory. Tried to allocate %s. GPU %d has a total capacity of "
                     "%s of which %s is free. Of the allocated memory %s is allocated by "
                     "pycuda_sem, and %s is reserved by pycuda_sem but unallocated.%s",
                     req, e->device, tot, fre, alc, res, extra);
        return -1;
    }
    }
    PyErr_SetString(PyExc_RuntimeError, "unknown allocator status");
    return -1;
}

/* The allocator releases the GIL around calls that block, through these. */
static void *release_gil(void) { return PyGILState_Check() ? (void *)PyEval_SaveThread() : NULL; }
static void acquire_gil(void *ts)
{
    if (ts)
        PyEval_RestoreThread((PyThreadState *)ts);
}

/* ------------------------------------------------------------------------ */
/* memory_stats: PyTorch's flat keys, sorted                                 */

static int put(PyObject *d, const char *key, int64_t v)
{
    PyObject *o = PyLong_FromLongLong(v);
    if (!o)
        return -1;
    int r = PyDict_SetItemString(d, key, o);
    Py_DECREF(o);
    return r;
}

static int put_stat(PyObject *d, const char *prefix, const pcs_stat *s)
{
    char key[96];
    snprintf(key, sizeof key, "%s.allocated", prefix);
    if (put(d, key, s->allocated) < 0)
        return -1;
    snprintf(key, sizeof key, "%s.current", prefix);
    if (put(d, key, s->current) < 0)
        return -1;
    snprintf(key, sizeof key, "%s.freed", prefix);
    if (put(d, key, s->freed) < 0)
        return -1;
    snprintf(key, sizeof key, "%s.peak", prefix);
    return put(d, key, s->peak);
}

static PyObject *stats_dict(int dev)
{
    pcs_device_stats st;
    pcs_alloc_get_stats(dev, &st);
    static const char *pools[PCS_POOL_TYPES] = {"all", "small_pool", "large_pool"};
    struct {
        const char *name;
        const pcs_stat *arr;
    } arrays[] = {
        {"active", st.active},
        {"active_bytes", st.active_bytes},
        {"allocated_bytes", st.allocated_bytes},
        {"allocation", st.allocation},
        {"inactive_split", st.inactive_split},
        {"inactive_split_bytes", st.inactive_split_bytes},
        {"requested_bytes", st.requested_bytes},
        {"reserved_bytes", st.reserved_bytes},
        {"segment", st.segment},
    };
    PyObject *d = PyDict_New();
    if (!d)
        return NULL;
    char prefix[64];
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) {
        for (int k = 0; k < PCS_POOL_TYPES; k++) {
            snprintf(prefix, sizeof prefix, "%s.%s", arrays[i].name, pools[k]);
            if (put_stat(d, prefix, &arrays[i].arr[k]) < 0)
                goto fail;
        }
    }
    if (put_stat(d, "oversize_allocations", &st.oversize_allocations) < 0 ||
        put_stat(d, "oversize_segments", &st.oversize_segments) < 0 ||
        put(d, "num_alloc_retries", st.num_alloc_retries) < 0 ||
        put(d, "num_ooms", st.num_ooms) < 0 ||
        put(d, "num_sync_all_streams", st.num_sync_all_streams) < 0 ||
        put(d, "num_device_alloc", st.num_device_alloc) < 0 ||
        put(d, "num_device_free", st.num_device_free) < 0 ||
        put(d, "max_split_size", st.max_split_size) < 0)
        goto fail;
    /* PyTorch returns the keys sorted */
    PyObject *keys = PyDict_Keys(d);
    if (!keys || PyList_Sort(keys) < 0) {
        Py_XDECREF(keys);
        goto fail;
    }
    PyObject *sorted = PyDict_New();
    for (Py_ssize_t i = 0; sorted && i < PyList_GET_SIZE(keys); i++) {
        PyObject *k = PyList_GET_ITEM(keys, i);
        if (PyDict_SetItem(sorted, k, PyDict_GetItem(d, k)) < 0)
            Py_CLEAR(sorted);
    }
    Py_DECREF(keys);
    Py_DECREF(d);
    return sorted;
fail:
    Py_DECREF(d);
    return NULL;
}

static PyObject *py_memory_stats(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames)
{
    PCS_UNUSED(m);
    DEVICE_OR_RETURN(dev, "memory_stats", PyDict_New());
    return stats_dict(dev);
}

/* ------------------------------------------------------------------------ */
/* memory_snapshot                                                           */

static const char *state_name(int s)
{
    return s == 1 ? "active_allocated" : s == 2 ? "active_pending_free" : "inactive";
}

static PyObject *py_memory_snapshot(PyObject *m, PyObject *noargs)
{
    PCS_UNUSED(m);
    PCS_UNUSED(noargs);
    pcs_snapshot_segment *segs = NULL;
    size_t n = 0;
    if (pcs_device_count() > 0) {
        pcs_status st = pcs_alloc_snapshot(&segs, &n);
        if (st != PCS_OK)
            return pcs_alloc_raise(st), NULL;
    }
    PyObject *list = PyList_New(0);
    for (size_t i = 0; list && i < n; i++) {
        pcs_snapshot_segment *s = &segs[i];
        PyObject *blocks = PyList_New((Py_ssize_t)s->nblocks);
        if (!blocks) {
            Py_CLEAR(list);
            break;
        }
        for (size_t k = 0; k < s->nblocks; k++) {
            pcs_snapshot_block *b = &s->blocks[k];
            PyObject *bd = Py_BuildValue("{s:K,s:n,s:n,s:s,s:[]}", "address",
                                         (unsigned long long)b->address, "size",
                                         (Py_ssize_t)b->size, "requested_size",
                                         (Py_ssize_t)b->requested_size, "state",
                                         state_name(b->state), "frames");
            if (!bd) {
                Py_CLEAR(blocks);
                break;
            }
            PyList_SET_ITEM(blocks, (Py_ssize_t)k, bd);
        }
        PyObject *sd = blocks ? Py_BuildValue(
                                    "{s:i,s:K,s:n,s:n,s:n,s:n,s:K,s:s,s:(ii),s:O,s:[],s:N}",
                                    "device", s->device, "address",
                                    (unsigned long long)s->address, "total_size",
                                    (Py_ssize_t)s->total_size, "allocated_size",
                                    (Py_ssize_t)s->allocated_size, "active_size",
                                    (Py_ssize_t)s->active_size, "requested_size",
                                    (Py_ssize_t)s->requested_size, "stream",
                                    (unsigned long long)s->stream, "segment_type",
                                    s->is_small ? "small" : "large", "segment_pool_id", 0, 0,
                                    "is_expandable", Py_False, "frames", "blocks", blocks)
                              : NULL;
        if (!sd || PyList_Append(list, sd) < 0)
            Py_CLEAR(list);
        Py_XDECREF(sd);
    }
    pcs_alloc_snapshot_free(segs, n);
    return list;
}

static PyObject *py_caching_disabled(PyObject *m, PyObject *noargs)
{
    PCS_UNUSED(m);
    PCS_UNUSED(noargs);
    return PyBool_FromLong(pcs_alloc_caching_disabled());
}

#define FASTKW(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL | METH_KEYWORDS

static PyMethodDef memory_functions[] = {
    {"memory_allocated", FASTKW(py_memory_allocated),
     "memory_allocated(device=None)\n\nBytes occupied by live allocations on the device "
     "(each rounded as the allocator rounds it)."},
    {"max_memory_allocated", FASTKW(py_max_memory_allocated),
     "max_memory_allocated(device=None)\n\nPeak of memory_allocated() since the start or "
     "the last reset_peak_memory_stats()."},
    {"memory_reserved", FASTKW(py_memory_reserved),
     "memory_reserved(device=None)\n\nBytes the caching allocator holds from the driver "
     "(allocated plus cached)."},
    {"max_memory_reserved", FASTKW(py_max_memory_reserved),
     "max_memory_reserved(device=None)\n\nPeak of memory_reserved()."},
    {"reset_peak_memory_stats", FASTKW(py_reset_peak_memory_stats),
     "reset_peak_memory_stats(device=None)\n\nSet every peak to its current value."},
    {"reset_accumulated_memory_stats", FASTKW(py_reset_accumulated_memory_stats),
     "reset_accumulated_memory_stats(device=None)\n\nZero the allocated/freed counters and "
     "the event counts."},
    {"empty_cache", py_empty_cache, METH_NOARGS,
     "empty_cache()\n\nReturn every cached, unused segment to the driver. Memory held by "
     "live tensors stays."},
    {"set_per_process_memory_fraction", (PyCFunction)(void (*)(void))py_set_per_process_memory_fraction,
     METH_VARARGS | METH_KEYWORDS,
     "set_per_process_memory_fraction(fraction, device=None)\n\nCap what the allocator may "
     "reserve on the device at fraction * total memory; beyond it allocations raise "
     "OutOfMemoryError."},
    {"memory_stats", FASTKW(py_memory_stats),
     "memory_stats(device=None)\n\nThe allocator's statistics as a dict with PyTorch's keys "
     "(allocation, segment, active, inactive_split and their _bytes forms, each "
     ".{all,small_pool,large_pool}.{current,peak,allocated,freed}, requested_bytes.*, "
     "num_alloc_retries, num_ooms, num_device_alloc, num_device_free, ...)."},
    {"memory_snapshot", py_memory_snapshot, METH_NOARGS,
     "memory_snapshot()\n\nEvery segment of every device, with its blocks, as a list of dicts."},
    {"_caching_disabled", py_caching_disabled, METH_NOARGS,
     "True when PYTORCH_NO_CUDA_MEMORY_CACHING turned caching off."},
    {NULL, NULL, 0, NULL},
};

int pcs_memory_init(PyObject *module)
{
    pcs_alloc_set_blocking_hooks(release_gil, acquire_gil);
    return PyModule_AddFunctions(module, memory_functions);
}
