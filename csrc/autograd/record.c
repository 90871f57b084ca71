/* record.c: where ops meet autograd. Every op callable of the Tensor type
 * and of the module (and the operator slots, and the properties T, mT,
 * real, imag) is replaced at import by a small wrapper object. Its fast
 * path, taken whenever grad mode is off or no tensor argument requires grad,
 * is one thread-local read, a scan of the arguments and the op's own call.
 * Otherwise it records: the op runs with grad mode off and one node is made
 * whose backward is the formula registered (from Python) under the op's
 * name. In-place ops (a name ending in '_', `x[i] = v`, `+=`, out=) also bump
 * the version counter of the memory they wrote, on both paths, which is how
 * a saved tensor that was modified later is caught at backward. */
#include "autograd/record.h"

#include <limits.h>
#include <string.h>

#include "autograd/grad_mode.h"
#include "ops/ops.h"
#include "tensor/copy.h"

/* ---- the formula registry ----------------------------------------------------- */

#define PCS_MAX_SAVE 8
struct pcs_opinfo {
    PyObject *name;      /* op name */
    PyObject *node_name; /* e.g. "MulBackward0" */
    PyObject *formula;   /* NULL: none registered; Py_None: not differentiable */
    pcs_cformula cfn;    /* C version for the common cases, or NULL */
    int n_save;
    int save[PCS_MAX_SAVE];
    int save_when[PCS_MAX_SAVE]; /* k >= 0: only if input k requires grad; -k-1: only if it
                                  * does not; INT_MIN: always */
    uint64_t result_mask; /* the outputs kept for the formula: bit i, output i (63: and beyond) */
    bool no_materialize; /* outputs with no gradient reach the formula as None */
};

static PyObject *registry = NULL; /* name -> capsule(pcs_opinfo) */

static pcs_opinfo *opinfo_for(const char *name)
{
    PyObject *cap = PyDict_GetItemString(registry, name);
    if (cap)
        return PyCapsule_GetPointer(cap, NULL);
    pcs_opinfo *op = PyMem_RawCalloc(1, sizeof *op); /* lives as long as the process */
    if (!op)
        return (pcs_opinfo *)PyErr_NoMemory();
    op->name = PyUnicode_FromString(name);
    op->cfn = pcs_ag_cformula(name);
    cap = op->name ? PyCapsule_New(op, NULL, NULL) : NULL;
    if (!cap || PyDict_SetItemString(registry, name, cap) < 0) {
        Py_XDECREF(cap);
        return NULL;
    }
    Py_DECREF(cap);
    return op;
}

/* "log_softmax" -> "LogSoftmaxBackward0", "__getitem__" -> "GetitemBackward0" */
static PyObject *default_node_name(const char *name)
{
    char buf[128];
    size_t k = 0;
    bool up = true;
    for (const char *p = name; *p && k < sizeof buf - 16; p++) {
        if (*p == '_') {
            up = true;
            continue;
        }
        static const char upper[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
        char c = *p;
        if (up && c >= 'a' && c <= 'z')
            c = upper[c - 'a'];
        buf[k++] = c;
        up = false;
    }
    memcpy(buf + k, "Backward0", 10);
    return PyUnicode_FromString(buf);
}

/* _register_formula(name, fn, save_args, save_result, node_name=None,
 * materialize=True, save_when=None). save_result: a bool (every output
 * kept, or none) or a tuple of the outputs' indices to keep (topk keeps
 * its indices, not the values a caller may then scale in place, as
 * torch). materialize=False: an output that got
 * no gradient is passed to the formula as None rather than as zeros, for
 * the fused layers whose side outputs (mean, rstd, lse) are almost never
 * used and whose zero gradients would cost full passes over the input.
 * save_when, a tuple as long as save_args of None or an input's index k:
 * that saved arg is kept only when input k requires grad (~k: only when
 * it does not), as torch keeps only what the needed gradients use (a / 2
 * keeps nothing of a, so a may then be changed in place). */
static PyObject *register_formula(PyObject *m, PyObject *const *a, Py_ssize_t nargs)
{
    PCS_UNUSED(m);
    if (nargs < 4 || nargs > 7 || !PyUnicode_Check(a[0]) || !PyTuple_Check(a[2]) ||
        (a[1] != Py_None && !PyCallable_Check(a[1])) ||
        (nargs == 7 && a[6] != Py_None &&
         (!PyTuple_Check(a[6]) || PyTuple_GET_SIZE(a[6]) != PyTuple_GET_SIZE(a[2])))) {
        PyErr_SetString(PyExc_TypeError,
                        "_register_formula(name: str, fn: callable | None, save_args: tuple, "
                        "save_result: bool | tuple, node_name: str | None = None, materialize: bool = True, "
                        "save_when: tuple | None = None (as long as save_args))");
        return NULL;
    }
    const char *name = PyUnicode_AsUTF8(a[0]);
    Py_ssize_t ns = PyTuple_GET_SIZE(a[2]);
    if (!name)
        return NULL;
    if (ns > PCS_MAX_SAVE) {
        PyErr_Format(PyExc_ValueError, "_register_formula: at most %d saved args", PCS_MAX_SAVE);
        return NULL;
    }
    int save[PCS_MAX_SAVE], when[PCS_MAX_SAVE];
    for (Py_ssize_t i = 0; i < ns; i++) {
        long v = PyLong_AsLong(PyTuple_GET_ITEM(a[2], i));
        if (v == -1 && PyErr_Occurred())
            return NULL;
        if (v < 0 || v > 64) {
            PyErr_SetString(PyExc_ValueError, "_register_formula: save_args are positional indices");
            return NULL;
        }
        save[i] = (int)v;
        when[i] = INT_MIN;
        PyObject *w = nargs == 7 && a[6] != Py_None ? PyTuple_GET_ITEM(a[6], i) : Py_None;
        if (w != Py_None) {
            long wv = PyLong_AsLong(w);
            if (wv == -1 && PyErr_Occurred())
                return NULL;
            if (wv < -65 || wv > 64) {
                PyErr_SetString(PyExc_ValueError, "_register_formula: save_when entries are None or "
                                                  "positional indices");
                return NULL;
            }
            when[i] = (int)wv;
        }
    }
    uint64_t mask = 0;
    if (PyTuple_Check(a[3])) {
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(a[3]); i++) {
            long v = PyLong_AsLong(PyTuple_GET_ITEM(a[3], i));
            if (v == -1 && PyErr_Occurred())
                return NULL;
            if (v < 0 || v > 62) {
                PyErr_SetString(PyExc_ValueError, "_register_formula: save_result indices are 0..62");
                return NULL;
            }
            mask |= (uint64_t)1 << v;
        }
    } else {
        int sr = PyObject_IsTrue(a[3]);
        if (sr < 0)
            return NULL;
        mask = sr ? ~(uint64_t)0 : 0;
    }
    int mat = nargs == 6 ? PyObject_IsTrue(a[5]) : 1;
    if (mat < 0)
        return NULL;
    if (nargs >= 5 && a[4] != Py_None && !PyUnicode_Check(a[4])) {
        PyErr_SetString(PyExc_TypeError, "_register_formula: node_name must be a str or None");
        return NULL;
    }
    PyObject *nn = (nargs >= 5 && a[4] != Py_None) ? Py_NewRef(a[4]) : default_node_name(name);
    pcs_opinfo *op = nn ? opinfo_for(name) : NULL;
    if (!op) {
        Py_XDECREF(nn);
        return NULL;
    }
    Py_XSETREF(op->node_name, nn);
    Py_XSETREF(op->formula, Py_NewRef(a[1]));
    op->n_save = (int)ns;
    memcpy(op->save, save, sizeof save);
    memcpy(op->save_when, when, sizeof when);
    op->result_mask = mask;
    op->no_materialize = !mat;
    Py_RETURN_NONE;
}

/* _formula_names(): the names with a registered formula or marked
 * non-differentiable, for tests that check coverage. */
static PyObject *formula_names(PyObject *m, PyObject *noargs)
{
    PCS_UNUSED(m);
    PCS_UNUSED(noargs);
    PyObject *r = PyDict_New();
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (r && PyDict_Next(registry, &pos, &k, &v)) {
        pcs_opinfo *op = PyCapsule_GetPointer(v, NULL);
        if (op->formula && PyDict_SetItem(r, k, op->formula == Py_None ? Py_False : Py_True) < 0)
            Py_CLEAR(r);
    }
    return r;
}

/* ---- the wrapper object ------------------------------------------------------------ */


static PyObject *str_out, *str_requires_grad;

static bool any_rg(PyObject *const *args, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++)
        if (pcs_ag_is_rg(args[i]))
            return true;
    return false;
}

static bool kw_is(PyObject *k, PyObject *interned, const char *s)
{
    return k == interned || PyUnicode_CompareWithASCIIString(k, s) == 0;
}

static PyObject *invoke(PcsAgOp *w, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    switch (w->kind) {
    case K_CALL:
        return w->orig_vc(w->orig, args, nargsf, kwnames);
    case K_GET:
        return Py_TYPE(w->orig)->tp_descr_get(w->orig, args[0], (PyObject *)Py_TYPE(args[0]));
    case K_UN:
        return w->un(args[0]);
    case K_BIN:
        return w->bin(args[0], args[1]);
    case K_POW:
        return w->pow(args[0], args[1], PyVectorcall_NARGS(nargsf) > 2 ? args[2] : Py_None);
    default: /* K_SETITEM */
        return w->setitem(args[0], args[1], args[2]) < 0 ? NULL : Py_NewRef(Py_None);
    }
}

static PyObject *invoke_nograd(PcsAgOp *w, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    bool was = pcs_grad_enabled();
    if (was)
        pcs_set_grad_enabled(false);
    PyObject *r = invoke(w, args, nargsf, kwnames);
    if (was)
        pcs_set_grad_enabled(true);
    return r;
}

static inline void bump(PyObject *t)
{
    if (t && PcsTensor_Check(t))
        ((PcsTensor *)t)->storage->version++;
}

/* ---- recording ------------------------------------------------------------------- */

static PyObject *not_implemented(pcs_opinfo *op)
{
    PyErr_Format(PyExc_NotImplementedError,
                 "the derivative for '%U' is not implemented in pycuda_sem's autograd", op->name);
    return NULL;
}

/* Output tensors of an op result, borrowed, in order (at most `cap`). */
static int flatten_outputs(PyObject *r, PyObject **outs, int cap)
{
    if (PcsTensor_Check(r)) {
        outs[0] = r;
        return 1;
    }
    if (!PyTuple_Check(r) && !PyList_Check(r))
        return 0;
    int k = 0;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(r);
    for (Py_ssize_t i = 0; i < n && k < cap; i++) {
        PyObject *o = PySequence_Fast_GET_ITEM(r, i);
        if (PcsTensor_Check(o))
            outs[k++] = o;
    }
    return k;
}

static bool any_differentiable(PyObject **outs, int n)
{
    for (int i = 0; i < n; i++)
        if (pcs_ag_differentiable_dtype(((PcsTensor *)outs[i])->dtype))
            return true;
    return false;
}

/* A recorded output that shares memory with a tensor input is a view of it:
 * in-place writes to it are refused later (see check_inplace). */
static int mark_view(PcsTensor *out, PyObject *const *args, Py_ssize_t nargs)
{
    for (Py_ssize_t i = 0; i < nargs; i++) {
        if (!PcsTensor_Check(args[i]) || args[i] == (PyObject *)out)
            continue;
        PcsTensor *in = (PcsTensor *)args[i];
        if (in->storage != out->storage)
            continue;
        pcs_meta *mi = in->autograd, *mo = out->autograd;
        PyObject *base = (mi && mi->base) ? mi->base : (PyObject *)in;
        Py_XSETREF(mo->base, Py_NewRef(base));
        return 0;
    }
    return 0;
}

static int check_inplace(PcsAgOp *w, PyObject *self)
{
    if (!self || !PcsTensor_Check(self))
        return 0;
    pcs_meta *m = pcs_ag_meta(self);
    if (!m)
        return 0;
    if (m->requires_grad && !m->grad_fn) {
        PyErr_SetString(PyExc_RuntimeError,
                        "a leaf Variable that requires grad is being used in an in-place operation.");
        return -1;
    }
    if (m->base && pcs_ag_requires_grad(m->base)) {
        pcs_meta *mb = pcs_ag_meta(m->base);
        if (mb && mb->requires_grad && !mb->grad_fn) {
            PyErr_SetString(PyExc_RuntimeError, "a view of a leaf Variable that requires grad is "
                                                "being used in an in-place operation.");
            return -1;
        }
        /* The view holds the only reference to its base: no other tensor,
         * view or saved slot can read the base's stale history, so the view
         * may be written in place as a tensor of its own (its grad_fn chain
         * already runs through the view op to the base's history). This is
         * the common case of an op whose result is a view of a temporary, as
         * a convolution's reshaped matmul output followed by
         * ReLU(inplace=True). Memory shared with a saved tensor is still
         * caught by the version counter at backward. */
        if (Py_REFCNT(m->base) == 1) {
            Py_CLEAR(m->base);
            return 0;
        }
        PyErr_Format(PyExc_RuntimeError,
                     "%U: in-place operations on a view of a tensor that requires grad are not "
                     "supported by pycuda_sem's autograd (torch rebases the view's history); "
                     "write it out of place, or apply the op to a clone()", w->op->name);
        return -1;
    }
    return 0;
}

/* Whether output i is kept for the formula. */
static bool keeps_output(const pcs_opinfo *op, int i)
{
    return (op->result_mask >> (i < 63 ? i : 63)) & 1;
}

/* Whether an argument requires grad, for save_when (a tensor, or a list
 * or tuple holding one that does). */
static bool gates_grad(PyObject *a)
{
    if (PcsTensor_Check(a))
        return pcs_ag_requires_grad(a);
    if (PyList_Check(a) || PyTuple_Check(a)) {
        Py_ssize_t len = PySequence_Fast_GET_SIZE(a);
        for (Py_ssize_t j = 0; j < len; j++) {
            PyObject *it = PySequence_Fast_GET_ITEM(a, j);
            if (PcsTensor_Check(it) && pcs_ag_requires_grad(it))
                return true;
        }
    }
    return false;
}

/* Whether a saved arg with save_when entry `when` is kept for this call. */
static bool keeps_arg(int when, PyObject *const *args, Py_ssize_t nargs)
{
    if (when == INT_MIN)
        return true;
    int k = when >= 0 ? when : -when - 1;
    bool g = k < nargs && gates_grad(args[k]);
    return when >= 0 ? g : !g;
}

static PyObject *record(PcsAgOp *w, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                        PyObject *kwargs)
{
    pcs_opinfo *op = w->op;
    bool inplace = w->flags & F_INPLACE;
    PyObject *self = nargs ? args[0] : NULL;
    if (inplace && check_inplace(w, self) < 0)
        return NULL;
    if (inplace && !op->formula)
        return not_implemented(op);
    if (inplace && op->formula == Py_None) {
        PyErr_Format(PyExc_RuntimeError, "%U: this in-place op is not differentiable and an input "
                     "requires grad", op->name);
        return NULL;
    }
    if (!op->formula || op->formula == Py_None) {
        PyObject *r = invoke_nograd(w, args, (size_t)nargs, kwnames);
        PyObject *outs[8];
        if (r && !op->formula && any_differentiable(outs, flatten_outputs(r, outs, 8))) {
            Py_DECREF(r);
            return not_implemented(op);
        }
        return r;
    }
    bool save[PCS_MAX_SAVE * 8 + 1] = {false};
    bool save_self = false;
    for (int i = 0; i < op->n_save; i++)
        if (op->save[i] < nargs && op->save[i] < (int)(sizeof save) &&
            keeps_arg(op->save_when[i], args, nargs)) {
            save[op->save[i]] = true;
            save_self |= op->save[i] == 0;
        }
    PcsNode *n = pcs_node_new(PCS_NODE_FORMULA, op->node_name);
    if (!n)
        return NULL;
    n->materialize = !op->no_materialize;
    PyObject *clone = NULL;
    if (inplace && save_self && self && PcsTensor_Check(self))
        clone = (PyObject *)pcs_tensor_contiguous((PcsTensor *)self, true);
    if ((inplace && save_self && !clone) ||
        pcs_node_set_inputs(n, args, nargs, nargs <= (Py_ssize_t)(sizeof save) ? save : NULL, clone) < 0) {
        Py_XDECREF(clone);
        Py_DECREF(n);
        return NULL;
    }
    Py_XDECREF(clone);
    n->formula = Py_NewRef(op->formula);
    n->cfn = op->cfn;
    n->kwargs = Py_XNewRef(kwargs);
    PyObject *r = invoke_nograd(w, args, (size_t)nargs, kwnames);
    if (!r || r == Py_NotImplemented) {
        Py_DECREF(n);
        return r;
    }
    /* An op that hands back its input (to() or contiguous() with nothing to
     * change) leaves that tensor's history alone, as torch's does: giving it
     * this node would replace its grad_fn (MulBackward0 -> ToCopyBackward0)
     * and add a node a call. */
    for (Py_ssize_t i = 0; !inplace && i < nargs; i++)
        if (r == args[i]) {
            Py_DECREF(n);
            return r;
        }
    PyObject *stack_outs[64], **outs = stack_outs;
    int k;
    if (inplace) {
        bump(self);
        outs[0] = self;
        k = (self && PcsTensor_Check(self)) ? 1 : 0;
    } else {
        /* split/chunk/unbind can return any number of pieces: every one is
         * recorded (a piece left out would silently not require grad) */
        int cap = (PyTuple_Check(r) || PyList_Check(r)) ? (int)PySequence_Fast_GET_SIZE(r) : 1;
        if (cap > 64 && !(outs = PyMem_Malloc((size_t)cap * sizeof(PyObject *)))) {
            Py_DECREF(n);
            Py_DECREF(r);
            return PyErr_NoMemory();
        }
        k = flatten_outputs(r, outs, cap > 64 ? cap : 64);
    }
    n->n_outputs = k;
    n->out_meta = PyMem_Calloc((size_t)k + 1, sizeof *n->out_meta);
    if (!n->out_meta) {
        if (outs != stack_outs)
            PyMem_Free(outs);
        Py_DECREF(n);
        Py_DECREF(r);
        return PyErr_NoMemory();
    }
    for (int i = 0; i < k; i++) {
        PcsTensor *t = (PcsTensor *)outs[i];
        pcs_ag_tmeta_of(t, &n->out_meta[i]);
        if (!pcs_ag_differentiable_dtype(t->dtype)) {
            n->out_meta[i].ndim = -1; /* integer output (indices): no gradient, but kept */
            if (keeps_output(op, i) && pcs_node_save(n, t, i) < 0) {
                Py_CLEAR(r);
                break;
            }
            continue;
        }
        if (pcs_ag_set_history(t, n, i) < 0 || (!inplace && mark_view(t, args, nargs) < 0) ||
            (keeps_output(op, i) && pcs_node_save(n, t, i) < 0)) {
            Py_CLEAR(r);
            break;
        }
    }
    if (outs != stack_outs)
        PyMem_Free(outs);
    Py_DECREF(n);
    return r;
}

/* The slow path: requires_grad= or out= keywords, in-place bumps, records.
 * requires_grad= reaches the op itself (the factories accept it, every other
 * op refuses it as torch does); a result it accepted is marked here. */
PyObject *pcs_ag_op_slow(PcsAgOp *w, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    PyObject *rg = NULL, *out = NULL;
    PyObject *kwargs = NULL, *r = NULL;
    for (Py_ssize_t i = 0; i < nkw; i++) {
        PyObject *k = PyTuple_GET_ITEM(kwnames, i);
        if (kw_is(k, str_requires_grad, "requires_grad"))
            rg = args[nargs + i];
        else if (kw_is(k, str_out, "out"))
            out = args[nargs + i];
    }
    bool need = pcs_grad_enabled() && any_rg(args, nargs + nkw);
    if (need && out && out != Py_None) {
        PyErr_Format(PyExc_RuntimeError, "%U(): functions with out=... arguments don't support "
                     "automatic differentiation, but one of the arguments requires grad.", w->op->name);
        return NULL;
    }
    if (!need) {
        r = invoke(w, args, (size_t)nargs, kwnames);
        if (r && (w->flags & F_INPLACE) && nargs)
            bump(args[0]);
        if (r && out)
            bump(out);
    } else {
        for (Py_ssize_t i = 0; i < nkw; i++) {
            PyObject *v = args[nargs + i];
            if (pcs_ag_is_rg(v)) {
                PyErr_Format(PyExc_NotImplementedError,
                             "%U(): a tensor that requires grad passed as keyword '%U' is not "
                             "differentiated by pycuda_sem's autograd; pass it positionally",
                             w->op->name, PyTuple_GET_ITEM(kwnames, i));
                goto done;
            }
            if (!kwargs && !(kwargs = PyDict_New()))
                goto done;
            if (PyDict_SetItem(kwargs, PyTuple_GET_ITEM(kwnames, i), v) < 0)
                goto done;
        }
        r = record(w, args, nargs, kwnames, kwargs);
    }
    if (r && rg && PcsTensor_Check(r)) {
        int on = PyObject_IsTrue(rg);
        if (on < 0)
            Py_CLEAR(r);
        else if (on && !pcs_ag_differentiable_dtype(((PcsTensor *)r)->dtype)) {
            PyErr_SetString(PyExc_RuntimeError,
                            "Only Tensors of floating point and complex dtype can require gradients");
            Py_CLEAR(r);
        } else if (on && PyObject_SetAttrString(r, "requires_grad", Py_True) < 0)
            Py_CLEAR(r);
    }
done:
    Py_XDECREF(kwargs);
    return r;
}

static PyObject *agop_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    PcsAgOp *w = (PcsAgOp *)self;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (!kwnames && !(w->flags & F_INPLACE) && !(pcs_grad_enabled() && any_rg(args, nargs)))
        return invoke(w, args, nargsf, kwnames);
    return pcs_ag_op_slow(w, args, nargsf, kwnames);
}

static void agop_dealloc(PyObject *self)
{
    Py_XDECREF(((PcsAgOp *)self)->orig);
    Py_TYPE(self)->tp_free(self);
}

/* Bound like a method when read from an instance (x.add is a bound method). */
static PyObject *agop_descr_get(PyObject *self, PyObject *obj, PyObject *type)
{
    PCS_UNUSED(type);
    if (!obj)
        return Py_NewRef(self);
    return PyMethod_New(self, obj);
}

/* __doc__, __name__, __text_signature__ ... are the wrapped op's. */
static PyObject *agop_getattro(PyObject *self, PyObject *name)
{
    PyObject *r = PyObject_GenericGetAttr(self, name);
    PcsAgOp *w = (PcsAgOp *)self;
    if (r || !PyErr_ExceptionMatches(PyExc_AttributeError) || !w->orig)
        return r;
    PyErr_Clear();
    return PyObject_GetAttr(w->orig, name);
}

static PyObject *agop_forward(PyObject *self, void *name)
{
    PcsAgOp *w = (PcsAgOp *)self;
    if (!w->orig)
        Py_RETURN_NONE;
    return PyObject_GetAttrString(w->orig, (const char *)name);
}

/* the wrapped op's own documentation and names (help(), inspect) */
static PyGetSetDef agop_getset[] = {
    {"__doc__", agop_forward, NULL, NULL, "__doc__"},
    {"__name__", agop_forward, NULL, NULL, "__name__"},
    {"__qualname__", agop_forward, NULL, NULL, "__qualname__"},
    {"__text_signature__", agop_forward, NULL, NULL, "__text_signature__"},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyObject *agop_repr(PyObject *self)
{
    PcsAgOp *w = (PcsAgOp *)self;
    return w->orig ? PyObject_Repr(w->orig) : PyUnicode_FromFormat("<op %U>", w->op->name);
}

static PyTypeObject PcsAgOp_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pycuda_sem._C._AutogradOp",
    .tp_basicsize = sizeof(PcsAgOp),
    .tp_dealloc = agop_dealloc,
    .tp_repr = agop_repr,
    .tp_call = PyVectorcall_Call,
    .tp_getattro = agop_getattro,
    .tp_descr_get = agop_descr_get,
    .tp_getset = agop_getset,
    .tp_vectorcall_offset = offsetof(PcsAgOp, vectorcall),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_doc = "An op wrapped for autograd: records a graph node when an input requires grad.",
};

PcsAgOp *pcs_ag_op_new(int kind, const char *opname, bool inplace)
{
    pcs_opinfo *op = opinfo_for(opname);
    if (!op)
        return NULL;
    PcsAgOp *w = PyObject_New(PcsAgOp, &PcsAgOp_Type);
    if (!w)
        return NULL;
    w->vectorcall = agop_vectorcall;
    w->kind = kind;
    w->flags = inplace ? F_INPLACE : 0;
    w->orig = NULL;
    w->orig_vc = NULL;
    w->un = NULL;
    w->bin = NULL;
    w->pow = NULL;
    w->setitem = NULL;
    w->op = op;
    return w;
}

/* ---- wrapping the methods, properties and functions ------------------------------ */

/* Not ops: autograd's own methods, and methods that only read metadata. */
static const char *const skip_names[] = {
    "requires_grad_", "detach", "detach_", "retain_grad", "register_hook",
    "register_post_accumulate_grad_hook", "backward", "size", "stride", "dim", "ndimension",
    "numel", "nelement", "element_size", "is_contiguous", "is_pinned", "is_floating_point",
    "is_complex", "data_ptr", "get_device", "storage_offset", "untyped_storage", "item",
    "tolist", "numpy", "record_stream", "is_set_to", "is_shared", "is_tensor", "is_grad_enabled",
    "is_inference_mode_enabled", "_set_grad_enabled", "_set_inference_mode", "_register_formula",
    "_formula_names", "_run_backward", "_use_c_formulas", "_FunctionCtx", "_function_wire", "share_memory_", NULL,
};
/* (H and mH are written in Python, py_methods.c: their ops record themselves) */
static const char *const property_ops[] = {"T", "mT", "real", "imag", NULL};

static bool in_list(const char *name, const char *const *list)
{
    for (int i = 0; list[i]; i++)
        if (!strcmp(name, list[i]))
            return true;
    return false;
}

static bool is_py_method(const char *name)
{
    for (int i = 0; pcs_ops_py_tmethods[i].ml_name; i++)
        if (!strcmp(name, pcs_ops_py_tmethods[i].ml_name))
            return true;
    return false;
}

static PyObject *wrap_callable(PyObject *orig, const char *name)
{
    vectorcallfunc vc = PyVectorcall_Function(orig);
    if (!vc)
        return NULL;
    size_t len = strlen(name);
    bool inplace = len > 1 && name[len - 1] == '_' && name[0] != '_';
    PcsAgOp *w = pcs_ag_op_new(K_CALL, name, inplace);
    if (!w)
        return NULL;
    w->orig = Py_NewRef(orig);
    w->orig_vc = vc;
    return (PyObject *)w;
}

static int wrap_type(PyTypeObject *type)
{
    PyObject *dict = type->tp_dict, *k, *v, *items = PyDict_Items(dict);
    if (!items)
        return -1;
    PyObject *property = (PyObject *)&PyProperty_Type;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); i++) {
        PyObject *kv = PyList_GET_ITEM(items, i);
        k = PyTuple_GET_ITEM(kv, 0);
        v = PyTuple_GET_ITEM(kv, 1);
        const char *name = PyUnicode_AsUTF8(k);
        if (!name)
            goto fail;
        PyObject *w = NULL;
        if (Py_IS_TYPE(v, &PyGetSetDescr_Type) && in_list(name, property_ops)) {
            PcsAgOp *g = pcs_ag_op_new(K_GET, name, false);
            if (!g)
                goto fail;
            g->orig = Py_NewRef(v);
            PyObject *doc = PyObject_GetAttrString(v, "__doc__");
            w = doc ? PyObject_CallFunctionObjArgs(property, (PyObject *)g, Py_None, Py_None, doc, NULL)
                    : NULL;
            Py_XDECREF(doc);
            Py_DECREF(g);
            if (!w)
                goto fail;
        } else if (Py_IS_TYPE(v, &PyMethodDescr_Type) && name[0] != '_' &&
                   !in_list(name, skip_names) && !is_py_method(name)) {
            w = wrap_callable(v, name);
            if (!w) {
                if (PyErr_Occurred())
                    goto fail;
                continue;
            }
        } else {
            continue;
        }
        int rc = PyDict_SetItem(dict, k, w);
        Py_DECREF(w);
        if (rc < 0)
            goto fail;
    }
    Py_DECREF(items);
    PyType_Modified(type);
    return 0;
fail:
    Py_DECREF(items);
    return -1;
}

static int wrap_functions(PyObject *module)
{
    PyObject *dict = PyModule_GetDict(module), *items = PyDict_Items(dict);
    if (!items)
        return -1;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); i++) {
        PyObject *kv = PyList_GET_ITEM(items, i);
        PyObject *k = PyTuple_GET_ITEM(kv, 0), *v = PyTuple_GET_ITEM(kv, 1);
        const char *name = PyUnicode_AsUTF8(k);
        if (!name) {
            Py_DECREF(items);
            return -1;
        }
        if (!PyCFunction_Check(v) || in_list(name, skip_names) || (name[0] == '_' && name[1] == '_'))
            continue;
        PyObject *w = wrap_callable(v, name);
        if (!w) {
            if (PyErr_Occurred()) {
                Py_DECREF(items);
                return -1;
            }
            continue;
        }
        int rc = PyDict_SetItem(dict, k, w);
        Py_DECREF(w);
        if (rc < 0) {
            Py_DECREF(items);
            return -1;
        }
    }
    Py_DECREF(items);
    return 0;
}

int pcs_ag_wrap_module(PyObject *module)
{
    if (pcs_ag_make_slot_ops() < 0 || wrap_type(&PcsTensor_Type) < 0)
        return -1;
    return wrap_functions(module);
}

static PyMethodDef record_functions[] = {
    {"_register_formula", (PyCFunction)(void (*)(void))register_formula, METH_FASTCALL,
     "_register_formula(name, fn, save_args, save_result, node_name=None, materialize=True, save_when=None): "
     "the backward formula "
     "of op `name` (fn=None: not differentiable)."},
    {"_formula_names", formula_names, METH_NOARGS,
     "_formula_names(): {op name: differentiable?} for every registered op."},
    {NULL, NULL, 0, NULL},
};

int pcs_record_init(PyObject *module)
{
    if (!(registry = PyDict_New()))
        return -1;
    str_out = PyUnicode_InternFromString("out");
    str_requires_grad = PyUnicode_InternFromString("requires_grad");
    if (!str_out || !str_requires_grad || PyType_Ready(&PcsAgOp_Type) < 0)
        return -1;
    return PyModule_AddFunctions(module, record_functions);
}
