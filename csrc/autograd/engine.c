/* engine.c: the backward pass.
 *
 * One run: (1) an iterative depth-first walk from the roots counts, for
 * every node reached, how many edges point at it, and (with inputs=) marks
 * the nodes that lead to a requested input; (2) nodes whose count reached
 * zero wait in a heap ordered by creation, latest first, as torch orders
 * them; running one sums what its consumers sent, applies the tensor hooks,
 * calls the formula, and sends each gradient along its edge. No recursion
 * anywhere, so a chain of 10^5 ops backs through in constant C stack.
 *
 * Streams (the CUDA semantics note, "Stream semantics of backward passes"):
 * each node runs with its forward's stream made current. A gradient made on
 * another stream is waited for with an event and marked as used by the
 * consuming stream (record_stream), so the allocator cannot reuse it early.
 * The initial gradients count as made on the caller's current stream; at the
 * end the caller's stream waits for every stream the pass used, so the
 * caller may use the gradients at once, as the note promises. */
#include "autograd/autograd.h"

#include <string.h>

#include "autograd/anomaly.h"
#include "autograd/grad_mode.h"
#include "core/dtype.h"
#include "ops/ops.h"
#include "runtime/stream.h"
#include "tensor/copy.h"

#include "autograd/engine.h"

static uint64_t run_counter = 0;
bool pcs_eng_use_cformulas = true; /* _C._use_c_formulas(False): tests compare with Python */

/* ---- small containers ----------------------------------------------------------- */

static int add_node(run_state *st, PcsNode *n)
{
    if (st->n_nodes == st->cap_nodes) {
        int cap = st->cap_nodes ? 2 * st->cap_nodes : 64;
        PcsNode **p = PyMem_Realloc(st->nodes, (size_t)cap * sizeof(PcsNode *));
        PcsNode **h = PyMem_Realloc(st->heap, (size_t)cap * sizeof(PcsNode *));
        if (p)
            st->nodes = p;
        if (h)
            st->heap = h;
        if (!p || !h) {
            PyErr_NoMemory();
            return -1;
        }
        st->cap_nodes = cap;
    }
    st->nodes[st->n_nodes++] = (PcsNode *)Py_NewRef(n);
    n->run = st->id;
    n->deps = 0;
    n->needed = st->n_in == 0;
    n->heap_pos = -1;
    PyMem_Free(n->buf);
    PyMem_Free(n->buf_stream);
    n->buf = PyMem_Calloc((size_t)n->n_outputs + 1, sizeof(PyObject *));
    n->buf_stream = PyMem_Calloc((size_t)n->n_outputs + 1, sizeof(cudaStream_t));
    if (!n->buf || !n->buf_stream) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static void heap_push(run_state *st, PcsNode *n)
{
    if (!st->heap) /* never: a node is listed (add_node sized the heap) before it is pushed */
        return;
    int i = st->n_heap++;
    while (i > 0) {
        int p = (i - 1) / 2;
        if (st->heap[p]->seq >= n->seq)
            break;
        st->heap[i] = st->heap[p];
        i = p;
    }
    st->heap[i] = n;
    n->heap_pos = 0;
}

static PcsNode *heap_pop(run_state *st)
{
    PcsNode *top = st->heap[0], *last = st->heap[--st->n_heap];
    int i = 0, n = st->n_heap;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && st->heap[c + 1]->seq > st->heap[c]->seq)
            c++;
        if (last->seq >= st->heap[c]->seq)
            break;
        st->heap[i] = st->heap[c];
        i = c;
    }
    if (n)
        st->heap[i] = last;
    return top;
}

/* ---- streams ---------------------------------------------------------------------- */

cudaStream_t pcs_eng_caller_stream(run_state *st, int device)
{
    for (int i = 0; i < st->n_caller; i++)
        if (st->caller[i].device == device)
            return st->caller[i].stream;
    cudaStream_t s = pcs_current_stream(device);
    if (st->n_caller < 8)
        st->caller[st->n_caller++] = (dev_stream){device, s};
    return s;
}

static void note_used(run_state *st, int device, cudaStream_t s)
{
    for (int i = 0; i < st->n_used; i++)
        if (st->used[i].device == device && st->used[i].stream == s)
            return;
    if (st->n_used < 32)
        st->used[st->n_used++] = (dev_stream){device, s};
    else
        st->too_many_streams = true;
}

/* `consumer` waits for the work queued so far on `producer` (same device). */
int pcs_eng_stream_wait(int device, cudaStream_t consumer, cudaStream_t producer)
{
    if (consumer == producer)
        return 0;
    cudaEvent_t ev;
    PCS_CUDA_CHECK(cudaSetDevice(device));
    PCS_CUDA_CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    cudaError_t e1 = cudaEventRecord(ev, producer);
    cudaError_t e2 = e1 == cudaSuccess ? cudaStreamWaitEvent(consumer, ev, 0) : e1;
    cudaError_t e3 = cudaEventDestroy(ev);
    if (e1 != cudaSuccess)
        return pcs_cuda_error(e1, "cudaEventRecord", __FILE__, __LINE__);
    if (e2 != cudaSuccess)
        return pcs_cuda_error(e2, "cudaStreamWaitEvent", __FILE__, __LINE__);
    return e3 == cudaSuccess ? 0 : pcs_cuda_error(e3, "cudaEventDestroy", __FILE__, __LINE__);
}

/* Before node n runs on its stream: wait for the gradients it takes. */
static int sync_inputs(run_state *st, PcsNode *n, cudaStream_t s)
{
    for (int i = 0; i < n->n_outputs; i++) {
        PyObject *g = n->buf[i];
        if (!g || !PcsTensor_Check(g) || ((PcsTensor *)g)->device != n->device)
            continue;
        cudaStream_t p = n->buf_stream[i];
        if (p == s)
            continue;
        if (pcs_eng_stream_wait(n->device, s, p) < 0 ||
            pcs_storage_record_stream(((PcsTensor *)g)->storage, s) < 0)
            return -1;
    }
    PCS_UNUSED(st);
    return 0;
}

/* ---- the walk ------------------------------------------------------------------------------------ */

static int discover(run_state *st, PcsNode **roots, int n_roots)
{
    typedef struct {
        PcsNode *n;
        int next;
    } frame;
    int cap = 64, sp = 0;
    frame *stack = PyMem_Malloc((size_t)cap * sizeof *stack);
    PcsNode **post = PyMem_Malloc(sizeof(PcsNode *) * 64);
    int n_post = 0, cap_post = 64;
    if (!stack || !post)
        goto oom;
    for (int r = 0; r < n_roots; r++) {
        if (roots[r]->run == st->id)
            continue;
        if (add_node(st, roots[r]) < 0)
            goto fail;
        stack[sp++] = (frame){roots[r], 0};
        while (sp) {
            frame *f = &stack[sp - 1];
            if (f->next < f->n->n_edges) {
                PcsNode *c = f->n->edges[f->next++].fn;
                if (!c)
                    continue;
                if (c->run != st->id) {
                    if (add_node(st, c) < 0)
                        goto fail;
                    if (sp == cap) {
                        frame *p = PyMem_Realloc(stack, (size_t)(cap *= 2) * sizeof *stack);
                        if (!p)
                            goto oom;
                        stack = p;
                    }
                    stack[sp++] = (frame){c, 0};
                }
                c->deps++;
                continue;
            }
            if (n_post == cap_post) {
                PcsNode **p = PyMem_Realloc(post, (size_t)(cap_post *= 2) * sizeof(PcsNode *));
                if (!p)
                    goto oom;
                post = p;
            }
            post[n_post++] = f->n;
            sp--;
        }
    }
    if (st->n_in) { /* children finish before parents in post-order */
        for (int i = 0; i < n_post; i++) {
            PcsNode *n = post[i];
            n->needed = pcs_eng_is_target(st, n);
            for (int e = 0; !n->needed && e < n->n_edges; e++)
                n->needed = n->edges[e].fn && n->edges[e].fn->needed;
        }
    }
    PyMem_Free(stack);
    PyMem_Free(post);
    return 0;
oom:
    PyErr_NoMemory();
fail:
    PyMem_Free(stack);
    PyMem_Free(post);
    return -1;
}

static int execute(run_state *st)
{
    while (st->n_heap) {
        PcsNode *n = heap_pop(st);
        int rc = 0;
        PyObject **grads = NULL;
        cudaStream_t s = 0;
        bool switched = false;
        if (n->needed) {
            if (n->device >= 0) {
                pcs_eng_caller_stream(st, n->device);
                s = n->kind == PCS_NODE_ACCUMULATE ? n->buf_stream[0] : n->stream;
                cudaStream_t cur = pcs_current_stream(n->device);
                rc = sync_inputs(st, n, s);
                if (!rc && cur != s) {
                    pcs_set_current_stream(n->device, s, 0);
                    switched = true;
                }
                note_used(st, n->device, s);
                if (switched)
                    s = pcs_current_stream(n->device);
            }
            if (!rc)
                rc = pcs_eng_before_node(st, n);
            if (!rc && n->kind == PCS_NODE_ACCUMULATE) {
                rc = pcs_eng_run_accumulate(st, n);
            } else if (!rc) {
                grads = PyMem_Calloc((size_t)n->n_edges + 1, sizeof(PyObject *));
                rc = grads ? pcs_eng_run_node(n, grads) : (PyErr_NoMemory(), -1);
                if (!rc)
                    rc = pcs_anomaly_check_grads(n, grads, n->n_edges);
            }
            if (rc)
                pcs_anomaly_report(n);
            if (switched) /* back to the caller's stream */
                pcs_set_current_stream(n->device, pcs_eng_caller_stream(st, n->device), 0);
            if (!rc && !st->keep_graph && n->kind != PCS_NODE_ACCUMULATE)
                pcs_node_release(n);
            else /* kept: what unpack hooks gave back is not (torch unpacks at each use) */
                pcs_node_drop_unpacked(n);
        }
        for (int i = 0; i < n->n_outputs; i++)
            Py_CLEAR(n->buf[i]);
        for (int e = 0; e < n->n_edges; e++) {
            PyObject *g = grads ? grads[e] : NULL;
            if (grads)
                grads[e] = NULL;
            if (!rc && g && pcs_eng_send(st, &n->edges[e], g, s) < 0)
                rc = -1;
            else if (rc && g)
                Py_DECREF(g);
            PcsNode *c = n->edges[e].fn;
            if (c && c->run == st->id && --c->deps == 0 && c->heap_pos < 0)
                heap_push(st, c);
        }
        PyMem_Free(grads);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* ---- the entry point ------------------------------------------------------------------------ */

static PyObject *root_grad(PcsTensor *t, PyObject *g, int i)
{
    if (g == Py_None) {
        if (pcs_tensor_numel(t) != 1) {
            PyErr_SetString(PyExc_RuntimeError, "grad can be implicitly created only for scalar outputs");
            return NULL;
        }
        if (pcs_is_complex(t->dtype)) {
            PyErr_Format(PyExc_RuntimeError, "grad can be implicitly created only for real scalar "
                         "outputs but got %s", pcs_dtypes[t->dtype].name);
            return NULL;
        }
        bool was = pcs_grad_enabled();
        pcs_set_grad_enabled(false);
        PyObject *shape = pcs_size_new(t->ndim, t->sizes);
        PyObject *r = shape ? PyObject_CallMethod((PyObject *)t, "new_ones", "(O)", shape) : NULL;
        Py_XDECREF(shape);
        pcs_set_grad_enabled(was);
        return r;
    }
    if (!PcsTensor_Check(g)) {
        PyErr_Format(PyExc_TypeError, "gradients can be either Tensors or None, but got %.100s",
                     Py_TYPE(g)->tp_name);
        return NULL;
    }
    PcsTensor *gt = (PcsTensor *)g;
    if (gt->ndim != t->ndim || memcmp(gt->sizes, t->sizes, (size_t)t->ndim * sizeof(int64_t)) != 0) {
        PyObject *a = pcs_size_new(gt->ndim, gt->sizes), *b = pcs_size_new(t->ndim, t->sizes);
        if (a && b)
            PyErr_Format(PyExc_RuntimeError, "Mismatch in shape: grad_output[%d] has a shape of %R and "
                         "output[%d] has a shape of %R.", i, a, i, b);
        Py_XDECREF(a);
        Py_XDECREF(b);
        return NULL;
    }
    if (pcs_is_complex(gt->dtype) != pcs_is_complex(t->dtype)) {
        PyErr_Format(PyExc_RuntimeError, "For complex Tensors, both grad_output and output are required "
                     "to have the same dtype. Mismatch in dtype: grad_output[%d] has a dtype of %R and "
                     "output[%d] has a dtype of %R.", i, pcs_dtype_object(gt->dtype), i,
                     pcs_dtype_object(t->dtype));
        return NULL;
    }
    if (gt->device != t->device) {
        PyObject *a = PyObject_GetAttrString(g, "device");
        if (!a)
            return NULL;
        PyObject *b = PyObject_GetAttrString((PyObject *)t, "device");
        if (b)
            PyErr_Format(PyExc_RuntimeError, "invalid gradient at index %d - expected device %S but got %S",
                         i, b, a);
        Py_DECREF(a);
        Py_XDECREF(b);
        return NULL;
    }
    if (gt->dtype != t->dtype)
        return PyObject_CallMethod(g, "to", "O", pcs_dtype_object(t->dtype));
    return Py_NewRef(g);
}

static void cleanup(run_state *st)
{
    for (int i = 0; i < st->n_nodes; i++) {
        PcsNode *n = st->nodes[i];
        if (n->buf)
            for (int k = 0; k < n->n_outputs; k++)
                Py_CLEAR(n->buf[k]);
        n->run = 0;
        pcs_ag_decref((PyObject *)n);
    }
    PyMem_Free(st->nodes);
    PyMem_Free(st->heap);
    for (int i = 0; i < st->n_in; i++) {
        pcs_ag_decref((PyObject *)st->in_edge[i].fn);
        Py_XDECREF(st->captured ? st->captured[i] : NULL);
    }
    PyMem_Free(st->in_edge);
    PyMem_Free(st->in_t);
    PyMem_Free(st->captured);
}

/* At the end: the caller's streams wait for every stream the pass used. */
static int join_streams(run_state *st)
{
    for (int i = 0; i < st->n_used; i++) {
        int d = st->used[i].device;
        if (pcs_eng_stream_wait(d, pcs_eng_caller_stream(st, d), st->used[i].stream) < 0)
            return -1;
    }
    if (st->too_many_streams)
        for (int i = 0; i < st->n_caller; i++) {
            PCS_CUDA_CHECK(cudaSetDevice(st->caller[i].device));
            PCS_CUDA_CHECK(cudaDeviceSynchronize());
        }
    return 0;
}

static int setup_inputs(run_state *st, PyObject *inputs)
{
    st->n_in = (int)PyTuple_GET_SIZE(inputs);
    st->in_edge = PyMem_Calloc((size_t)st->n_in + 1, sizeof *st->in_edge);
    st->in_t = PyMem_Calloc((size_t)st->n_in + 1, sizeof(PcsTensor *));
    st->captured = PyMem_Calloc((size_t)st->n_in + 1, sizeof(PyObject *));
    if (!st->in_edge || !st->in_t || !st->captured) {
        PyErr_NoMemory();
        return -1;
    }
    for (int i = 0; i < st->n_in; i++) {
        PyObject *x = PyTuple_GET_ITEM(inputs, i);
        if (PyTuple_Check(x) && PyTuple_GET_SIZE(x) >= 2 && PcsNode_Check(PyTuple_GET_ITEM(x, 0))) {
            /* a GradientEdge (node, output_nr): the gradient flowing into it */
            PcsNode *node = (PcsNode *)PyTuple_GET_ITEM(x, 0);
            if (st->accumulate) {
                PyErr_SetString(PyExc_NotImplementedError, "backward(inputs=GradientEdge): "
                                "pycuda_sem accepts gradient edges as inputs of autograd.grad only");
                return -1;
            }
            PyObject *o = PyTuple_GET_ITEM(x, 1);
            int overflow = 0;
            long nr = PyLong_Check(o) ? PyLong_AsLongAndOverflow(o, &overflow) : -1;
            if (nr == -1 && PyErr_Occurred())
                return -1;
            if (!PyLong_Check(o)) {
                PyErr_Format(PyExc_TypeError, "GradientEdge output_nr must be an int, not %.100s",
                             Py_TYPE(o)->tp_name);
                return -1;
            }
            if (overflow || nr < 0 || nr >= node->n_outputs) {
                PyErr_Format(PyExc_IndexError, "GradientEdge output_nr %ld is out of range for %U "
                             "(%d inputs)", nr, node->name, node->n_outputs);
                return -1;
            }
            st->in_edge[i] = (pcs_edge){(PcsNode *)Py_NewRef(node), (int)nr};
            continue;
        }
        if (!PcsTensor_Check(x)) {
            PyErr_Format(PyExc_TypeError, "inputs must be Tensors, but element %d is %.100s", i,
                         Py_TYPE(x)->tp_name);
            return -1;
        }
        if (!pcs_ag_requires_grad(x)) {
            PyErr_SetString(PyExc_RuntimeError, "One of the differentiated Tensors does not require grad");
            return -1;
        }
        st->in_t[i] = (PcsTensor *)x;
        if (pcs_ag_gradient_edge((PcsTensor *)x, &st->in_edge[i]) < 0)
            return -1;
    }
    return 0;
}

/* The innermost backward running on this thread (hooks ask for its id). */
static _Thread_local run_state *current_run;

PyObject *pcs_ag_run_backward(PyObject *tensors, PyObject *grads, bool keep_graph, bool create_graph,
                              PyObject *inputs, bool allow_unused, bool accumulate)
{
    run_state st;
    memset(&st, 0, sizeof st);
    st.id = ++run_counter;
    st.keep_graph = keep_graph;
    st.create_graph = create_graph;
    st.accumulate = accumulate;
    Py_ssize_t n_roots = PyTuple_GET_SIZE(tensors);
    if (PyTuple_GET_SIZE(grads) != n_roots) {
        PyErr_Format(PyExc_RuntimeError, "got %zd tensors and %zd gradients", n_roots, PyTuple_GET_SIZE(grads));
        return NULL;
    }
    PcsNode **roots = PyMem_Calloc((size_t)n_roots + 1, sizeof(PcsNode *));
    pcs_edge *redge = PyMem_Calloc((size_t)n_roots + 1, sizeof *redge);
    PyObject **rgrad = PyMem_Calloc((size_t)n_roots + 1, sizeof(PyObject *));
    PyObject *result = NULL;
    bool was = pcs_grad_enabled();
    int rc = (roots && redge && rgrad) ? 0 : (PyErr_NoMemory(), -1);
    for (Py_ssize_t i = 0; !rc && i < n_roots; i++) {
        PyObject *t = PyTuple_GET_ITEM(tensors, i);
        if (!PcsTensor_Check(t)) {
            PyErr_Format(PyExc_TypeError, "backward: element %zd of tensors is not a Tensor", i);
            rc = -1;
        } else if (!pcs_ag_requires_grad(t)) {
            PyErr_Format(PyExc_RuntimeError, "element %zd of tensors does not require grad and does "
                         "not have a grad_fn", i);
            rc = -1;
        } else if (!(rgrad[i] = root_grad((PcsTensor *)t, PyTuple_GET_ITEM(grads, i), (int)i)) ||
                   pcs_ag_gradient_edge((PcsTensor *)t, &redge[i]) < 0) {
            rc = -1;
        } else {
            roots[i] = redge[i].fn;
        }
    }
    if (!rc && inputs)
        rc = setup_inputs(&st, inputs);
    if (!rc)
        rc = discover(&st, roots, (int)n_roots);
    pcs_set_grad_enabled(create_graph);
    for (Py_ssize_t i = 0; !rc && i < n_roots; i++) {
        PcsTensor *t = (PcsTensor *)PyTuple_GET_ITEM(tensors, i);
        cudaStream_t s = t->device >= 0 ? pcs_eng_caller_stream(&st, t->device) : 0;
        rc = pcs_eng_send(&st, &redge[i], rgrad[i], s);
        rgrad[i] = NULL;
    }
    for (Py_ssize_t i = 0; !rc && i < n_roots; i++)
        if (roots[i]->deps == 0 && roots[i]->heap_pos < 0)
            heap_push(&st, roots[i]);
    run_state *outer = current_run;
    current_run = &st;
    if (!rc)
        rc = execute(&st);
    current_run = outer;
    pcs_set_grad_enabled(was);
    if (st.n_used && join_streams(&st) < 0)
        rc = -1;
    if (!rc && inputs && !accumulate) {
        result = PyTuple_New(st.n_in);
        for (int i = 0; result && i < st.n_in; i++) {
            PyObject *g = st.captured[i];
            if (!g && !allow_unused) {
                PyErr_SetString(PyExc_RuntimeError, "One of the differentiated Tensors appears to not have "
                                "been used in the graph. Set allow_unused=True if this is the desired "
                                "behavior.");
                Py_CLEAR(result);
                break;
            }
            PyTuple_SET_ITEM(result, i, Py_NewRef(g ? g : Py_None));
        }
    } else if (!rc) {
        result = Py_NewRef(Py_None);
    }
    for (Py_ssize_t i = 0; i < n_roots; i++) {
        Py_XDECREF(rgrad ? rgrad[i] : NULL);
        if (redge)
            pcs_ag_decref((PyObject *)redge[i].fn);
    }
    PyMem_Free(roots);
    PyMem_Free(redge);
    PyMem_Free(rgrad);
    cleanup(&st);
    return result;
}

/* _run_backward(tensors, grad_tensors, keep_graph, create_graph, inputs,
 *               allow_unused, accumulate) */
static PyObject *run_backward(PyObject *m, PyObject *const *a, Py_ssize_t nargs)
{
    PCS_UNUSED(m);
    if (nargs != 7 || !PyTuple_Check(a[0]) || !PyTuple_Check(a[1]) ||
        (a[4] != Py_None && !PyTuple_Check(a[4]))) {
        PyErr_SetString(PyExc_TypeError, "_run_backward(tensors: tuple, grad_tensors: tuple, keep_graph, "
                        "create_graph, inputs: tuple | None, allow_unused, accumulate)");
        return NULL;
    }
    int keep = PyObject_IsTrue(a[2]), create = PyObject_IsTrue(a[3]);
    int unused = PyObject_IsTrue(a[5]), acc = PyObject_IsTrue(a[6]);
    if (keep < 0 || create < 0 || unused < 0 || acc < 0)
        return NULL;
    return pcs_ag_run_backward(a[0], a[1], keep, create, a[4] == Py_None ? NULL : a[4], unused, acc);
}

static PyObject *set_cformulas(PyObject *m, PyObject *v)
{
    PCS_UNUSED(m);
    int on = PyObject_IsTrue(v);
    if (on < 0)
        return NULL;
    PyObject *old = PyBool_FromLong(pcs_eng_use_cformulas);
    pcs_eng_use_cformulas = on;
    return old;
}

static PyObject *current_graph_task_id(PyObject *m, PyObject *noargs)
{
    PCS_UNUSED(m);
    PCS_UNUSED(noargs);
    return PyLong_FromLongLong(current_run ? (long long)current_run->id : -1);
}

/* Whether the running backward will run node (reached, and on a path to a
 * requested input). Only valid inside a backward, as torch's. */
static PyObject *will_engine_execute_node(PyObject *m, PyObject *node)
{
    PCS_UNUSED(m);
    if (!PcsNode_Check(node)) {
        PyErr_Format(PyExc_TypeError, "_will_engine_execute_node: expected a grad_fn (Node), got %.100s",
                     Py_TYPE(node)->tp_name);
        return NULL;
    }
    if (!current_run) {
        PyErr_SetString(PyExc_RuntimeError, "_will_engine_execute_node should only be called during "
                        "the backward pass");
        return NULL;
    }
    PcsNode *n = (PcsNode *)node;
    return PyBool_FromLong(n->run == current_run->id && n->needed);
}

static PyMethodDef engine_functions[] = {
    {"_current_graph_task_id", current_graph_task_id, METH_NOARGS,
     "_current_graph_task_id() -> int: the id of the backward running on this thread, or -1."},
    {"_will_engine_execute_node", will_engine_execute_node, METH_O,
     "_will_engine_execute_node(node) -> bool: inside a backward, whether it runs node."},
    {"_use_c_formulas", set_cformulas, METH_O,
     "_use_c_formulas(on) -> previous: whether the C twins of the hottest formulas run (tests)."},
    {"_run_backward", (PyCFunction)(void (*)(void))run_backward, METH_FASTCALL,
     "_run_backward(tensors, grad_tensors, keep_graph, create_graph, inputs, allow_unused, accumulate): "
     "the backward pass. accumulate=True adds into the leaves' .grad (only those in inputs when "
     "given); accumulate=False returns the gradients of inputs."},
    {NULL, NULL, 0, NULL},
};

int pcs_engine_init(PyObject *module)
{
    return PyModule_AddFunctions(module, engine_functions);
}
