"""The NCCL backend of pycuda_sem.distributed and DistributedDataParallel.

CPU part (any machine): the loader's errors, the C communicator's argument
checks without NCCL, DDP refusing what torch refuses. Multi-GPU part
(marked multigpu: two or more GPUs and NCCL): a spawned process a GPU (up
to four) checks every collective against NumPy, point to point in pairs and
around a ring, the stream semantics, DDP against single-process training;
two processes check that a dead peer makes the other rank fail within the
group's timeout. The worker bodies are in nccl_workers.py.

    python3 -m pytest -q -m multigpu tests/test_dist_nccl.py
"""
import os
import subprocess
import sys

import pytest

import pycuda_sem
import pycuda_sem.distributed as dist
import pycuda_sem.multiprocessing as mp
from pycuda_sem import _C
from pycuda_sem.distributed import _backend
from dist_helpers import free_port

import nccl_workers


def _needs_nccl():
    if not dist.is_nccl_available():
        pytest.skip("NCCL (libnccl.so.2) cannot be loaded here")


# ---- CPU: loader, errors, DDP's refusals --------------------------------------------------------

def _fresh(code):
    """Runs `code` in a new interpreter (NCCL not loaded yet there)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root,
                          timeout=120)


def test_nccl_load_reports_every_path():
    r = _fresh("import pycuda_sem._C as C\n"
               "try:\n    C._nccl_load(['/nonexistent/a.so', '/nonexistent/b.so'])\n"
               "except RuntimeError as e:\n    print(e)\n"
               "try:\n    C._nccl_version()\n"
               "except RuntimeError as e:\n    print(e)\n"
               "for bad in (5, ['/nonexistent/a.so', 3]):\n"
               "    try:\n        C._nccl_load(bad)\n"
               "    except TypeError as e:\n        print('TypeError', e)\n")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "the NCCL backend needs libnccl.so.2" in lines[0]
    assert "/nonexistent/a.so" in lines[0] and "/nonexistent/b.so" in lines[0]
    assert "NCCL is not loaded" in lines[1]
    assert lines[2].startswith("TypeError") and lines[3].startswith("TypeError")


def test_candidates_end_with_the_soname():
    cands = _backend._nccl_candidates()
    assert "libnccl.so.2" in cands
    assert all(c == "libnccl.so.2" or os.path.isfile(c) for c in cands)


def test_unique_id_and_comm_argument_checks():
    r = _fresh("import pycuda_sem._C as C\n"
               "try:\n    C._nccl_unique_id()\n"
               "except RuntimeError as e:\n    print(e)\n")
    assert "NCCL is not loaded" in r.stdout, (r.stdout, r.stderr)
    with pytest.raises(ValueError, match="128 bytes"):
        _C._NcclComm(b"short", 2, 0, 0)
    with pytest.raises(ValueError, match="out of range"):
        _C._NcclComm(bytes(128), 2, 2, 0)


def test_reduce_op_checks():
    from pycuda_sem.distributed._nccl import _red
    assert _red(dist.ReduceOp.AVG) == 1
    with pytest.raises(ValueError, match="BAND with NCCL"):
        _red(dist.ReduceOp.BAND)


def test_ddp_needs_a_process_group():
    model = pycuda_sem.nn.Linear(2, 2)
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        pycuda_sem.nn.parallel.DistributedDataParallel(model)


def test_ddp_refusals_with_a_group(monkeypatch):
    from dist_helpers import make_fake
    monkeypatch.setitem(dist._backends, "nccl", _backend._BackendPlugin(make_fake, ["cuda"]))
    dist.init_process_group("nccl", store=dist.HashStore(), rank=0, world_size=1)
    try:
        DDP = pycuda_sem.nn.parallel.DistributedDataParallel
        frozen = pycuda_sem.nn.Linear(2, 2).requires_grad_(False)
        with pytest.raises(RuntimeError, match="doesn't have any parameter that requires"):
            DDP(frozen)
        with pytest.raises(RuntimeError, match="needs the module on a CUDA device"):
            DDP(pycuda_sem.nn.Linear(2, 2))
    finally:
        dist.destroy_process_group()


def test_ddp_is_in_nn():
    assert pycuda_sem.nn.parallel.DistributedDataParallel is \
        pycuda_sem.nn.DistributedDataParallel


# ---- multi-GPU: a process a GPU (2 to 4) ------------------------------------------

@pytest.mark.multigpu
def test_collectives_match_numpy():
    _needs_nccl()
    mp.spawn(nccl_workers.collectives, args=(free_port(),), nprocs=nccl_workers.WORLD)


@pytest.mark.multigpu
def test_stream_semantics_and_allocator():
    _needs_nccl()
    mp.spawn(nccl_workers.streams, args=(free_port(),), nprocs=nccl_workers.WORLD)


@pytest.mark.multigpu
def test_ddp_matches_single_process():
    _needs_nccl()
    mp.spawn(nccl_workers.ddp, args=(free_port(),), nprocs=nccl_workers.WORLD)


@pytest.mark.multigpu
@pytest.mark.parametrize("mode", ["wait", "watchdog"])
def test_dead_peer_raises_within_timeout(tmp_path, mode):
    _needs_nccl()
    out = tmp_path / "rank0.txt"
    mp.spawn(nccl_workers.dead_peer, args=(free_port(), mode, str(out)), nprocs=2)
    elapsed, outcome = out.read_text().splitlines()[:2]
    # the timeout, NCCL noticing the closed connection, or the store
    # heartbeat noticing the silent peer, whichever comes first
    assert outcome.startswith("RuntimeError") and any(
        w in outcome for w in ("timeout", "asynchronous error", "heartbeat")), outcome
    assert float(elapsed) < 15.0, elapsed  # the timeout is 5 s; a hang would never return


# ---- CPU: DDP's bucketing over a one-rank test backend ------------------------------------------

class _OneRank(dist.ProcessGroup):
    """A group of one rank whose collectives are identities (an average over
    one rank is the value): enough to run DDP's hooks, buckets and final
    copy on the CPU. It records what DDP asked for."""

    def __init__(self, store, rank, size):
        super().__init__(store, rank, size)
        self.calls = []

    def allreduce(self, tensors, op=dist.ReduceOp.SUM):
        self.calls.append(("allreduce", int(op), tensors[0].numel()))
        return dist.Work(tensors)

    def _broadcast_many(self, tensors, root=0):
        self.calls.append(("broadcast", len(tensors)))
        return dist.Work(tensors)


@pytest.fixture
def one_rank_ddp(monkeypatch):
    from pycuda_sem.nn.parallel import distributed as ddp_mod
    monkeypatch.setattr(ddp_mod, "_REQUIRE_CUDA", False)
    monkeypatch.setitem(dist._backends, "nccl", _backend._BackendPlugin(
        lambda store, rank, size, timeout, **kw: _OneRank(store, rank, size), ["cpu", "cuda"]))
    dist.init_process_group("nccl", store=dist.HashStore(), rank=0, world_size=1)
    yield pycuda_sem.nn.parallel.DistributedDataParallel
    dist.destroy_process_group()


def _mlp_cpu(seed, unused=False):
    pycuda_sem.manual_seed(seed)
    m = pycuda_sem.nn.Sequential(pycuda_sem.nn.Linear(4, 8), pycuda_sem.nn.Tanh(),
                                 pycuda_sem.nn.Linear(8, 2))
    return _WithUnused(m) if unused else m


class _WithUnused(pycuda_sem.nn.Module):
    def __init__(self, body):
        super().__init__()
        self.body = body
        self.extra = pycuda_sem.nn.Linear(3, 3)  # never used by forward

    def forward(self, x):
        return self.body(x)


def _loss(model, seed):
    g = pycuda_sem.Generator().manual_seed(seed)
    x, y = pycuda_sem.randn(6, 4, generator=g), pycuda_sem.randn(6, 2, generator=g)
    return pycuda_sem.nn.functional.mse_loss(model(x), y)


@pytest.mark.parametrize("cap_mb,as_view", [(25, False), (1e-6, False), (1e-6, True)])
def test_ddp_buckets_one_rank_equal_plain_training(one_rank_ddp, cap_mb, as_view):
    ref = _mlp_cpu(0)
    model = one_rank_ddp(_mlp_cpu(0), bucket_cap_mb=cap_mb, gradient_as_bucket_view=as_view)
    pg = dist.group.WORLD
    n_buckets = len(model._buckets)
    assert n_buckets == (1 if cap_mb == 25 else 4)  # one parameter a bucket when tiny
    # reverse parameter order: the last parameter is in the first bucket
    assert model._buckets[0].params[0] is list(model.module.parameters())[-1]
    opt = pycuda_sem.optim.SGD(model.parameters(), lr=0.1)
    ref_opt = pycuda_sem.optim.SGD(ref.parameters(), lr=0.1)
    for step in range(3):
        pg.calls.clear()
        opt.zero_grad()
        _loss(model, step).backward()
        assert [c[0] for c in pg.calls] == ["allreduce"] * n_buckets
        assert all(c[1] == int(dist.ReduceOp.AVG) for c in pg.calls)
        opt.step()
        ref_opt.zero_grad()
        _loss(ref, step).backward()
        ref_opt.step()
    for p, q in zip(model.module.parameters(), ref.parameters()):
        assert pycuda_sem.allclose(p, q, atol=1e-6)
    assert list(model.state_dict())[0].startswith("module.")


def test_ddp_no_sync_one_rank(one_rank_ddp):
    model = one_rank_ddp(_mlp_cpu(1))
    pg = dist.group.WORLD
    pg.calls.clear()
    with model.no_sync():
        _loss(model, 0).backward()
    assert pg.calls == []
    _loss(model, 1).backward()
    assert [c[0] for c in pg.calls] == ["allreduce"]
    ref = _mlp_cpu(1)
    _loss(ref, 0).backward()
    _loss(ref, 1).backward()
    for p, q in zip(model.module.parameters(), ref.parameters()):
        assert pycuda_sem.allclose(p.grad, q.grad, atol=1e-6)


def test_ddp_unused_parameters_one_rank(one_rank_ddp):
    model = one_rank_ddp(_mlp_cpu(2, unused=True), find_unused_parameters=True)
    for step in range(2):
        model.zero_grad()
        _loss(model, step).backward()
    assert model.module.body[0].weight.grad is not None
    model = one_rank_ddp(_mlp_cpu(2, unused=True))
    _loss(model, 0).backward()
    with pytest.raises(RuntimeError, match="Expected to have finished reduction"):
        _loss(model, 1)


# ---- CPU: ProcessGroupNCCL's op lists over a simulated communicator -----------------------------

def _run_ranks(fn, world=2):
    """fn(pg) in one thread per rank, each with a ProcessGroupNCCL whose
    communicator is fake_nccl's (NumPy on the CPU)."""
    import threading
    from pycuda_sem.distributed import _nccl
    store = dist.HashStore()
    errors, results = [], [None] * world

    def body(rank):
        try:
            pg = _nccl.ProcessGroupNCCL(dist.PrefixStore("g", store), rank, world)
            results[rank] = fn(pg)
        except BaseException as e:  # noqa: BLE001 - reported by the test
            errors.append((rank, e))
            raise

    threads = [threading.Thread(target=body, args=(r,)) for r in range(world)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    if errors:
        raise errors[0][1]
    return results


@pytest.fixture
def fake_comm(monkeypatch):
    import types
    import fake_nccl
    from pycuda_sem.distributed import _nccl
    monkeypatch.setenv("TORCH_NCCL_DISABLE_WATCHDOG", "1")
    fake = types.SimpleNamespace(_NcclComm=fake_nccl.FakeComm, _nccl_unique_id=fake_nccl.unique_id)
    monkeypatch.setattr(_nccl, "_C", lambda: fake)


def _arr(rank, n, seed=0):
    import numpy as np
    return np.random.default_rng(seed * 10 + rank).standard_normal(n).astype(np.float32)


def test_op_lists_collectives(fake_comm):
    import numpy as np
    T = pycuda_sem

    def body(pg):
        r = pg.rank()
        out = {}
        for op in (dist.ReduceOp.SUM, dist.ReduceOp.AVG, dist.ReduceOp.MAX):
            t = T.from_numpy(_arr(r, 6))
            pg.allreduce([t], op).wait()
            out["ar%d" % int(op)] = t.numpy().copy()
        t = T.from_numpy(_arr(r, 6))
        pg.broadcast([t], 1).wait()
        out["bc"] = t.numpy().copy()
        t = T.from_numpy(_arr(r, 6))
        pg.reduce([t], 0, dist.ReduceOp.SUM).wait()
        out["red"] = t.numpy().copy()
        outs = [T.empty(6) for _ in range(2)]
        pg.allgather([outs], [T.from_numpy(_arr(r, 6))]).wait()
        out["ag"] = np.concatenate([o.numpy() for o in outs])
        big = T.empty(12)
        pg._allgather_base(big, T.from_numpy(_arr(r, 6))).wait()
        out["agb"] = big.numpy().copy()
        half = T.empty(3)
        pg._reduce_scatter_base(half, T.from_numpy(_arr(r, 6)), dist.ReduceOp.SUM).wait()
        out["rs"] = half.numpy().copy()
        src = T.from_numpy(_arr(r, 8, seed=1)).view(4, 2)
        dst = T.empty(4, 2)
        pg.alltoall_base(dst, src, None, None).wait()
        out["a2a"] = dst.numpy().copy()
        splits_in = [[1, 3], [2, 2]][r]
        rows_out = [[1, 3], [2, 2]][0][r] + [[1, 3], [2, 2]][1][r]
        dst = T.empty(rows_out, 2)
        pg.alltoall_base(dst, src, [[1, 2], [3, 2]][r], splits_in).wait()
        out["a2av"] = dst.numpy().copy()
        got = T.empty(6)
        works = pg._batch_p2p([(True, T.from_numpy(_arr(r, 6)), 1 - r, 0), (False, got, 1 - r, 0)])
        works[0].wait()
        out["p2p"] = got.numpy().copy()
        return out

    res = _run_ranks(body)
    a = [_arr(r, 6) for r in range(2)]
    for r in range(2):
        np.testing.assert_allclose(res[r]["ar0"], a[0] + a[1], rtol=1e-6)
        np.testing.assert_allclose(res[r]["ar1"], (a[0] + a[1]) / 2, rtol=1e-6)
        np.testing.assert_allclose(res[r]["ar4"], np.maximum(a[0], a[1]))
        np.testing.assert_array_equal(res[r]["bc"], a[1])
        np.testing.assert_array_equal(res[r]["ag"], np.concatenate(a))
        np.testing.assert_array_equal(res[r]["agb"], np.concatenate(a))
        np.testing.assert_allclose(res[r]["rs"], (a[0] + a[1])[3 * r:3 * r + 3], rtol=1e-6)
        np.testing.assert_array_equal(res[r]["p2p"], a[1 - r])
    np.testing.assert_allclose(res[0]["red"], a[0] + a[1], rtol=1e-6)
    s = [_arr(r, 8, seed=1).reshape(4, 2) for r in range(2)]
    for r in range(2):
        np.testing.assert_array_equal(res[r]["a2a"], np.concatenate([s[0][2 * r:2 * r + 2],
                                                                     s[1][2 * r:2 * r + 2]]))
    # uneven: rank 0 sends 1 row to 0 and 3 to 1; rank 1 sends 2 and 2
    np.testing.assert_array_equal(res[0]["a2av"], np.concatenate([s[0][:1], s[1][:2]]))
    np.testing.assert_array_equal(res[1]["a2av"], np.concatenate([s[0][1:], s[1][2:]]))


def test_op_lists_ddp_two_ranks(fake_comm, monkeypatch):
    """DDP over two simulated ranks equals one process on the whole batch."""
    from pycuda_sem.nn.parallel import distributed as ddp_mod
    monkeypatch.setattr(ddp_mod, "_REQUIRE_CUDA", False)
    T = pycuda_sem

    def batch(step):
        g = T.Generator().manual_seed(step)
        return T.randn(8, 4, generator=g), T.randn(8, 2, generator=g)

    # made here, not in the threads: random numbers drawn concurrently from
    # explicit Generators in two threads were seen to differ from run to run
    modules = [_mlp_cpu(r) for r in range(2)]
    batches = [batch(step) for step in range(3)]

    def body(pg):
        r = pg.rank()
        model = ddp_mod.DistributedDataParallel(modules[r], process_group=pg, bucket_cap_mb=1e-6)
        opt = T.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            x, y = batches[step]
            opt.zero_grad()
            T.nn.functional.mse_loss(model(x[4 * r:4 * r + 4]), y[4 * r:4 * r + 4]).backward()
            opt.step()
        return [p.detach().clone() for p in model.module.parameters()]

    res = _run_ranks(body)
    ref = _mlp_cpu(0)  # rank 0's initial values, broadcast by DDP
    opt = T.optim.SGD(ref.parameters(), lr=0.1)
    for step in range(3):
        x, y = batch(step)
        opt.zero_grad()
        T.nn.functional.mse_loss(ref(x), y).backward()
        opt.step()
    for r in range(2):
        for p, q in zip(res[r], ref.parameters()):
            assert T.allclose(p, q.detach(), atol=1e-5), (r, p, q)


def test_watchdog_aborts_and_raises_in_the_groups_thread(monkeypatch):
    """A collective that never finishes: past the group's timeout the
    watchdog aborts the communicator and raises DistBackendError in the
    thread that made the group (simulated communicator, CPU)."""
    import time
    import types
    from datetime import timedelta
    from pycuda_sem.distributed import _nccl

    class Stuck:
        def __init__(self, comm):
            self.comm, self.name, self.t0 = comm, "all_reduce", time.monotonic()

        def is_completed(self):
            return False

        def elapsed(self):
            return time.monotonic() - self.t0

        def wait(self):
            return True

    class StuckComm:
        def __init__(self, uid, size, rank, device):
            self.aborted = False

        def run(self, name, ops, outputs):
            return Stuck(self)

        def check_async_error(self):
            pass

        def abort(self, reason=None):
            self.aborted = True

    monkeypatch.setenv("TORCH_NCCL_WATCHDOG_POLL_S", "0.01")
    monkeypatch.setattr(_nccl, "_C", lambda: types.SimpleNamespace(
        _NcclComm=StuckComm, _nccl_unique_id=lambda: bytes(128)))
    pg = _nccl.ProcessGroupNCCL(dist.HashStore(), 0, 1, timeout=timedelta(seconds=0.2))
    work = pg.allreduce([pycuda_sem.ones(2)])
    start = time.monotonic()
    with pytest.raises(dist.DistBackendError, match="Watchdog caught collective operation timeout"):
        while time.monotonic() - start < 10:
            time.sleep(0.005)
    assert time.monotonic() - start < 5
    assert work._w.comm.aborted
    with pytest.raises(dist.DistBackendError, match="failed and cannot run more.*Watchdog"):
        pg.allreduce([pycuda_sem.ones(2)])
    pg._watchdog.stop()


_HEARTBEAT_RANK = r"""
import os, sys, time, types
from datetime import timedelta
sys.path.insert(0, "tests")
import pycuda_sem as torch
import pycuda_sem.distributed as dist
from pycuda_sem.distributed import _nccl
import fake_nccl
rank, port, dies = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
shutdown = len(sys.argv) > 4
_nccl._C = lambda: types.SimpleNamespace(_NcclComm=fake_nccl.StuckComm,
                                         _nccl_unique_id=lambda: bytes(128))
store = dist.TCPStore("127.0.0.1", port, 2, rank == 0, timeout=timedelta(seconds=30))
pg = _nccl.ProcessGroupNCCL(dist.PrefixStore("g", store), rank, 2, timeout=timedelta(seconds=60))
work = pg.allreduce([torch.ones(2)])
if rank == dies:
    time.sleep(0.5)
    os._exit(0)
start = time.monotonic()
if shutdown:  # destroy the group while the collective is stuck
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pg._shutdown()
    print("%.2f %s aborted=%s" % (time.monotonic() - start,
                                  caught[0].message if caught else "no warning",
                                  work._w.comm.aborted))
    sys.stdout.flush()
    os._exit(0)
try:
    while time.monotonic() - start < 30:
        time.sleep(0.01)
    print("no error after 30 s")
except dist.DistBackendError as e:
    print("%.2f %s aborted=%s" % (time.monotonic() - start, e, work._w.comm.aborted))
sys.stdout.flush()
os._exit(0)
"""


@pytest.mark.parametrize("shutdown", [False, True], ids=["in-flight", "destroy"])
@pytest.mark.parametrize("dies", [0, 1], ids=["store-server-rank-dies", "other-rank-dies"])
def test_heartbeat_finds_a_dead_peer_before_the_timeout(dies, shutdown):
    """Two ranks (processes) on a simulated communicator whose collective
    never finishes; one rank exits. The other must raise within a few
    heartbeat periods (peer timeout 1 s), not at the group's 60 s timeout:
    from the peer's silent count, or, when the dead rank served the store,
    from the store being unreachable. Destroying the group meanwhile
    returns as soon, with a warning, the communicator aborted."""
    import time
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYCUDA_SEM_NCCL_HEARTBEAT_S="0.1", PYCUDA_SEM_NCCL_PEER_TIMEOUT_S="1",
               TORCH_NCCL_WATCHDOG_POLL_S="0.02")
    port = free_port()
    extra = ["shutdown"] if shutdown else []
    procs = [subprocess.Popen([sys.executable, "-c", _HEARTBEAT_RANK, str(r), str(port), str(dies)]
                              + extra, cwd=root, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for r in (0, 1)]
    try:
        out, err = procs[1 - dies].communicate(timeout=60)
    finally:
        for p in procs:
            p.kill()
            p.communicate()
    seconds, _, message = out.strip().partition(" ")
    assert message, (out, err)
    expected = "store has been unreachable" if dies == 0 else "rank 1 has sent no heartbeat"
    assert expected in message and message.endswith("aborted=True"), message
    assert float(seconds) < 15.0, message  # the group's timeout is 60 s
