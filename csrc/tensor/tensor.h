/* tensor.h: the Tensor object and the small C API other concept files use.
 *
 * A tensor is a view: a storage (CUDA, CPU, pinned or external memory), an
 * element offset into it, sizes and strides in elements, a dtype and a device
 * (-1 for the CPU). Views share the storage; nothing here copies unless a
 * function says so. The code is split by concept:
 *   tensor.c         the type, attributes, conversions to Python, the C API
 *   tensor_args.c    Size, geometry helpers, argument parsing
 *   tensor_views.c   view, reshape, permute, expand, narrow, select, ...
 *   tensor_index.c   __getitem__ / __setitem__
 *   tensor_data.c    NumPy interop, nested-list parsing, tolist
 *   tensor_methods.c to, cuda, cpu, copy_, fill_, type, pin_memory
 *   copy.c           every copy between any two tensors
 * The factories (empty, zeros, ..., new_*) are ops (ops/factories.c); the
 * type object is completed by python/tensor_type.c. */
#ifndef PCS_TENSOR_H
#define PCS_TENSOR_H

#include "core/common.h"
#include "core/dtype.h"
#include "tensor/storage.h"

/* (copy.h declares the copying half of the C API: pcs_copy, pcs_tensor_to,
 * pcs_tensor_contiguous, pcs_fill_bytes.) */

typedef struct {
    PyObject_HEAD
    PcsStorage *storage; /* strong reference, never NULL */
    int64_t offset;      /* in elements */
    int ndim;
    int dtype;  /* pcs_dtype */
    int device; /* CUDA ordinal, -1 for the CPU */
    int64_t sizes[PCS_MAX_DIMS];
    int64_t strides[PCS_MAX_DIMS];
    PyObject *dict; /* user attributes, created on demand */
    PyObject *weakreflist;
    /* Autograd's per-tensor record (requires_grad, grad, grad_fn, hooks),
     * NULL for a tensor autograd never saw. Opaque here: the autograd layer
     * owns it and frees it through pcs_tensor_autograd_free. */
    void *autograd;
} PcsTensor;

/* Installed by the autograd layer: frees t->autograd when a tensor dies. */
extern void (*pcs_tensor_autograd_free)(PcsTensor *t);

extern PyTypeObject PcsTensor_Type;
#define PcsTensor_Check(o) PyObject_TypeCheck((o), &PcsTensor_Type)

/* ---- C API ---------------------------------------------------------------- */

/* New contiguous tensor of `dtype` on `device` (-1: CPU, pinned if `pinned`).
 * CUDA memory comes from the caching allocator on the device's current
 * stream. Contents are uninitialised. */
PcsTensor *pcs_tensor_empty(int ndim, const int64_t *sizes, int dtype, int device, bool pinned);
/* Same, with explicit strides (empty_strided). */
PcsTensor *pcs_tensor_empty_strided(int ndim, const int64_t *sizes, const int64_t *strides,
                                    int dtype, int device, bool pinned);
/* A new tensor object viewing `storage` (new reference taken). */
PcsTensor *pcs_tensor_make_view(PcsStorage *storage, int64_t offset, int ndim,
                                const int64_t *sizes, const int64_t *strides, int dtype);
/* An alias of t with other geometry (same storage, dtype, device). */
/* dst takes src's storage (a new reference; dst's old one, if any, is
 * released), offset, sizes, strides, dtype and device. */
void pcs_tensor_take_geometry(PcsTensor *dst, const PcsTensor *src);
/* An alias of all of t as an object of `type` (Tensor or a subclass of it). */
PcsTensor *pcs_tensor_alias_as(PyTypeObject *type, PcsTensor *t);
PcsTensor *pcs_tensor_alias(PcsTensor *t, int64_t offset, int ndim, const int64_t *sizes,
                            const int64_t *strides);

int64_t pcs_tensor_numel(const PcsTensor *t);
bool pcs_tensor_is_contiguous(const PcsTensor *t);
/* Address of element [0, 0, ...]. */
static inline void *pcs_tensor_data(const PcsTensor *t)
{
    return (char *)t->storage->data + t->offset * pcs_itemsize(t->dtype);
}
bool pcs_tensor_is_pinned(const PcsTensor *t);

/* Contiguous strides for sizes. */
void pcs_contiguous_strides(int ndim, const int64_t *sizes, int64_t *strides);

/* Wraps a possibly negative dim into [0, ndim) (ndim 0 accepts -1 and 0), or
 * -1 with IndexError as torch words it. */
int pcs_wrap_dim(int64_t dim, int ndim);

/* Parses sizes given as varargs ints or one sequence (torch.Size, tuple,
 * list). Returns ndim, or -1 with exception. */
int pcs_parse_sizes(PyObject *const *args, Py_ssize_t nargs, int64_t *sizes);
/* Same, without the non-negative check (view(-1), permute(...)). */
int pcs_parse_ints(PyObject *const *args, Py_ssize_t nargs, int64_t *out);
/* A sequence argument as a tuple owning its items (new reference), or NULL
 * with TypeError(msg): read items from it, never from a list, when reading
 * one can run Python code (__index__, __float__) that changes the list. */
PyObject *pcs_sequence_tuple(PyObject *obj, const char *msg);

/* An int argument (through __index__) as int64: 0, or -1 with TypeError or
 * OverflowError. One call per argument, checked before the next: a second
 * conversion must never run with the first one's exception still set. */
int pcs_int64_arg(PyObject *obj, int64_t *out);

/* Argument `pos` of a METH_FASTCALL|METH_KEYWORDS call, given positionally or
 * by `name`; NULL (no exception) when absent. */
PyObject *pcs_arg(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, Py_ssize_t pos,
                  const char *name);
/* -1 with TypeError if a keyword is not in the NULL-terminated `names`. */
int pcs_check_kwargs(PyObject *kwnames, const char *fname, const char *const *names);
/* The memory format of a method whose only argument is memory_format=
 * (clone, contiguous, half, cpu ...), taken by keyword or, up to
 * `max_pos`, by position; `dflt` when absent. The format (core/
 * memory_format.h), or -1 with TypeError. */
int pcs_memory_format_only_arg(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                               const char *fname, Py_ssize_t max_pos, int dflt);

/* The device an argument names; None -> dflt. CUDA with no index -> the
 * current device; validated. Returns the ordinal, -1 for the CPU, or -2
 * with exception. */
int pcs_device_arg(PyObject *obj, int dflt);

/* Python objects for tensor facts. */
PyObject *pcs_size_new(int ndim, const int64_t *sizes); /* pycuda_sem.Size */
bool pcs_size_check(PyObject *obj);
int pcs_size_init(PyObject *module); /* registers pycuda_sem.Size */
PyObject *pcs_tensor_device_object(const PcsTensor *t);

/* ---- functions implemented in the other tensor files ---------------------- */

/* tensor_data.c */
PyObject *pcs_tensor_tolist(PcsTensor *t);
PyObject *pcs_tensor_numpy(PcsTensor *t);
PyObject *pcs_tensor_array_interface(PcsTensor *t);
/* A CPU tensor sharing an ndarray's memory; TypeError for anything else. */
PcsTensor *pcs_tensor_from_numpy(PyObject *array);
/* A CPU tensor sharing the memory of anything NumPy reads as an array, read
 * and validated by NumPy's C-API; warn_readonly: torch's warning for memory
 * NumPy marks read-only (from_numpy and as_tensor share it; tensor() copies). */
PcsTensor *pcs_tensor_from_array_like(PyObject *obj, bool warn_readonly);
/* 1 if tensor(data) reads `data` through NumPy (an ndarray, a NumPy scalar,
 * anything with __array_interface__), 0 if not, -1 with exception. */
int pcs_has_array_interface(PyObject *obj);
/* tensor(data, dtype, device, pin_memory): dtype -1 infers; device
 * PCS_DEVICE_UNSET keeps a tensor's device (the CPU for other data). */
#define PCS_DEVICE_UNSET (-3)
PcsTensor *pcs_tensor_from_data(PyObject *data, int dtype, int device, bool pinned);
/* A scalar element as a Python object (syncs for CUDA). */
PyObject *pcs_tensor_item(PcsTensor *t);

/* tensor.c: the type's own methods, getters and number slots; the type
 * object is completed (op methods, operators) by python/tensor_type.c. */
extern PyMethodDef pcs_tensor_core_methods[];
extern PyGetSetDef pcs_tensor_core_getset[];
extern PyNumberMethods pcs_tensor_as_number;

/* tensor_views.c */
/* A shape every tensor must have: 0..PCS_MAX_DIMS dims, sizes >= 0, and an
 * element count that fits an int64 (so that pcs_tensor_numel and the
 * products of sizes elsewhere never overflow). -1 with RuntimeError (torch's
 * "numel: integer multiplication overflow" for the count). Builders of sizes
 * check the dim count with pcs_check_ndim before they write fixed arrays;
 * pcs_tensor_make_view checks the whole shape again. */
int pcs_check_shape(int ndim, const int64_t *sizes);
/* -1 with `exc` (RuntimeError, or IndexError for indexing) naming the limit
 * when ndim > PCS_MAX_DIMS; else 0. */
int pcs_check_ndim(int64_t ndim, PyObject *exc);
PcsTensor *pcs_tensor_view(PcsTensor *t, int ndim, const int64_t *sizes); /* -1 allowed */
PcsTensor *pcs_tensor_reshape(PcsTensor *t, int ndim, const int64_t *sizes);
PcsTensor *pcs_tensor_expand(PcsTensor *t, int ndim, const int64_t *sizes);
PcsTensor *pcs_tensor_select(PcsTensor *t, int dim, int64_t index);
extern PyMethodDef pcs_tensor_view_methods[];
extern PyGetSetDef pcs_tensor_view_getset[];

/* tensor_index.c */
PyObject *pcs_tensor_getitem(PyObject *self, PyObject *index);
int pcs_tensor_setitem(PyObject *self, PyObject *index, PyObject *value);
/* Advanced indexing (tensors, lists, bools in the index) is op work: the
 * ops layer installs these at init; getitem/setitem hand them the whole
 * index expression. */
typedef PyObject *(*pcs_getitem_hook)(PcsTensor *t, PyObject *index);
typedef int (*pcs_setitem_hook)(PcsTensor *t, PyObject *index, PyObject *value);
void pcs_tensor_set_index_hooks(pcs_getitem_hook get, pcs_setitem_hook set);
/* What basic and advanced indexing share: IndexError for two Ellipses or
 * more indexed dims than ndim; a slice over a dim of `size` as start,
 * length and step (ValueError for a step <= 0, as torch). 0 or -1. */
int pcs_index_check_counts(int ellipses, int consumed, int ndim);
int pcs_index_slice(PyObject *slice, int64_t size, int64_t *start, int64_t *len, int64_t *step);

/* tensor_methods.c */
extern PyMethodDef pcs_tensor_copy_methods[];
/* t.fill_(value) for a Python number or a one-element tensor. */
int pcs_tensor_fill(PcsTensor *t, PyObject *value);

/* dlpack.c (_to_dlpack/_from_dlpack) and tensor_set.c (the primitives under
 * resize_/set_/view_as_complex): module functions, registered after the
 * autograd wrapping (they are not differentiable ops) */
int pcs_dlpack_init(PyObject *module);
int pcs_tensor_set_init(PyObject *module);


#endif
