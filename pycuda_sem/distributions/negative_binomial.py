"""NegativeBinomial(total_count, probs= or logits=): the number of successes
(probability probs each) before total_count failures; total_count may be any
real >= 0. P(k) = Gamma(n + k) / (Gamma(n) k!) p^k (1 - p)^n. Draws are the
Gamma-Poisson mixture, Poisson(Gamma(n, rate (1 - p) / p)), exact through
the whole-tensor samplers of _sampling_more.py; not reparameterised."""
from .._sampling_more import poisson as _poisson
from ..autograd.grad_mode import no_grad
from ..nn import functional as F
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import BinaryParams, broadcast_all

__all__ = ["NegativeBinomial"]


class NegativeBinomial(BinaryParams, Distribution):
    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0), "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
            self._param = self.probs
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
            self._param = self.logits
        super().__init__(self._param.shape, (), validate_args)

    @property
    def param_shape(self):
        return self._param.size()

    @property
    def mean(self):
        return self.total_count * self.logits.exp()

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / (-self.logits).sigmoid()

    def _gamma(self):
        # not validated: total_count may be 0 (the point mass at 0)
        return Gamma(concentration=self.total_count, rate=(-self.logits).exp(), validate_args=False)

    def _sample(self, sample_shape=()):
        with no_grad():
            return _poisson(self._gamma().sample(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        log_unnormalized = n * F.logsigmoid(-self.logits) + value * F.logsigmoid(self.logits)
        log_normalization = -(n + value).lgamma() + (1.0 + value).lgamma() + n.lgamma()
        # n == 0 and k == 0: probability 1, where the lgammas are infinite
        log_normalization = log_normalization.masked_fill(n + value == 0.0, 0.0)
        return log_unnormalized - log_normalization
