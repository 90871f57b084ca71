"""torch.utils.checkpoint: activation checkpointing. checkpoint(fn, *args)
runs fn without recording a graph, keeps only its inputs, and in backward
runs fn again with the graph recorded and backs through it; memory for
compute. The random-number state (CPU, and CUDA when initialised) is saved
before the forward and restored for the recomputation, so dropout draws
the same mask (preserve_rng_state=True, as torch). The reentrant and
non-reentrant flavours give the same gradients here; both are this one
implementation."""
import warnings

import pycuda_sem as _t

from ..autograd.function import Function

__all__ = ["checkpoint", "checkpoint_sequential"]


def _rng_states(preserve):
    if not preserve:
        return None
    cuda = _t.cuda.get_rng_state_all() if _t.cuda.is_initialized() else None
    return _t.get_rng_state(), cuda


def _set_rng_states(states):
    if states is None:
        return
    cpu, cuda = states
    _t.set_rng_state(cpu)
    if cuda is not None:
        _t.cuda.set_rng_state_all(cuda)


class _Checkpoint(Function):
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        ctx.run_function = run_function
        ctx.rng = _rng_states(preserve_rng_state)
        ctx.tensor_slots = [i for i, a in enumerate(args) if isinstance(a, _t.Tensor)]
        ctx.others = [None if isinstance(a, _t.Tensor) else a for a in args]
        ctx.save_for_backward(*[args[i] for i in ctx.tensor_slots])
        with _t.no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        saved = ctx.saved_tensors
        args = list(ctx.others)
        inputs = []
        for slot, t in zip(ctx.tensor_slots, saved):
            d = t.detach()
            d.requires_grad_(t.requires_grad)
            args[slot] = d
            inputs.append(d)
        now = _rng_states(ctx.rng is not None)
        _set_rng_states(ctx.rng)
        try:
            with _t.enable_grad():
                outputs = ctx.run_function(*args)
        finally:
            _set_rng_states(now)
        if isinstance(outputs, _t.Tensor):
            outputs = (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads)
                 if isinstance(o, _t.Tensor) and o.requires_grad and g is not None]
        if pairs:
            _t.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        tensor_grads = iter([d.grad if d.requires_grad else None for d in inputs])
        out = []
        for i in range(len(args)):
            out.append(next(tensor_grads) if i in ctx.tensor_slots else None)
        return (None, None) + tuple(out)


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check="default",
               debug=False, preserve_rng_state=True, **kwargs):
    """function(*args, **kwargs) with its activations recomputed in backward
    instead of kept."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed "
                      "explicitly. In version 2.5 we will raise an exception if use_reentrant is "
                      "not passed. use_reentrant=False is recommended, but if you need to "
                      "preserve the current default behavior, you can pass use_reentrant=True. "
                      "Refer to docs for more details on the differences between the two "
                      "variants.", stacklevel=2)
    if kwargs:
        fn = function

        def function(*a):
            return fn(*a, **kwargs)
    if context_fn is not None:
        raise NotImplementedError("checkpoint(context_fn=...) is not implemented in pycuda_sem")
    return _Checkpoint.apply(function, preserve_rng_state, *args)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """A Sequential (or list of modules) run in `segments` checkpointed
    chunks; the last chunk runs normally, as torch's."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter "
                      "should be passed explicitly.", stacklevel=2)
        use_reentrant = True
    mods = list(functions.children()) if isinstance(functions, _t.nn.Module) else list(functions)
    size = len(mods) // segments if segments else len(mods)

    def run(start, end):
        def forward(x):
            for m in mods[start:end + 1]:
                x = m(x)
            return x
        return forward

    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, **kwargs)
    return run(end + 1, len(mods) - 1)(input)
