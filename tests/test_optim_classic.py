"""optim.Adadelta, Rprop and ASGD: trajectories on a quadratic against the
update rules written here in NumPy (float64), state names and checks, and
against torch's optimizers where torch imports."""
import numpy as np
import pytest

import pycuda_sem as torch

from torch_oracle import _torch as real_torch  # torch where it imports, else None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
C = np.array([0.5, 1.0, 2.0, 4.0, 0.25, 3.0])


def _run(name, kw, device, steps=12):
    w = torch.tensor(np.linspace(-1.5, 2.0, 6), dtype=torch.float64, device=device, requires_grad=True)
    c = torch.tensor(C, device=device)
    opt = getattr(torch.optim, name)([w], **kw)
    for _ in range(steps):
        opt.zero_grad()
        (0.5 * (c * w * w).sum()).backward()
        opt.step()
    return w.detach().cpu().numpy(), opt.state[w]


def _numpy(name, kw, steps=12):
    w = np.linspace(-1.5, 2.0, 6)
    if name == "Adadelta":
        lr, rho, eps = kw.get("lr", 1.0), kw.get("rho", 0.9), kw.get("eps", 1e-6)
        v, u = np.zeros(6), np.zeros(6)
        for _ in range(steps):
            g = C * w
            v = rho * v + (1 - rho) * g * g
            d = np.sqrt(u + eps) / np.sqrt(v + eps) * g
            u = rho * u + (1 - rho) * d * d
            w = w - lr * d
    elif name == "Rprop":
        lr, (em, ep), (lo, hi) = kw.get("lr", 1e-2), kw.get("etas", (0.5, 1.2)), kw.get("step_sizes", (1e-6, 50))
        prev, size = np.zeros(6), np.full(6, lr)
        for _ in range(steps):
            g = C * w
            s = np.sign(g * prev)
            size = np.clip(size * np.where(s > 0, ep, np.where(s < 0, em, 1.0)), lo, hi)
            g = np.where(s < 0, 0.0, g)
            w = w - np.sign(g) * size
            prev = g
    else:  # ASGD
        lr, lambd, alpha, t0 = kw.get("lr", 1e-2), kw.get("lambd", 1e-4), kw.get("alpha", 0.75), kw.get("t0", 1e6)
        eta, mu = float(np.float32(lr)), 1.0  # eta is a float32 tensor, as torch's
        for t in range(1, steps + 1):
            g = C * w
            w = w * (1 - lambd * eta) - eta * g
            eta = float(np.float32(lr / (1 + lambd * lr * t) ** alpha))
            mu = 1 / max(1, t - t0)
    return w


CASES = [("Adadelta", {}), ("Adadelta", dict(lr=0.5, rho=0.8)), ("Rprop", {}),
         ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.1))), ("ASGD", {}),
         ("ASGD", dict(lr=0.1, t0=3, lambd=1e-2))]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", range(len(CASES)))
def test_trajectories(device, case):
    name, kw = CASES[case]
    w, state = _run(name, kw, device)
    np.testing.assert_allclose(w, _numpy(name, kw), rtol=1e-10, atol=1e-12)
    want = {"Adadelta": ["acc_delta", "square_avg", "step"], "Rprop": ["prev", "step", "step_size"],
            "ASGD": ["ax", "eta", "mu", "step"]}[name]
    assert sorted(state) == want and state["step"].item() == 12


def test_against_torch():
    if real_torch is None:
        pytest.skip("torch does not import here")
    for name, kw in CASES:
        w = real_torch.tensor(np.linspace(-1.5, 2.0, 6), requires_grad=True)
        opt = getattr(real_torch.optim, name)([w], **kw)
        for _ in range(12):
            opt.zero_grad()
            (0.5 * (real_torch.tensor(C) * w * w).sum()).backward()
            opt.step()
        np.testing.assert_allclose(_run(name, kw, "cpu")[0], w.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_checks():
    p = [torch.nn.Parameter(torch.zeros(2))]
    with pytest.raises(ValueError, match="rho"):
        torch.optim.Adadelta(p, rho=1.5)
    with pytest.raises(ValueError, match="eta"):
        torch.optim.Rprop(p, etas=(1.5, 0.5))
    with pytest.raises(ValueError, match="learning rate"):
        torch.optim.ASGD(p, lr=-1)
