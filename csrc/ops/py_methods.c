/* py_methods.c: Tensor methods whose op is written in Python.
 *
 * The Tensor type is immutable (a static type), so methods cannot be added
 * from Python; ops that torch (or this project) writes as compositions in
 * Python, off the hot path (pycuda_sem/_math.py: outer, cross, dist, trace,
 * isclose, allclose, equal, broadcast_to, addcmul, addcdiv; _math_elementwise.py,
 * _math_reduce.py, _math_shape.py, _sampling.py, _dtype_info.py, special.py,
 * _linalg_torch.py), get their
 * method here: x.f(*a, **k) calls the module's f(x, *a, **k). */
#include "ops/ops.h"

#include <string.h>

/* The modules that hold the Python ops, in the order of the M_* codes. */
enum { M_MATH, M_ELEMENTWISE, M_REDUCE, M_SHAPE, M_SAMPLING, M_DTYPE, M_SPECIAL, M_LINALG, M_COUNT };
static const char *const module_names[M_COUNT] = {
    "pycuda_sem._math", "pycuda_sem._math_elementwise", "pycuda_sem._math_reduce",
    "pycuda_sem._math_shape", "pycuda_sem._sampling", "pycuda_sem._dtype_info", "pycuda_sem.special",
    "pycuda_sem._linalg_torch",
};

static PyObject *call_with_self(int module, const char *name, PyObject *self, PyObject *const *args,
                                Py_ssize_t nargs, PyObject *kw)
{
    static PyObject *mods[M_COUNT];
    PyObject *fn = pcs_py_attr(&mods[module], module_names[module], name); /* borrowed */
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

/* X(method name, module, docstring): one line a method. */
#define PY_METHODS(X)                                                                             \
    X(outer, M_MATH, "outer(vec2)\n\nThe outer product with vec2 (both 1-D).")                    \
    X(ger, M_MATH, "ger(vec2)\n\nAlias of outer().")                                              \
    X(cross, M_MATH, "cross(other, dim=None)\n\nThe cross product of 3-vectors along dim.")       \
    X(dist, M_MATH, "dist(other, p=2)\n\nThe p-norm of self - other.")                            \
    X(trace, M_MATH, "trace()\n\nThe sum of the main diagonal of a matrix.")                      \
    X(isclose, M_MATH, "isclose(other, rtol=1e-05, atol=1e-08, equal_nan=False)\n\nElementwise "  \
                       "closeness, as torch.")                                                    \
    X(allclose, M_MATH, "allclose(other, rtol=1e-05, atol=1e-08, equal_nan=False)\n\nTrue when "  \
                        "isclose holds everywhere.")                                              \
    X(equal, M_MATH, "equal(other)\n\nTrue for the same size and the same elements.")             \
    X(broadcast_to, M_MATH, "broadcast_to(size)\n\nself expanded to size (a view).")              \
    X(addcmul, M_MATH, "addcmul(tensor1, tensor2, *, value=1)\n\nself + value * tensor1 * tensor2.") \
    X(addcdiv, M_MATH, "addcdiv(tensor1, tensor2, *, value=1)\n\nself + value * tensor1 / tensor2.") \
    X(addcmul_, M_MATH, "addcmul_(tensor1, tensor2, *, value=1)\n\nIn place: self += value * "     \
                        "tensor1 * tensor2.")                                                     \
    X(addcdiv_, M_MATH, "addcdiv_(tensor1, tensor2, *, value=1)\n\nIn place: self += value * "     \
                        "tensor1 / tensor2.")                                                     \
    X(clamp_min, M_ELEMENTWISE, "clamp_min(min)\n\nmax(self, min).")                              \
    X(clamp_max, M_ELEMENTWISE, "clamp_max(max)\n\nmin(self, max).")                              \
    X(clamp_min_, M_ELEMENTWISE, "clamp_min_(min)\n\nIn-place clamp_min.")                        \
    X(clamp_max_, M_ELEMENTWISE, "clamp_max_(max)\n\nIn-place clamp_max.")                        \
    X(logaddexp, M_ELEMENTWISE, "logaddexp(other)\n\nlog(exp(self) + exp(other)).")               \
    X(logaddexp2, M_ELEMENTWISE, "logaddexp2(other)\n\nlog2(2**self + 2**other).")                \
    X(xlogy, M_ELEMENTWISE, "xlogy(other)\n\nself * log(other), 0 where self is 0.")              \
    X(xlogy_, M_ELEMENTWISE, "xlogy_(other)\n\nIn-place xlogy.")                                  \
    X(logit, M_ELEMENTWISE, "logit(eps=None)\n\nlog(p / (1 - p)).")                               \
    X(logit_, M_ELEMENTWISE, "logit_(eps=None)\n\nIn-place logit.")                               \
    X(sinc, M_ELEMENTWISE, "sinc()\n\nsin(pi x) / (pi x).")                                       \
    X(sinc_, M_ELEMENTWISE, "sinc_()\n\nIn-place sinc.")                                          \
    X(float_power, M_ELEMENTWISE, "float_power(exponent)\n\npow in double precision.")            \
    X(hypot, M_ELEMENTWISE, "hypot(other)\n\nsqrt(self**2 + other**2).")                         \
    X(hypot_, M_ELEMENTWISE, "hypot_(other)\n\nIn-place hypot.")                                  \
    X(signbit, M_ELEMENTWISE, "signbit()\n\nTrue where the sign bit is set.")                     \
    X(copysign, M_ELEMENTWISE, "copysign(other)\n\n|self| with other's sign.")                    \
    X(copysign_, M_ELEMENTWISE, "copysign_(other)\n\nIn-place copysign.")                         \
    X(sgn, M_ELEMENTWISE, "sgn()\n\nsign, or z / |z| for complex.")                               \
    X(sgn_, M_ELEMENTWISE, "sgn_()\n\nIn-place sgn.")                                             \
    X(positive, M_ELEMENTWISE, "positive()\n\nself.")                                             \
    X(heaviside, M_ELEMENTWISE, "heaviside(values)\n\nThe Heaviside step with values at 0.")      \
    X(deg2rad, M_ELEMENTWISE, "deg2rad()\n\nDegrees to radians.")                                 \
    X(rad2deg, M_ELEMENTWISE, "rad2deg()\n\nRadians to degrees.")                                 \
    X(deg2rad_, M_ELEMENTWISE, "deg2rad_()\n\nIn-place deg2rad.")                                 \
    X(rad2deg_, M_ELEMENTWISE, "rad2deg_()\n\nIn-place rad2deg.")                                 \
    X(fmod, M_ELEMENTWISE, "fmod(other)\n\nThe remainder with the sign of self.")                 \
    X(fmod_, M_ELEMENTWISE, "fmod_(other)\n\nIn-place fmod.")                                     \
    X(isposinf, M_ELEMENTWISE, "isposinf()\n\nTrue at +inf.")                                     \
    X(isneginf, M_ELEMENTWISE, "isneginf()\n\nTrue at -inf.")                                     \
    X(isreal, M_ELEMENTWISE, "isreal()\n\nTrue where the imaginary part is 0.")                   \
    X(nansum, M_REDUCE, "nansum(dim=None, keepdim=False, *, dtype=None)\n\nsum with nan as 0.")   \
    X(nanmean, M_REDUCE, "nanmean(dim=None, keepdim=False, *, dtype=None)\n\nmean without nan.")  \
    X(aminmax, M_REDUCE, "aminmax(*, dim=None, keepdim=False)\n\n(min, max).")                    \
    X(quantile, M_REDUCE, "quantile(q, dim=None, keepdim=False, *, interpolation='linear')")      \
    X(nanquantile, M_REDUCE, "nanquantile(q, dim=None, keepdim=False, *, interpolation='linear')") \
    X(cov, M_REDUCE, "cov(*, correction=1, fweights=None, aweights=None)\n\nCovariance of rows.")  \
    X(corrcoef, M_REDUCE, "corrcoef()\n\nCorrelation coefficients of rows.")                      \
    X(ravel, M_SHAPE, "ravel()\n\nFlattened to 1-D.")                                             \
    X(unflatten, M_SHAPE, "unflatten(dim, sizes)\n\ndim split into sizes (a view).")              \
    X(unfold, M_SHAPE, "unfold(dimension, size, step)\n\nSliding windows as a new last dim.")     \
    X(split_with_sizes, M_SHAPE, "split_with_sizes(split_sizes, dim=0)\n\nViews of these sizes.") \
    X(rot90, M_SHAPE, "rot90(k=1, dims=(0, 1))\n\nRotated by 90 degrees k times.")                \
    X(diff, M_SHAPE, "diff(n=1, dim=-1, prepend=None, append=None)\n\nForward differences.")      \
    X(inner, M_SHAPE, "inner(other)\n\nSum of products over the last dims.")                      \
    X(kron, M_SHAPE, "kron(other)\n\nThe Kronecker product.")                                     \
    X(is_same_size, M_SHAPE, "is_same_size(other)\n\nWhether the shapes are equal.")              \
    X(is_nonzero, M_SHAPE, "is_nonzero()\n\nThe truth of a one-element tensor.")                  \
    X(bernoulli, M_SAMPLING, "bernoulli(p=None, *, generator=None)\n\n0/1 draws.")                \
    X(multinomial, M_SAMPLING, "multinomial(num_samples, replacement=False, *, generator=None)")   \
    X(is_signed, M_DTYPE, "is_signed()\n\nWhether the dtype is signed.")                          \
    X(polygamma, M_SPECIAL, "polygamma(n)\n\nThe n-th derivative of digamma (n = 0 or 1).")      \
    X(mvlgamma, M_SPECIAL, "mvlgamma(p)\n\nThe multivariate log-gamma of dimension p.")                \
    X(det, M_LINALG, "det()\n\nThe determinant of each square matrix.")                           \
    X(inverse, M_LINALG, "inverse()\n\nThe inverse of each square matrix.")                      \
    X(slogdet, M_LINALG, "slogdet()\n\n(sign, log|det|) of each square matrix.")                 \
    X(logdet, M_LINALG, "logdet()\n\nlog(det): nan for a negative determinant.")                 \
    X(pinverse, M_LINALG, "pinverse(rcond=1e-15)\n\nThe pseudo-inverse.")                        \
    X(matrix_power, M_LINALG, "matrix_power(n)\n\nThe n-th power of each square matrix.")        \
    X(cholesky, M_LINALG, "cholesky(upper=False)\n\nThe Cholesky factor.")                       \
    X(svd, M_LINALG, "svd(some=True, compute_uv=True)\n\n(U, S, V).")                            \
    X(qr, M_LINALG, "qr(some=True)\n\n(Q, R).")                                                    \
    X(lu, M_LINALG, "lu(pivot=True, get_infos=False)\n\n(LU, pivots[, infos]).")                  \
    X(lu_solve, M_LINALG, "lu_solve(LU_data, LU_pivots)\n\nSolve with a packed LU.")              \
    X(triangular_solve, M_LINALG, "triangular_solve(A, upper=True, transpose=False, "            \
                                  "unitriangular=False)\n\n(solution, cloned_coefficient).")      \
    X(cholesky_solve, M_LINALG, "cholesky_solve(L, upper=False)\n\nSolve with a Cholesky factor.") \
    X(cholesky_inverse, M_LINALG, "cholesky_inverse(upper=False)\n\nThe inverse from L.")        \
    X(matrix_exp, M_LINALG, "matrix_exp()\n\nThe matrix exponential.")

#define PYMETHOD(name, mod, doc)                                                                  \
    static PyObject *m_##name(PyObject *self, PyObject *const *a, Py_ssize_t n, PyObject *kw)    \
    {                                                                                             \
        return call_with_self(mod, #name, self, a, n, kw);                                        \
    }
PY_METHODS(PYMETHOD)
#undef PYMETHOD

#define FK (METH_FASTCALL | METH_KEYWORDS)
#define FN(f) (PyCFunction)(void (*)(void))(f)
#define PYENTRY(name, mod, doc) {#name, FN(m_##name), FK, doc},

PyMethodDef pcs_ops_py_tmethods[] = {
    PY_METHODS(PYENTRY)
    {NULL, NULL, 0, NULL},
};
