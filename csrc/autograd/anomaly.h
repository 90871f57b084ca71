/* anomaly.h: torch's anomaly detection mode (autograd.detect_anomaly).
 * A process-wide switch, as torch's: while on, every node records the
 * Python stack of the forward call that made it, and a failing backward
 * warns with that stack; with check_nan, the engine also checks each
 * gradient a node returns and raises on nan. */
#ifndef PCS_AUTOGRAD_ANOMALY_H
#define PCS_AUTOGRAD_ANOMALY_H

#include "autograd/autograd.h"

bool pcs_anomaly_enabled(void);

/* The forward stack into n->metadata["traceback_"]; 0, or -1 with an exception. */
int pcs_anomaly_note_forward(PcsNode *n);

/* With check_nan on: -1 and RuntimeError("Function 'XBackward0' returned nan
 * values in its 0th output.") if grads[0..n) holds a nan; else 0. */
int pcs_anomaly_check_grads(PcsNode *n, PyObject *const *grads, int n_grads);

/* An exception is pending from node n's backward: warn with the forward
 * stack n recorded (the exception stays pending). */
void pcs_anomaly_report(PcsNode *n);

/* Registers _C._set_anomaly_enabled, _C.is_anomaly_enabled and
 * _C.is_anomaly_check_nan_enabled. */
int pcs_anomaly_init(PyObject *module);

#endif
