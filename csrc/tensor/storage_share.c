/* storage_share.c: moving a CPU storage into other memory in place, the C
 * half of Tensor.share_memory_() (the Python half, which makes the shared
 * file and names it to other processes, is pycuda_sem/utils/data/_shm.py).
 *
 *   _storage_move_into(tensor, into) copies the bytes of tensor's storage
 *   into the storage of `into` (CPU memory owned by an object, e.g. a NumPy
 *   array over a shared mapping, at least as large) and makes tensor's
 *   storage use that memory from now on. The storage object stays the same,
 *   so every view of it sees the new memory, as torch's share_memory_().
 *
 * The old memory is not freed here but when the storage dies: a NumPy array
 * taken from the tensor before (numpy(), __array_interface__) points into
 * it, as may a CPU kernel running in another thread without the GIL; both
 * keep valid memory (the array keeps the values it had). */
#include <stdlib.h>
#include <string.h>

#include "runtime/host_allocator.h"
#include "tensor/tensor.h"

#define OLD_CPU "pycuda_sem.moved_cpu_memory"
#define OLD_PINNED "pycuda_sem.moved_pinned_memory"

static void free_old_cpu(PyObject *cap) { free(PyCapsule_GetPointer(cap, OLD_CPU)); }

static void free_old_pinned(PyObject *cap) { pcs_host_free(PyCapsule_GetPointer(cap, OLD_PINNED)); }

/* A new reference to an object that owns s's current memory until it dies. */
static PyObject *old_memory_owner(PcsStorage *s)
{
    switch (s->kind) {
    case PCS_STORAGE_CPU:
        return s->data ? PyCapsule_New(s->data, OLD_CPU, free_old_cpu) : Py_NewRef(Py_None);
    case PCS_STORAGE_PINNED:
        return s->host_block ? PyCapsule_New(s->host_block, OLD_PINNED, free_old_pinned)
                             : Py_NewRef(Py_None);
    case PCS_STORAGE_EXTERNAL:
        return Py_NewRef(s->base ? s->base : Py_None);
    case PCS_STORAGE_CUDA:
        break;
    }
    PyErr_SetString(PyExc_RuntimeError, "_storage_move_into(): a CUDA storage cannot move");
    return NULL;
}

static PyObject *py_storage_move_into(PyObject *self, PyObject *args)
{
    PCS_UNUSED(self);
    PyObject *a, *b;
    if (!PyArg_ParseTuple(args, "OO:_storage_move_into", &a, &b))
        return NULL;
    if (!PcsTensor_Check(a) || !PcsTensor_Check(b)) {
        PyErr_SetString(PyExc_TypeError, "_storage_move_into() expects two tensors");
        return NULL;
    }
    PcsStorage *s = ((PcsTensor *)a)->storage, *to = ((PcsTensor *)b)->storage;
    if (s->device >= 0 || to->device >= 0) {
        PyErr_SetString(PyExc_RuntimeError, "_storage_move_into(): both storages must be on the CPU");
        return NULL;
    }
    if (s == to || to->kind != PCS_STORAGE_EXTERNAL || !to->base) {
        PyErr_SetString(PyExc_ValueError,
                        "_storage_move_into(): the target must be another storage over memory "
                        "that an object owns (from_numpy)");
        return NULL;
    }
    if (to->nbytes < s->nbytes) {
        PyErr_Format(PyExc_ValueError,
                     "_storage_move_into(): the target has %zu bytes, the storage %zu", to->nbytes,
                     s->nbytes);
        return NULL;
    }
    PyObject *old = old_memory_owner(s);
    if (!old)
        return NULL;
    PyObject *base = PyTuple_Pack(2, to->base, old);
    Py_DECREF(old);
    if (!base)
        return NULL;
    if (s->nbytes)
        memcpy(to->data, s->data, s->nbytes);
    /* the storage's old owner reference, if any, now lives in `base` */
    Py_XDECREF(s->base);
    s->base = base;
    s->data = to->data;
    s->host_block = NULL;
    s->kind = PCS_STORAGE_EXTERNAL;
    Py_RETURN_NONE;
}

static PyMethodDef share_methods[] = {
    {"_storage_move_into", py_storage_move_into, METH_VARARGS,
     "_storage_move_into(tensor, into): tensor's storage copies its bytes into into's memory "
     "and uses it from now on (share_memory_); the old memory lives as long as the storage."},
    {NULL, NULL, 0, NULL},
};

int pcs_storage_share_init(PyObject *module) { return PyModule_AddFunctions(module, share_methods); }
