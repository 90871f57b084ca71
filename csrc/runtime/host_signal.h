/* host_signal.h: a small result a kernel hands straight to the host.
 *
 * An op whose next step needs a count from the device (nonzero, x[mask])
 * would copy it back and synchronise the stream: a cudaMemcpyAsync, the
 * copy itself queued behind the kernel, and the stream wait's wake-up, some
 * microseconds on a tensor of a thousand elements. Instead the kernel
 * writes the value into host-mapped pinned memory, fences, and raises a
 * flag there; the host polls the flag. The slots are guarded by the GIL. */
#ifndef PCS_HOST_SIGNAL_H
#define PCS_HOST_SIGNAL_H

#include "core/common.h"

typedef struct pcs_host_signal pcs_host_signal;

/* `bytes` of host-mapped pinned memory (cudaHostAllocMapped, portable to
 * every device) for records kernels write and the host reads; the device
 * address in *dev. NULL with an exception. The callers keep their chunks
 * for the life of the process. */
void *pcs_mapped_chunk(size_t bytes, void **dev);

/* A free slot, its flag cleared; NULL with an exception. */
pcs_host_signal *pcs_host_signal_take(void);
/* Where the kernel writes: the value (int64), then the flag (set to 1
 * after __threadfence_system()). Device addresses of the mapped slot. */
int64_t *pcs_host_signal_value(pcs_host_signal *s);
unsigned *pcs_host_signal_flag(pcs_host_signal *s);
/* Waits for the flag with the GIL released (polling for a short while,
 * then blocking in cudaStreamSynchronize), stores the value and gives the
 * slot back. A stream that finishes or fails without raising the flag is an
 * error (the slot is then kept out of use, as a late write could land in
 * it). Like every call that waits for the device, it then runs the
 * deferred checks. Returns 0 or -1 with an exception. */
int pcs_host_signal_wait(pcs_host_signal *s, cudaStream_t stream, int64_t *value);
/* Gives back a slot whose kernel was never launched. */
void pcs_host_signal_give(pcs_host_signal *s);

#endif
