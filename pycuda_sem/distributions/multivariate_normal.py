"""MultivariateNormal (loc with one of covariance_matrix, precision_matrix,
scale_tril) and LowRankMultivariateNormal (covariance W W^T + diag(D)).
Everything goes through a lower Cholesky factor L: draws loc + L eps,
log_prob by the triangular solve L^-1 (x - loc), as torch does."""
import math

from .. import _C
from .. import linalg
from .._math import broadcast_shapes, broadcast_tensors
from . import constraints
from .distribution import Distribution
from .utils import lazy_property

_LOG_2PI = math.log(2 * math.pi)


def _batch_mv(bmat, bvec):
    return (bmat @ bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL, bx):
    """x^T (L L^T)^-1 x over broadcast batches, by one triangular solve."""
    n = bx.size(-1)
    shape = broadcast_shapes(tuple(bL.shape[:-2]), tuple(bx.shape[:-1]))
    L = bL.expand(tuple(shape) + (n, n))
    x = bx.expand(tuple(shape) + (n,))
    sol = linalg.solve_triangular(L, x.unsqueeze(-1), upper=False).squeeze(-1)
    return sol.pow(2).sum(-1)


def _precision_to_scale_tril(P):
    # the Cholesky factor of P^-1 from that of P with its rows and columns reversed
    Lf = linalg.cholesky(P.flip((-2, -1)))
    L_inv = Lf.flip((-2, -1)).transpose(-2, -1)
    Id = _C.eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return linalg.solve_triangular(L_inv, Id.expand(tuple(L_inv.shape)), upper=False)


def _scale_tril_of(scale_tril, covariance_matrix, precision_matrix):
    """The Cholesky factor of the covariance, from whichever of the three
    parametrisations was given (MultivariateNormal and Wishart alike)."""
    if scale_tril is not None:
        return scale_tril
    if covariance_matrix is not None:
        return linalg.cholesky(covariance_matrix)
    return _precision_to_scale_tril(precision_matrix)


class MultivariateNormal(Distribution):
    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True
    _expand_skip = ("_unbroadcasted_scale_tril",)

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        given = next(m for m in (scale_tril, covariance_matrix, precision_matrix) if m is not None)
        name = ("scale_tril" if scale_tril is not None else "covariance_matrix" if covariance_matrix is not None
                else "precision_matrix")
        if given.dim() < 2:
            raise ValueError("%s matrix must be at least two-dimensional, with optional leading batch "
                             "dimensions" % name)
        batch_shape = tuple(broadcast_shapes(tuple(given.shape[:-2]), tuple(loc.shape[:-1])))
        setattr(self, name, given.expand(batch_shape + (-1, -1)))
        self.loc = loc.expand(batch_shape + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args)
        self._unbroadcasted_scale_tril = _scale_tril_of(scale_tril, covariance_matrix, precision_matrix)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(tuple(self._batch_shape) + tuple(self._event_shape) * 2)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(tuple(self._batch_shape) + tuple(self._event_shape) * 2)

    @lazy_property
    def precision_matrix(self):
        from .._linalg_lu import cholesky_inverse
        return cholesky_inverse(self._unbroadcasted_scale_tril).expand(
            tuple(self._batch_shape) + tuple(self._event_shape) * 2)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
            tuple(self._batch_shape) + tuple(self._event_shape))

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        eps = _C.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return -0.5 * (self._event_shape[0] * _LOG_2PI + M) - half_log_det

    def entropy(self):
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        H = 0.5 * self._event_shape[0] * (1.0 + _LOG_2PI) + half_log_det
        return H if len(self._batch_shape) == 0 else H.expand(tuple(self._batch_shape))


def _batch_capacitance_tril(W, D):
    """The Cholesky factor of I + W^T D^-1 W."""
    m = W.size(-1)
    Wt_Dinv = W.mT / D.unsqueeze(-2)
    K = Wt_Dinv @ W + _C.eye(m, dtype=W.dtype, device=W.device)
    return linalg.cholesky(K)


def _batch_lowrank_logdet(W, D, capacitance_tril):
    return 2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + D.log().sum(-1)


def _batch_lowrank_mahalanobis(W, D, x, capacitance_tril):
    # Woodbury: x^T (W W^T + D)^-1 x = x^T D^-1 x - |C^-1 W^T D^-1 x|^2
    Wt_Dinv = W.mT / D.unsqueeze(-2)
    Wt_Dinv_x = _batch_mv(Wt_Dinv, x)
    mahalanobis_term1 = (x.pow(2) / D).sum(-1)
    mahalanobis_term2 = _batch_mahalanobis(capacitance_tril, Wt_Dinv_x)
    return mahalanobis_term1 - mahalanobis_term2


class LowRankMultivariateNormal(Distribution):
    arg_constraints = {"loc": constraints.real_vector, "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True
    _expand_skip = ("_unbroadcasted_cov_factor", "_unbroadcasted_cov_diag", "_capacitance_tril")

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = tuple(loc.shape[-1:])
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional leading batch dimensions")
        if tuple(cov_factor.shape[-2:-1]) != event_shape:
            raise ValueError("cov_factor must be a batch of matrices with shape %d x m" % event_shape[0])
        if tuple(cov_diag.shape[-1:]) != event_shape:
            raise ValueError("cov_diag must be a batch of vectors with shape %s" % (event_shape,))
        loc_ = loc.unsqueeze(-1)
        cov_diag_ = cov_diag.unsqueeze(-1)
        try:
            loc_, self.cov_factor, cov_diag_ = broadcast_tensors(loc_, cov_factor, cov_diag_)
        except RuntimeError as e:
            raise ValueError("Incompatible batch shapes: loc %s, cov_factor %s, cov_diag %s"
                             % (loc.shape, cov_factor.shape, cov_diag.shape)) from e
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        super().__init__(self.loc.shape[:-1], event_shape, validate_args)
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        return (self._unbroadcasted_cov_factor.pow(2).sum(-1) + self._unbroadcasted_cov_diag).expand(
            tuple(self._batch_shape) + tuple(self._event_shape))

    @lazy_property
    def scale_tril(self):
        n = self._event_shape[0]
        d_sqrt = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        Dinvsqrt_W = self._unbroadcasted_cov_factor / d_sqrt
        K = Dinvsqrt_W @ Dinvsqrt_W.mT + _C.eye(n, dtype=d_sqrt.dtype, device=d_sqrt.device)
        return (d_sqrt * linalg.cholesky(K)).expand(tuple(self._batch_shape) + (n, n))

    @lazy_property
    def covariance_matrix(self):
        W = self._unbroadcasted_cov_factor
        cov = W @ W.mT + self._unbroadcasted_cov_diag.diag_embed()
        return cov.expand(tuple(self._batch_shape) + tuple(self._event_shape) * 2)

    @lazy_property
    def precision_matrix(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        Wt_Dinv = W.mT / D.unsqueeze(-2)
        A = linalg.solve_triangular(self._capacitance_tril, Wt_Dinv, upper=False)
        prec = D.reciprocal().diag_embed() - A.mT @ A
        return prec.expand(tuple(self._batch_shape) + tuple(self._event_shape) * 2)

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        W = self._unbroadcasted_cov_factor
        eps_W = _C.randn(shape[:-1] + (W.shape[-1],), dtype=self.loc.dtype, device=self.loc.device)
        eps_D = _C.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(W, eps_W) + self._unbroadcasted_cov_diag.sqrt() * eps_D

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        M = _batch_lowrank_mahalanobis(W, D, diff, self._capacitance_tril)
        log_det = _batch_lowrank_logdet(W, D, self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * _LOG_2PI + log_det + M)

    def entropy(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        log_det = _batch_lowrank_logdet(W, D, self._capacitance_tril)
        H = 0.5 * (self._event_shape[0] * (1.0 + _LOG_2PI) + log_det)
        return H if len(self._batch_shape) == 0 else H.expand(tuple(self._batch_shape))
