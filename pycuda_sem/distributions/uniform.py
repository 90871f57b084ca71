"""Uniform(low, high): draws low + (high - low) * u, reparameterised."""
from .. import _C
from .distribution import Distribution, broadcast_all


class Uniform(Distribution):
    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        super().__init__(self.low.shape, (), validate_args)
        self._check((self.low < self.high).all(), "low", "LessThan(upper_bound=high)", self.low)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = _C.rand(tuple(shape), dtype=self.low.dtype, device=self.low.device)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value):
        inside = ((value >= self.low) & (value < self.high)).to(self.low.dtype)
        return inside.log() - (self.high - self.low).log()

    def entropy(self):
        return (self.high - self.low).log()

    def cdf(self, value):
        return ((value - self.low) / (self.high - self.low)).clamp(0, 1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low
