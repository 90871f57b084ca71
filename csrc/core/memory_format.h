/* memory_format.h: torch's memory formats (pycuda_sem.contiguous_format,
 * channels_last, channels_last_3d, preserve_format), the objects and the
 * strides each gives a new tensor.
 *
 * A memory format names an order of the dims in memory: row-major, the
 * channels last of a 4-D NCHW batch (strides of an NHWC array) or of a 5-D
 * NCDHW one, or "as the input is" (preserve_format, resolved by the tensor
 * layer, which knows the input). */
#ifndef PCS_MEMORY_FORMAT_H
#define PCS_MEMORY_FORMAT_H

#include "core/common.h"

enum {
    PCS_FORMAT_CONTIGUOUS = 0,
    PCS_FORMAT_CHANNELS_LAST = 1,
    PCS_FORMAT_CHANNELS_LAST_3D = 2,
    PCS_FORMAT_PRESERVE = 3,
    PCS_NUM_FORMATS
};

/* The format of a memory_format= argument: `dflt` for NULL or None, -1
 * with TypeError for anything but a memory format object. */
int pcs_memory_format_arg(PyObject *obj, int dflt, const char *fname);

/* Row-major, channels_last or channels_last_3d strides over sizes (size-1
 * dims count as 1, as torch's). -1 with RuntimeError when a channels-last
 * format meets the wrong number of dims; preserve is the caller's to
 * resolve and is refused here. */
int pcs_format_strides(int fmt, int ndim, const int64_t *sizes, int64_t *strides);

/* Whether strides are those of the format over sizes, size-1 dims ignored
 * (torch's is_contiguous(memory_format=...)): false for a channels-last
 * format and the wrong number of dims. */
bool pcs_format_matches(int fmt, int ndim, const int64_t *sizes, const int64_t *strides);

/* torch's suggest_memory_format: channels_last(_3d) when the strides are
 * those of it and not also row-major, else contiguous. */
int pcs_suggest_format(int ndim, const int64_t *sizes, const int64_t *strides);

/* Registers the type and the four objects on the module. */
int pcs_memory_format_init(PyObject *module);

#endif
