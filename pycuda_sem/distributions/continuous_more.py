"""FisherSnedecor(df1, df2) (the F distribution, a ratio of scaled chi-squares,
reparameterised through the Gamma draws) and GeneralizedPareto(loc, scale,
concentration) (the peaks-over-threshold family; draws by the inverse cdf,
so reparameterised)."""
import math
import numbers

from .. import _C
from .._dtype_info import finfo
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all

__all__ = ["FisherSnedecor", "GeneralizedPareto"]


class FisherSnedecor(Distribution):
    """(X1 / df1) / (X2 / df2) for independent chi-squares X1, X2 of df1, df2 degrees."""
    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True
    _expand_children = ("_gamma1", "_gamma2")

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        # checked here under their own names (torch's inner Gammas report
        # "concentration" and check even when validate_args=False)
        super().__init__(self.df1.shape, (), validate_args)
        # Chi2(d) / d is Gamma(d / 2, rate d / 2); Gamma(d / 2, rate d), torch's
        # choice, is half of it, and the halves cancel in the ratio
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1, validate_args=False)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2, validate_args=False)

    @property
    def mean(self):
        d2 = self.df2
        return _C.where(d2 > 2, d2 / (d2 - 2), math.nan)

    @property
    def mode(self):
        d1, d2 = self.df1, self.df2
        return _C.where(d1 > 2, (d1 - 2) / d1 * d2 / (d2 + 2), math.nan)

    @property
    def variance(self):
        d1, d2 = self.df1, self.df2
        v = 2 * d2.pow(2) * (d1 + d2 - 2) / (d1 * (d2 - 2).pow(2) * (d2 - 4))
        return _C.where(d2 > 4, v, math.nan)

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        x1 = self._gamma1.rsample(sample_shape).reshape(shape)
        x2 = self._gamma2.rsample(sample_shape).reshape(shape)
        tiny = finfo(x2.dtype).tiny
        return (x1 / x2.clamp(min=tiny)).clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        h1, h2 = self.df1 * 0.5, self.df2 * 0.5
        ratio = self.df1 / self.df2
        log_norm = (h1 + h2).lgamma() - h1.lgamma() - h2.lgamma()
        return log_norm + h1 * ratio.log() + (h1 - 1) * value.log() - (h1 + h2) * (ratio * value).log1p()


class GeneralizedPareto(Distribution):
    """Survival function (1 + c z)^(-1 / c), z = (x - loc) / scale (exp(-z) at
    c = 0), on x >= loc, and below loc - scale / c too when c < 0."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        if all(isinstance(v, numbers.Number) for v in (loc, scale, concentration)):
            batch_shape = ()
        else:
            batch_shape = self.loc.shape
        super().__init__(batch_shape, (), validate_args)

    def _conc(self):
        """(c == 0 as torch.isclose(c, 0) decides it, c with those entries set to 1)."""
        c = self.concentration
        is_zero = c.abs() <= 1e-8
        return is_zero, _C.where(is_zero, _C.ones_like(c), c)

    def _z(self, x):
        return (x - self.loc) / self.scale

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        u = _C.rand(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        is_zero, c = self._conc()
        y = 1 / c + _C.ones_like(z)
        # y == 0 (c == -1, the uniform case): the power term vanishes
        nonzero = _C.where(y == 0, y, y * (c * z).log1p())
        return -self.scale.log() - _C.where(is_zero, z, nonzero)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        is_zero, c = self._conc()
        return _C.where(is_zero, -z, -(c * z).log1p() / c)

    def log_cdf(self, value):
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value):
        return self.log_cdf(value).exp()

    def icdf(self, value):
        is_zero, c = self._conc()
        logu = (-value).log1p()
        nonzero = self.loc + self.scale / c * (-c * logu).expm1()
        return _C.where(is_zero, self.loc - self.scale * logu, nonzero)

    @property
    def mean(self):
        c = self.concentration
        ok = c < 1
        safe = _C.where(ok, c, _C.full_like(c, 0.5))
        return _C.where(ok, self.loc + self.scale / (1 - safe), math.nan)

    @property
    def variance(self):
        c = self.concentration
        ok = c < 0.5
        safe = _C.where(ok, c, _C.full_like(c, 0.25))
        return _C.where(ok, self.scale.pow(2) / ((1 - safe).pow(2) * (1 - 2 * safe)), math.nan)

    @property
    def mode(self):
        return self.loc

    def entropy(self):
        h = self.scale.log() + self.concentration + 1
        return h.expand(tuple(self._batch_shape))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        c = self.concentration
        upper = _C.where(c < 0, self.loc - self.scale / c, math.inf)
        return constraints.interval(self.loc, upper)
