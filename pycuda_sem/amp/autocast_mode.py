"""torch.autocast: mixed precision by op, thread-local, as torch's.

Inside `autocast(device_type, dtype)` the matmul-like layers of nn.functional
(linear, bilinear, the convolutions, scaled_dot_product_attention, and so
the layers built on them: Linear, Conv*, MultiheadAttention, RNN/LSTM/GRU)
cast their floating inputs of that device to `dtype` (float16 by default on
CUDA, bfloat16 on the CPU; float64 stays), and the ops torch runs in float32
(softmax, log_softmax, the norms, the losses) cast float16/bfloat16 inputs
to float32. The casts are ordinary differentiable .to() calls, so gradients
come back in each leaf's own dtype.

Where it differs from torch: the casting happens in those Python functions,
not in the C dispatcher, so a matmul written directly in user code (`a @ b`,
`torch.matmul`, `mm`, `bmm`) inside autocast runs in its inputs' dtypes.
"""
import functools
import threading
import warnings

from .. import _C

__all__ = ["autocast", "is_autocast_enabled", "get_autocast_dtype", "is_autocast_available"]

_LOWER_DTYPES = {"cuda": (_C.float16, _C.bfloat16), "cpu": (_C.bfloat16, _C.float16)}
_DEFAULT = {"cuda": _C.float16, "cpu": _C.bfloat16}
_tls = threading.local()
# how many autocast regions are open in any thread: 0 lets the functions
# below return at once, with no thread-local lookup on the hot path
_open = [0]


def _state():
    st = getattr(_tls, "state", None)
    if st is None:
        st = _tls.state = {"cuda": (False, _DEFAULT["cuda"]), "cpu": (False, _DEFAULT["cpu"])}
    return st


def is_autocast_available(device_type):
    return device_type in _LOWER_DTYPES


def is_autocast_enabled(device_type=None):
    """Whether autocast is on in this thread for device_type ('cuda' when
    not given, as torch's legacy call)."""
    return _state()[device_type or "cuda"][0]


def get_autocast_dtype(device_type):
    if device_type not in _LOWER_DTYPES:
        raise RuntimeError("unsupported autocast device_type '%s'" % device_type)
    return _state()[device_type][1]


class autocast:
    """Context manager and decorator: autocast(device_type, dtype=None,
    enabled=True, cache_enabled=None)."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError("Expected `device_type` of type `str`, got: `%s`" % type(device_type))
        if device_type not in _LOWER_DTYPES:
            raise RuntimeError("User specified an unsupported autocast device_type '%s'"
                               % device_type)
        self.device = device_type
        self.fast_dtype = _DEFAULT[device_type] if dtype is None else dtype
        self._enabled = bool(enabled)
        if self._enabled and self.fast_dtype not in _LOWER_DTYPES[device_type]:
            warnings.warn("In %s autocast, but the target dtype is not supported. Disabling "
                          "autocast.\n%s Autocast only supports dtypes of %s currently."
                          % (device_type.upper(), device_type.upper(),
                             " and ".join(str(d) for d in _LOWER_DTYPES[device_type])))
            self._enabled = False
        if self._enabled and device_type == "cuda" and not _C.is_available():
            warnings.warn("User provided device_type of 'cuda', but CUDA is not available. "
                          "Disabling")
            self._enabled = False

    def __enter__(self):
        st = _state()
        self._prev = st[self.device]
        st[self.device] = (self._enabled, self.fast_dtype)
        _open[0] += 1
        return self

    def __exit__(self, exc_type, exc, tb):
        _state()[self.device] = self._prev
        _open[0] -= 1
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def run(*args, **kwargs):
            with autocast(self.device, self.fast_dtype, self._enabled):
                return func(*args, **kwargs)
        return run


def _device_type(t):
    return "cuda" if t.is_cuda else "cpu"


def _to_lower(*tensors):
    """The matmul-like functions' inputs, each floating one (not float64)
    of an autocast device cast to that device's autocast dtype."""
    if not _open[0]:
        return tensors
    st = _state()
    out = []
    for t in tensors:
        if isinstance(t, _C.Tensor) and t.is_floating_point() and t.dtype != _C.float64:
            on, dtype = st[_device_type(t)]
            if on and t.dtype != dtype:
                t = t.to(dtype)
        out.append(t)
    return tuple(out)


def _to_float32(*tensors):
    """The float32 functions' inputs: float16/bfloat16 ones of an autocast
    device cast to float32."""
    if not _open[0]:
        return tensors
    st = _state()
    out = []
    for t in tensors:
        if isinstance(t, _C.Tensor) and t.dtype in (_C.float16, _C.bfloat16) \
                and st[_device_type(t)][0]:
            t = t.float()
        out.append(t)
    return tuple(out)


def _refuse_under_autocast(name):
    if _open[0] and any(on for on, _ in _state().values()):
        raise RuntimeError(
            "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to "
            "autocast.\nMany models use a sigmoid layer right before the binary cross entropy "
            "layer.\nIn this case, combine the two layers using "
            "torch.nn.functional.binary_cross_entropy_with_logits\nor torch.nn.BCEWithLogitsLoss. "
            " binary_cross_entropy_with_logits and BCEWithLogits are\nsafe to autocast. (%s)"
            % name)
