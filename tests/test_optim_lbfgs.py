"""optim.LBFGS: convergence to the solution of a quadratic (NumPy's solve),
both line-search modes, torch's state counters and checks; the trajectory
on Rosenbrock's function against torch where it imports."""
import numpy as np
import pytest

import pycuda_sem as torch

from torch_oracle import _torch as real_torch  # torch where it imports, else None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_quadratic_reaches_the_solution(device, line_search_fn):
    rng = np.random.default_rng(0)
    m = rng.standard_normal((6, 6))
    a = m @ m.T + 6 * np.eye(6)
    b = rng.standard_normal(6)
    A, B = torch.tensor(a, device=device), torch.tensor(b, device=device)
    x = torch.zeros(6, dtype=torch.float64, device=device, requires_grad=True)
    opt = torch.optim.LBFGS([x], lr=1, max_iter=50, line_search_fn=line_search_fn,
                            tolerance_grad=1e-12, tolerance_change=1e-14)

    def closure():
        opt.zero_grad()
        f = 0.5 * (x @ (A @ x)) - B @ x
        f.backward()
        return f
    for _ in range(3):
        opt.step(closure)
    np.testing.assert_allclose(x.detach().cpu().numpy(), np.linalg.solve(a, b), rtol=1e-6, atol=1e-7)
    st = opt.state[x]
    assert st["n_iter"] >= 6 and st["func_evals"] >= st["n_iter"]


def _rosenbrock(T, line_search_fn, steps=4):
    x = T.tensor([-1.5, 2.0, 0.5, -0.7], dtype=T.float64, requires_grad=True)
    opt = T.optim.LBFGS([x], lr=1, max_iter=20, history_size=10, line_search_fn=line_search_fn)

    def closure():
        opt.zero_grad()
        f = (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()
        f.backward()
        return f
    losses = [float(opt.step(closure).detach()) for _ in range(steps)]
    return x.detach().numpy(), losses, opt.state[x]["func_evals"], opt.state[x]["n_iter"]


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_rosenbrock_decreases_and_matches_torch(line_search_fn):
    x, losses, evals, iters = _rosenbrock(torch, line_search_fn)
    assert losses[0] == 1329.0 and losses[-1] < 4.0 and all(b <= a for a, b in zip(losses, losses[1:]))
    if real_torch is not None:
        rx, rl, re, ri = _rosenbrock(real_torch, line_search_fn)
        np.testing.assert_allclose(x, rx, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(losses, rl, rtol=1e-9)
        assert (evals, iters) == (re, ri)


def test_checks():
    p = torch.nn.Parameter(torch.zeros(2))
    opt = torch.optim.LBFGS([p])
    with pytest.raises(RuntimeError, match="closure"):
        opt.step(None)
    with pytest.raises(ValueError, match="strong_wolfe"):
        torch.optim.LBFGS([p], line_search_fn="backtracking")
    with pytest.raises(ValueError, match="parameter groups"):
        torch.optim.LBFGS([{"params": [p]}, {"params": [torch.nn.Parameter(torch.zeros(1))]}])
    assert opt.defaults["max_eval"] == 25
