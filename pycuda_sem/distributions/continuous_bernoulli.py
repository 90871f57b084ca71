"""ContinuousBernoulli(probs= or logits=): the density C(p) p^x (1 - p)^(1 - x)
on [0, 1] (Loaiza-Ganem and Cunningham, 2019), with torch's formulas: near
p = 1/2 (inside lims) the normaliser, mean and variance switch to Taylor
expansions, where the closed forms lose their digits. Draws by the inverse
cdf of a uniform, so rsample is reparameterised."""
import math

from .. import _C
from ..nn import functional as F
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits


class ContinuousBernoulli(ExponentialFamily):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
            if validate_args is not None:
                if not bool(self.arg_constraints["probs"].check(self.probs).all()):
                    raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
            shape = self.probs.shape
        else:
            (self.logits,) = broadcast_all(logits)
            shape = self.logits.shape
        self._lims = lims
        super().__init__(shape, (), validate_args)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        return _C.where(self._outside_unstable_region(), self.probs, _C.full_like(self.probs, self._lims[0]))

    def _cont_bern_log_norm(self):
        """log C(p), C(p) = 2 atanh(1 - 2p) / (1 - 2p)."""
        cut = self._cut_probs()
        below = _C.where(cut <= 0.5, cut, _C.zeros_like(cut))
        above = _C.where(cut >= 0.5, cut, _C.ones_like(cut))
        log_norm = ((-cut).log1p() - cut.log()).abs().log() - _C.where(
            cut <= 0.5, (-2.0 * below).log1p(), (2.0 * above - 1.0).log())
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return _C.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / ((-cut).log1p() - cut.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return _C.where(self._outside_unstable_region(), mus, taylor)

    @property
    def variance(self):
        cut = self._cut_probs()
        vs = cut * (cut - 1.0) / (1.0 - 2.0 * cut).pow(2) + 1.0 / ((-cut).log1p() - cut.log()).pow(2)
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return _C.where(self._outside_unstable_region(), vs, taylor)

    @property
    def param_shape(self):
        return (self.__dict__.get("probs") if "probs" in self.__dict__ else self.logits).size()

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        u = _C.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none") + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = (cut.pow(value) * (1.0 - cut).pow(1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        unbounded = _C.where(self._outside_unstable_region(), cdfs, value)
        return _C.where(value <= 0.0, _C.zeros_like(value),
                        _C.where(value >= 1.0, _C.ones_like(value), unbounded))

    def icdf(self, value):
        cut = self._cut_probs()
        inv = (((-cut + value * (2.0 * cut - 1.0)).log1p() - (-cut).log1p())
               / (cut.log() - (-cut).log1p()))
        return _C.where(self._outside_unstable_region(), inv, value)

    def entropy(self):
        log_probs0 = (-self.probs).log1p()
        log_probs1 = self.probs.log()
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """log((e^x - 1) / x), by its Taylor series where x is near 0 (the
        same window, lims - 1/2, torch applies to the logits)."""
        outside = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = _C.where(outside, x, _C.full_like(x, self._lims[0] - 0.5))
        log_norm = cut.expm1().abs().log() - cut.abs().log()
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return _C.where(outside, log_norm, taylor)
