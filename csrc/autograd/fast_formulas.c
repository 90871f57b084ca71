/* fast_formulas.c: C versions of the backward formulas that training loops
 * run most (add, sub, mul, div, neg, sum, relu, mm, t, view/reshape), so the
 * backward of a step does not pay a Python call per node. They compute the
 * same thing as their Python twins in pycuda_sem/autograd/_formulas*.py, from
 * the same ctx, through the same (wrapped) tensor ops, so create_graph and
 * double backward behave identically. Anything unusual (complex dtypes, an
 * alpha=, a rounding_mode=, dims to sum over, a missing saved tensor) returns
 * Py_NotImplemented and the Python formula runs instead. */
#include "autograd/autograd.h"
#include "autograd/grad_mode.h"

#include <string.h>

#include "core/dtype.h"
#include "ops/ops.h"

#define N(o) ((PcsNode *)(o))

static bool needs(PcsNode *n, int i)
{
    if (i >= n->n_args)
        return false;
    int fl = n->amap[i].flat;
    return fl >= 0 && n->edges[fl].fn != NULL;
}

/* The node's positional arg i (borrowed) */
static PyObject *arg(PcsNode *n, int i)
{
    return PyTuple_GET_ITEM(n->args, i);
}

/* True when nothing in the call is complex, no keyword was given and the
 * arg count is what the C formula handles. */
static bool plain(PcsNode *n, int nargs)
{
    if (n->n_args != nargs || (n->kwargs && PyDict_GET_SIZE(n->kwargs)) || !n->args)
        return false;
    for (int i = 0; i < n->n_edges; i++)
        if (pcs_is_complex(n->in_meta[i].dtype))
            return false;
    for (int i = 0; i < n->n_outputs; i++)
        if (n->out_meta[i].ndim >= 0 && pcs_is_complex(n->out_meta[i].dtype))
            return false;
    for (int i = 0; i < nargs; i++) {
        PyObject *a = arg(n, i);
        if (PyComplex_Check(a))
            return false;
        if (n->amap[i].flat < 0 && n->amap[i].first >= 0)
            return false; /* a list argument */
    }
    return true;
}

/* A saved operand, or NULL when it was a tensor that was not kept. */
static PyObject *operand(PcsNode *n, int i)
{
    PyObject *a = arg(n, i);
    if (a == Py_None && n->amap[i].flat >= 0)
        return NULL;
    return a;
}

/* (a, b) / (a,): both steal their items; a NULL item (a failed call, its
 * exception set) makes the result NULL. */
static PyObject *tuple2(PyObject *a, PyObject *b)
{
    PyObject *t = (a && b) ? PyTuple_Pack(2, a, b) : NULL;
    Py_XDECREF(a);
    Py_XDECREF(b);
    return t;
}

static PyObject *tuple1(PyObject *a)
{
    PyObject *t = a ? PyTuple_Pack(1, a) : NULL;
    Py_XDECREF(a);
    return t;
}

#define NONE() Py_NewRef(Py_None)

static PyObject *f_add(PcsNode *n, PyObject *g)
{
    if (!plain(n, 2))
        return Py_NewRef(Py_NotImplemented);
    return tuple2(needs(n, 0) ? Py_NewRef(g) : NONE(), needs(n, 1) ? Py_NewRef(g) : NONE());
}

static PyObject *f_sub(PcsNode *n, PyObject *g)
{
    if (!plain(n, 2))
        return Py_NewRef(Py_NotImplemented);
    return tuple2(needs(n, 0) ? Py_NewRef(g) : NONE(), needs(n, 1) ? PyNumber_Negative(g) : NONE());
}

static PyObject *f_mul(PcsNode *n, PyObject *g)
{
    if (!plain(n, 2))
        return Py_NewRef(Py_NotImplemented);
    PyObject *a = operand(n, 0), *b = operand(n, 1);
    if ((needs(n, 0) && !b) || (needs(n, 1) && !a))
        return Py_NewRef(Py_NotImplemented);
    return tuple2(needs(n, 0) ? PyNumber_Multiply(g, b) : NONE(),
                  needs(n, 1) ? PyNumber_Multiply(g, a) : NONE());
}

static PyObject *f_div(PcsNode *n, PyObject *g)
{
    if (!plain(n, 2))
        return Py_NewRef(Py_NotImplemented);
    PyObject *a = operand(n, 0), *b = operand(n, 1);
    if (!b || (needs(n, 1) && !a))
        return Py_NewRef(Py_NotImplemented);
    PyObject *ga = needs(n, 0) ? PyNumber_TrueDivide(g, b) : NONE(), *gb = NONE();
    if (ga && needs(n, 1)) { /* -g * ((a / b) / b), as torch rounds it */
        Py_DECREF(gb);
        PyObject *q = PyNumber_TrueDivide(a, b);
        PyObject *q2 = q ? PyNumber_TrueDivide(q, b) : NULL;
        PyObject *p = q2 ? PyNumber_Multiply(g, q2) : NULL;
        gb = p ? PyNumber_Negative(p) : NULL;
        Py_XDECREF(q);
        Py_XDECREF(q2);
        Py_XDECREF(p);
    }
    return tuple2(ga, gb);
}

static PyObject *f_neg(PcsNode *n, PyObject *g)
{
    if (!plain(n, 1))
        return Py_NewRef(Py_NotImplemented);
    return tuple1(PyNumber_Negative(g));
}

/* The method names the C twins call, made once (these run per node). */
enum { M_EXPAND, M_T, M_MM, M_RESHAPE, M_COUNT };
static const char *const method_names[M_COUNT] = {"expand", "t", "mm", "reshape"};
static PyObject *method_strs[M_COUNT];

/* self.<method>(arg1) (arg1 may be NULL), through the op wrappers, so the
 * call records under create_graph. */
static PyObject *method(PyObject *self, int which, PyObject *arg1)
{
    if (!method_strs[which] && !(method_strs[which] = PyUnicode_InternFromString(method_names[which])))
        return NULL;
    PyObject *args[2] = {self, arg1};
    return PyObject_VectorcallMethod(method_strs[which], args, arg1 ? 2 : 1, NULL);
}

static PyObject *input_shape(PcsNode *n, int i)
{
    const pcs_tmeta *m = &n->in_meta[n->amap[i].flat];
    return pcs_size_new(m->ndim, m->sizes);
}

static PyObject *f_sum(PcsNode *n, PyObject *g) /* the full sum: g expanded back */
{
    if (!plain(n, 1) || n->amap[0].flat < 0)
        return Py_NewRef(Py_NotImplemented);
    PyObject *shape = input_shape(n, 0);
    PyObject *r = shape ? method(g, M_EXPAND, shape) : NULL;
    Py_XDECREF(shape);
    return tuple1(r);
}

static PyObject *f_relu(PcsNode *n, PyObject *g) /* 0 where result <= 0, else g: one pass */
{
    /* create_graph: the Python formula, whose where() is differentiable */
    if (!plain(n, 1) || pcs_grad_enabled())
        return Py_NewRef(Py_NotImplemented);
    PyObject *res = PyObject_GetAttrString((PyObject *)n, "result");
    if (res == Py_None) {
        Py_DECREF(res);
        return Py_NewRef(Py_NotImplemented);
    }
    static PyObject *mod = NULL;
    PyObject *fn = res ? pcs_py_attr(&mod, "pycuda_sem._C", "_threshold_backward") : NULL;
    PyObject *args[2] = {g, res};
    PyObject *r = fn ? PyObject_Vectorcall(fn, args, 2, NULL) : NULL;
    Py_XDECREF(res);
    return tuple1(r);
}

static PyObject *f_mm(PcsNode *n, PyObject *g) /* (g @ b.T, a.T @ g) */
{
    if (!plain(n, 2))
        return Py_NewRef(Py_NotImplemented);
    PyObject *a = operand(n, 0), *b = operand(n, 1); /* each kept for the other's gradient */
    if ((needs(n, 0) && !b) || (needs(n, 1) && !a))
        return Py_NewRef(Py_NotImplemented);
    PyObject *ga = NONE(), *gb = NONE();
    if (needs(n, 0)) {
        PyObject *bt = method(b, M_T, NULL);
        Py_SETREF(ga, bt ? method(g, M_MM, bt) : NULL);
        Py_XDECREF(bt);
    }
    if (ga && needs(n, 1)) {
        PyObject *at = method(a, M_T, NULL);
        Py_SETREF(gb, at ? method(at, M_MM, g) : NULL);
        Py_XDECREF(at);
    }
    return tuple2(ga, gb);
}

static PyObject *f_t(PcsNode *n, PyObject *g)
{
    if (!plain(n, 1))
        return Py_NewRef(Py_NotImplemented);
    return tuple1(method(g, M_T, NULL));
}

static PyObject *f_reshape(PcsNode *n, PyObject *g) /* view/reshape: back to the input's shape */
{
    if (n->n_args < 1 || n->amap[0].flat < 0 || (n->kwargs && PyDict_GET_SIZE(n->kwargs)) ||
        pcs_is_complex(n->in_meta[0].dtype))
        return Py_NewRef(Py_NotImplemented);
    for (int i = 1; i < n->n_args; i++) { /* view(dtype) reinterprets: the Python formula */
        PyObject *a = arg(n, i);
        if (!PyLong_Check(a) && !PyTuple_Check(a) && !PyList_Check(a))
            return Py_NewRef(Py_NotImplemented);
    }
    PyObject *shape = input_shape(n, 0);
    PyObject *r = shape ? method(g, M_RESHAPE, shape) : NULL;
    Py_XDECREF(shape);
    return tuple1(r);
}

typedef struct {
    const char *name;
    pcs_cformula fn;
} entry;

static const entry table[] = {
    {"add", f_add}, {"add_", f_add}, {"sub", f_sub}, {"sub_", f_sub}, {"subtract", f_sub},
    {"mul", f_mul}, {"mul_", f_mul}, {"multiply", f_mul}, {"div", f_div}, {"div_", f_div},
    {"true_divide", f_div}, {"divide", f_div}, {"neg", f_neg}, {"negative", f_neg},
    {"sum", f_sum}, {"relu", f_relu}, {"relu_", f_relu}, {"mm", f_mm}, {"t", f_t},
    {"view", f_reshape}, {"reshape", f_reshape}, {NULL, NULL},
};

pcs_cformula pcs_ag_cformula(const char *name)
{
    for (int i = 0; table[i].name; i++)
        if (!strcmp(table[i].name, name))
            return table[i].fn;
    return NULL;
}
