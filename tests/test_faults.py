"""Device faults, spawn and interpreter exit, each in a subprocess.

A kernel that faults (``_C._fault()``, a test-only kernel writing to an
illegal address, csrc/kernels/faults.cu) surfaces as RuntimeError naming the
CUDA error. With ``CUDA_LAUNCH_BLOCKING=1`` every launch is synchronous and
checked, so the error is raised by the faulting call itself; without it, by
the next call that synchronizes. As in PyTorch, the CUDA context is then
unusable: an illegal-address error is sticky, every later CUDA call in that
process raises RuntimeError, and the only recovery is a new process. That is
why these tests run in subprocesses.

``multiprocessing`` with the spawn start method works (a child computes on
the GPU); fork after CUDA is tested in test_device.py. Interpreter exit with
live tensors, streams, events, cached FFT plans and pinned buffers is clean:
exit status 0 and nothing on stderr."""
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(code, tmp_path, env=None, timeout=120):
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent(code))
    e = dict(os.environ)
    e["PYTHONPATH"] = ROOT + os.pathsep + e.get("PYTHONPATH", "")
    e.update(env or {})
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=timeout, env=e, cwd=str(tmp_path))


FAULT_CHILD = """
import pycuda_sem as torch
from pycuda_sem import cuda
x = torch.ones(1000, device="cuda")
assert x.sum().item() == 1000.0
try:
    torch._C._fault()
    print("LAUNCHED")
    cuda.synchronize()
    print("NO ERROR")
except RuntimeError as e:
    print("FAULT:", e)
try:
    (torch.ones(3, device="cuda") * 2).sum().item()
    print("USABLE")
except RuntimeError as e:
    print("UNUSABLE:", e)
"""


@pytest.mark.cuda
def test_fault_raises_at_the_faulting_call_with_launch_blocking(tmp_path):
    r = _run(FAULT_CHILD, tmp_path, env={"CUDA_LAUNCH_BLOCKING": "1"})
    out = r.stdout
    assert r.returncode >= 0, ("killed by a signal", r.returncode, r.stderr[-2000:])
    assert "FAULT:" in out, (out, r.stderr[-2000:])
    assert "LAUNCHED" not in out, out  # raised by _fault() itself
    fault = out.split("FAULT:", 1)[1].splitlines()[0]
    assert "illegal" in fault.lower() or "fault" in fault.lower(), fault
    assert "fault_kernel" in fault, fault  # names the failing call
    assert "UNUSABLE:" in out, out  # the context is unusable afterwards


@pytest.mark.cuda
def test_fault_surfaces_at_next_synchronizing_call(tmp_path):
    r = _run(FAULT_CHILD, tmp_path, env={"CUDA_LAUNCH_BLOCKING": "0"})
    out = r.stdout
    assert r.returncode >= 0, ("killed by a signal", r.returncode, r.stderr[-2000:])
    assert "FAULT:" in out and "NO ERROR" not in out, (out, r.stderr[-2000:])
    assert "UNUSABLE:" in out, out


@pytest.mark.cuda
def test_multiprocessing_spawn_child_computes(tmp_path):
    r = _run("""
        import multiprocessing as mp

        def child(q):
            import pycuda_sem as torch
            x = torch.arange(1000, dtype=torch.float64, device="cuda")
            q.put(((x * 2).sum().item(), torch.cuda.device_count()))

        if __name__ == "__main__":
            import pycuda_sem as torch
            torch.ones(3, device="cuda").sum().item()  # the parent uses CUDA first
            ctx = mp.get_context("spawn")
            q = ctx.Queue()
            ps = [ctx.Process(target=child, args=(q,)) for _ in range(2)]
            for p in ps:
                p.start()
            res = [q.get(timeout=100) for _ in ps]
            for p in ps:
                p.join(100)
            assert all(p.exitcode == 0 for p in ps), [p.exitcode for p in ps]
            assert all(r[0] == 999000.0 for r in res), res
            print("SPAWN OK")
    """, tmp_path)
    assert r.returncode == 0 and "SPAWN OK" in r.stdout, (r.stdout, r.stderr[-3000:])


@pytest.mark.cuda
def test_exit_with_live_objects_is_clean(tmp_path):
    r = _run("""
        import pycuda_sem as torch
        from pycuda_sem import cuda
        keep = []
        s = cuda.Stream()
        e = cuda.Event(enable_timing=True)
        with cuda.stream(s):
            a = torch.ones(1 << 20, device="cuda")
            b = a * 2
            e.record()
        a.record_stream(s)
        p = torch.ones(1 << 16).pin_memory()
        d = p.to("cuda", non_blocking=True)
        f = torch.fft.fft(torch.ones(64, device="cuda"))
        g = torch.fft.rfft(torch.ones(8, 32, device="cuda"))
        m = torch.ones(64, 64, device="cuda") @ torch.ones(64, 64, device="cuda")
        keep += [s, e, a, b, p, d, f, g, m, cuda.Event(), cuda.Stream(priority=-1)]
        keep.append(torch.UntypedStorage(1000, device="cuda"))
        cuda._sleep(1_000_000)  # work still queued at exit
        print("EXITING")
    """, tmp_path)
    assert r.returncode == 0, (r.returncode, r.stderr[-3000:])
    assert r.stdout.strip() == "EXITING"
    assert r.stderr == "", r.stderr[-3000:]


def test_exit_with_live_cpu_objects_is_clean(tmp_path):
    r = _run("""
        import numpy as np
        import pycuda_sem as torch
        t = torch.ones(100, 100)
        v = t.t()[3:]
        n = torch.from_numpy(np.ones(10))
        arr = t.numpy()
        st = torch.UntypedStorage(100)
        g = torch.manual_seed(3)
        r = torch.rand(10)
        print("EXITING")
    """, tmp_path)
    assert r.returncode == 0, (r.returncode, r.stderr[-3000:])
    assert r.stdout.strip() == "EXITING" and r.stderr == "", r.stderr[-3000:]
