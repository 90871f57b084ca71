"""ProcessGroupNCCL: the NCCL backend of torch.distributed.

The data moves in C (csrc/distributed/): a `_C._NcclComm` per device is one
NCCL communicator with its internal stream; `comm.run(name, ops, outputs)`
enqueues one or more NCCL calls (several as one NCCL group) after an event
wait on the caller's current stream, marks the tensors as used by the NCCL
stream for the caching allocator, and returns a `_C._NcclWork` holding the
end event. This file builds the op lists, creates communicators lazily (at
the first collective on a device, from a ncclUniqueId that rank 0 puts in the
group's store), and watches for failures:

- Work.wait() makes the caller's current stream wait (the host is not
  blocked), as torch's. With TORCH_NCCL_BLOCKING_WAIT=1, or wait(timeout),
  it blocks the host, polling NCCL's asynchronous error, and past the
  timeout aborts the communicator and raises RuntimeError.
- A watchdog thread per group polls the unfinished works every
  TORCH_NCCL_WATCHDOG_POLL_S (0.1 s): on NCCL's asynchronous error or a work
  older than the group's timeout it aborts the communicator (the kernels
  waiting on a dead peer return) and raises RuntimeError in the thread that
  created the group, so a failed peer never leaves the others hanging in a
  synchronize.
- A heartbeat through the group's store (_Heartbeat) finds a peer that has
  died in seconds, instead of at the group's timeout.
"""
import collections
import ctypes
import os
import threading
import time
from datetime import timedelta

from ._backend import ProcessGroup, ReduceOp, Work
from ._store import DistBackendError

__all__ = ["ProcessGroupNCCL"]

# run()'s op kinds (csrc/distributed/nccl_comm.c)
ALLREDUCE, BROADCAST, REDUCE, ALLGATHER, REDUCESCATTER, SEND, RECV = range(7)

_NCCL_REDUCE_OPS = (ReduceOp.SUM, ReduceOp.AVG, ReduceOp.PRODUCT, ReduceOp.MIN, ReduceOp.MAX)


def _C():
    from .. import _C as c
    return c


def _env_flag(name):
    v = os.environ.get(name, "")
    return v not in ("", "0")


_RED = {op: int(op) for op in _NCCL_REDUCE_OPS}


def _red(op):
    r = _RED.get(op)  # a dict lookup: this is on every collective's path
    if r is None:
        raise ValueError("Cannot use ReduceOp.%s with NCCL" % ReduceOp.RedOpType(op).name)
    return r


class _WorkNCCL(Work):
    """The Work of an NCCL collective: wraps the C handle (its end event)."""

    __slots__ = ("_w", "_pg", "_blocking")

    def __init__(self, w, pg, blocking=False):
        self._w = w
        self._pg = pg
        self._blocking = blocking

    def is_completed(self):
        return self._w.is_completed()

    def is_success(self):
        return self._w.is_completed() and not self._w.comm.aborted

    def exception(self):
        return None

    def source_rank(self):
        return -1

    def result(self):
        return self._w.result()

    def wait(self, timeout=None):
        """The caller's current stream waits for the collective. With a
        timeout, or TORCH_NCCL_BLOCKING_WAIT=1 (or for a barrier), the host
        waits too, and a collective not done in time aborts the group's
        communicator and raises RuntimeError."""
        if timeout is not None and isinstance(timeout, timedelta) and timeout.total_seconds() == 0:
            timeout = None
        if self._blocking or timeout is not None or self._pg._blocking_wait:
            t = timeout if timeout is not None else self._pg._timeout
            self._wait_host(t.total_seconds() if isinstance(t, timedelta) else float(t))
        self._w.wait()
        return True

    def _wait_host(self, secs):
        # While the host waits here this thread raises by itself: the watchdog
        # then only aborts, it does not raise a second exception into it.
        pg = self._pg
        pg._host_waiting += 1
        try:
            self._w._wait_host(secs)
        finally:
            pg._host_waiting -= 1

    def synchronize(self):
        self._wait_host(self._pg._timeout.total_seconds())

    def block_current_stream(self):
        self._w.wait()

    def get_future(self):
        import concurrent.futures
        f = concurrent.futures.Future()
        self.synchronize()
        f.set_result(self.result())
        return f


class _Watchdog:
    """Polls the unfinished works of one group; on a timeout or an NCCL
    asynchronous error aborts the communicator and raises in the thread that
    made the group."""

    def __init__(self, pg):
        self._pg = pg
        self._pending = pg._pending
        self._stop = threading.Event()
        self._poll = float(os.environ.get("TORCH_NCCL_WATCHDOG_POLL_S", "0.1"))
        self._owner = pg._owner  # the thread that made the group: it runs the collectives
        self._thread = threading.Thread(target=self._run, name="pycuda_sem-nccl-watchdog",
                                        daemon=True)
        self._thread.start()

        # its own switch: the heartbeat goes on while _shutdown waits for the
        # work in flight after the watchdog's loop has stopped
        self._heartbeat_stop = threading.Event()
        self._heartbeat = _Heartbeat(pg, self._heartbeat_stop)

    def stop(self):
        self._stop.set()

    def stop_heartbeat(self):
        self._heartbeat_stop.set()

    def _run(self):
        timeout = self._pg._timeout.total_seconds()
        while not self._stop.wait(self._poll):
            try:
                dead = self._heartbeat.dead
                if dead is not None and self._pending:
                    error = ("Watchdog: %s while %s on rank %d waited for it; the NCCL "
                             "communicator was aborted" % (dead, self._pending[0].name,
                                                           self._pg.rank()))
                    self._fail(error)
                    for comm in list(self._pg._comms.values()):
                        comm.abort(error)
                    return
                for comm in list(self._pg._comms.values()):
                    comm.check_async_error()  # aborts the communicator and raises on an error
                while self._pending:
                    w = self._pending[0]
                    if w.comm.aborted or w.is_completed():
                        self._pending.popleft()
                        continue
                    if w.elapsed() > timeout:
                        error = ("Watchdog caught collective operation timeout: %s on rank %d ran "
                                 "for %.0f milliseconds before timing out (the group's timeout is "
                                 "%s; a peer process probably failed or never joined the "
                                 "collective); the NCCL communicator was aborted"
                                 % (w.name, self._pg.rank(), w.elapsed() * 1e3,
                                    self._pg._timeout))
                        # the exception first: the abort lets a thread blocked in a
                        # synchronize go on, and it must raise at once
                        self._fail(error)
                        w.comm.abort(error)
                        return
                    break
            except RuntimeError as e:  # NCCL's asynchronous error
                self._fail(str(e))
                return
            except IndexError:  # emptied by _shutdown meanwhile
                continue

    def _fail(self, message):
        self._heartbeat_stop.set()
        self._pending.clear()
        self._pg._failure = message
        if not self._pg._host_waiting:
            self._raise_in_owner(message)

    def _raise_in_owner(self, message):
        # The group's thread may be blocked in a synchronize on a stream that
        # waited on the dead collective: the abort lets it return, and the
        # exception set here is raised there at its next bytecode.
        # (an exception class, not an instance, is what can be sent: this one
        # carries the message; a DistBackendError, hence a RuntimeError)
        exc = type("DistBackendError", (DistBackendError,),
                   {"__init__": lambda self, *a: DistBackendError.__init__(self, message)})
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self._owner), ctypes.py_object(exc))


class _Heartbeat:
    """The store heartbeat: a dead peer found in seconds, not at the group's
    timeout. A thread per group adds 1 to `nccl/heartbeat/<rank>` in the
    group's store every PYCUDA_SEM_NCCL_HEARTBEAT_S (1 s), from a clone of
    the store (its own connection: the user's thread may be blocked in a
    wait on the original). While a collective of this rank is unfinished it
    also reads the peers' counts; a peer whose count has not moved for
    PYCUDA_SEM_NCCL_PEER_TIMEOUT_S (60 s, at most the group's timeout) has
    stopped (killed, crashed, or its host gone), and so has rank 0 when the
    store it serves stays unreachable that long. `dead` then names it, and
    the watchdog aborts the communicator and raises. The store's requests
    may block, so they run here, never in the watchdog's loop."""

    def __init__(self, pg, stop):
        self.dead = None
        self._rank, self._size = pg.rank(), pg.size()
        self._interval = float(os.environ.get("PYCUDA_SEM_NCCL_HEARTBEAT_S", "1"))
        self._limit = min(float(os.environ.get("PYCUDA_SEM_NCCL_PEER_TIMEOUT_S", "60")),
                          pg._timeout.total_seconds())
        self._pending = pg._pending
        self._stop = stop
        self._seen = {}  # peer -> (its count, when we first saw that count)
        self._unreachable_since = None
        try:
            self._store = pg._store.clone()
        except Exception:  # noqa: BLE001 - no second connection: no heartbeat (the timeout stays)
            return
        threading.Thread(target=self._run, name="pycuda_sem-nccl-heartbeat", daemon=True).start()

    @staticmethod
    def _key(rank):
        return "nccl/heartbeat/%d" % rank

    def _run(self):
        while not self._stop.wait(self._interval):
            now = time.monotonic()
            try:
                self._store.add(self._key(self._rank), 1)
                if self._pending:
                    self._check_peers(now)
                self._unreachable_since = None
            except Exception as e:  # noqa: BLE001 - the store's server (rank 0) or network gone
                if not self._pending:
                    continue
                if self._unreachable_since is None:
                    self._unreachable_since = now
                elif now - self._unreachable_since > self._limit:
                    self.dead = ("the group's store has been unreachable for %.0f s (rank 0, "
                                 "which serves it, probably failed): %s"
                                 % (now - self._unreachable_since, e))
                    return

    def _check_peers(self, now):
        # add(key, 0) reads a count without waiting for a key that is not there yet
        for r in range(self._size):
            if r == self._rank:
                continue
            n = self._store.add(self._key(r), 0)
            last = self._seen.get(r)
            if last is None or last[0] != n:
                self._seen[r] = (n, now)
            elif now - last[1] > self._limit:
                self.dead = ("rank %d has sent no heartbeat for %.0f s (the process probably "
                             "died)" % (r, now - last[1]))
                return


class ProcessGroupNCCL(ProcessGroup):
    """The NCCL backend: one communicator per device, created at the first
    collective on that device (or at once for init_process_group's
    device_id), its collectives on an internal stream per communicator."""

    def __init__(self, store, rank, size, timeout=timedelta(minutes=10), device_id=None):
        super().__init__(store, rank, size)
        self._timeout = timeout
        self._comms = {}
        self._n_comms = 0
        self._blocking_wait = _env_flag("TORCH_NCCL_BLOCKING_WAIT")
        self._failure = None
        self._host_waiting = 0  # > 0 while a Work._wait_host blocks the host
        self._owner = threading.get_ident()
        self._pending = collections.deque()  # unfinished _NcclWorks, oldest first
        self._watchdog = None
        self._lock = threading.Lock()
        if device_id is not None:
            self._comm(device_id.index if hasattr(device_id, "index") else int(device_id))

    # ---- communicators ----------------------------------------------------------------------

    def _comm(self, device):
        comm = self._comms.get(device)
        if comm is not None:
            return comm
        c = _C()
        with self._lock:
            key = "nccl/unique_id/%d" % self._n_comms
            self._n_comms += 1
            if self._rank == 0:
                uid = c._nccl_unique_id()
                self._store.set(key, uid)
            else:
                uid = bytes(self._store.get(key))
            comm = c._NcclComm(uid, self._size, self._rank, device)
            self._comms[device] = comm
            if self._watchdog is None and not _env_flag("TORCH_NCCL_DISABLE_WATCHDOG"):
                self._watchdog = _Watchdog(self)
        return comm

    def _run(self, name, device, ops, outputs, blocking=False):
        if self._failure:  # the watchdog gave up on this group
            raise DistBackendError("this NCCL process group failed and cannot run more "
                                   "collectives: %s" % self._failure)
        w = self._comm(device).run(name, ops, outputs)
        # Works of one communicator finish in order (one stream): drop the
        # finished ones from the left, so that they (and their events and
        # outputs) are freed now, not at the watchdog's next poll. The watchdog
        # pops too; if the two race, a popped unfinished work is still covered
        # by the later works queued behind it.
        pending = self._pending
        try:
            while pending and pending[0].is_completed():
                pending.popleft()
        except IndexError:
            pass
        pending.append(w)
        return _WorkNCCL(w, self, blocking)

    @staticmethod
    def _device_of(tensors):
        return tensors[0].device.index

    # ---- collectives ------------------------------------------------------------------------

    def allreduce(self, tensors, op=ReduceOp.SUM):
        t = tensors[0]
        return self._run("all_reduce", t.device.index, [(ALLREDUCE, t, t, 0, _red(op))], tensors)

    def broadcast(self, tensors, root=0):
        t = tensors[0]
        return self._run("broadcast", t.device.index, [(BROADCAST, t, t, root, 0)], tensors)

    def _broadcast_many(self, tensors, root=0):
        """Broadcast several tensors of one device as one NCCL group (DDP's
        parameters and buffers)."""
        ops = [(BROADCAST, t, t, root, 0) for t in tensors]
        return self._run("broadcast", tensors[0].device.index, ops, tensors)

    def reduce(self, tensors, root=0, op=ReduceOp.SUM):
        t = tensors[0]
        return self._run("reduce", t.device.index, [(REDUCE, t, t, root, _red(op))], tensors)

    def allgather(self, output_tensors, input_tensors):
        outs, t = output_tensors[0], input_tensors[0]
        for o in outs:
            if o.numel() != t.numel() or o.dtype != t.dtype:
                raise ValueError("all_gather: every output tensor must have the input's size and "
                                 "dtype (%s, %s)" % (tuple(t.shape), t.dtype))
        # one broadcast per rank, as one NCCL group: no staging copy
        ops = [(BROADCAST, t if r == self._rank else o, o, r, 0) for r, o in enumerate(outs)]
        return self._run("all_gather", t.device.index, ops, output_tensors)

    def _allgather_base(self, output, input):
        return self._run("all_gather_into_tensor", input.device.index,
                         [(ALLGATHER, input, output, 0, 0)], [output])

    def _reduce_scatter_base(self, output, input, op=ReduceOp.SUM):
        return self._run("reduce_scatter_tensor", input.device.index,
                         [(REDUCESCATTER, input, output, 0, _red(op))], [output])

    def alltoall_base(self, output, input, output_split_sizes, input_split_sizes):
        n = self._size
        rows_in = input.shape[0] if input.dim() else 0
        rows_out = output.shape[0] if output.dim() else 0
        row_in = input.numel() // rows_in if rows_in else 0
        row_out = output.numel() // rows_out if rows_out else 0
        ins = input_split_sizes or [rows_in // n] * n
        outs = output_split_sizes or [rows_out // n] * n
        flat_in, flat_out = input.reshape(-1), output.reshape(-1)
        ops = []
        off_in = off_out = 0
        for r in range(n):
            ops.append((SEND, flat_in.narrow(0, off_in * row_in, ins[r] * row_in), None, r, 0))
            ops.append((RECV, None, flat_out.narrow(0, off_out * row_out, outs[r] * row_out), r, 0))
            off_in += ins[r]
            off_out += outs[r]
        return self._run("all_to_all_single", input.device.index, ops, [output])

    def send(self, tensors, dst, tag=0):
        t = tensors[0]
        return self._run("send", t.device.index, [(SEND, t, None, dst, 0)], tensors)

    def recv(self, tensors, src, tag=0):
        t = tensors[0]
        return self._run("recv", t.device.index, [(RECV, None, t, src, 0)], tensors)

    def recv_anysource(self, tensors, tag=0):
        raise RuntimeError("ProcessGroupNCCL does not support recv from any source (pass src)")

    def _batch_p2p(self, ops):
        dev = ops[0][1].device.index
        nccl_ops = [(SEND, t, None, peer, 0) if is_send else (RECV, None, t, peer, 0)
                    for is_send, t, peer, _tag in ops]
        return [self._run("batch_isend_irecv", dev, nccl_ops, [t for _, t, _, _ in ops])]

    def barrier(self):
        """An all_reduce of one element on this rank's device, as torch's;
        its wait() blocks the host until every rank has arrived."""
        import pycuda_sem
        dev = self.bound_device_id
        dev = dev.index if dev is not None else pycuda_sem.cuda.current_device()
        t = pycuda_sem.zeros(1, device=pycuda_sem.device("cuda", dev))
        return self._run("barrier", dev, [(ALLREDUCE, t, t, 0, int(ReduceOp.SUM))], [t],
                         blocking=True)

    def _shutdown(self):
        wd = self._watchdog
        if wd is not None:
            wd.stop()
        # Finish what is in flight, then free the communicators with
        # ncclCommAbort, as torch's shutdown: ncclCommDestroy finalizes with
        # the peers and can block on one that has already exited. The wait
        # ends early when the heartbeat finds a dead peer or NCCL reports an
        # error, and at the group's timeout otherwise; what is still in
        # flight then is aborted, with a warning (destroy_process_group must
        # leave the process free to start again, so it does not raise).
        problem = None
        try:
            deadline = time.monotonic() + self._timeout.total_seconds()
            while self._pending and problem is None:
                w = self._pending[0]
                if w.comm.aborted or w.is_completed():
                    self._pending.popleft()
                    continue
                dead = wd._heartbeat.dead if wd is not None else None
                if dead is not None:
                    problem = dead
                elif time.monotonic() > deadline:
                    problem = "%s did not finish within the group's timeout (%s)" % (
                        w.name, self._timeout)
                else:
                    try:
                        w.comm.check_async_error()
                    except RuntimeError as e:
                        problem = str(e)
                    time.sleep(0.001)
        finally:
            if wd is not None:
                wd.stop_heartbeat()
            self._pending.clear()
            for comm in self._comms.values():
                if not comm.aborted:
                    comm.abort("the process group was destroyed")
            self._comms.clear()
        if problem is not None:
            import warnings
            warnings.warn("destroy_process_group: collectives still in flight were aborted: %s"
                          % problem, RuntimeWarning, stacklevel=3)


def _wait_all(works, timeout_s):
    """Test helper: block the host until every work is done."""
    deadline = time.monotonic() + timeout_s
    for w in works:
        w._w._wait_host(max(0.0, deadline - time.monotonic()))
