/* allocator_stats.c: reading the caching allocator's state without changing
 * its policy: the statistics (copied under the lock, or read lock-free for the
 * two figures users poll every step), their resets, and the snapshot of every
 * segment and block that memory_snapshot() returns, and the segment a block
 * lies in (for CUDA IPC). */
#include <stdlib.h>
#include <string.h>

#include "runtime/allocator_internal.h"

static DeviceAlloc *const g_dev = pcs_alloc_devices;

/* ------------------------------------------------------------------------ */
/* Statistics                                                                */

void pcs_alloc_get_stats(int device, pcs_device_stats *out)
{
    DeviceAlloc *d = &g_dev[device];
    pthread_mutex_lock(&d->lock);
    *out = d->stats;
    pthread_mutex_unlock(&d->lock);
    out->max_split_size = -1; /* no limit, as PyTorch reports by default */
}

/* Lock-free reads: one aligned 64-bit load cannot tear on the targets we
 * build for, and a value a moment old is all the caller can expect. */
int64_t pcs_alloc_allocated_bytes(int device)
{
    return __atomic_load_n(&g_dev[device].stats.allocated_bytes[PCS_POOL_ALL].current,
                           __ATOMIC_RELAXED);
}

int64_t pcs_alloc_reserved_bytes(int device)
{
    return __atomic_load_n(&g_dev[device].stats.reserved_bytes[PCS_POOL_ALL].current,
                           __ATOMIC_RELAXED);
}

static void reset_peak(pcs_stat *s) { s->peak = s->current; }
static void reset_accum(pcs_stat *s) { s->allocated = s->freed = 0; }

#define FOR_EACH_POOL_STAT(d, fn)                                                      \
    for (int k = 0; k < PCS_POOL_TYPES; k++) {                                         \
        fn(&(d)->stats.allocation[k]);                                                 \
        fn(&(d)->stats.segment[k]);                                                    \
        fn(&(d)->stats.active[k]);                                                     \
        fn(&(d)->stats.inactive_split[k]);                                             \
        fn(&(d)->stats.allocated_bytes[k]);                                            \
        fn(&(d)->stats.reserved_bytes[k]);                                             \
        fn(&(d)->stats.active_bytes[k]);                                               \
        fn(&(d)->stats.inactive_split_bytes[k]);                                       \
        fn(&(d)->stats.requested_bytes[k]);                                            \
    }                                                                                  \
    fn(&(d)->stats.oversize_allocations);                                              \
    fn(&(d)->stats.oversize_segments)

void pcs_alloc_reset_peak_stats(int device)
{
    DeviceAlloc *d = &g_dev[device];
    pthread_mutex_lock(&d->lock);
    FOR_EACH_POOL_STAT(d, reset_peak);
    pthread_mutex_unlock(&d->lock);
}

void pcs_alloc_reset_accumulated_stats(int device)
{
    DeviceAlloc *d = &g_dev[device];
    pthread_mutex_lock(&d->lock);
    FOR_EACH_POOL_STAT(d, reset_accum);
    d->stats.num_alloc_retries = 0;
    d->stats.num_ooms = 0;
    d->stats.num_sync_all_streams = 0;
    d->stats.num_device_alloc = 0;
    d->stats.num_device_free = 0;
    pthread_mutex_unlock(&d->lock);
}

/* ------------------------------------------------------------------------ */
/* Snapshot                                                                  */

pcs_status pcs_alloc_snapshot(pcs_snapshot_segment **out, size_t *count)
{
    size_t total = 0, n = 0;
    for (int dev = 0; dev < MAX_DEVICES; dev++) {
        pthread_mutex_lock(&g_dev[dev].lock);
        total += g_dev[dev].nsegs;
        pthread_mutex_unlock(&g_dev[dev].lock);
    }
    pcs_snapshot_segment *segs = calloc(total + 1, sizeof *segs);
    if (!segs)
        return PCS_ERR_HOST_OOM;
    for (int dev = 0; dev < MAX_DEVICES; dev++) {
        DeviceAlloc *d = &g_dev[dev];
        pthread_mutex_lock(&d->lock);
        for (size_t i = 0; i < d->nsegs && n < total; i++) {
            pcs_snapshot_segment *s = &segs[n];
            pcs_block *head = d->segs[i];
            /* segment list may lag a merge that moved the head; walk back */
            while (head->prev)
                head = head->prev;
            size_t nb = 0;
            for (pcs_block *b = head; b; b = b->next)
                nb++;
            s->blocks = calloc(nb, sizeof *s->blocks);
            if (!s->blocks) {
                pthread_mutex_unlock(&d->lock);
                pcs_alloc_snapshot_free(segs, n);
                return PCS_ERR_HOST_OOM;
            }
            s->device = dev;
            s->address = (uintptr_t)head->ptr;
            s->stream = (uintptr_t)head->stream;
            s->is_small = head->is_small;
            size_t k = 0;
            for (pcs_block *b = head; b; b = b->next, k++) {
                pcs_snapshot_block *sb = &s->blocks[k];
                sb->address = (uintptr_t)b->ptr;
                sb->size = b->size;
                sb->requested_size = b->requested;
                sb->state = b->allocated ? 1 : (b->event_count > 0 ? 2 : 0);
                s->total_size += b->size;
                if (b->allocated) {
                    s->allocated_size += b->size;
                    s->requested_size += b->requested;
                }
                if (sb->state)
                    s->active_size += b->size;
            }
            s->nblocks = nb;
            n++;
        }
        pthread_mutex_unlock(&d->lock);
    }
    *out = segs;
    *count = n;
    return PCS_OK;
}

void pcs_alloc_snapshot_free(pcs_snapshot_segment *segs, size_t count)
{
    if (!segs)
        return;
    for (size_t i = 0; i < count; i++)
        free(segs[i].blocks);
    free(segs);
}

void *pcs_block_segment_base(const pcs_block *b)
{
    /* neighbours split and merge under the device's lock */
    DeviceAlloc *d = &g_dev[b->device];
    pthread_mutex_lock(&d->lock);
    const pcs_block *first = b;
    while (first->prev)
        first = first->prev;
    void *base = first->ptr;
    pthread_mutex_unlock(&d->lock);
    return base;
}
