"""pycuda_sem.overrides: the __torch_function__ protocol helpers of
torch.overrides, for Python code that implements the protocol itself.

pycuda_sem.Tensor has no __torch_function__ and pycuda_sem's own ops (C
functions) do not consult it, so a Tensor subclass or a tensor-like class
that defines __torch_function__ is NOT intercepted by pycuda_sem.add and the
like. What works is the part a Python library writes: a function that checks
has_torch_function(...) and hands its call to handle_torch_function, which
calls the arguments' __torch_function__ overrides in torch's order
(subclasses before their parents, otherwise left to right, stopping at the
first result that is not NotImplemented). TorchFunctionMode exists for
subclassing, but entering one raises NotImplementedError: no op dispatches
through modes here.
"""
import functools as _functools

from . import _C

__all__ = ["get_ignored_functions", "get_overridable_functions", "get_testing_overrides",
           "get_default_nowrap_functions", "handle_torch_function", "has_torch_function",
           "has_torch_function_unary", "has_torch_function_variadic", "is_tensor_like",
           "is_tensor_method_or_property", "wrap_torch_function", "TorchFunctionMode",
           "BaseTorchFunctionMode", "resolve_name"]


def _override_of(obj):
    """The __torch_function__ of obj's type, or None when it has none (a plain
    pycuda_sem.Tensor has none)."""
    f = getattr(type(obj), "__torch_function__", None)
    # a default Tensor.__torch_function__ (torch's is one) is not an override
    return None if f is not None and f is getattr(_C.Tensor, "__torch_function__", None) else f


def has_torch_function(relevant_args):
    """True when some argument's type defines __torch_function__."""
    return any(_override_of(a) is not None for a in relevant_args)


def has_torch_function_unary(input):
    """has_torch_function((input,))."""
    return _override_of(input) is not None


def has_torch_function_variadic(*args):
    """has_torch_function(args)."""
    return has_torch_function(args)


def _overloaded_args(relevant_args):
    types, args = [], []
    for a in relevant_args:
        t = type(a)
        if _override_of(a) is None or t in types:
            continue
        # a subclass goes before the first of its parents already collected
        at = len(args)
        for i, prior in enumerate(types):
            if issubclass(t, prior):
                at = i
                break
        types.insert(at, t)
        args.insert(at, a)
    return args


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Call public_api's overrides: each overloaded argument's
    ``__torch_function__(public_api, types, args, kwargs)`` in turn; the first
    result that is not NotImplemented is returned. TypeError if all decline."""
    overloaded = _overloaded_args(relevant_args)
    types = tuple(type(a) for a in overloaded)
    for a in overloaded:
        result = a.__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    name = getattr(public_api, "__module__", "") + "." + getattr(public_api, "__name__", str(public_api))
    raise TypeError("no implementation found for '%s' on types that implement __torch_function__: %s"
                    % (name.lstrip("."), [type(a) for a in overloaded]))


def wrap_torch_function(dispatcher):
    """Decorator: the wrapped function hands its call to handle_torch_function
    when the arguments dispatcher(*args, **kwargs) returns have overrides."""
    def inner(func):
        @_functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant = dispatcher(*args, **kwargs)
            if has_torch_function(relevant):
                return handle_torch_function(wrapped, relevant, *args, **kwargs)
            return func(*args, **kwargs)
        return wrapped
    return inner


def is_tensor_like(inp):
    """True for a pycuda_sem.Tensor (or subclass) and for any object whose type
    defines __torch_function__."""
    return isinstance(inp, _C.Tensor) or _override_of(inp) is not None


def is_tensor_method_or_property(func):
    """True when func is a Tensor method or property (found on Tensor by name)."""
    name = getattr(func, "__name__", None)
    return name is not None and getattr(_C.Tensor, name, None) is func


def resolve_name(f):
    """The dotted name of a function ('pycuda_sem.add'), or None."""
    name = getattr(f, "__name__", None)
    if name is None:
        return None
    mod = getattr(f, "__module__", None)
    return "%s.%s" % (mod, name) if mod else name


# pycuda_sem keeps no tables of which functions accept overrides: its ops do
# not dispatch through __torch_function__, so each table is empty.

def get_ignored_functions():
    """Empty: no pycuda_sem function consults __torch_function__."""
    return set()


def get_overridable_functions():
    """Empty: no pycuda_sem function consults __torch_function__."""
    return {}


def get_testing_overrides():
    """Empty: no pycuda_sem function consults __torch_function__."""
    return {}


def get_default_nowrap_functions():
    """Empty (no Tensor methods are wrapped by a default __torch_function__)."""
    return set()


class TorchFunctionMode:
    """Base class of torch function modes. Subclassing works; entering one
    (``with MyMode():``) raises NotImplementedError because pycuda_sem's ops
    do not dispatch through __torch_function__ modes."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError()

    def __enter__(self):
        raise NotImplementedError("TorchFunctionMode is not supported by pycuda_sem: its ops are C "
                                  "functions that do not dispatch through __torch_function__ modes, so "
                                  "%s would intercept nothing" % type(self).__name__)

    def __exit__(self, exc_type, exc_value, traceback):
        return False

    @classmethod
    def push(cls, *args, **kwargs):
        raise NotImplementedError("TorchFunctionMode.push is not supported by pycuda_sem: its ops do not "
                                  "dispatch through __torch_function__ modes")


class BaseTorchFunctionMode(TorchFunctionMode):
    """TorchFunctionMode whose __torch_function__ calls the function (entering
    it raises NotImplementedError, as any mode here)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))
