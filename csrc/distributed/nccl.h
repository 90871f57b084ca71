/* nccl.h: the NCCL communicator (one per process group and device) and the
 * Work handle of a collective, the C half of ProcessGroupNCCL.
 *
 * Stream semantics are torch's: each communicator owns an internal,
 * non-blocking NCCL stream. A collective first makes that stream wait (an
 * event) for the caller's current stream, marks every tensor as used by the
 * NCCL stream (record_stream, so the caching allocator cannot hand the memory
 * out again before NCCL is done with it), enqueues the NCCL calls, and
 * records an end event. Work.wait() makes the caller's current stream wait on
 * that event without blocking the host; Work.is_completed() queries it;
 * Work._wait_host(timeout) blocks the host, polling the event and NCCL's
 * asynchronous error, and aborts the communicator on an error or a timeout so
 * that a dead peer never hangs the process.
 *
 *   nccl_comm.c  _NcclComm: creation from a ncclUniqueId, the collectives, abort
 *   nccl_work.c  _NcclWork: the end event and the waits */
#ifndef PCS_DIST_NCCL_H
#define PCS_DIST_NCCL_H

#include "core/common.h"
#include "runtime/nccl_lib.h"

typedef struct {
    PyObject_HEAD
    ncclComm_t comm; /* NULL once destroyed or aborted */
    int device, rank, size;
    cudaStream_t stream;     /* the internal NCCL stream */
    cudaEvent_t sync_event;  /* caller's stream -> NCCL stream */
    cudaEvent_t *free_events; /* end events of finished works, reused */
    int n_free, cap_free;
    PyObject *abort_reason; /* str once aborted (why), else NULL */
} PcsNcclComm;

typedef struct {
    PyObject_HEAD
    PcsNcclComm *comm; /* strong reference */
    cudaEvent_t event; /* recorded on comm->stream after the NCCL calls */
    double start;      /* monotonic seconds when enqueued */
    const char *name;  /* the op, for messages (static string) */
    PyObject *outputs; /* list given to run(), returned by result() */
    bool done;         /* the event has been seen complete */
} PcsNcclWork;

extern PyTypeObject PcsNcclComm_Type;
extern PyTypeObject PcsNcclWork_Type;

/* Monotonic seconds. */
double pcs_nccl_now(void);

/* A new Work for an end event already recorded on comm->stream (it owns
 * the event from now on). */
PyObject *pcs_nccl_work_new(PcsNcclComm *comm, cudaEvent_t event, const char *name,
                            PyObject *outputs);

/* The end-event pool of a communicator: an event (created on comm->device if
 * the pool is empty), and an event given back. */
int pcs_nccl_comm_take_event(PcsNcclComm *c, cudaEvent_t *ev);
void pcs_nccl_comm_give_event(PcsNcclComm *c, cudaEvent_t ev);

/* Aborts the communicator (ncclCommAbort, the GIL released) and remembers
 * `reason`; a no-op if it is already gone. 0, or -1 with exception. */
int pcs_nccl_comm_abort(PcsNcclComm *c, const char *reason);

/* 0 when the communicator can run work, else -1 with RuntimeError saying
 * why it is gone (aborted: the reason; or destroyed). */
int pcs_nccl_comm_check_alive(PcsNcclComm *c);

/* NCCL's asynchronous error of a live communicator: 0 none (also when it is
 * gone already), or -1 with RuntimeError: the error (the communicator is
 * then aborted) or a failure to ask. */
int pcs_nccl_comm_check_async(PcsNcclComm *c);

int pcs_nccl_init(PyObject *module);

#endif
