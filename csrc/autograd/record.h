/* record.h: the op wrapper object, shared by record.c (methods, properties,
 * functions, recording) and record_slots.c (the operator slots). Internal to
 * csrc/autograd/. */
#ifndef PCS_AUTOGRAD_RECORD_H
#define PCS_AUTOGRAD_RECORD_H

#include "autograd/autograd.h"

typedef struct pcs_opinfo pcs_opinfo;

enum { K_CALL, K_GET, K_UN, K_BIN, K_POW, K_SETITEM };
enum { F_INPLACE = 1 };

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    int kind, flags;
    PyObject *orig; /* callable (K_CALL) or getset descriptor (K_GET), else NULL */
    vectorcallfunc orig_vc;
    unaryfunc un;
    binaryfunc bin;
    ternaryfunc pow;
    objobjargproc setitem;
    pcs_opinfo *op;
} PcsAgOp;

/* True if a is a tensor (or a plain list/tuple holding one) that requires grad. */
static inline bool pcs_ag_is_rg(PyObject *a)
{
    if (PcsTensor_Check(a))
        return pcs_ag_requires_grad(a);
    if (PyTuple_CheckExact(a) || PyList_CheckExact(a)) {
        Py_ssize_t n = PySequence_Fast_GET_SIZE(a);
        PyObject **it = PySequence_Fast_ITEMS(a);
        for (Py_ssize_t i = 0; i < n; i++)
            if (PcsTensor_Check(it[i]) && pcs_ag_requires_grad(it[i]))
                return true;
    }
    return false;
}

/* The wrapper's slow path: requires_grad=/out= keywords, in-place version
 * bumps, and the recording of a node. */
PyObject *pcs_ag_op_slow(PcsAgOp *w, PyObject *const *args, size_t nargsf, PyObject *kwnames);
/* A wrapper for op `opname` (its registry entry made on demand). */
PcsAgOp *pcs_ag_op_new(int kind, const char *opname, bool inplace);
/* record_slots.c: the wrappers of the operator slots saved by pcs_ag_wrap_slots. */
int pcs_ag_make_slot_ops(void);

#endif
