"""The rest of torch.distributions.transforms (re-exported by transforms.py):
ReshapeTransform, SoftplusTransform, StickBreakingTransform,
CorrCholeskyTransform, LowerCholeskyTransform, PositiveDefiniteTransform,
CatTransform, StackTransform and CumulativeDistributionTransform. Like the
others they are composed from differentiable tensor ops, so they run on the
CPU and CUDA alike and gradients flow through them."""
import math

from .. import _C
from .._dtype_info import finfo
from ..nn import functional as F
from . import constraints
from .transforms import Transform, _ParameterFree, _clipped_sigmoid, _sum_rightmost
from .utils import tril_matrix_to_vec, vec_to_tril_matrix

__all__ = ["CatTransform", "CorrCholeskyTransform", "CumulativeDistributionTransform", "LowerCholeskyTransform",
           "PositiveDefiniteTransform", "ReshapeTransform", "SoftplusTransform", "StackTransform",
           "StickBreakingTransform"]


def _pad_last(x, before, after, value=1.0):
    """x with `before`/`after` entries of value added at the ends of its last dim."""
    parts = []
    lead = tuple(x.shape[:-1])
    if before:
        parts.append(_C.full(lead + (before,), value, dtype=x.dtype, device=x.device))
    parts.append(x)
    if after:
        parts.append(_C.full(lead + (after,), value, dtype=x.dtype, device=x.device))
    return _C.cat(parts, -1)


def _stick_offsets(n, like):
    """log(n), log(n - 1), ..., log(1): the shifts that make a zero input map
    to the centre of the simplex."""
    return _C.arange(n, 0, -1, dtype=like.dtype, device=like.device).log()


class ReshapeTransform(Transform):
    """The rightmost in_shape dims reshaped to out_shape (unit Jacobian)."""
    bijective = True

    def __init__(self, in_shape, out_shape, cache_size=0):
        self.in_shape = _C.Size(tuple(in_shape))
        self.out_shape = _C.Size(tuple(out_shape))
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x):
        batch = tuple(x.shape[:x.dim() - len(self.in_shape)])
        return x.reshape(batch + tuple(self.out_shape))

    def _inverse(self, y):
        batch = tuple(y.shape[:y.dim() - len(self.out_shape)])
        return y.reshape(batch + tuple(self.in_shape))

    def log_abs_det_jacobian(self, x, y):
        batch = tuple(x.shape[:x.dim() - len(self.in_shape)])
        return x.new_zeros(batch)

    @staticmethod
    def _swap(shape, have, want):
        shape = tuple(shape)
        if len(shape) < len(have):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(have)
        if shape[cut:] != tuple(have):
            raise ValueError("Shape mismatch: expected %s but got %s" % (_C.Size(shape[cut:]), have))
        return _C.Size(shape[:cut] + tuple(want))

    def forward_shape(self, shape):
        return self._swap(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        return self._swap(shape, self.out_shape, self.in_shape)


class SoftplusTransform(_ParameterFree):
    """y = log(1 + exp(x)) (linear above x = 20, as F.softplus)."""
    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def _call(self, x):
        return F.softplus(x)

    def _inverse(self, y):
        # log(e^y - 1) = y + log(1 - e^-y)
        return (-(-y).expm1()).log() + y

    def log_abs_det_jacobian(self, x, y):
        return -F.softplus(-x)


class StickBreakingTransform(_ParameterFree):
    """R^(K-1) onto the K-simplex: entry i takes the fraction
    sigmoid(x_i - log(K - 1 - i)) of the stick left by the entries before it;
    the last entry takes the rest."""
    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def _call(self, x):
        z = _clipped_sigmoid(x - _stick_offsets(x.shape[-1], x))
        left = (1 - z).cumprod(-1)  # the stick left after each break
        return _pad_last(z, 0, 1) * _pad_last(left, 1, 0)

    def _inverse(self, y):
        head = y[..., :-1]
        left = (1 - head.cumsum(-1)).clamp(min=finfo(y.dtype).tiny)
        return head.log() - left.log() + _stick_offsets(head.shape[-1], y)

    def log_abs_det_jacobian(self, x, y):
        # dy_i/dx_i = z_i (1 - z_i) * (stick before i) and the Jacobian is
        # triangular; with 1 - sigmoid(t) = exp(-t) sigmoid(t) the log of its
        # diagonal is -t + log sigmoid(t) + log y_i
        t = x - _stick_offsets(x.shape[-1], x)
        return (-t + F.logsigmoid(t) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return _C.Size(tuple(shape[:-1]) + (shape[-1] + 1,))

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return _C.Size(tuple(shape[:-1]) + (shape[-1] - 1,))


class CorrCholeskyTransform(_ParameterFree):
    """A vector of D(D-1)/2 reals onto the Cholesky factor of a D x D
    correlation matrix (lower triangular, positive diagonal, unit rows):
    tanh maps each entry into (-1, 1), row i of the strict lower triangle
    holds those partial correlations, and a signed stick-breaking turns each
    row into a unit vector (y_ij = r_ij sqrt(1 - sum_{k<j} y_ik^2 ...), so the
    diagonal takes what is left)."""
    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x):
        eps = finfo(x.dtype).eps
        r = vec_to_tril_matrix(x.tanh().clamp(min=-1 + eps, max=1 - eps), diag=-1)
        # the fraction of the row's unit length left before column j
        left = (1 - r.pow(2)).sqrt().cumprod(-1)
        eye = _C.eye(r.shape[-1], dtype=r.dtype, device=r.device)
        return (r + eye) * _pad_last(left[..., :-1], 1, 0)

    def _inverse(self, y):
        left = 1 - (y * y).cumsum(-1)
        left_before = _pad_last(left[..., :-1], 1, 0)
        t = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(left_before, diag=-1).sqrt()
        return 0.5 * (t.log1p() - (-t).log1p())  # atanh

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        # of x and the flattened strict lower triangle of y: the stick-breaking
        # part is 1/2 sum log(1 - sum_{k<j} y_ik^2) over the strict lower
        # triangle (diag=-2 reads the running sums one column to the left), the
        # tanh part sum log(1 - tanh(x)^2)
        left = 1 - (y * y).cumsum(-1)
        stick = 0.5 * tril_matrix_to_vec(left, diag=-2).log().sum(-1)
        tanh = (2.0 * (math.log(2.0) - x - F.softplus(-2.0 * x))).sum(-1)
        return stick + tanh

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return _C.Size(tuple(shape[:-1]) + (d, d))

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return _C.Size(tuple(shape[:-2]) + (d * (d - 1) // 2,))


class LowerCholeskyTransform(_ParameterFree):
    """Square matrices onto lower triangular ones with a positive diagonal:
    the strict lower triangle kept, the diagonal exponentiated (not a
    bijection of the whole matrix space, so no log_abs_det_jacobian)."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(_ParameterFree):
    """Square matrices onto positive definite ones: L L^T with L from LowerCholeskyTransform."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def _call(self, x):
        L = LowerCholeskyTransform()(x)
        return L @ L.mT

    def _inverse(self, y):
        from .. import linalg
        return LowerCholeskyTransform().inv(linalg.cholesky(y))


def _check_dim(what, t, dim, size, size_name):
    if not -t.dim() <= dim < t.dim():
        raise AssertionError("dim %d out of range for %s with %d dimensions" % (dim, what, t.dim()))
    if t.size(dim) != size:
        raise AssertionError("%s.size(%d) = %d must equal %s %d" % (what, dim, t.size(dim), size_name, size))


class CatTransform(Transform):
    """tseq[i] applied to the i-th block (lengths[i] long) of dim, as torch.cat puts blocks together."""

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        tseq = list(tseq)
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = tseq
        self.lengths = [1] * len(tseq) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError("lengths (%d) must match transforms (%d)"
                                 % (len(self.lengths), len(self.transforms)))
        self.dim = dim

    @property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self):
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _blocks(self, *tensors):
        start = 0
        for t, n in zip(self.transforms, self.lengths):
            yield (t,) + tuple(v.narrow(self.dim, start, n) for v in tensors)
            start += n

    def _call(self, x):
        _check_dim("x", x, self.dim, self.length, "length")
        return _C.cat([t(xs) for t, xs in self._blocks(x)], self.dim)

    def _inverse(self, y):
        _check_dim("y", y, self.dim, self.length, "length")
        return _C.cat([t.inv(ys) for t, ys in self._blocks(y)], self.dim)

    def log_abs_det_jacobian(self, x, y):
        _check_dim("x", x, self.dim, self.length, "length")
        _check_dim("y", y, self.dim, self.length, "length")
        event_dim = self.event_dim
        terms = []
        for t, xs, ys in self._blocks(x, y):
            term = t.log_abs_det_jacobian(xs, ys)
            if t.event_dim < event_dim:
                term = _sum_rightmost(term, event_dim - t.event_dim)
            terms.append(term)
        # dim inside the batch dims: the blocks' terms are concatenated there;
        # dim inside the event dims: they were summed over it, so add them
        dim = self.dim - x.dim() if self.dim >= 0 else self.dim
        dim = dim + event_dim
        if dim < 0:
            return _C.cat(terms, dim)
        total = terms[0]
        for term in terms[1:]:
            total = total + term
        return total

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """tseq[i] applied to the i-th slice of dim, as torch.stack puts slices together."""

    def __init__(self, tseq, dim=0, cache_size=0):
        tseq = list(tseq)
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = tseq
        self.dim = dim

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slices(self, z):
        return [z.select(self.dim, i) for i in range(z.size(self.dim))]

    def _call(self, x):
        _check_dim("x", x, self.dim, len(self.transforms), "len(transforms)")
        return _C.stack([t(xs) for xs, t in zip(self._slices(x), self.transforms)], self.dim)

    def _inverse(self, y):
        _check_dim("y", y, self.dim, len(self.transforms), "len(transforms)")
        return _C.stack([t.inv(ys) for ys, t in zip(self._slices(y), self.transforms)], self.dim)

    def log_abs_det_jacobian(self, x, y):
        _check_dim("x", x, self.dim, len(self.transforms), "len(transforms)")
        _check_dim("y", y, self.dim, len(self.transforms), "len(transforms)")
        terms = [t.log_abs_det_jacobian(xs, ys)
                 for xs, ys, t in zip(self._slices(x), self._slices(y), self.transforms)]
        return _C.stack(terms, self.dim)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


class CumulativeDistributionTransform(Transform):
    """y = distribution.cdf(x), onto [0, 1]; the inverse is icdf and the
    log-Jacobian the log density (a copula building block)."""
    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)
