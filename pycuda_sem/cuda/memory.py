"""pycuda_sem.cuda.memory: torch.cuda.memory, the caching allocator's
functions of pycuda_sem.cuda under the submodule name scripts import them
from (the same objects; nothing new)."""
from . import (  # noqa: F401
    caching_allocator_alloc, caching_allocator_delete, get_per_process_memory_fraction,
    set_per_process_memory_fraction, empty_cache, memory_stats, memory_stats_as_nested_dict,
    reset_accumulated_memory_stats, reset_peak_memory_stats, reset_max_memory_allocated,
    reset_max_memory_cached, memory_allocated, max_memory_allocated, memory_reserved,
    max_memory_reserved, memory_cached, max_memory_cached, memory_snapshot, memory_summary,
    list_gpu_processes, mem_get_info, MemPool, use_mem_pool,
)

__all__ = ["caching_allocator_alloc", "caching_allocator_delete", "get_per_process_memory_fraction",
           "set_per_process_memory_fraction", "empty_cache", "memory_stats", "memory_stats_as_nested_dict",
           "reset_accumulated_memory_stats", "reset_peak_memory_stats", "reset_max_memory_allocated",
           "reset_max_memory_cached", "memory_allocated", "max_memory_allocated", "memory_reserved",
           "max_memory_reserved", "memory_cached", "max_memory_cached", "memory_snapshot", "memory_summary",
           "list_gpu_processes", "mem_get_info", "MemPool", "use_mem_pool"]
