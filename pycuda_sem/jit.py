"""torch.jit, in eager mode: the decorators and queries model code uses.

There is no TorchScript here. script() and trace() return what they are
given, so @torch.jit.script functions and modules run as ordinary Python
(the same results, eagerly); is_scripting() and is_tracing() are False, so
the eager branches model code keeps for them are taken; ignore, unused,
export and interface are pass-through decorators. Saving or loading
TorchScript archives raises NotImplementedError (pycuda_sem.save and load
write torch's checkpoint format).
"""
import typing

Final = typing.Final


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """obj itself: it runs eagerly."""
    return obj


def trace(func, example_inputs=None, *args, **kwargs):
    """func itself: it runs eagerly (no graph is recorded)."""
    return func


def trace_module(mod, inputs, *args, **kwargs):
    return mod


def is_scripting():
    """False: code never runs under TorchScript here."""
    return False


def is_tracing():
    """False: no tracer runs here."""
    return False


def ignore(drop=False, **kwargs):
    """@ignore or @ignore(drop=...): the function unchanged."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    return fn


def export(fn):
    return fn


def interface(obj):
    return obj


def annotate(the_type, the_value):
    """the_value: the type is only for the TorchScript compiler."""
    return the_value


def _unavailable(what):
    raise NotImplementedError("torch.jit.%s: TorchScript archives are not supported by pycuda_sem "
                              "(use pycuda_sem.save / pycuda_sem.load for checkpoints)" % what)


def save(m, f, _extra_files=None):
    _unavailable("save")


def load(f, map_location=None, _extra_files=None):
    _unavailable("load")


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """mod itself (nothing to freeze without a compiler)."""
    return mod


class _Future:
    def __init__(self, value):
        self._value = value

    def wait(self):
        return self._value


def fork(func, *args, **kwargs):
    """Runs func now and returns a future holding its result."""
    return _Future(func(*args, **kwargs))


def wait(future):
    return future.wait()


class ScriptModule:
    """Nothing here is a ScriptModule (isinstance checks answer False)."""


class ScriptFunction:
    """Nothing here is a ScriptFunction."""
