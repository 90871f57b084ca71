"""Adamax, NAdam and RAdam: 30 steps against NumPy float64 references of
torch's update rules (weight decay coupled and decoupled, maximize),
state_dict round trips, argument errors; against torch on the same
problem where torch imports; on CUDA against the CPU."""
import math

import numpy as np
import pytest

import pycuda_sem as torch

try:
    import torch as real_torch
except Exception:  # noqa: BLE001 - any import failure means no oracle
    real_torch = None

rng = np.random.default_rng(6)
A = rng.normal(size=(5, 5))
P0 = rng.normal(size=5)


def grad_of(p):
    return A.T @ (A @ p) + np.sin(p)  # of 0.5 |A p|^2 - sum(cos p)


def ref_run(name, steps, lr, b1=0.9, b2=0.999, eps=1e-8, wd=0.0, decoupled=False,
            maximize=False, psi=4e-3):
    p = P0.copy()
    m, v, prod = np.zeros(5), np.zeros(5), 1.0
    for t in range(1, steps + 1):
        g = grad_of(p)
        g = -g if maximize else g
        if wd and (name == "adamax" or not decoupled):
            g = g + wd * p
        elif wd:
            p = p * (1 - lr * wd)
        m = m + (g - m) * (1 - b1)
        if name == "adamax":
            v = np.maximum(v * b2, np.abs(g) + eps)
            p = p - lr / (1 - b1 ** t) * m / v
            continue
        v = v * b2 + g * g * (1 - b2)
        if name == "nadam":
            mu = b1 * (1 - 0.5 * 0.96 ** (t * psi))
            mu_next = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * psi))
            prod = float(np.float32(prod) * np.float32(mu))  # a float32 tensor, as torch's
            d = np.sqrt(v / (1 - b2 ** t)) + eps
            p = p - lr * (1 - mu) / (1 - prod) * g / d
            p = p - lr * mu_next / (1 - prod * mu_next) * m / d
        else:
            m_hat = m / (1 - b1 ** t)
            rho_inf = 2 / (1 - b2) - 1
            rho = rho_inf - 2 * t * b2 ** t / (1 - b2 ** t)
            if rho > 5:
                r = math.sqrt((rho - 4) * (rho - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho))
                p = p - m_hat * lr * r * math.sqrt(1 - b2 ** t) / (np.sqrt(v) + eps)
            else:
                p = p - m_hat * lr
    return p


def ours_run(cls, steps, device="cpu", **kw):
    p = torch.tensor(P0, dtype=torch.float64, device=device, requires_grad=True)
    a = torch.tensor(A, dtype=torch.float64, device=device)
    opt = cls([p], **kw)
    for _ in range(steps):
        opt.zero_grad()
        (0.5 * (a @ p).square().sum() - p.cos().sum()).backward()
        opt.step()
    return p, opt


CASES = [("adamax", torch.optim.Adamax, {"lr": 0.05}, {}),
         ("adamax", torch.optim.Adamax, {"lr": 0.05, "weight_decay": 0.1, "maximize": True},
          {"wd": 0.1, "maximize": True}),
         ("nadam", torch.optim.NAdam, {"lr": 0.05}, {}),
         ("nadam", torch.optim.NAdam, {"lr": 0.05, "weight_decay": 0.1,
                                       "decoupled_weight_decay": True},
          {"wd": 0.1, "decoupled": True}),
         ("radam", torch.optim.RAdam, {"lr": 0.05}, {}),
         ("radam", torch.optim.RAdam, {"lr": 0.05, "weight_decay": 0.2}, {"wd": 0.2})]


@pytest.mark.parametrize("name,cls,kw,ref_kw", CASES)
def test_against_numpy(name, cls, kw, ref_kw):
    p, _ = ours_run(cls, 30, **kw)
    np.testing.assert_allclose(p.detach().numpy(), ref_run(name, 30, kw["lr"], **ref_kw),
                               rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("cls", [torch.optim.Adamax, torch.optim.NAdam, torch.optim.RAdam])
def test_state_dict_round_trip_and_errors(cls):
    p, opt = ours_run(cls, 5, lr=0.01)
    sd = opt.state_dict()
    q = torch.tensor(P0, dtype=torch.float64, requires_grad=True)
    opt2 = cls([q], lr=0.01)
    opt2.load_state_dict(sd)
    assert float(opt2.state[q]["step"]) == 5.0
    with pytest.raises(ValueError, match="Invalid learning rate"):
        cls([q], lr=-1.0)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1"):
        cls([q], betas=(0.9, 1.0))


@pytest.mark.skipif(real_torch is None, reason="torch is not importable")
def test_match_torch():
    for name, cls, kw, _ in CASES:
        p, _ = ours_run(cls, 30, **kw)
        tp = real_torch.tensor(P0, requires_grad=True)
        ta = real_torch.tensor(A)
        topt = getattr(real_torch.optim, cls.__name__)([tp], **kw)
        for _ in range(30):
            topt.zero_grad()
            (0.5 * (ta @ tp).square().sum() - tp.cos().sum()).backward()
            topt.step()
        np.testing.assert_allclose(p.detach().numpy(), tp.detach().numpy(), rtol=1e-10,
                                   atol=1e-12, err_msg=str((name, kw)))


@pytest.mark.cuda
def test_cuda_matches_cpu():
    for _, cls, kw, _ in CASES:
        a, _ = ours_run(cls, 10, **kw)
        b, _ = ours_run(cls, 10, device="cuda", **kw)
        np.testing.assert_allclose(b.detach().cpu().numpy(), a.detach().numpy(), rtol=1e-9,
                                   atol=1e-12)
