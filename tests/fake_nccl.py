"""A stand-in for _C._NcclComm on the CPU, for the CPU tests of
ProcessGroupNCCL's op lists (test_dist_nccl.py): ranks are threads of one
process; run(name, ops, outputs) meets the other ranks' run() of the same
communicator, and computes NCCL's semantics with NumPy on the tensors'
memory. Only the meaning of the ops is simulated, not streams or events."""
import threading

import numpy as np

ALLREDUCE, BROADCAST, REDUCE, ALLGATHER, REDUCESCATTER, SEND, RECV = range(7)
_REDUCE = {0: np.sum, 1: np.mean, 2: np.prod, 3: np.min, 4: np.max}

_worlds = {}
_worlds_lock = threading.Lock()


class _World:
    def __init__(self, size):
        self.size = size
        self.barrier = threading.Barrier(size)
        self.ops = [None] * size


def _np(t):
    return t.numpy().reshape(-1)


class FakeWork:
    def __init__(self, comm, name, outputs):
        self.comm, self.name, self._outputs = comm, name, outputs

    def wait(self, timeout=None):
        return True

    def is_completed(self):
        return True

    def _wait_host(self, timeout_s):
        return True

    def elapsed(self):
        return 0.0

    def result(self):
        return self._outputs


class FakeComm:
    def __init__(self, unique_id, size, rank, device):
        with _worlds_lock:
            self.world = _worlds.setdefault(bytes(unique_id), _World(size))
        self.rank, self.size, self.device = rank, size, device
        self.aborted = False

    def check_async_error(self):
        pass

    def abort(self, reason=None):
        self.aborted = True

    def destroy(self):
        pass

    def run(self, name, ops, outputs):
        w = self.world
        w.ops[self.rank] = ops
        w.barrier.wait()
        results = self._compute(w.ops)  # every rank reads all inputs first
        w.barrier.wait()
        for arr, value in results:
            arr[...] = value
        w.barrier.wait()
        return FakeWork(self, name, outputs)

    def _compute(self, all_ops):
        me, out = self.rank, []
        sends = {}  # (src, dst) -> list of arrays, in order
        for r, ops in enumerate(all_ops):
            for kind, a, b, peer, red in ops:
                if kind == SEND:
                    sends.setdefault((r, peer), []).append(_np(a).copy())
        for i, (kind, a, b, peer, red) in enumerate(all_ops[me]):
            col = [all_ops[r][i] for r in range(self.size)]  # the same op of every rank
            if kind in (ALLREDUCE, REDUCE):
                v = _REDUCE[red](np.stack([_np(c[1]) for c in col]), axis=0)
                if kind == ALLREDUCE or me == peer:
                    out.append((_np(b), v))
            elif kind == BROADCAST:
                out.append((_np(b), _np(col[peer][1]).copy()))
            elif kind == ALLGATHER:
                out.append((_np(b), np.concatenate([_np(c[1]) for c in col])))
            elif kind == REDUCESCATTER:
                v = _REDUCE[red](np.stack([_np(c[1]) for c in col]), axis=0)
                n = _np(b).size
                out.append((_np(b), v[me * n:(me + 1) * n]))
            elif kind == RECV:
                out.append((_np(b), sends[(peer, me)].pop(0)))
        return out


def unique_id():
    import os
    return os.urandom(128)


class StuckWork:
    """A collective that never finishes (its peer is gone)."""

    def __init__(self, comm, name):
        import time
        self.comm, self.name, self._t0, self._clock = comm, name, time.monotonic(), time.monotonic

    def is_completed(self):
        return False

    def elapsed(self):
        return self._clock() - self._t0

    def wait(self, timeout=None):
        return True


class StuckComm:
    """A communicator whose collectives never finish: for the watchdog's and
    the heartbeat's CPU tests. Same constructor as _C._NcclComm."""

    def __init__(self, uid, size, rank, device):
        self.aborted = False

    def run(self, name, ops, outputs):
        return StuckWork(self, name)

    def check_async_error(self):
        pass

    def abort(self, reason=None):
        self.aborted = True
