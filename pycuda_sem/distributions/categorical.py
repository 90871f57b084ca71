"""Categorical(probs= or logits=) over the last dim, OneHotCategorical, and
OneHotCategoricalStraightThrough (one-hot draws with the straight-through gradient)."""
from .. import _C
from .._dtype_info import finfo
from .._math import broadcast_shapes
from .._sampling import multinomial
from . import constraints
from .distribution import Distribution
from .utils import lazy_property, logits_to_probs, probs_to_logits


class Categorical(Distribution):
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size(-1)
        super().__init__(self._param.shape[:-1], (), validate_args)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def param_shape(self):
        return self._param.size()

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
        values = _C.arange(self._num_events, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self.batch_shape))
        return values.expand((-1,) + tuple(self.batch_shape)) if expand else values

    def _sample(self, sample_shape=()):
        if not isinstance(sample_shape, (tuple, list, _C.Size)):
            sample_shape = (sample_shape,)
        n = 1
        for s in sample_shape:
            n *= s
        p2 = self.probs.reshape(-1, self._num_events)
        draws = multinomial(p2, n, replacement=True)  # [batch, n]
        return draws.t().reshape(tuple(sample_shape) + tuple(self.batch_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long()
        shape = broadcast_shapes(tuple(value.shape), tuple(self.batch_shape))
        logits = self.logits.expand(tuple(shape) + (self._num_events,))
        return logits.gather(-1, value.expand(shape).unsqueeze(-1)).squeeze(-1)

    def entropy(self):
        eps_logits = self.logits.clamp(min=finfo(self.logits.dtype).min)
        return -(eps_logits * self.probs).sum(-1)


class OneHotCategorical(Distribution):
    """Draws as one-hot vectors of the last dim's size."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True
    _expand_children = ("_categorical",)

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits, validate_args)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:], validate_args)

    def expand(self, batch_shape, _instance=None):
        new = type(self).__new__(type(self))
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        probs = self._categorical.probs
        mode = probs.argmax(-1)
        return _C.zeros(tuple(probs.shape), dtype=probs.dtype, device=probs.device).scatter(
            -1, mode.unsqueeze(-1), 1.0)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def _sample(self, sample_shape=()):
        idx = self._categorical._sample(sample_shape)
        n = self._categorical._num_events
        return _C.zeros(tuple(idx.shape) + (n,), dtype=self.probs.dtype, device=self.probs.device) \
            .scatter(-1, idx.unsqueeze(-1), 1.0)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self.event_shape[0]
        values = _C.eye(n, dtype=self._categorical._param.dtype, device=self._categorical._param.device)
        values = values.reshape((n,) + (1,) * len(self.batch_shape) + (n,))
        return values.expand((n,) + tuple(self.batch_shape) + (n,)) if expand else values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """OneHotCategorical with the straight-through gradient (Bengio et al.,
    2013): rsample's value is a one-hot draw, its gradient that of probs."""
    has_rsample = True

    def sample(self, sample_shape=()):
        from ..autograd.grad_mode import no_grad
        with no_grad():
            return self._sample(sample_shape)

    def rsample(self, sample_shape=()):
        draws = self.sample(sample_shape)
        probs = self._categorical.probs
        return draws + (probs - probs.detach())
