"""The compatibility layers a training script touches without needing what
they name: torch.compile (eager: the model comes back as it is),
torch.jit's decorators and queries (eager), torch.backends.mps (absent)."""
import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import nn


def test_compile_returns_the_model_and_keeps_its_numbers():
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    x = torch.randn(3, 4)
    want = m(x).detach().numpy()
    c = torch.compile(m)
    assert c is m
    np.testing.assert_array_equal(c(x).detach().numpy(), want)
    assert list(c.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert torch.compile(m, mode="max-autotune", fullgraph=True, dynamic=False) is m
    assert torch.compile(backend="eager")(m) is m

    @torch.compile
    def f(a):
        return a * 2 + 1
    np.testing.assert_array_equal(f(x).numpy(), (x * 2 + 1).numpy())


def test_compile_checks_its_arguments():
    with pytest.raises(RuntimeError, match="Unrecognized mode=fastest"):
        torch.compile(nn.Linear(1, 1), mode="fastest")
    with pytest.raises(RuntimeError, match="Either mode or options"):
        torch.compile(nn.Linear(1, 1), mode="default", options={"a": 1})
    with pytest.raises(RuntimeError, match="must be callable"):
        torch.compile(3)


def test_jit_runs_eagerly():
    @torch.jit.script
    def f(x):
        return x + 1

    class M(nn.Module):
        def forward(self, x):
            if torch.jit.is_scripting() or torch.jit.is_tracing():
                raise AssertionError("the eager branch is the one taken")
            return self.helper(x)

        @torch.jit.ignore
        def helper(self, x):
            return x * 3

        @torch.jit.unused
        def unused(self):
            return 0

    x = torch.ones(2)
    assert f(x).tolist() == [2.0, 2.0]
    m = torch.jit.script(M())
    assert m(x).tolist() == [3.0, 3.0] and torch.jit.trace(m, (x,)) is m
    assert torch.jit.annotate(list, [1]) == [1] and torch.jit.wait(torch.jit.fork(f, x)).tolist() == [2.0, 2.0]
    assert not isinstance(m, torch.jit.ScriptModule)
    with pytest.raises(NotImplementedError, match="TorchScript"):
        torch.jit.save(m, "/tmp/never.pt")


def test_mps_is_absent():
    assert torch.backends.mps.is_available() is False and torch.backends.mps.is_built() is False
    device = "cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"
    assert torch.zeros(1, device=device).device.type == device
