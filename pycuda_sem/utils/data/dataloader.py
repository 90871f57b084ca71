"""DataLoader, as torch.utils.data.dataloader: batches of a dataset from a
sampler, in the main process or in worker processes (spawn or fork), with
prefetching, ordered results, persistent workers and pinned memory.

The multi-process iterator follows torch's design: one index queue per
worker, one result queue for all, `prefetch_factor * num_workers` tasks in
flight, results reordered by task index, a pinning thread between the result
queue and the user when pin_memory=True. Batches travel through shared memory
(_shm). While waiting, the main process polls the workers' liveness several
times a second, so that a killed worker is an error at once, never a hang.
"""
import atexit
import itertools
import multiprocessing
import multiprocessing.context
import os
import queue
import threading
import warnings
import weakref

import pycuda_sem as _t

from . import _shm
from ._collate import default_collate, default_convert
from ._pin import pin_memory as _pin_memory
from ._pin import pin_memory_loop
from ._worker import (ExceptionWrapper, _IterableDatasetStopIteration, _ResumeIteration,
                      _worker_loop, create_fetcher)
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader"]

# how long one wait on the result queue lasts before the workers are checked
_POLL = 0.1
# how long shutdown waits for a worker before terminating it
_JOIN_TIMEOUT = 1.0
_iter_ids = itertools.count()
# multi-process iterators not shut down yet: at exit they stop their workers
# before multiprocessing's own handler terminates them (atexit runs last-in
# first-out, and this module registers after multiprocessing.util)
_live = weakref.WeakSet()


@atexit.register
def _shutdown_live_iterators():
    for it in list(_live):
        try:
            it._shutdown_workers()
        except Exception:  # noqa: BLE001 - exit goes on regardless
            pass


class _InfiniteConstantSampler(Sampler):
    """The sampler of an IterableDataset: None forever (the data decides)."""

    def __iter__(self):
        while True:
            yield None


class DataLoader:
    """Batches of `dataset`. See torch.utils.data.DataLoader; every argument
    of it is accepted with the same meaning and checks."""

    __initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; "
                             "use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing, otherwise set "
                             "prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.in_order = in_order
        self._is_iterable = isinstance(dataset, IterableDataset)
        if self._is_iterable:
            for name, v in (("shuffle", shuffle), ("sampler", sampler), ("batch_sampler", batch_sampler)):
                if v not in (None, False):
                    raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                     f"{name} option, but got {name}={v}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None:
            if self._is_iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.multiprocessing_context = multiprocessing_context
        self.__initialized = True
        self._iterator = None

    @property
    def multiprocessing_context(self):
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, ctx):
        if ctx is not None:
            if self.num_workers <= 0:
                raise ValueError("multiprocessing_context can only be used with multi-process "
                                 f"loading (num_workers > 0), but got num_workers={self.num_workers}")
            if isinstance(ctx, str):
                valid = multiprocessing.get_all_start_methods()
                if ctx not in valid:
                    raise ValueError("multiprocessing_context option should specify a valid start "
                                     f"method in {valid!r}, but got multiprocessing_context={ctx!r}")
                ctx = multiprocessing.get_context(ctx)
            if not isinstance(ctx, multiprocessing.context.BaseContext):
                raise TypeError("multiprocessing_context option should be a valid context object "
                                "or a string specifying the start method, but got "
                                f"multiprocessing_context={ctx}")
        self.__multiprocessing_context = ctx

    def __setattr__(self, attr, val):
        if self.__initialized and attr in ("batch_size", "batch_sampler", "sampler", "drop_last",
                                           "dataset", "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self):
        # persistent workers: one iterator, reset at each epoch, keeps its processes
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self):
        if self._is_iterable:
            length = len(self.dataset)
            if self.batch_size is not None:
                if self.drop_last:
                    return length // self.batch_size
                return -(-length // self.batch_size)
            return length
        return len(self._index_sampler)


# ---- iterators -----------------------------------------------------------------


class _BaseDataLoaderIter:
    def __init__(self, loader):
        self._dataset = loader.dataset
        self._is_iterable = loader._is_iterable
        self._index_sampler = loader._index_sampler
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._num_workers = loader.num_workers
        self._prefetch_factor = loader.prefetch_factor
        self._pin_memory = loader.pin_memory and _t.cuda.is_available()
        if loader.pin_memory and not self._pin_memory:
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.")
        self._pin_memory_device = loader.pin_memory_device
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._persistent_workers = loader.persistent_workers
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = int(_t.empty((), dtype=_t.int64).random_(generator=loader.generator).item())
        self._num_yielded = 0
        self._loader_len = loader.__len__

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0

    def _next_index(self):
        return next(self._sampler_iter)

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        return data

    def __len__(self):
        return self._loader_len()


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._fetcher = create_fetcher(self._is_iterable, self._dataset, self._auto_collation,
                                       self._collate_fn, self._drop_last)

    def _next_data(self):
        index = self._next_index()  # may raise StopIteration
        data = self._fetcher.fetch(index)
        if self._pin_memory:
            data = _pin_memory(data, self._pin_memory_device)
        return data


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        assert self._num_workers > 0 and self._prefetch_factor > 0
        ctx = loader.multiprocessing_context or multiprocessing
        self._shutdown = True  # until the workers exist: __del__ has nothing to stop
        self._worker_result_queue = ctx.Queue()
        self._workers_done_event = ctx.Event()
        # every shared-memory file of this iterator's workers starts with it,
        # so that shutdown can remove what a killed worker left behind
        self._shm_prefix = "pcs_%d_%d" % (os.getpid(), next(_iter_ids))
        self._index_queues, self._workers = [], []
        self._worker_prefixes = ["%s_w%d" % (self._shm_prefix, i) for i in range(self._num_workers)]
        self._shutdown = False
        _live.add(self)
        for i in range(self._num_workers):
            # indices go through a pipe per worker, written synchronously: a
            # Queue's feeder thread may already be finalized when a garbage
            # iterator's __del__ sends the shutdown message (gc clears weak
            # references, the Queue's finalizer among them, before __del__)
            index_reader, index_queue = ctx.Pipe(duplex=False)
            w = ctx.Process(target=_worker_loop, daemon=True,
                            args=(self._is_iterable, self._dataset, index_reader,
                                  self._worker_result_queue, self._workers_done_event,
                                  self._auto_collation, self._collate_fn, self._drop_last,
                                  self._base_seed, loader.worker_init_fn, i, self._num_workers,
                                  self._persistent_workers, self._worker_prefixes[i]))
            w.start()
            index_reader.close()
            self._index_queues.append(index_queue)
            self._workers.append(w)
        if self._pin_memory:
            self._pin_memory_thread_done_event = threading.Event()
            self._data_queue = queue.Queue()
            device = _t.cuda.current_device()
            t = threading.Thread(target=pin_memory_loop, daemon=True,
                                 args=(self._worker_result_queue, self._data_queue, device,
                                       self._pin_memory_thread_done_event, self._pin_memory_device))
            t.start()
            self._pin_memory_thread = t
        else:
            self._data_queue = self._worker_result_queue
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0  # index of the next task to send to a worker
        self._rcvd_idx = 0  # index of the next task to return
        # task index -> (worker_id,) while pending, (worker_id, data) when it
        # came back out of order
        self._task_info = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            # persistent workers: a new epoch; drop what the last one left
            # in flight, up to every worker's acknowledgement
            for q in self._index_queues:
                q.send(_ResumeIteration())
            pending = self._num_workers
            while pending > 0:
                return_idx, return_data = self._get_data()
                if isinstance(return_idx, _ResumeIteration):
                    assert return_data is None
                    pending -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_get_data(self, timeout):
        """(True, item) or (False, None) after `timeout`; a dead worker raises
        at the next poll (_POLL seconds at most) instead of a long wait."""
        waited = 0.0
        while True:
            step = min(_POLL, timeout - waited)
            try:
                return True, self._data_queue.get(timeout=max(step, 0))
            except queue.Empty:
                pass
            failed = [w for i, w in enumerate(self._workers)
                      if self._workers_status[i] and not w.is_alive()]
            if failed:
                pids = ", ".join(str(w.pid) for w in failed)
                codes = ", ".join(_describe_exit(w.exitcode) for w in failed)
                self._shutdown_workers()
                raise RuntimeError(f"DataLoader worker (pid {pids}) exited unexpectedly "
                                   f"({codes})")
            waited += step
            if waited >= timeout:
                return False, None

    def _get_data(self):
        if self._timeout > 0:
            ok, data = self._try_get_data(self._timeout)
            if not ok:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
            return data
        while True:
            if self._pin_memory and not self._pin_memory_thread.is_alive():
                raise RuntimeError("Pin memory thread exited unexpectedly")
            ok, data = self._try_get_data(_POLL * 50)
            if ok:
                return data

    def _next_data(self):
        while True:
            # skip the tasks of workers whose iterable stream has ended
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info:
                    if len(info) == 2 or self._workers_status[info[0]]:
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                data = self._task_info.pop(self._rcvd_idx)[1]
                self._rcvd_idx += 1
                return self._process_data(data)
            assert not self._shutdown and self._tasks_outstanding > 0
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, _IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                if idx not in self._task_info:
                    continue  # not a task of this epoch (cannot happen; be safe)
                self._task_info[idx] += (data,)  # early: kept until its turn
            else:
                del self._task_info[idx]
                self._rcvd_idx += 1
                return self._process_data(data)

    def _try_put_index(self):
        assert self._tasks_outstanding < self._prefetch_factor * self._num_workers
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):  # the next worker still active
            worker_queue_idx = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_queue_idx]:
                break
        else:
            return  # every worker's stream has ended
        # with the indices, the worker's batch memory we no longer use (_shm)
        returned = _shm.take_returned(self._worker_prefixes[worker_queue_idx])
        try:
            self._index_queues[worker_queue_idx].send((self._send_idx, index, returned))
        except OSError:
            pass  # the worker is dead: _try_get_data reports it
        self._task_info[self._send_idx] = (worker_queue_idx,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _process_data(self, data):
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _mark_worker_as_unavailable(self, worker_id, shutdown=False):
        # the worker leaves its loop at the None, after the tasks before it
        try:
            self._index_queues[worker_id].send(None)
        except OSError:
            pass  # already gone
        self._workers_status[worker_id] = False

    def _shutdown_workers(self):
        if getattr(self, "_shutdown", True):
            return
        self._shutdown = True
        try:
            if self._pin_memory:
                self._pin_memory_thread_done_event.set()  # seen within its poll
                self._pin_memory_thread.join()
            self._workers_done_event.set()
            for worker_id in range(len(self._workers)):
                if self._persistent_workers or self._workers_status[worker_id]:
                    self._mark_worker_as_unavailable(worker_id, shutdown=True)
            for w in self._workers:
                w.join(timeout=_JOIN_TIMEOUT)
            for q in self._index_queues:
                q.close()
            self._worker_result_queue.cancel_join_thread()
            self._worker_result_queue.close()
        finally:
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
            # batches made but never received (or a killed worker's)
            for prefix in self._worker_prefixes:
                _shm.forget(prefix)

    def __del__(self):
        try:
            self._shutdown_workers()
        except Exception:  # noqa: BLE001 - interpreter shutdown: modules may be gone
            pass


def _describe_exit(code):
    if code is None:
        return "still running"
    if code < 0:
        import signal
        try:
            return "killed by signal %s" % signal.Signals(-code).name
        except ValueError:
            return "killed by signal %d" % -code
    return "exit code %d" % code
