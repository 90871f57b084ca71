/* numpy_interop.h: the one door to NumPy's C-API.
 *
 * numpy_interop.c is the only file that includes NumPy's headers and the only
 * one that imports NumPy's C-API table (lazily, on first use: importing
 * pycuda_sem does not need it). Everything here speaks dtype ids and plain C
 * arrays, so the tensor files need no NumPy header. Objects that offer the
 * array protocols are read through NumPy, which validates them: nothing
 * parses an __array_interface__ dict by hand. */
#ifndef PCS_NUMPY_INTEROP_H
#define PCS_NUMPY_INTEROP_H

#include "core/common.h"

/* 1 if obj is a numpy.ndarray (or a subclass), 0 if not, -1 with exception
 * (NumPy cannot be imported). */
int pcs_numpy_is_array(PyObject *obj);

/* obj as an ndarray through NumPy's protocols (the array itself, a view of
 * what __array_interface__, __array_struct__, __array__ or the buffer
 * protocol describes, or a conversion): a new reference, or NULL with the
 * exception NumPy raised for a malformed description. */
PyObject *pcs_numpy_as_array(PyObject *obj);

/* What a tensor needs to know of an ndarray. The pointers are NumPy's own
 * and live as long as the array. */
typedef struct {
    int ndim; /* may exceed PCS_MAX_DIMS: check before reading sizes */
    const intptr_t *sizes;
    const intptr_t *strides; /* in bytes */
    void *data;
    int dtype;         /* our dtype id; -1 where we have none */
    int itemsize;
    bool writeable;
    bool native_order; /* false for byte-swapped arrays */
} pcs_ndarray_info;

/* Fills `info` from an ndarray; -1 with TypeError if `arr` is not one. */
int pcs_numpy_info(PyObject *arr, pcs_ndarray_info *info);

/* A new ndarray viewing `data` (dtype, sizes, strides in bytes) that keeps
 * `base` alive; writeable. `data` may be NULL only for an empty array. NULL with exception, TypeError for a dtype NumPy
 * lacks (bfloat16). */
PyObject *pcs_numpy_wrap(void *data, int dtype, int ndim, const int64_t *sizes,
                         const int64_t *byte_strides, PyObject *base);

/* The dtype id of a NumPy scalar (numpy.float32(1) ...); -1, with no
 * exception, for anything else or a NumPy type we do not have. */
int pcs_numpy_scalar_dtype(PyObject *obj);

#endif
