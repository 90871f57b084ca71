"""pycuda_sem.cuda.graphs: torch.cuda.graphs, the CUDA graph names of
pycuda_sem.cuda (the same objects)."""
from . import (  # noqa: F401
    CUDAGraph, graph, make_graphed_callables, graph_pool_handle, is_current_stream_capturing,
)

__all__ = ["is_current_stream_capturing", "graph_pool_handle", "CUDAGraph", "graph",
           "make_graphed_callables"]
