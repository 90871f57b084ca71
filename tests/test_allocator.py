"""The caching allocator, observed through UntypedStorage and the memory
statistics: rounding, pool choice, splitting and coalescing, stream-ordered
reuse and record_stream, out-of-memory recovery, empty_cache, the memory
fraction and the no-caching switch."""
import contextlib
import os
import subprocess
import sys

import pytest

import pycuda_sem as torch
from pycuda_sem import cuda

pytestmark = pytest.mark.cuda

KiB, MiB = 1 << 10, 1 << 20
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SLEEP = 200_000_000  # ~0.1 s of GPU time


@pytest.fixture(autouse=True)
def balanced():
    """Every test must leave allocated memory where it found it."""
    cuda.synchronize()
    cuda.empty_cache()
    base = cuda.memory_allocated()
    yield
    cuda.synchronize()
    assert cuda.memory_allocated() == base
    cuda.empty_cache()


def alloc(n):
    return torch.UntypedStorage(n, device="cuda")


def stat(key):
    return cuda.memory_stats()[key]


def segment_of(ptr):
    for seg in cuda.memory_snapshot():
        if seg["address"] <= ptr < seg["address"] + seg["total_size"]:
            return seg
    raise AssertionError("no segment holds %#x" % ptr)


@contextlib.contextmanager
def cached_blocks_taken():
    """Occupy every free block of the segments still reserved, so that the
    next allocations must open new segments. Another test (or a cache the
    library keeps, such as the cuBLAS workspace) can leave a live block in a
    segment that empty_cache() therefore keeps; its free rest would otherwise
    serve the request, and which tests ran before decides the layout."""
    fillers = []
    for seg in cuda.memory_snapshot():
        for blk in seg["blocks"]:
            left = blk["size"] if blk["state"] == "inactive" else 0
            if seg["segment_type"] != "small" and left <= MiB:
                left = 0  # no large request fits; a filler would open a small segment
            while left:  # a small segment's block in requests the small pool takes
                n = min(left, MiB) if seg["segment_type"] == "small" else left
                fillers.append(alloc(n))
                left -= n
    try:
        yield
    finally:
        del fillers[:]


@pytest.mark.parametrize("req,rounded", [(1, 512), (511, 512), (512, 512), (513, 1024),
                                         (4096, 4096), (5000, 5120),
                                         (300 * 300 * 300 * 4, 108000256)])
def test_rounding_to_512(req, rounded):
    a0, r0 = cuda.memory_allocated(), stat("requested_bytes.all.current")
    s = alloc(req)
    assert cuda.memory_allocated() - a0 == rounded
    assert stat("requested_bytes.all.current") - r0 == req
    assert s.nbytes() == req and s.data_ptr() % 512 == 0
    del s


def test_notebook_figure():
    """memory-notebook.md: rand(300, 300, 300) counts 108000256 bytes."""
    base = cuda.memory_allocated()
    x = alloc(300 * 300 * 300 * 4)
    assert cuda.memory_allocated() - base == 108000256
    cuda.reset_max_memory_allocated()
    assert cuda.max_memory_allocated() == cuda.memory_allocated()
    # a request of 10 MiB or more gets its own segment rounded to 2 MiB
    assert segment_of(x.data_ptr())["total_size"] == 52 * 2 * MiB
    del x


@pytest.mark.parametrize("req,pool,segment", [
    (MiB, "small_pool", 2 * MiB),              # up to 1 MiB: small pool, 2 MiB segments
    (MiB + 1, "large_pool", 20 * MiB),         # under 10 MiB: 20 MiB segments
    (10 * MiB - 512, "large_pool", 20 * MiB),
    (10 * MiB, "large_pool", 10 * MiB),        # from 10 MiB: rounded to 2 MiB
    (10 * MiB + 1, "large_pool", 12 * MiB),
])
def test_pool_choice_and_segment_size(req, pool, segment):
    with cached_blocks_taken():
        before = cuda.memory_stats()
        s = alloc(req)
        after = cuda.memory_stats()
    assert after["allocation.%s.current" % pool] == before["allocation.%s.current" % pool] + 1
    assert after["segment.%s.current" % pool] == before["segment.%s.current" % pool] + 1
    assert after["reserved_bytes.%s.current" % pool] - before["reserved_bytes.%s.current" % pool] == segment
    assert segment_of(s.data_ptr())["segment_type"] == pool.split("_")[0]
    del s


def test_split_and_coalesce():
    with cached_blocks_taken():
        split_and_coalesce()


def split_and_coalesce():
    a = alloc(1000)
    b = alloc(1000)
    seg = segment_of(a.data_ptr())
    assert b.data_ptr() == a.data_ptr() + 1024  # carved from the same segment
    states = [(blk["size"], blk["state"]) for blk in seg["blocks"]]
    assert states[:2] == [(1024, "active_allocated"), (1024, "active_allocated")]
    assert states[2] == (2 * MiB - 2048, "inactive")
    split0 = stat("inactive_split.small_pool.current")
    pa = a.data_ptr()
    del a  # a hole before b: one more inactive split block
    assert stat("inactive_split.small_pool.current") == split0 + 1
    del b  # both neighbours free: everything merges back into one block
    seg = segment_of(pa)
    assert [(blk["size"], blk["state"]) for blk in seg["blocks"]] == [(2 * MiB, "inactive")]
    assert stat("inactive_split.small_pool.current") == split0 - 1
    # best fit hands the same memory out again
    c = alloc(2000)
    assert c.data_ptr() == pa
    del c


def test_best_fit_prefers_smallest_block():
    big, keep1, small, keep2 = alloc(64 * KiB), alloc(512), alloc(8 * KiB), alloc(512)
    pbig, psmall = big.data_ptr(), small.data_ptr()
    del big, small
    x = alloc(6 * KiB)
    assert x.data_ptr() == psmall  # 8 KiB hole fits better than the 64 KiB one
    y = alloc(40 * KiB)
    assert y.data_ptr() == pbig
    del x, y, keep1, keep2


def test_same_stream_reuses_at_once():
    a = alloc(4096)
    p = a.data_ptr()
    del a
    b = alloc(4096)
    assert b.data_ptr() == p
    del b


def test_other_stream_gets_other_memory():
    a = alloc(4096)
    p = a.data_ptr()
    del a
    s = cuda.Stream()
    with cuda.stream(s):
        b = alloc(4096)
    assert b.data_ptr() != p
    del b
    s.synchronize()


def test_record_stream_defers_reuse_until_work_done():
    s = cuda.Stream()
    a = alloc(8192)
    p = a.data_ptr()
    s.wait_stream(cuda.current_stream())
    with cuda.stream(s):
        cuda._sleep(SLEEP)                 # s is busy ...
        cuda._memset_async(p, 7, 8192)     # ... and then still writes into a
    a.record_stream(s)
    del a
    states = {b["address"]: b["state"] for b in segment_of(p)["blocks"]}
    assert states[p] == "active_pending_free"
    b = alloc(8192)  # same stream, same size: must not be a's memory yet
    assert b.data_ptr() != p
    assert s.query() is False, "the test needs s still busy here"
    s.synchronize()
    del b
    c = alloc(8192)  # the event has completed: a's memory is back
    assert c.data_ptr() == p
    del c


def test_record_stream_on_own_stream_is_noop():
    a = alloc(4096)
    p = a.data_ptr()
    a.record_stream(cuda.current_stream())
    del a
    b = alloc(4096)
    assert b.data_ptr() == p
    del b


def test_record_stream_checks_arguments():
    a = alloc(16)
    with pytest.raises(TypeError):
        a.record_stream(None)
    with pytest.raises(RuntimeError):
        torch.UntypedStorage(16).record_stream(cuda.current_stream())
    del a


def test_empty_cache_returns_segments():
    r0, f0 = cuda.memory_reserved(), stat("num_device_free")
    a = alloc(64 * MiB)
    assert cuda.memory_reserved() == r0 + 64 * MiB
    del a
    assert cuda.memory_reserved() == r0 + 64 * MiB  # cached, not returned
    cuda.empty_cache()
    assert cuda.memory_reserved() == r0
    assert stat("num_device_free") == f0 + 1


def test_oom_raises_and_recovers():
    st0 = cuda.memory_stats()
    free, total = cuda.mem_get_info()
    with pytest.raises(cuda.OutOfMemoryError) as info:
        alloc(2 * total)
    assert isinstance(info.value, RuntimeError)
    msg = str(info.value)
    assert "Tried to allocate" in msg and "GPU 0" in msg and "total capacity" in msg
    assert "allocated by pycuda_sem" in msg and "reserved by pycuda_sem" in msg
    st = cuda.memory_stats()
    assert st["num_ooms"] == st0["num_ooms"] + 1
    assert st["num_alloc_retries"] == st0["num_alloc_retries"] + 1
    assert st["allocated_bytes.all.current"] == st0["allocated_bytes.all.current"]
    ok = alloc(MiB)  # the process goes on
    del ok


def test_free_cache_and_retry_under_fraction():
    total = cuda.mem_get_info()[1]
    a = alloc(64 * MiB)
    del a  # 64 MiB cached
    reserved = cuda.memory_reserved()
    retries = stat("num_alloc_retries")
    try:
        cuda.set_per_process_memory_fraction((reserved + 32 * MiB) / total)
        b = alloc(80 * MiB)  # fits only once the cached 64 MiB are released
        assert stat("num_alloc_retries") == retries + 1
        assert cuda.memory_reserved() == reserved - 64 * MiB + 80 * MiB
        with pytest.raises(cuda.OutOfMemoryError, match="set_per_process_memory_fraction"):
            alloc(256 * MiB)
        del b
    finally:
        cuda.set_per_process_memory_fraction(1.0)


def test_fraction_validation():
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError):
            cuda.set_per_process_memory_fraction(bad)


def test_peak_and_accumulated_stats():
    cuda.reset_peak_memory_stats()
    cuda.reset_accumulated_memory_stats()
    base = cuda.memory_allocated()
    a = alloc(3 * MiB)
    b = alloc(5 * MiB)
    peak = cuda.max_memory_allocated()
    assert peak == base + 3 * MiB + 5 * MiB
    del a, b
    assert cuda.max_memory_allocated() == peak
    st = cuda.memory_stats()
    assert st["allocation.all.allocated"] == 2 and st["allocation.all.freed"] == 2
    assert st["allocated_bytes.all.allocated"] == 8 * MiB
    assert cuda.max_memory_reserved() >= cuda.memory_reserved()
    assert cuda.max_memory_cached() == cuda.max_memory_reserved()
    cuda.reset_peak_memory_stats()
    assert cuda.max_memory_allocated() == base


def test_memory_stats_keys_match_torch():
    t = pytest.importorskip("torch")
    if not t.cuda.is_available():
        pytest.skip("torch sees no GPU")
    x = t.empty(16, device="cuda")  # make sure torch's allocator has stats
    ours = set(cuda.memory_stats())
    theirs = set(t.cuda.memory_stats())
    del x
    missing = theirs - ours
    assert not missing, sorted(missing)
    assert list(cuda.memory_stats()) == sorted(cuda.memory_stats())


def test_snapshot_and_summary():
    a = alloc(4096)
    seg = segment_of(a.data_ptr())
    for key in ("device", "address", "total_size", "allocated_size", "active_size",
                "requested_size", "stream", "segment_type", "blocks"):
        assert key in seg
    blk = [b for b in seg["blocks"] if b["address"] == a.data_ptr()][0]
    assert blk["state"] == "active_allocated" and blk["size"] == 4096
    assert blk["requested_size"] == 4096
    text = cuda.memory_summary()
    assert "Allocated memory" in text and "GPU reserved memory" in text
    del a


def test_zero_byte_storage():
    a0, r0 = cuda.memory_allocated(), cuda.memory_reserved()
    s = alloc(0)
    assert s.nbytes() == 0 and s.data_ptr() == 0 and s.device == torch.device("cuda:0")
    assert cuda.memory_allocated() == a0 and cuda.memory_reserved() == r0
    del s


def test_storage_object():
    s = alloc(1234)
    assert s.is_cuda and len(s) == 1234 and s.size() == 1234 and not s.is_pinned()
    assert "cuda:0" in repr(s)
    with pytest.raises(RuntimeError):
        torch.UntypedStorage(-1, device="cuda")
    del s


def test_many_allocations_balance():
    import random
    rng = random.Random(1234)
    live = []
    for _ in range(3000):
        if live and rng.random() < 0.45:
            live.pop(rng.randrange(len(live)))
        else:
            live.append(alloc(rng.choice([1, 700, 4096, 100_000, 2 * MiB, 11 * MiB + 3])))
    live.clear()
    st = cuda.memory_stats()
    assert st["active.all.current"] == st["allocation.all.current"]
    assert st["inactive_split.all.current"] >= 0


def test_no_caching_mode_in_subprocess():
    code = r"""
import pycuda_sem as t
c = t.cuda
assert t._C._caching_disabled()
a = t.UntypedStorage(4096, device="cuda")
assert c.memory_reserved() == 4096, c.memory_reserved()
del a
assert c.memory_reserved() == 0
st = c.memory_stats()
assert st["num_device_alloc"] == st["num_device_free"] == 1, st
print("ok")
"""
    env = dict(os.environ, PYTORCH_NO_CUDA_MEMORY_CACHING="1")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


@pytest.mark.multigpu
def test_statistics_are_per_device():
    a0, a1 = cuda.memory_allocated(0), cuda.memory_allocated(1)
    x = torch.UntypedStorage(MiB, device="cuda:1")
    assert cuda.memory_allocated(1) == a1 + MiB and cuda.memory_allocated(0) == a0
    with cuda.device(1):
        y = torch.UntypedStorage(MiB, device="cuda")
        assert y.device == torch.device("cuda:1")
        assert cuda.memory_allocated() == a1 + 2 * MiB
    del x, y
    assert cuda.memory_allocated(1) == a1
    cuda.empty_cache()
    assert cuda.memory_reserved(1) == 0 or cuda.memory_reserved(1) < 4 * MiB


def test_threads_allocate_concurrently():
    import random
    import threading
    errors = []

    def worker(seed):
        rng = random.Random(seed)
        s = cuda.Stream()
        live = []
        try:
            for i in range(1500):
                with cuda.stream(s if i % 2 else cuda.default_stream()):
                    if live and rng.random() < 0.5:
                        live.pop(rng.randrange(len(live)))
                    else:
                        live.append(alloc(rng.choice([256, 4096, 300_000, 3 * MiB])))
            live.clear()
            s.synchronize()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors
    st = cuda.memory_stats()
    assert st["allocation.all.current"] == st["active.all.current"]
