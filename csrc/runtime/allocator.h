/* allocator.h: the caching device allocator, pure C (no Python in here).
 *
 * One allocator per device, each with its own mutex. The policy is written at
 * the top of allocator.c. Functions return a pcs_status; the Python boundary
 * (storage.c, memory.c) turns failures into exceptions, using
 * pcs_alloc_describe_error() for the message. */
#ifndef PCS_ALLOCATOR_H
#define PCS_ALLOCATOR_H

#include <cuda_runtime.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    PCS_OK = 0,
    PCS_ERR_OOM,      /* the device (or the memory fraction) has no room */
    PCS_ERR_CUDA,     /* another CUDA error; see pcs_alloc_error */
    PCS_ERR_HOST_OOM, /* malloc of bookkeeping failed */
} pcs_status;

typedef struct pcs_block pcs_block;

/* What went wrong in the last failing call on this thread. */
typedef struct {
    cudaError_t cuda_error;
    const char *cuda_call;
    int device;
    size_t requested;
    size_t device_total, device_free;
    size_t allocated, reserved;
    size_t fraction_limit; /* 0 when no per-process fraction is set */
} pcs_alloc_error;
const pcs_alloc_error *pcs_alloc_last_error(void);

/* Hooks around calls that may block (cudaMalloc, cudaFree, synchronisation):
 * the Python layer sets them to release and re-take the GIL. The allocator
 * never holds its own lock while inside them. */
typedef void *(*pcs_unblock_fn)(void);
typedef void (*pcs_reblock_fn)(void *);
void pcs_alloc_set_blocking_hooks(pcs_unblock_fn release, pcs_reblock_fn acquire);

/* Allocates at least `size` bytes on `device` for use on `stream`. size 0
 * gives a block with ptr NULL (nothing is reserved). */
pcs_status pcs_alloc(int device, size_t size, cudaStream_t stream, pcs_block **out);

/* Returns a block to the cache. If record_stream marked other streams, the
 * block waits for events on them before it can be handed out again. */
pcs_status pcs_free(pcs_block *block);

/* Marks that `stream` (of the block's device) uses the block. */
pcs_status pcs_record_stream(pcs_block *block, cudaStream_t stream);

void *pcs_block_ptr(const pcs_block *block);
size_t pcs_block_size(const pcs_block *block);      /* rounded size */
size_t pcs_block_requested(const pcs_block *block); /* what the caller asked */
int pcs_block_device(const pcs_block *block);
cudaStream_t pcs_block_stream(const pcs_block *block);
/* The start of the cudaMalloc'd segment that holds the block (what CUDA IPC
 * hands out a handle for). */
void *pcs_block_segment_base(const pcs_block *block);

/* ---- statistics (PyTorch's names) ---------------------------------------- */

typedef struct {
    int64_t current, peak, allocated, freed;
} pcs_stat;

enum { PCS_POOL_ALL = 0, PCS_POOL_SMALL = 1, PCS_POOL_LARGE = 2, PCS_POOL_TYPES = 3 };

typedef struct {
    pcs_stat allocation[PCS_POOL_TYPES];
    pcs_stat segment[PCS_POOL_TYPES];
    pcs_stat active[PCS_POOL_TYPES];
    pcs_stat inactive_split[PCS_POOL_TYPES];
    pcs_stat allocated_bytes[PCS_POOL_TYPES];
    pcs_stat reserved_bytes[PCS_POOL_TYPES];
    pcs_stat active_bytes[PCS_POOL_TYPES];
    pcs_stat inactive_split_bytes[PCS_POOL_TYPES];
    pcs_stat requested_bytes[PCS_POOL_TYPES];
    pcs_stat oversize_allocations;
    pcs_stat oversize_segments;
    int64_t num_alloc_retries;
    int64_t num_ooms;
    int64_t num_sync_all_streams;
    int64_t num_device_alloc;
    int64_t num_device_free;
    int64_t max_split_size;
} pcs_device_stats;

/* Copies the statistics of `device` (all zero for a device never used). */
void pcs_alloc_get_stats(int device, pcs_device_stats *out);
/* Fast reads for memory_allocated()/memory_reserved(). */
int64_t pcs_alloc_allocated_bytes(int device);
int64_t pcs_alloc_reserved_bytes(int device);
void pcs_alloc_reset_peak_stats(int device);
void pcs_alloc_reset_accumulated_stats(int device);

/* Releases every cached, entirely free segment of `device` to the driver
 * (after waiting for blocks still guarded by record_stream events). */
pcs_status pcs_alloc_empty_cache(int device);

/* Caps reserved memory at fraction * total memory of the device. */
pcs_status pcs_alloc_set_memory_fraction(int device, double fraction);

/* True when PYTORCH_NO_CUDA_MEMORY_CACHING is set to a non-zero value. */
bool pcs_alloc_caching_disabled(void);

/* ---- snapshot ------------------------------------------------------------ */

typedef struct {
    uintptr_t address;
    size_t size, requested_size;
    int state; /* 0 inactive, 1 active_allocated, 2 active_pending_free */
} pcs_snapshot_block;

typedef struct {
    int device;
    uintptr_t address;
    size_t total_size, allocated_size, active_size, requested_size;
    uintptr_t stream;
    bool is_small;
    size_t nblocks;
    pcs_snapshot_block *blocks; /* malloc'd; freed by pcs_alloc_snapshot_free */
} pcs_snapshot_segment;

/* Fills a malloc'd array of every segment of every device in use. */
pcs_status pcs_alloc_snapshot(pcs_snapshot_segment **out, size_t *count);
void pcs_alloc_snapshot_free(pcs_snapshot_segment *segs, size_t count);

#endif
