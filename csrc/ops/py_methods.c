/* py_methods.c: Tensor methods whose op is written in Python.
 *
 * The Tensor type is immutable (a static type), so methods cannot be added
 * from Python; ops that torch (or this project) writes as compositions in
 * Python, off the hot path (pycuda_sem/_math.py: outer, cross, dist, trace,
 * isclose, allclose, equal, broadcast_to, addcmul, addcdiv; _math_elementwise.py,
 * _math_reduce.py, _math_shape.py, _sampling.py, _dtype_info.py, special.py,
 * _linalg_torch.py, _math_more.py, _math_linear.py, _tensor_more.py,
 * _scatter_more.py, _tensor_set.py, utils/dlpack.py, _misc_api.py), get their method here: x.f(*a, **k) calls the module's
 * f(x, *a, **k). A few properties (H, mH, layout) are written there too:
 * x.H calls the module's _prop_H(x). */
#include "ops/ops.h"

#include <string.h>

/* The modules that hold the Python ops, in the order of the M_* codes. */
enum {
    M_MATH, M_ELEMENTWISE, M_REDUCE, M_SHAPE, M_SAMPLING, M_DTYPE, M_SPECIAL, M_LINALG,
    M_MORE, M_LINEAR, M_TENSOR, M_SCATTER, M_SIGNAL, M_SET, M_DLPACK, M_MISC, M_COUNT
};
static const char *const module_names[M_COUNT] = {
    "pycuda_sem._math", "pycuda_sem._math_elementwise", "pycuda_sem._math_reduce",
    "pycuda_sem._math_shape", "pycuda_sem._sampling", "pycuda_sem._dtype_info", "pycuda_sem.special",
    "pycuda_sem._linalg_torch", "pycuda_sem._math_more", "pycuda_sem._math_linear",
    "pycuda_sem._tensor_more", "pycuda_sem._scatter_more", "pycuda_sem._math_signal",
    "pycuda_sem._tensor_set", "pycuda_sem.utils.dlpack", "pycuda_sem._misc_api",
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
    X(polygamma, M_SPECIAL, "polygamma(n)\n\nThe n-th derivative of digamma (any n >= 0).")      \
    X(igamma, M_SPECIAL, "igamma(other)\n\nRegularised lower incomplete gamma P(self, other).")   \
    X(igamma_, M_SPECIAL, "igamma_(other)\n\nIn-place igamma.")                                   \
    X(igammac, M_SPECIAL, "igammac(other)\n\nRegularised upper incomplete gamma Q(self, other).") \
    X(igammac_, M_SPECIAL, "igammac_(other)\n\nIn-place igammac.")                                \
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
    X(matrix_exp, M_LINALG, "matrix_exp()\n\nThe matrix exponential.") \
    X(acosh, M_MORE, "acosh()\n\nThe inverse hyperbolic cosine.") \
    X(acosh_, M_MORE, "acosh_()\n\nIn-place acosh.") \
    X(arccosh, M_MORE, "arccosh()\n\nAlias of acosh().") \
    X(arccosh_, M_MORE, "arccosh_()\n\nAlias of acosh_().") \
    X(asinh, M_MORE, "asinh()\n\nThe inverse hyperbolic sine.") \
    X(asinh_, M_MORE, "asinh_()\n\nIn-place asinh.") \
    X(arcsinh, M_MORE, "arcsinh()\n\nAlias of asinh().") \
    X(arcsinh_, M_MORE, "arcsinh_()\n\nAlias of asinh_().") \
    X(atanh, M_MORE, "atanh()\n\nThe inverse hyperbolic tangent.") \
    X(atanh_, M_MORE, "atanh_()\n\nIn-place atanh.") \
    X(arctanh, M_MORE, "arctanh()\n\nAlias of atanh().") \
    X(arctanh_, M_MORE, "arctanh_()\n\nAlias of atanh_().") \
    X(fmax, M_MORE, "fmax(other)\n\nmaximum ignoring nan.") \
    X(fmin, M_MORE, "fmin(other)\n\nminimum ignoring nan.") \
    X(gcd, M_MORE, "gcd(other)\n\nGreatest common divisor (integers).") \
    X(gcd_, M_MORE, "gcd_(other)\n\nIn-place gcd.") \
    X(lcm, M_MORE, "lcm(other)\n\nLeast common multiple (integers).") \
    X(lcm_, M_MORE, "lcm_(other)\n\nIn-place lcm.") \
    X(ldexp, M_MORE, "ldexp(other)\n\nself * 2**other.") \
    X(ldexp_, M_MORE, "ldexp_(other)\n\nIn-place ldexp.") \
    X(frexp, M_MORE, "frexp()\n\n(mantissa, exponent), exact.") \
    X(nextafter, M_MORE, "nextafter(other)\n\nThe next float towards other.") \
    X(nextafter_, M_MORE, "nextafter_(other)\n\nIn-place nextafter.") \
    X(i0, M_MORE, "i0()\n\nModified Bessel function I0.") \
    X(i0_, M_MORE, "i0_()\n\nIn-place i0.") \
    X(angle, M_MORE, "angle()\n\nThe argument (0 or pi for reals).") \
    X(conj, M_MORE, "conj()\n\nThe conjugate (self for real dtypes).") \
    X(conj_physical, M_MORE, "conj_physical()\n\nThe conjugate, materialised.") \
    X(conj_physical_, M_MORE, "conj_physical_()\n\nIn-place conjugate.") \
    X(resolve_conj, M_MORE, "resolve_conj()\n\nself (no lazy conjugate bit).") \
    X(resolve_neg, M_MORE, "resolve_neg()\n\nself (no lazy negative bit).") \
    X(is_conj, M_MORE, "is_conj()\n\nFalse.") \
    X(is_neg, M_MORE, "is_neg()\n\nFalse.") \
    X(greater_, M_MORE, "greater_(other)\n\nAlias of gt_().") \
    X(greater_equal_, M_MORE, "greater_equal_(other)\n\nAlias of ge_().") \
    X(less_, M_MORE, "less_(other)\n\nAlias of lt_().") \
    X(less_equal_, M_MORE, "less_equal_(other)\n\nAlias of le_().") \
    X(not_equal_, M_MORE, "not_equal_(other)\n\nAlias of ne_().") \
    X(arctan2_, M_MORE, "arctan2_(other)\n\nAlias of atan2_().") \
    X(float_power_, M_MORE, "float_power_(exponent)\n\nIn-place float_power (self float64).") \
    X(heaviside_, M_MORE, "heaviside_(values)\n\nIn-place heaviside.") \
    X(polygamma_, M_MORE, "polygamma_(n)\n\nIn-place polygamma.") \
    X(mvlgamma_, M_MORE, "mvlgamma_(p)\n\nIn-place mvlgamma.") \
    X(addmv, M_LINEAR, "addmv(mat, vec, *, beta=1, alpha=1)\n\nbeta * self + alpha * mat @ vec.") \
    X(addmv_, M_LINEAR, "addmv_(mat, vec, *, beta=1, alpha=1)\n\nIn-place addmv.") \
    X(addr, M_LINEAR, "addr(vec1, vec2, *, beta=1, alpha=1)\n\nbeta * self + alpha * outer(vec1, vec2).") \
    X(addr_, M_LINEAR, "addr_(vec1, vec2, *, beta=1, alpha=1)\n\nIn-place addr.") \
    X(addbmm, M_LINEAR, "addbmm(batch1, batch2, *, beta=1, alpha=1)" \
      "\n\nbeta * self + alpha * sum of batch1[i] @ batch2[i].") \
    X(addbmm_, M_LINEAR, "addbmm_(batch1, batch2, *, beta=1, alpha=1)\n\nIn-place addbmm.") \
    X(addmm_, M_LINEAR, "addmm_(mat1, mat2, *, beta=1, alpha=1)\n\nIn-place addmm.") \
    X(baddbmm_, M_LINEAR, "baddbmm_(batch1, batch2, *, beta=1, alpha=1)\n\nIn-place baddbmm.") \
    X(vdot, M_LINEAR, "vdot(other)\n\nsum(conj(self) * other) of 1-D tensors.") \
    X(diagflat, M_LINEAR, "diagflat(offset=0)\n\nThe flattened self on a diagonal.") \
    X(renorm, M_LINEAR, "renorm(p, dim, maxnorm)\n\nSlices along dim scaled to norm <= maxnorm.") \
    X(renorm_, M_LINEAR, "renorm_(p, dim, maxnorm)\n\nIn-place renorm.") \
    X(hsplit, M_LINEAR, "hsplit(indices_or_sections)\n\ntensor_split along dim 1.") \
    X(vsplit, M_LINEAR, "vsplit(indices_or_sections)\n\ntensor_split along dim 0.") \
    X(dsplit, M_LINEAR, "dsplit(indices_or_sections)\n\ntensor_split along dim 2.") \
    X(narrow_copy, M_LINEAR, "narrow_copy(dim, start, length)\n\nnarrow(), copied.") \
    X(sum_to_size, M_LINEAR, "sum_to_size(*size)\n\nSummed down to size.") \
    X(slice_scatter, M_SCATTER, "slice_scatter(src, dim=0, start=None, end=None, step=1)" \
      "\n\nA copy with a slice set to src.") \
    X(select_scatter, M_SCATTER, "select_scatter(src, dim, index)" \
      "\n\nA copy with select(dim, index) set to src.") \
    X(diagonal_scatter, M_SCATTER, "diagonal_scatter(src, offset=0, dim1=0, dim2=1)" \
      "\n\nA copy with a diagonal set to src.") \
    X(as_strided_scatter, M_SCATTER, "as_strided_scatter(src, size, stride, storage_offset=None)" \
      "\n\nA copy with a strided view set to src.") \
    X(fill_diagonal_, M_SCATTER, "fill_diagonal_(fill_value, wrap=False)\n\nFill the main diagonal in place.") \
    X(put, M_SCATTER, "put(index, source, accumulate=False)\n\nA copy with source at flat positions.") \
    X(put_, M_SCATTER, "put_(index, source, accumulate=False)\n\nIn-place put.") \
    X(index_reduce, M_SCATTER, "index_reduce(dim, index, source, reduce, *, include_self=True)" \
      "\n\nprod/mean/amax/amin of slices.") \
    X(index_reduce_, M_SCATTER, "index_reduce_(dim, index, source, reduce, *, include_self=True)" \
      "\n\nIn-place index_reduce.") \
    X(to_dense, M_TENSOR, "to_dense(dtype=None)\n\nself: tensors are strided.") \
    X(storage, M_TENSOR, "storage()\n\nThe memory as a TypedStorage (deprecated: untyped_storage()).") \
    X(is_inference, M_TENSOR, "is_inference()\n\nFalse (no inference tensors here).") \
    X(dim_order, M_TENSOR, "dim_order()\n\nDims from outermost to innermost.") \
    X(const_data_ptr, M_TENSOR, "const_data_ptr()\n\ndata_ptr().") \
    X(new_empty_strided, M_TENSOR, "new_empty_strided(size, stride, *, dtype=None, device=None)" \
      "\n\nUninitialised, strided.") \
    X(prelu, M_TENSOR, "prelu(weight)\n\nF.prelu(self, weight).") \
    X(hardshrink, M_TENSOR, "hardshrink(lambd=0.5)\n\nF.hardshrink(self, lambd).") \
    X(log_normal_, M_TENSOR, "log_normal_(mean=1, std=2, *, generator=None)\n\nexp of normal draws.") \
    X(cauchy_, M_TENSOR, "cauchy_(median=0, sigma=1, *, generator=None)\n\nCauchy draws.") \
    X(geometric_, M_TENSOR, "geometric_(p, *, generator=None)\n\nGeometric draws (1, 2, ...).") \
    X(apply_, M_TENSOR, "apply_(callable)\n\nself[i] = callable(self[i]) (CPU).") \
    X(map_, M_TENSOR, "map_(tensor, callable)\n\nself[i] = callable(self[i], tensor[i]) (CPU).") \
    X(map2_, M_TENSOR, "map2_(x, y, callable)\n\nself[i] = callable(self[i], x[i], y[i]) (CPU).") \
    X(unsafe_chunk, M_TENSOR, "unsafe_chunk(chunks, dim=0)\n\nAlias of chunk().") \
    X(unsafe_split, M_TENSOR, "unsafe_split(split_size, dim=0)\n\nAlias of split().") \
    X(unsafe_split_with_sizes, M_TENSOR, "unsafe_split_with_sizes(split_sizes, dim=0)" \
      "\n\nAlias of split_with_sizes().") \
    X(histogram, M_REDUCE, "histogram(bins, *, range=None, weight=None, density=False)\n\n(hist, bin_edges).") \
    X(stft, M_SIGNAL, "stft(n_fft, hop_length=None, win_length=None, window=None, ...)" \
      "\n\ntorch.stft(self, ...).") \
    X(istft, M_SIGNAL, "istft(n_fft, hop_length=None, win_length=None, window=None, ...)" \
      "\n\ntorch.istft(self, ...).") \
    X(resize_, M_SET, "resize_(*sizes, memory_format=None)\n\nIn place: self gets sizes " \
      "(contiguous), its storage grown when needed.") \
    X(resize_as_, M_SET, "resize_as_(other, memory_format=None)\n\nresize_(other.size()).") \
    X(set_, M_SET, "set_(source=None, storage_offset=0, size=None, stride=None)" \
      "\n\nIn place: self views source's storage.") \
    X(is_set_to, M_SET, "is_set_to(tensor)\n\nTrue for the same storage, offset, sizes and strides.") \
    X(as_subclass, M_SET, "as_subclass(cls)\n\nself as an instance of cls (a Tensor subclass): " \
      "same memory, same autograd graph.") \
    X(__dlpack__, M_DLPACK, "__dlpack__(*, stream=-1, max_version=None, dl_device=None, copy=None)" \
      "\n\nA DLPack capsule sharing self's memory.") \
    X(__dlpack_device__, M_DLPACK, "__dlpack_device__()\n\n(DLDeviceType, device index).") \
    X(adjoint, M_MISC, "adjoint()\n\nThe conjugate transpose of the last two dims (a view).") \
    X(chalf, M_MISC, "chalf(memory_format=torch.preserve_format)\n\nNotImplementedError: no complex32.") \
    X(nonzero_static, M_MISC, "nonzero_static(*, size, fill_value=-1)\n\nnonzero() padded or cut to size rows.")

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

/* X(property name, module, docstring): the getter calls the module's
 * _prop_<name>(self). The autograd wrapper leaves these alone (they are not
 * in record.c's property_ops): the ops they are composed of record. */
#define PY_PROPERTIES(X)                                                                          \
    X(H, M_TENSOR, "The conjugate transpose of a matrix (0-D and 1-D: self).")                    \
    X(mH, M_TENSOR, "The conjugate transpose of the last two dims (a view for real dtypes).")     \
    X(layout, M_TENSOR, "The memory layout: always torch.strided.")

#define PYGETTER(name, mod, doc)                                                                  \
    static PyObject *g_##name(PyObject *self, void *c)                                            \
    {                                                                                             \
        PCS_UNUSED(c);                                                                            \
        return call_with_self(mod, "_prop_" #name, self, NULL, 0, NULL);                          \
    }
PY_PROPERTIES(PYGETTER)
#undef PYGETTER

#define PYGSENTRY(name, mod, doc) {#name, g_##name, NULL, doc, NULL},
PyGetSetDef pcs_ops_py_getset[] = {
    PY_PROPERTIES(PYGSENTRY)
    {NULL, NULL, NULL, NULL, NULL},
};
