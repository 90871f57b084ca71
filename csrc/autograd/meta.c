/* meta.c: a tensor's autograd record and the Tensor attributes over it:
 * requires_grad, is_leaf, grad, grad_fn, data, _version, output_nr,
 * retains_grad, and the methods requires_grad_, detach, detach_,
 * retain_grad, register_hook, register_post_accumulate_grad_hook, backward.
 * A tensor autograd never touched has no record (NULL): reading these
 * attributes then costs a pointer test. */
#include "autograd/autograd.h"

#include "autograd/grad_mode.h"
#include "core/dtype.h"
#include "ops/ops.h"

static void meta_free(PcsTensor *t)
{
    pcs_meta *m = t->autograd;
    t->autograd = NULL;
    Py_XDECREF(m->grad);
    Py_XDECREF(m->hooks);
    Py_XDECREF(m->post_hooks);
    /* The graph behind grad_fn (and a view's base with its own graph) can be
     * long chains: released without recursion. */
    pcs_ag_decref((PyObject *)m->grad_fn);
    pcs_ag_decref(m->base);
    PyMem_Free(m);
}

pcs_meta *pcs_ag_meta_get(PcsTensor *t)
{
    if (t->autograd)
        return t->autograd;
    pcs_meta *m = PyMem_Calloc(1, sizeof *m);
    if (!m)
        return (pcs_meta *)PyErr_NoMemory();
    t->autograd = m;
    return m;
}

bool pcs_ag_differentiable_dtype(int dtype)
{
    return pcs_is_float(dtype) || pcs_is_complex(dtype);
}

void pcs_ag_tmeta_of(const PcsTensor *t, pcs_tmeta *m)
{
    m->ndim = t->ndim;
    m->dtype = t->dtype;
    m->device = t->device;
    memcpy(m->sizes, t->sizes, (size_t)t->ndim * sizeof(int64_t));
}

PcsTensor *pcs_ag_alias(PcsTensor *t)
{
    return pcs_tensor_alias(t, t->offset, t->ndim, t->sizes, t->strides);
}

int pcs_ag_gradient_edge(PcsTensor *t, pcs_edge *e)
{
    pcs_meta *m = t->autograd;
    e->fn = NULL;
    e->nr = 0;
    if (!m || !m->requires_grad)
        return 0;
    if (m->grad_fn) {
        e->fn = (PcsNode *)Py_NewRef(m->grad_fn);
        e->nr = m->output_nr;
        return 0;
    }
    e->fn = pcs_node_accumulate(t);
    return e->fn ? 0 : -1;
}

int pcs_ag_set_history(PcsTensor *t, PcsNode *fn, int nr)
{
    pcs_meta *m = pcs_ag_meta_get(t);
    if (!m)
        return -1;
    PcsNode *old = m->grad_fn;
    m->grad_fn = (PcsNode *)Py_NewRef(fn);
    m->output_nr = nr;
    m->requires_grad = true;
    pcs_ag_decref((PyObject *)old);
    return 0;
}

/* ---- attributes ------------------------------------------------------------ */

#define T(o) ((PcsTensor *)(o))

static PyObject *get_requires_grad(PyObject *self, void *c)
{
    PCS_UNUSED(c);
    return PyBool_FromLong(pcs_ag_requires_grad(self));
}

static int set_requires_grad_to(PcsTensor *t, bool on)
{
    pcs_meta *m = t->autograd;
    if (m && m->grad_fn) {
        if (on)
            return 0;
        PyErr_SetString(PyExc_RuntimeError,
                        "you can only change requires_grad flags of leaf variables. If you want to use "
                        "a computed variable in a subgraph that doesn't require differentiation use "
                        "var_no_grad = var.detach().");
        return -1;
    }
    if (on && !pcs_ag_differentiable_dtype(t->dtype)) {
        PyErr_SetString(PyExc_RuntimeError,
                        "only Tensors of floating point dtype can require gradients");
        return -1;
    }
    if (!m && !on)
        return 0;
    if (!(m = pcs_ag_meta_get(t)))
        return -1;
    m->requires_grad = on;
    return 0;
}

static int set_requires_grad(PyObject *self, PyObject *v, void *c)
{
    PCS_UNUSED(c);
    if (!v || !PyBool_Check(v)) {
        PyErr_SetString(PyExc_TypeError, "requires_grad must be a bool");
        return -1;
    }
    return set_requires_grad_to(T(self), v == Py_True);
}

static PyObject *get_is_leaf(PyObject *self, void *c)
{
    PCS_UNUSED(c);
    pcs_meta *m = pcs_ag_meta(self);
    return PyBool_FromLong(!m || !m->grad_fn);
}

static PyObject *get_grad(PyObject *self, void *c)
{
    PCS_UNUSED(c);
    pcs_meta *m = pcs_ag_meta(self);
    if (m && m->grad)
        return Py_NewRef(m->grad);
    Py_RETURN_NONE;
}

static int set_grad(PyObject *self, PyObject *v, void *c)
{
    PCS_UNUSED(c);
    PcsTensor *t = T(self);
    if (v && v != Py_None) {
        if (!PcsTensor_Check(v)) {
            PyErr_Format(PyExc_TypeError, "assigned grad expected to be a Tensor or None but got grad of "
                         "type %.100s", Py_TYPE(v)->tp_name);
            return -1;
        }
        PcsTensor *g = T(v);
        if (g->device != t->device) {
            PyErr_SetString(PyExc_RuntimeError, "assigned grad has data located on a different device");
            return -1;
        }
        if (g->dtype != t->dtype) {
            PyErr_SetString(PyExc_RuntimeError, "assigned grad has data of a different type");
            return -1;
        }
        if (g->ndim != t->ndim || memcmp(g->sizes, t->sizes, (size_t)t->ndim * sizeof(int64_t)) != 0) {
            PyErr_SetString(PyExc_RuntimeError, "assigned grad has data of a different size");
            return -1;
        }
    }
    pcs_meta *m = t->autograd;
    if (!m && (!v || v == Py_None))
        return 0;
    if (!(m = pcs_ag_meta_get(t)))
        return -1;
    PyObject *old = m->grad;
    m->grad = (v && v != Py_None) ? Py_NewRef(v) : NULL;
    Py_XDECREF(old);
    return 0;
}

static PyObject *get_grad_fn(PyObject *self, void *c)
{
    PCS_UNUSED(c);
    pcs_meta *m = pcs_ag_meta(self);
    if (m && m->grad_fn)
        return Py_NewRef(m->grad_fn);
    Py_RETURN_NONE;
}

static PyObject *get_retains_grad(PyObject *self, void *c)
{
    PCS_UNUSED(c);
    pcs_meta *m = pcs_ag_meta(self);
    return PyBool_FromLong(m && m->retains_grad);
}

static PyObject *get_data(PyObject *self, void *c)
{
    PCS_UNUSED(c);
    return (PyObject *)pcs_ag_alias(T(self));
}

/* x.data = y: x takes y's memory and geometry, keeping its own record. */
static int set_data(PyObject *self, PyObject *v, void *c)
{
    PCS_UNUSED(c);
    if (!v || !PcsTensor_Check(v)) {
        PyErr_SetString(PyExc_TypeError, "Variable data has to be a tensor, but got "
                        "something else");
        return -1;
    }
    pcs_tensor_take_geometry(T(self), T(v));
    return 0;
}

static PyObject *get_version(PyObject *self, void *c)
{
    PCS_UNUSED(c);
    return PyLong_FromLongLong(T(self)->storage->version);
}

static PyObject *get_output_nr(PyObject *self, void *c)
{
    PCS_UNUSED(c);
    pcs_meta *m = pcs_ag_meta(self);
    return PyLong_FromLong(m && m->grad_fn ? m->output_nr : 0);
}

static PyObject *get_is_view(PyObject *self, void *c)
{
    PCS_UNUSED(c);
    pcs_meta *m = pcs_ag_meta(self);
    if (m && m->base)
        return Py_NewRef(m->base);
    Py_RETURN_NONE;
}

PyGetSetDef pcs_ag_tensor_getset[] = {
    {"requires_grad", get_requires_grad, set_requires_grad,
     "True if gradients are computed for this tensor.", NULL},
    {"is_leaf", get_is_leaf, NULL, "True for tensors no recorded op produced.", NULL},
    {"grad", get_grad, set_grad, "The gradient accumulated by backward(), or None.", NULL},
    {"grad_fn", get_grad_fn, NULL, "The node that produced this tensor, or None.", NULL},
    {"retains_grad", get_retains_grad, NULL, "True after retain_grad() on a non-leaf.", NULL},
    {"data", get_data, set_data, "An alias outside the graph (assigning swaps the memory).", NULL},
    {"_version", get_version, NULL, "Count of in-place writes to this memory.", NULL},
    {"output_nr", get_output_nr, NULL, "Which output of grad_fn this tensor is.", NULL},
    {"_base", get_is_view, NULL, "The tensor a recorded view was taken from, or None.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* ---- methods ----------------------------------------------------------------- */

static PyObject *m_requires_grad_(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kw)
{
    PyObject *v = pcs_arg(args, nargs, kw, 0, "requires_grad");
    if (v && !PyBool_Check(v)) {
        PyErr_Format(PyExc_TypeError, "requires_grad_(): argument 'requires_grad' must be bool, "
                     "not %.100s", Py_TYPE(v)->tp_name);
        return NULL;
    }
    if (set_requires_grad_to(T(self), !v || v == Py_True) < 0)
        return NULL;
    return Py_NewRef(self);
}

static PyObject *m_detach(PyObject *self, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    return (PyObject *)pcs_ag_alias(T(self));
}

static PyObject *m_detach_(PyObject *self, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    pcs_meta *m = pcs_ag_meta(self);
    if (m) {
        if (m->base) {
            PyErr_SetString(PyExc_RuntimeError, "Can't detach views in-place. Use detach() instead.");
            return NULL;
        }
        PcsNode *fn = m->grad_fn;
        m->grad_fn = NULL;
        m->requires_grad = false;
        m->output_nr = 0;
        pcs_ag_decref((PyObject *)fn);
    }
    return Py_NewRef(self);
}

static PyObject *m_retain_grad(PyObject *self, PyObject *noargs)
{
    PCS_UNUSED(noargs);
    pcs_meta *m = pcs_ag_meta(self);
    if (!m || !m->requires_grad) {
        PyErr_SetString(PyExc_RuntimeError, "can't retain_grad on Tensor that has requires_grad=False");
        return NULL;
    }
    if (!m->grad_fn || m->retains_grad)
        Py_RETURN_NONE;
    PyObject *ref = PyWeakref_NewRef(self, NULL);
    if (!ref)
        return NULL;
    PcsNode *fn = m->grad_fn;
    if (!fn->retains && !(fn->retains = PyList_New(0))) {
        Py_DECREF(ref);
        return NULL;
    }
    PyObject *entry = Py_BuildValue("(iN)", m->output_nr, ref);
    if (!entry || PyList_Append(fn->retains, entry) < 0) {
        Py_XDECREF(entry);
        return NULL;
    }
    Py_DECREF(entry);
    m->retains_grad = true;
    Py_RETURN_NONE;
}

/* A RemovableHandle (pycuda_sem.utils.hooks) for fn as a new entry of
 * *dict (made on first use): the tensor hooks here and the node hooks of
 * node.c share it. */
PyObject *pcs_ag_add_hook(PyObject **dict, PyObject *fn)
{
    static PyObject *mod = NULL;
    if (!PyCallable_Check(fn)) {
        PyErr_SetString(PyExc_TypeError, "the hook must be callable");
        return NULL;
    }
    if (!*dict && !(*dict = PyDict_New()))
        return NULL;
    PyObject *cls = pcs_py_attr(&mod, "pycuda_sem.utils.hooks", "RemovableHandle");
    PyObject *h = cls ? PyObject_CallOneArg(cls, *dict) : NULL;
    PyObject *id = h ? PyObject_GetAttrString(h, "id") : NULL;
    if (!id || PyDict_SetItem(*dict, id, fn) < 0)
        Py_CLEAR(h);
    Py_XDECREF(id);
    return h;
}

static PyObject *m_register_hook(PyObject *self, PyObject *fn)
{
    pcs_meta *m = pcs_ag_meta(self);
    if (!m || !m->requires_grad) {
        PyErr_SetString(PyExc_RuntimeError,
                        "cannot register a hook on a tensor that doesn't require gradient");
        return NULL;
    }
    if (!PyCallable_Check(fn)) {
        PyErr_SetString(PyExc_TypeError, "register_hook(): the hook must be callable");
        return NULL;
    }
    if (!m->hooks) {
        if (!(m->hooks = PyDict_New()))
            return NULL;
        if (m->grad_fn) { /* a non-leaf's hooks run when its grad_fn is about to run */
            PcsNode *g = m->grad_fn;
            if (!g->tensor_hooks && !(g->tensor_hooks = PyList_New(0)))
                return NULL;
            PyObject *entry = Py_BuildValue("(iO)", m->output_nr, m->hooks);
            if (!entry || PyList_Append(g->tensor_hooks, entry) < 0) {
                Py_XDECREF(entry);
                return NULL;
            }
            Py_DECREF(entry);
        }
    }
    return pcs_ag_add_hook(&m->hooks, fn);
}

static PyObject *m_register_post_accumulate_grad_hook(PyObject *self, PyObject *fn)
{
    pcs_meta *m = pcs_ag_meta(self);
    if (!m || !m->requires_grad) {
        PyErr_SetString(PyExc_RuntimeError,
                        "cannot register a hook on a tensor that doesn't require gradient");
        return NULL;
    }
    if (m->grad_fn) {
        PyErr_SetString(PyExc_RuntimeError,
                        "post accumulate grad hooks cannot be registered on non-leaf tensors");
        return NULL;
    }
    if (!m->post_hooks && !(m->post_hooks = PyDict_New()))
        return NULL;
    return pcs_ag_add_hook(&m->post_hooks, fn);
}

/* backward(gradient=None, retain_graph=None, create_graph=False, inputs=None) */
static PyObject *m_backward(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"gradient", "retain_graph", "create_graph", "inputs", NULL};
    if (nargs > 4) {
        PyErr_SetString(PyExc_TypeError, "backward() takes at most 4 arguments");
        return NULL;
    }
    if (pcs_check_kwargs(kw, "backward", names) < 0)
        return NULL;
    PyObject *g = pcs_arg(args, nargs, kw, 0, "gradient");
    PyObject *rg = pcs_arg(args, nargs, kw, 1, "retain_graph");
    PyObject *cg = pcs_arg(args, nargs, kw, 2, "create_graph");
    PyObject *inputs = pcs_arg(args, nargs, kw, 3, "inputs");
    int create = cg ? PyObject_IsTrue(cg) : 0;
    if (create < 0)
        return NULL;
    int keep = (rg && rg != Py_None) ? PyObject_IsTrue(rg) : create;
    if (keep < 0)
        return NULL;
    PyObject *ts = PyTuple_Pack(1, self);
    PyObject *gs = ts ? PyTuple_Pack(1, g ? g : Py_None) : NULL;
    PyObject *in = NULL;
    if (gs && inputs && inputs != Py_None) {
        in = PcsTensor_Check(inputs) ? PyTuple_Pack(1, inputs) : PySequence_Tuple(inputs);
        if (in && PyTuple_GET_SIZE(in) == 0) {
            Py_CLEAR(in);
            PyErr_SetString(PyExc_RuntimeError, "`inputs` argument to `backward()` cannot be empty.");
        }
    }
    PyObject *r = NULL;
    if (gs && (in || !inputs || inputs == Py_None))
        r = pcs_ag_run_backward(ts, gs, keep, create, in, true, true);
    Py_XDECREF(ts);
    Py_XDECREF(gs);
    Py_XDECREF(in);
    return r;
}

/* Tensor._make_subclass(cls, data, require_grad=False): a leaf of type cls
 * sharing data's memory, outside any graph (nn.Parameter's constructor). */
static PyObject *m_make_subclass(PyObject *unused, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kw)
{
    PCS_UNUSED(unused);
    PyObject *cls = pcs_arg(args, nargs, kw, 0, "cls");
    PyObject *data = pcs_arg(args, nargs, kw, 1, "data");
    PyObject *rg = pcs_arg(args, nargs, kw, 2, "require_grad");
    if (!cls || !PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &PcsTensor_Type)) {
        PyErr_SetString(PyExc_TypeError, "_make_subclass(): cls must be a subclass of Tensor");
        return NULL;
    }
    if (!data || !PcsTensor_Check(data)) {
        PyErr_SetString(PyExc_TypeError, "_make_subclass(): data must be a Tensor");
        return NULL;
    }
    int on = rg ? PyObject_IsTrue(rg) : 0;
    if (on < 0)
        return NULL;
    PcsTensor *r = pcs_tensor_alias_as((PyTypeObject *)cls, T(data));
    if (r && set_requires_grad_to(r, on) < 0)
        Py_CLEAR(r);
    return (PyObject *)r;
}

#define FASTKW(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL | METH_KEYWORDS
PyMethodDef pcs_ag_tensor_methods[] = {
    {"_make_subclass", FASTKW(m_make_subclass) | METH_STATIC,
     "_make_subclass(cls, data, require_grad=False): a leaf of type cls sharing data's memory."},
    {"requires_grad_", FASTKW(m_requires_grad_),
     "requires_grad_(requires_grad=True): marks a leaf for gradients; returns self."},
    {"detach", m_detach, METH_NOARGS, "An alias of the same memory outside the graph."},
    {"detach_", m_detach_, METH_NOARGS, "Cuts this tensor from the graph, in place."},
    {"retain_grad", m_retain_grad, METH_NOARGS, "Keeps .grad for this non-leaf after backward."},
    {"register_hook", m_register_hook, METH_O,
     "register_hook(fn): fn(grad) runs when this tensor's gradient is computed and may "
     "return a replacement. Returns a handle with remove()."},
    {"register_post_accumulate_grad_hook", m_register_post_accumulate_grad_hook, METH_O,
     "register_post_accumulate_grad_hook(fn): fn(tensor) runs after .grad of this leaf "
     "was accumulated."},
    {"backward", FASTKW(m_backward),
     "backward(gradient=None, retain_graph=None, create_graph=False, inputs=None): "
     "accumulates the gradients of this tensor into the leaves' .grad."},
    {NULL, NULL, 0, NULL},
};

int pcs_meta_init(void)
{
    pcs_tensor_autograd_free = meta_free;
    return 0;
}
