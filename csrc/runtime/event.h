/* event.h: the Event object (cudaEvent_t created lazily at first record). */
#ifndef PCS_EVENT_H
#define PCS_EVENT_H

#include "core/common.h"

typedef struct {
    PyObject_HEAD
    cudaEvent_t event; /* NULL until first record */
    int device;        /* -1 until first record */
    unsigned flags;
    bool enable_timing, blocking, interprocess;
} PcsEvent;

extern PyTypeObject PcsEvent_Type;
#define PcsEvent_Check(o) PyObject_TypeCheck((o), &PcsEvent_Type)

/* Records ev on `stream` of `device` (creates it on first use). */
int pcs_event_record(PcsEvent *ev, cudaStream_t stream, int device);
/* Makes `stream` wait for ev; a never-recorded event is a no-op. */
int pcs_event_wait(PcsEvent *ev, cudaStream_t stream, int device);

int pcs_event_init(PyObject *module);

#endif
