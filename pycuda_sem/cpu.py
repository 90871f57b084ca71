"""torch.cpu: the CPU's device-module spellings, so that device-agnostic code
(`getattr(torch, device.type).synchronize()`, `torch.get_device_module(d)`)
runs unchanged on the CPU. CPU work is synchronous here, so streams and events
are no-op objects, as in torch."""
from contextlib import AbstractContextManager as _ACM

__all__ = ["current_device", "current_stream", "device_count", "is_available", "set_device",
           "stream", "synchronize", "Event", "Stream", "StreamContext", "is_initialized",
           "get_capabilities"]


def is_available():
    """True: there is always a CPU."""
    return True


def is_initialized():
    """True: the CPU needs no initialisation."""
    return True


def synchronize(device=None):
    """Nothing to wait for: CPU ops finish before they return."""


def device_count():
    """1: the CPU counts as one device (not its cores)."""
    return 1


def current_device():
    """'cpu', as torch."""
    return "cpu"


def set_device(device):
    """Nothing to select on the CPU."""


def get_capabilities():
    """A read-only mapping of what is known about the CPU: only its
    architecture here (torch's instruction-set flags are not probed)."""
    import platform
    from types import MappingProxyType
    return MappingProxyType({"architecture": platform.machine()})


class Stream:
    """A no-op CPU stream (exists for device-agnostic code)."""

    def __init__(self, priority=-1):
        pass

    def wait_stream(self, stream):
        pass

    def record_event(self):
        pass

    def wait_event(self, event):
        pass


class Event:
    """A no-op CPU event: always complete."""

    def query(self):
        return True

    def record(self, stream=None):
        pass

    def synchronize(self):
        pass

    def wait(self, stream=None):
        pass


_default_cpu_stream = Stream()
_current_stream = _default_cpu_stream


def current_stream(device=None):
    """The selected CPU stream (the default one unless `stream()` chose another)."""
    return _current_stream


class StreamContext(_ACM):
    """Selects a CPU stream for its block (None: leaves it as it is)."""

    def __init__(self, stream):
        self.stream = stream
        self.prev_stream = _default_cpu_stream

    def __enter__(self):
        global _current_stream
        if self.stream is None:
            return
        self.prev_stream = _current_stream
        _current_stream = self.stream

    def __exit__(self, exc_type, exc, tb):
        global _current_stream
        if self.stream is None:
            return
        _current_stream = self.prev_stream


def stream(stream):
    """StreamContext(stream)."""
    return StreamContext(stream)

