"""The scaled-dot-product-attention switches of torch.backends.cuda and the
linear-algebra library preferences.

torch picks one of several SDPA kernels (flash, memory-efficient, cuDNN,
math) by these flags and the inputs. pycuda_sem has one: the math
composition in nn/_functional_attention.py (matmul, softmax, matmul), which
every selection runs, so the flags are kept and reported as torch's are but
choose nothing; the availability queries answer False for the fused kernels.
"""
import contextlib
import enum
import warnings

_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True,
        "fp16_bf16_reduction_math": True}


def _flag(value, name):
    if not isinstance(value, bool):
        raise TypeError("%s(): expected a bool, got %s" % (name, type(value).__name__))
    return value


def enable_flash_sdp(enabled):
    _sdp["flash"] = _flag(enabled, "enable_flash_sdp")


def flash_sdp_enabled():
    return _sdp["flash"]


def enable_mem_efficient_sdp(enabled):
    _sdp["mem_efficient"] = _flag(enabled, "enable_mem_efficient_sdp")


def mem_efficient_sdp_enabled():
    return _sdp["mem_efficient"]


def enable_math_sdp(enabled):
    _sdp["math"] = _flag(enabled, "enable_math_sdp")


def math_sdp_enabled():
    return _sdp["math"]


def enable_cudnn_sdp(enabled):
    _sdp["cudnn"] = _flag(enabled, "enable_cudnn_sdp")


def cudnn_sdp_enabled():
    return _sdp["cudnn"]


def allow_fp16_bf16_reduction_math_sdp(enabled):
    _sdp["fp16_bf16_reduction_math"] = _flag(enabled, "allow_fp16_bf16_reduction_math_sdp")


def fp16_bf16_reduction_math_sdp_allowed():
    return _sdp["fp16_bf16_reduction_math"]


@contextlib.contextmanager
def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
    """Deprecated form of nn.attention.sdpa_kernel: the four flags for the block."""
    warnings.warn("`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context "
                  "manager will be removed. Please see `torch.nn.attention.sdpa_kernel()` for the "
                  "new context manager, with updated signature.", FutureWarning, stacklevel=3)
    saved = dict(_sdp)
    try:
        enable_flash_sdp(enable_flash)
        enable_math_sdp(enable_math)
        enable_mem_efficient_sdp(enable_mem_efficient)
        enable_cudnn_sdp(enable_cudnn)
        yield {}
    finally:
        _sdp.update(saved)


class SDPAParams:
    """The inputs of one attention call, as the can_use_* queries take them."""

    def __init__(self, query, key, value, attn_mask, dropout, is_causal, enable_gqa=False):
        self.query, self.key, self.value, self.attn_mask = query, key, value, attn_mask
        self.dropout, self.is_causal, self.enable_gqa = dropout, is_causal, enable_gqa


def is_flash_attention_available():
    """False: there is no flash-attention kernel here (the math path serves every call)."""
    return False


def can_use_flash_attention(params, debug=False):
    if debug:
        warnings.warn("pycuda_sem has no flash-attention kernel")
    return False


def can_use_efficient_attention(params, debug=False):
    if debug:
        warnings.warn("pycuda_sem has no memory-efficient attention kernel")
    return False


def can_use_cudnn_attention(params, debug=False):
    if debug:
        warnings.warn("pycuda_sem has no cuDNN attention kernel")
    return False


class _BlasBackend(enum.Enum):
    Cublas = 0
    Cublaslt = 1
    Ck = 2


class _LinalgBackend(enum.Enum):
    Default = 0
    Cusolver = 1
    Magma = 2


def preferred_blas_library(backend=None):
    """The BLAS library for matmuls: cuBLAS is the only one here, so "cublas"
    (or None) is accepted and anything else raises."""
    if backend is not None:
        name = backend.name.lower() if isinstance(backend, _BlasBackend) else backend
        if name != "cublas":
            raise RuntimeError("preferred_blas_library: pycuda_sem uses cuBLAS only, got %r" % (backend,))
    return _BlasBackend.Cublas


def preferred_linalg_library(backend=None):
    """The linear-algebra library: linalg runs on the host through NumPy's
    LAPACK, which is the "default" choice; cusolver and magma raise."""
    if backend is not None:
        name = backend.name.lower() if isinstance(backend, _LinalgBackend) else backend
        if name != "default":
            raise RuntimeError("preferred_linalg_library: pycuda_sem has no %s backend (linalg runs "
                               "through NumPy's LAPACK on the host)" % (backend,))
    return _LinalgBackend.Default
