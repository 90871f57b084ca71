"""torch.func, only its functional_call (the transforms grad, vmap, jacrev
... are not implemented in pycuda_sem): module(*args, **kwargs) run with
given tensors in place of its parameters and buffers, for one call; the
work is nn/utils/stateless.py's."""
from .nn.utils.stateless import _functional_call as functional_call  # noqa: F401

__all__ = ["functional_call"]
