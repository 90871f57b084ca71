/* device.h: the Device object (torch.device) and device-argument parsing. */
#ifndef PCS_DEVICE_H
#define PCS_DEVICE_H

#include "common.h"

enum { PCS_CPU = 0, PCS_CUDA = 1 };

typedef struct {
    PyObject_HEAD
    int type;  /* PCS_CPU or PCS_CUDA */
    int index; /* -1 when unset */
} PcsDevice;

extern PyTypeObject PcsDevice_Type;
#define PcsDevice_Check(o) PyObject_TypeCheck((o), &PcsDevice_Type)

/* New reference to a device object (cached for small indices). */
PyObject *pcs_device_new(int type, int index);

/* Parses a device argument: a Device, a string ('cpu', 'cuda', 'cuda:1'), or
 * an int (a CUDA ordinal). *type and *index receive the parse; index is -1
 * when the argument names no index. -1 with RuntimeError/TypeError on error.
 * None is not accepted here; callers decide what None means. */
int pcs_device_parse(PyObject *obj, int *type, int *index);

/* Parses an optional CUDA device argument the way torch.cuda functions do:
 * None -> current device; int, 'cuda:N', Device. A CPU device is an error.
 * Validates the ordinal. Returns the ordinal or -1 with exception. */
int pcs_cuda_device_arg(PyObject *obj);

/* The optional `device` argument of the torch.cuda query functions
 * (positional or keyword): the ordinal, or -1 with exception. */
int pcs_parse_opt_device(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                         const char *fname);

int pcs_device_init(PyObject *module);

#endif
