"""Wishart(df, covariance_matrix= | precision_matrix= | scale_tril=): the
distribution of sum_{k<df} x_k x_k^T for x_k ~ N(0, Sigma) (any real
df > p - 1), over p x p positive definite matrices. Everything goes through
L, the lower Cholesky factor of Sigma, as in MultivariateNormal.

Draws: Bartlett's decomposition, X = L A A^T L^T with A lower triangular,
A_ii = sqrt(Chi2(df - i)) and standard normals below the diagonal;
reparameterised (the chi-square draws carry the implicit gradient in df).
When df is close to p - 1 a draw can come out singular: those entries are
drawn again, up to max_try_correction times, with a warning.

An ExponentialFamily (natural parameters -Sigma^-1 / 2 and (df - p - 1) / 2
of the statistic (X, log det X)), so KL between two Wisharts comes from the
Bregman divergence of its log normaliser."""
import math
import warnings

from .. import _C
from .. import linalg
from .._dtype_info import finfo
from .._linalg_lu import cholesky_solve
from .._math import broadcast_shapes
from . import constraints
from .exp_family import ExponentialFamily
from .gamma import Chi2
from .multivariate_normal import _scale_tril_of
from .utils import lazy_property

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x, p):
    """sum_{i<p} digamma(x - i / 2), the derivative of mvlgamma(x, p)."""
    if not bool(x.gt((p - 1) / 2).all()):
        raise ValueError("Wrong domain for multivariate digamma function.")
    halves = _C.arange(p, dtype=x.dtype, device=x.device) / 2
    return (x.unsqueeze(-1) - halves).digamma().sum(-1)


class Wishart(ExponentialFamily):
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0
    _expand_children = ("_dist_chi2",)
    _expand_skip = ("_unbroadcasted_scale_tril",)  # kept unbroadcast: every use broadcasts it

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        given = [(n, m) for n, m in (("covariance_matrix", covariance_matrix),
                                     ("precision_matrix", precision_matrix), ("scale_tril", scale_tril))
                 if m is not None]
        if len(given) != 1:
            # torch asserts this
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be "
                                 "specified.")
        name, param = given[0]
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        if isinstance(df, _C.Tensor):
            batch_shape = tuple(broadcast_shapes(tuple(param.shape[:-2]), tuple(df.shape)))
            self.df = df.expand(batch_shape)
        else:
            batch_shape = tuple(param.shape[:-2])
            self.df = _C.tensor(float(df), dtype=param.dtype, device=param.device)
        p = param.shape[-1]
        if bool(self.df.le(p - 1).any()):
            raise ValueError("Value of df={} expected to be greater than ndim - 1 = {}.".format(df, p - 1))
        setattr(self, name, param.expand(batch_shape + (-1, -1)))
        if bool(self.df.lt(p).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur for "
                          "ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch_shape, tuple(param.shape[-2:]), validate_args)
        self._unbroadcasted_scale_tril = _scale_tril_of(scale_tril, covariance_matrix, precision_matrix)
        # the chi-square degrees df - i of Bartlett's diagonal
        L = self._unbroadcasted_scale_tril
        steps = _C.arange(p, dtype=L.dtype, device=L.device)
        self._dist_chi2 = Chi2(df=self.df.unsqueeze(-1) - steps.expand(batch_shape + (-1,)))

    def _full(self, m):
        return m.expand(tuple(self._batch_shape) + tuple(self._event_shape))

    @lazy_property
    def scale_tril(self):
        return self._full(self._unbroadcasted_scale_tril)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return self._full(L @ L.mT)

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        eye = _C.eye(self._event_shape[-1], dtype=L.dtype, device=L.device)
        return self._full(cholesky_solve(eye, L))

    def _df_matrix(self, df):
        return df.reshape(tuple(self._batch_shape) + (1, 1))

    @property
    def mean(self):
        return self._df_matrix(self.df) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = factor.masked_fill(factor <= 0, math.nan)
        return self._df_matrix(factor) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        d = V.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix(self.df) * (V.pow(2) + d.unsqueeze(-1) * d.unsqueeze(-2))

    def _bartlett(self, sample_shape):
        p = self._event_shape[-1]
        diag = self._dist_chi2.rsample(sample_shape).sqrt().clamp(min=finfo(self.df.dtype).eps)
        lead = tuple(diag.shape[:-1])
        below = _C.randn(lead + (p, p), dtype=diag.dtype, device=diag.device).tril(-1)
        A = below + diag.diag_embed()
        chol = self._unbroadcasted_scale_tril @ A
        return chol @ chol.mT

    def rsample(self, sample_shape=(), max_try_correction=None):
        if max_try_correction is None:
            max_try_correction = 10
        if not isinstance(sample_shape, (tuple, list, _C.Size)):
            sample_shape = (sample_shape,)
        sample = self._bartlett(sample_shape)
        singular = ~self.support.check(sample)
        if bool(singular.any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                fresh = self._bartlett(sample_shape)
                sample = _C.where(singular.unsqueeze(-1).unsqueeze(-1), fresh, sample)
                singular = singular & ~self.support.check(fresh)
                if not bool(singular.any()):
                    break
        return sample

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        log_det_L = L.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        trace = cholesky_solve(value, L).diagonal(dim1=-2, dim2=-1).sum(-1)
        return (-nu * (p * _LOG_2 / 2 + log_det_L) - (nu / 2).mvlgamma(p=p)
                + (nu - p - 1) / 2 * linalg.slogdet(value).logabsdet - trace / 2)

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        log_det_L = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return ((p + 1) * (p * _LOG_2 / 2 + log_det_L) + (nu / 2).mvlgamma(p=p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p) + nu * p / 2)

    @property
    def _natural_params(self):
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        k = y + (p + 1) / 2
        return k * (-linalg.slogdet(-2 * x).logabsdet + _LOG_2 * p) + k.mvlgamma(p=p)
