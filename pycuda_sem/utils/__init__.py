"""torch.utils: the parts pycuda_sem has (hooks.RemovableHandle)."""
from . import hooks  # noqa: F401
