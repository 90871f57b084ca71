"""torch._dynamo, as far as scripts touch it around torch.compile.

compile() runs eagerly here (_compile.py), so there is no graph capture for
these to steer: config accepts and keeps any setting, reset() has nothing to
clear, disable()/allow_in_graph() return their function, mark_dynamic and
mark_static record nothing, and is_compiling() is False. Each keeps torch's
signature and argument checks, so code written for the compiler runs
unchanged and computes the same numbers.
"""
import types as _types

__all__ = ["config", "reset", "disable", "allow_in_graph", "mark_dynamic", "mark_static",
           "is_compiling", "optimize", "explain"]


class _Config(_types.SimpleNamespace):
    """torch._dynamo.config: settings are kept (read back as set) and steer nothing here."""

    def patch(self, *args, **kwargs):
        """Context manager / decorator setting options for a block."""
        import contextlib
        changes = dict(args[0]) if args and isinstance(args[0], dict) else {}
        if len(args) == 2 and isinstance(args[0], str):
            changes[args[0]] = args[1]
        changes.update(kwargs)

        @contextlib.contextmanager
        def cm():
            old = {k: getattr(self, k, None) for k in changes}
            for k, v in changes.items():
                setattr(self, k, v)
            try:
                yield
            finally:
                for k, v in old.items():
                    setattr(self, k, v)
        return cm()


config = _Config(cache_size_limit=8, accumulated_cache_size_limit=256, suppress_errors=False,
                 verbose=False, capture_scalar_outputs=False, capture_dynamic_output_shape_ops=False,
                 optimize_ddp=True, automatic_dynamic_shapes=True, assume_static_by_default=True,
                 recompile_limit=8)


def reset():
    """Nothing is cached: compile() runs eagerly."""


def disable(fn=None, recursive=True, *, reason=None, wrapping=True):
    """fn itself (it already runs eagerly); with fn None, a decorator."""
    if fn is None:
        return lambda f: f
    if not callable(fn):
        raise TypeError("disable(): fn must be callable, got %s" % type(fn).__name__)
    return fn


def allow_in_graph(fn):
    if not callable(fn) and not isinstance(fn, (list, tuple)):
        raise TypeError("allow_in_graph expects a callable")
    return fn


def _check_tensor(t, name):
    from .. import _C
    if not isinstance(t, _C.Tensor):
        raise TypeError("%s(): expected a tensor, got %s" % (name, type(t).__name__))


def mark_dynamic(t, index, *, hint_override=None, min=None, max=None, specialize_on=None):  # noqa: A002
    """Records nothing: without graph capture every shape is dynamic."""
    _check_tensor(t, "mark_dynamic")


def mark_static(t, index=None):
    _check_tensor(t, "mark_static")


def is_compiling():
    """False: nothing here is traced."""
    return False


def optimize(backend="inductor", *, nopython=False, guard_export_fn=None, guard_fail_fn=None,
             disable=False, dynamic=None):
    """The old spelling of compile(): a decorator that returns its function."""
    return lambda fn: fn


def explain(fn, *args, **kwargs):
    raise NotImplementedError("torch._dynamo.explain: pycuda_sem has no graph capture "
                              "(compile runs eagerly)")
