"""torch.utils.dlpack and the DLPack protocol of Tensor (__dlpack__,
__dlpack_device__, bound in csrc/ops/py_methods.c): zero-copy exchange with
NumPy, CuPy, torch, JAX... The capsules are made and consumed in C
(csrc/tensor/dlpack.c); this file holds the protocol's Python half: the
argument rules and the stream handshake.

Streams, as the DLPack spec says: the consumer passes its stream to the
producer's __dlpack__(stream=...), and the producer makes that stream wait
(an event, no host sync) for the work queued so far on the producer's
current stream, so the consumer can use the memory on its stream at once.
stream=-1 asks for no synchronisation, None or 1 means the legacy default
stream, 2 (the per-thread default stream) is refused as torch does."""
import enum

from .. import _C

__all__ = ["DLDeviceType", "from_dlpack", "to_dlpack"]


class DLDeviceType(enum.IntEnum):
    kDLCPU = 1
    kDLCUDA = 2
    kDLGPU = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14


def to_dlpack(tensor):
    """A DLPack (v0.8, "dltensor") capsule sharing the tensor's memory; it
    can be consumed once (by from_dlpack here or in another library)."""
    if not isinstance(tensor, _C.Tensor):
        raise TypeError("to_dlpack(): argument 'tensor' must be Tensor, not %s"
                        % type(tensor).__name__)
    return _C._to_dlpack(tensor)


def __dlpack_device__(self):
    """(DLDeviceType, index): kDLCUDA for CUDA tensors, kDLCUDAHost for pinned
    host memory, kDLCPU otherwise (index 0)."""
    if self.is_cuda:
        return (DLDeviceType.kDLCUDA, self.device.index)
    if self.is_pinned():
        return (DLDeviceType.kDLCUDAHost, 0)
    return (DLDeviceType.kDLCPU, 0)


def _sync_consumer_stream(self, stream):
    """Make the consumer's stream wait for this device's current stream."""
    from .. import cuda
    if stream is None or stream == 1:
        consumer = cuda.default_stream(self.device)
    else:
        if stream == 2:
            raise BufferError("per-thread default stream is not supported.")
        if stream == 0 or stream < 0 or stream >= 1 << 64:
            raise AssertionError("unsupported stream on CUDA: %d." % stream)
        consumer = cuda.ExternalStream(stream, device=self.device)
    current = cuda.current_stream(self.device)
    if consumer != current:
        event = cuda.Event()
        event.record(current)
        consumer.wait_event(event)


def __dlpack__(self, *, stream=-1, max_version=None, dl_device=None, copy=None,
               read_only=False):
    """A DLPack capsule sharing self's memory: "dltensor_versioned" (DLPack
    1.0) when max_version >= (1, 0), else the v0.8 "dltensor". `stream`
    (CUDA): the consumer's stream, made to wait for self's current stream
    (-1: no synchronisation). dl_device: only self's own device (no
    cross-device export); copy=True exports a copy."""
    if self.requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    if self.is_cuda and self.device.index != _C.current_device():
        raise BufferError("Can't export tensors on a different CUDA device index. Expected: %d. "
                          "Current device: %d." % (self.device.index, _C.current_device()))
    if stream is not None and type(stream) is not int:
        raise TypeError("stream must be ``int`` or ``none``")
    if self.is_cuda and stream != -1:
        _sync_consumer_stream(self, stream)
    elif not self.is_cuda and stream is not None and stream != -1:
        raise AssertionError("stream should be None on cpu.")
    if dl_device is not None:
        try:
            want = (int(dl_device[0]), int(dl_device[1]))
        except (TypeError, ValueError, IndexError):
            raise TypeError("dl_device must be a (DLDeviceType, index) pair") from None
        have = __dlpack_device__(self)
        if want != (int(have[0]), have[1]) and not (want[0] == DLDeviceType.kDLCPU
                                                    and have[0] == DLDeviceType.kDLCUDAHost):
            raise BufferError("pycuda_sem: __dlpack__ exports on the tensor's own device only "
                              "(asked for %s, the tensor is on %s)" % (want, have))
    src = self.clone() if copy is True else self
    versioned = max_version is not None and max_version[0] >= 1
    if read_only and not versioned:
        raise BufferError("read_only export requires the versioned DLPack protocol; pass "
                          "max_version=(1, 0) or higher")
    return _C._to_dlpack(src, versioned, bool(read_only))


def from_dlpack(ext_tensor, *, device=None, copy=None):
    """A tensor sharing the memory of `ext_tensor`: an object with
    __dlpack__ (NumPy array, CuPy array, torch tensor, ...) or a DLPack
    capsule (consumed: a capsule can be used once). For a CUDA producer the
    current stream of its device is passed as the consumer stream, so work
    queued afterwards here sees its data. device/copy: move or copy after the
    exchange (copy=False with another device raises ValueError)."""
    if hasattr(ext_tensor, "__dlpack__"):
        ext_device = ext_tensor.__dlpack_device__()
        kwargs = {"max_version": (1, 0)}
        if int(ext_device[0]) in (DLDeviceType.kDLCUDA, DLDeviceType.kDLCUDAManaged):
            from .. import cuda
            s = cuda.current_stream(int(ext_device[1]))
            kwargs["stream"] = 1 if s.cuda_stream == 0 else s.cuda_stream
        try:
            capsule = ext_tensor.__dlpack__(**kwargs)
        except TypeError:  # a producer older than DLPack 1.0
            kwargs.pop("max_version")
            capsule = ext_tensor.__dlpack__(**kwargs)
        tensor = _C._from_dlpack(capsule)
    else:
        if device is not None or copy is not None:
            raise AssertionError("device and copy kwargs not supported when ext_tensor is "
                                 "already a DLPack capsule.")
        return _C._from_dlpack(ext_tensor)
    if device is not None:
        target = _C.device(device) if isinstance(device, str) else device
        if target != tensor.device:
            if copy is False:
                raise ValueError("cannot move DLPack tensor from device %s to %s without "
                                 "copying. Set copy=None or copy=True." % (tensor.device, target))
            return tensor.to(target)
    if copy is True:
        tensor = tensor.clone()
    return tensor
