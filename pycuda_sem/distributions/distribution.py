"""The base class: batch and event shapes, sample shapes, argument and
sample validation through arg_constraints/support (torch's messages), and
a generic expand."""
import warnings

from .. import _C
from ..autograd.grad_mode import no_grad
from . import constraints
from .utils import broadcast_all, lazy_property  # noqa: F401 - broadcast_all re-exported


def _size(shape):
    return _C.Size(tuple(shape))


class Distribution:
    """batch_shape (independent, not identically distributed draws) and
    event_shape (the shape of one draw); subclasses give the rest."""

    has_rsample = False
    has_enumerate_support = False
    _validate_default = True

    @staticmethod
    def set_default_validate_args(value):
        if value not in (True, False):
            raise ValueError("set_default_validate_args expects a bool")
        Distribution._validate_default = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape = _size(batch_shape)
        self._event_shape = _size(event_shape)
        if validate_args is not None:
            self._validate_args = bool(validate_args)
        else:
            self._validate_args = Distribution._validate_default
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue  # skip constraints that cannot be checked
                if param not in self.__dict__ and isinstance(getattr(type(self), param, None), lazy_property):
                    continue  # skip checking lazily-constructed args
                value = getattr(self, param)
                if not bool(constraint.check(value).all()):
                    raise ValueError(
                        "Expected parameter %s (%s of shape %s) of distribution %r to satisfy the "
                        "constraint %r, but found invalid values:\n%s"
                        % (param, type(value).__name__, tuple(value.shape), self, constraint, value))

    @property
    def arg_constraints(self):
        raise NotImplementedError

    @property
    def support(self):
        raise NotImplementedError

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    def _extended_shape(self, sample_shape=()):
        if not isinstance(sample_shape, (tuple, list, _C.Size)):
            sample_shape = (sample_shape,)
        return _size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def expand(self, batch_shape, _instance=None):
        """This distribution with its parameters expanded (views, no copy) to batch_shape."""
        new = _instance if _instance is not None else type(self).__new__(type(self))
        old_b = tuple(self._batch_shape)
        batch_shape = tuple(batch_shape)
        for k, v in self.__dict__.items():
            if isinstance(v, _C.Tensor) and k not in self._expand_skip:
                tail = tuple(v.shape[len(old_b):]) if tuple(v.shape[:len(old_b)]) == old_b else None
                if tail is None or v.dim() < len(old_b):
                    new.__dict__[k] = v
                else:
                    new.__dict__[k] = v.expand(batch_shape + tail)
            elif isinstance(v, Distribution) and k in self._expand_children:
                new.__dict__[k] = v.expand(batch_shape + tuple(v.batch_shape[len(old_b):]))
            elif k not in ("_batch_shape",):
                new.__dict__[k] = v
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    _expand_skip = ()
    _expand_children = ()

    def sample(self, sample_shape=()):
        """A draw of shape sample_shape + batch_shape + event_shape, outside the graph."""
        with no_grad():
            return self.rsample(sample_shape) if self.has_rsample else self._sample(sample_shape)

    def _sample(self, sample_shape=()):
        raise NotImplementedError

    def rsample(self, sample_shape=()):
        raise NotImplementedError

    def sample_n(self, n):
        warnings.warn("sample_n will be deprecated. Use .sample((n,)) instead", UserWarning)
        return self.sample((n,))

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return self.entropy().exp()

    @property
    def mean(self):
        raise NotImplementedError("%s does not implement mean" % self.__class__)

    @property
    def mode(self):
        raise NotImplementedError("%s does not implement mode" % self.__class__)

    @property
    def variance(self):
        raise NotImplementedError("%s does not implement variance" % self.__class__)

    @property
    def stddev(self):
        return self.variance.sqrt()

    def _check(self, ok, name, constraint, value):
        """An explicit parameter check (for classes that validate more than arg_constraints)."""
        if self._validate_args and not bool(ok):
            raise ValueError("Expected parameter %s (%s of shape %s) of distribution %s to satisfy the "
                             "constraint %s, but found invalid values:\n%s"
                             % (name, type(value).__name__, tuple(getattr(value, "shape", ())),
                                repr(self), constraint, value))

    def _validate_sample(self, value):
        """torch's checks of a log_prob/cdf argument: a Tensor, event shape, broadcastable, in the support."""
        if not isinstance(value, _C.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = value.dim() - len(self._event_shape)
        if tuple(value.shape[event_dim_start:]) != tuple(self._event_shape):
            raise ValueError("The right-most size of value must match event_shape: %s vs %s."
                             % (value.shape, self._event_shape))
        actual_shape = tuple(value.shape)
        expected_shape = tuple(self._batch_shape) + tuple(self._event_shape)
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError("Value is not broadcastable with batch_shape+event_shape: %s vs %s."
                                 % (_size(actual_shape), _size(expected_shape)))
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn("%s does not define `support` to enable sample validation. Please "
                          "initialize the distribution with `validate_args=False` to turn off "
                          "validation." % self.__class__)
            return
        if not bool(support.check(value).all()):
            raise ValueError("Expected value argument (%s of shape %s) to be within the support (%r) "
                             "of the distribution %r, but found invalid values:\n%s"
                             % (type(value).__name__, tuple(value.shape), support, self, value))

    def __repr__(self):
        try:
            names = [k for k in self.arg_constraints if k in self.__dict__]
        except NotImplementedError:
            names = []
        args = ", ".join("%s: %s" % (p, self.__dict__[p] if self.__dict__[p].numel() == 1
                                     else self.__dict__[p].size()) for p in names)
        return self.__class__.__name__ + "(" + args + ")"
