/* memory.h: the Python face of the caching allocator (memory.c): the
 * boundary where allocator status codes become Python exceptions, and the
 * torch.cuda memory functions. */
#ifndef PCS_MEMORY_H
#define PCS_MEMORY_H

#include "core/common.h"
#include "runtime/allocator.h"

/* Turns an allocator status into a Python exception; returns -1. */
int pcs_alloc_raise(pcs_status st);

int pcs_memory_init(PyObject *module);

#endif
