"""CUDA tensors between processes (CUDA IPC), as torch.multiprocessing sends
them: the memory is shared, not copied.

The sender (reduce_cuda_tensor, run by ForkingPickler for a Queue, a Pipe or
spawn's arguments) names the caching allocator's segment that holds the
tensor's storage (an IPC handle, csrc/tensor/cuda_ipc.c), the storage's
offset and size in it, and an interprocess event recorded on the current
stream after the writes queued so far. The receiver (rebuild_cuda_tensor)
maps the segment (once per handle in a process), wraps the storage, and makes
its current stream wait on the event, so it never reads before the sender's
writes are done.

The sender must not free or reuse the block while a receiver may use it. It
keeps the storage alive, with the event, under the name of an acknowledgement
file in /dev/shm made for that one message; the receiver removes the file
when its last tensor over the storage is gone (after synchronizing its
device: its kernels may still be using the memory). The sender drops what was
acknowledged at its next send and at cuda.ipc_collect(). The allocator's
statistics stay exact: the sender counts the block as allocated until then,
the receiver counts nothing (the mapping is not its allocator's memory).

Limits, as torch's: a tensor received this way cannot be sent on again
(send a clone()); a message never received keeps its storage until the
sender exits; the receiver must use the same device ordinal.
"""
import atexit
import itertools
import os
import threading
import weakref

import pycuda_sem as _t
from pycuda_sem import _C

_DIR = "/dev/shm" if os.path.isdir("/dev/shm") else None
_counter = itertools.count()
_PREFIX = "pcs_cuipc_%d_" % os.getpid()

# ---- the sending side ---------------------------------------------------------------------

_sent = {}  # ack file -> (storage, event) kept for a receiver
_sent_lock = threading.Lock()  # taken only by plain calls, never by a finalizer


def ipc_collect():
    """Frees (gives back to the caching allocator) the storages whose
    receivers have released them; returns how many."""
    with _sent_lock:
        done = [p for p in _sent if not os.path.exists(p)]
        dropped = [_sent.pop(p) for p in done]
    del dropped  # the storages go back to the allocator here, outside the lock
    return len(done)


def _ack_file():
    if _DIR is None:
        raise RuntimeError("pycuda_sem: sending CUDA tensors between processes needs /dev/shm "
                           "(the acknowledgement files of CUDA IPC live there)")
    path = os.path.join(_DIR, _PREFIX + str(next(_counter)))
    os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    return path


def reduce_cuda_tensor(t):
    shape, stride, dtype = tuple(t.shape), tuple(t.stride()), t.dtype
    rg, device = bool(t.requires_grad), t.device.index
    if t.numel() == 0:
        return _rebuild_empty, (device, dtype, shape, rg)
    ipc_collect()
    handle, storage_at, nbytes = _C._cuda_ipc_share(t)
    event = _t.cuda.Event(interprocess=True)
    event.record(_t.cuda.current_stream(device))
    ack = _ack_file()
    with _sent_lock:
        _sent[ack] = (t.untyped_storage(), event)
    return rebuild_cuda_tensor, (device, handle, storage_at, nbytes, event.ipc_handle(), ack,
                                 dtype, shape, stride, t.storage_offset(), rg)


@atexit.register
def _forget_all():
    # messages never received: their files go with us
    with _sent_lock:
        paths = list(_sent)
        _sent.clear()
    for p in paths:
        try:
            os.unlink(p)
        except OSError:
            pass


# ---- the receiving side -------------------------------------------------------------------


class _Mapping:
    """Another process's segment mapped here; unmapped (cudaIpcCloseMemHandle,
    after a device synchronize) when the last storage over it is gone."""

    __slots__ = ("capsule", "base", "__weakref__")

    def __init__(self, device, handle):
        self.capsule, self.base = _C._cuda_ipc_open(device, handle)


_mappings = weakref.WeakValueDictionary()  # (device, handle) -> _Mapping
_map_lock = threading.Lock()


def _mapping(device, handle):
    # CUDA maps a handle once per process: every storage of that segment
    # shares one mapping
    with _map_lock:
        m = _mappings.get((device, handle))
        if m is None:
            m = _mappings[(device, handle)] = _Mapping(device, handle)
    return m


class _Received:
    """Kept alive by the received storage. When it goes, this process's work
    on the memory is finished first, then the sender is told (its file is
    removed)."""

    __slots__ = ("mapping", "device", "ack", "pid")

    def __init__(self, mapping, device, ack):
        self.mapping, self.device, self.ack, self.pid = mapping, device, ack, os.getpid()

    # bound now: at interpreter exit the module's globals may be gone first
    def __del__(self, _sync=_C.synchronize, _unlink=os.unlink, _getpid=os.getpid):
        if _getpid() != self.pid:
            return  # a forked child's copy: the receiver itself still holds the memory
        try:
            _sync(self.device)
        except Exception:  # noqa: BLE001 - a finalizer: the file must go whatever happens
            pass
        try:
            _unlink(self.ack)
        except OSError:
            pass


def rebuild_cuda_tensor(device, handle, storage_at, nbytes, event_handle, ack, dtype, shape,
                        stride, offset, requires_grad):
    try:
        m = _mapping(device, handle)
        flat = _C._cuda_ipc_storage(m.base + storage_at, nbytes, device,
                                    _Received(m, device, ack), dtype)
    except BaseException:
        try:
            os.unlink(ack)  # nothing here will use the memory: the sender may free it
        except OSError:
            pass
        raise
    ev = _t.cuda.Event.from_ipc_handle(device, event_handle)
    _t.cuda.current_stream(device).wait_event(ev)
    t = flat.as_strided(shape, stride, offset)
    if requires_grad:
        t.requires_grad_()
    return t


def _rebuild_empty(device, dtype, shape, requires_grad):
    t = _t.empty(shape, dtype=dtype, device=_t.device("cuda", device))
    if requires_grad:
        t.requires_grad_()
    return t
