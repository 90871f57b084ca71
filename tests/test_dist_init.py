"""init_process_group and the process-group bookkeeping (CPU tests): the
rendezvous over env://, tcp:// and file:// across 3 spawned processes with
the test-only fake backend (dist_helpers.py), subgroups, barriers over the
store, destroy; torch's errors; the NCCL hook's errors; the collectives'
argument checks and dispatch."""
import os
import time
from datetime import timedelta

import pytest

import pycuda_sem
import pycuda_sem.distributed as dist
import pycuda_sem.multiprocessing as mp
from pycuda_sem.distributed import _backend
from dist_helpers import FakeProcessGroup, free_port, make_fake, register_fake

WORLD = 3


def _init_worker(rank, kind, arg):
    register_fake()
    timeout = timedelta(seconds=30)
    if kind == "env":
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(arg), RANK=str(rank),
                          WORLD_SIZE=str(WORLD))
        dist.init_process_group("fake", timeout=timeout)
    else:
        dist.init_process_group("fake", init_method=arg, rank=rank, world_size=WORLD,
                                timeout=timeout)
    assert dist.is_initialized()
    assert (dist.get_rank(), dist.get_world_size()) == (rank, WORLD)
    assert dist.get_backend() == "fake"
    world = dist.group.WORLD
    assert isinstance(world, FakeProcessGroup) and dist.GroupMember.WORLD is world
    assert dist.get_process_group_ranks(world) == [0, 1, 2]

    # A barrier really waits: rank 2 arrives late and marks it in the store first.
    if rank == 2:
        time.sleep(0.3)
        world._store.set("late", "1")
    dist.barrier()
    assert world._store.check(["late"])

    sub = dist.new_group([2, 0])
    if rank == 1:
        assert sub == dist.GroupMember.NON_GROUP_MEMBER
        assert dist.get_rank(sub) == -1 and dist.get_world_size(sub) == -1
        with pytest.warns(UserWarning, match="does not belong to the given group"):
            assert dist.all_reduce(pycuda_sem.ones(2), group=sub) is None
    else:
        assert dist.get_rank(sub) == rank // 2 and dist.get_world_size(sub) == 2
        assert dist.get_process_group_ranks(sub) == [0, 2]
        assert dist.get_global_rank(sub, 1) == 2 and dist.get_group_rank(sub, 2) == 1
        dist.barrier(group=sub)
        # Global src=2 is group rank 1 of `sub`: the backend sees the group rank.
        dist.broadcast(pycuda_sem.ones(2), src=2, group=sub)
        assert sub.calls[-1] == ("broadcast", 1)
    dist.barrier()
    dist.destroy_process_group()
    assert not dist.is_initialized()


def test_init_env():
    mp.spawn(_init_worker, args=("env", free_port()), nprocs=WORLD)


def test_init_tcp():
    mp.spawn(_init_worker, args=("tcp", "tcp://127.0.0.1:%d" % free_port()), nprocs=WORLD)


def test_init_file(tmp_path):
    mp.spawn(_init_worker, args=("file", "file://" + str(tmp_path / "rdzv")), nprocs=WORLD)


@pytest.fixture
def fake_world():
    """A one-rank default group over a HashStore, destroyed afterwards."""
    register_fake()
    dist.init_process_group("fake", store=dist.HashStore(), rank=0, world_size=1)
    yield dist.group.WORLD
    dist.destroy_process_group()


@pytest.mark.parametrize("missing", ["RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"])
def test_env_errors(monkeypatch, missing):
    register_fake()
    env = dict(RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()))
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv(missing)
    msg = ("Error initializing torch.distributed using env:// rendezvous: environment variable "
           "%s expected, but not set" % missing)
    with pytest.raises(ValueError, match=msg):
        dist.init_process_group("fake")
    assert not dist.is_initialized()


def test_url_errors():
    register_fake()
    with pytest.raises(ValueError, match="tcp:// rendezvous: rank parameter missing"):
        dist.init_process_group("fake", init_method="tcp://127.0.0.1:1234", world_size=1)
    with pytest.raises(ValueError, match="tcp:// rendezvous: port number missing"):
        dist.init_process_group("fake", init_method="tcp://127.0.0.1", rank=0, world_size=1)
    with pytest.raises(ValueError, match="file:// rendezvous: world size parameter missing"):
        dist.init_process_group("fake", init_method="file:///tmp/x", rank=0)
    with pytest.raises(RuntimeError, match="No rendezvous handler for udp://"):
        dist.init_process_group("fake", init_method="udp://x:1", rank=0, world_size=1)
    with pytest.raises(ValueError, match="Cannot specify both init_method and store"):
        dist.init_process_group("fake", init_method="env://", store=dist.HashStore())
    with pytest.raises(ValueError, match="rank must be non-negative if using store"):
        dist.init_process_group("fake", store=dist.HashStore(), world_size=1)
    with pytest.raises(ValueError, match="Invalid backend: 'nonesuch'"):
        dist.init_process_group("nonesuch", store=dist.HashStore(), rank=0, world_size=1)


def test_queries_before_init():
    assert not dist.is_initialized() and dist.group.WORLD is None
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        dist.get_rank()
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        dist.all_reduce(pycuda_sem.ones(1))


def test_nccl_without_nccl(monkeypatch):
    monkeypatch.setattr(_backend, "_nccl_path", None)
    monkeypatch.setattr(_backend, "_nccl_error", "libnccl.so.2: cannot open (simulated)")
    assert not dist.is_nccl_available()
    with pytest.raises(RuntimeError, match="the NCCL backend needs libnccl.so.2.*simulated"):
        dist.init_process_group("nccl", init_method="tcp://127.0.0.1:%d" % free_port(),
                                rank=0, world_size=2)
    assert not dist.is_initialized()


@pytest.mark.skipif(pycuda_sem.cuda.device_count() > 0, reason="this machine has a GPU")
def test_nccl_without_gpu_is_a_clear_error():
    # No NCCL, no GPU, or both: never a hang or a half-made group.
    with pytest.raises(RuntimeError, match="NCCL|GPUs"):
        dist.init_process_group("nccl", store=dist.HashStore(), rank=0, world_size=1)
    assert not dist.is_initialized()


def test_gloo_is_not_provided():
    with pytest.raises(RuntimeError, match="gloo backend .* is not provided"):
        dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)


def test_double_init_and_destroy(fake_world):
    with pytest.raises(ValueError, match="trying to initialize the default process group twice"):
        dist.init_process_group("fake", store=dist.HashStore(), rank=0, world_size=1)
    with pytest.raises(ValueError, match="should be within the world_size"):
        dist.new_group([1])
    sub = dist.new_group([0])
    dist.destroy_process_group(sub)
    with pytest.raises(ValueError, match="Invalid process group specified"):
        dist.destroy_process_group(sub)
    assert dist.is_initialized()


def test_collectives_check_arguments(fake_world):
    x = pycuda_sem.ones(4)
    with pytest.raises(TypeError, match="Expected parameter `tensor` of type torch.Tensor"):
        dist.all_reduce([x])
    with pytest.raises(TypeError, match="List\\[torch.Tensor\\]"):
        dist.all_gather((x,), x)
    with pytest.raises(ValueError, match="world_size times input tensor size"):
        dist.all_gather_into_tensor(pycuda_sem.ones(3), x)
    with pytest.raises(ValueError, match="input tensor must be the same size as output size"):
        dist.reduce_scatter_tensor(pycuda_sem.ones(3), x)
    with pytest.raises(ValueError, match="Split sizes doesn't match"):
        dist.all_to_all_single(x, x, [3], [4])
    with pytest.raises(ValueError, match="destination rank should not be the same"):
        dist.send(x, dst=0)
    with pytest.raises(ValueError, match="Can't specify both src and group_src"):
        dist.broadcast(x, src=0, group_src=0)
    with pytest.raises(ValueError, match="Tensors must be contiguous"):
        dist.all_reduce(pycuda_sem.ones(4, 4).t())
    with pytest.raises(ValueError, match="Invalid ``op``"):
        dist.P2POp(dist.send, x, 0)
    with pytest.raises(ValueError, match="Invalid ``p2p_op_list``"):
        dist.batch_isend_irecv([x])
    with pytest.raises(ValueError, match="object_list must have 1 entries"):
        dist.all_gather_object([], 1)


def test_collectives_dispatch_to_the_backend(fake_world):
    x = pycuda_sem.ones(4)
    work = dist.all_reduce(x, op=dist.ReduceOp.MAX, async_op=True)
    assert isinstance(work, dist.Work) and work.is_completed() and work.wait()
    assert dist.all_reduce(x) is None
    assert fake_world.calls == [("allreduce", dist.ReduceOp.MAX), ("allreduce", dist.ReduceOp.SUM)]
    dist.all_gather_into_tensor(pycuda_sem.ones(4), x)
    assert fake_world.calls[-1] == ("allgather_into_tensor",)
    with pytest.raises(RuntimeError, match="the fake backend does not provide reduce"):
        dist.reduce(x, dst=0)


def test_nccl_group_refuses_cpu_tensors(monkeypatch):
    # The NCCL hook replaced by the fake creator: the checks before the backend
    # are the ones a real NCCL group will get.
    monkeypatch.setitem(dist._backends, "nccl", _backend._BackendPlugin(make_fake, ["cuda"]))
    dist.init_process_group("nccl", store=dist.HashStore(), rank=0, world_size=1)
    try:
        assert dist.get_backend() == dist.Backend.NCCL
        with pytest.raises(RuntimeError, match="the NCCL backend needs CUDA tensors"):
            dist.all_reduce(pycuda_sem.ones(2))
        with pytest.raises(RuntimeError, match="device type cpu"):
            dist.broadcast(pycuda_sem.ones(2), src=0)
    finally:
        dist.destroy_process_group()


def test_names():
    assert dist.is_available()
    assert dist.Backend("NCCL") == "nccl" and dist.Backend.NCCL == "nccl"
    assert [int(o) for o in (dist.ReduceOp.SUM, dist.ReduceOp.AVG, dist.ReduceOp.PRODUCT,
                             dist.ReduceOp.MIN, dist.ReduceOp.MAX)] == [0, 1, 2, 3, 4]
    assert dist.GroupMember.NON_GROUP_MEMBER == -100
    assert issubclass(dist.DistStoreError, RuntimeError)
    assert dist.default_pg_timeout == timedelta(minutes=30)
