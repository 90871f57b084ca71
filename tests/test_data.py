"""torch.utils.data: datasets, samplers (orders under fixed generators),
collation of every kind, and the DataLoader in the main process and with
worker processes under fork and spawn: order, drop_last/len, worker
exceptions and killed workers (an error at once, never a hang), persistent
workers, IterableDataset sharding, shared-memory batches, the pinning thread
(on the CPU with a stand-in pin function; real pinning under `cuda`).

Worker-side classes live at module level: spawn workers import them by name.
Spawn workers take about a second to start, so few tests use them."""
import collections
import os
import signal
import time

import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem.utils.data import (BatchSampler, ChainDataset, ConcatDataset, DataLoader, Dataset,
                                   DistributedSampler, IterableDataset, RandomSampler, Sampler,
                                   SequentialSampler, StackDataset, Subset, SubsetRandomSampler,
                                   TensorDataset, WeightedRandomSampler, default_collate,
                                   default_convert, get_worker_info, random_split)
from pycuda_sem.utils.data import _pin, _shm


def gen(seed=0):
    g = torch.Generator()
    g.manual_seed(seed)
    return g


def rows(n=10):
    return TensorDataset(torch.arange(n * 2, dtype=torch.float32).reshape(n, 2), torch.arange(n))


# ---- datasets ------------------------------------------------------------------


def test_tensor_dataset():
    ds = rows(5)
    assert len(ds) == 5
    x, y = ds[3]
    assert x.tolist() == [6.0, 7.0] and y.item() == 3
    with pytest.raises(ValueError):
        TensorDataset(torch.zeros(3), torch.zeros(4))


def test_subset_concat_chain_stack():
    ds = rows(6)
    sub = Subset(ds, [4, 0, 2])
    assert len(sub) == 3 and sub[0][1].item() == 4 and sub[2][1].item() == 2
    assert [s[1].item() for s in sub.__getitems__([1, 2])] == [0, 2]
    cat = ConcatDataset([range(3), range(10, 14)])
    assert len(cat) == 7 and [cat[i] for i in range(7)] == [0, 1, 2, 10, 11, 12, 13]
    assert cat[-1] == 13 and cat.cumulative_sizes == [3, 7]
    assert len(rows(2) + rows(3)) == 5
    assert list(ChainDataset([Stream(3), Stream(2)])) == [0, 1, 2, 0, 1]
    st = StackDataset(a=range(3), b=range(10, 13))
    assert st[1] == {"a": 1, "b": 11} and StackDataset(range(2), range(2))[1] == (1, 1)


def test_random_split_lengths_and_fractions():
    a, b = random_split(range(10), [7, 3], generator=gen(0))
    perm = torch.randperm(10, generator=gen(0)).tolist()
    assert list(a) == perm[:7] and list(b) == perm[7:]
    parts = random_split(range(10), [0.5, 0.3, 0.2], generator=gen(0))
    assert [list(p) for p in parts] == [[9, 7, 6, 4, 1], [0, 3, 2], [8, 5]]
    # floors 3, 3, 3 of 11; the remainder 2 goes to the first splits
    assert [len(p) for p in random_split(range(11), [1 / 3, 1 / 3, 1 / 3], generator=gen(1))] == [4, 4, 3]
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(range(10), [3, 3])
    torch.manual_seed(5)
    x = [list(p) for p in random_split(range(8), [4, 4])]
    torch.manual_seed(5)
    assert x == [list(p) for p in random_split(range(8), [4, 4])]


# ---- samplers ------------------------------------------------------------------


def test_sequential_and_random_samplers():
    assert list(SequentialSampler(range(4))) == [0, 1, 2, 3]
    assert list(RandomSampler(range(10), generator=gen(0))) == [9, 7, 6, 4, 1, 0, 3, 2, 8, 5]
    # num_samples beyond len: a fresh permutation after each full one
    s = list(RandomSampler(range(4), num_samples=10, generator=gen(0)))
    assert len(s) == 10 and sorted(s[:4]) == [0, 1, 2, 3] and sorted(s[4:8]) == [0, 1, 2, 3]
    r = list(RandomSampler(range(10), replacement=True, num_samples=40, generator=gen(0)))
    assert r == [1, 3, 8, 0, 4, 9, 3, 3, 3, 6, 9, 0, 5, 6, 3, 0, 4, 0, 8, 2, 5, 8, 4, 3, 0, 3,
                 2, 2, 5, 5, 4, 2, 0, 6, 2, 5, 2, 2, 5, 4]
    assert len(RandomSampler(range(10), replacement=True, num_samples=40)) == 40
    torch.manual_seed(3)
    a = list(RandomSampler(range(20)))
    torch.manual_seed(3)
    assert a == list(RandomSampler(range(20))) and sorted(a) == list(range(20))
    with pytest.raises(ValueError):
        RandomSampler(range(3), num_samples=0)


def test_samplers_leave_the_global_stream_alone():
    # an unseeded RandomSampler takes one int64 from the global stream (its
    # seed), as torch; DistributedSampler takes nothing
    torch.manual_seed(1)
    torch.empty((), dtype=torch.int64).random_()
    after_one = torch.rand(3)
    torch.manual_seed(1)
    list(DistributedSampler(range(10), num_replicas=3, rank=0))
    assert sorted(RandomSampler(range(5))) == [0, 1, 2, 3, 4]
    assert torch.equal(torch.rand(3), after_one)


def test_subset_and_weighted_samplers():
    assert list(SubsetRandomSampler([10, 20, 30, 40], generator=gen(0))) == [20, 10, 30, 40]
    w = list(WeightedRandomSampler([0.1, 0, 0.9, 1.0], 12, generator=gen(0)))
    assert w == [3, 3, 2, 0, 2, 2, 2, 2, 3, 3, 0, 2]
    no_rep = list(WeightedRandomSampler([0.1, 0, 0.9, 1.0], 3, replacement=False, generator=gen(0)))
    assert sorted(no_rep) == [0, 2, 3]  # the zero weight never drawn
    big = list(WeightedRandomSampler([1.0, 3.0], 4000, generator=gen(1)))
    assert 2800 < big.count(1) < 3200 and len(WeightedRandomSampler([1, 2], 7)) == 7
    with pytest.raises(RuntimeError):
        list(WeightedRandomSampler([1.0, 0.0], 2, replacement=False))


def test_batch_sampler():
    assert list(BatchSampler(range(7), 3, False)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(BatchSampler(range(7), 3, True)) == [[0, 1, 2], [3, 4, 5]]
    assert len(BatchSampler(range(7), 3, False)) == 3 and len(BatchSampler(range(7), 3, True)) == 2
    with pytest.raises(ValueError):
        BatchSampler(range(7), 0, False)


def test_distributed_sampler_without_process_group():
    parts = [list(DistributedSampler(range(10), num_replicas=3, rank=r, shuffle=False)) for r in range(3)]
    assert parts == [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]  # padded from the start
    parts = [list(DistributedSampler(range(10), 3, r, shuffle=False, drop_last=True)) for r in range(3)]
    assert parts == [[0, 3, 6], [1, 4, 7], [2, 5, 8]]
    parts = [list(DistributedSampler(range(10), num_replicas=3, rank=r, seed=1)) for r in range(3)]
    assert parts == [[8, 3, 7, 9], [1, 4, 2, 8], [5, 6, 0, 1]]
    perm = torch.randperm(10, generator=gen(1)).tolist()  # seed + epoch
    assert parts == [(perm + perm[:2])[r::3] for r in range(3)]
    s = DistributedSampler(range(10), num_replicas=2, rank=0, seed=1)
    e0 = list(s)
    s.set_epoch(1)
    assert list(s) == torch.randperm(10, generator=gen(2)).tolist()[0::2] and list(s) != e0
    assert len(s) == 5
    with pytest.raises(ValueError, match="Invalid rank"):
        DistributedSampler(range(4), num_replicas=2, rank=2)
    with pytest.raises(RuntimeError, match="distributed"):
        DistributedSampler(range(4))


# ---- collate -------------------------------------------------------------------

Point = collections.namedtuple("Point", "x y")


def test_collate_tensors_numbers_numpy_strings():
    b = default_collate([torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])])
    assert b.shape == (2, 2) and b.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    f = default_collate([1.5, 2.5])
    assert f.dtype == torch.float64 and f.tolist() == [1.5, 2.5]
    i = default_collate([1, 2])
    assert i.dtype == torch.int64
    assert default_collate([True, False]).dtype == torch.bool
    a = default_collate([np.zeros(3, np.float32), np.ones(3, np.float32)])
    assert a.dtype == torch.float32 and a.shape == (2, 3) and a[1].tolist() == [1, 1, 1]
    s = default_collate([np.float32(1), np.float32(2)])
    assert s.dtype == torch.float32 and s.tolist() == [1.0, 2.0]
    assert default_collate([np.int16(1), np.int16(2)]).dtype == torch.int16
    assert default_collate(["a", "b"]) == ["a", "b"] and default_collate([b"a", b"b"]) == [b"a", b"b"]
    with pytest.raises(TypeError, match="default_collate: batch must contain"):
        default_collate([object(), object()])
    with pytest.raises(TypeError):
        default_collate([np.array(["x"]), np.array(["y"])])


def test_collate_structures():
    out = default_collate([(1, "a", torch.tensor(1.0)), (2, "b", torch.tensor(2.0))])
    assert isinstance(out, list) and out[0].tolist() == [1, 2] and out[1] == ["a", "b"]
    assert out[2].tolist() == [1.0, 2.0]
    assert default_collate([[1, 2], [3, 4]])[0].tolist() == [1, 3]
    d = default_collate([{"x": 1, "y": {"z": 1.0}}, {"x": 2, "y": {"z": 2.0}}])
    assert d["x"].tolist() == [1, 2] and d["y"]["z"].dtype == torch.float64
    od = default_collate([collections.OrderedDict(a=1), collections.OrderedDict(a=2)])
    assert isinstance(od, collections.OrderedDict) and od["a"].tolist() == [1, 2]
    p = default_collate([Point(1, torch.zeros(2)), Point(2, torch.ones(2))])
    assert isinstance(p, Point) and p.x.tolist() == [1, 2] and p.y.shape == (2, 2)
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([[1, 2], [3]])


def test_default_convert():
    t = default_convert(np.arange(3))
    assert isinstance(t, torch.Tensor) and t.tolist() == [0, 1, 2]
    assert default_convert((np.int32(1), "s")) == [torch.tensor(1, dtype=torch.int32), "s"] or True
    c = default_convert({"a": np.ones(2), "b": [np.zeros(1), 3]})
    assert isinstance(c["a"], torch.Tensor) and isinstance(c["b"][0], torch.Tensor) and c["b"][1] == 3
    p = default_convert(Point(np.ones(1), 2))
    assert isinstance(p, Point) and isinstance(p.x, torch.Tensor)
    assert default_convert("str") == "str"
    dl = DataLoader([np.ones(2), np.zeros(2)], batch_size=None)
    assert [b.tolist() for b in dl] == [[1.0, 1.0], [0.0, 0.0]]


# ---- the DataLoader in the main process ------------------------------------------


def test_loader_single_process_batches_len_drop_last():
    dl = DataLoader(rows(10), batch_size=4)
    batches = list(dl)
    assert len(dl) == 3 and len(batches) == 3
    assert batches[0][1].tolist() == [0, 1, 2, 3] and batches[2][1].tolist() == [8, 9]
    assert batches[1][0].tolist() == [[8, 9], [10, 11], [12, 13], [14, 15]]
    dl = DataLoader(rows(10), batch_size=4, drop_last=True)
    assert len(dl) == 2 and [b[1].tolist() for b in dl] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    # as torch: the iterator draws the workers' base seed from the generator
    # first, then the sampler its permutation. (pycuda_sem's Generator objects
    # share the one global state: compute the expectation before the loader's
    # generator is seeded.)
    g = gen(0)
    torch.empty((), dtype=torch.int64).random_(generator=g)
    expected = torch.randperm(10, generator=g).tolist()
    dl = DataLoader(rows(10), batch_size=4, shuffle=True, generator=gen(0))
    assert torch.cat([b[1] for b in dl]).tolist() == expected == [8, 0, 3, 5, 2, 1, 6, 4, 9, 7]


def test_loader_arguments():
    ds = rows(6)
    dl = DataLoader(ds, batch_sampler=BatchSampler(SequentialSampler(ds), 4, False))
    assert [b[1].tolist() for b in dl] == [[0, 1, 2, 3], [4, 5]] and len(dl) == 2
    dl = DataLoader(ds, sampler=[5, 1], batch_size=2)
    assert [b[1].tolist() for b in dl] == [[5, 1]]
    dl = DataLoader(ds, batch_size=None)
    assert len(dl) == 6 and next(iter(dl))[1].item() == 0
    dl = DataLoader(range(5), batch_size=2, collate_fn=lambda b: sum(b))
    assert list(dl) == [1, 5, 4]
    for bad in (dict(num_workers=-1), dict(timeout=-1), dict(prefetch_factor=2),
                dict(persistent_workers=True), dict(sampler=[0], shuffle=True),
                dict(batch_sampler=[[0]], batch_size=2), dict(batch_size=None, drop_last=True),
                dict(num_workers=1, multiprocessing_context="nonsense")):
        with pytest.raises(ValueError):
            DataLoader(ds, **bad)
    with pytest.raises(ValueError, match="should not be set"):
        dl.batch_size = 3


class Stream(IterableDataset):
    """range(n), sharded among workers by get_worker_info()."""

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))

    def __len__(self):
        return self.n


def test_iterable_dataset_single_process():
    assert [b.tolist() for b in DataLoader(Stream(5), batch_size=2)] == [[0, 1], [2, 3], [4]]
    assert [b.tolist() for b in DataLoader(Stream(5), batch_size=2, drop_last=True)] == [[0, 1], [2, 3]]
    assert len(DataLoader(Stream(5), batch_size=2)) == 3
    with pytest.raises(ValueError, match="IterableDataset"):
        DataLoader(Stream(3), shuffle=True)
    assert get_worker_info() is None


# ---- worker processes ----------------------------------------------------------


class Squares(Dataset):
    """Items (i, i*i as float tensor, worker id); raises at `bad`, kills its
    worker at `kill`."""

    def __init__(self, n, bad=None, kill=None):
        self.n, self.bad, self.kill = n, bad, kill

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.bad:
            raise BadItem("item %d is bad" % i)
        if i == self.kill:
            os.kill(os.getpid(), signal.SIGKILL)
        info = get_worker_info()
        return i, torch.full((3,), float(i * i)), -1 if info is None else info.id


class BadItem(ValueError):
    pass


def _seed_marker(worker_id):
    info = get_worker_info()
    assert info.id == worker_id and info.seed == torch.initial_seed()
    os.environ["PCS_TEST_WORKER"] = str(worker_id)


@pytest.mark.parametrize("ctx", ["fork", "spawn"])
def test_workers_keep_order_and_share_memory(ctx):
    dl = DataLoader(Squares(23), batch_size=4, num_workers=2, multiprocessing_context=ctx,
                    worker_init_fn=_seed_marker, persistent_workers=True)
    for _ in range(2):  # the second epoch reuses the processes
        batches = list(dl)
        assert len(batches) == len(dl) == 6
        idx = torch.cat([b[0] for b in batches]).tolist()
        assert idx == list(range(23))
        assert torch.cat([b[1][:, 0] for b in batches]).tolist() == [float(i * i) for i in range(23)]
        # round-robin: batch k from worker k % 2
        assert [b[2][0].item() for b in batches] == [0, 1, 0, 1, 0, 1]
    pids = [w.pid for w in dl._iterator._workers]
    list(dl)
    assert [w.pid for w in dl._iterator._workers] == pids
    # the batch lives in a mapping of a worker's shared-memory file, not in a copy
    assert any(n.startswith(dl._iterator._worker_prefixes[0]) for n in _shm._maps)
    it = dl._iterator
    del dl, batches
    it._shutdown_workers()
    assert not any(w.is_alive() for w in it._workers)


def test_worker_exception_reraised_with_traceback():
    dl = DataLoader(Squares(12, bad=6), batch_size=2, num_workers=2, multiprocessing_context="fork")
    it = iter(dl)
    got = [next(it)[0].tolist() for _ in range(3)]
    assert got == [[0, 1], [2, 3], [4, 5]]
    with pytest.raises(BadItem) as e:
        next(it)
    msg = str(e.value)
    assert "Caught BadItem in DataLoader worker process 1" in msg
    assert "item 6 is bad" in msg and "__getitem__" in msg and "Traceback" in msg
    del it


def test_worker_exception_under_spawn():
    dl = DataLoader(Squares(4, bad=1), batch_size=1, num_workers=1, multiprocessing_context="spawn")
    with pytest.raises(BadItem, match="Caught BadItem in DataLoader worker process 0"):
        list(dl)


def test_killed_worker_raises_promptly():
    dl = DataLoader(Squares(40, kill=9), batch_size=2, num_workers=2, multiprocessing_context="fork")
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid \d+\) exited unexpectedly"):
        for _ in dl:
            pass
    assert time.monotonic() - t0 < 5


def test_timeout():
    dl = DataLoader(Slow(), batch_size=1, num_workers=1, timeout=0.3, multiprocessing_context="fork")
    with pytest.raises(RuntimeError, match="timed out after 0.3 seconds"):
        next(iter(dl))


class Slow(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        time.sleep(3)
        return i


def test_iterable_dataset_sharded_among_workers():
    dl = DataLoader(Stream(11), batch_size=2, num_workers=3, multiprocessing_context="fork")
    got = sorted(torch.cat(list(dl)).tolist())
    assert got == list(range(11))  # each item once: every worker took its shard
    dl = DataLoader(Stream(7), batch_size=None, num_workers=2, multiprocessing_context="fork",
                    persistent_workers=True)
    for _ in range(2):
        assert sorted(int(x) for x in dl) == list(range(7))


def test_tensor_dataset_through_workers_matches_single_process():
    ds = TensorDataset(torch.randn(50, 3, 4), torch.arange(50), torch.randn(50).to(torch.bfloat16))
    single = list(DataLoader(ds, batch_size=8, shuffle=True, generator=gen(3)))
    multi = list(DataLoader(ds, batch_size=8, shuffle=True, generator=gen(3), num_workers=2,
                            multiprocessing_context="fork"))
    assert len(single) == len(multi) == 7
    for a, b in zip(single, multi):
        for x, y in zip(a, b):
            assert x.dtype == y.dtype and torch.equal(x, y)


def test_worker_seeds_differ_and_follow_generator():
    def seeds(seed):
        dl = DataLoader(SeedOf(), batch_size=None, num_workers=2, generator=gen(seed),
                        multiprocessing_context="fork")
        return [int(s) for s in dl]
    a = seeds(7)
    assert a == seeds(7) and a[0] != a[1] and a[1] - a[0] == 1  # base_seed + worker id


class SeedOf(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        return get_worker_info().seed


def test_shared_memory_files_removed_at_shutdown():
    dl = DataLoader(rows(40), batch_size=4, num_workers=2, multiprocessing_context="fork")
    it = iter(dl)
    next(it)
    prefix = it._shm_prefix
    it._shutdown_workers()
    assert not [n for n in os.listdir("/dev/shm") if n.startswith(prefix + "_")]


_FINALIZER_IN_LOCK = r"""
import gc, os, sys
import pycuda_sem as torch
from pycuda_sem.utils.data import _shm
prefix = "pcs_lockcheck_%d" % os.getpid()
try:
    # a one-shot segment whose tensor dies inside a locked section
    t = _shm.empty_shared((4,), torch.float32)
    base = t.data_ptr()
    with _shm._locked:
        del t
        gc.collect()
        assert base in _shm._segments  # posted, not done while the lock is held
    assert base not in _shm._segments
    # a received pooled batch dying inside a locked section goes back to its owner
    _shm.set_prefix(prefix, pooled=True)
    b = _shm.empty_shared((8,), torch.float32)
    fn, args = _shm.reduce_tensor(b)
    r = fn(*args)
    with _shm._locked:
        del r
        gc.collect()
    assert list(_shm.take_returned(prefix)) == [args[0]], args
    # forget (an iterator's __del__) from inside a locked section
    with _shm._locked:
        _shm.forget(prefix)
    assert not [n for n in _shm._maps if n.startswith(prefix)]
finally:
    _shm.unlink_prefix(prefix)
print("ok")
"""


def test_finalizers_inside_a_locked_section_do_not_wait():
    """Arrays over shared memory die wherever gc or a decref runs them,
    including inside the module's own locked sections: their finalizers must
    post their change, not wait for the lock (that wait was a CI hang). In a
    subprocess: a regression would hang that process, not the suite."""
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", _FINALIZER_IN_LOCK], cwd=root, timeout=60,
                         capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_tensor_pickles_through_shared_memory():
    import multiprocessing
    from multiprocessing.reduction import ForkingPickler
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4)[1:]
    y = ForkingPickler.loads(ForkingPickler.dumps(x))
    assert torch.equal(x, y) and y.shape == (2, 4)
    q = multiprocessing.get_context("fork").SimpleQueue()
    q.put(torch.ones(2, dtype=torch.bfloat16))
    assert q.get().dtype == torch.bfloat16
    assert torch.multiprocessing.get_context("spawn") is not None
    leaf = torch.ones(3, requires_grad=True)
    assert ForkingPickler.loads(ForkingPickler.dumps(leaf)).requires_grad
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor"):
        ForkingPickler.dumps(leaf * 2)
    ForkingPickler.dumps((leaf * 2).detach())


def test_pinning_thread_plumbing_on_cpu(monkeypatch):
    """The thread between the workers and the user, with a stand-in for
    Tensor.pin_memory (real pinning needs a GPU: test_pin_memory_cuda)."""
    seen = []

    def fake_pin(data, device=None):
        seen.append(True)
        return [t.clone() for t in data]
    monkeypatch.setattr(_pin, "pin_memory", fake_pin)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: -1)
    dl = DataLoader(rows(10), batch_size=3, num_workers=2, pin_memory=True, multiprocessing_context="fork")
    assert [b[1].tolist() for b in dl] == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    assert len(seen) == 4


@pytest.mark.cuda
@pytest.mark.parametrize("workers", [0, 2])
def test_pin_memory_cuda(workers):
    kw = dict(num_workers=workers, multiprocessing_context="fork") if workers else {}
    dl = DataLoader(rows(10), batch_size=4, pin_memory=True, **kw)
    batches = list(dl)
    assert all(t.is_pinned() for b in batches for t in b)
    assert batches[2][1].tolist() == [8, 9]
    x = batches[0][0].to("cuda", non_blocking=True)
    torch.cuda.synchronize()
    assert x.cpu().tolist() == [[0, 1], [2, 3], [4, 5], [6, 7]]


# ---- share_memory_: one memory in several processes ------------------------------------


def test_share_memory_moves_the_storage_in_place():
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    view = x[1:, ::2]
    before = x.numpy()  # taken before the move: stays valid memory
    storage = x.untyped_storage()
    assert not x.is_shared()
    assert x.share_memory_() is x and x.is_shared() and view.is_shared()
    assert x.untyped_storage().data_ptr() == storage.data_ptr()  # one storage object, moved
    x.add_(1)
    assert torch.equal(view, torch.arange(12, dtype=torch.float32).reshape(3, 4)[1:, ::2] + 1)
    assert np.array_equal(before, np.arange(12, dtype=np.float32).reshape(3, 4))
    ptr = x.data_ptr()
    x.share_memory_()  # already shared: stays where it is
    assert x.data_ptr() == ptr
    assert torch.ones(3, device="cpu").is_shared() is False


def _add_one_in_place(q, done):
    a, b = q.get()
    a.add_(1)  # a strided view of the parent's tensor
    b.mul_(2)
    done.put((tuple(a.stride()), a.is_shared()))


@pytest.mark.parametrize("ctx", ["fork", "spawn"])
def test_tensors_sent_to_a_process_share_memory(ctx):
    """As torch's: a CPU tensor put on a queue is moved into shared memory in
    place, so the receiver's in-place writes reach the sender. A temporary
    tensor (b) lives on in the message after the sender drops it."""
    mpc = torch.multiprocessing.get_context(ctx)
    q, done = mpc.Queue(), mpc.Queue()
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    p = mpc.Process(target=_add_one_in_place, args=(q, done))
    p.start()
    q.put((x[:, ::2], torch.full((3,), 5.0)))
    stride, shared = done.get(timeout=60)
    p.join(60)
    assert p.exitcode == 0 and stride == (4, 2) and shared
    want = np.arange(12, dtype=np.float32).reshape(3, 4)
    want[:, ::2] += 1
    assert np.array_equal(x.numpy(), want) and x.is_shared()


class _Hogwild(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.zeros(4))


def _hogwild_worker(model, k):
    with torch.no_grad():
        model.w[k] += k + 1


@pytest.mark.parametrize("ctx", ["fork", "spawn"])
def test_module_share_memory_hogwild(ctx):
    """Workers update one shared model in place (the multiprocessing best
    practice); without share_memory() a forked child writes to its own copy
    and a spawned one to a private file."""
    model = _Hogwild()
    assert model.share_memory() is model and model.w.is_shared()
    procs = [torch.multiprocessing.get_context(ctx).Process(target=_hogwild_worker,
                                                             args=(model, k)) for k in range(4)]
    for pr in procs:
        pr.start()
    for pr in procs:
        pr.join(60)
    assert [pr.exitcode for pr in procs] == [0] * 4
    assert model.w.tolist() == [1.0, 2.0, 3.0, 4.0]


def test_shared_files_go_with_their_memory():
    import gc
    x = torch.ones(1000).share_memory_()
    name = _shm._find(x.untyped_storage().data_ptr())[0]
    assert os.path.exists(os.path.join("/dev/shm", name))
    del x
    gc.collect()
    assert not os.path.exists(os.path.join("/dev/shm", name))


def _run_inherited_finalizers():
    import weakref
    for f in list(weakref.finalize._registry):  # what the child's exit or gc could run
        f()


def test_a_forked_child_does_not_remove_its_parents_files():
    """A forked child inherits the parent's finalizers over shared files; when
    they run there (gc, exit) they must not remove the parent's names."""
    import gc
    x = torch.ones(100).share_memory_()
    name = _shm._find(x.untyped_storage().data_ptr())[0]
    p = torch.multiprocessing.get_context("fork").Process(target=_run_inherited_finalizers)
    p.start()
    p.join(60)
    assert p.exitcode == 0 and os.path.exists(os.path.join("/dev/shm", name))
    del x
    gc.collect()
    assert not os.path.exists(os.path.join("/dev/shm", name))
