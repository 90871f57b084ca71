/* allocator_internal.h: the caching allocator's data structures, shared by
 * allocator.c (the policy: allocation, freeing, splitting, events) and
 * allocator_stats.c (reading and resetting statistics, the snapshot). Nothing
 * outside those two files includes it. */
#ifndef PCS_ALLOCATOR_INTERNAL_H
#define PCS_ALLOCATOR_INTERNAL_H

#include <pthread.h>

#include "runtime/allocator.h"

#define KB ((size_t)1024)
#define MB (KB * 1024)
#define MIN_BLOCK (512)
#define SMALL_SIZE (1 * MB)
#define SMALL_BUFFER (2 * MB)
#define LARGE_BUFFER (20 * MB)
#define MIN_LARGE_ALLOC (10 * MB)
#define ROUND_LARGE (2 * MB)
#define MAX_DEVICES 64

struct pcs_block {
    int device;
    cudaStream_t stream;
    size_t size;      /* rounded size of this block */
    size_t requested; /* what the caller asked for (0 when free) */
    char *ptr;
    bool allocated;
    bool is_small;
    int event_count;         /* outstanding record_stream events */
    cudaStream_t *uses;      /* streams given to record_stream */
    int n_uses, cap_uses;
    struct pcs_block *prev, *next; /* neighbours within the segment */
};

/* A pool: free blocks sorted by (stream, size, ptr). A sorted array keeps the
 * best-fit lookup a binary search; pools hold few free blocks in practice. */
typedef struct {
    pcs_block **v;
    size_t n, cap;
} Pool;

typedef struct {
    cudaEvent_t event;
    pcs_block *block;
} Pending;

typedef struct {
    pthread_mutex_t lock;
    bool used;
    Pool small, large;
    pcs_block **segs; /* first block of every segment */
    size_t nsegs, cap_segs;
    Pending *pending;
    size_t npending, cap_pending;
    size_t limit; /* 0: no fraction set */
    pcs_device_stats stats;
} DeviceAlloc;

/* One allocator per device, each with its own mutex (allocator.c). */
extern DeviceAlloc pcs_alloc_devices[MAX_DEVICES];

#endif
