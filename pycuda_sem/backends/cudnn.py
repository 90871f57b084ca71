"""torch.backends.cudnn: allow_tf32 (True by default, as the note says) and
the usual switches. pycuda_sem has no convolutions, so they change nothing;
they exist so that scripts which set them run unchanged."""
import sys
import types

from .. import _C
from .cuda import _expect_bool


class _CudnnModule(types.ModuleType):
    @property
    def allow_tf32(self):
        return _C._get_matmul_flag("cudnn_allow_tf32")

    @allow_tf32.setter
    def allow_tf32(self, value):
        # torch's message says "set_allow_tf32_cublas" here too (a copy-paste
        # in its Module.cpp); naming cudnn points at the flag actually set
        _expect_bool(value, "set_allow_tf32_cudnn")
        _C._set_matmul_flag("cudnn_allow_tf32", value)


enabled = True
benchmark = False
deterministic = False


def is_available():
    """No cuDNN is linked into pycuda_sem."""
    return False


def version():
    return None


sys.modules[__name__].__class__ = _CudnnModule
