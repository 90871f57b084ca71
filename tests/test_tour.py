"""`make demo` (docs/tour.py) runs to the end and its training section, the
last one, prints a loss that goes down (on the GPU when there is one)."""
import os
import re
import subprocess
import sys

TOUR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "tour.py")


def test_tour_runs_and_trains():
    out = subprocess.run([sys.executable, TOUR], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "== Training (nn, optim, utils.data) on" in text
    losses = [float(v) for v in re.findall(r"^epoch \d+: mean loss ([0-9.]+)$", text, re.M)]
    assert len(losses) == 5
    assert all(b < a for a, b in zip(losses, losses[1:])), losses
    acc = float(re.search(r"training accuracy ([0-9.]+)", text).group(1))
    assert acc > 0.9
