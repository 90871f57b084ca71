/* stream.h: the Stream object and the per-thread, per-device current stream.
 *
 * Streams come from a per-device pool, as in PyTorch: Stream() hands out the
 * next stream of a small round-robin pool for its priority, and pool streams
 * live until the process ends, so a raw handle can never dangle. The default
 * stream of every device is the legacy default stream (handle 0), which
 * synchronises with all other blocking streams of its device. */
#ifndef PCS_STREAM_H
#define PCS_STREAM_H

#include "core/common.h"

typedef struct {
    PyObject_HEAD
    cudaStream_t stream;
    int device;
    int priority;
} PcsStream;

extern PyTypeObject PcsStream_Type;
extern PyTypeObject PcsExternalStream_Type;
#define PcsStream_Check(o) PyObject_TypeCheck((o), &PcsStream_Type)

/* The calling thread's current stream on `device` (the legacy default stream,
 * 0, unless set). Never fails; the device must be valid. */
cudaStream_t pcs_current_stream(int device);
/* For code about to issue work on the current stream: checks that CUDA is
 * there, makes the current device the thread's CUDA device and gives its
 * current stream. 0, or -1 with an exception set. */
int pcs_enter_current_stream(cudaStream_t *stream);

/* Streams whose handles live as long as the process, numbered per device:
 * 0 for the legacy default stream, 1 .. PCS_STREAM_POOL_SLOTS - 1 for the
 * pool streams; -1 for any other handle (an ExternalStream's). */
#define PCS_STREAM_POOL_SLOTS (1 + 8 * 32)
int pcs_stream_pool_index(int device, cudaStream_t stream);

/* Sets the calling thread's current stream of `device`. */
void pcs_set_current_stream(int device, cudaStream_t stream, int priority);

/* New Stream object wrapping (stream, device, priority). */
PyObject *pcs_stream_wrap(cudaStream_t stream, int device, int priority);

int pcs_stream_init(PyObject *module);

#endif
