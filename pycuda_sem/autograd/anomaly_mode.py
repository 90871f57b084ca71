"""torch.autograd.detect_anomaly and set_detect_anomaly.

While on (process-wide, as torch's), each recorded op keeps the Python stack
of its forward call, and a backward that fails warns with the stack of the
op whose backward failed; with check_nan (the default), a backward formula
that returns nan raises RuntimeError("Function 'XBackward0' returned nan
values in its 0th output."). It slows every op down: a debugging tool.
"""
import functools
import warnings

from .. import _C

__all__ = ["detect_anomaly", "set_detect_anomaly"]


class detect_anomaly:
    """Context manager (and decorator) that turns anomaly detection on."""

    def __init__(self, check_nan=True):
        self.prev = _C.is_anomaly_enabled()
        self.check_nan = check_nan
        self.prev_check_nan = _C.is_anomaly_check_nan_enabled()
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and "
                      "should only be enabled for debugging.", stacklevel=2)

    def __enter__(self):
        _C._set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *exc):
        _C._set_anomaly_enabled(self.prev, self.prev_check_nan)

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(self.check_nan):
                return fn(*args, **kwargs)
        return wrapper


class set_detect_anomaly:
    """Sets anomaly detection on or off at once; as a context manager,
    restores the previous setting on exit."""

    def __init__(self, mode, check_nan=True):
        self.prev = _C.is_anomaly_enabled()
        self.prev_check_nan = _C.is_anomaly_check_nan_enabled()
        _C._set_anomaly_enabled(bool(mode), check_nan)

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _C._set_anomaly_enabled(self.prev, self.prev_check_nan)
