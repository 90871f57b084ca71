"""LKJCholesky(dim, concentration=1.0): the LKJ distribution over the lower
Cholesky factors L of dim x dim correlation matrices M = L L^T, with density
proportional to det(M)^(eta - 1) (eta the concentration; eta = 1 is uniform
over correlation matrices).

Draws: the onion method (Lewandowski, Kurowicka and Joe, 2009, section 3.2),
vectorised over rows: row i is sqrt(y_i) times a uniform direction in the
first i coordinates, y_i ~ Beta(i / 2, eta + (dim - 2 - (i - 1)) / 2), and
the diagonal takes the rest of the unit length. Not reparameterised.

log_prob: as a density over the strict lower triangle of L, the correlation
density times the Jacobian of M -> L, prod_i L_ii^(dim - i), so
log p = sum_{i>=2} (2 (eta - 1) + dim - i) log L_ii - log c(eta), the
normaliser from the paper (page 1999) written with mvlgamma."""
import math

from .. import _C
from .._dtype_info import finfo
from . import constraints
from .distribution import Distribution
from .gamma import Beta
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky
    _expand_children = ("_beta",)

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError("Expected dim to be an integer greater than or equal to 2. Found dim={}.".format(dim))
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        c = self.concentration
        # the Beta of row i (0-based): concentration1 i / 2 (the squared length
        # of a row with i free coordinates; 1/2 for row 0, whose draw is unused),
        # concentration0 eta + (dim - 2) / 2 - (i - 1) / 2. (torch 2.x uses
        # i - 1/2 for concentration1, which is right for the second row only:
        # its later rows' correlations come out too large.)
        offset = _C.cat([c.new_zeros((1,)), _C.arange(dim - 1, dtype=c.dtype, device=c.device)])
        rows = _C.arange(dim, dtype=c.dtype, device=c.device).clamp(min=1)
        marginal = c + 0.5 * (dim - 2)
        self._beta = Beta(0.5 * rows, marginal.unsqueeze(-1) - 0.5 * offset)
        super().__init__(c.shape, (dim, dim), validate_args)

    def _sample(self, sample_shape=()):
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        shape = tuple(self._extended_shape(sample_shape))
        # a uniform direction for each row's strict lower part (row 0 has none)
        u = _C.randn(shape, dtype=y.dtype, device=y.device).tril(-1)
        norms = u.norm(dim=-1, keepdim=True)
        first_row = _C.arange(self.dim, device=y.device).eq(0).reshape(self.dim, 1)
        direction = _C.where(first_row, _C.zeros_like(u), u / _C.where(first_row, _C.ones_like(norms), norms))
        w = y.sqrt() * direction
        diag = (1 - w.pow(2).sum(-1)).clamp(min=finfo(w.dtype).tiny).sqrt()
        return w + diag.diag_embed()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        eta = self.concentration
        diag = value.diagonal(dim1=-2, dim2=-1)[..., 1:]
        i = _C.arange(2, self.dim + 1, dtype=eta.dtype, device=eta.device)
        order = 2 * (eta - 1).unsqueeze(-1) + self.dim - i
        unnormalized = (order * diag.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = eta + 0.5 * dm1
        # log c(eta) = (dim - 1)/2 log(pi) + mvlgamma(alpha - 1/2, dim - 1) - (dim - 1) lgamma(alpha)
        log_norm = 0.5 * dm1 * math.log(math.pi) + (alpha - 0.5).mvlgamma(p=dm1) - alpha.lgamma() * dm1
        return unnormalized - log_norm
