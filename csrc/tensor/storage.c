/* storage.c: UntypedStorage, one allocation with exactly one owner.
 *
 * Device memory comes from the caching allocator (allocator.c) and goes back
 * to it when the storage dies; host memory is aligned malloc, a pinned block
 * (host_allocator.c), or memory owned by another object that the storage
 * keeps alive (a NumPy array behind from_numpy). */
#include "tensor/storage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/device.h"
#include "runtime/host_allocator.h"
#include "runtime/stream.h"

/* ------------------------------------------------------------------------ */
/* Constructors                                                              */

static PcsStorage *storage_alloc(void)
{
    PcsStorage *s = (PcsStorage *)PcsStorage_Type.tp_alloc(&PcsStorage_Type, 0);
    if (!s)
        return NULL;
    s->device = -1;
    return s;
}

PcsStorage *pcs_storage_new_cuda(int device, size_t nbytes, cudaStream_t stream)
{
    if (pcs_check_device(device) < 0)
        return NULL;
    pcs_block *b;
    pcs_status st = pcs_alloc(device, nbytes, stream, &b);
    if (st != PCS_OK) {
        pcs_alloc_raise(st);
        return NULL;
    }
    PcsStorage *s = storage_alloc();
    if (!s) {
        pcs_free(b);
        return NULL;
    }
    s->kind = PCS_STORAGE_CUDA;
    s->block = b;
    s->data = pcs_block_ptr(b);
    s->nbytes = nbytes;
    s->device = device;
    return s;
}

PcsStorage *pcs_storage_new_cpu(size_t nbytes)
{
    void *p = NULL;
    if (nbytes) {
        /* 64-byte alignment: NumPy's SIMD loops and 16-byte vector copies
         * both like it, and aligned_alloc needs a multiple of it. */
        size_t rounded = (nbytes + 63) & ~(size_t)63;
        if (rounded < nbytes || !(p = aligned_alloc(64, rounded))) {
            PyErr_Format(PyExc_MemoryError, "cannot allocate %zu bytes of host memory", nbytes);
            return NULL;
        }
    }
    PcsStorage *s = storage_alloc();
    if (!s) {
        free(p);
        return NULL;
    }
    s->kind = PCS_STORAGE_CPU;
    s->data = p;
    s->nbytes = nbytes;
    return s;
}

PcsStorage *pcs_storage_new_pinned(size_t nbytes)
{
    if (pcs_require_cuda() < 0)
        return NULL;
    void *handle = NULL;
    void *p = pcs_host_alloc(nbytes, &handle);
    if (!p && nbytes)
        return NULL;
    PcsStorage *s = storage_alloc();
    if (!s) {
        pcs_host_free(handle);
        return NULL;
    }
    s->kind = PCS_STORAGE_PINNED;
    s->data = p;
    s->host_block = handle;
    s->nbytes = nbytes;
    return s;
}

PcsStorage *pcs_storage_wrap(void *data, size_t nbytes, PyObject *base)
{
    PcsStorage *s = storage_alloc();
    if (!s)
        return NULL;
    s->kind = PCS_STORAGE_EXTERNAL;
    s->data = data;
    s->nbytes = nbytes;
    Py_XINCREF(base);
    s->base = base;
    return s;
}

int pcs_storage_record_stream(PcsStorage *s, cudaStream_t stream)
{
    if (s->kind != PCS_STORAGE_CUDA)
        return 0;
    pcs_status st = pcs_record_stream(s->block, stream);
    return st == PCS_OK ? 0 : pcs_alloc_raise(st);
}

/* ------------------------------------------------------------------------ */
/* The Python type                                                           */

static PyObject *Storage_new(PyTypeObject *cls, PyObject *args, PyObject *kwds)
{
    PCS_UNUSED(cls);
    static char *kwlist[] = {"size", "device", NULL};
    Py_ssize_t size = 0;
    PyObject *devobj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|nO:UntypedStorage", kwlist, &size, &devobj))
        return NULL;
    if (size < 0) {
        PyErr_Format(PyExc_RuntimeError, "UntypedStorage: size must be non-negative, got %zd", size);
        return NULL;
    }
    int type = PCS_CPU, index = -1;
    if (devobj != Py_None && pcs_device_parse(devobj, &type, &index) < 0)
        return NULL;
    if (type == PCS_CPU)
        return (PyObject *)pcs_storage_new_cpu((size_t)size);
    if (index < 0) {
        if (pcs_require_cuda() < 0)
            return NULL;
        index = pcs_current_device();
    }
    if (pcs_check_device(index) < 0)
        return NULL;
    return (PyObject *)pcs_storage_new_cuda(index, (size_t)size, pcs_current_stream(index));
}

static void Storage_dealloc(PcsStorage *s)
{
    if (s->weakreflist)
        PyObject_ClearWeakRefs((PyObject *)s);
    switch (s->kind) {
    case PCS_STORAGE_CUDA:
        if (s->block && pcs_free(s->block) != PCS_OK)
            PyErr_WriteUnraisable((PyObject *)s); /* best effort: nothing to raise into */
        break;
    case PCS_STORAGE_CPU:
        free(s->data);
        break;
    case PCS_STORAGE_PINNED:
        if (s->host_block)
            pcs_host_free(s->host_block);
        break;
    case PCS_STORAGE_EXTERNAL:
        Py_XDECREF(s->base);
        break;
    }
    s->block = NULL;
    s->data = NULL;
    Py_TYPE(s)->tp_free((PyObject *)s);
}

static PyObject *Storage_data_ptr(PcsStorage *s, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    return PyLong_FromVoidPtr(s->data);
}

static PyObject *Storage_nbytes(PcsStorage *s, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    return PyLong_FromSize_t(s->nbytes);
}

static PyObject *Storage_is_pinned(PcsStorage *s, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    return PyBool_FromLong(s->kind == PCS_STORAGE_PINNED);
}

static PyObject *Storage_record_stream(PcsStorage *s, PyObject *arg)
{
    if (!PcsStream_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "record_stream() expects a cuda.Stream, got %.100s",
                     Py_TYPE(arg)->tp_name);
        return NULL;
    }
    PcsStream *st = (PcsStream *)arg;
    /* device memory the allocator does not own (CUDA IPC): nothing to record */
    if (s->device < 0) {
        PyErr_SetString(PyExc_RuntimeError, "record_stream() needs a CUDA storage");
        return NULL;
    }
    if (st->device != s->device) {
        PyErr_Format(PyExc_RuntimeError,
                     "record_stream(): the stream is on cuda:%d but the storage is on cuda:%d",
                     st->device, s->device);
        return NULL;
    }
    if (pcs_storage_record_stream(s, st->stream) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static Py_ssize_t Storage_len(PcsStorage *s) { return (Py_ssize_t)s->nbytes; }

static PyObject *Storage_get_device(PcsStorage *s, void *c)
{
    PCS_UNUSED(c);
    if (s->device < 0)
        return pcs_device_new(PCS_CPU, -1);
    return pcs_device_new(PCS_CUDA, s->device);
}

static PyObject *Storage_get_is_cuda(PcsStorage *s, void *c)
{
    PCS_UNUSED(c);
    return PyBool_FromLong(s->device >= 0);
}

static PyObject *Storage_repr(PcsStorage *s)
{
    if (s->device >= 0)
        return PyUnicode_FromFormat("<pycuda_sem.UntypedStorage of %zu bytes on cuda:%d at %p>",
                                    s->nbytes, s->device, s->data);
    return PyUnicode_FromFormat("<pycuda_sem.UntypedStorage of %zu bytes on cpu%s at %p>",
                                s->nbytes, s->kind == PCS_STORAGE_PINNED ? " (pinned)" : "",
                                s->data);
}

static PyMethodDef Storage_methods[] = {
    {"data_ptr", (PyCFunction)Storage_data_ptr, METH_NOARGS, "Address of the first byte."},
    {"nbytes", (PyCFunction)Storage_nbytes, METH_NOARGS, "Size in bytes."},
    {"size", (PyCFunction)Storage_nbytes, METH_NOARGS, "Size in bytes (as nbytes())."},
    {"is_pinned", (PyCFunction)Storage_is_pinned, METH_NOARGS,
     "True for page-locked host memory."},
    {"record_stream", (PyCFunction)Storage_record_stream, METH_O,
     "record_stream(stream)\n\nDeclare that work queued on `stream` uses this memory: "
     "when the storage is freed, the allocator will not hand the memory out again until "
     "that work has finished."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Storage_getset[] = {
    {"device", (getter)Storage_get_device, NULL, "Where the memory is.", NULL},
    {"is_cuda", (getter)Storage_get_is_cuda, NULL, "True for device memory.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PySequenceMethods Storage_as_sequence = {
    .sq_length = (lenfunc)Storage_len,
};

PyTypeObject PcsStorage_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pycuda_sem.UntypedStorage",
    .tp_basicsize = sizeof(PcsStorage),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "UntypedStorage(size=0, device=None)\n\nOne allocation of `size` bytes, on the "
              "CPU by default or on a CUDA device (from the caching allocator, for the "
              "current stream). The memory is returned when the object dies. Tensors "
              "are views of storages.",
    .tp_new = Storage_new,
    .tp_dealloc = (destructor)Storage_dealloc,
    .tp_repr = (reprfunc)Storage_repr,
    .tp_methods = Storage_methods,
    .tp_getset = Storage_getset,
    .tp_as_sequence = &Storage_as_sequence,
    .tp_weaklistoffset = offsetof(PcsStorage, weakreflist),
};

int pcs_storage_init(PyObject *module)
{
    if (PyType_Ready(&PcsStorage_Type) < 0)
        return -1;
    return PyModule_AddObjectRef(module, "UntypedStorage", (PyObject *)&PcsStorage_Type);
}
