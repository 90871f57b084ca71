"""torch.autograd. Today: the grad modes (grad_mode.py) and the legacy
Variable (variable.py). Reverse-mode
differentiation itself is not there yet: requires_grad=True raises
NotImplementedError, so nothing is ever recorded."""
from . import grad_mode  # noqa: F401
from . import _formulas  # noqa: F401  (registers the backward formulas with the engine)
from .grad_mode import (  # noqa: F401
    enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
    set_grad_enabled,
)
from .variable import Variable  # noqa: F401
