/* storage.h: UntypedStorage, one allocation with exactly one owner.
 *
 * Kinds of memory a storage can own:
 *   CUDA     a block of the caching device allocator (returned on dealloc)
 *   CPU      ordinary 64-byte aligned host memory (free()d on dealloc)
 *   PINNED   a block of the caching pinned host allocator (host_allocator.h)
 *   EXTERNAL memory owned by another Python object (`base`, e.g. a NumPy
 *            array for from_numpy); the storage only keeps `base` alive.
 *            Host memory, or device memory mapped from another process
 *            (CUDA IPC, tensor/cuda_ipc.c: `device` set, no block)
 * Tensors hold a strong reference to their storage; views share it. */
#ifndef PCS_STORAGE_H
#define PCS_STORAGE_H

#include "runtime/allocator.h"
#include "runtime/memory.h"
#include "core/common.h"

typedef enum {
    PCS_STORAGE_CUDA = 0,
    PCS_STORAGE_CPU = 1,
    PCS_STORAGE_PINNED = 2,
    PCS_STORAGE_EXTERNAL = 3,
} pcs_storage_kind;

typedef struct {
    PyObject_HEAD
    void *data;
    size_t nbytes;
    int device; /* CUDA ordinal, -1 for host memory */
    pcs_storage_kind kind;
    pcs_block *block; /* CUDA */
    void *host_block; /* PINNED: handle from pcs_host_alloc */
    PyObject *base;   /* EXTERNAL */
    PyObject *weakreflist;
    /* Bumped by every in-place write through the API (Tensor._version): views
     * share it, so autograd can tell that a saved tensor was modified. */
    int64_t version;
} PcsStorage;

extern PyTypeObject PcsStorage_Type;
#define PcsStorage_Check(o) PyObject_TypeCheck((o), &PcsStorage_Type)

/* New storages; NULL with exception on failure (OutOfMemoryError for the
 * device). CUDA memory is allocated for use on `stream`. */
PcsStorage *pcs_storage_new_cuda(int device, size_t nbytes, cudaStream_t stream);
PcsStorage *pcs_storage_new_cpu(size_t nbytes);
PcsStorage *pcs_storage_new_pinned(size_t nbytes);
PcsStorage *pcs_storage_wrap(void *data, size_t nbytes, PyObject *base);

/* Marks that `stream` uses a CUDA storage (no-op for host memory). */
int pcs_storage_record_stream(PcsStorage *s, cudaStream_t stream);

int pcs_storage_init(PyObject *module);
int pcs_cuda_ipc_init(PyObject *module); /* cuda_ipc.c */
int pcs_storage_share_init(PyObject *module); /* storage_share.c */

#endif
