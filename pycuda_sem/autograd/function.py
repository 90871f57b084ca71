"""torch.autograd.Function: user-defined differentiable operations.

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):               # or forward(x) + setup_context(ctx, inputs, output)
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad_y):         # one gradient per forward input
            y, = ctx.saved_tensors
            return grad_y * y

    y = Exp.apply(x)

`apply` makes the node first (`_C._FunctionCtx(args)`: it is the ctx forward sees,
and becomes y.grad_fn), runs forward with grad mode off, then wires the node to
the inputs and outputs (`_C._function_wire`). The ctx methods (save_for_backward,
saved_tensors, needs_input_grad, mark_dirty, mark_non_differentiable,
set_materialize_grads) are the C node's own. The engine calls the class's
`_backward_fn(ctx, *grads)`, which runs the user's backward and checks the
number of gradients it returned, with torch's message.
"""
import functools
import inspect
import warnings

from .. import _C
from .grad_mode import no_grad

__all__ = ["Function", "FunctionCtx", "once_differentiable", "InplaceFunction"]

# The type of ctx objects: the C node type (every grad_fn is one; in torch only
# custom Functions' nodes are FunctionCtx instances).
FunctionCtx = type(_C._FunctionCtx()) if hasattr(_C, "_FunctionCtx") else None
_Tensor = _C.Tensor


def _make_backward_fn(cls):
    """The function the engine calls for nodes of `cls`: the user's backward
    (or vjp), its result made a tuple of exactly one gradient per forward input."""
    name = cls.__name__ + "Backward"

    def backward_fn(ctx, *grads):
        user_backward = cls.backward
        if cls.vjp is not Function.vjp:
            if user_backward is not Function.backward:
                raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function "
                                   "is not allowed. You should only implement one of them.")
            user_backward = cls.vjp
        result = user_backward(ctx, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        is_tensor = ctx._pcs_is_tensor
        expected = len(is_tensor)
        if len(result) > expected and all(r is None for r in result[expected:]):
            result = result[:expected]
        if len(result) != expected:
            raise RuntimeError("function %s returned an incorrect number of gradients "
                               "(expected %d, got %d)" % (name, expected, len(result)))
        for i, (r, tensor_arg) in enumerate(zip(result, is_tensor)):
            if r is not None and not tensor_arg:
                raise RuntimeError("function %s returned a gradient different than None at "
                                   "position %d, but the corresponding forward input was not "
                                   "a Variable" % (name, i + 1))
        return result

    backward_fn.__name__ = backward_fn.__qualname__ = name
    return backward_fn


class FunctionMeta(type):
    """Gives each Function subclass its node name and backward entry point."""

    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_fn = staticmethod(_make_backward_fn(cls))
        cls._node_name = name + "Backward"


class Function(metaclass=FunctionMeta):
    """Base class of custom differentiable operations: subclass it, write the
    static methods forward and backward (and optionally setup_context), and
    call ``YourFunction.apply(*args)``."""

    generate_vmap_rule = False

    def __init__(self, *args, **kwargs):
        warnings.warn("%s should not be instantiated. Methods on autograd functions are all "
                      "static, so you should invoke them on the class itself. Instantiating an "
                      "autograd function will raise an error in a future version of PyTorch."
                      % self.__class__, DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is "
                           "deprecated. Please use new-style autograd function with static "
                           "forward method. (Example: https://pytorch.org/docs/stable/"
                           "autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode AD.")

    @staticmethod
    def vjp(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode AD.")

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        setup_context = cls.setup_context is not Function.setup_context
        if setup_context:
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args = bound.args
        elif kwargs:
            raise TypeError("apply() takes no keyword arguments")
        ctx = _C._FunctionCtx(args)  # knows the inputs: needs_input_grad works in forward
        if args and not ctx.needs_input_grad:  # grad mode off or no input requiring it: no inputs taken
            ctx.needs_input_grad = tuple(isinstance(a, _Tensor) and a.requires_grad for a in args)
        ctx._pcs_is_tensor = tuple(isinstance(a, _Tensor) for a in args)
        with no_grad():
            if setup_context:
                output = cls.forward(*args)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args)
        return _C._function_wire(ctx, cls._backward_fn, args, output, cls._node_name)


class InplaceFunction(Function):
    """A Function with an ``inplace`` flag (torch.autograd.function.InplaceFunction)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


# ---- once_differentiable -------------------------------------------------------------------

class _DelayedError(Function):
    """Identity whose backward raises: marks gradients that must not be
    differentiated again."""

    @staticmethod
    def forward(ctx, msg, *tensors):
        ctx.msg = msg
        out = tuple(t.detach() if isinstance(t, _Tensor) else t for t in tensors)
        return out if len(out) != 1 else out[0]

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(ctx.msg)


def once_differentiable(fn):
    """Decorate a Function's backward that is not itself differentiable: it
    runs under no_grad, and differentiating its result (create_graph=True
    then a second backward) raises instead of silently giving zeros."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            outputs = fn(ctx, *args)
        if not _C.is_grad_enabled():
            return outputs
        if not any(isinstance(a, _Tensor) and a.requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        outs = list((outputs,) if single else outputs)
        where = [i for i, o in enumerate(outs) if isinstance(o, _Tensor)]
        if not where:
            return outputs
        fake = []
        for i in where:
            o = outs[i].detach()
            o.requires_grad_(True)
            fake.append(o)
        wrapped = _DelayedError.apply("trying to differentiate twice a function that was marked "
                                      "with @once_differentiable", *fake)
        wrapped = wrapped if isinstance(wrapped, tuple) else (wrapped,)
        for i, w in zip(where, wrapped):
            outs[i] = w
        return outs[0] if single else tuple(outs)

    return wrapper
