"""VonMises(loc, concentration): the circular normal on angles, density
exp(kappa cos(x - loc)) / (2 pi I0(kappa)) over any real x (read modulo 2 pi).

log I0 comes from the exponentially scaled Bessel function,
log I0(k) = log(i0e(k)) + k, which stays finite for large k and is
differentiable in k (d/dk log I0 = I1 / I0). Draws: Best and Fisher's (1979)
wrapped-Cauchy envelope rejection sampler in float64 on whole tensors
(each round proposes for every entry, keeps the proposal where an entry is
still pending and accepts, and stops when none is pending); not
reparameterised, as in torch."""
import math

from .. import _C
from .. import special
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["VonMises"]

_MAX_ROUNDS = 1000  # the acceptance rate is above 0.65 for every kappa


def _log_i0(k):
    return special.i0e(k).log() + k


def _i1_over_i0(k):
    return special.i1e(k) / special.i0e(k)


def _envelope_r(kappa):
    """Best and Fisher's r = (1 + rho^2) / (2 rho), the wrapped-Cauchy
    envelope parameter (1 / kappa + kappa, its expansion, for tiny kappa)."""
    tau = 1 + (1 + 4 * kappa.pow(2)).sqrt()
    rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
    r = (1 + rho.pow(2)) / (2 * rho)
    return _C.where(kappa < 1e-5, kappa.reciprocal() + kappa, r)


def _best_fisher(loc, kappa, shape):
    """float64 draws of VonMises(loc, kappa) of the given shape (loc and
    kappa float64, broadcastable to it), wrapped into [-pi, pi)."""
    loc = loc.expand(shape)
    kappa = kappa.expand(shape)
    r = _envelope_r(kappa)
    kw = {"dtype": _C.float64, "device": loc.device}
    theta = _C.zeros(shape, **kw)
    pending = _C.ones(shape, dtype=_C.bool, device=loc.device)
    for _ in range(_MAX_ROUNDS):
        if not bool(pending.any()):
            break
        u1 = _C.rand(shape, **kw)
        u2 = _C.rand(shape, **kw)
        u3 = _C.rand(shape, **kw)
        z = (math.pi * u1).cos()
        f = (1 + r * z) / (r + z)
        c = kappa * (r - f)
        # the quick squeeze, then the exact test
        ok = (c * (2 - c) - u2 > 0) | ((c / u2).log() + 1 - c >= 0)
        proposal = (u3 - 0.5).sign() * f.clamp(-1.0, 1.0).acos()
        take = pending & ok
        theta = _C.where(take, proposal, theta)
        pending = pending & ~ok
    else:
        if bool(pending.any()):
            raise RuntimeError("VonMises.sample: the rejection sampler did not accept every entry within "
                               "%d rounds (a NaN or infinite concentration?)" % _MAX_ROUNDS)
    return (theta + math.pi + loc).remainder(2 * math.pi) - math.pi


class VonMises(Distribution):
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, (), validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        k = self.concentration
        return k * (value - self.loc).cos() - math.log(2 * math.pi) - _log_i0(k)

    def _sample(self, sample_shape=()):
        # float64 inside: in float32 the envelope test loses its digits for
        # small kappa and the loop stalls
        shape = tuple(self._extended_shape(sample_shape))
        draws = _best_fisher(self.loc.detach().double(), self.concentration.detach().double(), shape)
        return draws.to(self.loc.dtype)

    @property
    def mean(self):
        """The circular mean."""
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        """The circular variance, 1 - I1(kappa) / I0(kappa)."""
        return 1 - _i1_over_i0(self.concentration)
