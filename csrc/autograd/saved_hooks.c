/* saved_hooks.c: torch's saved-tensor default hooks
 * (autograd.graph.saved_tensors_hooks, save_on_cpu, disable_saved_tensors_hooks).
 *
 * A per-thread stack of (pack_hook, unpack_hook) pairs, as torch's
 * SavedTensorDefaultHooks: while it is not empty, every tensor a node saves
 * (pcs_node_save, node.c) goes through the innermost pack_hook and the node
 * keeps what it returned instead of the tensor; the node gives the packed
 * object to unpack_hook when its saved tensors are read (node.c,
 * pcs_node_check_saved). A per-thread message switches the feature off: with
 * it set, pushing hooks, or saving a tensor while hooks are on, raises
 * RuntimeError(message). The Python context managers are
 * pycuda_sem/autograd/graph.py. */
#include "autograd/autograd.h"

#include "autograd/grad_mode.h"

/* Lists of 2-tuples, one per thread (a thread starts with none, as torch's).
 * Leaked at thread exit: two small objects a thread that used the hooks. */
static _Thread_local PyObject *stack;
static _Thread_local PyObject *disabled_msg;

int pcs_saved_pack(PcsTensor *t, PyObject **packed, PyObject **unpack)
{
    *packed = *unpack = NULL;
    if (!stack || !PyList_GET_SIZE(stack))
        return 0;
    if (disabled_msg) {
        PyErr_SetObject(PyExc_RuntimeError, disabled_msg);
        return -1;
    }
    PyObject *pair = PyList_GET_ITEM(stack, PyList_GET_SIZE(stack) - 1);
    PyObject *pack = PyTuple_GET_ITEM(pair, 0), *unp = PyTuple_GET_ITEM(pair, 1);
    Py_INCREF(pair); /* the hook may pop the stack */
    /* torch runs pack_hook with grad mode off: ops inside it record nothing
     * (and save nothing, so a hook that computes cannot recurse into itself) */
    bool was = pcs_grad_enabled();
    pcs_set_grad_enabled(false);
    PyObject *p = PyObject_CallOneArg(pack, (PyObject *)t);
    pcs_set_grad_enabled(was);
    if (p) {
        *packed = p;
        *unpack = Py_NewRef(unp);
    }
    Py_DECREF(pair);
    return p ? 1 : -1;
}

PcsTensor *pcs_saved_unpack(PyObject *unpack, PyObject *packed)
{
    PyObject *r = PyObject_CallOneArg(unpack, packed);
    if (r && !PcsTensor_Check(r)) {
        PyErr_Format(PyExc_TypeError, "Output of saved tensor unpack_hook expected to be a Tensor but "
                     "got result of type %.100s", Py_TYPE(r)->tp_name);
        Py_CLEAR(r);
    }
    return (PcsTensor *)r;
}

/* ---- a node's packed tensors --------------------------------------------------- */

void pcs_node_drop_unpacked(PcsNode *n)
{
    for (int i = 0; i < n->n_saved; i++)
        if (n->saved[i].packed && n->saved[i].t) {
            PyObject *t = (PyObject *)n->saved[i].t;
            n->saved[i].t = NULL;
            pcs_ag_decref(t);
        }
    if (n->packed_args) {
        PyObject *a = n->args;
        n->args = n->packed_args;
        n->packed_args = NULL;
        pcs_ag_decref(a);
    }
}

/* The unpacked tensor v for saved input s: under create_graph the formula
 * differentiates through it, so it must lead where the input did (torch
 * gives the unpacked tensor the saved input's gradient edge); a tensor the
 * hook made anew is aliased onto that edge. New ref, or NULL. */
static PyObject *with_input_history(PcsNode *n, pcs_saved *s, PcsTensor *v)
{
    pcs_edge *want = &n->edges[s->flat];
    if (!pcs_grad_enabled() || !want->fn)
        return (PyObject *)v;
    pcs_edge have;
    if (pcs_ag_gradient_edge(v, &have) < 0) {
        Py_DECREF(v);
        return NULL;
    }
    bool same = have.fn == want->fn && have.nr == want->nr;
    pcs_ag_decref((PyObject *)have.fn);
    if (same)
        return (PyObject *)v;
    PcsTensor *a = pcs_ag_alias(v);
    Py_DECREF(v);
    if (a && pcs_ag_set_history(a, want->fn, want->nr) < 0)
        Py_CLEAR(a);
    return (PyObject *)a;
}

/* args with every sequence argument's tuple copied too, so unpacked tensors
 * can be put in without touching tuples the user may hold (new ref). */
static PyObject *copy_args(PcsNode *n, PyObject *args)
{
    Py_ssize_t len = PyTuple_GET_SIZE(args);
    PyObject *c = PyTuple_New(len);
    for (Py_ssize_t i = 0; c && i < len; i++) {
        PyObject *v = PyTuple_GET_ITEM(args, i);
        if (i < n->n_args && n->amap[i].first >= 0 && PyTuple_Check(v))
            v = PyTuple_GetSlice(v, 0, PY_SSIZE_T_MAX);
        else
            Py_INCREF(v);
        if (!v)
            Py_CLEAR(c);
        else
            PyTuple_SET_ITEM(c, i, v);
    }
    return c;
}

int pcs_node_unpack_saved(PcsNode *n)
{
    /* unpacked once per use: the engine reads a node's saved tensors several
     * times in one run (its check, then the formula's ctx.args) and drops
     * them after the run (pcs_node_drop_unpacked), so each backward through
     * the node unpacks each tensor once, as torch's does */
    bool todo = false;
    for (int i = 0; i < n->n_saved; i++)
        todo |= n->saved[i].packed != NULL && !n->saved[i].t;
    if (!todo)
        return 0;
    pcs_node_drop_unpacked(n);
    PyObject *args = NULL;
    for (int i = 0; i < n->n_saved; i++) {
        pcs_saved *s = &n->saved[i];
        if (!s->packed)
            continue;
        /* the hook may run anything; the entry is re-read after it */
        PyObject *packed = Py_NewRef(s->packed), *unpack = Py_NewRef(s->unpack);
        PcsTensor *v = pcs_saved_unpack(unpack, packed);
        Py_DECREF(packed);
        Py_DECREF(unpack);
        if (!v)
            goto fail;
        if (i >= n->n_saved || n->saved[i].t || !n->saved[i].packed) { /* released meanwhile */
            Py_DECREF(v);
            PyErr_SetString(PyExc_RuntimeError, "a saved tensor's unpack_hook freed or unpacked the "
                            "node it was unpacking for");
            goto fail;
        }
        s = &n->saved[i];
        PyObject *keep = s->arg >= 0 ? with_input_history(n, s, v) : (PyObject *)v;
        if (!keep)
            goto fail;
        s->t = (PcsTensor *)keep;
        s->version = s->t->storage->version; /* a packed tensor's own writes are not tracked */
        if (s->arg < 0 || !n->args || s->arg >= PyTuple_GET_SIZE(n->args))
            continue;
        if (!args && !(args = copy_args(n, n->args)))
            goto fail;
        PyObject *slot = args;
        Py_ssize_t at = s->arg;
        if (s->elem >= 0) {
            slot = PyTuple_GET_ITEM(args, s->arg);
            at = s->elem;
            if (!PyTuple_Check(slot) || at >= PyTuple_GET_SIZE(slot))
                continue;
        }
        PyObject *old = PyTuple_GET_ITEM(slot, at);
        PyTuple_SET_ITEM(slot, at, Py_NewRef(keep));
        Py_DECREF(old);
    }
    if (args) {
        n->packed_args = n->args;
        n->args = args;
    }
    return 0;
fail:
    Py_XDECREF(args);
    pcs_node_drop_unpacked(n);
    return -1;
}

static PyObject *push_hooks(PyObject *m, PyObject *const *a, Py_ssize_t nargs)
{
    PCS_UNUSED(m);
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "_push_saved_tensors_default_hooks(pack_hook, unpack_hook)");
        return NULL;
    }
    if (disabled_msg) {
        PyErr_SetObject(PyExc_RuntimeError, disabled_msg);
        return NULL;
    }
    if (!PyCallable_Check(a[0]) || !PyCallable_Check(a[1])) {
        PyErr_SetString(PyExc_TypeError, "saved_tensors_hooks: pack_hook and unpack_hook must be callable");
        return NULL;
    }
    if (!stack && !(stack = PyList_New(0)))
        return NULL;
    PyObject *pair = PyTuple_Pack(2, a[0], a[1]);
    if (!pair)
        return NULL;
    int rc = PyList_Append(stack, pair);
    Py_DECREF(pair);
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *pop_hooks(PyObject *m, PyObject *noargs)
{
    PCS_UNUSED(m);
    PCS_UNUSED(noargs);
    Py_ssize_t n = stack ? PyList_GET_SIZE(stack) : 0;
    if (!n) {
        PyErr_SetString(PyExc_RuntimeError, "_pop_saved_tensors_default_hooks: no hooks to pop");
        return NULL;
    }
    if (PyList_SetSlice(stack, n - 1, n, NULL) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *current_hooks(PyObject *m, PyObject *noargs)
{
    PCS_UNUSED(m);
    PCS_UNUSED(noargs);
    if (!stack || !PyList_GET_SIZE(stack))
        Py_RETURN_NONE;
    return Py_NewRef(PyList_GET_ITEM(stack, PyList_GET_SIZE(stack) - 1));
}

static PyObject *hooks_disable(PyObject *m, PyObject *msg)
{
    PCS_UNUSED(m);
    if (!PyUnicode_Check(msg)) {
        PyErr_Format(PyExc_TypeError, "disable_saved_tensors_hooks(): argument 'error_message' must be "
                     "str, not %.100s", Py_TYPE(msg)->tp_name);
        return NULL;
    }
    Py_XSETREF(disabled_msg, Py_NewRef(msg));
    Py_RETURN_NONE;
}

static PyObject *hooks_enable(PyObject *m, PyObject *noargs)
{
    PCS_UNUSED(m);
    PCS_UNUSED(noargs);
    Py_CLEAR(disabled_msg);
    Py_RETURN_NONE;
}

static PyObject *hooks_disabled_message(PyObject *m, PyObject *noargs)
{
    PCS_UNUSED(m);
    PCS_UNUSED(noargs);
    return Py_NewRef(disabled_msg ? disabled_msg : Py_None);
}

/* _increment_version(tensors): what an in-place op does to the version
 * counter, for writes autograd cannot see (autograd.graph.increment_version);
 * it is how a saved tensor modified behind autograd's back is caught. */
static PyObject *increment_version(PyObject *m, PyObject *tensors)
{
    PCS_UNUSED(m);
    PyObject *seq = PySequence_Fast(tensors, "_increment_version: expected a sequence of tensors");
    if (!seq)
        return NULL;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t i = 0; i < len; i++)
        if (!PcsTensor_Check(items[i])) {
            PyErr_Format(PyExc_TypeError, "increment_version(): expected a Tensor or a sequence of "
                         "Tensors, but element %zd is %.100s", i, Py_TYPE(items[i])->tp_name);
            Py_DECREF(seq);
            return NULL;
        }
    for (Py_ssize_t i = 0; i < len; i++)
        ((PcsTensor *)items[i])->storage->version++;
    Py_DECREF(seq);
    Py_RETURN_NONE;
}

static PyMethodDef saved_hooks_functions[] = {
    {"_increment_version", increment_version, METH_O,
     "_increment_version(tensors): bumps each tensor's version counter as an in-place write would."},
    {"_push_saved_tensors_default_hooks", (PyCFunction)(void (*)(void))push_hooks, METH_FASTCALL,
     "_push_saved_tensors_default_hooks(pack_hook, unpack_hook): hooks for the tensors saved from now on."},
    {"_pop_saved_tensors_default_hooks", pop_hooks, METH_NOARGS,
     "_pop_saved_tensors_default_hooks(): back to the previous pair."},
    {"_top_saved_tensors_default_hooks", current_hooks, METH_NOARGS,
     "_top_saved_tensors_default_hooks() -> (pack_hook, unpack_hook) or None: the pair in effect."},
    {"_saved_tensors_hooks_disable", hooks_disable, METH_O,
     "_saved_tensors_hooks_disable(message): using the hooks raises RuntimeError(message)."},
    {"_saved_tensors_hooks_enable", hooks_enable, METH_NOARGS,
     "_saved_tensors_hooks_enable(): the hooks may be used again."},
    {"_saved_tensors_hooks_get_disabled_error_message", hooks_disabled_message, METH_NOARGS,
     "_saved_tensors_hooks_get_disabled_error_message() -> str or None."},
    {NULL, NULL, 0, NULL},
};

int pcs_saved_hooks_init(PyObject *module)
{
    return PyModule_AddFunctions(module, saved_hooks_functions);
}
