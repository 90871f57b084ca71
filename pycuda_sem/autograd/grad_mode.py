"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode.

Each is a context manager and a decorator (of functions and of generator
functions, whose every resumption then runs under the mode), over the
thread-local switches in C (csrc/autograd/grad_mode.c): a mode set in one
thread is not seen by another, as in torch. Leaving a block restores the
mode that was in force when it was entered, also when the block raises.
"""
import functools
import inspect
import sys
import threading

from .. import _C

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled"]

is_grad_enabled = _C.is_grad_enabled
is_inference_mode_enabled = _C.is_inference_mode_enabled


def _run_generator_under(make_ctx, gen):
    """Drive generator `gen`, entering a fresh mode context around each step."""
    try:
        with make_ctx():
            value = gen.send(None)
        while True:
            try:
                sent = yield value
            except GeneratorExit:
                with make_ctx():
                    gen.close()
                raise
            except BaseException:  # noqa: BLE001 - forwarded into the generator
                with make_ctx():
                    value = gen.throw(*sys.exc_info())
            else:
                with make_ctx():
                    value = gen.send(sent)
    except StopIteration as stop:
        return stop.value


class _ModeContext:
    """Base of the modes: subclasses set the switches in __enter__ and put
    them back in __exit__; clone() makes a fresh one for each decorated call."""

    def clone(self):
        return self.__class__()

    def __call__(self, func):
        if inspect.isclass(func):
            raise TypeError("%s cannot decorate a class; decorate its methods"
                            % type(self).__name__)
        make_ctx = self.clone
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def gen_wrapper(*args, **kwargs):
                return (yield from _run_generator_under(make_ctx, func(*args, **kwargs)))
            return gen_wrapper

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with make_ctx():
                return func(*args, **kwargs)
        return wrapper


class _BareDecorator(_ModeContext):
    """Also usable as a bare decorator: @no_grad as well as @no_grad()."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_BareDecorator):
    """Turn gradient recording off inside the block (results of ops do not
    require grad even when their inputs do)."""

    def __enter__(self):
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(False)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)


class enable_grad(_BareDecorator):
    """Turn gradient recording back on inside the block (inside no_grad)."""

    def __enter__(self):
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(True)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)


class set_grad_enabled(_ModeContext):
    """set_grad_enabled(mode): sets the mode at once when called as a function,
    and for a block as a context manager (restoring the previous mode at its
    end), or for each call of a function it decorates."""

    def __init__(self, mode):
        if not isinstance(mode, bool):
            raise TypeError("set_grad_enabled(): argument 'mode' must be bool, not %s"
                            % type(mode).__name__)
        self._prev = _C.is_grad_enabled()
        self.mode = mode
        _C._set_grad_enabled(mode)

    def __call__(self, func):
        _C._set_grad_enabled(self._prev)  # a decorator sets nothing until called
        return super().__call__(func)

    def __enter__(self):
        _C._set_grad_enabled(self.mode)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)

    def clone(self):
        prev = _C.is_grad_enabled()
        ctx = self.__class__(self.mode)
        _C._set_grad_enabled(prev)
        ctx._prev = prev
        return ctx


class inference_mode(_ModeContext):
    """inference_mode(mode=True): no gradient recording and no version
    bookkeeping inside the block. inference_mode(False) leaves the grad mode
    as it is and turns inference mode off."""

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # bare @inference_mode on a function

    def __init__(self, mode=True):
        self.mode = mode

    def __enter__(self):
        self._prev = (_C.is_grad_enabled(), _C.is_inference_mode_enabled())
        if self.mode:
            _C._set_grad_enabled(False)
        _C._set_inference_mode(self.mode)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev[0])
        _C._set_inference_mode(self._prev[1])

    def clone(self):
        return self.__class__(self.mode)


# ---- switches torch has that change nothing here ----------------------------------------
# The engine runs every backward on the calling thread and never replays views, so
# these only store the flag (per thread, as torch's) for code that sets and reads it.

_flags = threading.local()


def is_multithreading_enabled():
    """Whether multithreaded backward is on (the flag only: pycuda_sem's engine
    always runs a backward on the calling thread)."""
    return getattr(_flags, "multithreading", True)


class set_multithreading_enabled(_ModeContext):
    """set_multithreading_enabled(mode): sets the flag at once, and restores the
    previous value at the end of a ``with`` block (or around each decorated call)."""

    def __init__(self, mode):
        if not isinstance(mode, bool):
            raise TypeError("set_multithreading_enabled(): argument 'mode' must be bool, not %s"
                            % type(mode).__name__)
        self.prev = is_multithreading_enabled()
        self.mode = mode
        _flags.multithreading = mode

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _flags.multithreading = self.prev

    def clone(self):
        return self.__class__(self.mode)


def is_view_replay_enabled():
    """Whether autograd replays view chains (the flag only; False unless set)."""
    return getattr(_flags, "view_replay", False)


class _force_original_view_tracking(_ModeContext):
    """Sets the view-replay flag at once / for a block, as torch's (no effect on
    the engine, which rebuilds no views)."""

    def __init__(self, mode):
        self.prev = is_view_replay_enabled()
        self.mode = bool(mode)
        _flags.view_replay = self.mode

    def __call__(self, func):
        _flags.view_replay = self.prev  # a decorator sets nothing until called
        return super().__call__(func)

    def __enter__(self):
        _flags.view_replay = self.mode

    def __exit__(self, *exc):
        _flags.view_replay = self.prev

    def clone(self):
        return self.__class__(self.mode)
