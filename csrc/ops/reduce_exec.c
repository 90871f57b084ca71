/* reduce_exec.c: how one reduction runs on each device, once the front door
 * (ops_reduce.c) has parsed the call and made the results.
 *
 * CUDA: a dense input whose reduced dims are one run in memory order is
 * read in place as an [A, K, B] block (pcs_iter_reduce_blocks); one whose
 * reduced dims are two runs (x.sum((0, 2))) is read in place by two passes
 * (pcs_iter_reduce_split, kernels/reduce_split.cu); anything else is first
 * copied with the kept dims in front. The CPU: NumPy over zero-copy views
 * (pycuda_sem/_ops.py). */
#include "ops/reduce.h"
#include "core/iter.h"
#include "runtime/device.h"

#include <string.h>

#include "tensor/copy.h"
#include "runtime/stream.h"
#include "runtime/stream_semaphores.h"

static int reduce_split(const red_call *c, PcsTensor *x, const int64_t blk[5], size_t bytes,
                        PcsTensor *res)
{
    int dev = x->device;
    int64_t n = (int64_t)bytes;
    PcsTensor *ws = pcs_tensor_empty(1, &n, PCS_UINT8, dev, false);
    if (!ws)
        return -1;
    int r = -1;
    if (pcs_cuda_set_device_raw(dev) == 0) {
        cudaStream_t stream = pcs_current_stream(dev);
        if (pcs_launch_reduce_split(c->op, x->dtype, pcs_tensor_data(res), pcs_tensor_data(x),
                                    blk[0], blk[1], blk[2], blk[3], blk[4], c->param,
                                    pcs_tensor_data(ws), stream) < 0)
            pcs_not_implemented(c->name, x->dtype);
        else
            r = PCS_CHECK_LAUNCH(stream, c->name);
    }
    Py_DECREF(ws);
    return r;
}

int pcs_reduce_exec_cuda(const red_call *c, PcsTensor *x, const bool *mask, PcsTensor *res,
                       PcsTensor *idx)
{
    int nd = x->ndim, dev = x->device;
    int64_t A = 1, K = 1, B = 1;
    PcsTensor *src = NULL, *ws = NULL;
    int r = -1;
    /* A dense input whose reduced dims are one run in memory order (any
     * permutation of a contiguous tensor, x.t() included): [A, K, B] in place. */
    int64_t blk[5];
    size_t sbytes = 0;
    if (pcs_iter_reduce_blocks(nd, x->sizes, x->strides, mask, &A, &K, &B)) {
        src = (PcsTensor *)Py_NewRef(x);
    } else if (!idx && pcs_iter_reduce_split(nd, x->sizes, x->strides, mask, blk) &&
               pcs_reduce_split_plan(c->op, x->dtype, blk[0], blk[1], blk[2], blk[3], blk[4],
                                     &sbytes) == 0) {
        /* Two reduced runs (x.sum((0, 2))): two passes over the input in
         * place instead of a permuted copy. */
        return reduce_split(c, x, blk, sbytes, res);
    } else {
        int64_t sizes[PCS_MAX_DIMS], strides[PCS_MAX_DIMS];
        int k = 0;
        A = K = B = 1;
        for (int pass = 0; pass < 2; pass++)
            for (int i = 0; i < nd; i++)
                if (mask[i] == (pass == 1)) {
                    sizes[k] = x->sizes[i];
                    strides[k++] = x->strides[i];
                    *(pass ? &K : &A) *= x->sizes[i];
                }
        PcsTensor *v = pcs_tensor_alias(x, x->offset, nd, sizes, strides);
        src = v ? pcs_tensor_contiguous(v, false) : NULL;
        Py_XDECREF(v);
        if (!src)
            return -1;
    }
    size_t wbytes = pcs_reduce_workspace(c->op, src->dtype, A, K, B, dev);
    if (wbytes) {
        int64_t n = (int64_t)wbytes;
        if (!(ws = pcs_tensor_empty(1, &n, PCS_UINT8, dev, false)))
            goto out;
    }
    if (pcs_cuda_set_device_raw(dev) < 0)
        goto out;
    cudaStream_t stream = pcs_current_stream(dev);
    /* A split reduction (it has a workspace) combines its splits in one
     * launch when the stream lends counters. */
    unsigned *sem = NULL;
    if (wbytes && pcs_stream_semaphores(dev, stream, &sem) < 0)
        goto out;
    if (pcs_launch_reduce(c->op, src->dtype, res ? pcs_tensor_data(res) : NULL,
                          idx ? (int64_t *)pcs_tensor_data(idx) : NULL, pcs_tensor_data(src), A, K,
                          B, c->param, ws ? pcs_tensor_data(ws) : NULL, sem, dev, stream) < 0) {
        pcs_not_implemented(c->name, src->dtype);
        goto out;
    }
    r = PCS_CHECK_LAUNCH(stream, c->name);
out:
    Py_XDECREF(ws);
    Py_XDECREF(src);
    return r;
}

static PyObject *axes_tuple(const bool *mask, int nd)
{
    int k = 0;
    for (int i = 0; i < nd; i++)
        k += mask[i];
    PyObject *t = PyTuple_New(k);
    for (int i = 0, j = 0; t && i < nd; i++) {
        if (!mask[i])
            continue;
        PyObject *v = PyLong_FromLong(i);
        if (!v)
            Py_CLEAR(t);
        else
            PyTuple_SET_ITEM(t, j++, v);
    }
    return t;
}

int pcs_reduce_exec_cpu(const red_call *c, PcsTensor *x, const bool *mask, PcsTensor *res,
                      PcsTensor *idx)
{
    PyObject *fn = pcs_ops_numpy_fn("reduce");
    if (!fn)
        return -1;
    /* One step at a time: nothing may run with an earlier step's exception
     * pending (NumPy could clear it, and the caller would return NULL with
     * no exception set). */
    PcsTensor *tmp = NULL, *shrunk = NULL;
    PyObject *xa = NULL, *axes = NULL, *oa = NULL, *ia = NULL, *rr = NULL;
    /* An empty input may have dims NumPy cannot describe (zeros(0, 2**62)
     * is "too big" for it). With no element, a reduced dim's length changes
     * nothing, so those dims shrink to 1 (the empty ones stay 0). */
    if (pcs_tensor_numel(x) == 0) {
        int64_t sz[PCS_MAX_DIMS];
        for (int i = 0; i < x->ndim; i++)
            sz[i] = mask[i] && x->sizes[i] > 1 ? 1 : x->sizes[i];
        if (!(shrunk = pcs_tensor_alias(x, x->offset, x->ndim, sz, x->strides)))
            return -1;
        x = shrunk;
    }
    if ((xa = pcs_ops_numpy_in(x, x->dtype)) && (axes = axes_tuple(mask, x->ndim)) &&
        (oa = res ? pcs_np_out(res, &tmp) : Py_NewRef(Py_None)) &&
        (ia = idx ? pcs_tensor_numpy(idx) : Py_NewRef(Py_None)))
        rr = PyObject_CallFunction(fn, "sOOOOd", c->name, xa, axes, oa, ia, c->param);
    int r = rr ? 0 : -1;
    if (r == 0 && tmp)
        r = pcs_copy(res, tmp, false);
    Py_XDECREF(rr);
    Py_XDECREF(xa);
    Py_XDECREF(axes);
    Py_XDECREF(oa);
    Py_XDECREF(ia);
    Py_XDECREF(tmp);
    Py_XDECREF(shrunk);
    return r;
}

