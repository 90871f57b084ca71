/* device.h: lazy CUDA initialisation, the current device and the device
 * guard (which switches the runtime's device only when it has to:
 * cudaSetDevice is not free and is per thread); the Device object
 * (torch.device) and device-argument parsing. Defined in device.c. */
#ifndef PCS_DEVICE_H
#define PCS_DEVICE_H

#include "core/common.h"

/* ------------------------------------------------------------------------ */
/* Lazy initialisation and the current device (device.c)                     */

/* Number of visible GPUs; 0 (and no exception) when there are none or no
 * driver. Never creates a context. */
int pcs_device_count(void);

/* 0 when at least one GPU exists, else -1 with RuntimeError ("no CUDA GPU is
 * available"). Call before anything that needs CUDA. */
int pcs_require_cuda(void);

/* Validates an ordinal against device_count (IndexError-like RuntimeError,
 * as torch's "invalid device ordinal"); -1 on error. */
int pcs_check_device(int index);

/* The calling thread's current device (0 until set). No exception. */
int pcs_current_device(void);

/* Makes `index` the thread's current device (validated, cudaSetDevice only if
 * the runtime's device differs). -1 with exception on error. */
int pcs_set_device(int index);

/* Makes `index` the runtime's device for the calling thread without changing
 * the user-visible current device: used around work on a given device. */
int pcs_cuda_set_device_raw(int index);

/* Scoped device switch: enter returns -1 on error; exit restores. */
typedef struct {
    int prev;
    int switched;
} PcsDeviceGuard;
int pcs_device_guard_enter(PcsDeviceGuard *g, int index);
void pcs_device_guard_exit(PcsDeviceGuard *g);

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

/* The default device (default_device.c): the ordinal factories without
 * device= use, -1 for the CPU, -2 with exception (CUDA set, none there);
 * whether one other than the CPU is set; a Device's __enter__/__exit__. */
int pcs_default_device(void);
bool pcs_default_device_is_set(void);
PyObject *pcs_device_enter(PyObject *self, PyObject *noargs);
PyObject *pcs_device_exit(PyObject *self, PyObject *args);
int pcs_default_device_init(PyObject *module);

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
