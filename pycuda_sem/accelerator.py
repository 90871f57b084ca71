"""pycuda_sem.accelerator: torch.accelerator, the device-generic face of the
current backend (torch 2.6 and later).

New PyTorch examples pick their device with
``torch.accelerator.current_accelerator().type if torch.accelerator.is_available()
else "cpu"`` instead of naming CUDA. This project has one accelerator, CUDA,
so every function here forwards to pycuda_sem.cuda (C); the module only maps
torch's device-generic names and argument forms onto it.
"""
from . import _C, cuda as _cuda

__all__ = [
    "current_accelerator", "device_count", "is_available", "current_device_index",
    "current_device_idx", "set_device_index", "set_device_idx", "synchronize",
    "current_stream", "set_stream", "device_index", "empty_cache", "empty_host_cache",
    "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
    "memory_stats", "reset_peak_memory_stats", "reset_accumulated_memory_stats",
    "get_memory_info", "get_device_capability",
]


def current_accelerator(check_available=False):
    """The accelerator's device type as a device (``device(type='cuda')``).

    Like torch's, the answer is what the build supports, so it is CUDA even on
    a machine without a GPU; with ``check_available=True`` it is None there."""
    if not isinstance(check_available, bool):
        raise TypeError("current_accelerator(): check_available must be a bool, not %s"
                        % type(check_available).__name__)
    if check_available and not _cuda.is_available():
        return None
    return _C.device("cuda")


def device_count():
    """How many accelerator devices this process sees (0 without a GPU)."""
    return _cuda.device_count()


def is_available():
    """Whether an accelerator device can be used now."""
    return _cuda.is_available()


def _index(device):
    """A device index from None (the current device), an int, or a CUDA
    device or its string; another device type is refused."""
    if device is None:
        return _cuda.current_device()
    if isinstance(device, str):
        device = _C.device(device)
    if isinstance(device, _C.device):
        if device.type != "cuda":
            raise ValueError("torch.accelerator expects a cuda device, got %r" % str(device))
        return device.index if device.index is not None else _cuda.current_device()
    if isinstance(device, bool) or not isinstance(device, int):
        raise TypeError("expected a device, a device string or an int index, not %s"
                        % type(device).__name__)
    return device


def current_device_index():
    """The index of the current accelerator device."""
    return _cuda.current_device()


def set_device_index(device, /):
    """Make `device` (an index, a cuda device or its string) the current one."""
    _cuda.set_device(_index(device))


# torch 2.6 spelled these with "idx"; later releases keep them as aliases.
current_device_idx = current_device_index
set_device_idx = set_device_index


def synchronize(device=None, /):
    """Wait for all work queued on `device` (default: the current one)."""
    _cuda.synchronize(_index(device))


def current_stream(device=None, /):
    """The current stream of `device` (default: the current device)."""
    return _cuda.current_stream(_index(device))


def set_stream(stream):
    """Make `stream` its device's current stream (and its device current)."""
    if not isinstance(stream, _cuda.Stream):
        raise TypeError("set_stream(): expected a Stream, not %s" % type(stream).__name__)
    _cuda.set_device(stream.device_index)
    _cuda.set_stream(stream)


class device_index:
    """Context manager that makes device `device` current inside the block
    and restores the previous one after it; None leaves the device alone."""

    def __init__(self, device, /):
        if device is not None and (isinstance(device, bool) or not isinstance(device, int)):
            raise TypeError("device_index(): expected an int or None, not %s" % type(device).__name__)
        self.idx = device
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is not None:
            self.prev_idx = _cuda.current_device()
            if self.prev_idx != self.idx:
                _cuda.set_device(self.idx)
        return self

    def __exit__(self, *exc):
        if self.idx is not None and self.prev_idx != self.idx:
            _cuda.set_device(self.prev_idx)
        return False


def empty_cache():
    """Give the caching allocator's unused device blocks back to CUDA."""
    _cuda.empty_cache()


def empty_host_cache():
    """Give the pinned host caching allocator's unused blocks back."""
    _C._host_empty_cache()


def memory_allocated(device_index=None, /):
    return _cuda.memory_allocated(_index(device_index))


def max_memory_allocated(device_index=None, /):
    return _cuda.max_memory_allocated(_index(device_index))


def memory_reserved(device_index=None, /):
    return _cuda.memory_reserved(_index(device_index))


def max_memory_reserved(device_index=None, /):
    return _cuda.max_memory_reserved(_index(device_index))


def memory_stats(device_index=None, /):
    return _cuda.memory_stats(_index(device_index))


def reset_peak_memory_stats(device_index=None, /):
    _cuda.reset_peak_memory_stats(_index(device_index))


def reset_accumulated_memory_stats(device_index=None, /):
    _cuda.reset_accumulated_memory_stats(_index(device_index))


def get_memory_info(device_index=None, /):
    """(free, total) bytes of `device_index` as the driver reports them."""
    return _cuda.mem_get_info(_index(device_index))


def get_device_capability(device=None, /):
    """What the device supports, as torch's dict: ``supported_dtypes``, the
    dtypes a tensor on it can have (every dtype this project has; bfloat16
    from compute capability 8.0, as is_bf16_supported says)."""
    idx = _index(device)
    dtypes = {_C.bool, _C.uint8, _C.int8, _C.int16, _C.int32, _C.int64, _C.float16,
              _C.float32, _C.float64}
    if _cuda.get_device_capability(idx) >= (8, 0):
        dtypes.add(_C.bfloat16)
    return {"supported_dtypes": dtypes}
