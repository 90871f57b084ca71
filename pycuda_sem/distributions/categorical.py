"""Categorical(probs= or logits=) over the last dim, and OneHotCategorical."""
from .. import _C
from .._dtype_info import finfo
from .._math import broadcast_shapes
from .._sampling import multinomial
from .distribution import Distribution


class Categorical(Distribution):
    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self._validate_args = self._validate_default if validate_args is None else bool(validate_args)
            self._check(((probs >= 0).all()), "probs", "Simplex()", probs)
            self.probs = probs / probs.sum(-1, keepdim=True)
            eps = finfo(self.probs.dtype).eps
            self.logits = self.probs.clamp(eps, 1 - eps).log()
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(-1, keepdim=True)
            self.probs = self.logits.softmax(-1)
        self._num_events = self.probs.size(-1)
        super().__init__(self.probs.shape[:-1], (), validate_args)

    @property
    def param_shape(self):
        return self.probs.shape

    @property
    def mean(self):
        return _C.full(tuple(self._extended_shape()), float("nan"), dtype=self.probs.dtype,
                       device=self.probs.device)

    @property
    def mode(self):
        return self.probs.argmax(-1)

    @property
    def variance(self):
        return self.mean

    def enumerate_support(self, expand=True):
        values = _C.arange(self._num_events, device=self.probs.device)
        values = values.reshape((-1,) + (1,) * len(self.batch_shape))
        return values.expand((-1,) + tuple(self.batch_shape)) if expand else values

    def _sample(self, sample_shape=()):
        n = 1
        for s in sample_shape:
            n *= s
        p2 = self.probs.reshape(-1, self._num_events)
        draws = multinomial(p2, n, replacement=True)  # [batch, n]
        return draws.t().reshape(tuple(sample_shape) + tuple(self.batch_shape))

    def log_prob(self, value):
        value = value.long()
        shape = broadcast_shapes(tuple(value.shape), tuple(self.batch_shape))
        logits = self.logits.expand(tuple(shape) + (self._num_events,))
        return logits.gather(-1, value.expand(shape).unsqueeze(-1)).squeeze(-1)

    def entropy(self):
        eps_logits = self.logits.clamp(min=finfo(self.logits.dtype).min)
        return -(eps_logits * self.probs).sum(-1)


class OneHotCategorical(Distribution):
    """Draws as one-hot vectors of the last dim's size."""

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits, validate_args)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:], validate_args)

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def mean(self):
        return self.probs

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def _sample(self, sample_shape=()):
        idx = self._categorical._sample(sample_shape)
        n = self._categorical._num_events
        return _C.zeros(tuple(idx.shape) + (n,), dtype=self.probs.dtype, device=self.probs.device) \
            .scatter(-1, idx.unsqueeze(-1), 1.0)

    def log_prob(self, value):
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self):
        return self._categorical.entropy()
