"""The ordinary PyTorch scripts in examples/ run unchanged with `torch`
resolving to pycuda_sem (examples/run_as_torch.py), each in its own process,
on the GPU where there is one and on the CPU otherwise; each prints "ok" last."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNNER = os.path.join(ROOT, "examples", "run_as_torch.py")
EXAMPLES = sorted(f for f in os.listdir(os.path.join(ROOT, "examples"))
                  if f.endswith(".py") and f != "run_as_torch.py")


def _run(script, timeout=300):
    return subprocess.run([sys.executable, RUNNER, script], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def test_the_runner_makes_torch_pycuda_sem(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("import torch, torch.nn.functional as F\n"
                     "print(torch.__name__, F.__name__, torch.ones(2).sum().item())\n")
    r = _run(str(probe), timeout=60)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.split() == ["pycuda_sem", "pycuda_sem.nn.functional", "2.0"]


@pytest.mark.parametrize("script", EXAMPLES)
def test_example_runs_with_pycuda_sem_as_torch(script):
    r = _run(os.path.join(ROOT, "examples", script))
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-4000:]
    assert r.stdout.strip().splitlines()[-1].endswith("ok"), r.stdout[-2000:]
