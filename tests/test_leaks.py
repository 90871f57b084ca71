"""Leaks: many create-and-destroy cycles of every object type keep the process
RSS and the allocator statistics flat; reference counts of inputs do not grow
on the hot paths.

CYCLES (default 20,000; set PYCUDA_SEM_LEAK_CYCLES=100000 for the issue's
figure) per object type, after a warm-up that fills caches, free lists and
NumPy's and the CUDA driver's pools. RSS is read from /proc/self/statm and
may grow by at most SLACK_MIB (the interpreter's own allocator may keep a few
arenas). cuFFT plans are expensive to build, so the plan test runs a tenth of
CYCLES, each one a cache miss that builds a plan and evicts another."""
import gc
import os
import sys

import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import cuda

CYCLES = int(os.environ.get("PYCUDA_SEM_LEAK_CYCLES", "20000"))
WARMUP = 2000
SLACK_MIB = 6
PAGE = os.sysconf("SC_PAGE_SIZE")
_UNDER_ASAN = "libasan" in os.environ.get("LD_PRELOAD", "")

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/statm"),
                                reason="needs /proc/self/statm")


def _rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def _stats():
    if cuda.device_count() == 0:
        return None
    cuda.synchronize()
    # A block freed after record_stream waits for an event that the allocator
    # polls at its next allocation (as PyTorch's does): make one, so that the
    # blocks whose events completed by the synchronize count as free.
    torch.empty(1, device="cuda")
    s = cuda.memory_stats()
    return {k: v for k, v in s.items()
            if k.endswith(".current") and not k.startswith(("reserved", "segment"))}


def _flat(make, cycles=CYCLES, warmup=WARMUP):
    """Run make(i) warmup times, then cycles times; return (RSS growth in
    bytes, stats before, stats after)."""
    for i in range(warmup):
        make(i)
    gc.collect()
    st0 = _stats()
    r0 = _rss()
    for i in range(cycles):
        make(i)
    gc.collect()
    r1 = _rss()
    st1 = _stats()
    grow = r1 - r0
    print("leak-figure %s: %d cycles, RSS %+.2f MiB, stats %s" % (
        make.__qualname__.split(".")[0], cycles, grow / 2**20,
        "flat" if st1 == st0 else "CHANGED"))
    # AddressSanitizer's quarantine holds freed memory: RSS says nothing there
    assert _UNDER_ASAN or grow <= SLACK_MIB << 20, "RSS grew %.1f MiB over %d cycles" % (grow / 2**20, cycles)
    assert st1 == st0
    return grow


SIZES = [0, 1, 7, 64, 1000, 4096, 70_000]


def test_cpu_tensor_cycles():
    def make(i):
        n = SIZES[i % len(SIZES)]
        t = torch.empty(n)
        u = torch.ones(n, dtype=torch.int64).view(-1)[: n // 2]
        v = torch.tensor([1.0, 2.0, float(i)])
        w = torch.from_numpy(np.ones(3))
        del t, u, v, w
    _flat(make)


def test_cpu_storage_cycles():
    _flat(lambda i: torch.UntypedStorage(SIZES[i % len(SIZES)]))


def test_cpu_ops_cycles():
    a = torch.ones(100)

    def make(i):
        b = (a + 1.0) * a
        s = b.sum()
        s.item()
        a[3:9].tolist()
        a.t()
    _flat(make)


@pytest.mark.cuda
def test_cuda_tensor_cycles():
    def make(i):
        n = SIZES[i % len(SIZES)]
        t = torch.empty(n, device="cuda")
        u = torch.ones(n, device="cuda", dtype=torch.int64)[: n // 2]
        del t, u
    _flat(make)


@pytest.mark.cuda
def test_cuda_storage_cycles():
    _flat(lambda i: torch.UntypedStorage(SIZES[i % len(SIZES)] * 8, device="cuda"))


@pytest.mark.cuda
def test_stream_cycles():
    def make(i):
        s = cuda.Stream()
        with cuda.stream(s):
            pass
        del s
    _flat(make)


@pytest.mark.cuda
def test_event_cycles():
    def make(i):
        e = cuda.Event(enable_timing=bool(i & 1))
        e.record()
        e.synchronize()
        del e
    _flat(make)


@pytest.mark.cuda
def test_pinned_buffer_cycles():
    def make(i):
        n = SIZES[i % len(SIZES)]
        p = torch.empty(n).pin_memory()
        del p
    _flat(make)


@pytest.mark.cuda
def test_pageable_copy_cycles():
    host = torch.ones(1000)

    def make(i):
        host.cuda().cpu()
    _flat(make)


@pytest.mark.cuda
def test_pinned_copy_cycles():
    """One long-lived pinned buffer used by many non_blocking copies (this
    used to keep one CUDA event per copy alive: ~0.5 KiB of RSS a cycle)."""
    pinned = torch.ones(1000).pin_memory()
    out = torch.empty(1000).pin_memory()
    s = cuda.Stream()

    def make(i):
        d = pinned.to("cuda", non_blocking=True)
        if i & 1:
            s.wait_stream(cuda.current_stream())
            with cuda.stream(s):
                out.copy_(d, non_blocking=True)
            d.record_stream(s)
            cuda.current_stream().wait_stream(s)
        else:
            out.copy_(d, non_blocking=True)
    _flat(make)
    cuda.synchronize()
    assert out.sum().item() == 1000.0


@pytest.mark.cuda
def test_fft_plan_cycles():
    cache = torch.backends.cuda.cufft_plan_cache
    old = cache.max_size
    cache.max_size = 4
    try:
        lens = [16 + 2 * k for k in range(12)]  # 12 sizes through a 4-plan cache: all misses
        xs = [torch.ones(n, device="cuda") for n in lens]

        def make(i):
            torch.fft.rfft(xs[i % len(xs)])
        _flat(make, cycles=max(CYCLES // 10, 100), warmup=200)
        assert cache.size <= 4
    finally:
        cache.max_size = old
        cache.clear()


# ---- reference counts on the hot paths

def _refs_flat(objs, fn, n=2000):
    for _ in range(50):
        fn()
    before = [sys.getrefcount(o) for o in objs]
    for _ in range(n):
        fn()
    after = [sys.getrefcount(o) for o in objs]
    assert after == before


def test_refcounts_cpu_hot_paths():
    a, b = torch.ones(4, 4), torch.ones(4)
    f32 = torch.float32
    _refs_flat([a, b, f32], lambda: a + b)
    _refs_flat([a, f32], lambda: a.sum())
    _refs_flat([a], lambda: a[1])
    _refs_flat([a], lambda: a[1:3, ::2])
    _refs_flat([a], lambda: a.t().contiguous())
    _refs_flat([a, f32], lambda: a.to(f32))
    _refs_flat([a], lambda: a.numpy())
    _refs_flat([a], lambda: a.view(16).storage_offset())
    _refs_flat([f32], lambda: torch.ones(3, dtype=f32))
    _refs_flat([a], lambda: a.cpu())
    _refs_flat([a, b], lambda: torch.where(a > 0, a, b))


@pytest.mark.cuda
def test_refcounts_cuda_hot_paths():
    a = torch.ones(4, 4)
    d, e = torch.ones(4, 4, device="cuda"), torch.ones(4, device="cuda")
    _refs_flat([a], lambda: a.cuda())
    _refs_flat([d], lambda: d.cpu())
    _refs_flat([d, e], lambda: d + e)
    _refs_flat([d], lambda: d.sum())
    _refs_flat([d], lambda: d[1])
    _refs_flat([d], lambda: d @ d)
    s = cuda.current_stream()
    _refs_flat([s], lambda: cuda.current_stream())
    st = cuda.Stream()

    def in_ctx():
        with cuda.stream(st):
            cuda.current_stream()
    _refs_flat([st], in_ctx)
    ev = cuda.Event()
    _refs_flat([ev, st], lambda: st.record_event(ev))
    _refs_flat([d, st], lambda: d.record_stream(st))
