/* stream_semaphores.h: zeroed counters a stream lends to one launch at a
 * time (stream_semaphores.c says why and when). */
#ifndef PCS_STREAM_SEMAPHORES_H
#define PCS_STREAM_SEMAPHORES_H

#include "core/common.h"
#include "kernels/kernels.h"

/* PCS_STREAM_SEMAPHORES counters of `stream` on `device` (the current
 * device), zero when the next launch on the stream runs; a launch that uses
 * them must leave them zero. *out is NULL when the stream lends none (an
 * external or capturing stream): the caller takes a path without them.
 * 0, or -1 with an exception set. */
int pcs_stream_semaphores(int device, cudaStream_t stream, unsigned **out);

#endif
