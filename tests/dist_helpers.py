"""Shared by the distributed tests: a free port, and the test-only backend.

The fake backend makes real process groups (rendezvous, ranks, subgroups,
barriers over the store) without any collective: its collectives only
record that they were called. It exists to test the bookkeeping; it is not a
CPU backend and moves no data."""
import socket

import pycuda_sem.distributed as dist


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class FakeProcessGroup(dist.ProcessGroup):
    def __init__(self, store, rank, size):
        super().__init__(store, rank, size)
        self.calls = []

    def _record(self, name, *args):
        self.calls.append((name,) + args)
        return dist.Work()

    def allreduce(self, tensors, op):
        return self._record("allreduce", op)

    def broadcast(self, tensors, root):
        return self._record("broadcast", root)

    def _allgather_base(self, output, input):
        return self._record("allgather_into_tensor")

    def send(self, tensors, dst, tag):
        return self._record("send", dst, tag)

    def recv(self, tensors, src, tag):
        return self._record("recv", src, tag)


def make_fake(store, rank, size, timeout, **kwargs):
    return FakeProcessGroup(store, rank, size)


def register_fake():
    if "fake" not in dist._backends:
        dist.Backend.register_backend("fake", make_fake, devices=["cpu", "cuda"])
