/* layout.h: the strides of a new tensor made after another one: torch's
 * memory formats, preserve_format included.
 *
 * preserve_format (the default of clone(), to() and the *_like factories)
 * keeps a dense input's strides and gives an input that is not dense (a
 * slice of a permuted view) dense strides in its own memory order, as
 * torch's infer_dense_strides; the other formats name their strides
 * outright (core/memory_format.h). */
#ifndef PCS_LAYOUT_H
#define PCS_LAYOUT_H

#include "core/memory_format.h"
#include "tensor/tensor.h"

/* Not a torch format: like's strides when it is dense, else row-major,
 * which is what the ops that call pcs_tensor_to expect. */
#define PCS_FORMAT_KEEP_DENSE PCS_NUM_FORMATS

/* t's strides into out when t is dense with none negative (a new tensor
 * can take them as they are). */
bool pcs_tensor_dense_strides(const PcsTensor *t, int64_t *out);

/* An uninitialised tensor of like's shape laid out in format fmt. NULL
 * with an exception (a channels-last format and the wrong number of dims:
 * RuntimeError). */
PcsTensor *pcs_tensor_empty_as(PcsTensor *like, int fmt, int dtype, int device, bool pinned);

/* Whether t is laid out in format fmt (is_contiguous(memory_format=)). */
bool pcs_tensor_in_format(const PcsTensor *t, int fmt);

#endif
