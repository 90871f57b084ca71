"""torch.backends.cuda: the cuBLAS policy flags and the cuFFT plan caches.

``matmul.allow_tf32`` defaults to True, as the CUDA semantics note says
(PyTorch 1.7-1.11); PyTorch 1.12 and later default it to False. The flags
live in C (csrc/ops/blas.c), so every product reads them without a Python call.
"""
from .. import _C

__all__ = ["matmul", "cufft_plan_cache", "is_built"]

# The attention switches and library preferences (one implementation each here).
from ._sdp import (  # noqa: E402,F401
    SDPAParams, allow_fp16_bf16_reduction_math_sdp, can_use_cudnn_attention,
    can_use_efficient_attention, can_use_flash_attention, cudnn_sdp_enabled, enable_cudnn_sdp,
    enable_flash_sdp, enable_math_sdp, enable_mem_efficient_sdp, flash_sdp_enabled,
    fp16_bf16_reduction_math_sdp_allowed, is_flash_attention_available, math_sdp_enabled,
    mem_efficient_sdp_enabled, preferred_blas_library, preferred_linalg_library, sdp_kernel,
)


def is_built():
    """pycuda_sem is always built with CUDA."""
    return True


def _expect_bool(value, setter):
    """PyTorch's flag setters take a bool and nothing else (not 1, not "yes",
    not a NumPy bool): a truthy string silently turning TF32 on would be a
    precision change nobody asked for. RuntimeError, as torch's TORCH_CHECK."""
    if not isinstance(value, bool):
        raise RuntimeError("%s expects a bool, but got %s" % (setter, type(value).__name__))


class cuBLASModule:
    """backends.cuda.matmul: allow_tf32, allow_fp16_reduced_precision_reduction,
    allow_bf16_reduced_precision_reduction."""

    # flag -> the name torch's error message gives its setter
    _FLAGS = {"allow_tf32": "set_allow_tf32_cublas",
              "allow_fp16_reduced_precision_reduction": "set_allow_fp16_reduction_cublas",
              "allow_bf16_reduced_precision_reduction": "set_allow_bf16_reduction_cublas"}

    def __getattr__(self, name):
        if name in self._FLAGS:
            return _C._get_matmul_flag(name)
        raise AttributeError("Unknown attribute " + name)

    def __setattr__(self, name, value):
        if name in self._FLAGS:
            _expect_bool(value, self._FLAGS[name])
            return _C._set_matmul_flag(name, value)
        raise AttributeError("Unknown attribute " + name)

    def __repr__(self):
        return "<backends.cuda.matmul %s>" % ", ".join(
            "%s=%s" % (f, getattr(self, f)) for f in self._FLAGS)


matmul = cuBLASModule()


def _device_index(device):
    if isinstance(device, int):
        index = device
    else:
        if isinstance(device, str):
            device = _C.device(device)
        if getattr(device, "type", None) != "cuda":
            raise RuntimeError("cufft_plan_cache: expected a CUDA device, got %r" % (device,))
        index = device.index
    if index is None:
        index = _C.current_device()
    if index < 0:
        raise RuntimeError("cufft_plan_cache: invalid device index %d" % index)
    return index


class cuFFTPlanCache:
    """The LRU cuFFT plan cache of one device (csrc/ops/fft.c)."""

    def __init__(self, device_index):
        object.__setattr__(self, "device_index", device_index)

    @property
    def size(self):
        """Number of plans in the cache."""
        return _C._cufft_cache_size(self.device_index)

    @property
    def max_size(self):
        """Capacity (4096 by default); setting it lower evicts the least
        recently used plans, 0 disables caching, negative raises."""
        return _C._cufft_cache_max_size(self.device_index)

    @max_size.setter
    def max_size(self, value):
        _C._cufft_cache_set_max_size(self.device_index, int(value))

    def clear(self):
        """Destroy every cached plan of this device."""
        _C._cufft_cache_clear(self.device_index)

    def __setattr__(self, name, value):
        if name != "max_size":
            raise AttributeError("cannot set %s on a cuFFT plan cache" % name)
        object.__setattr__(self, name, value)

    def __repr__(self):
        return "<cuFFTPlanCache device=%d size=%d max_size=%d>" % (
            self.device_index, self.size, self.max_size)


class cuFFTPlanCacheManager:
    """backends.cuda.cufft_plan_cache: attributes act on the current device's
    cache; indexing by a device index or device object gives another one."""

    __initialized = False

    def __init__(self):
        self.caches = {}
        self.__initialized = True

    def __getitem__(self, device):
        index = _device_index(device)
        cache = self.caches.get(index)
        if cache is None:
            cache = self.caches[index] = cuFFTPlanCache(index)
        return cache

    def __getattr__(self, name):
        return getattr(self[_C.current_device()], name)

    def __setattr__(self, name, value):
        if self.__initialized:
            return setattr(self[_C.current_device()], name, value)
        return super().__setattr__(name, value)


cufft_plan_cache = cuFFTPlanCacheManager()
