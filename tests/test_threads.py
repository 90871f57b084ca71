"""Python threads against the runtime: correct results, no deadlock, balanced
statistics, and the GIL released around blocking calls.

Every worker checks its results against NumPy; every join has a timeout and
the test asserts that all workers finished (a deadlock fails instead of
hanging the suite). Timings are never asserted: progress is shown by counting
what another thread did while one was blocked."""
import os
import threading

import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import cuda

THREADS = 8
ITERS = int(os.environ.get("PYCUDA_SEM_THREAD_ITERS", "300"))
JOIN_TIMEOUT = 120
# About 50 ms of GPU time at the clocks of current data-centre GPUs.
SLEEP = 100_000_000


def _run_threads(target, n=THREADS):
    errors = []

    def wrap(i):
        try:
            target(i)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append((i, repr(e)))

    threads = [threading.Thread(target=wrap, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(JOIN_TIMEOUT)
    alive = [t.name for t in threads if t.is_alive()]
    assert not alive, "threads still running (deadlock?): %s" % alive
    assert not errors, errors


_KEPT = ("allocated_bytes.", "active_bytes.", "requested_bytes.", "allocation.", "active.")


def _current_stats():
    """Memory handed out, after every stream is idle. A freed block with
    record_stream uses counts as allocated until the allocator processes its
    events (at the next allocation, as in PyTorch): one small allocation
    makes that happen. Cached segments may differ (threads warm the cache)."""
    cuda.synchronize()
    torch.empty(1, device="cuda")
    s = cuda.memory_stats()
    return {k: v for k, v in s.items() if k.endswith(".current") and k.startswith(_KEPT)}


def test_cpu_threads_mixed_ops():
    """CPU tensors: factories, views, ops, reductions and copies from 8 threads."""
    def work(i):
        rng = np.random.default_rng(i)
        for it in range(ITERS):
            n = int(rng.integers(1, 200))
            a = rng.standard_normal(n)
            b = rng.standard_normal(n)
            ta, tb = torch.tensor(a), torch.from_numpy(b.copy())
            r = (ta * 2.0 + tb).sum().item()
            assert abs(r - float((a * 2.0 + b).sum())) <= 1e-9 * (1 + abs(r))
            m = torch.tensor(a[: (n // 2) * 2]).view(-1, 2).t().contiguous()
            np.testing.assert_array_equal(m.numpy(), a[: (n // 2) * 2].reshape(-1, 2).T)
            c = torch.empty(n, dtype=torch.float32)
            c.copy_(ta)
            np.testing.assert_allclose(c.numpy(), a.astype(np.float32))
    _run_threads(work)


@pytest.mark.cuda
def test_cuda_threads_mixed_work_balanced_stats():
    """8 threads x ITERS iterations: H2D (pageable and pinned, non_blocking),
    ops on the default or a private stream, events, device contexts, D2H; each
    result checked against NumPy. Afterwards the allocator statistics are back
    to where they started."""
    cuda.synchronize()
    before = _current_stats()
    dev = cuda.current_device()

    def work(i):
        rng = np.random.default_rng(100 + i)
        side = cuda.Stream()
        ev = cuda.Event()
        for it in range(ITERS):
            n = int(rng.integers(1, 4096))
            a = rng.standard_normal(n).astype(np.float32)
            b = rng.standard_normal(n).astype(np.float32)
            kind = it % 4
            with cuda.device(dev):
                if kind == 0:  # default stream, pageable copies
                    x = torch.from_numpy(a).cuda()
                    y = torch.from_numpy(b).to("cuda")
                    z = x * y + 1.0
                    got = z.cpu().numpy()
                    np.testing.assert_allclose(got, a * b + 1.0, rtol=1e-5, atol=1e-5)
                elif kind == 1:  # private stream, pinned non_blocking copies, event
                    pa = torch.from_numpy(a).pin_memory()
                    with cuda.stream(side):
                        x = pa.to("cuda", non_blocking=True)
                        s = (x * x).sum()
                        out = torch.empty(1).pin_memory()
                        out.copy_(s.view(1), non_blocking=True)
                        ev.record()
                    ev.synchronize()
                    ref = float((a.astype(np.float64) ** 2).sum())
                    assert abs(out.item() - ref) <= 1e-4 * (1 + ref)
                elif kind == 2:  # views, reductions, device-to-device
                    x = torch.from_numpy(a).cuda()
                    m = n // 2 * 2
                    if m:
                        v = x[:m].view(-1, 2).t()
                        w = v.contiguous().clone()
                        np.testing.assert_array_equal(w.cpu().numpy(), a[:m].reshape(-1, 2).T)
                    assert abs(x.amax().item() - a.max()) == 0
                else:  # stream waits across streams
                    x = torch.from_numpy(a).cuda()
                    side.wait_stream(cuda.current_stream())
                    with cuda.stream(side):
                        y = x.neg()
                        x.record_stream(side)
                    cuda.current_stream().wait_stream(side)
                    np.testing.assert_array_equal(y.cpu().numpy(), -a)
    _run_threads(work)
    cuda.synchronize()
    after = _current_stats()
    assert after == before


@pytest.mark.cuda
def test_second_thread_progresses_while_one_synchronizes():
    """While thread A waits in cuda.synchronize() and in a D2H copy of a big
    tensor queued behind a long kernel, thread B keeps computing (with CPU
    tensors and small GPU work on its own stream) - possible only because the
    GIL is released around the blocking calls."""
    big = torch.ones(64 << 20, device="cuda")  # 256 MiB
    cuda.synchronize()
    phase = {"a_blocking": False, "a_done": False}
    count = {"during": 0}
    started = threading.Event()

    def a():
        phase["a_blocking"] = True
        started.set()
        cuda._sleep(4 * SLEEP)
        cuda.synchronize()
        cuda._sleep(4 * SLEEP)
        host = big.cpu()  # D2H queued behind the sleep: blocks here
        assert host[-1].item() == 1.0 and host.sum().item() == float(64 << 20)
        phase["a_done"] = True

    def b():
        started.wait(30)
        s = cuda.Stream()
        x = np.arange(100, dtype=np.float64)
        while not phase["a_done"]:
            t = torch.from_numpy(x)
            assert (t * 2).sum().item() == 9900.0
            count["during"] += 1
            if count["during"] % 50 == 0:
                with cuda.stream(s):
                    y = torch.ones(10, device="cuda") * 3
                s.synchronize()
                assert y.sum().item() == 30.0

    ta = threading.Thread(target=a, daemon=True)
    tb = threading.Thread(target=b, daemon=True)
    tb.start()
    ta.start()
    ta.join(JOIN_TIMEOUT)
    tb.join(JOIN_TIMEOUT)
    assert not ta.is_alive() and not tb.is_alive()
    assert phase["a_done"]
    assert count["during"] > 10, count
    del big


@pytest.mark.cuda
def test_threads_allocate_and_free_concurrently():
    """Heavy allocator traffic from 8 threads on separate streams: blocks of
    many sizes allocated, written, read back and freed; statistics balance."""
    cuda.synchronize()
    before = _current_stats()

    def work(i):
        s = cuda.Stream()
        rng = np.random.default_rng(i)
        with cuda.stream(s):
            for it in range(ITERS):
                n = int(rng.choice([1, 100, 5000, 300_000, 1_500_000]))
                t = torch.full((n,), float(i), device="cuda")
                assert t[n - 1].item() == float(i)
                del t
        s.synchronize()
    _run_threads(work)
    cuda.synchronize()
    assert _current_stats() == before
