"""pin_memory=True: batches copied into page-locked memory (the caching host
allocator, through Tensor.pin_memory) by a thread, as torch's
_utils/pin_memory.py, so that the copy overlaps the training step and the
later .to('cuda', non_blocking=True) is a true asynchronous DMA."""
import queue

import pycuda_sem as _t

from ._collate import RECURSE, map_batch
from ._worker import ExceptionWrapper

# how often the thread checks that it should stop (the loader does not wake
# it: the result queue may be finalized before a garbage iterator's __del__)
_POLL = 0.1


def _pin_leaf(data):
    if isinstance(data, _t.Tensor) or (hasattr(data, "pin_memory") and not isinstance(data, type)):
        return data.pin_memory()
    return RECURSE


def pin_memory(data, device=None):
    """Every tensor in a batch structure, pinned; objects with a pin_memory()
    method (custom batch types) pin themselves. Tuples come back as lists,
    as torch."""
    return map_batch(data, _pin_leaf)


def pin_memory_loop(in_queue, out_queue, device_id, done_event, device=None):
    """The pinning thread: worker results in, pinned results out, in order of
    arrival; the main thread restores the batch order."""
    if device_id is not None and device_id >= 0:
        try:
            _t.cuda.set_device(device_id)  # the thread's current device, as the loader's
        except Exception:  # noqa: BLE001 - pinning itself reports a missing GPU
            pass
    while not done_event.is_set():
        try:
            r = in_queue.get(timeout=_POLL)
        except queue.Empty:
            continue
        idx, data = r
        if not done_event.is_set() and not isinstance(data, ExceptionWrapper):
            try:
                data = pin_memory(data, device)
            except Exception:  # noqa: BLE001 - the user sees it on next()
                data = ExceptionWrapper(where=f"in pin memory thread for device {device_id}")
            r = (idx, data)
        del data
        while not done_event.is_set():
            try:
                out_queue.put(r, timeout=_POLL)
                break
            except queue.Full:
                continue
        del r  # the shared-memory batch is unmapped here, not at the next get
