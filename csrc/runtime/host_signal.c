/* host_signal.c: results a kernel hands straight to the host (host_signal.h).
 *
 * Slots live in chunks of host-mapped pinned memory that stay for the life
 * of the process, on a free list guarded by the GIL. The wait polls with
 * the GIL released: first spinning for up to SPIN_US (a small op's kernel
 * finishes well inside it), then blocking in cudaStreamSynchronize so a
 * long queue ahead of the kernel does not keep a core busy. */
#include "runtime/host_signal.h"

#include <stdatomic.h>
#include <time.h>

#define SLOT_CHUNK 64
#define SPIN_US 200.0

typedef struct {
    int64_t value;
    unsigned flag;
    unsigned pad;
} slot_rec;

struct pcs_host_signal {
    slot_rec *host, *dev;
    struct pcs_host_signal *next;
};

static pcs_host_signal *free_slots;

void *pcs_mapped_chunk(size_t bytes, void **dev)
{
    void *h = NULL;
    PCS_CUDA_CHECK_NULL(cudaHostAlloc(&h, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
    cudaError_t e = cudaHostGetDevicePointer(dev, h, 0);
    if (e != cudaSuccess) {
        cudaError_t fe = cudaFreeHost(h); /* best effort: the first error is the one raised */
        (void)fe;
        pcs_cuda_error(e, "cudaHostGetDevicePointer", __FILE__, __LINE__);
        return NULL;
    }
    return h;
}

pcs_host_signal *pcs_host_signal_take(void)
{
    if (!free_slots) { /* a new chunk: it lives as long as the process */
        void *d = NULL;
        slot_rec *h = pcs_mapped_chunk(SLOT_CHUNK * sizeof(slot_rec), &d);
        if (!h)
            return NULL;
        pcs_host_signal *chunk = PyMem_Calloc(SLOT_CHUNK, sizeof *chunk);
        if (!chunk) {
            cudaError_t fe = cudaFreeHost(h);
            (void)fe;
            return (pcs_host_signal *)PyErr_NoMemory();
        }
        for (int i = 0; i < SLOT_CHUNK; i++)
            chunk[i] = (pcs_host_signal){h + i, (slot_rec *)d + i, i + 1 < SLOT_CHUNK ? &chunk[i + 1] : NULL};
        free_slots = chunk;
    }
    pcs_host_signal *s = free_slots;
    free_slots = s->next;
    ((volatile slot_rec *)s->host)->flag = 0;
    return s;
}

int64_t *pcs_host_signal_value(pcs_host_signal *s) { return &s->dev->value; }

unsigned *pcs_host_signal_flag(pcs_host_signal *s) { return &s->dev->flag; }

void pcs_host_signal_give(pcs_host_signal *s)
{
    s->next = free_slots;
    free_slots = s;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

static double since_us(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) * 1e6 + (double)(t.tv_nsec - t0->tv_nsec) / 1e3;
}

/* Spins until the flag is up (true) or SPIN_US passed (false). */
static bool spin(const volatile unsigned *flag)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (unsigned i = 1;; i++) {
        if (*flag)
            return true;
        if ((i & 63) == 0 && since_us(&t0) > SPIN_US)
            return false;
        cpu_relax();
    }
}

int pcs_host_signal_wait(pcs_host_signal *s, cudaStream_t stream, int64_t *value)
{
    volatile slot_rec *r = s->host;
    cudaError_t err = cudaSuccess;
    bool up;
    Py_BEGIN_ALLOW_THREADS
    up = spin(&r->flag);
    if (!up) {
        err = cudaStreamSynchronize(stream);
        up = r->flag != 0;
    }
    Py_END_ALLOW_THREADS
    if (!up) { /* the slot stays out of use: a late write could still land in it */
        if (err != cudaSuccess)
            return pcs_cuda_error(err, "cudaStreamSynchronize", __FILE__, __LINE__);
        PyErr_SetString(PyExc_RuntimeError,
                        "a kernel finished without handing its result to the host");
        return -1;
    }
    atomic_thread_fence(memory_order_acquire); /* the value was written before the flag */
    *value = r->value;
    pcs_host_signal_give(s);
    return pcs_deferred_check();
}
