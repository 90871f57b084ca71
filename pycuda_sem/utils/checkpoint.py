"""torch.utils.checkpoint: activation checkpointing. checkpoint(fn, *args)
runs fn without recording a graph, keeps only its inputs, and in backward
runs fn again with the graph recorded and backs through it; memory for
compute. The random-number state (CPU, and CUDA when initialised) is saved
before the forward and restored for the recomputation, so dropout draws
the same mask (preserve_rng_state=True, as torch). The reentrant and
non-reentrant flavours give the same gradients here; both are this one
implementation. context_fn's two context managers wrap the forward and the
recomputation. torch's helpers around it (detach_variable,
get/set_device_states, the debug and early-stop switches) are here too;
selective checkpointing (create_selective_checkpoint_contexts) needs an op
dispatch hook this package does not have and raises NotImplementedError."""
import contextlib
import enum
import warnings

import pycuda_sem as _t

from ..autograd.function import Function

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction",
           "check_backward_validity", "detach_variable", "get_device_states",
           "set_device_states", "noop_context_fn", "set_checkpoint_early_stop",
           "DefaultDeviceType", "set_checkpoint_debug_enabled", "CheckpointPolicy",
           "SelectiveCheckpointContext", "create_selective_checkpoint_contexts"]

# what set_checkpoint_debug_enabled / set_checkpoint_early_stop set for a block
# (None: each checkpoint call's own argument decides)
_checkpoint_debug_enabled = None
_enable_checkpoint_early_stop = None


class CheckpointError(RuntimeError):
    """Raised when a recomputation does not match the forward (torch's class)."""


def noop_context_fn():
    """The default context_fn: two context managers that do nothing."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs):
    """The tuple's tensors detached, each keeping its requires_grad; other
    items as they are."""
    if not isinstance(inputs, tuple):
        raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: %s"
                           % type(inputs).__name__)
    out = []
    for inp in inputs:
        if isinstance(inp, _t.Tensor):
            x = inp.detach()
            x.requires_grad = inp.requires_grad
            inp = x
        out.append(inp)
    return tuple(out)


def check_backward_validity(inputs):
    """Warn when no input tensor requires grad (the gradients would be None)."""
    if not any(i.requires_grad for i in inputs if isinstance(i, _t.Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=2)


class DefaultDeviceType:
    """The device type whose RNG states checkpointing saves when no tensor
    says otherwise: 'cuda' unless set."""
    _default_device_type = "cuda"

    @staticmethod
    def set_device_type(device="cuda"):
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type():
        return DefaultDeviceType._default_device_type


def get_device_states(*args):
    """(device ids, RNG states): the index of every CUDA tensor among args
    (nested containers searched; repeats kept, as torch) and the generator
    state of each."""
    from ._pytree import tree_leaves
    ids = [a.get_device() for a in tree_leaves(args)
           if isinstance(a, _t.Tensor) and a.device.type not in ("cpu", "meta")]
    return ids, [_t.cuda.get_rng_state(i) for i in ids]


def set_device_states(devices, states, *, device_type=None):
    """Restore states (from get_device_states) on those devices."""
    if device_type is None:
        device_type = DefaultDeviceType.get_device_type()
    if device_type == "meta":
        return
    mod = _t.get_device_module(device_type)
    for device, state in zip(devices, states):
        mod.set_rng_state(state, device)


class set_checkpoint_early_stop:
    """Context manager: whether the non-reentrant recomputation stops once
    it has what backward needs, for checkpoints run inside the block. The
    setting is kept for code that reads it; recomputation here always runs
    the whole function (the gradients are the same)."""

    def __init__(self, enable):
        self.enable = enable

    def __enter__(self):
        global _enable_checkpoint_early_stop
        self.prev = _enable_checkpoint_early_stop
        _enable_checkpoint_early_stop = self.enable

    def __exit__(self, *exc):
        global _enable_checkpoint_early_stop
        _enable_checkpoint_early_stop = self.prev


class set_checkpoint_debug_enabled:
    """Context manager: turn checkpoint(debug=...) on or off (None: each
    call's argument) for checkpoints run inside the block. Kept for code
    that sets it; this package records no op traces for the report."""

    def __init__(self, enabled):
        self.enabled = enabled

    def __enter__(self):
        global _checkpoint_debug_enabled
        self.prev = _checkpoint_debug_enabled
        _checkpoint_debug_enabled = self.enabled

    def __exit__(self, *exc):
        global _checkpoint_debug_enabled
        _checkpoint_debug_enabled = self.prev


class CheckpointPolicy(enum.Enum):
    """Selective checkpointing's per-op decisions (torch's enum)."""
    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


class SelectiveCheckpointContext:
    """What a selective-checkpoint policy function receives (torch's class)."""

    def __init__(self, *, is_recompute):
        self.is_recompute = is_recompute


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    """Not implemented: selective checkpointing decides per op which
    results to keep, which needs an op dispatch hook pycuda_sem lacks."""
    raise NotImplementedError("create_selective_checkpoint_contexts: selective activation "
                              "checkpointing is not implemented in pycuda_sem (it needs per-op "
                              "dispatch); checkpoint() recomputes the whole function")


class _Contexts:
    """run_function inside context_fn's first context manager on the
    forward call and inside its second on the recomputation."""

    def __init__(self, fn, context_fn):
        self.fn, self.calls = fn, 0
        self.forward_ctx, self.recompute_ctx = context_fn()

    def __call__(self, *args):
        ctx = self.forward_ctx if self.calls == 0 else self.recompute_ctx
        self.calls += 1
        with ctx:
            return self.fn(*args)


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


class CheckpointFunction(Function):
    """The autograd Function checkpoint() applies:
    CheckpointFunction.apply(run_function, preserve_rng_state, *args)."""

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


_Checkpoint = CheckpointFunction


def checkpoint(function, *args, use_reentrant=None, preserve_rng_state=True,
               context_fn=noop_context_fn, determinism_check="default", debug=False,
               early_stop=True, respect_saved_tensors_hooks=None, **kwargs):
    """function(*args, **kwargs) with its activations recomputed in backward
    instead of kept. context_fn() gives two context managers: the forward
    runs in the first, the recomputation in the second."""
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
    # unset means reentrant, torch's default after the warning
    reentrant = True if use_reentrant is None else use_reentrant
    if reentrant and (context_fn not in (None, noop_context_fn) or debug
                          or respect_saved_tensors_hooks is not None):
        raise ValueError("Passing `context_fn`, `debug`, or `respect_saved_tensors_hooks` is only "
                         "supported when use_reentrant=False.")
    if context_fn not in (None, noop_context_fn):
        function = _Contexts(function, context_fn)
    return CheckpointFunction.apply(function, preserve_rng_state, *args)


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
