"""pycuda_sem.cuda: the torch.cuda namespace.

Devices, streams, events and the caching allocator's memory functions. Every
name here is a C object or function from pycuda_sem._C (hot paths such as
``memory_allocated()`` and ``with stream(s):`` never run Python code); this
file only gathers them and adds the few conveniences that are not hot.
"""
from .. import _C
from .._C import (  # noqa: F401
    OutOfMemoryError,
    is_available, device_count, current_device, set_device, is_initialized, init,
    _is_in_bad_fork,
    get_device_name, get_device_capability, get_device_properties,
    synchronize, mem_get_info, can_device_access_peer,
    Stream, ExternalStream, StreamContext, Event,
    current_stream, default_stream, set_stream,
    _sleep, _memset_async,
    memory_allocated, max_memory_allocated, memory_reserved, max_memory_reserved,
    reset_peak_memory_stats, reset_accumulated_memory_stats, empty_cache,
    memory_stats, memory_snapshot,
)
from .._C import DeviceContext as device  # noqa: F401
from .._C import StreamContext as stream  # noqa: F401
from .._C import _CudaDeviceProperties  # noqa: F401
from ._memory import memory_summary  # noqa: F401
from . import nvtx  # noqa: F401
from ._extras import (  # noqa: F401
    get_arch_list, get_gencode_flags, memory_stats_as_nested_dict,
    set_per_process_memory_fraction, get_per_process_memory_fraction,
    caching_allocator_alloc, caching_allocator_delete, is_current_stream_capturing,
    set_sync_debug_mode, get_sync_debug_mode, has_half, has_magma,
    CUDAGraph, graph, make_graphed_callables, graph_pool_handle, MemPool, use_mem_pool,
)
from ._nvml import (  # noqa: F401 - NVML through the driver's libnvidia-ml
    utilization, memory_usage, temperature, power_draw, clock_rate, device_memory_used,
    list_gpu_processes,
)

# Deprecated names PyTorch still accepts: "cached" became "reserved".
memory_cached = memory_reserved
max_memory_cached = max_memory_reserved


def reset_max_memory_allocated(device=None):
    """Reset the peak of memory_allocated() (deprecated: it resets every peak,
    as reset_peak_memory_stats() does, exactly like PyTorch)."""
    reset_peak_memory_stats(device)


def reset_max_memory_cached(device=None):
    """Reset the peak of memory_reserved() (deprecated alias of
    reset_peak_memory_stats())."""
    reset_peak_memory_stats(device)


def ipc_collect():
    """Give back to the caching allocator the memory of CUDA tensors sent to
    other processes that their receivers have released (torch's
    ipc_collect; a later send does it too)."""
    from ..multiprocessing import _cuda_ipc
    _cuda_ipc.ipc_collect()


def device_of(obj):
    """Context manager that makes the device of tensor `obj` current (a no-op
    for CPU tensors)."""
    idx = obj.get_device() if getattr(obj, "is_cuda", False) else -1
    return device(idx)


# ---- legacy tensor types (cuda.FloatTensor, ...): see the section below ----
from .._legacy import cuda_types as _legacy_cuda_types  # noqa: E402

# FloatTensor, DoubleTensor, HalfTensor, LongTensor, ... on the current device.
globals().update(_legacy_cuda_types)


# ---- random, matmul, fft (random.c, blas.c, fft.c) ---------------------------------
# The CUDA generators: one (seed, Philox offset) per device. Seeding touches
# no GPU (the states are host memory), as PyTorch's lazy seeding.

def _rng_device(device):
    if device is None or device == "cuda":
        return None
    if isinstance(device, str):
        device = _C.device(device)
    if isinstance(device, int):
        return device
    return device.index


def manual_seed(seed):
    """Seed the current device's generator."""
    _C._cuda_manual_seed(int(seed))


def manual_seed_all(seed):
    """Seed every device's generator."""
    _C._cuda_manual_seed_all(int(seed))


def seed():
    """Seed the current device's generator with a non-deterministic number."""
    _C._cuda_seed()


def seed_all():
    """Seed every device's generator with one non-deterministic number."""
    _C._cuda_seed_all()


def initial_seed():
    """The current device's seed."""
    return _C._cuda_initial_seed()


def get_rng_state(device="cuda"):
    """The generator state of a device, as a uint8 CPU tensor (seed, offset)."""
    d = _rng_device(device)
    return _C._cuda_get_rng_state() if d is None else _C._cuda_get_rng_state(d)


def set_rng_state(new_state, device="cuda"):
    """Restore a state returned by get_rng_state."""
    d = _rng_device(device)
    if d is None:
        _C._cuda_set_rng_state(new_state)
    else:
        _C._cuda_set_rng_state(new_state, d)


def get_rng_state_all():
    """The states of every visible device."""
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states):
    """Restore the states of devices 0, 1, ..."""
    for i, s in enumerate(new_states):
        set_rng_state(s, i)


# ---- what the device can do -----------------------------------------------------------
def is_bf16_supported(including_emulation=True):
    """Whether the current device computes in bfloat16: compute capability
    8.0 or newer natively; older devices (which this build's kernels do not
    target natively) count only with including_emulation, as in torch. False
    without a usable GPU."""
    if not is_available():
        return False
    if get_device_capability(current_device())[0] >= 8:
        return True
    return bool(including_emulation)


def is_tf32_supported():
    """Whether the current device has TF32 tensor cores (compute capability >= 8.0)."""
    return is_available() and get_device_capability(current_device())[0] >= 8


# ---- default_generators: one object per visible device over the functions above -------
from ..random import Generator as _Generator  # noqa: E402


class _CudaDefaultGenerator(_Generator):
    """torch.cuda.default_generators[i]: a handle on the default generator
    of device i (a torch.Generator, as torch's). Its methods act on that
    device's default state (the functions above), not on the C state it
    inherits; Generator(device='cuda') makes an independent one."""

    _pcs_default_generator = True  # accepted as generator= by the random ops

    def __init__(self, index):
        _C._Generator.__init__(self, index)  # no GPU needed to make the handle
        self.device = _C.device("cuda", index)
        self._index = index

    def __reduce__(self):
        return (_default_generator_of, (self._index,))

    def manual_seed(self, seed):
        with device(self._index):
            manual_seed(seed)
        return self

    def seed(self):
        with device(self._index):
            seed()
            return initial_seed()

    def initial_seed(self):
        with device(self._index):
            return initial_seed()

    def get_state(self):
        return get_rng_state(self._index)

    def set_state(self, new_state):
        set_rng_state(new_state, self._index)
        return self

    def __repr__(self):
        return "<pycuda_sem.cuda default generator (cuda:%d)>" % self._index


_default_generators = None


def _default_generator_of(index):
    return __getattr__("default_generators")[index]  # made on first use, below


def __getattr__(name):
    # default_generators is made on first use: counting devices at import
    # would start CUDA, which importing never does.
    global _default_generators
    if name == "default_generators":
        if _default_generators is None:
            _default_generators = tuple(_CudaDefaultGenerator(i) for i in range(device_count()))
        return _default_generators
    raise AttributeError("module 'pycuda_sem.cuda' has no attribute '%s'" % name)


from . import random, memory, streams, graphs  # noqa: E402,F401 - torch.cuda's submodule names
