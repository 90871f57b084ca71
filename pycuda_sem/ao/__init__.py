"""pycuda_sem.ao: torch.ao's namespace, holding `quantization` (the names
scripts import from torch.ao.quantization; see that module)."""
from . import quantization  # noqa: F401

__all__ = ["quantization"]
