"""torch.autograd.graph: the graph's Python face.

Node (the type of every grad_fn: the C struct of csrc/autograd/node.c),
GradientEdge / get_gradient_edge, increment_version, register_multi_grad_hook,
and the saved-tensor hooks: saved_tensors_hooks, save_on_cpu and
disable_saved_tensors_hooks over the per-thread hook stack of
csrc/autograd/saved_hooks.c. While a pair of hooks is in force, every tensor
a recorded op (or a custom Function's save_for_backward) keeps for backward
is given to pack_hook and the node keeps what it returns; unpack_hook turns
that back into a tensor each time the node's saved tensors are read (when the
node runs in backward, or grad_fn.args / ctx.saved_tensors are read).
"""
import abc
import contextlib
import threading
from collections import defaultdict
from typing import NamedTuple, Optional

from .. import _C
from ..utils.hooks import RemovableHandle
from .grad_mode import enable_grad

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks",
           "register_multi_grad_hook", "allow_mutation_on_saved_tensors", "Node",
           "GradientEdge", "get_gradient_edge", "increment_version", "queue_callback"]

_Tensor = _C.Tensor


class Node(abc.ABC):
    """The abstract type of autograd graph nodes. Every ``grad_fn`` (pycuda_sem's
    C node, ``_C._Node``) is an instance: ``name()``, ``next_functions``,
    ``metadata``, ``register_hook(fn)``, ``register_prehook(fn)``."""

    @abc.abstractmethod
    def name(self):
        raise NotImplementedError

    @property
    @abc.abstractmethod
    def next_functions(self):
        raise NotImplementedError

    @abc.abstractmethod
    def register_hook(self, fn):
        raise NotImplementedError

    @abc.abstractmethod
    def register_prehook(self, fn):
        raise NotImplementedError

    @classmethod
    def __subclasshook__(cls, subclass):
        if cls is Node and issubclass(subclass, _C._Node):
            return True
        return NotImplemented


def _get_grad_fn_or_grad_acc(t):
    """The node a gradient for t flows into: its grad_fn, or for a leaf its
    AccumulateGrad node (reached, as torch does, through a throwaway view)."""
    if isinstance(t, GradientEdge):
        return t.node
    if t.requires_grad and t.grad_fn is None:
        with enable_grad():
            node = t.view_as(t).grad_fn.next_functions[0][0]
    else:
        node = t.grad_fn
    if node is None:
        raise AssertionError("Expected gradient function to be set")
    return node


class GradientEdge(NamedTuple):
    """A gradient edge of the graph: ``node`` and which of its inputs
    (``output_nr``) the gradient feeds."""

    node: Node
    output_nr: int
    ownership_token: Optional[Node] = None


def get_gradient_edge(tensor):
    """The gradient edge of ``tensor``: ``(grad_fn, output_nr)``, or for a leaf
    ``(AccumulateGrad node, 0)``."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor "
                           "that does not require gradients")
    return GradientEdge(_get_grad_fn_or_grad_acc(tensor), tensor.output_nr)


def increment_version(tensor):
    """Bump the version counter of a tensor (or of each of a sequence of
    tensors), as an in-place op would: for writes autograd cannot see."""
    if isinstance(tensor, _Tensor):
        tensor = (tensor,)
    _C._increment_version(tuple(tensor))


def queue_callback(callback):
    """torch queues ``callback`` to run when the current backward ends; the
    C engine has no callback queue."""
    raise NotImplementedError("autograd.graph.queue_callback: pycuda_sem's autograd engine has "
                              "no end-of-backward callback queue")


# ---- saved tensor hooks ----------------------------------------------------------------

class saved_tensors_hooks:
    """Context manager: while active, every tensor saved for backward goes
    through ``pack_hook(tensor) -> Any``; the node keeps that object and calls
    ``unpack_hook(packed) -> Tensor`` when the saved tensor is needed. Nested
    blocks: the innermost pair applies. pack_hook runs with grad mode off; a
    saved output reaches it as an alias without autograd history (torch passes
    the output itself). A packed tensor's later in-place modification is not
    detected. unpack_hook must return a Tensor (``TypeError``)."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        _C._push_saved_tensors_default_hooks(self.pack_hook, self.unpack_hook)

    def __exit__(self, *args):
        _C._pop_saved_tensors_default_hooks()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are packed as CPU copies (pinned with ``pin_memory=True``)
    and copied back to their device when the backward needs them."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack_to_cpu(tensor):
            if not pin_memory:
                return (tensor.device, tensor.cpu())
            from .. import cuda
            packed = _C.empty(tuple(tensor.size()), dtype=tensor.dtype,
                              pin_memory=cuda.is_available())
            packed.copy_(tensor)
            return (tensor.device, packed)

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message):
    """Within the block, entering saved_tensors_hooks (or saving a tensor while
    hooks are on) raises ``RuntimeError(error_message)``."""
    maybe_prev_message = None
    try:
        maybe_prev_message = _C._saved_tensors_hooks_get_disabled_error_message()
        _C._saved_tensors_hooks_disable(error_message)
        yield
    finally:
        if maybe_prev_message is None:
            _C._saved_tensors_hooks_enable()
        else:
            _C._saved_tensors_hooks_disable(maybe_prev_message)


@contextlib.contextmanager
def allow_mutation_on_saved_tensors():
    """torch clones a saved tensor before an in-place op modifies it; that
    needs a dispatch-mode hook on every in-place op, which pycuda_sem lacks."""
    raise NotImplementedError("autograd.graph.allow_mutation_on_saved_tensors: pycuda_sem has no "
                              "dispatch mode to clone saved tensors before in-place ops")
    yield  # pragma: no cover


# ---- multi-tensor gradient hooks ---------------------------------------------------------

class _MultiHandle(RemovableHandle):
    """Removes every per-tensor hook of one register_multi_grad_hook call."""

    def __init__(self, handles):  # noqa: D107 - no RemovableHandle state of its own
        self.handles = handles

    def remove(self):
        for handle in self.handles:
            handle.remove()

    def __enter__(self):
        return self

    def __exit__(self, *args):
        self.remove()

    def __getstate__(self):
        return self.handles

    def __setstate__(self, state):
        self.handles = state


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """``mode="all"``: ``fn(grads)`` once the gradients of all ``tensors`` that
    this backward computes are ready (``None`` for those it does not);
    ``mode="any"``: ``fn(grad)`` with the first of them. Returns a handle."""
    supported_modes = ("all", "any")
    if mode not in supported_modes:
        raise ValueError(f"Expects mode to be one of {supported_modes} but got {mode}")
    tensors = tuple(tensors)
    lock = threading.Lock()
    if mode == "all":
        count = {}
        nb_calls = {}
        buffer = {}
        grad_fns = list(map(_get_grad_fn_or_grad_acc, tensors))
        len_tensors = len(tensors)

        def get_inner_hook(idx):
            def inner_hook(grad):
                task = _C._current_graph_task_id()
                if task == -1:
                    raise AssertionError("expected this hook to be called inside a backward call")
                with lock:
                    curr = count.get(task, 0)
                    count[task] = curr + 1
                    if curr == 0:  # first call of this backward: how many will come
                        nb_calls[task] = sum(map(_C._will_engine_execute_node, grad_fns))
                        buffer[task] = [None] * len_tensors
                buffer[task][idx] = grad
                if curr == nb_calls[task] - 1:
                    grads = buffer.pop(task)
                    del count[task], nb_calls[task]
                    fn(grads)
            return inner_hook

        handles = tuple(t.register_hook(get_inner_hook(i)) for i, t in enumerate(tensors))
    else:
        ran_hook = defaultdict(bool)

        def wrapped_fn(grad):
            task = _C._current_graph_task_id()
            if task == -1:
                raise AssertionError("expected this hook to be called inside a backward call")
            with lock:
                prev, ran_hook[task] = ran_hook[task], True
            if prev:
                return
            fn(grad)

        handles = tuple(t.register_hook(wrapped_fn) for t in tensors if t.requires_grad)
    return _MultiHandle(handles)
