"""Bernoulli(probs= or logits=): 0/1 draws, log_prob by the stable BCE-with-logits form."""
from .. import _C
from .._dtype_info import finfo
from ..nn import functional as F
from .distribution import Distribution, broadcast_all


class Bernoulli(Distribution):
    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
            super().__init__(self.probs.shape, (), validate_args)
            self._check(((self.probs >= 0) & (self.probs <= 1)).all(), "probs", "Interval(lower_bound=0.0, "
                        "upper_bound=1.0)", self.probs)
            eps = finfo(self.probs.dtype).eps
            p = self.probs.clamp(eps, 1 - eps)
            self.logits = p.log() - (-p).log1p()
        else:
            (self.logits,) = broadcast_all(logits)
            super().__init__(self.logits.shape, (), validate_args)
            self.probs = self.logits.sigmoid()

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        return (self.probs > 0.5).to(self.probs.dtype)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def _sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = _C.rand(tuple(shape), dtype=self.probs.dtype, device=self.probs.device)
        return (u < self.probs.expand(shape)).to(self.probs.dtype)

    def log_prob(self, value):
        logits, value = broadcast_all(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")
