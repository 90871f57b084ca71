/* cuda_ipc.c: the C half of sending CUDA tensors between processes
 * (torch.multiprocessing's CUDA IPC; the protocol is in
 * pycuda_sem/multiprocessing/_cuda_ipc.py).
 *
 * CUDA hands out IPC handles for whole cudaMalloc allocations, and a block of
 * the caching allocator lies inside a bigger segment, so the sender names the
 * segment (its handle) and where the storage starts in it (its offset), as
 * torch does. The receiver maps the segment once per handle and wraps
 * base + offset in an EXTERNAL storage on that device; the mapping is a
 * capsule that closes the handle when the last storage over it is gone.
 *
 *   _cuda_ipc_share(tensor)       -> (handle bytes, offset, nbytes) of its storage
 *   _cuda_ipc_open(device, handle) -> (capsule, base address)
 *   _cuda_ipc_storage(address, nbytes, device, keeper, dtype)
 *                                 -> a flat tensor of dtype over that memory,
 *                                    keeping `keeper` alive
 */
#include <string.h>

#include "runtime/device.h"
#include "tensor/tensor.h"

static PyObject *py_cuda_ipc_share(PyObject *self, PyObject *arg)
{
    PCS_UNUSED(self);
    if (!PcsTensor_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "_cuda_ipc_share() expects a Tensor, got %.100s",
                     Py_TYPE(arg)->tp_name);
        return NULL;
    }
    PcsStorage *s = ((PcsTensor *)arg)->storage;
    if (s->device < 0) {
        PyErr_SetString(PyExc_RuntimeError, "_cuda_ipc_share() needs a CUDA tensor");
        return NULL;
    }
    if (s->kind != PCS_STORAGE_CUDA || !s->block) {
        /* memory mapped from another process, or an empty storage */
        PyErr_SetString(PyExc_RuntimeError,
                        "pycuda_sem: only CUDA memory of this process's caching allocator can be "
                        "sent to another process (this storage is empty or was itself received "
                        "from another process; send a clone())");
        return NULL;
    }
    char *base = (char *)pcs_block_segment_base(s->block);
    cudaIpcMemHandle_t h;
    PcsDeviceGuard g;
    if (pcs_device_guard_enter(&g, s->device) < 0)
        return NULL;
    cudaError_t err = cudaIpcGetMemHandle(&h, base);
    pcs_device_guard_exit(&g);
    if (err != cudaSuccess) {
        pcs_cuda_error(err, "cudaIpcGetMemHandle", __FILE__, __LINE__);
        return NULL;
    }
    return Py_BuildValue("(y#nn)", (const char *)&h, (Py_ssize_t)sizeof h,
                         (Py_ssize_t)((char *)s->data - base), (Py_ssize_t)s->nbytes);
}

/* ---- the receiving side ------------------------------------------------------------ */

#define MAPPING "pycuda_sem.cuda_ipc_mapping"

typedef struct {
    void *base;
    int device;
} Mapping;

static void mapping_close(PyObject *capsule)
{
    Mapping *m = (Mapping *)PyCapsule_GetPointer(capsule, MAPPING);
    if (!m)
        return;
    /* Kernels of this process may still read or write the memory: wait for
     * the device before the mapping goes (torch synchronizes here too). */
    PcsDeviceGuard g;
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb); /* the destructor may run while an exception is set */
    if (pcs_device_guard_enter(&g, m->device) == 0) {
        cudaError_t err = cudaDeviceSynchronize();
        if (err == cudaSuccess)
            err = cudaIpcCloseMemHandle(m->base);
        /* at exit the runtime may be unloading: the mapping goes with the process */
        if (err != cudaSuccess && err != cudaErrorCudartUnloading)
            pcs_cuda_error(err, "cudaIpcCloseMemHandle", __FILE__, __LINE__);
        pcs_device_guard_exit(&g);
    }
    if (PyErr_Occurred())
        PyErr_WriteUnraisable(capsule); /* a destructor has no caller to raise to */
    PyErr_Restore(et, ev, tb);
    PyMem_Free(m);
}

static PyObject *py_cuda_ipc_open(PyObject *self, PyObject *args)
{
    PCS_UNUSED(self);
    PyObject *devobj;
    Py_buffer buf;
    if (!PyArg_ParseTuple(args, "Oy*:_cuda_ipc_open", &devobj, &buf))
        return NULL;
    PyObject *res = NULL;
    int dev = pcs_cuda_device_arg(devobj);
    if (dev < 0)
        goto out;
    if ((size_t)buf.len != sizeof(cudaIpcMemHandle_t)) {
        PyErr_Format(PyExc_ValueError, "a CUDA memory IPC handle has %zu bytes, got %zd",
                     sizeof(cudaIpcMemHandle_t), buf.len);
        goto out;
    }
    Mapping *m = (Mapping *)PyMem_Malloc(sizeof *m);
    if (!m) {
        PyErr_NoMemory();
        goto out;
    }
    cudaIpcMemHandle_t h;
    memcpy(&h, buf.buf, sizeof h);
    m->device = dev;
    m->base = NULL;
    PcsDeviceGuard g;
    if (pcs_device_guard_enter(&g, dev) < 0) {
        PyMem_Free(m);
        goto out;
    }
    cudaError_t err = cudaIpcOpenMemHandle(&m->base, h, cudaIpcMemLazyEnablePeerAccess);
    pcs_device_guard_exit(&g);
    if (err != cudaSuccess) {
        PyMem_Free(m);
        pcs_cuda_error(err, "cudaIpcOpenMemHandle", __FILE__, __LINE__);
        goto out;
    }
    PyObject *cap = PyCapsule_New(m, MAPPING, mapping_close);
    if (!cap) {
        PcsDeviceGuard g2;
        if (pcs_device_guard_enter(&g2, dev) == 0) {
            (void)cudaIpcCloseMemHandle(m->base); /* best effort on the error path */
            pcs_device_guard_exit(&g2);
        }
        PyMem_Free(m);
        goto out;
    }
    res = Py_BuildValue("(NK)", cap, (unsigned long long)(uintptr_t)m->base);
out:
    PyBuffer_Release(&buf);
    return res;
}

static PyObject *py_cuda_ipc_storage(PyObject *self, PyObject *args)
{
    PCS_UNUSED(self);
    unsigned long long addr;
    Py_ssize_t nbytes;
    int device;
    PyObject *keeper, *dtobj;
    if (!PyArg_ParseTuple(args, "KniOO:_cuda_ipc_storage", &addr, &nbytes, &device, &keeper,
                          &dtobj))
        return NULL;
    int dtype = pcs_dtype_arg(dtobj, -1);
    if (dtype < 0) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "_cuda_ipc_storage(): dtype must be a dtype");
        return NULL;
    }
    if (nbytes < 0 || nbytes % pcs_itemsize(dtype) != 0) {
        PyErr_Format(PyExc_ValueError,
                     "_cuda_ipc_storage(): %zd bytes is not a whole number of %s elements", nbytes,
                     pcs_dtypes[dtype].name);
        return NULL;
    }
    if (pcs_check_device(device) < 0)
        return NULL;
    PcsStorage *s = pcs_storage_wrap((void *)(uintptr_t)addr, (size_t)nbytes, keeper);
    if (!s)
        return NULL;
    s->device = device;
    int64_t size = nbytes / pcs_itemsize(dtype), stride = 1;
    PcsTensor *t = pcs_tensor_make_view(s, 0, 1, &size, &stride, dtype);
    Py_DECREF(s);
    return (PyObject *)t;
}

static PyMethodDef ipc_methods[] = {
    {"_cuda_ipc_share", py_cuda_ipc_share, METH_O,
     "(IPC handle of the segment, offset of the storage in it, storage bytes) of a CUDA tensor."},
    {"_cuda_ipc_open", py_cuda_ipc_open, METH_VARARGS,
     "Maps another process's segment: (capsule that unmaps it when it dies, base address)."},
    {"_cuda_ipc_storage", py_cuda_ipc_storage, METH_VARARGS,
     "A flat CUDA tensor of `dtype` over mapped memory, keeping `keeper` alive."},
    {NULL, NULL, 0, NULL},
};

int pcs_cuda_ipc_init(PyObject *module) { return PyModule_AddFunctions(module, ipc_methods); }
