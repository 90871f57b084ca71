"""torch.nn.parallel: single-process data parallelism over the visible GPUs."""
from .data_parallel import DataParallel, data_parallel  # noqa: F401
from .replicate import replicate  # noqa: F401
from .scatter_gather import scatter, scatter_kwargs, gather  # noqa: F401
from .parallel_apply import parallel_apply  # noqa: F401

__all__ = ["DataParallel", "data_parallel", "replicate", "scatter", "scatter_kwargs", "gather",
           "parallel_apply"]
