"""torch.utils: hooks (RemovableHandle), data (datasets, samplers,
collation, DataLoader), checkpoint (activation checkpointing), _pytree
(nested containers as leaves and a spec) and model_zoo (hub's loader);
benchmark (Timer, Compare) and dlpack load when imported."""
from . import data, hooks  # noqa: F401
from . import checkpoint  # noqa: F401
from . import _pytree, model_zoo  # noqa: F401
