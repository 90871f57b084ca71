/* copy.h: every copy between two tensors, and fills.
 *
 * Any pair of devices (CPU, a CUDA device, another CUDA device), any pair of
 * dtypes, any strides, with src broadcast to dst's shape. The ordering rules
 * are PyTorch's (written out at the top of copy.c): work is queued on the
 * current stream of the device(s) involved; a copy into pageable host memory
 * returns when the data is there; non_blocking=True with pinned host memory
 * returns at once. */
#ifndef PCS_COPY_H
#define PCS_COPY_H

#include "tensor/tensor.h"

/* dst.copy_(src, non_blocking). 0, or -1 with exception. */
int pcs_copy(PcsTensor *dst, PcsTensor *src, bool non_blocking);

/* Writes one element's bytes (already in dst's dtype) everywhere in dst. */
int pcs_fill_bytes(PcsTensor *dst, const void *value_bytes);

/* A contiguous tensor with t's values on t's device: t itself (new
 * reference) when already contiguous, unless `force`. */
PcsTensor *pcs_tensor_contiguous(PcsTensor *t, bool force);

/* t as (dtype, device; -1 is the CPU): t itself when nothing changes and
 * !copy. The result keeps t's strides when t is dense, and is contiguous
 * otherwise (what the ops that call it expect); `pinned` asks for
 * page-locked memory on the CPU. */
PcsTensor *pcs_tensor_to(PcsTensor *t, int dtype, int device, bool non_blocking, bool copy,
                         bool pinned);

/* Tensor.to(), .half(), .cuda(), .clone() ...: pcs_tensor_to with a
 * memory format (core/memory_format.h), torch's preserve_format in full
 * by default: a t that is not dense (a slice of a permuted view) gives a
 * dense result in t's memory order, as torch's infer_dense_strides does,
 * so the copy reads and writes in one order (tensor/layout.h). t itself
 * when nothing changes, !copy and fmt is preserve_format or the format t
 * is in. */
PcsTensor *pcs_tensor_to_format(PcsTensor *t, int dtype, int device, bool non_blocking, bool copy,
                                int fmt);

/* Reads the first element of t (any device) into buf (itemsize bytes);
 * waits for the device. */
int pcs_read_element(PcsTensor *t, void *buf);

/* True when t covers its memory exactly once in some dimension order. */
bool pcs_tensor_is_dense(const PcsTensor *t);

/* Registers the module functions of copy.c. */
int pcs_copy_init(PyObject *module);

#endif
