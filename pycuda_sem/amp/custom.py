"""torch.amp.custom_fwd / custom_bwd: decorators for the forward and
backward of an autograd.Function under autocast. custom_fwd records the
autocast state forward ran with on ctx (and with cast_inputs, casts the
floating inputs of that device to that dtype and runs forward with autocast
off); custom_bwd runs backward in the recorded state, as torch's."""
import collections.abc
import functools

import numpy as np

from .. import _C
from .autocast_mode import autocast, get_autocast_dtype, is_autocast_enabled

__all__ = ["custom_fwd", "custom_bwd"]


def _cast(value, device_type, dtype):
    if isinstance(value, _C.Tensor):
        ok = (value.is_floating_point() and value.device.type == device_type
              and value.dtype is not _C.float64)
        return value.to(dtype) if ok else value
    if isinstance(value, (str, bytes, np.ndarray)):
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype)
                for k, v in value.items()}
    if isinstance(value, collections.abc.Iterable):
        it = (_cast(v, device_type, dtype) for v in value)
        return type(value)(it) if isinstance(value, (list, tuple)) else it
    return value


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorator for an autograd.Function's forward(ctx, ...)."""
    if not isinstance(device_type, str):
        raise ValueError("Expected `device_type` of type `str`, got: `%s`" % type(device_type))
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        on = is_autocast_enabled(device_type)
        args[0]._fwd_used_autocast = False
        if on:
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast(args, device_type, cast_inputs),
                           **_cast(kwargs, device_type, cast_inputs))
        return fwd(*args, **kwargs)
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorator for an autograd.Function's backward(ctx, ...): runs it with
    the autocast state its forward (decorated by custom_fwd) ran with."""
    if not isinstance(device_type, str):
        raise ValueError("Expected `device_type` of type `str`, got: `%s`" % type(device_type))
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast,
                      dtype=args[0]._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd
