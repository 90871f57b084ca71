"""torch.utils: hooks (RemovableHandle), data (datasets, samplers,
collation, DataLoader) and checkpoint (activation checkpointing)."""
from . import data, hooks  # noqa: F401
from . import checkpoint  # noqa: F401
