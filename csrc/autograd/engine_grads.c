/* engine_grads.c: the gradient side of one backward step: a formula's
 * gradients checked against their inputs, summed to a broadcast input's
 * shape, cast and moved (fit_grad); gradients sent along edges and summed
 * where several meet; the tensor hooks, retain_grad, captures for
 * autograd.grad and the leaves' accumulation; and the call of one node's
 * formula (its C twin first where there is one). engine.c drives it. */
#include "autograd/engine.h"

#include <string.h>

#include "autograd/grad_mode.h"
#include "core/dtype.h"
#include "ops/ops.h"
#include "runtime/stream.h"
#include "tensor/copy.h"

/* ---- gradients: checking, reducing, casting ----------------------------------------- */

static PyObject *zeros_for(const pcs_tmeta *m)
{
    bool was = pcs_grad_enabled();
    pcs_set_grad_enabled(false);
    PyObject *z = (PyObject *)pcs_zeros_tensor(m->ndim, m->sizes, m->dtype, m->device);
    pcs_set_grad_enabled(was);
    return z;
}

/* g reduced/cast/moved to what input `m` needs (new ref), or NULL. */
static PyObject *fit_grad(PcsNode *n, int index, PyObject *g, const pcs_tmeta *m)
{
    if (!PcsTensor_Check(g)) {
        PyErr_Format(PyExc_TypeError, "%U returned a %.100s as the gradient at index %d; expected a "
                     "Tensor or None", n->name, Py_TYPE(g)->tp_name, index);
        return NULL;
    }
    PcsTensor *t = (PcsTensor *)g;
    Py_INCREF(g);
    bool same = t->ndim == m->ndim && memcmp(t->sizes, m->sizes, (size_t)m->ndim * sizeof(int64_t)) == 0;
    if (!same) {
        int lead = t->ndim - m->ndim;
        bool ok = lead >= 0;
        PyObject *dims = ok ? PyList_New(0) : NULL;
        for (int i = 0; ok && i < t->ndim; i++) {
            bool sum = i < lead || (m->sizes[i - lead] == 1 && t->sizes[i] != 1);
            if (!sum && t->sizes[i] != m->sizes[i - lead])
                ok = false;
            else if (sum) {
                PyObject *d = PyLong_FromLong(i);
                if (!d || PyList_Append(dims, d) < 0) {
                    Py_XDECREF(d);
                    Py_DECREF(dims);
                    Py_DECREF(g);
                    return NULL;
                }
                Py_DECREF(d);
            }
        }
        if (!ok) {
            Py_XDECREF(dims);
            Py_DECREF(g);
            char got[256], want[256];
            pcs_shape_str(t->ndim, t->sizes, got, sizeof got);
            pcs_shape_str(m->ndim, m->sizes, want, sizeof want);
            PyErr_Format(PyExc_RuntimeError, "Function %U returned an invalid gradient at index %d - "
                         "got %s but expected shape compatible with %s", n->name, index, got, want);
            return NULL;
        }
        PyObject *r = g;
        if (PyList_GET_SIZE(dims)) {
            PyObject *dt = PyList_AsTuple(dims);
            PyObject *args[3] = {g, dt, Py_True};
            static PyObject *sum_name = NULL;
            if (!sum_name)
                sum_name = PyUnicode_InternFromString("sum");
            r = dt && sum_name ? PyObject_VectorcallMethod(sum_name, args, 3, NULL) : NULL;
            Py_XDECREF(dt);
            Py_DECREF(g);
        }
        Py_DECREF(dims);
        if (!r)
            return NULL;
        PyObject *shape = pcs_size_new(m->ndim, m->sizes);
        g = shape ? PyObject_CallMethod(r, "reshape", "(O)", shape) : NULL;
        Py_XDECREF(shape);
        Py_DECREF(r);
        if (!g)
            return NULL;
        t = (PcsTensor *)g;
    }
    if (t->device != m->device) {
        PyObject *r = m->device >= 0 ? PyObject_CallMethod(g, "cuda", "i", m->device)
                                     : PyObject_CallMethod(g, "cpu", NULL);
        Py_DECREF(g);
        if (!r)
            return NULL;
        g = r;
        t = (PcsTensor *)g;
    }
    if (t->dtype != m->dtype) {
        PyObject *r = PyObject_CallMethod(g, "to", "O", pcs_dtype_object(m->dtype));
        Py_DECREF(g);
        g = r;
    }
    return g;
}

/* True when g is a dense tensor nobody else can see: safe to add into in
 * place, or to keep as a leaf's .grad without a copy. */
static bool owned_dense(PyObject *g, Py_ssize_t refs)
{
    PcsTensor *t = (PcsTensor *)g;
    return PcsTensor_Check(g) && Py_REFCNT(g) <= refs && Py_REFCNT(t->storage) == 1 &&
           pcs_tensor_is_contiguous(t) && !t->autograd;
}

/* Sends g (stolen) along edge e, produced on stream s. */
int pcs_eng_send(run_state *st, pcs_edge *e, PyObject *g, cudaStream_t s)
{
    PcsNode *to = e->fn;
    if (!to || to->run != st->id || !to->needed) {
        Py_DECREF(g);
        return 0;
    }
    PyObject *old = to->buf[e->nr];
    if (!old) {
        to->buf[e->nr] = g;
        to->buf_stream[e->nr] = s;
        return 0;
    }
    if (to->device >= 0 && to->buf_stream[e->nr] != s &&
        pcs_eng_stream_wait(to->device, s, to->buf_stream[e->nr]) < 0) {
        Py_DECREF(g);
        return -1;
    }
    PyObject *sum = (!st->create_graph && owned_dense(old, 1)) ? PyNumber_InPlaceAdd(old, g)
                                                                 : PyNumber_Add(old, g);
    Py_DECREF(g);
    if (!sum)
        return -1;
    Py_DECREF(old);
    to->buf[e->nr] = sum;
    to->buf_stream[e->nr] = s;
    return 0;
}

/* ---- hooks ------------------------------------------------------------------------------- */

/* Runs the hooks of dict on *g (each may return a replacement). */
static int run_tensor_hooks(PyObject *dict, PyObject **g)
{
    if (!dict || !*g)
        return 0;
    PyObject *fns = PyDict_Values(dict);
    if (!fns)
        return -1;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(fns); i++) {
        PyObject *r = PyObject_CallOneArg(PyList_GET_ITEM(fns, i), *g);
        if (!r) {
            Py_DECREF(fns);
            return -1;
        }
        if (r == Py_None) {
            Py_DECREF(r);
            continue;
        }
        if (!PcsTensor_Check(r) || !PcsTensor_Check(*g) ||
            ((PcsTensor *)r)->ndim != ((PcsTensor *)*g)->ndim ||
            memcmp(((PcsTensor *)r)->sizes, ((PcsTensor *)*g)->sizes,
                   (size_t)((PcsTensor *)r)->ndim * sizeof(int64_t)) != 0) {
            Py_DECREF(r);
            PyObject *nm = PyObject_GetAttrString(PyList_GET_ITEM(fns, i), "__name__");
            Py_DECREF(fns);
            if (!nm)
                PyErr_Clear();
            PyErr_Format(PyExc_RuntimeError, "hook '%S' has changed the size of value",
                         nm ? nm : Py_None);
            Py_XDECREF(nm);
            return -1;
        }
        Py_SETREF(*g, r);
    }
    Py_DECREF(fns);
    return 0;
}

static int accumulate_into(PyObject **slot, PyObject *g, bool create_graph)
{
    if (!*slot) {
        *slot = Py_NewRef(g);
        return 0;
    }
    PyObject *r = create_graph ? PyNumber_Add(*slot, g) : PyNumber_InPlaceAdd(*slot, g);
    if (!r)
        return -1;
    Py_SETREF(*slot, r);
    return 0;
}

static int capture(run_state *st, PcsNode *n, int nr, PyObject *g)
{
    for (int i = 0; i < st->n_in; i++) {
        if (st->in_edge[i].fn != n || st->in_edge[i].nr != nr || !g)
            continue;
        if (st->accumulate) { /* backward(inputs=[non-leaf]) accumulates into its .grad */
            if (n->kind == PCS_NODE_ACCUMULATE || !st->in_t[i]) /* a leaf's node adds it; an edge has no .grad */
                continue;
            pcs_meta *m = pcs_ag_meta_get(st->in_t[i]);
            if (!m || accumulate_into(&m->grad, g, st->create_graph) < 0)
                return -1;
            continue;
        }
        if (accumulate_into(&st->captured[i], g, st->create_graph) < 0)
            return -1;
    }
    return 0;
}

bool pcs_eng_is_target(run_state *st, PcsNode *n)
{
    for (int i = 0; i < st->n_in; i++)
        if (st->in_edge[i].fn == n)
            return true;
    return false;
}

/* AccumulateGrad: hooks of the leaf, then .grad += g, then post hooks. */
int pcs_eng_run_accumulate(run_state *st, PcsNode *n)
{
    PcsTensor *leaf = n->leaf;
    pcs_meta *m = pcs_ag_meta_get(leaf);
    PyObject *g = n->buf[0];
    if (!m || !g)
        return m ? 0 : -1;
    if (run_tensor_hooks(m->hooks, &n->buf[0]) < 0)
        return -1;
    g = n->buf[0];
    if (capture(st, n, 0, g) < 0)
        return -1;
    if (!st->accumulate || (st->n_in && !pcs_eng_is_target(st, n)))
        return 0;
    if (!m->grad) {
        /* the gradient may be shared (a formula gave one tensor to two
         * inputs): a leaf gets its own, as later in-place += must not leak */
        PyObject *own = (st->create_graph || owned_dense(g, 1))
                            ? Py_NewRef(g)
                            : (PyObject *)pcs_tensor_contiguous((PcsTensor *)g, true);
        if (!own)
            return -1;
        m->grad = own;
    } else {
        if (n->device >= 0 && pcs_eng_stream_wait(n->device, pcs_current_stream(n->device),
                                          pcs_eng_caller_stream(st, n->device)) < 0)
            return -1;
        if (accumulate_into(&m->grad, g, st->create_graph) < 0)
            return -1;
    }
    if (m->post_hooks) {
        PyObject *fns = PyDict_Values(m->post_hooks);
        for (Py_ssize_t i = 0; fns && i < PyList_GET_SIZE(fns); i++) {
            PyObject *r = PyObject_CallOneArg(PyList_GET_ITEM(fns, i), (PyObject *)leaf);
            if (!r)
                Py_CLEAR(fns);
            else
                Py_DECREF(r);
        }
        if (!fns)
            return -1;
        Py_DECREF(fns);
    }
    return 0;
}

/* retain_grad and tensor hooks of a non-leaf's outputs, and captures. */
int pcs_eng_before_node(run_state *st, PcsNode *n)
{
    if (n->tensor_hooks) {
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(n->tensor_hooks); i++) {
            PyObject *e = PyList_GET_ITEM(n->tensor_hooks, i);
            long nr = PyLong_AsLong(PyTuple_GET_ITEM(e, 0));
            if (nr == -1 && PyErr_Occurred())
                return -1;
            if (nr >= 0 && nr < n->n_outputs && run_tensor_hooks(PyTuple_GET_ITEM(e, 1), &n->buf[nr]) < 0)
                return -1;
        }
    }
    if (n->retains) {
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(n->retains); i++) {
            PyObject *e = PyList_GET_ITEM(n->retains, i);
            long nr = PyLong_AsLong(PyTuple_GET_ITEM(e, 0));
            if (nr == -1 && PyErr_Occurred())
                return -1;
            PyObject *t = PyWeakref_GetObject(PyTuple_GET_ITEM(e, 1));
            if (!t)
                return -1;
            if (t == Py_None || nr < 0 || nr >= n->n_outputs || !n->buf[nr])
                continue;
            pcs_meta *m = pcs_ag_meta_get((PcsTensor *)t);
            PyObject *g = n->buf[nr];
            if (!m)
                return -1;
            if (!m->grad) {
                m->grad = st->create_graph ? Py_NewRef(g) : (PyObject *)pcs_tensor_contiguous((PcsTensor *)g, true);
                if (!m->grad)
                    return -1;
            } else if (accumulate_into(&m->grad, g, st->create_graph) < 0) {
                return -1;
            }
        }
    }
    for (int i = 0; n->kind != PCS_NODE_ACCUMULATE && i < n->n_outputs; i++)
        if (n->buf[i] && capture(st, n, i, n->buf[i]) < 0) /* a leaf's: after its hooks */
            return -1;
    if (n->pre_hooks && PyDict_GET_SIZE(n->pre_hooks)) {
        PyObject *go = PyTuple_New(n->n_outputs);
        for (int i = 0; go && i < n->n_outputs; i++)
            PyTuple_SET_ITEM(go, i, Py_NewRef(n->buf[i] ? n->buf[i] : Py_None));
        PyObject *fns = go ? PyDict_Values(n->pre_hooks) : NULL;
        for (Py_ssize_t i = 0; fns && i < PyList_GET_SIZE(fns); i++) {
            PyObject *r = PyObject_CallOneArg(PyList_GET_ITEM(fns, i), go);
            if (!r)
                Py_CLEAR(fns);
            else if (r != Py_None && PyTuple_Check(r) && PyTuple_GET_SIZE(r) == n->n_outputs)
                Py_SETREF(go, r);
            else
                Py_DECREF(r);
        }
        if (!fns) {
            Py_XDECREF(go);
            return -1;
        }
        Py_DECREF(fns);
        for (int i = 0; i < n->n_outputs; i++) {
            PyObject *v = PyTuple_GET_ITEM(go, i);
            Py_XSETREF(n->buf[i], v == Py_None ? NULL : Py_NewRef(v));
        }
        Py_DECREF(go);
    }
    return 0;
}

/* ---- running one formula/function node ------------------------------------------------------ */

/* The formula's result spread over the node's edges: grads[flat] (new refs). */
static int spread(PcsNode *n, PyObject *ret, PyObject **grads)
{
    PyObject *seq = PyTuple_Check(ret) || PyList_Check(ret) ? Py_NewRef(ret) : PyTuple_Pack(1, ret);
    if (!seq)
        return -1;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
    if (n->kind == PCS_NODE_FUNCTION && len != n->n_args) {
        bool extra_none = len > n->n_args;
        for (Py_ssize_t i = n->n_args; extra_none && i < len; i++)
            extra_none = PySequence_Fast_GET_ITEM(seq, i) == Py_None;
        if (!extra_none) {
            PyErr_Format(PyExc_RuntimeError, "function %U returned an incorrect number of gradients "
                         "(expected %d, got %zd)", n->name, n->n_args, len);
            Py_DECREF(seq);
            return -1;
        }
    }
    for (int i = 0; i < n->n_args && i < len; i++) {
        PyObject *g = PySequence_Fast_GET_ITEM(seq, i);
        pcs_argmap *am = &n->amap[i];
        if (g == Py_None)
            continue;
        if (am->flat >= 0) {
            if (n->edges[am->flat].fn && !(grads[am->flat] = fit_grad(n, i, g, &n->in_meta[am->flat]))) {
                Py_DECREF(seq);
                return -1;
            }
        } else if (am->first >= 0) {
            PyObject *gs = PySequence_Fast(g, "a list argument's gradient must be a sequence");
            if (!gs || PySequence_Fast_GET_SIZE(gs) != am->len) {
                if (gs)
                    PyErr_Format(PyExc_RuntimeError, "%U: gradient for a list argument has the wrong length",
                                 n->name);
                Py_XDECREF(gs);
                Py_DECREF(seq);
                return -1;
            }
            for (int j = 0; j < am->len; j++) {
                int fl = n->elem[am->first + j];
                PyObject *e = PySequence_Fast_GET_ITEM(gs, j);
                if (fl < 0 || e == Py_None || !n->edges[fl].fn)
                    continue;
                if (!(grads[fl] = fit_grad(n, i, e, &n->in_meta[fl]))) {
                    Py_DECREF(gs);
                    Py_DECREF(seq);
                    return -1;
                }
            }
            Py_DECREF(gs);
        }
    }
    Py_DECREF(seq);
    return 0;
}

int pcs_eng_run_node(PcsNode *n, PyObject **grads)
{
    if (pcs_node_check_saved(n) < 0)
        return -1;
    if (!n->formula) {
        PyErr_Format(PyExc_RuntimeError, "%U has no backward", n->name);
        return -1;
    }
    PyObject **call = PyMem_Calloc((size_t)n->n_outputs + 2, sizeof(PyObject *));
    if (!call) {
        PyErr_NoMemory();
        return -1;
    }
    call[0] = (PyObject *)n;
    int rc = 0;
    for (int i = 0; i < n->n_outputs; i++) {
        PyObject *g = n->buf[i];
        if (!g && n->materialize && n->out_meta[i].ndim >= 0)
            g = zeros_for(&n->out_meta[i]);
        else
            g = Py_NewRef(g ? g : Py_None);
        if (!g)
            rc = -1;
        call[i + 1] = g;
    }
    PyObject *ret = NULL;
    if (!rc && pcs_eng_use_cformulas && n->cfn && n->n_outputs == 1 && call[1] != Py_None) {
        ret = n->cfn(n, call[1]);
        if (ret == Py_NotImplemented)
            Py_CLEAR(ret);
        else if (!ret)
            rc = -1;
    }
    if (!rc && !ret)
        ret = PyObject_Vectorcall(n->formula, call, (size_t)n->n_outputs + 1, NULL);
    if (ret && n->post_hooks && PyDict_GET_SIZE(n->post_hooks)) {
        PyObject *go = PyTuple_New(n->n_outputs);
        for (int i = 0; go && i < n->n_outputs; i++)
            PyTuple_SET_ITEM(go, i, Py_NewRef(call[i + 1]));
        PyObject *gi = go ? (PyTuple_Check(ret) ? Py_NewRef(ret) : PyTuple_Pack(1, ret)) : NULL;
        PyObject *fns = gi ? PyDict_Values(n->post_hooks) : NULL;
        for (Py_ssize_t i = 0; fns && i < PyList_GET_SIZE(fns); i++) {
            PyObject *r = PyObject_CallFunctionObjArgs(PyList_GET_ITEM(fns, i), gi, go, NULL);
            if (!r)
                Py_CLEAR(fns);
            else if (r != Py_None)
                Py_SETREF(gi, r);
            else
                Py_DECREF(r);
        }
        if (fns) {
            Py_DECREF(fns);
            Py_SETREF(ret, gi);
            gi = NULL;
        } else {
            Py_CLEAR(ret);
        }
        Py_XDECREF(gi);
        Py_XDECREF(go);
    }
    for (int i = 0; i < n->n_outputs; i++)
        Py_XDECREF(call[i + 1]);
    PyMem_Free(call);
    if (!ret)
        return -1;
    rc = spread(n, ret, grads);
    Py_DECREF(ret);
    return rc;
}

