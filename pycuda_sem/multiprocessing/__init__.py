"""torch.multiprocessing: the standard multiprocessing module, with CPU
tensors sent between processes through shared memory (a POSIX shared-memory
file per tensor, mapped by the receiver, never pickled bytes) and CUDA
tensors through CUDA IPC (_cuda_ipc.py: the receiver maps the sender's
memory; the sender keeps it until the receiver is done with it).

spawn/start_processes (spawn.py) run a function in several processes and
raise the child's error in the parent. A child forked after its parent used
CUDA cannot use CUDA (the C fork handler in device.c marks it): it raises
torch's "Cannot re-initialize CUDA in forked subprocess" error."""
import multiprocessing as _mp
from multiprocessing import *  # noqa: F401,F403 - torch.multiprocessing re-exports it

from ..utils.data import _shm  # noqa: F401 - registers the tensor reductions
from .spawn import (  # noqa: F401
    spawn, start_processes, ProcessContext, SpawnContext, ProcessException,
    ProcessRaisedException, ProcessExitedException,
)

__all__ = list(_mp.__all__) + ["get_sharing_strategy", "set_sharing_strategy",
                               "get_all_sharing_strategies", "spawn", "start_processes",
                               "ProcessContext", "SpawnContext", "ProcessException",
                               "ProcessRaisedException", "ProcessExitedException"]

_STRATEGIES = {"file_system"}  # names of /dev/shm files, as torch's file_system


def get_all_sharing_strategies():
    return set(_STRATEGIES)


def get_sharing_strategy():
    return "file_system"


def set_sharing_strategy(new_strategy):
    """Only "file_system" exists here; torch's "file_descriptor" is accepted
    and means the same (batches arrive as shared memory either way)."""
    if new_strategy not in _STRATEGIES | {"file_descriptor"}:
        raise ValueError(f"unknown sharing strategy {new_strategy!r}")
