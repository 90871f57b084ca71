"""torch.func: functional_call (nn/utils/stateless.py) and the transforms
vmap, grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian and
stack_module_state (_func_transforms.py: vmap is a loop over the mapped
dimension, the derivatives run the reverse-mode engine), and functionalize,
linearize, replace_all_batch_norm_modules_ (_func_extra.py)."""
from .nn.utils.stateless import _functional_call as functional_call  # noqa: F401
from ._func_transforms import (  # noqa: F401
    vmap, grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian, stack_module_state,
)
from ._func_extra import functionalize, linearize, replace_all_batch_norm_modules_  # noqa: F401

__all__ = ["functional_call", "vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd",
           "hessian", "stack_module_state", "functionalize", "linearize", "replace_all_batch_norm_modules_"]
