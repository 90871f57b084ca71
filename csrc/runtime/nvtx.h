/* nvtx.h: NVTX ranges and marks for profilers (torch.cuda.nvtx). */
#ifndef PCS_RUNTIME_NVTX_H
#define PCS_RUNTIME_NVTX_H

#include "core/common.h"

/* Registers _C._nvtx_range_push, _nvtx_range_pop, _nvtx_range_start,
 * _nvtx_range_end and _nvtx_mark. */
int pcs_nvtx_init(PyObject *module);

#endif
