/* copy_pageable.h: host<->device copies of pageable host memory, pipelined
 * through pinned staging buffers on several host threads (copy_pageable.c
 * gives the policy). Used by copy.c for large copies; small ones keep the
 * driver's path. */
#ifndef PCS_COPY_PAGEABLE_H
#define PCS_COPY_PAGEABLE_H

#include "core/common.h"

/* Whether a copy of nbytes between pageable memory and a device takes the
 * pipeline (the size threshold; the caller checks that memory is pageable). */
bool pcs_pageable_pipelined(size_t nbytes);

/* Copies nbytes from src to dst, one side pageable host memory and the other
 * memory of `device` (h2d: dst is on the device), ordered on `stream`; the
 * caller has made `device` current. Returns with the host side done (H2D:
 * read; D2H: written), and, unless h2d && non_blocking, the device side too.
 * 0; -1 with exception; 1 when no staging memory could be pinned (nothing
 * was done: take the driver's path). */
int pcs_copy_pageable(void *dst, const void *src, size_t nbytes, bool h2d, int device,
                      cudaStream_t stream, bool non_blocking);

/* Registers _pageable_copy_config. */
int pcs_copy_pageable_init(PyObject *module);

#endif
