/* node.c: the graph node. One C struct is the engine's node, the grad_fn
 * object users see (name(), next_functions, hooks) and the ctx a backward
 * formula reads (args, kwargs, result, shapes, needs_input_grad). This file
 * has its life cycle: creation, the inputs of a recorded call (edges and
 * the tensors it keeps), saved-tensor checks, release after backward, the
 * AccumulateGrad node of a leaf, and a teardown that never recurses deeply.
 * Under saved_tensors_hooks a saved tensor is packed as it is saved and
 * unpacked by pcs_node_check_saved, which every reader calls first
 * (saved_hooks.c). */
#include "autograd/autograd.h"

#include <string.h>

#include "autograd/anomaly.h"
#include "autograd/grad_mode.h"
#include "core/dtype.h"
#include "runtime/stream.h"

static uint64_t node_seq = 0;

/* ---- teardown without recursion --------------------------------------------- */
/* Freeing a chain of 10^5 nodes one Py_DECREF inside the next would overflow
 * the C stack; past a small depth the objects wait on a list that the
 * outermost call drains in a loop. */
static int decref_depth = 0;
static PyObject **pending = NULL;
static size_t n_pending = 0, cap_pending = 0;

void pcs_ag_decref(PyObject *o)
{
    if (!o)
        return;
    if (Py_REFCNT(o) > 1) {
        Py_DECREF(o);
        return;
    }
    if (decref_depth >= 32) {
        if (n_pending == cap_pending) {
            size_t cap = cap_pending ? 2 * cap_pending : 256;
            PyObject **p = PyMem_RawRealloc(pending, cap * sizeof(PyObject *));
            if (!p) { /* out of memory: recursing is the lesser evil */
                Py_DECREF(o);
                return;
            }
            pending = p;
            cap_pending = cap;
        }
        pending[n_pending++] = o;
        return;
    }
    decref_depth++;
    Py_DECREF(o);
    decref_depth--;
    if (decref_depth == 0) {
        while (n_pending) {
            PyObject *p = pending[--n_pending];
            decref_depth++;
            Py_DECREF(p);
            decref_depth--;
        }
    }
}

/* ---- life cycle ----------------------------------------------------------------- */

PcsNode *pcs_node_new(int kind, PyObject *name)
{
    PcsNode *n = (PcsNode *)PcsNode_Type.tp_alloc(&PcsNode_Type, 0);
    if (!n)
        return NULL;
    n->kind = kind;
    n->name = Py_NewRef(name);
    n->seq = ++node_seq;
    n->device = -1;
    n->materialize = true;
    n->heap_pos = -1;
    if (kind != PCS_NODE_ACCUMULATE && pcs_anomaly_enabled() && pcs_anomaly_note_forward(n) < 0) {
        Py_DECREF(n);
        return NULL;
    }
    return n;
}

static void node_clear_saved(PcsNode *n)
{
    pcs_saved *sv = n->saved;
    int ns = n->n_saved;
    n->saved = NULL;
    n->n_saved = 0;
    for (int i = 0; i < ns; i++) {
        pcs_ag_decref((PyObject *)sv[i].t);
        pcs_ag_decref(sv[i].packed);
        Py_XDECREF(sv[i].unpack);
    }
    PyMem_Free(sv);
    PyObject *a = n->args, *r = n->result, *ts = n->to_save, *pa = n->packed_args;
    n->args = n->result = n->to_save = n->packed_args = NULL;
    pcs_ag_decref(a);
    pcs_ag_decref(r);
    pcs_ag_decref(ts);
    pcs_ag_decref(pa);
}

static void node_dealloc(PyObject *self)
{
    PcsNode *n = (PcsNode *)self;
    if (n->weakreflist)
        PyObject_ClearWeakRefs(self);
    if (n->leaf) {
        pcs_meta *m = n->leaf->autograd;
        if (m && m->acc == n)
            m->acc = NULL;
        pcs_ag_decref((PyObject *)n->leaf);
    }
    node_clear_saved(n);
    for (int i = 0; i < n->n_edges; i++)
        pcs_ag_decref((PyObject *)n->edges[i].fn);
    if (n->buf)
        for (int i = 0; i < n->n_outputs; i++)
            Py_XDECREF(n->buf[i]);
    PyMem_Free(n->buf);
    PyMem_Free(n->buf_stream);
    PyMem_Free(n->edges);
    PyMem_Free(n->in_meta);
    PyMem_Free(n->out_meta);
    PyMem_Free(n->amap);
    PyMem_Free(n->elem);
    Py_XDECREF(n->dict);
    Py_XDECREF(n->name);
    Py_XDECREF(n->formula);
    Py_XDECREF(n->kwargs);
    Py_XDECREF(n->dirty);
    Py_XDECREF(n->non_diff);
    Py_XDECREF(n->tensor_hooks);
    Py_XDECREF(n->retains);
    Py_XDECREF(n->pre_hooks);
    Py_XDECREF(n->post_hooks);
    Py_XDECREF(n->metadata);
    Py_TYPE(self)->tp_free(self);
}

/* The stream a node's backward will run on: the current stream of the
 * device its forward ran on, read when the node is made. */
static void node_set_device(PcsNode *n, int device)
{
    if (n->device < 0 && device >= 0) {
        n->device = device;
        n->stream = pcs_current_stream(device);
    }
}

int pcs_node_save(PcsNode *n, PcsTensor *t, int output_nr)
{
    pcs_saved *s = PyMem_Realloc(n->saved, (size_t)(n->n_saved + 1) * sizeof *s);
    if (!s) {
        PyErr_NoMemory();
        return -1;
    }
    n->saved = s;
    PcsTensor *keep = output_nr >= 0 ? pcs_ag_alias(t) : (PcsTensor *)Py_NewRef(t);
    if (!keep)
        return -1;
    /* under saved_tensors_hooks the node keeps what pack_hook made of it */
    PyObject *packed, *unpack;
    int hooked = pcs_saved_pack(keep, &packed, &unpack);
    if (hooked) {
        pcs_ag_decref((PyObject *)keep);
        keep = NULL;
        if (hooked < 0)
            return -1;
    }
    s = &n->saved[n->n_saved];
    s->t = keep;
    s->version = t->storage->version;
    s->output_nr = output_nr;
    s->packed = packed;
    s->unpack = unpack;
    s->arg = s->elem = s->flat = -1;
    n->n_saved++;
    n->has_saved = true;
    return 0;
}

static bool holds_tensor(PyObject *seq)
{
    Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t j = 0; j < len; j++)
        if (PcsTensor_Check(items[j]))
            return true;
    return false;
}

/* The stored form of one tensor input t: kept (keep_as, listed as saved) or
 * None. The edge, shape and device are t's. */
static PyObject *input_slot(PcsNode *n, PcsTensor *t, PcsTensor *keep_as, bool keep, int flat,
                            int arg, int elem)
{
    pcs_ag_tmeta_of(t, &n->in_meta[flat]);
    node_set_device(n, t->device);
    if (pcs_ag_gradient_edge(t, &n->edges[flat]) < 0)
        return NULL;
    if (!keep)
        Py_RETURN_NONE;
    if (pcs_node_save(n, keep_as, -1) < 0)
        return NULL;
    pcs_saved *s = &n->saved[n->n_saved - 1];
    if (s->packed) { /* packed: args holds None there until it is unpacked */
        s->arg = arg;
        s->elem = elem;
        s->flat = flat;
        Py_RETURN_NONE;
    }
    return Py_NewRef(keep_as);
}

int pcs_node_set_inputs(PcsNode *n, PyObject *const *args, Py_ssize_t nargs, const bool *save,
                        PyObject *self_clone)
{
    int n_flat = 0, n_elem = 0;
    for (Py_ssize_t i = 0; i < nargs; i++) {
        PyObject *a = args[i];
        if (PcsTensor_Check(a))
            n_flat++;
        else if ((PyList_Check(a) || PyTuple_Check(a)) && holds_tensor(a)) {
            Py_ssize_t len = PySequence_Fast_GET_SIZE(a);
            n_elem += (int)len;
            for (Py_ssize_t j = 0; j < len; j++)
                n_flat += PcsTensor_Check(PySequence_Fast_GET_ITEM(a, j));
        }
    }
    n->n_args = (int)nargs;
    n->n_edges = n_flat;
    n->amap = PyMem_Calloc((size_t)nargs + 1, sizeof *n->amap);
    n->edges = PyMem_Calloc((size_t)n_flat + 1, sizeof *n->edges);
    n->in_meta = PyMem_Calloc((size_t)n_flat + 1, sizeof *n->in_meta);
    n->elem = PyMem_Calloc((size_t)n_elem + 1, sizeof *n->elem);
    n->args = PyTuple_New(nargs);
    if (!n->amap || !n->edges || !n->in_meta || !n->elem || !n->args) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        return -1;
    }
    int flat = 0, el = 0;
    for (Py_ssize_t i = 0; i < nargs; i++) {
        PyObject *a = args[i], *v;
        bool keep = save && save[i];
        pcs_argmap *am = &n->amap[i];
        am->flat = am->first = -1;
        if (PcsTensor_Check(a)) {
            am->flat = flat;
            /* an in-place op keeps a copy of self from before it ran */
            PcsTensor *keep_as = (PcsTensor *)(i == 0 && self_clone ? self_clone : a);
            v = input_slot(n, (PcsTensor *)a, keep_as, keep, flat++, (int)i, -1);
        } else if ((PyList_Check(a) || PyTuple_Check(a)) && holds_tensor(a)) {
            Py_ssize_t len = PySequence_Fast_GET_SIZE(a);
            am->first = el;
            am->len = (int)len;
            v = PyTuple_New(len);
            for (Py_ssize_t j = 0; v && j < len; j++) {
                PyObject *e = PySequence_Fast_GET_ITEM(a, j), *ev;
                if (PcsTensor_Check(e)) {
                    n->elem[el + j] = flat;
                    ev = input_slot(n, (PcsTensor *)e, (PcsTensor *)e, keep, flat++, (int)i, (int)j);
                } else {
                    n->elem[el + j] = -1;
                    ev = Py_NewRef(e);
                }
                if (!ev)
                    Py_CLEAR(v);
                else
                    PyTuple_SET_ITEM(v, j, ev);
            }
            el += (int)len;
        } else {
            v = Py_NewRef(a);
        }
        if (!v)
            return -1;
        PyTuple_SET_ITEM(n->args, i, v);
    }
    return 0;
}

static PyObject *tensor_type_str(PcsTensor *t)
{
    PyObject *ty = PyObject_CallMethod((PyObject *)t, "type", NULL);
    if (!ty)
        return NULL;
    char shape[256];
    int k = 0;
    shape[0] = 0;
    for (int d = 0; d < t->ndim && k < (int)sizeof shape - 24; d++)
        k += snprintf(shape + k, sizeof shape - (size_t)k, d ? ", %lld" : "%lld", (long long)t->sizes[d]);
    PyObject *r = PyUnicode_FromFormat("[%U [%s]]", ty, shape);
    Py_DECREF(ty);
    return r;
}

int pcs_node_check_saved(PcsNode *n)
{
    if (n->released && n->has_saved) {
        PyErr_SetString(PyExc_RuntimeError,
                        "Trying to backward through the graph a second time (or directly access saved "
                        "tensors after they have already been freed). Saved intermediate values of the "
                        "graph are freed when you call .backward() or autograd.grad(). Specify "
                        "retain_graph=True if you need to backward through the graph a second time or "
                        "if you need to access saved tensors after calling backward.");
        return -1;
    }
    if (pcs_node_unpack_saved(n) < 0)
        return -1;
    for (int i = 0; i < n->n_saved; i++) {
        pcs_saved *s = &n->saved[i];
        if (!s->t || s->t->storage->version == s->version)
            continue;
        PyObject *desc = tensor_type_str(s->t);
        if (!desc)
            return -1;
        /* torch names where the modified tensor came from: its own grad_fn
         * (an output kept by this node is output_nr of this node) */
        pcs_meta *m = s->t->autograd;
        PcsNode *src = s->output_nr >= 0 ? n : (m ? m->grad_fn : NULL);
        int src_nr = s->output_nr >= 0 ? s->output_nr : (m ? m->output_nr : 0);
        PyObject *which = src ? PyUnicode_FromFormat(", which is output %d of %U,", src_nr, src->name)
                              : PyUnicode_FromString("");
        if (!which) {
            Py_DECREF(desc);
            return -1;
        }
        PyErr_Format(PyExc_RuntimeError,
                     "one of the variables needed for gradient computation has been modified by an "
                     "inplace operation: %U%U is at version %lld; expected version %lld instead. Hint: "
                     "the backtrace further above shows the operation that failed to compute its "
                     "gradient. The variable in question was changed in there or anywhere later. "
                     "Good luck!",
                     desc, which, (long long)s->t->storage->version, (long long)s->version);
        Py_DECREF(which);
        Py_DECREF(desc);
        return -1;
    }
    return 0;
}

void pcs_node_release(PcsNode *n)
{
    /* a node that kept no tensor can run again (torch: y = x.sum() backs
     * through twice); its args hold nothing worth freeing */
    if (n->has_saved)
        node_clear_saved(n);
    n->released = true;
}

PcsNode *pcs_node_accumulate(PcsTensor *t)
{
    pcs_meta *m = pcs_ag_meta_get(t);
    if (!m)
        return NULL;
    if (m->acc)
        return (PcsNode *)Py_NewRef(m->acc);
    static PyObject *name = NULL;
    if (!name && !(name = PyUnicode_InternFromString("torch::autograd::AccumulateGrad")))
        return NULL;
    PcsNode *n = pcs_node_new(PCS_NODE_ACCUMULATE, name);
    if (!n)
        return NULL;
    n->n_outputs = 1;
    n->out_meta = PyMem_Calloc(1, sizeof *n->out_meta);
    if (!n->out_meta) {
        Py_DECREF(n);
        return (PcsNode *)PyErr_NoMemory();
    }
    pcs_ag_tmeta_of(t, n->out_meta);
    n->leaf = (PcsTensor *)Py_NewRef(t);
    n->device = t->device;
    m->acc = n;
    return n;
}

/* ---- what a formula reads --------------------------------------------------------- */

#define N(o) ((PcsNode *)(o))

/* A custom Function's ctx may use these names for its own attributes
 * (ctx.result = ...): there the instance dict wins. */
static PyObject *user_attr(PyObject *self, void *name)
{
    PcsNode *n = N(self);
    if (n->kind != PCS_NODE_FUNCTION || !n->dict)
        return NULL;
    return PyDict_GetItemString(n->dict, (const char *)name);
}

static int set_user_attr(PyObject *self, PyObject *v, void *name)
{
    PcsNode *n = N(self);
    if (n->kind != PCS_NODE_FUNCTION) {
        PyErr_Format(PyExc_AttributeError, "attribute '%s' of a built-in node is read-only",
                     (const char *)name);
        return -1;
    }
    if (!n->dict && !(n->dict = PyDict_New()))
        return -1;
    return v ? PyDict_SetItemString(n->dict, (const char *)name, v)
             : PyDict_DelItemString(n->dict, (const char *)name);
}

static PyObject *get_args(PyObject *self, void *c)
{
    PyObject *u = user_attr(self, c);
    if (u)
        return Py_NewRef(u);
    if (pcs_node_check_saved(N(self)) < 0)
        return NULL;
    return Py_NewRef(N(self)->args ? N(self)->args : Py_None);
}

static PyObject *get_kwargs(PyObject *self, void *c)
{
    PyObject *u = user_attr(self, c);
    if (u)
        return Py_NewRef(u);
    if (!N(self)->kwargs && !(N(self)->kwargs = PyDict_New()))
        return NULL;
    return Py_NewRef(N(self)->kwargs);
}

/* A saved output for backward: under create_graph it must carry this node
 * as its grad_fn (double backward differentiates through it), so a fresh
 * alias is given each time; otherwise the stored alias. */
static PyObject *unpack_output(PcsNode *n, PcsTensor *t, int nr)
{
    if (!pcs_grad_enabled() || nr >= n->n_outputs || !pcs_ag_differentiable_dtype(t->dtype))
        return Py_NewRef(t);
    PcsTensor *a = pcs_ag_alias(t);
    if (a && pcs_ag_set_history(a, n, nr) < 0)
        Py_CLEAR(a);
    return (PyObject *)a;
}

static PyObject *get_result(PyObject *self, void *c)
{
    PyObject *u = user_attr(self, c);
    if (u)
        return Py_NewRef(u);
    PcsNode *n = N(self);
    if (pcs_node_check_saved(n) < 0)
        return NULL;
    int k = 0, cnt = 0;
    for (int i = 0; i < n->n_saved; i++)
        cnt += n->saved[i].output_nr >= 0;
    if (!cnt)
        Py_RETURN_NONE;
    /* some outputs kept, not all (save_result as a tuple): each at its own
     * index, None for the others */
    bool sparse = cnt < n->n_outputs;
    PyObject *tup = PyTuple_New(sparse ? n->n_outputs : cnt);
    for (int i = 0; tup && sparse && i < n->n_outputs; i++)
        PyTuple_SET_ITEM(tup, i, Py_NewRef(Py_None));
    for (int i = 0; tup && i < n->n_saved; i++) {
        int o = n->saved[i].output_nr;
        if (o < 0 || (sparse && o >= n->n_outputs))
            continue;
        PyObject *v = unpack_output(n, n->saved[i].t, o);
        if (!v) {
            Py_CLEAR(tup);
            break;
        }
        if (sparse) {
            PyObject *none = PyTuple_GET_ITEM(tup, o);
            PyTuple_SET_ITEM(tup, o, v);
            Py_DECREF(none);
        } else
            PyTuple_SET_ITEM(tup, k++, v);
    }
    if (tup && cnt == 1 && n->n_outputs == 1) {
        PyObject *one = Py_NewRef(PyTuple_GET_ITEM(tup, 0));
        Py_DECREF(tup);
        return one;
    }
    return tup;
}

/* Per positional arg: f(flat index) for a tensor, a tuple of those for a
 * sequence, `other` for anything else. */
static PyObject *per_arg(PcsNode *n, PyObject *(*f)(PcsNode *, int), PyObject *other)
{
    PyObject *t = PyTuple_New(n->n_args);
    for (int i = 0; t && i < n->n_args; i++) {
        pcs_argmap *am = &n->amap[i];
        PyObject *v;
        if (am->flat >= 0) {
            v = f(n, am->flat);
        } else if (am->first >= 0) {
            v = PyTuple_New(am->len);
            for (int j = 0; v && j < am->len; j++) {
                int fl = n->elem[am->first + j];
                PyObject *e = fl >= 0 ? f(n, fl) : Py_NewRef(other);
                if (!e)
                    Py_CLEAR(v);
                else
                    PyTuple_SET_ITEM(v, j, e);
            }
        } else {
            v = Py_NewRef(other);
        }
        if (!v)
            Py_CLEAR(t);
        else
            PyTuple_SET_ITEM(t, i, v);
    }
    return t;
}

static PyObject *shape_of(PcsNode *n, int fl)
{
    return pcs_size_new(n->in_meta[fl].ndim, n->in_meta[fl].sizes);
}

static PyObject *dtype_of(PcsNode *n, int fl)
{
    return Py_NewRef(pcs_dtype_object(n->in_meta[fl].dtype));
}

static PyObject *needs_of(PcsNode *n, int fl)
{
    return PyBool_FromLong(n->edges[fl].fn != NULL);
}

static PyObject *get_shapes(PyObject *self, void *c)
{
    PyObject *u = user_attr(self, c);
    if (u)
        return Py_NewRef(u);
    return per_arg(N(self), shape_of, Py_None);
}

static PyObject *get_dtypes(PyObject *self, void *c)
{
    PyObject *u = user_attr(self, c);
    if (u)
        return Py_NewRef(u);
    return per_arg(N(self), dtype_of, Py_None);
}

static PyObject *get_needs_input_grad(PyObject *self, void *c)
{
    /* set by Function.apply when no input needs a gradient (the ctx then
     * takes no inputs): all False, one an argument, as torch's */
    PyObject *u = user_attr(self, c);
    if (u)
        return Py_NewRef(u);
    return per_arg(N(self), needs_of, Py_False);
}

static PyObject *get_next_functions(PyObject *self, void *c)
{
    PCS_UNUSED(c);
    PcsNode *n = N(self);
    PyObject *t = PyTuple_New(n->n_edges);
    for (int i = 0; t && i < n->n_edges; i++) {
        PyObject *e = Py_BuildValue("(Oi)", n->edges[i].fn ? (PyObject *)n->edges[i].fn : Py_None,
                                    n->edges[i].nr);
        if (!e)
            Py_CLEAR(t);
        else
            PyTuple_SET_ITEM(t, i, e);
    }
    return t;
}

static PyObject *get_variable(PyObject *self, void *c)
{
    PCS_UNUSED(c);
    if (!N(self)->leaf) {
        PyErr_SetString(PyExc_AttributeError, "'variable' exists only on AccumulateGrad nodes");
        return NULL;
    }
    return Py_NewRef(N(self)->leaf);
}

static PyObject *get_metadata(PyObject *self, void *c)
{
    PCS_UNUSED(c);
    if (!N(self)->metadata && !(N(self)->metadata = PyDict_New()))
        return NULL;
    return Py_NewRef(N(self)->metadata);
}

static PyObject *node_name(PyObject *self, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    return Py_NewRef(N(self)->name);
}

static PyObject *node_register_hook(PyObject *self, PyObject *fn)
{
    return pcs_ag_add_hook(&N(self)->post_hooks, fn);
}

static PyObject *node_register_prehook(PyObject *self, PyObject *fn)
{
    return pcs_ag_add_hook(&N(self)->pre_hooks, fn);
}

static PyObject *node_repr(PyObject *self)
{
    /* torch prints the class name: "AccumulateGrad", not its C++ path */
    PyObject *sep = PyUnicode_FromString("::");
    PyObject *parts = sep ? PyUnicode_RSplit(N(self)->name, sep, 1) : NULL;
    Py_XDECREF(sep);
    if (!parts)
        return NULL;
    PyObject *r = PyUnicode_FromFormat("<%U object at %p>", PyList_GET_ITEM(parts, PyList_GET_SIZE(parts) - 1),
                                       self);
    Py_DECREF(parts);
    return r;
}

extern PyMethodDef pcs_function_ctx_methods[]; /* function.c */
extern PyGetSetDef pcs_function_ctx_getset[];

static PyMethodDef node_methods[] = {
    {"name", node_name, METH_NOARGS, "The node's name, e.g. 'MulBackward0'."},
    {"register_hook", node_register_hook, METH_O,
     "register_hook(fn): fn(grad_inputs, grad_outputs) runs after this node; it may return "
     "replacement grad_inputs."},
    {"register_prehook", node_register_prehook, METH_O,
     "register_prehook(fn): fn(grad_outputs) runs before this node; it may return replacements."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef node_getset[] = {
    {"args", get_args, set_user_attr, "The recorded call's positional args (unsaved tensors are None).", "args"},
    {"kwargs", get_kwargs, set_user_attr, "The recorded call's keyword args.", "kwargs"},
    {"result", get_result, set_user_attr, "The saved output(s), or None.", "result"},
    {"shapes", get_shapes, set_user_attr, "Per arg: the tensor's Size (tuple for lists), else None.", "shapes"},
    {"dtypes", get_dtypes, set_user_attr, "Per arg: the tensor's dtype (tuple for lists), else None.", "dtypes"},
    {"needs_input_grad", get_needs_input_grad, set_user_attr, "Per arg: whether it needs a gradient.",
     "needs_input_grad"},
    {"next_functions", get_next_functions, NULL, "(node or None, input_nr) per input.", NULL},
    {"variable", get_variable, NULL, "AccumulateGrad: the leaf it accumulates into.", NULL},
    {"metadata", get_metadata, NULL, "A dict for the user's annotations.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject PcsNode_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pycuda_sem._C._Node",
    .tp_basicsize = sizeof(PcsNode),
    .tp_dealloc = node_dealloc,
    .tp_repr = node_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "A node of the autograd graph (a tensor's grad_fn; also the ctx of its backward).",
    .tp_dictoffset = offsetof(PcsNode, dict),
    .tp_weaklistoffset = offsetof(PcsNode, weakreflist),
};

int pcs_node_init(PyObject *module)
{
    /* the ctx methods of custom Functions (function.c) join the node's own */
    static PyMethodDef all_m[16];
    static PyGetSetDef all_g[20];
    int k = 0;
    for (int i = 0; node_methods[i].ml_name; i++)
        all_m[k++] = node_methods[i];
    for (int i = 0; pcs_function_ctx_methods[i].ml_name; i++)
        all_m[k++] = pcs_function_ctx_methods[i];
    k = 0;
    for (int i = 0; node_getset[i].name; i++)
        all_g[k++] = node_getset[i];
    for (int i = 0; pcs_function_ctx_getset[i].name; i++)
        all_g[k++] = pcs_function_ctx_getset[i];
    PcsNode_Type.tp_methods = all_m;
    PcsNode_Type.tp_getset = all_g;
    if (PyType_Ready(&PcsNode_Type) < 0 || pcs_saved_hooks_init(module) < 0)
        return -1;
    return PyModule_AddObjectRef(module, "_Node", (PyObject *)&PcsNode_Type);
}
