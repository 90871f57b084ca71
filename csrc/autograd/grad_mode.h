/* grad_mode.h: the thread-local switches of autograd (torch's GradMode and
 * InferenceMode). Each OS thread has its own: a thread starts with gradients
 * enabled and inference mode off, whatever the thread that started it has
 * set, as in torch. The ops will ask pcs_grad_enabled() before recording a
 * graph; today no tensor can require grad, so nothing is recorded yet. */
#ifndef PCS_AUTOGRAD_GRAD_MODE_H
#define PCS_AUTOGRAD_GRAD_MODE_H

#include "core/common.h"

bool pcs_grad_enabled(void);
void pcs_set_grad_enabled(bool on);
bool pcs_inference_mode(void);
void pcs_set_inference_mode(bool on);

/* Registers _C.is_grad_enabled, _C._set_grad_enabled,
 * _C.is_inference_mode_enabled and _C._set_inference_mode. */
int pcs_grad_mode_init(PyObject *module);

#endif
