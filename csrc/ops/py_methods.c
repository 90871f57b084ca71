/* py_methods.c: Tensor methods whose op is written in Python.
 *
 * The Tensor type is immutable (a static type), so methods cannot be added
 * from Python; ops that torch (or this project) writes as compositions in
 * Python, off the hot path (pycuda_sem/_math.py: outer, cross, dist, trace,
 * isclose, allclose, equal, broadcast_to, addcmul, addcdiv), get their method here: x.f(*a,
 * **k) calls pycuda_sem._math.f(x, *a, **k). */
#include "ops/ops.h"

#include <string.h>

/* pycuda_sem._math.name (borrowed: the module keeps it), or NULL with exception. */
static PyObject *math_fn(const char *name)
{
    static PyObject *mod = NULL;
    return pcs_py_attr(&mod, "pycuda_sem._math", name);
}

static PyObject *call_with_self(const char *name, PyObject *self, PyObject *const *args,
                                Py_ssize_t nargs, PyObject *kw)
{
    PyObject *fn = math_fn(name);
    if (!fn)
        return NULL;
    Py_ssize_t nkw = kw ? PyTuple_GET_SIZE(kw) : 0, total = 1 + nargs + nkw;
    PyObject *small[8], **all = total <= 8 ? small : PyMem_Malloc(total * sizeof(PyObject *));
    if (!all)
        return PyErr_NoMemory();
    all[0] = self;
    if (nargs + nkw)
        memcpy(all + 1, args, (size_t)(nargs + nkw) * sizeof(PyObject *));
    PyObject *r = PyObject_Vectorcall(fn, all, (size_t)(1 + nargs), kw);
    if (all != small)
        PyMem_Free(all);
    return r;
}

#define PYMETHOD(name)                                                                            \
    static PyObject *m_##name(PyObject *self, PyObject *const *a, Py_ssize_t n, PyObject *kw)    \
    {                                                                                             \
        return call_with_self(#name, self, a, n, kw);                                             \
    }
PYMETHOD(outer)
PYMETHOD(ger)
PYMETHOD(cross)
PYMETHOD(dist)
PYMETHOD(trace)
PYMETHOD(isclose)
PYMETHOD(allclose)
PYMETHOD(equal)
PYMETHOD(broadcast_to)
PYMETHOD(addcmul)
PYMETHOD(addcdiv)
PYMETHOD(addcmul_)
PYMETHOD(addcdiv_)
#undef PYMETHOD

#define FK (METH_FASTCALL | METH_KEYWORDS)
#define FN(f) (PyCFunction)(void (*)(void))(f)

PyMethodDef pcs_ops_py_tmethods[] = {
    {"outer", FN(m_outer), FK, "outer(vec2)\n\nThe outer product with vec2 (both 1-D)."},
    {"ger", FN(m_ger), FK, "ger(vec2)\n\nAlias of outer()."},
    {"cross", FN(m_cross), FK, "cross(other, dim=None)\n\nThe cross product of 3-vectors along dim."},
    {"dist", FN(m_dist), FK, "dist(other, p=2)\n\nThe p-norm of self - other."},
    {"trace", FN(m_trace), FK, "trace()\n\nThe sum of the main diagonal of a matrix."},
    {"isclose", FN(m_isclose), FK,
     "isclose(other, rtol=1e-05, atol=1e-08, equal_nan=False)\n\nElementwise closeness, as torch."},
    {"allclose", FN(m_allclose), FK,
     "allclose(other, rtol=1e-05, atol=1e-08, equal_nan=False)\n\nTrue when isclose holds everywhere."},
    {"equal", FN(m_equal), FK, "equal(other)\n\nTrue for the same size and the same elements."},
    {"broadcast_to", FN(m_broadcast_to), FK, "broadcast_to(size)\n\nself expanded to size (a view)."},
    {"addcmul", FN(m_addcmul), FK, "addcmul(tensor1, tensor2, *, value=1)\n\nself + value * tensor1 * tensor2."},
    {"addcdiv", FN(m_addcdiv), FK, "addcdiv(tensor1, tensor2, *, value=1)\n\nself + value * tensor1 / tensor2."},
    {"addcmul_", FN(m_addcmul_), FK, "addcmul_(tensor1, tensor2, *, value=1)\n\nIn place: self += value * tensor1 * tensor2."},
    {"addcdiv_", FN(m_addcdiv_), FK, "addcdiv_(tensor1, tensor2, *, value=1)\n\nIn place: self += value * tensor1 / tensor2."},
    {NULL, NULL, 0, NULL},
};
