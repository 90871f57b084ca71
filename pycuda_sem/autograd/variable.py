"""torch.autograd.Variable as torch has it today: a name kept for old code.
Variable(t) returns t.detach() (a new tensor sharing t's storage) with the
requested requires_grad, and every tensor is an instance of Variable; the
legacy note's `x = Variable(x.type(dtype))` runs unchanged."""
import warnings

from .. import _C

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, _C.Tensor)


class Variable(metaclass=_VariableMeta):
    """Variable(data=None, requires_grad=False, volatile=False) -> Tensor."""

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` "
                          "instead.", UserWarning, stacklevel=2)
        if not isinstance(requires_grad, bool):
            raise TypeError("Variable(): argument 'requires_grad' must be bool, not %s"
                            % type(requires_grad).__name__)
        if data is None:
            t = _C.empty(0)
        elif isinstance(data, _C.Tensor):
            t = data.detach()
        else:
            raise TypeError("Variable data has to be a tensor, but got %s" % type(data).__name__)
        if requires_grad:
            t.requires_grad_(True)
        return t
