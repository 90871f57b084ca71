"""torch.nn.parallel: data parallelism, single-process over the visible GPUs
(DataParallel) and one process per GPU (DistributedDataParallel)."""
from .data_parallel import DataParallel, data_parallel  # noqa: F401
from .distributed import DistributedDataParallel  # noqa: F401
from .replicate import replicate  # noqa: F401
from .scatter_gather import scatter, scatter_kwargs, gather  # noqa: F401
from .parallel_apply import parallel_apply  # noqa: F401

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel", "replicate", "scatter", "scatter_kwargs", "gather",
           "parallel_apply"]
