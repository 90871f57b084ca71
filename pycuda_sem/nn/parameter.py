"""torch.nn.Parameter: a Tensor that a Module registers as a learnable weight.

A Parameter is a real Tensor subclass made by Tensor._make_subclass: it shares
the memory of the tensor it wraps, is a leaf, and requires grad by default.
Ops on it return plain Tensors, as in torch."""
import collections

from .. import _C, _tensor_pickle

__all__ = ["Parameter", "Buffer"]


class Parameter(_C.Tensor):
    """Parameter(data=None, requires_grad=True): data's memory as a leaf
    that Module.__setattr__ registers in _parameters."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _C.empty(0)
        if not isinstance(data, _C.Tensor):
            raise TypeError("Parameter(): data must be a Tensor, not %s" % type(data).__name__)
        # detach first: a Parameter never hangs off someone else's graph
        return _C.Tensor._make_subclass(cls, data.detach(), requires_grad)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, proto):
        # pickles as "rebuild a Parameter from this tensor's data", with its
        # attributes when it has any, as torch's Parameter.__reduce_ex__
        state = _tensor_pickle._get_state(self)
        hooks = collections.OrderedDict()  # torch's (never saved) backward hooks
        if not state:
            return (_rebuild_parameter, (self.data, self.requires_grad, hooks))
        return (_rebuild_parameter_with_state, (self.data, self.requires_grad, hooks, state))


def _rebuild_parameter(data, requires_grad, backward_hooks=None):
    """torch._utils._rebuild_parameter."""
    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    """torch._utils._rebuild_parameter_with_state: the Parameter, then its
    attributes."""
    return _tensor_pickle._set_state(Parameter(data, requires_grad), state)


class _BufferMeta(type):
    # a Buffer is a plain Tensor marked as one: isinstance reads the mark
    def __instancecheck__(cls, obj):
        return isinstance(obj, _C.Tensor) and bool(getattr(obj, "_is_buffer", False))


class Buffer(metaclass=_BufferMeta):
    """Buffer(data=None, *, persistent=True): data (detached) marked so that
    assigning it as a Module attribute registers it as a buffer (persistent:
    in the state dict), as torch.nn.Buffer."""

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = _C.empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t
