"""torch.Stream and torch.Event: the device-generic stream and event classes
of torch 2.x, over this project's CUDA ones.

In torch, torch.cuda.Stream and torch.cuda.Event derive from these, so a
stream from torch.cuda.current_stream() is a torch.Stream. The CUDA classes
here are C types, so the generic ones are Python subclasses of them with the
generic constructor (device first) and attributes (device_type, stream_id,
native_handle, event_id), and a metaclass that counts every CUDA stream or
event as an instance, as torch's class tree does.
"""
from . import _C
from .cuda import Stream as _CudaStream, Event as _CudaEvent


def _cuda_device(device, what):
    """None or a cuda device (object, string or index) -> what the CUDA class
    takes; other device types are refused: streams and events here are CUDA's."""
    if device is None or (isinstance(device, int) and not isinstance(device, bool)):
        return device
    if isinstance(device, str):
        device = _C.device(device)
    if not isinstance(device, _C.device):
        raise TypeError("%s(): device must be a device, a string or an int, not %s"
                        % (what, type(device).__name__))
    if device.type != "cuda":
        raise ValueError("%s(): pycuda_sem has %ss only on CUDA devices, not %r"
                         % (what, what.split(".")[-1].lower(), device.type))
    return device


class _CountsCuda(type):
    """isinstance(x, torch.Stream) is true for every CUDA stream (and the
    same for events), as in torch, where the CUDA classes derive from these."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, cls._cuda_base)

    def __subclasscheck__(cls, sub):
        return isinstance(sub, type) and issubclass(sub, cls._cuda_base)


class Stream(_CudaStream, metaclass=_CountsCuda):
    """Stream(device=None, priority=0): a stream of `device` (a CUDA device;
    the current one by default). The same object as a torch.cuda.Stream, with
    torch.Stream's generic attributes."""
    _cuda_base = _CudaStream

    def __new__(cls, device=None, priority=0, **kwargs):
        if kwargs:
            raise TypeError("Stream(): unexpected keyword argument %r" % next(iter(kwargs)))
        return super().__new__(cls, _cuda_device(device, "torch.Stream"), priority)

    @property
    def device_type(self):
        return "cuda"

    @property
    def stream_id(self):
        """An id unique among live streams: the cudaStream_t handle."""
        return self.cuda_stream

    @property
    def native_handle(self):
        return self.cuda_stream

    def is_capturing(self):
        """False: this project has no CUDA graph capture."""
        return False


class Event(_CudaEvent, metaclass=_CountsCuda):
    """Event(device=None, *, enable_timing=False, blocking=False,
    interprocess=False): a CUDA event. It is bound to a device when first
    recorded, as torch.cuda.Event is; `device` is checked to be a CUDA one."""
    _cuda_base = _CudaEvent

    def __new__(cls, device=None, *, enable_timing=False, blocking=False, interprocess=False):
        _cuda_device(device, "torch.Event")
        return super().__new__(cls, enable_timing=enable_timing, blocking=blocking,
                               interprocess=interprocess)

    @property
    def device_type(self):
        return "cuda"

    @property
    def event_id(self):
        """The cudaEvent_t handle (0 before the first record)."""
        return self.cuda_event or 0
