"""Normal(loc, scale): the Gaussian, reparameterised draws loc + scale * eps."""
import math

from .. import _C
from .distribution import Distribution, broadcast_all

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


class Normal(Distribution):
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, (), validate_args)
        self._check((self.scale > 0).all(), "scale", "GreaterThan(lower_bound=0.0)", self.scale)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self.scale.pow(2)

    @property
    def stddev(self):
        return self.scale

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = _C.randn(tuple(shape), dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        var = self.scale ** 2
        return -((value - self.loc) ** 2) / (2 * var) - self.scale.log() - _LOG_SQRT_2PI

    def entropy(self):
        return 0.5 + _LOG_SQRT_2PI + self.scale.log()

    def cdf(self, value):
        return 0.5 * (1 + ((value - self.loc) / (self.scale * math.sqrt(2))).erf())

    def icdf(self, value):
        return self.loc + self.scale * (2 * value - 1).erfinv() * math.sqrt(2)

    def __repr__(self):
        return "Normal(loc: %s, scale: %s)" % (_short(self.loc), _short(self.scale))


def _short(t):
    return repr(t.reshape(-1)[0].detach()) if t.numel() == 1 else "torch.Size(%s)" % list(t.shape)
