/* function.c: the C half of autograd.Function. The ctx a custom forward
 * receives is a node (kind FUNCTION) made by _FunctionCtx(args); forward
 * runs with grad mode off (autograd/function.py); _function_wire then turns
 * the ctx into the grad_fn of the outputs: it resolves mark_dirty,
 * mark_non_differentiable and the tensors given to save_for_backward (an
 * output is kept as an alias so the graph holds no reference back to it). */
#include "autograd/autograd.h"

#include "autograd/grad_mode.h"
#include "runtime/stream.h"

#define N(o) ((PcsNode *)(o))

static PyObject *tuple_of_args(PyObject *args, const char *what)
{
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args); i++) {
        PyObject *a = PyTuple_GET_ITEM(args, i);
        if (a != Py_None && !PcsTensor_Check(a)) {
            PyErr_Format(PyExc_TypeError, "%s can only save tensors or None, but argument %zd is "
                         "of type %.100s", what, i, Py_TYPE(a)->tp_name);
            return NULL;
        }
    }
    return Py_NewRef(args);
}

static PyObject *ctx_save_for_backward(PyObject *self, PyObject *args)
{
    PyObject *t = tuple_of_args(args, "save_for_backward");
    if (!t)
        return NULL;
    Py_XSETREF(N(self)->to_save, t);
    Py_RETURN_NONE;
}

static PyObject *ctx_mark_dirty(PyObject *self, PyObject *args)
{
    PyObject *t = tuple_of_args(args, "mark_dirty");
    if (!t)
        return NULL;
    Py_XSETREF(N(self)->dirty, t);
    Py_RETURN_NONE;
}

static PyObject *ctx_mark_non_differentiable(PyObject *self, PyObject *args)
{
    PyObject *t = tuple_of_args(args, "mark_non_differentiable");
    if (!t)
        return NULL;
    Py_XSETREF(N(self)->non_diff, t);
    Py_RETURN_NONE;
}

static PyObject *ctx_set_materialize_grads(PyObject *self, PyObject *v)
{
    int on = PyObject_IsTrue(v);
    if (on < 0)
        return NULL;
    N(self)->materialize = on;
    Py_RETURN_NONE;
}

/* saved_tensors: what save_for_backward kept, version-checked; before
 * wiring (inside forward) the tensors as given. */
static PyObject *get_saved_tensors(PyObject *self, void *c)
{
    PCS_UNUSED(c);
    PcsNode *n = N(self);
    if (!n->in_function)
        return Py_NewRef(n->to_save ? n->to_save : PyTuple_New(0));
    if (pcs_node_check_saved(n) < 0)
        return NULL;
    PyObject *r = PyTuple_New(n->n_saved);
    for (int i = 0; r && i < n->n_saved; i++) {
        pcs_saved *s = &n->saved[i];
        PyObject *v;
        if (!s->t)
            v = Py_NewRef(Py_None);
        else if (s->output_nr >= 0 && pcs_grad_enabled()) {
            PcsTensor *a = pcs_ag_alias(s->t);
            if (a && pcs_ag_set_history(a, n, s->output_nr) < 0)
                Py_CLEAR(a);
            v = (PyObject *)a;
        } else
            v = Py_NewRef(s->t);
        if (!v)
            Py_CLEAR(r);
        else
            PyTuple_SET_ITEM(r, i, v);
    }
    return r;
}

PyMethodDef pcs_function_ctx_methods[] = {
    {"save_for_backward", ctx_save_for_backward, METH_VARARGS,
     "save_for_backward(*tensors): keeps tensors for backward (read them as saved_tensors)."},
    {"mark_dirty", ctx_mark_dirty, METH_VARARGS, "mark_dirty(*tensors): forward modified these in place."},
    {"mark_non_differentiable", ctx_mark_non_differentiable, METH_VARARGS,
     "mark_non_differentiable(*tensors): these outputs get no gradient."},
    {"set_materialize_grads", ctx_set_materialize_grads, METH_O,
     "set_materialize_grads(value): whether missing output grads reach backward as zeros (default) "
     "or None."},
    {NULL, NULL, 0, NULL},
};

PyGetSetDef pcs_function_ctx_getset[] = {
    {"saved_tensors", get_saved_tensors, NULL, "The tensors given to save_for_backward.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static bool contains(PyObject *tup, PyObject *o)
{
    if (!tup)
        return false;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tup); i++)
        if (PyTuple_GET_ITEM(tup, i) == o)
            return true;
    return false;
}

static bool any_requires_grad(PyObject *args)
{
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args); i++) {
        PyObject *a = PyTuple_GET_ITEM(args, i);
        if (PcsTensor_Check(a) && pcs_ag_requires_grad(a))
            return true;
    }
    return false;
}

/* The inputs of a custom Function: its top-level tensor args (tensors inside
 * lists are not inputs, as in torch). Recorded only when grad mode is on and
 * one of them requires grad; otherwise the ctx stays without inputs. */
static int take_inputs(PcsNode *n, PyObject *args)
{
    if (!PyTuple_Check(args) || !pcs_grad_enabled() || !any_requires_grad(args))
        return 0;
    Py_ssize_t k = PyTuple_GET_SIZE(args);
    PyObject **flat = PyMem_Calloc((size_t)k + 1, sizeof(PyObject *));
    if (!flat) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < k; i++) {
        PyObject *x = PyTuple_GET_ITEM(args, i);
        flat[i] = (PyTuple_Check(x) || PyList_Check(x)) ? Py_None : x;
    }
    int rc = pcs_node_set_inputs(n, flat, k, NULL, NULL);
    PyMem_Free(flat);
    return rc;
}

/* _FunctionCtx(args=()): a ctx whose inputs are already known, so forward
 * can read needs_input_grad. */
static PyObject *function_ctx(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    PCS_UNUSED(m);
    static PyObject *name = NULL;
    if (!name && !(name = PyUnicode_InternFromString("FunctionBackward")))
        return NULL;
    PcsNode *n = pcs_node_new(PCS_NODE_FUNCTION, name);
    if (n && nargs >= 1 && take_inputs(n, args[0]) < 0)
        Py_CLEAR(n);
    return (PyObject *)n;
}

static int wire_outputs(PcsNode *n, PyObject *outs, PyObject *args)
{
    Py_ssize_t k = PyTuple_GET_SIZE(outs);
    n->n_outputs = (int)k;
    n->out_meta = PyMem_Calloc((size_t)k + 1, sizeof *n->out_meta);
    if (!n->out_meta) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < k; i++) {
        PyObject *o = PyTuple_GET_ITEM(outs, i);
        if (!PcsTensor_Check(o)) {
            n->out_meta[i].ndim = -1; /* not a tensor: its grad is always None */
            continue;
        }
        PcsTensor *t = (PcsTensor *)o;
        pcs_ag_tmeta_of(t, &n->out_meta[i]);
        if (n->device < 0 && t->device >= 0) {
            n->device = t->device;
            n->stream = pcs_current_stream(t->device);
        }
        bool dirty = contains(n->dirty, o);
        if (dirty) {
            pcs_meta *m = pcs_ag_meta(o);
            if (m && m->requires_grad && !m->grad_fn) {
                PyErr_SetString(PyExc_RuntimeError,
                                "a leaf Variable that requires grad has been used in an in-place operation.");
                return -1;
            }
        } else if (contains(args, o)) {
            /* an input returned as it is becomes a new alias, so the input
             * itself keeps its history */
            PyObject *a = (PyObject *)pcs_ag_alias(t);
            if (!a)
                return -1;
            PyTuple_SET_ITEM(outs, i, a);
            Py_DECREF(o);
            t = (PcsTensor *)a;
        }
        if (contains(n->non_diff, o) || !pcs_ag_differentiable_dtype(t->dtype))
            continue;
        if (pcs_ag_set_history(t, n, (int)i) < 0)
            return -1;
    }
    return 0;
}

static int wire_saved(PcsNode *n, PyObject *outs)
{
    PyObject *ts = n->to_save;
    if (!ts)
        return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(ts); i++) {
        PyObject *x = PyTuple_GET_ITEM(ts, i);
        int nr = -1;
        for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(outs); j++)
            if (PyTuple_GET_ITEM(outs, j) == x)
                nr = (int)j;
        if (x == Py_None) {
            pcs_saved *s = PyMem_Realloc(n->saved, (size_t)(n->n_saved + 1) * sizeof *s);
            if (!s) {
                PyErr_NoMemory();
                return -1;
            }
            n->saved = s;
            s[n->n_saved] = (pcs_saved){.t = NULL, .output_nr = -1, .arg = -1, .elem = -1, .flat = -1};
            n->n_saved++;
        } else if (pcs_node_save(n, (PcsTensor *)x, nr) < 0)
            return -1;
    }
    n->has_saved = true;
    return 0;
}

/* _function_wire(ctx, backward_fn, args, outputs, node_name) */
static PyObject *function_wire(PyObject *m, PyObject *const *a, Py_ssize_t nargs)
{
    PCS_UNUSED(m);
    if (nargs != 5 || !PcsNode_Check(a[0]) || !PyTuple_Check(a[2])) {
        PyErr_SetString(PyExc_TypeError, "_function_wire(ctx, backward_fn, args, outputs, node_name)");
        return NULL;
    }
    PcsNode *n = N(a[0]);
    PyObject *args = a[2], *outputs = a[3];
    if (n->kind != PCS_NODE_FUNCTION) {
        PyErr_SetString(PyExc_TypeError, "_function_wire: ctx must come from _FunctionCtx()");
        return NULL;
    }
    if (a[4] != Py_None && !PyUnicode_Check(a[4])) {
        PyErr_SetString(PyExc_TypeError, "_function_wire: node_name must be a str or None");
        return NULL;
    }
    bool single = !PyTuple_Check(outputs);
    if (n->in_function) {
        PyErr_SetString(PyExc_RuntimeError, "this ctx was already used by a Function call");
        return NULL;
    }
    if (!n->amap && take_inputs(n, args) < 0) /* a ctx made without its args */
        return NULL;
    bool diff = false;
    for (int i = 0; i < n->n_edges; i++)
        diff |= n->edges[i].fn != NULL;
    if (!diff || !pcs_grad_enabled())
        return Py_NewRef(outputs);
    PyObject *outs = single ? PyTuple_Pack(1, outputs) : PyTuple_GetSlice(outputs, 0, PY_SSIZE_T_MAX);
    if (!outs)
        return NULL;
    n->in_function = true;
    n->formula = Py_NewRef(a[1]);
    if (a[4] != Py_None)
        Py_XSETREF(n->name, Py_NewRef(a[4]));
    if (wire_outputs(n, outs, args) < 0 || wire_saved(n, outs) < 0) {
        Py_DECREF(outs);
        return NULL;
    }
    Py_CLEAR(n->to_save);
    if (single) {
        PyObject *r = Py_NewRef(PyTuple_GET_ITEM(outs, 0));
        Py_DECREF(outs);
        return r;
    }
    return outs;
}

static PyMethodDef function_functions[] = {
    {"_FunctionCtx", (PyCFunction)(void (*)(void))function_ctx, METH_FASTCALL,
     "_FunctionCtx(args=()): a new ctx (an unwired node) for a custom Function's forward."},
    {"_function_wire", (PyCFunction)(void (*)(void))function_wire, METH_FASTCALL,
     "_function_wire(ctx, backward_fn, args, outputs, node_name): makes ctx the grad_fn of the "
     "outputs; returns them."},
    {NULL, NULL, 0, NULL},
};

int pcs_function_init(PyObject *module)
{
    return PyModule_AddFunctions(module, function_functions);
}
