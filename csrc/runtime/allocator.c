/* allocator.c: the caching device allocator.
 *
 * cudaMalloc and cudaFree are slow and cudaFree synchronises the whole
 * device, so freed memory is kept and handed out again. The policy is
 * PyTorch's (c10/cuda/CUDACachingAllocator), because users read its numbers:
 *
 * Sizes
 *   - every request is rounded up to a multiple of 512 bytes (min 512);
 *   - requests of up to 1 MiB are "small" and come from the small pool, whose
 *     segments (cudaMalloc'd chunks) are 2 MiB;
 *   - larger requests come from the large pool: under 10 MiB they get a
 *     20 MiB segment, from 10 MiB up the segment is the request rounded up to
 *     2 MiB.
 * Finding a block
 *   - best fit: the smallest free block of the same pool and the same stream
 *     that is big enough (pools are kept sorted by (stream, size, address));
 *   - a block bigger than needed is split when what remains is useful: at
 *     least 512 bytes in the small pool, more than 1 MiB in the large pool;
 *   - a freed block is merged with free neighbours of its segment.
 * Streams
 *   - a block belongs to the stream it was allocated on and is reused at once
 *     by later allocations on that stream: stream order makes that safe;
 *   - record_stream(s) says another stream uses the block: when it is freed,
 *     an event is recorded on each such stream and the block only returns to
 *     the pool when all those events have completed (polled, never waited
 *     for, except when memory runs out or the cache is emptied).
 * Running out
 *   - if cudaMalloc fails (or the per-process fraction would be exceeded),
 *     wait for pending events, release every entirely free cached segment and
 *     retry once (num_alloc_retries); if that fails too, count num_ooms and
 *     report PCS_ERR_OOM with the figures for the error message.
 * No caching
 *   - PYTORCH_NO_CUDA_MEMORY_CACHING=1 makes every allocation its own
 *     cudaMalloc and every free a cudaFree (for memcheck tools).
 * Locking
 *   - one mutex per device. It is never held across a call that may block
 *     (cudaMalloc, cudaFree, synchronisation): those run with the lock
 *     dropped and, through the blocking hooks, with the GIL released. So a
 *     thread holding the GIL may wait on the mutex without deadlock.
 * Statistics
 *   - kept exactly as PyTorch keeps them (same names, same moments of
 *     change): allocated bytes drop when the user frees, active bytes when
 *     the block is really back in the pool.
 */
#include "runtime/allocator.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/allocator_internal.h"

DeviceAlloc pcs_alloc_devices[MAX_DEVICES] = {[0 ... MAX_DEVICES - 1] = {.lock = PTHREAD_MUTEX_INITIALIZER}};
static DeviceAlloc *const g_dev = pcs_alloc_devices;

static _Thread_local pcs_alloc_error tl_err;
static pcs_unblock_fn g_release;
static pcs_reblock_fn g_acquire;
static int g_no_caching = -1;

const pcs_alloc_error *pcs_alloc_last_error(void) { return &tl_err; }

void pcs_alloc_set_blocking_hooks(pcs_unblock_fn release, pcs_reblock_fn acquire)
{
    g_release = release;
    g_acquire = acquire;
}

static void *unblock(void) { return g_release ? g_release() : NULL; }
static void reblock(void *s)
{
    if (g_acquire)
        g_acquire(s);
}

bool pcs_alloc_caching_disabled(void)
{
    if (g_no_caching < 0) {
        const char *v = getenv("PYTORCH_NO_CUDA_MEMORY_CACHING");
        g_no_caching = v && *v && strcmp(v, "0") != 0;
    }
    return g_no_caching;
}

/* ------------------------------------------------------------------------ */
/* Sizes                                                                     */

static size_t round_size(size_t size)
{
    if (size < MIN_BLOCK)
        return MIN_BLOCK;
    return MIN_BLOCK * ((size + MIN_BLOCK - 1) / MIN_BLOCK);
}

static size_t segment_size(size_t rounded)
{
    if (rounded <= SMALL_SIZE)
        return SMALL_BUFFER;
    if (rounded < MIN_LARGE_ALLOC)
        return LARGE_BUFFER;
    return ROUND_LARGE * ((rounded + ROUND_LARGE - 1) / ROUND_LARGE);
}

static bool should_split(const pcs_block *b, size_t size)
{
    size_t remaining = b->size - size;
    if (b->is_small)
        return remaining >= MIN_BLOCK;
    return remaining > SMALL_SIZE;
}

static bool is_split(const pcs_block *b) { return b->prev || b->next; }

/* ------------------------------------------------------------------------ */
/* Statistics                                                                */

static void stat_add(pcs_stat *s, int64_t amount)
{
    s->current += amount;
    if (s->current > s->peak)
        s->peak = s->current;
    if (amount > 0)
        s->allocated += amount;
    else
        s->freed -= amount;
}

/* Applies `amount` to the "all" entry and to the block's pool entry. */
static void stat_pool(pcs_stat *arr, bool small, int64_t amount)
{
    stat_add(&arr[PCS_POOL_ALL], amount);
    stat_add(&arr[small ? PCS_POOL_SMALL : PCS_POOL_LARGE], amount);
}

/* ------------------------------------------------------------------------ */
/* Pools                                                                     */

static int block_cmp(const pcs_block *a, cudaStream_t stream, size_t size, const char *ptr)
{
    if ((uintptr_t)a->stream != (uintptr_t)stream)
        return (uintptr_t)a->stream < (uintptr_t)stream ? -1 : 1;
    if (a->size != size)
        return a->size < size ? -1 : 1;
    if (a->ptr != ptr)
        return (uintptr_t)a->ptr < (uintptr_t)ptr ? -1 : 1;
    return 0;
}

/* First index whose block is >= (stream, size, ptr). */
static size_t pool_lower_bound(const Pool *p, cudaStream_t stream, size_t size, const char *ptr)
{
    size_t lo = 0, hi = p->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (block_cmp(p->v[mid], stream, size, ptr) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static bool pool_insert(Pool *p, pcs_block *b)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 64;
        /* NOLINTNEXTLINE(bugprone-sizeof-expression): sizeof one element, a pointer */
        pcs_block **v = realloc(p->v, cap * sizeof *v);
        if (!v)
            return false;
        p->v = v;
        p->cap = cap;
    }
    size_t i = pool_lower_bound(p, b->stream, b->size, b->ptr);
    /* NOLINTNEXTLINE(bugprone-sizeof-expression): sizeof one element, a pointer */
    memmove(p->v + i + 1, p->v + i, (p->n - i) * sizeof *p->v);
    p->v[i] = b;
    p->n++;
    return true;
}

static void pool_remove(Pool *p, pcs_block *b)
{
    size_t i = pool_lower_bound(p, b->stream, b->size, b->ptr);
    if (i < p->n && p->v[i] == b) {
        /* NOLINTNEXTLINE(bugprone-sizeof-expression): sizeof one element, a pointer */
        memmove(p->v + i, p->v + i + 1, (p->n - i - 1) * sizeof *p->v);
        p->n--;
    }
}

static Pool *pool_of(DeviceAlloc *d, bool small) { return small ? &d->small : &d->large; }

/* Best fit: the smallest free block on `stream` of at least `size`. */
static pcs_block *pool_find(Pool *p, cudaStream_t stream, size_t size)
{
    size_t i = pool_lower_bound(p, stream, size, NULL);
    if (i < p->n && p->v[i]->stream == stream)
        return p->v[i];
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Segments                                                                  */

static bool segs_add(DeviceAlloc *d, pcs_block *head)
{
    if (d->nsegs == d->cap_segs) {
        size_t cap = d->cap_segs ? d->cap_segs * 2 : 64;
        /* NOLINTNEXTLINE(bugprone-sizeof-expression): sizeof one element, a pointer */
        pcs_block **v = realloc(d->segs, cap * sizeof *v);
        if (!v)
            return false;
        d->segs = v;
        d->cap_segs = cap;
    }
    d->segs[d->nsegs++] = head;
    return true;
}

static void segs_remove(DeviceAlloc *d, pcs_block *head)
{
    for (size_t i = 0; i < d->nsegs; i++) {
        if (d->segs[i] == head) {
            d->segs[i] = d->segs[--d->nsegs];
            return;
        }
    }
}

/* The segment list holds the block at the lowest address of each segment;
 * when merging moves that role to another block, update the list. */
static void segs_replace(DeviceAlloc *d, pcs_block *old, pcs_block *new_head)
{
    for (size_t i = 0; i < d->nsegs; i++) {
        if (d->segs[i] == old) {
            d->segs[i] = new_head;
            return;
        }
    }
}

static pcs_block *block_new(int device, cudaStream_t stream, size_t size, char *ptr, bool small)
{
    pcs_block *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->device = device;
    b->stream = stream;
    b->size = size;
    b->ptr = ptr;
    b->is_small = small;
    return b;
}

/* ------------------------------------------------------------------------ */
/* Freeing into the pool                                                     */

/* Merges `src` (a free neighbour) into `dst`; returns the bytes absorbed. */
static size_t try_merge(DeviceAlloc *d, pcs_block *dst, pcs_block *src)
{
    if (!src || src->allocated || src->event_count > 0)
        return 0;
    Pool *p = pool_of(d, dst->is_small);
    pool_remove(p, src);
    if (dst->prev == src) { /* src is before dst */
        dst->ptr = src->ptr;
        dst->prev = src->prev;
        if (dst->prev)
            dst->prev->next = dst;
        else
            segs_replace(d, src, dst);
    } else { /* src is after dst */
        dst->next = src->next;
        if (dst->next)
            dst->next->prev = dst;
    }
    size_t absorbed = src->size;
    dst->size += absorbed;
    free(src->uses);
    free(src);
    return absorbed;
}

/* Returns a block no stream uses any more to its pool (lock held). */
static void free_block(DeviceAlloc *d, pcs_block *b)
{
    size_t orig_size = b->size;
    int64_t d_split = 0, d_split_bytes = 0;
    pcs_block *cands[2] = {b->prev, b->next};
    for (int i = 0; i < 2; i++) {
        size_t absorbed = try_merge(d, b, cands[i]);
        if (absorbed) {
            d_split -= 1;
            d_split_bytes -= (int64_t)absorbed;
        }
    }
    b->n_uses = 0;
    b->requested = 0;
    pool_insert(pool_of(d, b->is_small), b);
    if (is_split(b)) {
        d_split += 1;
        d_split_bytes += (int64_t)b->size;
    }
    stat_pool(d->stats.inactive_split, b->is_small, d_split);
    stat_pool(d->stats.inactive_split_bytes, b->is_small, d_split_bytes);
    stat_pool(d->stats.active, b->is_small, -1);
    stat_pool(d->stats.active_bytes, b->is_small, -(int64_t)orig_size);
}

/* Polls record_stream events; blocks whose events are all done go back to
 * their pool. Never waits. Lock held. */
static void process_events(DeviceAlloc *d)
{
    size_t j = 0;
    for (size_t i = 0; i < d->npending; i++) {
        Pending *pe = &d->pending[i];
        cudaError_t err = cudaEventQuery(pe->event);
        if (err == cudaErrorNotReady) {
            (void)cudaGetLastError();
            d->pending[j++] = *pe;
            continue;
        }
        /* Done, or failed (a sticky error): either way the event is spent. */
        if (err != cudaSuccess)
            (void)cudaGetLastError();
        (void)cudaEventDestroy(pe->event);
        pcs_block *b = pe->block;
        if (--b->event_count == 0)
            free_block(d, b);
    }
    d->npending = j;
}

/* Waits for every pending event. Called without the lock. */
static void sync_pending(int device)
{
    DeviceAlloc *d = &g_dev[device];
    for (;;) {
        pthread_mutex_lock(&d->lock);
        if (d->npending == 0) {
            pthread_mutex_unlock(&d->lock);
            return;
        }
        cudaEvent_t ev = d->pending[0].event;
        pthread_mutex_unlock(&d->lock);
        void *ts = unblock();
        (void)cudaEventSynchronize(ev);
        reblock(ts);
        pthread_mutex_lock(&d->lock);
        process_events(d);
        pthread_mutex_unlock(&d->lock);
    }
}

/* ------------------------------------------------------------------------ */
/* Device calls                                                              */

typedef struct {
    int prev;
    bool switched;
} Guard;

static cudaError_t guard_enter(Guard *g, int device)
{
    g->switched = false;
    if (cudaGetDevice(&g->prev) != cudaSuccess)
        g->prev = -1;
    if (g->prev != device) {
        cudaError_t err = cudaSetDevice(device);
        if (err != cudaSuccess)
            return err;
        g->switched = g->prev >= 0;
    }
    return cudaSuccess;
}

static void guard_exit(Guard *g)
{
    if (g->switched)
        (void)cudaSetDevice(g->prev);
}

static void fill_oom(int device, size_t requested)
{
    DeviceAlloc *d = &g_dev[device];
    tl_err.device = device;
    tl_err.requested = requested;
    tl_err.device_free = tl_err.device_total = 0;
    Guard g;
    if (guard_enter(&g, device) == cudaSuccess) {
        if (cudaMemGetInfo(&tl_err.device_free, &tl_err.device_total) != cudaSuccess)
            (void)cudaGetLastError();
        guard_exit(&g);
    }
    pthread_mutex_lock(&d->lock);
    tl_err.allocated = (size_t)d->stats.allocated_bytes[PCS_POOL_ALL].current;
    tl_err.reserved = (size_t)d->stats.reserved_bytes[PCS_POOL_ALL].current;
    tl_err.fraction_limit = d->limit;
    pthread_mutex_unlock(&d->lock);
}

/* cudaMalloc with the lock dropped and the GIL released. Honours the
 * per-process fraction. Returns cudaErrorMemoryAllocation when over it. */
static cudaError_t device_malloc(int device, size_t size, void **ptr)
{
    DeviceAlloc *d = &g_dev[device];
    pthread_mutex_lock(&d->lock);
    size_t reserved = (size_t)d->stats.reserved_bytes[PCS_POOL_ALL].current;
    size_t limit = d->limit;
    pthread_mutex_unlock(&d->lock);
    if (limit && reserved + size > limit)
        return cudaErrorMemoryAllocation;
    Guard g;
    cudaError_t err = guard_enter(&g, device);
    if (err != cudaSuccess)
        return err;
    void *ts = unblock();
    err = cudaMalloc(ptr, size);
    reblock(ts);
    guard_exit(&g);
    if (err != cudaSuccess) {
        (void)cudaGetLastError(); /* an OOM is not sticky: clear it */
        *ptr = NULL;
    }
    return err;
}

static void device_free(int device, void *ptr)
{
    Guard g;
    if (guard_enter(&g, device) != cudaSuccess)
        return;
    void *ts = unblock();
    if (cudaFree(ptr) != cudaSuccess)
        (void)cudaGetLastError();
    reblock(ts);
    guard_exit(&g);
}

/* Takes every entirely free segment out of the cache (lock held); the caller
 * cudaFrees them once the lock is dropped. */
static size_t collect_free_segments(DeviceAlloc *d, void ***out)
{
    size_t n = 0;
    void **ptrs = malloc((d->nsegs + 1) * sizeof *ptrs);
    if (!ptrs) {
        *out = NULL;
        return 0;
    }
    for (size_t i = 0; i < d->nsegs;) {
        pcs_block *b = d->segs[i];
        if (!b->allocated && b->event_count == 0 && !b->next) {
            pool_remove(pool_of(d, b->is_small), b);
            stat_pool(d->stats.segment, b->is_small, -1);
            stat_pool(d->stats.reserved_bytes, b->is_small, -(int64_t)b->size);
            d->stats.num_device_free++;
            ptrs[n++] = b->ptr;
            d->segs[i] = d->segs[--d->nsegs];
            free(b->uses);
            free(b);
        } else {
            i++;
        }
    }
    *out = ptrs;
    return n;
}

static void release_cached(int device)
{
    DeviceAlloc *d = &g_dev[device];
    sync_pending(device);
    pthread_mutex_lock(&d->lock);
    void **ptrs;
    size_t n = collect_free_segments(d, &ptrs);
    pthread_mutex_unlock(&d->lock);
    for (size_t i = 0; i < n; i++)
        device_free(device, ptrs[i]);
    free(ptrs);
}

/* ------------------------------------------------------------------------ */
/* Allocation                                                                */

/* Marks `b` (just taken out of the pool or fresh) allocated for `size`
 * rounded bytes, splitting off the rest when worth it. Lock held. */
static pcs_status take_block(DeviceAlloc *d, pcs_block *b, size_t size, size_t requested)
{
    bool already_split = is_split(b);
    if (should_split(b, size)) {
        pcs_block *rest = block_new(b->device, b->stream, b->size - size, b->ptr + size, b->is_small);
        if (!rest)
            return PCS_ERR_HOST_OOM;
        rest->prev = b;
        rest->next = b->next;
        if (rest->next)
            rest->next->prev = rest;
        b->next = rest;
        b->size = size;
        if (!pool_insert(pool_of(d, b->is_small), rest))
            return PCS_ERR_HOST_OOM;
        if (already_split) {
            /* an inactive split block shrinks by `size` */
            stat_pool(d->stats.inactive_split_bytes, b->is_small, -(int64_t)size);
        } else {
            /* a new inactive split block appears */
            stat_pool(d->stats.inactive_split_bytes, b->is_small, (int64_t)rest->size);
            stat_pool(d->stats.inactive_split, b->is_small, 1);
        }
    } else if (already_split) {
        stat_pool(d->stats.inactive_split_bytes, b->is_small, -(int64_t)b->size);
        stat_pool(d->stats.inactive_split, b->is_small, -1);
    }
    b->allocated = true;
    b->requested = requested;
    stat_pool(d->stats.allocation, b->is_small, 1);
    stat_pool(d->stats.allocated_bytes, b->is_small, (int64_t)b->size);
    stat_pool(d->stats.active, b->is_small, 1);
    stat_pool(d->stats.active_bytes, b->is_small, (int64_t)b->size);
    stat_pool(d->stats.requested_bytes, b->is_small, (int64_t)requested);
    return PCS_OK;
}

static pcs_status alloc_uncached(int device, size_t size, size_t rounded, cudaStream_t stream,
                                 pcs_block **out)
{
    DeviceAlloc *d = &g_dev[device];
    void *ptr = NULL;
    cudaError_t err = device_malloc(device, rounded, &ptr);
    if (err != cudaSuccess) {
        pthread_mutex_lock(&d->lock);
        d->stats.num_ooms++;
        pthread_mutex_unlock(&d->lock);
        tl_err.cuda_error = err;
        tl_err.cuda_call = "cudaMalloc";
        fill_oom(device, size);
        return err == cudaErrorMemoryAllocation ? PCS_ERR_OOM : PCS_ERR_CUDA;
    }
    bool small = rounded <= SMALL_SIZE;
    pcs_block *b = block_new(device, stream, rounded, ptr, small);
    if (!b) {
        device_free(device, ptr);
        return PCS_ERR_HOST_OOM;
    }
    pthread_mutex_lock(&d->lock);
    if (!segs_add(d, b)) {
        pthread_mutex_unlock(&d->lock);
        free(b);
        device_free(device, ptr);
        return PCS_ERR_HOST_OOM;
    }
    d->used = true;
    stat_pool(d->stats.segment, small, 1);
    stat_pool(d->stats.reserved_bytes, small, (int64_t)rounded);
    d->stats.num_device_alloc++;
    take_block(d, b, rounded, size);
    pthread_mutex_unlock(&d->lock);
    *out = b;
    return PCS_OK;
}

pcs_status pcs_alloc(int device, size_t size, cudaStream_t stream, pcs_block **out)
{
    *out = NULL;
    if (device < 0 || device >= MAX_DEVICES) {
        tl_err.cuda_error = cudaErrorInvalidDevice;
        tl_err.cuda_call = "pcs_alloc";
        return PCS_ERR_CUDA;
    }
    if (size == 0) {
        /* Nothing is reserved for an empty allocation; the block only
         * records the device, as torch's null DataPtr does. */
        pcs_block *b = calloc(1, sizeof *b);
        if (!b)
            return PCS_ERR_HOST_OOM;
        b->device = device;
        b->stream = stream;
        *out = b;
        return PCS_OK;
    }
    if (size > SIZE_MAX - 2 * ROUND_LARGE) {
        tl_err.cuda_error = cudaErrorMemoryAllocation;
        tl_err.cuda_call = "cudaMalloc";
        fill_oom(device, size);
        return PCS_ERR_OOM;
    }
    size_t rounded = round_size(size);
    if (pcs_alloc_caching_disabled())
        return alloc_uncached(device, size, rounded, stream, out);

    DeviceAlloc *d = &g_dev[device];
    bool small = rounded <= SMALL_SIZE;
    pthread_mutex_lock(&d->lock);
    d->used = true;
    if (d->npending)
        process_events(d);
    pcs_block *b = pool_find(pool_of(d, small), stream, rounded);
    if (b) {
        pool_remove(pool_of(d, small), b);
        pcs_status st = take_block(d, b, rounded, size);
        pthread_mutex_unlock(&d->lock);
        *out = b;
        return st;
    }
    pthread_mutex_unlock(&d->lock);

    /* Cache miss: a new segment. */
    size_t seg = segment_size(rounded);
    void *ptr = NULL;
    cudaError_t err = device_malloc(device, seg, &ptr);
    if (err == cudaErrorMemoryAllocation) {
        release_cached(device);
        pthread_mutex_lock(&d->lock);
        d->stats.num_alloc_retries++;
        pthread_mutex_unlock(&d->lock);
        err = device_malloc(device, seg, &ptr);
    }
    if (err != cudaSuccess) {
        pthread_mutex_lock(&d->lock);
        if (err == cudaErrorMemoryAllocation)
            d->stats.num_ooms++;
        pthread_mutex_unlock(&d->lock);
        tl_err.cuda_error = err;
        tl_err.cuda_call = "cudaMalloc";
        fill_oom(device, size);
        return err == cudaErrorMemoryAllocation ? PCS_ERR_OOM : PCS_ERR_CUDA;
    }
    b = block_new(device, stream, seg, ptr, small);
    if (!b) {
        device_free(device, ptr);
        return PCS_ERR_HOST_OOM;
    }
    pthread_mutex_lock(&d->lock);
    if (!segs_add(d, b)) {
        /* Not recorded anywhere: give the segment back, or it leaks. */
        pthread_mutex_unlock(&d->lock);
        free(b);
        device_free(device, ptr);
        return PCS_ERR_HOST_OOM;
    }
    stat_pool(d->stats.segment, small, 1);
    stat_pool(d->stats.reserved_bytes, small, (int64_t)seg);
    d->stats.num_device_alloc++;
    pcs_status st = take_block(d, b, rounded, size);
    pthread_mutex_unlock(&d->lock);
    *out = b;
    return st;
}

pcs_status pcs_free(pcs_block *b)
{
    if (!b)
        return PCS_OK;
    if (!b->ptr) { /* empty allocation */
        free(b);
        return PCS_OK;
    }
    DeviceAlloc *d = &g_dev[b->device];
    if (pcs_alloc_caching_disabled()) {
        pthread_mutex_lock(&d->lock);
        stat_pool(d->stats.allocation, b->is_small, -1);
        stat_pool(d->stats.allocated_bytes, b->is_small, -(int64_t)b->size);
        stat_pool(d->stats.active, b->is_small, -1);
        stat_pool(d->stats.active_bytes, b->is_small, -(int64_t)b->size);
        stat_pool(d->stats.requested_bytes, b->is_small, -(int64_t)b->requested);
        stat_pool(d->stats.segment, b->is_small, -1);
        stat_pool(d->stats.reserved_bytes, b->is_small, -(int64_t)b->size);
        d->stats.num_device_free++;
        segs_remove(d, b);
        pthread_mutex_unlock(&d->lock);
        /* cudaFree waits for the device, so other streams' uses are safe */
        device_free(b->device, b->ptr);
        free(b->uses);
        free(b);
        return PCS_OK;
    }
    pcs_status st = PCS_OK;
    pthread_mutex_lock(&d->lock);
    b->allocated = false;
    stat_pool(d->stats.allocation, b->is_small, -1);
    stat_pool(d->stats.allocated_bytes, b->is_small, -(int64_t)b->size);
    stat_pool(d->stats.requested_bytes, b->is_small, -(int64_t)b->requested);
    if (b->n_uses > 0) {
        /* Guard the block with an event on every other stream that used it. */
        Guard g;
        bool guarded = guard_enter(&g, b->device) == cudaSuccess;
        for (int i = 0; guarded && i < b->n_uses; i++) {
            cudaEvent_t ev;
            if (d->npending == d->cap_pending) {
                size_t cap = d->cap_pending ? d->cap_pending * 2 : 64;
                Pending *v = realloc(d->pending, cap * sizeof *v);
                if (!v) {
                    st = PCS_ERR_HOST_OOM;
                    break;
                }
                d->pending = v;
                d->cap_pending = cap;
            }
            if (cudaEventCreateWithFlags(&ev, cudaEventDisableTiming) != cudaSuccess ||
                cudaEventRecord(ev, b->uses[i]) != cudaSuccess) {
                /* Cannot guard it: keep the block out of circulation rather
                 * than risk handing out memory still in use. */
                tl_err.cuda_error = cudaGetLastError();
                tl_err.cuda_call = "cudaEventRecord";
                st = PCS_ERR_CUDA;
                b->event_count++; /* never reaches zero: leaked on purpose */
                break;
            }
            d->pending[d->npending].event = ev;
            d->pending[d->npending].block = b;
            d->npending++;
            b->event_count++;
        }
        if (guarded)
            guard_exit(&g);
        b->n_uses = 0;
        if (b->event_count == 0)
            free_block(d, b);
    } else {
        free_block(d, b);
    }
    pthread_mutex_unlock(&d->lock);
    return st;
}

pcs_status pcs_record_stream(pcs_block *b, cudaStream_t stream)
{
    if (!b || !b->ptr || stream == b->stream)
        return PCS_OK;
    DeviceAlloc *d = &g_dev[b->device];
    pthread_mutex_lock(&d->lock);
    for (int i = 0; i < b->n_uses; i++) {
        if (b->uses[i] == stream) {
            pthread_mutex_unlock(&d->lock);
            return PCS_OK;
        }
    }
    if (b->n_uses == b->cap_uses) {
        int cap = b->cap_uses ? b->cap_uses * 2 : 4;
        /* NOLINTNEXTLINE(bugprone-sizeof-expression): sizeof one element, a pointer */
        cudaStream_t *v = realloc(b->uses, (size_t)cap * sizeof *v);
        if (!v) {
            pthread_mutex_unlock(&d->lock);
            return PCS_ERR_HOST_OOM;
        }
        b->uses = v;
        b->cap_uses = cap;
    }
    b->uses[b->n_uses++] = stream;
    pthread_mutex_unlock(&d->lock);
    return PCS_OK;
}

void *pcs_block_ptr(const pcs_block *b) { return b->ptr; }
size_t pcs_block_size(const pcs_block *b) { return b->size; }
size_t pcs_block_requested(const pcs_block *b) { return b->requested; }
int pcs_block_device(const pcs_block *b) { return b->device; }
cudaStream_t pcs_block_stream(const pcs_block *b) { return b->stream; }

/* ------------------------------------------------------------------------ */
/* Cache control (statistics are read in allocator_stats.c)                 */

pcs_status pcs_alloc_empty_cache(int device)
{
    if (!g_dev[device].used)
        return PCS_OK;
    release_cached(device);
    return PCS_OK;
}

pcs_status pcs_alloc_set_memory_fraction(int device, double fraction)
{
    size_t free_b = 0, total = 0;
    Guard g;
    cudaError_t err = guard_enter(&g, device);
    if (err == cudaSuccess) {
        err = cudaMemGetInfo(&free_b, &total);
        guard_exit(&g);
    }
    if (err != cudaSuccess) {
        tl_err.cuda_error = err;
        tl_err.cuda_call = "cudaMemGetInfo";
        return PCS_ERR_CUDA;
    }
    DeviceAlloc *d = &g_dev[device];
    pthread_mutex_lock(&d->lock);
    d->limit = (size_t)(fraction * (double)total);
    if (d->limit == 0 && fraction > 0)
        d->limit = 1;
    pthread_mutex_unlock(&d->lock);
    return PCS_OK;
}
