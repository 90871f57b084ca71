/* ops.h: the op front door (ops.c) and what the op files share.
 *
 * Every computing op goes through the same steps: its operands (tensors,
 * Python numbers, 0-dim CPU tensors joining a CUDA op) are classified for
 * torch's type promotion, checked to share one device, broadcast, given an
 * output (allocated from the caching allocator on the current stream, or
 * the user's out=), and dispatched: a kernel launcher on the device's
 * current stream for CUDA, NumPy on zero-copy views for the CPU.
 *   ops.c         operands, promotion, devices, broadcasting, the
 *                 elementwise executor, operators, registration
 *   ops_binary.c  binary and ternary ops (add ... where, clamp, lerp)
 *   ops_unary.c   unary ops (neg ... nan_to_num)
 *   ops_reduce.c  reductions and scans (sum ... logsumexp, cumsum)
 *   join.c        cat, stack
 *   split.c       split, chunk, tensor_split (views)
 *   shape_ops.c   flip, roll, repeat, tile, repeat_interleave, movedim
 *   diag.c        diagonal, diag, diag_embed, tril, triu
 *   softmax.c     softmax, log_softmax
 *   optim.c       the multi-tensor optimizer steps (_fused_adam_ ...)
 *   op_common.c   helpers the op files share
 *   py_methods.c  Tensor methods of the ops written in Python (_math.py)
 *   sort.c, select.c, search.c, scan.c  sorting, selection, searches and
 *                 the other scans (sort ... unique, histc, searchsorted,
 *                 cummax), over CUB (sort.h)
 *   index*.c, gather.c, masked.c  indexing (declared in ops/index.h) */
#ifndef PCS_OPS_H
#define PCS_OPS_H

#include "core/scalar.h"
#include "tensor/tensor.h"

/* ---- hooks called by python/tensor_type.c and python/module.c ------------- */

/* Tensor methods of the op files, merged into the type by pcs_tensor_type_init
 * (filled by pcs_ops_install_number_slots, which runs first). */
extern PyMethodDef pcs_tensor_ops_methods[];
/* Fills the arithmetic number slots and sets the Tensor type's rich
 * comparison (and keeps it hashable by identity, as torch's tensors are). */
void pcs_ops_install_number_slots(PyNumberMethods *nb);
PyObject *pcs_ops_richcompare(PyObject *a, PyObject *b, int op);
/* Registers the module-level functions (add, sum, where, ...). */
int pcs_ops_init(PyObject *module);

/* ---- operands --------------------------------------------------------------- */

/* Promotion classes, as torch's ResultTypeState: tensors with dimensions,
 * 0-dim tensors, and "wrapped numbers" (Python scalars). */
enum { PCS_CLS_DIM = 0, PCS_CLS_ZERO = 1, PCS_CLS_WRAPPED = 2 };

typedef struct {
    PcsTensor *t;    /* borrowed; NULL for a Python number */
    pcs_scalar s;    /* the value when is_scalar */
    bool is_scalar;  /* passed to the kernel as a value, not memory */
    int dtype;       /* the tensor's dtype, or the number's natural dtype */
    int cls;
} pcs_operand;

/* 0 on success; 1 (no exception) when obj is neither a tensor nor a number,
 * so operators can return NotImplemented; -1 with exception (an int no
 * scalar holds: RuntimeError "Overflow when unpacking long", as torch). */
int pcs_operand_from(PyObject *obj, pcs_operand *op);
/* Like pcs_operand_from, but raises TypeError naming `what` instead of 1. */
int pcs_operand_arg(PyObject *obj, pcs_operand *op, const char *fname, const char *what);

/* torch.result_type over the operands. */
int pcs_result_type(const pcs_operand *ops, int n);
/* torch's canCast: no complex -> real, float -> integral, non-bool -> bool. */
bool pcs_can_cast(int from, int to);
/* The device the op runs on (-1 the CPU), or -2 with RuntimeError naming two
 * different devices. A 0-dim CPU tensor on a CUDA op becomes a scalar. */
int pcs_common_device(pcs_operand *ops, int n);
/* Broadcast shape of the tensor operands; ndim, or -1 with RuntimeError. */
int pcs_broadcast_shape(const pcs_operand *ops, int n, int64_t *sizes);

/* NotImplementedError (a RuntimeError) "\"op\" not implemented for 'Float'",
 * as torch 2 words and types it. */
PyObject *pcs_not_implemented(const char *op, int dtype);

/* ---- the elementwise executor ------------------------------------------------ */

typedef struct {
    int arity;       /* 1, 2 or 3 */
    int op;          /* pcs_unary_op / pcs_binary_op / pcs_ternary_op */
    const char *name;     /* for errors, and the NumPy kernel in _ops.py */
    int compute;     /* dtype the tensor inputs are cast to */
    int in0_dtype;   /* input 0's dtype when it is not `compute` (where's cond), else -1 */
    int out_dtype;   /* dtype the kernel writes (the op's result dtype) */
    pcs_kscalar extra[3]; /* alpha, nan_to_num's values ... */
    PyObject *cpu_args;   /* extra positional args for the NumPy kernel, or NULL */
} pcs_ew_call;

/* Runs the op over ops[0..arity) into `out` (a tensor the caller supplies:
 * out=, or self for in-place) or a new tensor. Returns a new reference. */
PyObject *pcs_ew_run(const pcs_ew_call *c, pcs_operand *ops, PyObject *out);

/* The NumPy kernel `name` of pycuda_sem._ops (borrowed), or NULL with exception. */
PyObject *pcs_ops_numpy_fn(const char *name);
/* -1 with RuntimeError when numel * itemsize of t overflows the address
 * space (an expanded view), so no CPU path hands NumPy what it refuses. */
int pcs_ops_check_cpu_size(const PcsTensor *t);
/* A NumPy array for a CPU tensor computed in `dtype` (bfloat16 computes in float32). */
PyObject *pcs_ops_numpy_in(PcsTensor *t, int dtype);
/* The dtype NumPy computes in for `dtype` on the CPU. */
int pcs_ops_cpu_dtype(int dtype);

/* out= argument: NULL/None -> NULL; else must be a tensor (TypeError). */
int pcs_out_arg(PyObject *obj, PyObject **out);

/* ---- the op files' tables (merged by ops.c) ------------------------------- */

/* f_<name> (module function) and m_<name> (Tensor method) from one call
 * expression over (self, a, n, kw), and the table rows that name them. */
#define PCS_OP_PAIR(name, call)                                                                   \
    static PyObject *f_##name(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *kw)       \
    {                                                                                             \
        PyObject *self = NULL;                                                                    \
        PCS_UNUSED(m);                                                                            \
        return call;                                                                              \
    }                                                                                             \
    static PyObject *m_##name(PyObject *self, PyObject *const *a, Py_ssize_t n, PyObject *kw)    \
    {                                                                                             \
        return call;                                                                              \
    }
#define PCS_FK (METH_FASTCALL | METH_KEYWORDS)
#define PCS_FN(f) (PyCFunction)(void (*)(void))(f)
#define PCS_T_ENTRY(name, doc) {#name, PCS_FN(m_##name), PCS_FK, doc},
#define PCS_F_ENTRY(name, doc) {#name, PCS_FN(f_##name), PCS_FK, doc},

extern PyMethodDef pcs_ops_binary_tmethods[], pcs_ops_binary_functions[];
extern PyMethodDef pcs_ops_unary_tmethods[], pcs_ops_unary_functions[];
extern PyMethodDef pcs_ops_reduce_tmethods[], pcs_ops_reduce_functions[];
int pcs_ops_reduce_init(PyObject *module); /* the return_types structs */
extern PyMethodDef pcs_ops_join_functions[];                           /* join.c */
extern PyMethodDef pcs_ops_split_tmethods[], pcs_ops_split_functions[]; /* split.c */
extern PyMethodDef pcs_ops_shape_tmethods[], pcs_ops_shape_functions[]; /* shape_ops.c */
extern PyMethodDef pcs_ops_diag_tmethods[], pcs_ops_diag_functions[];   /* diag.c */
extern PyMethodDef pcs_ops_softmax_tmethods[], pcs_ops_softmax_functions[]; /* softmax.c */
extern PyMethodDef pcs_ops_fused_functions[]; /* fused_layers.c */
extern PyMethodDef pcs_ops_optim_functions[]; /* optim.c */
extern PyMethodDef pcs_ops_py_tmethods[]; /* py_methods.c: methods over pycuda_sem/_math.py */
extern PyGetSetDef pcs_ops_py_getset[];   /* py_methods.c: properties written in Python (H, mH, layout) */

/* ---- helpers the op files share (op_common.c) ------------------------------- */

/* The input of a function/method pair: self for a method, else argument 0
 * (or input=); TypeError naming fname otherwise. Borrowed. */
PcsTensor *pcs_input_arg(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw,
                         const char *fname);
/* An int argument (through __index__), dflt when absent or None. */
int pcs_int_arg_or(PyObject *o, int64_t dflt, int64_t *out);
/* torch's RuntimeError "Expected all tensors to be on the same device, but
 * found at least two devices, cuda:0 and cpu!"; returns -1. */
int pcs_device_mismatch(int a, int b);
/* Attribute `name` of Python module `module` (imported once into *cache),
 * borrowed (the module keeps it), or NULL with exception: how the C side
 * reaches the parts written in Python. */
PyObject *pcs_py_attr(PyObject **cache, const char *module, const char *name);
/* "[2, 3]" for messages. */
void pcs_shape_str(int ndim, const int64_t *sizes, char *buf, size_t n);
/* A view of t narrowed to [start, start + len) along dim. */
PcsTensor *pcs_narrow_view(PcsTensor *t, int dim, int64_t start, int64_t len);
/* A new contiguous tensor with the values of view v (consumed; NULL passes
 * the failure that made it on). */
PyObject *pcs_materialize(PcsTensor *v);
/* A zero-filled tensor. */
PcsTensor *pcs_zeros_tensor(int ndim, const int64_t *sizes, int dtype, int device);
/* res (consumed) copied into out= (same device and shape: no resizing),
 * returning out; res itself when out is NULL. */
PyObject *pcs_into_out(PyObject *res, PyObject *out, const char *fname);
/* A NumPy array to write a CPU result into: t's own memory, or a float32
 * stand-in (*tmp) for bfloat16, copied back by pcs_np_done. */
PyObject *pcs_np_out(PcsTensor *t, PcsTensor **tmp);
int pcs_np_done(PcsTensor *t, PcsTensor *tmp);
/* A return_types struct sequence type (values, indices, ...) that prints as
 * torch's: "torch.return_types.sort(\nvalues=...,\nindices=...)". */
PyTypeObject *pcs_return_type_new(PyStructSequence_Desc *desc);


/* Binary entry for the operators (ops_binary.c): which is an index of its table. */
PyObject *pcs_binary_operator(int which, PyObject *a, PyObject *b, bool inplace);
enum {
    PCS_OPR_ADD, PCS_OPR_SUB, PCS_OPR_MUL, PCS_OPR_TRUEDIV, PCS_OPR_FLOORDIV, PCS_OPR_MOD,
    PCS_OPR_POW, PCS_OPR_AND, PCS_OPR_OR, PCS_OPR_XOR, PCS_OPR_LSHIFT, PCS_OPR_RSHIFT,
    PCS_OPR_EQ, PCS_OPR_NE, PCS_OPR_LT, PCS_OPR_LE, PCS_OPR_GT, PCS_OPR_GE
};
/* Unary entry for the operators (-x, +x, abs(x), ~x). */
PyObject *pcs_unary_operator(int op, PyObject *x);

#endif
