"""torch.nn.attention: SDPBackend and the sdpa_kernel context manager.

F.scaled_dot_product_attention here has one implementation, the math one
(backends/_sdp.py says why), so sdpa_kernel records the selection in the
backends.cuda flags for the block, as torch does, and every selection runs
the same computation."""
import contextlib as _contextlib
import enum as _enum

from ...backends import _sdp

__all__ = ["SDPBackend", "sdpa_kernel", "SDPAParams", "can_use_flash_attention",
           "can_use_efficient_attention", "WARN_FOR_UNFUSED_KERNELS"]

SDPAParams = _sdp.SDPAParams
can_use_flash_attention = _sdp.can_use_flash_attention
can_use_efficient_attention = _sdp.can_use_efficient_attention
WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(_enum.IntEnum):
    """The attention kernels torch can pick (only MATH exists here)."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_FLAG_OF = {SDPBackend.MATH: "math", SDPBackend.FLASH_ATTENTION: "flash",
            SDPBackend.EFFICIENT_ATTENTION: "mem_efficient", SDPBackend.CUDNN_ATTENTION: "cudnn"}


@_contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Within the block only `backends` (one SDPBackend or a list) are
    enabled in the backends.cuda flags; they are restored after."""
    if isinstance(backends, SDPBackend):
        backends = [backends]
    if not isinstance(backends, (list, tuple, set)) or not all(isinstance(b, SDPBackend) for b in backends):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend "
                             "instances, got %s" % type(backends).__name__)
    if not isinstance(set_priority, bool):
        raise TypeError("sdpa_kernel(): set_priority must be a bool")
    saved = dict(_sdp._sdp)
    try:
        for b, flag in _FLAG_OF.items():
            _sdp._sdp[flag] = b in backends
        yield {}
    finally:
        _sdp._sdp.update(saved)
