"""torch.amp: autocast (autocast_mode.py) and GradScaler (grad_scaler.py)."""
from .autocast_mode import (  # noqa: F401
    autocast, is_autocast_enabled, get_autocast_dtype, is_autocast_available,
)
from .grad_scaler import GradScaler  # noqa: F401
from .custom import custom_fwd, custom_bwd  # noqa: F401

__all__ = ["autocast", "GradScaler", "is_autocast_available", "custom_fwd", "custom_bwd"]
