"""torch.set_num_threads and friends, and get/set_default_device.

pycuda_sem's CPU ops run in NumPy (and its BLAS), whose thread pools are
their own: these functions keep and validate the numbers a script sets, so
that scripts which tune torch's CPU threads run unchanged, and report them
back; they do not resize NumPy's pools. The GPU work is unaffected either
way.
"""
import builtins
import os

_intra = max(1, (os.cpu_count() or 2) // 2)  # torch's default: the physical cores
_interop = _intra
_interop_set = False


def _positive(fname, n):
    if isinstance(n, builtins.bool) or not isinstance(n, int):
        raise TypeError("%s(): argument 'int' must be int, not %s" % (fname, type(n).__name__))
    if n <= 0:
        raise RuntimeError("%s: Expected a positive number of threads, got %d" % (fname, n))
    return n


def set_num_threads(int):  # noqa: A002 - torch's parameter name
    """Set the number of CPU threads for intra-op work (recorded; see the module note)."""
    global _intra
    _intra = _positive("set_num_threads", int)


def get_num_threads():
    """The number set by set_num_threads (the physical core count by default)."""
    return _intra


def set_num_interop_threads(int):  # noqa: A002
    """Set the inter-op thread count; as in torch, only once and before any other call."""
    global _interop, _interop_set
    n = _positive("set_num_interop_threads", int)
    if _interop_set:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work has "
                           "started or set_num_interop_threads called")
    _interop, _interop_set = n, True


def get_num_interop_threads():
    return _interop


# ---- the default device ------------------------------------------------------------------
# Factories given no device= use it (runtime/default_device.c); the *_like
# factories keep their input's device. A torch.device is also a context
# manager that sets it for a block.

def get_default_device():
    """The device factories use without device= (cuda resolved to the
    current device)."""
    from . import _C
    return _C._get_default_device()


def set_default_device(device):
    """Factories without device= create tensors on `device` from now on
    (None: the CPU again), nn layers' parameters included."""
    from . import _C
    _C._set_default_device(device)
