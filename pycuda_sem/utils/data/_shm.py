"""CPU tensors between processes through shared memory, not pickled bytes
(CUDA tensors: multiprocessing/_cuda_ipc.py).

A tensor is sent as the name of a POSIX shared-memory file (/dev/shm) plus
dtype, geometry and where its storage starts in the file; the receiver maps
the file and wraps the mapping with from_numpy, so nothing is copied on the
way and both processes see one memory, as torch's. Registered with
multiprocessing's ForkingPickler (as torch.multiprocessing does), so that
queues and spawn's process arguments use it.

Two kinds of files:
- owned (any tensor sent anywhere, e.g. a model or a dataset to spawn
  workers): the tensor's storage is first moved into a file of its own, in
  place (share_memory_(), as torch's reduction does; every view follows).
  Each message carries a hard link to that file made for it alone; the
  receiver renames the link to a name of its own and maps it, so a message
  in flight keeps the memory even if the sender's tensor dies first, and
  what a receiver got it can send on. A process removes the names it owns
  when the memory behind them dies here (other mappings keep the pages).
- pooled (DataLoader workers, set_prefix(pooled=True)): default_collate
  stacks the batch straight into a file of the worker's pool (empty_shared),
  so the send copies nothing. The receiver keeps its mapping of the name and,
  when the last tensor over it dies, hands the name back (take_returned); the
  DataLoader passes it to the worker with the next indices, and the worker
  stacks a later batch into the same pages. Fresh pages cost a fault and a
  zeroing each (about 1 ms per 3 MiB); reused ones cost nothing, on both
  sides. The files are removed by the worker when it stops, and by the main
  process at shutdown (by prefix) in case the worker was killed.
"""
import atexit
import collections
import itertools
import mmap
import os
import sys
import threading
import traceback
import weakref
from multiprocessing.reduction import ForkingPickler

import numpy as np

import pycuda_sem as _t

_DIR = "/dev/shm" if os.path.isdir("/dev/shm") else None
_counter = itertools.count()

# ---- the lock, and work posted to it ---------------------------------------------
# The tables below change under _lock. Some changes are asked for by
# weakref.finalize callbacks (an array over a segment died) and by a
# DataLoader iterator's __del__ (forget). Those run wherever the garbage
# collector or a decref happens to run them, including inside a `with _lock`
# block of this same thread, where a plain acquire waits forever (a hang
# seen in CI: gc inside _wrapper_dropped collected another batch). So they
# never wait for the lock: they post the change to _pending, which is
# lock-free, and run it now only when the lock is free; otherwise the holder
# runs it before it lets go, and every holder first runs what was posted
# before it came in (so a segment's address is forgotten before a new
# mapping can be registered at it).
_lock = threading.Lock()
_pending = collections.deque()


def _drain():
    while _pending:
        fn, args = _pending.popleft()
        try:
            fn(*args)
        except Exception:  # noqa: BLE001 - a finalizer's error is printed, as Python does
            traceback.print_exc(file=sys.stderr)


class _Locked:
    def __enter__(self):
        _lock.acquire()
        _drain()

    def __exit__(self, *exc):
        try:
            _drain()
        finally:
            _lock.release()


_locked = _Locked()


def _post(fn, *args):
    _pending.append((fn, args))
    if _lock.acquire(blocking=False):
        try:
            _drain()
        finally:
            _lock.release()

# numpy has no bfloat16: such tensors are wrapped as int16 and viewed back
_NP = {_t.bfloat16: np.int16}

# ---- the making side -------------------------------------------------------------
# segment base address -> (name, size) for the segments this process made and
# maps (one-shot ones leave with their mapping: weakref.finalize on the array)
_segments = {}
_state = {"prefix": "pcs_%d" % os.getpid(), "pooled": False}
# pooled segments: name -> [mmap, size, state]; state is "used" (a tensor of
# ours is over it), "lent" (sent; the receiver has not handed it back) or "free"
_pool = {}
_free = collections.defaultdict(list)  # size -> names of free pooled segments

# ---- the receiving side ----------------------------------------------------------
_maps = {}  # pooled name -> its mapping here, kept for the next time it comes
_wrappers = collections.Counter()  # pooled name -> live arrays over it here
_returned = collections.defaultdict(list)  # owner prefix -> names to hand back


def set_prefix(prefix, pooled=False):
    """Names made from now on start with `prefix`; pooled=True: batches of
    this process are made in reusable files (a DataLoader worker)."""
    _state["prefix"], _state["pooled"] = prefix, pooled


def _np_dtype(dtype):
    if dtype in _NP:
        return np.dtype(_NP[dtype])
    return _t.empty(0, dtype=dtype).numpy().dtype


def _map(name, size, create):
    path = os.path.join(_DIR, name)
    fd = os.open(path, (os.O_RDWR | os.O_CREAT | os.O_EXCL) if create else os.O_RDWR, 0o600)
    try:
        if create and size:
            # reserve the pages now: a full /dev/shm is an OSError here, not a
            # SIGBUS at the first write into the mapping
            os.posix_fallocate(fd, 0, size)
        flags = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)
        return mmap.mmap(fd, max(size, 1), flags=flags)
    finally:
        os.close(fd)


def _wrap(m, offset, dtype, shape):
    n = 1
    for s in shape:
        n *= s
    arr = np.ndarray((n,), dtype=_np_dtype(dtype), buffer=m, offset=offset)
    t = _t.from_numpy(arr)  # the tensor's storage keeps arr (and the mapping) alive
    if dtype in _NP:
        t = t.view(dtype)
    return t.reshape(tuple(shape)), arr


def _wrap_strided(m, at, dtype, shape, stride, offset):
    # a storage that starts `at` bytes into the mapping and runs to its end
    npdt = _np_dtype(dtype)
    arr = np.ndarray(((len(m) - at) // npdt.itemsize,), dtype=npdt, buffer=m, offset=at)
    t = _t.from_numpy(arr)
    if dtype in _NP:
        t = t.view(dtype)
    return t.as_strided(tuple(shape), tuple(stride), offset), arr


def _nbytes(shape, dtype):
    size = _np_dtype(dtype).itemsize
    for s in shape:
        size *= s
    return size


def _new_segment(size):
    name = "%s_%d" % (_state["prefix"], next(_counter))
    return name, _map(name, size, True)


# The three handlers below run under _lock, posted by finalizers (_post).


def _pooled_dropped(name):
    # our last tensor over a pooled segment is gone: free unless it was sent
    entry = _pool.get(name)
    if entry is not None and entry[2] == "used":
        entry[2] = "free"
        _free[entry[1]].append(name)


def _owned_dropped(base, name, pid):
    # the memory of a file we own died here: forget its address (unless a new
    # mapping took it) and remove the name; other mappings keep the pages. A
    # forked child inherits the tables and these finalizers: only the
    # process that owns the name removes it.
    if _segments.get(base, (None,))[0] == name:
        del _segments[base]
    if os.getpid() == pid:
        try:
            os.unlink(os.path.join(_DIR, name))
        except OSError:
            pass


def _own(arr, base, name, size):
    """The mapping at `base` (kept alive by arr) is file `name`, ours: it can
    be sent by a link, and the name goes when arr does."""
    with _locked:
        _segments[base] = (name, size)
    weakref.finalize(arr, _post, _owned_dropped, base, name, os.getpid())


def _empty_oneshot(shape, dtype, size):
    name, m = _new_segment(size)
    t, arr = _wrap(m, 0, dtype, shape)
    _own(arr, t.data_ptr(), name, size)
    return t


def empty_shared(shape, dtype):
    """An uninitialised contiguous CPU tensor in shared memory (from the pool
    in a DataLoader worker)."""
    shape = tuple(shape)
    if _DIR is None:
        return _t.empty(shape, dtype=dtype)
    size = _nbytes(shape, dtype)
    if not _state["pooled"]:
        return _empty_oneshot(shape, dtype, size)
    with _locked:
        name = _free[size].pop() if _free[size] else None
        if name is not None:
            _pool[name][2] = "used"
    if name is None:
        name, m = _new_segment(size)
        with _locked:
            _pool[name] = [m, size, "used"]
    t, arr = _wrap(_pool[name][0], 0, dtype, shape)
    with _locked:
        _segments[t.data_ptr()] = (name, size)  # for as long as the pool maps it
    weakref.finalize(arr, _post, _pooled_dropped, name)
    return t


def release(names):
    """The receiver handed these pooled segments back: reusable."""
    with _locked:
        for name in names:
            entry = _pool.get(name)
            if entry is not None and entry[2] == "lent":
                entry[2] = "free"
                _free[entry[1]].append(name)


def _find(ptr):
    """(name, offset of ptr in it) when ptr lies in one of our segments."""
    with _locked:
        for base, (name, size) in _segments.items():
            if base <= ptr < base + max(size, 1):
                return name, ptr - base
    return None


def share_memory_(t):
    """torch's Tensor.share_memory_(): a CPU tensor's storage moves into a
    shared-memory file of its own, in place (the storage object stays, so
    every view follows; csrc/tensor/storage_share.c). A no-op when it is
    there already, for CUDA tensors, for an empty storage and where there is
    no /dev/shm. Returns t."""
    if t.device.type != "cpu" or _DIR is None:
        return t
    st = t.untyped_storage()
    nbytes = st.nbytes()
    if nbytes == 0 or _find(st.data_ptr()) is not None:
        return t
    name, m = _new_segment(nbytes)
    arr = np.ndarray((nbytes,), dtype=np.uint8, buffer=m)
    _t._C._storage_move_into(t, _t.from_numpy(arr))
    _own(arr, st.data_ptr(), name, nbytes)
    return t


def is_shared(t):
    """torch's Tensor.is_shared(): True for CUDA tensors, and for CPU ones
    whose storage lies in shared memory (moved there, made there by a
    DataLoader worker, or received from another process)."""
    if t.device.type != "cpu":
        return True
    st = t.untyped_storage()
    return _DIR is not None and st.nbytes() > 0 and _find(st.data_ptr()) is not None


# ---- receiving -------------------------------------------------------------------


def _wrapper_dropped(name, owner):
    # under _lock (posted by a finalizer)
    _wrappers[name] -= 1
    if _wrappers[name] == 0:
        del _wrappers[name]
        if name in _maps:  # not after forget(owner): no one to hand it to
            _returned[owner].append(name)


def rebuild(name, at, dtype, shape, stride, offset, requires_grad, owner=None):
    """The receiving end of reduce_tensor: the storage starts `at` bytes into
    file `name`. owner: the sender's prefix for a pooled segment (kept
    mapped, handed back when unused); None: the message's own link to an
    owned file, which becomes ours."""
    if owner is None:
        mine = "pcs_%d_r%d" % (os.getpid(), next(_counter))
        os.rename(os.path.join(_DIR, name), os.path.join(_DIR, mine))
        m = _map(mine, os.stat(os.path.join(_DIR, mine)).st_size, False)
        t, arr = _wrap_strided(m, at, dtype, shape, stride, offset)
        _own(arr, arr.ctypes.data - at, mine, len(m))
    else:
        m = _maps.get(name)
        if m is None:
            m = _maps[name] = _map(name, os.stat(os.path.join(_DIR, name)).st_size, False)
        t, arr = _wrap_strided(m, at, dtype, shape, stride, offset)
        with _locked:
            _wrappers[name] += 1
        weakref.finalize(arr, _post, _wrapper_dropped, name, owner)
    if requires_grad:
        t.requires_grad_()
    return t


def take_returned(owner):
    """Pooled names of `owner` that no tensor here uses any more (each name
    once)."""
    with _locked:
        names = _returned.pop(owner, None)
    return names or ()


def forget(owner):
    """Drop the mappings of owner's segments (a stopped loader) and remove its
    files. Posted, as a finalizer's change is: an iterator's __del__ calls
    it from wherever the garbage collector runs."""
    _post(_forget_maps, owner)
    unlink_prefix(owner + "_")


def _forget_maps(owner):
    # under _lock; a live tensor keeps its own mapping alive through its array
    for name in [n for n in _maps if n.startswith(owner + "_")]:
        del _maps[name]
    _returned.pop(owner, None)


def _rebuild_copy(data, dtype, shape, requires_grad):
    # where there is no /dev/shm: the bytes themselves
    t = _t.from_numpy(np.frombuffer(bytearray(data), dtype=_np_dtype(dtype)))
    if dtype in _NP:
        t = t.view(dtype)
    t = t.reshape(tuple(shape))
    if requires_grad:
        t.requires_grad_()
    return t


def reduce_tensor(t):
    if t.requires_grad and not t.is_leaf:  # torch's refusal, word for word
        raise RuntimeError("Cowardly refusing to serialize non-leaf tensor which requires_grad, "
                           "since autograd does not support crossing process boundaries.  "
                           "If you just want to transfer the data, call detach() on the tensor "
                           "before serializing (e.g., putting it on the queue).")
    if t.device.type != "cpu":
        from ...multiprocessing import _cuda_ipc
        return _cuda_ipc.reduce_cuda_tensor(t)
    shape, rg = tuple(t.shape), bool(t.requires_grad)
    st = t.untyped_storage()
    if _DIR is None or st.nbytes() == 0:
        c = t.detach().contiguous()
        raw = c.view(_t.int16) if t.dtype in _NP else c
        return _rebuild_copy, (raw.numpy().tobytes(), t.dtype, shape, rg)
    found = _find(st.data_ptr())
    if found is None:
        share_memory_(t)  # in place, as torch's reduction does
        found = _find(st.data_ptr())
    name, at = found
    geometry = (t.dtype, shape, tuple(t.stride()), t.storage_offset(), rg)
    if name in _pool:
        with _locked:
            _pool[name][2] = "lent"
        return rebuild, (name, at) + geometry + (_state["prefix"],)
    # a link of this message's own: the file may lose its name here (our
    # tensor dies) before the receiver has mapped it
    link = "%s_m%d" % (name, next(_counter))
    os.link(os.path.join(_DIR, name), os.path.join(_DIR, link))
    return rebuild, (link, at) + geometry


def unlink_prefix(prefix):
    """Remove the files under /dev/shm whose names start with prefix."""
    if _DIR is None:
        return
    try:
        names = os.listdir(_DIR)
    except OSError:
        return
    for n in names:
        if n.startswith(prefix):
            try:
                os.unlink(os.path.join(_DIR, n))
            except OSError:
                pass


def _register():
    ForkingPickler.register(_t.Tensor, reduce_tensor)
    param = getattr(getattr(_t, "nn", None), "Parameter", None)
    if isinstance(param, type) and issubclass(param, _t.Tensor):
        ForkingPickler.register(param, reduce_tensor)


def _cleanup_at_exit(pid=os.getpid()):
    # one-shot files this process made that no receiver opened
    if os.getpid() == pid:
        unlink_prefix("pcs_%d_" % pid)


_register()
atexit.register(_cleanup_at_exit)
