/* autograd.h: what the autograd layer's files share.
 *
 * Reverse-mode differentiation in the style of torch's: every recorded op
 * call becomes one node (a C struct that is also the Python grad_fn object
 * and, for formulas, the ctx the backward formula reads); nodes point at the
 * nodes of their inputs through edges; leaves that require grad end in an
 * AccumulateGrad node. The files:
 *   meta.c    the per-tensor record (requires_grad, grad, grad_fn, hooks)
 *             and the Tensor attributes and methods over it
 *   node.c    the node type, its saved tensors, the ctx API, custom Functions
 *   function.c    the C half of autograd.Function (ctx, wiring)
 *   record.c      the wrappers around every op that record nodes, the formula
 *                 registry, the version counter bumps of in-place ops
 *                 (record_slots.c: the same for the operator slots; record.h)
 *   saved_hooks.c    saved_tensors_hooks: the per-thread pack/unpack pair
 *                 stack, and the packing and unpacking of a node's saved tensors
 *   fast_formulas.c  C twins of the hottest backward formulas
 *   engine.c      the backward pass: dependency counting, a ready heap, the
 *                 stream ordering of the CUDA semantics note (engine_grads.c:
 *                 a node's gradients, hooks and formula call; engine.h)
 * Ownership: a tensor owns its record, which owns grad and grad_fn (strong);
 * a node owns the nodes its edges point at and the tensors it saved, never
 * the tensors it produced (an output it saves is kept as a separate alias),
 * so the only references from a graph back to its outputs are weak and `del`
 * of the last output frees the whole graph at once. */
#ifndef PCS_AUTOGRAD_H
#define PCS_AUTOGRAD_H

#include "core/common.h"
#include "tensor/tensor.h"

typedef struct PcsNode PcsNode;
/* A backward formula written in C (fast_formulas.c): the tuple of gradients
 * aligned with the call's args, or Py_NotImplemented to defer to Python. */
typedef PyObject *(*pcs_cformula)(PcsNode *n, PyObject *grad);

typedef struct {
    PcsNode *fn; /* strong, or NULL: that input needs no gradient */
    int nr;      /* which of fn's gradient inputs this edge feeds */
} pcs_edge;

/* What a node knows about one of its tensor inputs (or outputs) without
 * keeping it alive: enough to check, reduce and cast a gradient for it. */
typedef struct {
    int ndim, dtype, device;
    int64_t sizes[PCS_MAX_DIMS];
} pcs_tmeta;

/* A tensor's autograd record (PcsTensor.autograd). */
typedef struct {
    bool requires_grad; /* a leaf the user marked, or any output with grad_fn */
    bool retains_grad;
    PcsNode *grad_fn;   /* strong; NULL for a leaf */
    int output_nr;
    PyObject *grad;     /* strong or NULL */
    PcsNode *acc;       /* borrowed: the leaf's AccumulateGrad while it lives */
    PyObject *hooks;    /* dict id -> fn, or NULL (leaf hooks; a non-leaf's
                           dict is also listed on its grad_fn) */
    PyObject *post_hooks; /* dict, register_post_accumulate_grad_hook */
    PyObject *base;     /* strong: the tensor this one is a view of (recorded views) */
} pcs_meta;

enum { PCS_NODE_FORMULA = 0, PCS_NODE_ACCUMULATE = 1, PCS_NODE_FUNCTION = 2 };

/* How one positional argument of a recorded call maps onto the node's flat
 * list of tensor inputs (edges): a tensor (flat >= 0), a sequence whose
 * elements are listed in elem[first .. first + len), or anything else. */
typedef struct {
    int flat;  /* tensor: its edge index; -1 otherwise */
    int first; /* sequence: first entry in elem[], else -1 */
    int len;   /* sequence length, else 0 */
} pcs_argmap;

/* A tensor the node keeps for backward. Inputs are kept as they are (they do
 * not point back at this node); outputs as an alias without a record. */
typedef struct {
    PcsTensor *t;    /* strong; NULL while packed (saved_hooks.c) and not unpacked */
    int64_t version; /* storage version when saved */
    int output_nr;   /* >= 0: an output of this node */
    /* Saved under saved_tensors_hooks: what pack_hook returned and the
     * unpack_hook that gives the tensor back (both strong), else NULL. An
     * input kept packed sits as None in args[arg] (or args[arg][elem] for a
     * sequence, elem >= 0) and is edge `flat`; arg is -1 otherwise. */
    PyObject *packed, *unpack;
    int arg, elem, flat;
} pcs_saved;

struct PcsNode {
    PyObject_HEAD
    PyObject *dict;  /* attributes a custom Function's ctx sets */
    PyObject *weakreflist;
    int kind;
    PyObject *name;  /* str */
    uint64_t seq;    /* creation order: the engine runs later nodes first */
    int n_edges;
    pcs_edge *edges;
    pcs_tmeta *in_meta;  /* n_edges */
    int n_outputs;
    pcs_tmeta *out_meta; /* n_outputs */
    int device;          /* where the forward ran (-1: CPU) */
    cudaStream_t stream; /* the forward's current stream on `device` */
    /* formula / custom Function */
    PyObject *formula;   /* fn(ctx, *grads) */
    pcs_cformula cfn;    /* its C twin for the common cases, or NULL */
    PyObject *args;      /* tuple: saved tensors in place, others None */
    PyObject *kwargs;    /* dict */
    int n_args;
    pcs_argmap *amap;    /* n_args */
    int *elem;           /* flat indices of sequence elements (-1: no tensor) */
    int n_saved;
    pcs_saved *saved;
    PyObject *result;    /* tuple of saved output aliases, or NULL */
    PyObject *packed_args; /* args with packed inputs as None while args holds them unpacked */
    bool has_saved, released, materialize, in_function;
    PyObject *to_save;      /* custom Function: tuple given to save_for_backward */
    PyObject *dirty, *non_diff; /* custom Function: tuples of tensors */
    /* AccumulateGrad */
    PcsTensor *leaf; /* strong */
    /* hooks */
    PyObject *tensor_hooks; /* list of (output_nr, dict) of non-leaf tensors */
    PyObject *retains;      /* list of (output_nr, weakref) for retain_grad */
    PyObject *pre_hooks, *post_hooks; /* dicts of grad_fn.register_(pre)hook */
    PyObject *metadata;
    /* engine scratch, valid while run == the engine's current run id */
    uint64_t run;
    int deps;
    bool needed;
    PyObject **buf;     /* n_outputs gradients being summed */
    cudaStream_t *buf_stream; /* the stream each was produced on */
    int heap_pos;
};

extern PyTypeObject PcsNode_Type;
#define PcsNode_Check(o) PyObject_TypeCheck((o), &PcsNode_Type)

/* ---- meta.c ---------------------------------------------------------------- */
static inline pcs_meta *pcs_ag_meta(PyObject *o)
{
    return (pcs_meta *)((PcsTensor *)o)->autograd;
}
/* The record of t, created empty if missing; NULL with MemoryError. */
pcs_meta *pcs_ag_meta_get(PcsTensor *t);
static inline bool pcs_ag_requires_grad(PyObject *o)
{
    pcs_meta *m = pcs_ag_meta(o);
    return m && m->requires_grad;
}
/* The edge a gradient for t flows along: its grad_fn, or the leaf's
 * AccumulateGrad (created on demand), or {NULL, 0}. -1 with exception. */
int pcs_ag_gradient_edge(PcsTensor *t, pcs_edge *e);
/* Makes t an output of node fn: requires_grad, grad_fn = fn (new ref), nr. */
int pcs_ag_set_history(PcsTensor *t, PcsNode *fn, int nr);
void pcs_ag_tmeta_of(const PcsTensor *t, pcs_tmeta *m);
/* New tensor aliasing t's memory and geometry, without a record. */
PcsTensor *pcs_ag_alias(PcsTensor *t);
bool pcs_ag_differentiable_dtype(int dtype);
/* A RemovableHandle for fn as a new entry of *dict (created on first use). */
PyObject *pcs_ag_add_hook(PyObject **dict, PyObject *fn);
extern PyGetSetDef pcs_ag_tensor_getset[];
extern PyMethodDef pcs_ag_tensor_methods[];

/* ---- node.c ---------------------------------------------------------------- */
PcsNode *pcs_node_new(int kind, PyObject *name);
/* Builds edges, in_meta, amap and the args tuple of a recorded call.
 * save[i] (may be NULL) says whether positional arg i is kept. */
int pcs_node_set_inputs(PcsNode *n, PyObject *const *args, Py_ssize_t nargs, const bool *save,
                        PyObject *self_clone);
/* Adds a saved tensor (output_nr >= 0: an output, kept as an alias). */
int pcs_node_save(PcsNode *n, PcsTensor *t, int output_nr);
/* Checks every saved tensor's version; -1 with torch's RuntimeError. */
int pcs_node_check_saved(PcsNode *n);
/* Drops what the node saved (after its backward ran, unless retained). */
void pcs_node_release(PcsNode *n);
/* Forgets the tensors unpack hooks gave back (a retained node unpacks again
 * at its next use, as torch's does). */
void pcs_node_drop_unpacked(PcsNode *n);
/* Unpacks the node's packed saved tensors into saved[].t and args; -1 with
 * the hook's exception (saved_hooks.c; pcs_node_check_saved calls it). */
int pcs_node_unpack_saved(PcsNode *n);
/* The AccumulateGrad node of leaf t (new ref). */
PcsNode *pcs_node_accumulate(PcsTensor *t);
/* Decref that defers deep chains instead of recursing (graph teardown). */
void pcs_ag_decref(PyObject *o);
int pcs_node_init(PyObject *module);
int pcs_function_init(PyObject *module); /* function.c */
int pcs_meta_init(void);                 /* meta.c */

/* ---- saved_hooks.c --------------------------------------------------------- */
/* Packs t with the innermost saved_tensors_hooks pair: 0 (no hooks; *packed
 * and *unpack NULL), 1 (new refs in *packed, *unpack) or -1 with exception. */
int pcs_saved_pack(PcsTensor *t, PyObject **packed, PyObject **unpack);
/* unpack(packed), checked to be a tensor (new ref), or NULL with exception. */
PcsTensor *pcs_saved_unpack(PyObject *unpack, PyObject *packed);
int pcs_saved_hooks_init(PyObject *module);

/* ---- record.c -------------------------------------------------------------- */
/* Wraps the number/mapping slots (before PyType_Ready). */
void pcs_ag_wrap_slots(PyNumberMethods *nb, PyMappingMethods *mp);
/* Wraps every op method/property of Tensor and op function of the module. */
int pcs_ag_wrap_module(PyObject *module);
int pcs_record_init(PyObject *module);

/* ---- fast_formulas.c ------------------------------------------------------ */
pcs_cformula pcs_ag_cformula(const char *name);

/* ---- engine.c -------------------------------------------------------------- */
/* The engine; see _run_backward. keep_graph: retain_graph. */
PyObject *pcs_ag_run_backward(PyObject *tensors, PyObject *grads, bool keep_graph, bool create_graph,
                              PyObject *inputs, bool allow_unused, bool accumulate);
int pcs_engine_init(PyObject *module);

#endif
