/* driver.h: the few CUDA driver entry points the runtime API has no
 * equivalent for, resolved once at first use (runtime/driver.c). */
#ifndef PCS_DRIVER_H
#define PCS_DRIVER_H

#include "core/common.h"

/* Fills `count` units of `unit` bytes (1, 2 or 4) at dst, which is aligned
 * to `unit` on `device`, with the pattern's low `unit` bytes, on `stream`,
 * through the driver's cuMemsetD8/D16/D32Async: no kernel launch of ours.
 * Returns 1 when done, 0 when the driver entry point is not available
 * (nothing was done: the caller launches its fill kernel), -1 with a Python
 * exception. */
int pcs_driver_memset(int device, void *dst, uint32_t pattern, int unit, size_t count,
                      cudaStream_t stream);

#endif
