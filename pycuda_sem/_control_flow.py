"""torch.cond and torch.while_loop, the higher-order control-flow ops, run
eagerly: the predicate is read on the host and the chosen branch (or the
loop body) is simply called, so autograd records the branch actually taken
and gradients flow through it. (torch traces both branches for export; with
no tracer here there is nothing else to do.) torch.fork / torch.wait are
jit.fork / jit.wait."""
from . import _C
from .jit import fork, wait  # noqa: F401 - torch.fork / torch.wait

__all__ = ["cond", "while_loop", "fork", "wait"]


def _truth(value, what):
    if isinstance(value, _C.Tensor):
        if value.numel() != 1:
            raise RuntimeError("Expected %s to be bool or single-element tensor, but got %r." % (what, value))
        return bool(value.item())
    if isinstance(value, (bool, int)):
        return bool(value)
    raise RuntimeError("Expected %s to be bool or single-element tensor, but got %s."
                       % (what, type(value).__name__))


def _operands(operands, what):
    if not isinstance(operands, (tuple, list)):
        raise RuntimeError("Expect %s to be a tuple or list of tensors, but got %s."
                           % (what, type(operands).__name__))
    return tuple(operands)


def cond(pred, true_fn, false_fn, operands=()):
    """true_fn(*operands) if pred else false_fn(*operands); pred is a bool or
    a one-element tensor."""
    ops = _operands(operands, "operands")
    branch = true_fn if _truth(pred, "pred") else false_fn
    return branch(*ops)


def while_loop(cond_fn, body_fn, carried_inputs):
    """Repeat ``carried = body_fn(*carried)`` while cond_fn(*carried) holds
    (a bool or one-element tensor); the final carried values come back."""
    carried = _operands(carried_inputs, "carried_inputs")
    out = carried
    while _truth(cond_fn(*carried), "cond_fn's output"):
        out = body_fn(*carried)
        nxt = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        if len(nxt) != len(carried):
            raise RuntimeError("Expected body_fn_output and carried_inputs to have same number of outputs "
                               "but got %d and %d" % (len(nxt), len(carried)))
        carried = nxt
    return out
