"""Module backward hooks (register_full_backward_hook / _pre_hook).

A call of a module that has backward hooks routes its tensor inputs and its
tensor outputs through two identity autograd Functions. The one on the
outputs sees the gradients of the outputs first: it runs the pre-hooks
(which may replace them) and keeps them; the one on the inputs sees the
gradients of the inputs last and runs the hooks with
(module, grad_input, grad_output), any of which may replace grad_input. A
call whose inputs need no gradient runs the hooks from the output side with
grad_input all None, as torch does. The identities are views of their
operands (detach), so the module's parameters and the rest of the graph are
untouched; only the hooked call pays for them."""
from ...autograd.function import Function
from ..._C import Tensor as _Tensor


class _Identity(Function):
    """Passes its tensors through; its backward hands their gradients to
    ctx.on_grads, whose return value (a tuple as long) is the gradient."""

    @staticmethod
    def forward(ctx, on_grads, *tensors):
        ctx.on_grads = on_grads
        return tuple(t.detach() for t in tensors)

    @staticmethod
    def backward(ctx, *grads):
        return (None,) + tuple(ctx.on_grads(grads))


def _check(new, old, what):
    if new is None:
        return old
    new = tuple(new) if isinstance(new, (tuple, list)) else (new,)
    if len(new) != len(old):
        raise RuntimeError("Backward hook returned an invalid number of %s, got %d, but expected %d"
                           % (what, len(new), len(old)))
    return new


class BackwardHook:
    """The state of one hooked call: what the output side saw, for the
    input side."""

    def __init__(self, module, hooks, pre_hooks):
        self.module, self.hooks, self.pre_hooks = module, hooks, pre_hooks
        self.grad_outputs = None
        self.n_inputs = 0
        self.inputs_hooked = False

    def _run_hooks(self, grad_inputs):
        for hook in self.hooks:
            r = hook(self.module, grad_inputs, self.grad_outputs)
            grad_inputs = _check(r, grad_inputs, "grad_input")
        return grad_inputs

    def setup_inputs(self, args):
        """args with each tensor that requires grad routed through the
        input-side identity."""
        idx = [i for i, a in enumerate(args) if isinstance(a, _Tensor)]
        self.n_inputs = len(idx)
        grad_idx = [i for i in idx if args[i].requires_grad]
        if not grad_idx or not self.hooks:
            return args

        # tensor inputs that need no gradient read as zeros, as torch's
        others = {k: args[i] for k, i in enumerate(idx) if i not in grad_idx}

        def on_input_grads(grads):
            from ... import zeros_like
            full = [None] * self.n_inputs
            pos = {i: k for k, i in enumerate(idx)}
            for k, a in others.items():
                full[k] = zeros_like(a)
            for i, g in zip(grad_idx, grads):
                full[pos[i]] = g
            full = self._run_hooks(tuple(full))
            return tuple(full[pos[i]] for i in grad_idx)

        self.inputs_hooked = True
        outs = _Identity.apply(on_input_grads, *[args[i] for i in grad_idx])
        args = list(args)
        for i, o in zip(grad_idx, outs):
            args[i] = o
        return tuple(args)

    def setup_outputs(self, result):
        """result with its tensors that require grad routed through the
        output-side identity."""
        single = isinstance(result, _Tensor)
        items = [result] if single else (list(result) if isinstance(result, (tuple, list)) else None)
        if items is None:
            return result
        idx = [i for i, r in enumerate(items) if isinstance(r, _Tensor) and r.requires_grad]
        if not idx:
            return result

        def on_output_grads(grads):
            grads = tuple(grads)
            for hook in self.pre_hooks:
                r = hook(self.module, grads)
                grads = _check(r, grads, "grad_output")
            self.grad_outputs = grads
            if self.hooks and not self.inputs_hooked:
                # no input needs a gradient: the hooks run now, with None
                self._run_hooks((None,) * self.n_inputs)
            return grads

        outs = _Identity.apply(on_output_grads, *[items[i] for i in idx])
        for i, o in zip(idx, outs):
            items[i] = o
        if single:
            return items[0]
        if isinstance(result, tuple):
            return type(result)(*items) if hasattr(result, "_fields") else tuple(items)
        return items


def call_with_backward_hooks(module, args, kwargs, run):
    """module's call through run(*args, **kwargs) (its forward, with the
    forward hooks or not), with its backward hooks wired around it."""
    from ...autograd.grad_mode import is_grad_enabled
    if not is_grad_enabled():
        return run(*args, **kwargs)
    bw = BackwardHook(module, list(module._backward_hooks.values()),
                      list(module._backward_pre_hooks.values()))
    args = bw.setup_inputs(args)
    return bw.setup_outputs(run(*args, **kwargs))
