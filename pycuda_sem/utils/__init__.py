"""torch.utils: hooks (RemovableHandle) and data (datasets, samplers,
collation, DataLoader)."""
from . import data, hooks  # noqa: F401
