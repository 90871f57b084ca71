"""Module-level constants and small queries of torch that need no kernels:
torch.pi/e/inf/nan/newaxis, torch.layout with torch.strided (the only
layout tensors have here) and the sparse layouts' names, typename,
is_storage, the warn-always switch, set_flush_denormal, and the
deterministic debug mode (tied to use_deterministic_algorithms)."""
import builtins
import math

pi = math.pi
e = math.e
inf = math.inf
nan = math.nan
newaxis = None


class layout:
    """A memory layout (torch.layout). Tensors here are always strided; the
    sparse layouts exist as names only (no tensor has them)."""
    __slots__ = ("_name",)

    def __new__(cls, *args, **kwargs):
        raise TypeError("cannot create 'torch.layout' instances")

    @classmethod
    def _make(cls, name):
        obj = object.__new__(cls)
        object.__setattr__(obj, "_name", name)
        return obj

    def __setattr__(self, name, value):
        raise AttributeError("'torch.layout' object attribute '%s' is read-only" % name)

    def __repr__(self):
        return "torch." + self._name

    def __reduce__(self):  # pickles as the module attribute, like torch's
        return self._name


strided = layout._make("strided")
sparse_coo = layout._make("sparse_coo")
sparse_csr = layout._make("sparse_csr")
sparse_csc = layout._make("sparse_csc")
sparse_bsr = layout._make("sparse_bsr")
sparse_bsc = layout._make("sparse_bsc")
_mkldnn = layout._make("_mkldnn")
jagged = layout._make("jagged")


def check_layout(fname, value):
    """None or strided pass; any other layout raises (no tensor here can have it)."""
    if value is not None and value is not strided:
        raise NotImplementedError("%s: layout=%r is not supported (pycuda_sem tensors are strided)"
                                  % (fname, value))


def typename(obj):
    """The tensor's legacy type name (torch.FloatTensor, torch.cuda.FloatTensor),
    else module.qualname of obj (plain qualname for builtins)."""
    from ._C import Tensor
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = obj.__class__.__module__ or ""
        qualname = obj.__class__.__qualname__
    return qualname if module in ("", "builtins") else "%s.%s" % (module, qualname)


def is_storage(obj):
    """True for a storage object (UntypedStorage here)."""
    from ._C import UntypedStorage
    return isinstance(obj, UntypedStorage)


_warn_always = False


def set_warn_always(b):
    """Record the warn-always switch (warnings here are Python's own, which
    already repeat per call site under their filters)."""
    global _warn_always
    _warn_always = builtins.bool(b)


def is_warn_always_enabled():
    return _warn_always


def set_flush_denormal(mode):
    """torch's switch for flushing CPU denormals to zero: pycuda_sem cannot
    set the CPU's FTZ/DAZ flags, so it returns False ("not supported"), as
    torch does on CPUs without the feature. CUDA kernels are unaffected."""
    if not isinstance(mode, builtins.bool):
        raise TypeError("set_flush_denormal(): argument 'mode' must be bool, not %s" % type(mode).__name__)
    return False


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode):
    """0 / "default": use_deterministic_algorithms(False); 1 / "warn":
    (True, warn_only=True); 2 / "error": (True)."""
    import pycuda_sem as torch
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, `error`, "
                               "but got %s" % debug_mode)
        debug_mode = _DEBUG_MODES[debug_mode]
    elif not isinstance(debug_mode, builtins.int) or isinstance(debug_mode, builtins.bool):
        raise TypeError("debug_mode must be str or int, but got %s" % type(debug_mode).__name__)
    if debug_mode not in (0, 1, 2):
        raise RuntimeError("invalid value of debug_mode, expected 0, 1, or 2, but got %d" % debug_mode)
    if debug_mode == 0:
        torch.use_deterministic_algorithms(False)
    else:
        torch.use_deterministic_algorithms(True, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    """0, 1 or 2, as set_deterministic_debug_mode (read from
    use_deterministic_algorithms' state)."""
    import pycuda_sem as torch
    if not torch.are_deterministic_algorithms_enabled():
        return 0
    return 1 if torch.is_deterministic_algorithms_warn_only_enabled() else 2
