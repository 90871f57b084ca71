"""Pageable host<->device copies through the pinned staging pipeline
(csrc/tensor/copy_pageable.c): round trips around the size threshold and the
chunk and lane boundaries, every direction, strided sides, casts,
non_blocking from pageable memory, ordering with the current stream, several
Python threads at once, and the pinned host cache back to its baseline.
NumPy is the reference."""

import threading

import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import cuda

MiB = 1 << 20
C = torch._C
rng = np.random.default_rng(13)


def test_config_reads_sets_and_validates():
    old = C._pageable_copy_config()
    assert set(old) >= {"min_bytes", "chunk_bytes", "threads", "lanes", "pipelined"}
    assert old["lanes"] >= 1
    try:
        prev = C._pageable_copy_config(min_bytes=3 * MiB, chunk_bytes=MiB + 5, threads=3)
        assert prev["min_bytes"] == old["min_bytes"]
        now = C._pageable_copy_config()
        assert now["min_bytes"] == 3 * MiB and now["threads"] == 3 and now["lanes"] == 3
        assert now["chunk_bytes"] == MiB  # a power of two: the host cache's size class
        for bad in ({"chunk_bytes": 100}, {"threads": -1}, {"threads": 1000},
                    {"min_bytes": -1}):
            with pytest.raises(ValueError):
                C._pageable_copy_config(**bad)
        with pytest.raises(TypeError):
            C._pageable_copy_config(threads="4")
    finally:
        C._pageable_copy_config(min_bytes=old["min_bytes"], chunk_bytes=old["chunk_bytes"],
                                threads=old["threads"])


# ---------------------------------------------------------------------------
# On the GPU

@pytest.fixture
def host_cache():
    """The pinned host cache ends with as many blocks in use as it began."""
    cuda.synchronize()
    before = C._host_cache_info()
    yield
    cuda.synchronize()
    assert C._host_cache_info()["in_use"] == before["in_use"]


@pytest.fixture(params=["default", "small-chunks"])
def config(request):
    """The default settings, and tiny chunks with 4 lanes so that small
    tensors cross many chunk boundaries."""
    old = C._pageable_copy_config()
    if request.param == "small-chunks":
        C._pageable_copy_config(min_bytes=0, chunk_bytes=64 << 10, threads=4)
    yield C._pageable_copy_config()
    C._pageable_copy_config(min_bytes=old["min_bytes"], chunk_bytes=old["chunk_bytes"],
                            threads=old["threads"])


def pipelined():
    return C._pageable_copy_config()["pipelined"]


def host_bytes(n):
    return torch.from_numpy(rng.integers(0, 256, size=n, dtype=np.uint8))


SIZES = [0, 1, 3, 4095, 4097, (64 << 10) + 7, MiB + 13, 2 * MiB - 1, 4 * MiB + 3,
         8 * MiB - 1, 8 * MiB, 8 * MiB + 1, 37 * MiB + 5]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.cuda
@pytest.mark.usefixtures("balanced", "host_cache")  # balanced: conftest.py
def test_round_trip_bytes(n, config):
    h = host_bytes(n)
    ref = h.numpy().copy()
    k = pipelined()
    d = h.cuda()  # H2D, blocking
    out = torch.empty(n, dtype=torch.uint8)
    out.copy_(d)  # D2H into existing pageable memory
    assert np.array_equal(out.numpy(), ref)
    assert np.array_equal(d.cpu().numpy(), ref)  # D2H into a new tensor
    expected = 3 if n and n >= config["min_bytes"] else 0
    assert pipelined() - k == expected


@pytest.mark.cuda
@pytest.mark.usefixtures("balanced", "host_cache")
def test_round_trip_256mib_float32():
    n = 64 * MiB  # 256 MiB of float32
    a = np.arange(n, dtype=np.float32)
    a[::4097] = -1.5
    h = torch.from_numpy(a)
    k = pipelined()
    d = h.to("cuda")
    assert d[n - 1].item() == float(a[n - 1]) and d[4097].item() == -1.5  # a holds n-1 rounded to float32
    back = torch.empty(n)
    back.copy_(d)
    assert np.array_equal(back.numpy(), a)
    assert pipelined() - k == 2


@pytest.mark.cuda
@pytest.mark.usefixtures("balanced", "host_cache")
def test_strided_sides_and_casts(config):
    a = rng.standard_normal((1024, 3000)).astype(np.float64)  # 24 MB
    h = torch.from_numpy(a)
    # strided pageable source: a contiguous temporary first
    d = torch.empty(1024, 1500, dtype=torch.float64, device="cuda")
    d.copy_(h[:, ::2])
    assert np.array_equal(d.cpu().numpy(), a[:, ::2])
    # strided pageable destination
    out = torch.zeros(1024, 3000, dtype=torch.float64)
    out[:, 1::2].copy_(d)
    assert np.array_equal(out.numpy()[:, 1::2], a[:, ::2])
    assert not out.numpy()[:, ::2].any()
    # casts both ways
    f = h.to("cuda", dtype=torch.float32)
    assert f.dtype is torch.float32
    assert np.array_equal(f.cpu().numpy(), a.astype(np.float32))
    back = torch.empty(1024, 3000, dtype=torch.float64)
    back.copy_(f)
    assert np.array_equal(back.numpy(), a.astype(np.float32).astype(np.float64))
    # a transposed device source into a contiguous pageable destination
    t = torch.empty(3000, 1024, dtype=torch.float64)
    t.copy_(torch.from_numpy(a).cuda().t())
    assert np.array_equal(t.numpy(), a.T)


@pytest.mark.cuda
@pytest.mark.usefixtures("balanced", "host_cache")
def test_non_blocking_from_pageable_is_done_with_host_memory(config):
    n = 16 * MiB
    h = torch.full((n,), 3.0)
    cuda._sleep(100_000_000)  # the DMAs queue behind this
    d = h.to("cuda", non_blocking=True)
    h.fill_(-1.0)  # the host side was consumed before the call returned
    cuda.synchronize()
    assert (d == 3.0).all().item()
    # D2H into pageable memory with non_blocking: complete on return
    cuda._sleep(100_000_000)
    d.fill_(5.0)
    out = torch.empty(n)
    out.copy_(d, non_blocking=True)
    assert (out.numpy() == 5.0).all()


@pytest.mark.cuda
@pytest.mark.usefixtures("balanced", "host_cache")
def test_ordered_on_current_stream(config):
    n = 12 * MiB + 7
    s = cuda.Stream()
    d = torch.zeros(n, device="cuda")
    cuda.synchronize()
    with cuda.stream(s):
        cuda._sleep(100_000_000)
        d.fill_(7.0)  # queued behind the sleep on s
        h = d.cpu()  # D2H on s: waits for the fill
    assert (h.numpy() == 7.0).all()
    src = torch.full((n,), 2.0)
    with cuda.stream(s):
        cuda._sleep(100_000_000)
        d.copy_(src, non_blocking=True)  # H2D on s, behind the sleep
        r = d * 2  # later work on s sees the data
        got = r.cpu()
    assert (got.numpy() == 4.0).all()
    s.synchronize()


@pytest.mark.cuda
@pytest.mark.usefixtures("balanced", "host_cache")
def test_four_python_threads_at_once(config):
    n = 9 * MiB + 11
    datas = [rng.integers(0, 256, size=n, dtype=np.uint8) for _ in range(4)]
    errors, ok = [], [0] * 4

    def worker(i):
        try:
            s = cuda.Stream()
            with cuda.stream(s):
                for _ in range(3):
                    d = torch.from_numpy(datas[i]).cuda()
                    out = torch.empty(n, dtype=torch.uint8)
                    out.copy_(d)
                    ok[i] += np.array_equal(out.numpy(), datas[i])
                    del d
            s.synchronize()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors and ok == [3] * 4


@pytest.mark.cuda
@pytest.mark.usefixtures("balanced", "host_cache")
def test_pinned_memory_keeps_its_path():
    n = 16 * MiB
    p = torch.full((n,), 1.0, pin_memory=True)
    k = pipelined()
    d = p.to("cuda", non_blocking=True)
    back = torch.empty(n, pin_memory=True)
    back.copy_(d)
    assert pipelined() == k
    assert (back.numpy() == 1.0).all()
    del p, back, d


@pytest.mark.cuda
@pytest.mark.usefixtures("balanced", "host_cache")
def test_other_threads_run_during_a_copy():
    n = 64 * MiB
    h = torch.empty(n)
    d = torch.empty(n, device="cuda")
    stop, ticks = threading.Event(), [0]

    def spin():
        while not stop.is_set():
            ticks[0] += 1

    t = threading.Thread(target=spin)
    t.start()
    try:
        for _ in range(3):
            d.copy_(h)
            h.copy_(d)
    finally:
        stop.set()
        t.join()
    assert ticks[0] > 0
