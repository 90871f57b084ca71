"""The base class: batch and event shapes, sample shapes, argument checks."""
from .. import _C
from ..autograd.grad_mode import no_grad


def _size(shape):
    return _C.Size(tuple(shape))


class Distribution:
    """batch_shape (independent, not identically distributed draws) and
    event_shape (the shape of one draw); subclasses give the rest."""

    has_rsample = False
    _validate_default = True

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape = _size(batch_shape)
        self._event_shape = _size(event_shape)
        self._validate_args = self._validate_default if validate_args is None else bool(validate_args)

    @staticmethod
    def set_default_validate_args(value):
        if value not in (True, False):
            raise ValueError("set_default_validate_args expects a bool")
        Distribution._validate_default = value

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    def _extended_shape(self, sample_shape=()):
        return _size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def sample(self, sample_shape=()):
        """A draw of shape sample_shape + batch_shape + event_shape, outside the graph."""
        with no_grad():
            return self.rsample(sample_shape) if self.has_rsample else self._sample(sample_shape)

    def rsample(self, sample_shape=()):
        raise NotImplementedError("%s has no reparameterised sampler (rsample)" % type(self).__name__)

    def sample_n(self, n):
        return self.sample((n,))

    def log_prob(self, value):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError("%s has no cdf" % type(self).__name__)

    def icdf(self, value):
        raise NotImplementedError("%s has no icdf" % type(self).__name__)

    def perplexity(self):
        return self.entropy().exp()

    @property
    def stddev(self):
        return self.variance.sqrt()

    def _check(self, ok, name, constraint, value):
        if self._validate_args and not bool(ok):
            raise ValueError("Expected parameter %s (%s of shape %s) of distribution %s to satisfy the "
                             "constraint %s, but found invalid values:\n%s"
                             % (name, type(value).__name__, tuple(getattr(value, "shape", ())),
                                repr(self), constraint, value))

    def __repr__(self):
        return type(self).__name__ + "()"


def broadcast_all(*values):
    """The tensors among values broadcast together; numbers become tensors
    of the tensors' dtype and device (the default dtype when none is one)."""
    ref = next((v for v in values if isinstance(v, _C.Tensor)), None)
    dt = ref.dtype if ref is not None and ref.is_floating_point() else _C.get_default_dtype()
    dev = ref.device if ref is not None else "cpu"
    ts = [v if isinstance(v, _C.Tensor) else _C.tensor(float(v), dtype=dt, device=dev) for v in values]
    from .._math import broadcast_tensors
    return broadcast_tensors(*ts)
