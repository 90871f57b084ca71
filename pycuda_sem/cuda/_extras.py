"""The smaller torch.cuda functions that are not on any hot path: the build's
architecture list, the nested form of memory_stats, raw allocations from the
caching allocator for other libraries, the per-process memory fraction's
getter, and the switches for features this project does not have (CUDA graph
capture, the synchronisation debug mode), which answer or refuse honestly.
"""
import threading

from .. import _C


def _device_index(device, optional=True):
    """A CUDA ordinal from None (the current device when `optional`), an int,
    a device string or a device; a CPU device is refused as torch refuses it."""
    if device is None:
        if not optional:
            raise ValueError("Expected a torch.device with a specified index or an integer, "
                             "but got:None")
        return _C.current_device()
    if isinstance(device, str):
        device = _C.device(device)
    if isinstance(device, _C.device):
        if device.type != "cuda":
            raise ValueError("Expected a cuda device, but got: %s" % device)
        return device.index if device.index is not None else _C.current_device()
    if isinstance(device, bool) or not isinstance(device, int):
        raise TypeError("expected a device, a device string or an int, not %s"
                        % type(device).__name__)
    return device


def get_arch_list():
    """The architectures the kernels were compiled for, e.g. ['sm_80', 'sm_90', 'compute_90']."""
    return _C._cuda_arch_flags().split()


def get_gencode_flags():
    """The nvcc -gencode flags of get_arch_list(), in torch's spelling."""
    return " ".join("-gencode compute=compute_%s,code=%s_%s" % (a.split("_")[1], a.split("_")[0],
                                                                 a.split("_")[1])
                    for a in get_arch_list())


def memory_stats_as_nested_dict(device=None):
    """memory_stats() with its dotted keys turned back into nested dicts
    ("allocated_bytes.all.current" -> d["allocated_bytes"]["all"]["current"])."""
    out = {}
    for key, value in _C.memory_stats(device).items():
        node = out
        parts = key.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = value
    return out


_fractions = {}


def set_per_process_memory_fraction(fraction, device=None):
    """Cap this process's caching allocator on `device` at `fraction` of its memory (C);
    the value is kept for get_per_process_memory_fraction."""
    _C.set_per_process_memory_fraction(fraction, device)
    _fractions[_device_index(device)] = float(fraction)


def get_per_process_memory_fraction(device=None):
    """The fraction last set for `device` (1.0 when none was set)."""
    return _fractions.get(_device_index(device), 1.0)


# caching_allocator_alloc hands out raw pointers; the tensors that own the
# memory are kept here until caching_allocator_delete gives them back.
_raw_lock = threading.Lock()
_raw = {}


def caching_allocator_alloc(size, device=None, stream=None):
    """`size` bytes from the caching allocator on `device`, for `stream`
    (default: the current stream); returns the device address as an int.
    Give it back with caching_allocator_delete."""
    if isinstance(size, bool) or not isinstance(size, int):
        raise TypeError("caching_allocator_alloc(): size must be an int, not %s" % type(size).__name__)
    if size < 0:
        raise ValueError("caching_allocator_alloc(): size must be non-negative, got %d" % size)
    idx = _device_index(device)
    if stream is not None and not isinstance(stream, _C.Stream):
        raise TypeError("Invalid type for stream argument, must be `torch.cuda.Stream`")
    with _C.DeviceContext(idx):
        s = stream if stream is not None else _C.current_stream(idx)
        with _C.StreamContext(s):
            t = _C.empty(max(size, 1), dtype=_C.uint8, device="cuda")
    ptr = t.data_ptr()
    with _raw_lock:
        _raw[ptr] = t
    return ptr


def caching_allocator_delete(mem_ptr):
    """Give back memory from caching_allocator_alloc (it returns to the cache)."""
    with _raw_lock:
        t = _raw.pop(mem_ptr, None)
    if t is None:
        raise RuntimeError("caching_allocator_delete(): %r was not allocated by "
                           "caching_allocator_alloc (or was already deleted)" % (mem_ptr,))
    del t


def is_current_stream_capturing():
    """False: this project has no CUDA graph capture."""
    return False


_sync_mode = 0


def set_sync_debug_mode(debug_mode):
    """torch's switch for warning or failing on synchronising calls. Only
    "default" (0) is supported: the warn and error modes need checks at every
    synchronising op that this project does not have, so they raise
    NotImplementedError instead of silently not warning."""
    global _sync_mode
    names = {"default": 0, "warn": 1, "error": 2}
    if isinstance(debug_mode, str):
        if debug_mode not in names:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, `error`")
        debug_mode = names[debug_mode]
    if isinstance(debug_mode, bool) or not isinstance(debug_mode, int):
        raise TypeError("set_sync_debug_mode(): expected an int or a string, not %s"
                        % type(debug_mode).__name__)
    if debug_mode not in (0, 1, 2):
        raise RuntimeError("invalid value of debug_mode, expected 0, 1 or 2")
    if debug_mode != 0:
        raise NotImplementedError("set_sync_debug_mode(%r): pycuda_sem cannot warn or fail on "
                                  "synchronising operations; only 'default' (0) is supported"
                                  % debug_mode)
    _sync_mode = 0


def get_sync_debug_mode():
    """0: synchronising operations neither warn nor fail."""
    return _sync_mode


has_half = True
has_magma = False  # no MAGMA: linalg runs on the host through NumPy's LAPACK


# ---- CUDA graphs: not in this project ------------------------------------------------
# Scripts that reach for graph capture should learn so at the call, with the
# reason, rather than from an AttributeError at import.

_NO_GRAPHS = ("pycuda_sem has no CUDA graph capture (every op launches on its stream as it is "
              "called); run the callable eagerly instead")


class CUDAGraph:
    """torch.cuda.CUDAGraph: not implemented; constructing one raises."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("torch.cuda.CUDAGraph: " + _NO_GRAPHS)


class graph:
    """torch.cuda.graph(cuda_graph, ...): not implemented; raises."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("torch.cuda.graph: " + _NO_GRAPHS)


def make_graphed_callables(*args, **kwargs):
    """Not implemented: raises NotImplementedError (no CUDA graphs here)."""
    raise NotImplementedError("torch.cuda.make_graphed_callables: " + _NO_GRAPHS)


def graph_pool_handle():
    """Not implemented: raises NotImplementedError (no CUDA graphs here)."""
    raise NotImplementedError("torch.cuda.graph_pool_handle: " + _NO_GRAPHS)


class MemPool:
    """torch.cuda.MemPool: not implemented (one caching allocator a device); raises."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("torch.cuda.MemPool: pycuda_sem has one caching allocator a "
                                  "device and no separate memory pools")


def use_mem_pool(*args, **kwargs):
    """Not implemented: raises NotImplementedError (no separate memory pools)."""
    raise NotImplementedError("torch.cuda.use_mem_pool: pycuda_sem has no separate memory pools")
