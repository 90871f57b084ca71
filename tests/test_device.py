"""Devices: the device object, parsing, the current device and its context
manager, device queries, and the version module."""
import threading

import pytest

import pycuda_sem as torch
from pycuda_sem import cuda


# ---- the device object (no GPU needed) -------------------------------------

@pytest.mark.parametrize("spec,type_,index,text", [
    ("cuda", "cuda", None, "cuda"),
    ("cuda:1", "cuda", 1, "cuda:1"),
    ("cuda:12", "cuda", 12, "cuda:12"),
    ("cpu", "cpu", None, "cpu"),
    ("cpu:0", "cpu", 0, "cpu:0"),
])
def test_device_from_string(spec, type_, index, text):
    d = torch.device(spec)
    assert d.type == type_ and d.index == index and str(d) == text


def test_device_forms_and_repr():
    assert torch.device("cuda", 1) == torch.device("cuda:1")
    assert torch.device(1) == torch.device("cuda:1")
    d = torch.device("cuda:0")
    assert torch.device(d) == d
    assert repr(d) == "device(type='cuda', index=0)"
    assert repr(torch.device("cpu")) == "device(type='cpu')"
    assert repr(torch.device("cuda")) == "device(type='cuda')"
    assert torch.device(type="cuda", index=3).index == 3


def test_device_equality_and_hash():
    assert torch.device("cuda") != torch.device("cuda:0")
    assert torch.device("cpu") != torch.device("cuda")
    assert {torch.device("cuda:0"), torch.device("cuda", 0), torch.device(0)} == {torch.device("cuda:0")}
    assert len({torch.device("cuda:0"), torch.device("cuda:1"), torch.device("cpu")}) == 3


@pytest.mark.parametrize("bad", ["gpu", "cuda:x", "cuda:-1", "", "cuda:1:2", "cuda:", "CUDA", " cuda"])
def test_malformed_device_strings_raise(bad):
    with pytest.raises(RuntimeError):
        torch.device(bad)


def test_device_wrong_types():
    with pytest.raises(TypeError):
        torch.device(1.5)
    with pytest.raises(TypeError):
        torch.device(None)
    with pytest.raises(RuntimeError):
        torch.device(-1)
    with pytest.raises(RuntimeError):
        torch.device("cuda:1", 2)


def test_device_pickles():
    import pickle
    for d in (torch.device("cuda:3"), torch.device("cpu"), torch.device("cuda")):
        assert pickle.loads(pickle.dumps(d)) == d


def test_version():
    assert isinstance(torch.__version__, str)
    major, minor = torch.version.cuda.split(".")
    assert int(major) >= 11 and minor.isdigit()
    assert torch.version.hip is None


# ---- without a GPU ---------------------------------------------------------

nogpu = pytest.mark.skipif(cuda.device_count() > 0, reason="checks the behaviour without a GPU")


@nogpu
def test_no_gpu_queries():
    assert cuda.is_available() is False
    assert cuda.device_count() == 0
    assert cuda.memory_allocated() == 0
    assert cuda.max_memory_allocated() == 0
    assert cuda.memory_reserved() == 0
    assert cuda.memory_cached() == 0
    assert cuda.memory_stats() == {}
    assert cuda.memory_snapshot() == []
    cuda.empty_cache()
    cuda.reset_peak_memory_stats()
    assert "memory summary" in cuda.memory_summary()


@nogpu
@pytest.mark.parametrize("call", [
    lambda: cuda.current_device(),
    lambda: cuda.set_device(0),
    lambda: cuda.get_device_name(),
    lambda: cuda.get_device_properties(0),
    lambda: cuda.synchronize(),
    lambda: cuda.Stream(),
    lambda: cuda.current_stream(),
    lambda: cuda.Event().record(),
    lambda: cuda.device(0),
    lambda: torch.UntypedStorage(16, device="cuda"),
    lambda: cuda.mem_get_info(),
])
def test_no_gpu_raises_clearly(call):
    with pytest.raises(RuntimeError, match="no CUDA GPU is available"):
        call()


def test_import_does_not_touch_gpu():
    import subprocess
    import sys
    code = ("import pycuda_sem, sys; from pycuda_sem import _C; "
            "print(_C.is_initialized())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=__file__.rsplit("/tests/", 1)[0])
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_device_context_none_is_noop():
    with cuda.device(None) as d:
        assert d.idx == -1
    with cuda.device(-1):
        pass


def test_cuda_device_rejects_cpu():
    with pytest.raises((ValueError, RuntimeError)):
        cuda.device("cpu")


# ---- with a GPU ------------------------------------------------------------

@pytest.mark.cuda
def test_queries():
    n = cuda.device_count()
    assert cuda.is_available() and n >= 1
    p = cuda.get_device_properties(0)
    assert p.total_memory > 1 << 30 and p.multi_processor_count > 0
    assert (p.major, p.minor) == cuda.get_device_capability(0)
    assert cuda.get_device_name(0) == p.name == cuda.get_device_name(torch.device("cuda:0"))
    free, total = cuda.mem_get_info()
    assert 0 < free <= total == p.total_memory
    cuda.synchronize()
    cuda.synchronize(0)
    assert cuda.can_device_access_peer(0, 0) is False


@pytest.mark.cuda
def test_out_of_range_ordinals_raise():
    n = cuda.device_count()
    for call in (lambda: cuda.set_device(n), lambda: cuda.get_device_properties(n),
                 lambda: cuda.get_device_name(n + 3), lambda: cuda.device(n),
                 lambda: cuda.synchronize(n), lambda: cuda.Stream(device=n),
                 lambda: torch.UntypedStorage(8, device="cuda:%d" % n)):
        with pytest.raises(RuntimeError, match="invalid device ordinal"):
            call()


@pytest.mark.cuda
def test_device_context_nests_and_restores():
    assert cuda.current_device() == 0
    with cuda.device(0):
        assert cuda.current_device() == 0
        with cuda.device(torch.device("cuda:0")):
            with cuda.device("cuda:0"):
                assert cuda.current_device() == 0
    assert cuda.current_device() == 0


@pytest.mark.cuda
def test_torch_properties_agree():
    t = pytest.importorskip("torch")
    if not t.cuda.is_available():
        pytest.skip("torch sees no GPU")
    p, q = cuda.get_device_properties(0), t.cuda.get_device_properties(0)
    assert (p.name, p.major, p.minor, p.total_memory, p.multi_processor_count) == \
        (q.name, q.major, q.minor, q.total_memory, q.multi_processor_count)
    assert cuda.device_count() == t.cuda.device_count()


@pytest.mark.multigpu
def test_device_context_multi_gpu_and_threads():
    assert cuda.current_device() == 0
    seen = {}
    barrier = threading.Barrier(2)

    def worker(dev):
        with cuda.device(dev):
            barrier.wait()
            seen[dev] = cuda.current_device()
            barrier.wait()
        seen[("after", dev)] = cuda.current_device()

    ts = [threading.Thread(target=worker, args=(d,)) for d in (0, 1)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert seen[0] == 0 and seen[1] == 1
    assert seen[("after", 0)] == 0 and seen[("after", 1)] == 0
    with cuda.device(1):
        assert cuda.current_device() == 1
        with cuda.device(0):
            assert cuda.current_device() == 0
        assert cuda.current_device() == 1
    assert cuda.current_device() == 0
    cuda.set_device(1)
    try:
        assert cuda.current_device() == 1
    finally:
        cuda.set_device(0)


@pytest.mark.cuda
def test_cuda_visible_devices_honoured():
    import subprocess
    import sys
    import os
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    code = "import pycuda_sem as t; print(t.cuda.device_count(), t.cuda.is_available())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd=__file__.rsplit("/tests/", 1)[0])
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0", "False"]
    env["CUDA_VISIBLE_DEVICES"] = "0"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd=__file__.rsplit("/tests/", 1)[0])
    assert out.stdout.split() == ["1", "True"]


@pytest.mark.cuda
def test_fork_after_cuda_raises_in_child():
    import multiprocessing as mp
    import sys
    if sys.platform != "linux":
        pytest.skip("fork start method")
    cuda.synchronize()  # make sure this process has used CUDA
    ctx = mp.get_context("fork")
    q = ctx.Queue()

    def child(q):
        try:
            cuda.synchronize()
            q.put("no error")
        except RuntimeError as e:
            q.put(str(e))

    p = ctx.Process(target=child, args=(q,))
    p.start()
    msg = q.get(timeout=60)
    p.join(60)
    assert "forked subprocess" in msg and "spawn" in msg
