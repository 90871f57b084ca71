"""Families that torch builds as TransformedDistributions, and so do we
(draws, log_prob, cdf/icdf and support follow from the base and the
transforms; the moments and entropies are closed forms):

- Weibull(scale, concentration): Exponential(1) ** (1 / k), times scale;
- Pareto(scale, alpha): scale * exp(Exponential(alpha));
- Kumaraswamy(concentration1, concentration0): (1 - U ** (1 / b)) ** (1 / a);
- InverseGamma(concentration, rate): 1 / Gamma(concentration, rate);
- LogisticNormal(loc, scale): a Normal vector through StickBreakingTransform.

All five are reparameterised (their bases are)."""
import math

from .. import _C
from . import constraints
from .continuous import Exponential
from .gamma import Gamma
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform, PowerTransform
from .transforms_more import StickBreakingTransform
from .uniform import Uniform
from .utils import broadcast_all

__all__ = ["InverseGamma", "Kumaraswamy", "LogisticNormal", "Pareto", "Weibull"]

_EULER = 0.57721566490153286061


class Weibull(TransformedDistribution):
    """Density (k / lam) (x / lam)^(k - 1) exp(-(x / lam)^k) on x > 0."""
    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base = Exponential(_C.ones_like(self.scale), validate_args=validate_args)
        super().__init__(base, [PowerTransform(exponent=self.concentration_reciprocal),
                                AffineTransform(loc=0, scale=self.scale)], validate_args=validate_args)

    @property
    def mean(self):
        return self.scale * (1 + self.concentration_reciprocal).lgamma().exp()

    @property
    def mode(self):
        k = self.concentration
        return self.scale * ((k - 1) / k).pow(k.reciprocal())

    @property
    def variance(self):
        g1 = (1 + self.concentration_reciprocal).lgamma()
        g2 = (1 + 2 * self.concentration_reciprocal).lgamma()
        return self.scale.pow(2) * (g2.exp() - (2 * g1).exp())

    def entropy(self):
        return _EULER * (1 - self.concentration_reciprocal) + (self.scale * self.concentration_reciprocal).log() + 1


class Pareto(TransformedDistribution):
    """Type I Pareto: density alpha scale^alpha / x^(alpha + 1) on x >= scale."""
    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}

    def __init__(self, scale, alpha, validate_args=None):
        self.scale, self.alpha = broadcast_all(scale, alpha)
        base = Exponential(self.alpha, validate_args=validate_args)
        super().__init__(base, [ExpTransform(), AffineTransform(loc=0, scale=self.scale)],
                         validate_args=validate_args)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.greater_than_eq(self.scale)

    @property
    def mean(self):
        a = self.alpha.clamp(min=1)  # infinite for alpha <= 1 (a / 0)
        return a * self.scale / (a - 1)

    @property
    def mode(self):
        return self.scale

    @property
    def variance(self):
        a = self.alpha.clamp(min=2)  # infinite for alpha <= 2
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    def entropy(self):
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())


def _kumaraswamy_moment(a, b, n):
    """E[X^n] = b B(1 + n / a, b)."""
    s = 1 + n / a
    return b * (s.lgamma() + b.lgamma() - (s + b).lgamma()).exp()


class Kumaraswamy(TransformedDistribution):
    """Density a b x^(a - 1) (1 - x^a)^(b - 1) on [0, 1]."""
    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base = Uniform(_C.zeros_like(self.concentration0), _C.ones_like(self.concentration0),
                       validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()),
                      AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base, transforms, validate_args=validate_args)

    @property
    def mean(self):
        return _kumaraswamy_moment(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        a, b = self.concentration1, self.concentration0
        # ((a - 1) / (a b - 1)) ** (1 / a), undefined unless a, b >= 1 (torch
        # 2.x's formula takes log(1 - b) and is NaN for every b > 1)
        log_mode = ((a - 1).log() - (a * b - 1).log()) / a
        log_mode = log_mode.masked_fill((b < 1) | (a < 1), math.nan)
        return log_mode.exp()

    @property
    def variance(self):
        a, b = self.concentration1, self.concentration0
        return _kumaraswamy_moment(a, b, 2) - self.mean.pow(2)

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        harmonic_b = (b + 1).digamma() + _EULER
        return (1 - b.reciprocal()) + (1 - a.reciprocal()) * harmonic_b - a.log() - b.log()


class InverseGamma(TransformedDistribution):
    """1 / X for X ~ Gamma(concentration, rate): density
    rate^a / Gamma(a) x^(-a - 1) exp(-rate / x) on x > 0."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        base = Gamma(concentration, rate, validate_args=validate_args)
        super().__init__(base, PowerTransform(-base.rate.new_ones(())), validate_args=validate_args)

    @property
    def concentration(self):
        return self.base_dist.concentration

    @property
    def rate(self):
        return self.base_dist.rate

    @property
    def mean(self):
        a = self.concentration
        return _C.where(a > 1, self.rate / (a - 1), math.inf)

    @property
    def mode(self):
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        a = self.concentration
        return _C.where(a > 2, self.rate.square() / ((a - 1).square() * (a - 2)), math.inf)

    def entropy(self):
        a = self.concentration
        return a + self.rate.log() + a.lgamma() - (1 + a) * a.digamma()


class LogisticNormal(TransformedDistribution):
    """A Normal(loc, scale) vector of length K - 1 through StickBreakingTransform,
    onto the K-simplex."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand((1,))
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    @property
    def loc(self):
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.base_dist.scale
