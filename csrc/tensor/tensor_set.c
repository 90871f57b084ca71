/* tensor_set.c: the primitives under Tensor.resize_, resize_as_, set_ and
 * view_as_real/view_as_complex (their torch rules, the autograd refusal and
 * the argument forms are Python: pycuda_sem/_tensor_set.py).
 *
 *   _tensor_set_geometry(self, source, storage_offset, size, stride)
 *       self becomes a view of `source` (a Tensor's storage, or an
 *       UntypedStorage) with that geometry, in place: self keeps its identity
 *       (hooks, attributes) and its dtype
 *   _storage_resize_(source, nbytes)
 *       grows a storage in place to at least nbytes, keeping its bytes: every
 *       tensor over it sees the new memory, as torch's storage resize
 *   _alias_dtype(tensor, dtype, storage_offset, size, stride)
 *       a new view of the tensor's storage read as another dtype (offset and
 *       strides in elements of that dtype)
 * Every geometry is checked against the storage's bytes before it is taken. */
#include <stdlib.h>
#include <string.h>

#include "runtime/device.h"
#include "runtime/stream.h"
#include "tensor/tensor.h"

static PcsStorage *storage_of(PyObject *obj, const char *fname)
{
    if (PcsTensor_Check(obj))
        return ((PcsTensor *)obj)->storage;
    if (PcsStorage_Check(obj))
        return (PcsStorage *)obj;
    PyErr_Format(PyExc_TypeError, "%s(): expected a Tensor or an UntypedStorage, got %.100s",
                 fname, Py_TYPE(obj)->tp_name);
    return NULL;
}

/* Parses (size, stride, storage_offset) and checks that the view lies
 * within `nbytes` bytes for elements of `itemsize`. ndim, or -1. */
static int parse_geometry(PyObject *size, PyObject *stride, PyObject *offobj, size_t nbytes,
                          int itemsize, int64_t *sizes, int64_t *strides, int64_t *offset)
{
    int ndim = pcs_parse_ints(&size, 1, sizes);
    if (ndim < 0)
        return -1;
    int nst = pcs_parse_ints(&stride, 1, strides);
    if (nst < 0)
        return -1;
    if (nst != ndim) {
        PyErr_Format(PyExc_RuntimeError, "mismatch in length of strides and shape (%d vs %d)",
                     nst, ndim);
        return -1;
    }
    if (pcs_int64_arg(offobj, offset) < 0)
        return -1;
    if (*offset < 0) {
        PyErr_Format(PyExc_RuntimeError, "Tensor: invalid storage offset %lld",
                     (long long)*offset);
        return -1;
    }
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] < 0 || strides[i] < 0) {
            PyErr_SetString(PyExc_RuntimeError, "sizes and strides must be non-negative");
            return -1;
        }
    }
    if (pcs_check_shape(ndim, sizes) < 0)
        return -1;
    bool empty = false;
    for (int i = 0; i < ndim; i++)
        empty |= sizes[i] == 0;
    /* bytes reached: itemsize * (offset + 1 + sum((size - 1) * stride)) */
    uint64_t last = (uint64_t)*offset, term, need;
    if (!empty) {
        for (int i = 0; i < ndim; i++)
            if (__builtin_mul_overflow((uint64_t)(sizes[i] - 1), (uint64_t)strides[i], &term) ||
                __builtin_add_overflow(last, term, &last))
                goto out_of_bounds;
        if (__builtin_add_overflow(last, (uint64_t)1, &last))
            goto out_of_bounds;
    }
    if (__builtin_mul_overflow(last, (uint64_t)itemsize, &need) || need > nbytes)
        goto out_of_bounds;
    return ndim;
out_of_bounds:
    PyErr_Format(PyExc_RuntimeError,
                 "setStorage: sizes and strides at storage offset %lld reach outside the "
                 "storage of %zu bytes", (long long)*offset, nbytes);
    return -1;
}

static PyObject *py_tensor_set_geometry(PyObject *self, PyObject *args)
{
    PCS_UNUSED(self);
    PyObject *tobj, *src, *offobj, *size, *stride;
    if (!PyArg_ParseTuple(args, "O!OOOO:_tensor_set_geometry", &PcsTensor_Type, &tobj, &src,
                          &offobj, &size, &stride))
        return NULL;
    PcsTensor *t = (PcsTensor *)tobj;
    PcsStorage *s = storage_of(src, "_tensor_set_geometry");
    if (!s)
        return NULL;
    int64_t sizes[PCS_MAX_DIMS], strides[PCS_MAX_DIMS], offset;
    int ndim = parse_geometry(size, stride, offobj, s->nbytes, pcs_itemsize(t->dtype), sizes,
                              strides, &offset);
    if (ndim < 0)
        return NULL;
    PcsStorage *old = t->storage;
    t->storage = (PcsStorage *)Py_NewRef((PyObject *)s);
    t->offset = offset;
    t->ndim = ndim;
    t->device = s->device;
    memcpy(t->sizes, sizes, sizeof sizes);
    memcpy(t->strides, strides, sizeof strides);
    Py_DECREF(old);
    t->storage->version++; /* an in-place op: saved copies of self are stale */
    return Py_NewRef(tobj);
}

/* ------------------------------------------------------------------------ */
/* Growing a storage in place                                                */

static int grow_cpu(PcsStorage *s, size_t nbytes)
{
    size_t rounded = (nbytes + 63) & ~(size_t)63; /* as pcs_storage_new_cpu */
    void *p = rounded < nbytes ? NULL : aligned_alloc(64, rounded);
    if (!p) {
        PyErr_Format(PyExc_MemoryError, "cannot allocate %zu bytes of host memory", nbytes);
        return -1;
    }
    if (s->nbytes)
        memcpy(p, s->data, s->nbytes);
    free(s->data);
    s->data = p;
    s->nbytes = nbytes;
    return 0;
}

static int grow_cuda(PcsStorage *s, size_t nbytes)
{
    cudaStream_t stream = pcs_current_stream(s->device);
    pcs_block *b;
    pcs_status st = pcs_alloc(s->device, nbytes, stream, &b);
    if (st != PCS_OK)
        return pcs_alloc_raise(st);
    void *p = pcs_block_ptr(b);
    if (s->block && s->nbytes) {
        PcsDeviceGuard g;
        if (pcs_device_guard_enter(&g, s->device) < 0) {
            (void)pcs_free(b);
            return -1;
        }
        cudaError_t err = cudaMemcpyAsync(p, s->data, s->nbytes, cudaMemcpyDeviceToDevice, stream);
        pcs_device_guard_exit(&g);
        if (err != cudaSuccess) {
            (void)pcs_free(b);
            return pcs_cuda_error(err, "cudaMemcpyAsync", __FILE__, __LINE__);
        }
        /* the copy reads the old block on this stream: it must not be handed
         * out again (on its own stream) before the copy has run */
        if (pcs_storage_record_stream(s, stream) < 0) {
            (void)pcs_free(b);
            return -1;
        }
    }
    if (s->block && (st = pcs_free(s->block)) != PCS_OK) {
        (void)pcs_free(b);
        return pcs_alloc_raise(st);
    }
    s->block = b;
    s->data = p;
    s->nbytes = nbytes;
    return 0;
}

static PyObject *py_storage_resize(PyObject *self, PyObject *args)
{
    PCS_UNUSED(self);
    PyObject *src, *nobj;
    if (!PyArg_ParseTuple(args, "OO:_storage_resize_", &src, &nobj))
        return NULL;
    PcsStorage *s = storage_of(src, "_storage_resize_");
    if (!s)
        return NULL;
    int64_t n;
    if (pcs_int64_arg(nobj, &n) < 0)
        return NULL;
    if (n < 0) {
        PyErr_Format(PyExc_RuntimeError, "_storage_resize_: negative size %lld", (long long)n);
        return NULL;
    }
    if ((uint64_t)n <= s->nbytes) /* torch never shrinks a storage on resize_ */
        Py_RETURN_NONE;
    int rc;
    if (s->kind == PCS_STORAGE_CPU) {
        rc = grow_cpu(s, (size_t)n);
    } else if (s->kind == PCS_STORAGE_CUDA) {
        rc = grow_cuda(s, (size_t)n);
    } else {
        /* memory owned by another object (NumPy, DLPack, IPC) or a pinned block */
        PyErr_SetString(PyExc_RuntimeError, "Trying to resize storage that is not resizable");
        rc = -1;
    }
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_alias_dtype(PyObject *self, PyObject *args)
{
    PCS_UNUSED(self);
    PyObject *tobj, *dtobj, *offobj, *size, *stride;
    if (!PyArg_ParseTuple(args, "O!OOOO:_alias_dtype", &PcsTensor_Type, &tobj, &dtobj, &offobj,
                          &size, &stride))
        return NULL;
    int dtype = pcs_dtype_arg(dtobj, -1);
    if (dtype < 0) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "_alias_dtype(): dtype must be a dtype");
        return NULL;
    }
    PcsStorage *s = ((PcsTensor *)tobj)->storage;
    int64_t sizes[PCS_MAX_DIMS], strides[PCS_MAX_DIMS], offset;
    int ndim = parse_geometry(size, stride, offobj, s->nbytes, pcs_itemsize(dtype), sizes,
                              strides, &offset);
    if (ndim < 0)
        return NULL;
    return (PyObject *)pcs_tensor_make_view(s, offset, ndim, sizes, strides, dtype);
}

static PyMethodDef set_methods[] = {
    {"_tensor_set_geometry", py_tensor_set_geometry, METH_VARARGS,
     "_tensor_set_geometry(self, source, storage_offset, size, stride)\n\nIn place: self views "
     "source's storage with that geometry (bounds-checked)."},
    {"_storage_resize_", py_storage_resize, METH_VARARGS,
     "_storage_resize_(source, nbytes)\n\nGrows the storage in place, keeping its bytes."},
    {"_alias_dtype", py_alias_dtype, METH_VARARGS,
     "_alias_dtype(tensor, dtype, storage_offset, size, stride)\n\nA view of the tensor's "
     "storage as another dtype (bounds-checked)."},
    {NULL, NULL, 0, NULL},
};

int pcs_tensor_set_init(PyObject *module) { return PyModule_AddFunctions(module, set_methods); }
