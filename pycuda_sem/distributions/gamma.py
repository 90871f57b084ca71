"""The gamma family: Gamma, Chi2, Beta, Dirichlet and StudentT.

Draws come from torch._standard_gamma (Marsaglia-Tsang on whole tensors,
pycuda_sem/_sampling_more.py); Beta and Dirichlet normalise Gammas, StudentT
divides a normal by sqrt(Chi2 / df). rsample is differentiable in every
parameter: the Gamma draws carry the implicit reparameterisation gradient in
the concentration (dx/da = -dCDF/da / pdf, _standard_gamma_grad), and the
normalisation/division that follow are ordinary differentiable ops."""
import math

from .. import _C
from .._dtype_info import finfo
from .._sampling_more import _standard_gamma
from . import constraints
from .exp_family import ExponentialFamily
from .distribution import Distribution
from .utils import broadcast_all


class Gamma(ExponentialFamily):
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.concentration.shape, (), validate_args)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        g = _standard_gamma(self.concentration.expand(shape))
        value = g / self.rate.expand(shape)
        return value.clamp(min=finfo(value.dtype).tiny)  # as torch: never exactly 0

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c, r = self.concentration, self.rate
        return c.xlogy(r) + (c - 1).xlogy(value) - r * value - c.lgamma()

    def entropy(self):
        c = self.concentration
        return c - self.rate.log() + c.lgamma() + (1.0 - c) * c.digamma()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        from .. import special
        return special.gammainc(self.concentration, self.rate * value)

    # natural parameters (alpha - 1, -beta) of the statistic (log x, x)
    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return (x + 1).lgamma() + (x + 1) * (-y.reciprocal()).log()


class Chi2(Gamma):
    """Gamma(df / 2, 1 / 2)."""
    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        (df,) = broadcast_all(df)
        super().__init__(0.5 * df, _C.full_like(df, 0.5), validate_args=validate_args)

    @property
    def df(self):
        return self.concentration * 2


class Dirichlet(ExponentialFamily):
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:], validate_args)

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        g = _standard_gamma(self.concentration.expand(shape))
        fi = finfo(g.dtype)
        g = g.clamp(min=fi.tiny)
        return (g / g.sum(-1, keepdim=True)).clamp(min=fi.tiny, max=1 - fi.eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return (c - 1.0).xlogy(value).sum(-1) + c.sum(-1).lgamma() - c.lgamma().sum(-1)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        c = self.concentration
        cm1 = (c - 1).clamp(min=0.0)
        mode = cm1 / cm1.sum(-1, True)
        # all concentrations below 1: the mode is the vertex of the largest
        one_hot = _C.zeros_like(c).scatter(-1, c.argmax(-1, keepdim=True), 1.0)
        mask = (c < 1).all(-1, keepdim=True)
        return _C.where(mask, one_hot, mode)

    @property
    def variance(self):
        c = self.concentration
        con0 = c.sum(-1, True)
        return c * (con0 - c) / (con0.pow(2) * (con0 + 1))

    def entropy(self):
        c = self.concentration
        k = c.size(-1)
        a0 = c.sum(-1)
        return (c.lgamma().sum(-1) - a0.lgamma() - (k - a0) * a0.digamma()
                - ((c - 1.0) * c.digamma()).sum(-1))

    # no _mean_carrier_measure (as in torch): entropy above is the closed form
    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - x.sum(-1).lgamma()


class Beta(ExponentialFamily):
    """Beta(concentration1, concentration0), through a two-entry Dirichlet as torch does."""
    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True
    _expand_children = ("_dirichlet",)

    def __init__(self, concentration1, concentration0, validate_args=None):
        if isinstance(concentration1, (int, float)) and isinstance(concentration0, (int, float)):
            c10 = _C.tensor([float(concentration1), float(concentration0)])
        else:
            concentration1, concentration0 = broadcast_all(concentration1, concentration0)
            c10 = _C.stack([concentration1, concentration0], -1)
        self._dirichlet = Dirichlet(c10, validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, (), validate_args)

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        heads_tails = _C.stack([value, 1.0 - value], -1)
        return self._dirichlet.log_prob(heads_tails)

    def entropy(self):
        return self._dirichlet.entropy()

    @property
    def _natural_params(self):
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        return x.lgamma() + y.lgamma() - (x + y).lgamma()

    @property
    def concentration1(self):
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self):
        return self._dirichlet.concentration[..., 1]


class StudentT(Distribution):
    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _expand_children = ("_chi2",)

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df, validate_args=False)
        super().__init__(self.df.shape, (), validate_args)

    @property
    def mean(self):
        return _C.where(self.df > 1, self.loc, _C.full_like(self.loc, math.nan))

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        big = self.scale.pow(2) * df / (df - 2).clamp(min=finfo(df.dtype).tiny)
        m = _C.where(df > 2, big, _C.full_like(df, math.inf))
        return _C.where(df <= 1, _C.full_like(df, math.nan), m)

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        x = _C.randn(shape, dtype=self.df.dtype, device=self.df.device)
        z = self._chi2.rsample(sample_shape)
        y = x * (z / self.df).rsqrt()
        return self.loc + self.scale * y

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        df = self.df
        z = (self.scale.log() + 0.5 * df.log() + 0.5 * math.log(math.pi) + (0.5 * df).lgamma()
             - (0.5 * (df + 1.0)).lgamma())
        return -0.5 * (df + 1.0) * (y.pow(2) / df).log1p() - z

    def entropy(self):
        df = self.df
        lbeta = (0.5 * df).lgamma() + math.lgamma(0.5) - (0.5 * (df + 1)).lgamma()
        return (self.scale.log() + 0.5 * (df + 1) * ((0.5 * (df + 1)).digamma() - (0.5 * df).digamma())
                + 0.5 * df.log() + lbeta)
