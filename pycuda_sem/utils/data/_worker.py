"""The worker process side of a multi-process DataLoader, as torch's
_utils/worker.py: the loop that turns index lists into batches, the fetchers,
get_worker_info, and the wrapper that carries an exception (type and
traceback text) to the main process."""
import os
import random
import sys
import traceback

import pycuda_sem as _t

from . import _shm

__all__ = ["get_worker_info", "WorkerInfo"]

# how often a waiting worker checks that the main process is still there
MP_STATUS_CHECK_INTERVAL = 5.0

_worker_info = None


class WorkerInfo:
    """id, num_workers, seed and dataset (the worker's copy) of this worker."""

    __initialized = False

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs.keys())
        self.__initialized = True

    def __setattr__(self, key, val):
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        return super().__setattr__(key, val)

    def __repr__(self):
        items = ", ".join(f"{k}={getattr(self, k)}" for k in self.__keys)
        return f"{self.__class__.__name__}({items})"


def get_worker_info():
    """The WorkerInfo of this DataLoader worker process; None in the main
    process. An IterableDataset uses it to shard its stream among workers."""
    return _worker_info


class ExceptionWrapper:
    """An exception caught in a worker, carried as type and formatted text:
    tracebacks do not pickle, and the user wants to see the worker's."""

    def __init__(self, exc_info=None, where="in background"):
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type == KeyError:
            msg = KeyErrorMessage(msg)  # KeyError would show the message quoted
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:  # noqa: BLE001 - a type whose constructor wants more
            raise RuntimeError(msg) from None
        raise exception


class KeyErrorMessage(str):
    def __repr__(self):
        return self


class _IterableDatasetStopIteration:
    def __init__(self, worker_id):
        self.worker_id = worker_id


class _ResumeIteration:
    """Sent to persistent workers at the start of a new epoch."""

    def __init__(self, seed=None):
        self.seed = seed


# ---- fetchers ------------------------------------------------------------------


class _MapDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation = dataset, auto_collation
        self.collate_fn, self.drop_last = collate_fn, drop_last
        from ._collate import default_collate, tensor_dataset_batch
        from .dataset import TensorDataset
        self._fast = tensor_dataset_batch if (type(dataset) is TensorDataset and auto_collation
                                              and collate_fn is default_collate) else None

    def fetch(self, possibly_batched_index):
        if self._fast is not None and possibly_batched_index:
            return self._fast(self.dataset, possibly_batched_index)
        if self.auto_collation:
            getitems = getattr(self.dataset, "__getitems__", None)
            if getitems:
                data = getitems(possibly_batched_index)
            else:
                data = [self.dataset[idx] for idx in possibly_batched_index]
        else:
            data = self.dataset[possibly_batched_index]
        return self.collate_fn(data)


class _IterableDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation = dataset, auto_collation
        self.collate_fn, self.drop_last = collate_fn, drop_last
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in possibly_batched_index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if not data or (self.drop_last and len(data) < len(possibly_batched_index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


def create_fetcher(kind_is_iterable, dataset, auto_collation, collate_fn, drop_last):
    cls = _IterableDatasetFetcher if kind_is_iterable else _MapDatasetFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)


# ---- the worker loop -----------------------------------------------------------


def _seed_all(seed):
    _t.manual_seed(seed)
    random.seed(seed)


def _worker_loop(is_iterable, dataset, index_queue, data_queue, done_event, auto_collation,
                 collate_fn, drop_last, base_seed, init_fn, worker_id, num_workers,
                 persistent_workers, shm_prefix):
    global _worker_info
    try:
        _shm.set_prefix(shm_prefix, pooled=True)
        seed = base_seed + worker_id
        _seed_all(seed)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        init_exception = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = create_fetcher(is_iterable, dataset, auto_collation, collate_fn, drop_last)
        except Exception:  # noqa: BLE001 - reported with the first batch asked for
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        iteration_end = False
        # the main process going away (killed) must not leave us waiting forever
        parent = os.getppid()
        while True:
            if not index_queue.poll(MP_STATUS_CHECK_INTERVAL):
                if os.getppid() != parent:
                    break
                continue
            try:
                r = index_queue.recv()
            except EOFError:  # the main process closed its end
                break
            if isinstance(r, _ResumeIteration):
                data_queue.put((r, None))  # the main process waits for every ack
                iteration_end = False
                if r.seed is not None:
                    _seed_all(r.seed + worker_id)
                fetcher = create_fetcher(is_iterable, dataset, auto_collation, collate_fn, drop_last)
                continue
            if r is None:  # shut down
                break
            if done_event.is_set() or iteration_end:
                if not done_event.is_set():
                    _shm.release(r[2])
                continue  # draining before shutdown / this epoch's stream has ended
            idx, index, returned = r
            _shm.release(returned)  # batch memory the main process is done with
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:  # noqa: BLE001 - every failure goes to the user
                    if isinstance(e, StopIteration) and is_iterable:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            data_queue.put((idx, data))
            del data, idx, index, r  # the batch's memory goes with the send
    except KeyboardInterrupt:
        pass
    # our batch files: the main process has mapped what it still uses
    _shm.unlink_prefix(shm_prefix + "_")
    if done_event.is_set():
        # no one reads any more: do not block exit on the queue's feeder
        data_queue.cancel_join_thread()
        data_queue.close()
