/* factories.h: the tensor factories (factories.c) other files call: the
 * filled allocations behind zeros/ones/full and the new_* methods, and the
 * pin_memory check they share. */
#ifndef PCS_FACTORIES_H
#define PCS_FACTORIES_H

#include "core/scalar.h"
#include "tensor/tensor.h"

int pcs_factories_init(PyObject *module);
int pcs_ranges_init(PyObject *module); /* ranges.c */

/* The keyword options every factory takes (dtype=, device=, pin_memory=,
 * requires_grad=False, out=None, layout=); `extra` names the factory's own
 * keywords. The positional args are the caller's business. */
typedef struct {
    int dtype; /* -1 when not given */
    int device;
    bool pinned;
    int format; /* memory_format= (core/memory_format.h), -2 when not given */
} pcs_factory_opts;
int pcs_factory_opts_parse(PyObject *const *args, Py_ssize_t nargs, PyObject *kw,
                           const char *fname, const char *const *extra, pcs_factory_opts *o);
/* A number argument; a one-element tensor counts as its value. */
int pcs_number_arg(PyObject *o, pcs_scalar *s);
/* Tensor.new_empty/zeros/ones/full/tensor and the legacy new(). */
extern PyMethodDef pcs_tensor_factory_methods[];
/* Allocates a like-tensor and fills with the scalar (factories and new_*). */
PcsTensor *pcs_tensor_full(int ndim, const int64_t *sizes, PyObject *value, int dtype, int device,
                           bool pinned);
PcsTensor *pcs_tensor_zeros(int ndim, const int64_t *sizes, int dtype, int device, bool pinned);
PcsTensor *pcs_tensor_ones(int ndim, const int64_t *sizes, int dtype, int device, bool pinned);
/* pin_memory=True with the result's device: 0 when allowed, -1 with an
 * exception (pinning is for CPU tensors and needs a GPU). */
int pcs_check_pinned(bool pinned, int device);


#endif
