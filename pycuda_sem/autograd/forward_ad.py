"""torch.autograd.forward_ad: forward-mode automatic differentiation (dual
tensors). pycuda_sem has no forward-mode AD: tensors carry no tangents and no
op has a forward (JVP) formula. The module exists so that
``import torch.autograd.forward_ad as fwAD`` works; using it raises
NotImplementedError. ``autograd.functional.jvp`` / ``hvp`` compute the same
products by the double-backward trick and do work.
"""
from typing import NamedTuple

from .. import _C

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual",
           "unpack_dual", "dual_level"]

_MSG = ("%s: forward-mode AD (dual tensors) is not implemented in pycuda_sem; use "
        "autograd.functional.jvp / hvp (computed by double backward) instead")


def enter_dual_level():
    """Not implemented (no forward-mode AD): raises NotImplementedError."""
    raise NotImplementedError(_MSG % "forward_ad.enter_dual_level")


def exit_dual_level(*, level=None):
    """Not implemented (no forward-mode AD): raises NotImplementedError."""
    raise NotImplementedError(_MSG % "forward_ad.exit_dual_level")


def make_dual(tensor, tangent, *, level=None):
    """Not implemented (no forward-mode AD): raises NotImplementedError."""
    raise NotImplementedError(_MSG % "forward_ad.make_dual")


class UnpackedDualTensor(NamedTuple):
    """What unpack_dual returns in torch: ``(primal, tangent)``."""

    primal: _C.Tensor
    tangent: object


def unpack_dual(tensor, *, level=None):
    """Not implemented (no forward-mode AD): raises NotImplementedError."""
    raise NotImplementedError(_MSG % "forward_ad.unpack_dual")


class dual_level:
    """Context manager of a forward-AD level; entering it raises
    NotImplementedError (no forward-mode AD)."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        return None
