/* host_allocator.h: the caching pinned (page-locked) host allocator.
 *
 * Pinned blocks are cached by size. A block used by an asynchronous copy is
 * not handed out again until the events recorded for those uses complete, as
 * PyTorch's CachingHostAllocator does. */
#ifndef PCS_HOST_ALLOCATOR_H
#define PCS_HOST_ALLOCATOR_H

#include "core/common.h"

/* Allocates nbytes of pinned memory; *handle identifies the block for free
 * and record. NULL with exception on failure. */
void *pcs_host_alloc(size_t nbytes, void **handle);
/* Returns the block to the cache (reused only after its recorded events). */
void pcs_host_free(void *handle);
/* Records that an async copy on `stream` of `device` uses the block. */
int pcs_host_record(void *handle, cudaStream_t stream, int device);
/* Is ptr inside memory pinned by us or registered with CUDA? */
bool pcs_host_is_pinned(const void *ptr);
/* Frees every cached, unused pinned block. */
int pcs_host_empty_cache(void);

#endif
