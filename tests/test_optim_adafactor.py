"""optim.Adafactor and optim.Muon against a NumPy float64 re-statement of
their update rules (always) and torch.optim's trajectories (where torch
imports); SparseAdam's NotImplementedError. Adafactor agrees to 1e-10 in
float64; Muon orthogonalises in bfloat16 (as torch's), so it is compared to
the float64 rule within bfloat16's precision and to torch within a few
bfloat16 rounding steps."""
import math

import numpy as np
import pytest

import pycuda_sem as torch

from torch_oracle import _torch as real_torch  # torch where it imports, else None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
pytestmark = pytest.mark.usefixtures("no_tf32")

SHAPES = [(5, 4), (7,), (2, 3, 4)]


def _data(seed, shapes, steps):
    rng = np.random.default_rng(seed)
    init = [rng.standard_normal(s) for s in shapes]
    grads = [[rng.standard_normal(s) for s in shapes] for _ in range(steps)]
    return init, grads


def _run(lib, cls, kw, init, grads, dtype, device="cpu"):
    ps = [lib.tensor(a, dtype=dtype, device=device, requires_grad=True) for a in init]
    opt = getattr(lib.optim, cls)(ps, **kw)
    for step in grads:
        for p, g in zip(ps, step):
            p.grad = lib.tensor(g, dtype=dtype, device=device)
        opt.step()
    return [p.detach().cpu().double().numpy() for p in ps], opt


def _adafactor_numpy(init, grads, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0,
                     maximize=False):
    """Adafactor as torch documents it, in float64 NumPy."""
    ps = [a.copy() for a in init]
    eps1 = np.finfo(np.float64).eps if eps[0] is None else eps[0]
    state = [None] * len(ps)
    for t, step in enumerate(grads, 1):
        for i, (p, g) in enumerate(zip(ps, step)):
            g = -g if maximize else g
            w = t ** beta2_decay
            alpha = max(eps[1], math.sqrt(np.mean(p * p))) * min(lr, 1 / math.sqrt(t))
            p *= 1 - lr * weight_decay
            if g.ndim > 1:
                if state[i] is None:
                    state[i] = [np.zeros(g.shape[:-1] + (1,)), np.zeros(g.shape[:-2] + (1, g.shape[-1]))]
                r, c = state[i]
                r += w * ((g * g).mean(-1, keepdims=True) - r)
                c += w * ((g * g).mean(-2, keepdims=True) - c)
                v = r * c / np.maximum(r.mean(-2, keepdims=True), eps1)
            else:
                if state[i] is None:
                    state[i] = np.zeros_like(g)
                state[i] += w * (g * g - state[i])
                v = state[i]
            u = g / np.sqrt(np.maximum(v, eps1 * eps1))
            p -= alpha / max(1.0, math.sqrt(np.mean(u * u)) / d) * u
    return ps


CONFIGS = [{}, dict(lr=0.5, weight_decay=0.1, maximize=True), dict(eps=(1e-30, 1e-2), d=1.5, beta2_decay=-0.5),
           dict(lr=0.05, foreach=True)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kw", CONFIGS)
def test_adafactor_trajectory(device, kw):
    init, grads = _data(0, SHAPES, 6)
    got, opt = _run(torch, "Adafactor", kw, init, grads, torch.float64, device)
    ref_kw = {k: v for k, v in kw.items() if k != "foreach"}
    for a, b in zip(got, _adafactor_numpy(init, grads, **ref_kw)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    for a, b0 in zip(got, init):
        assert np.abs(a - b0).max() > 1e-4  # the parameters did move
    st = opt.state_dict()["state"]
    assert sorted(st[0]) == ["col_var", "row_var", "step"] and sorted(st[1]) == ["step", "variance"]
    assert tuple(st[0]["row_var"].shape) == (5, 1) and tuple(st[2]["col_var"].shape) == (2, 1, 4)
    assert float(st[0]["step"]) == 6.0
    if real_torch is not None:
        want, ropt = _run(real_torch, "Adafactor", kw, init, grads, real_torch.float64)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
        assert ropt.state_dict()["param_groups"][0].keys() == opt.state_dict()["param_groups"][0].keys()


def test_adafactor_float32_tensor_lr_and_errors():
    init, grads = _data(1, SHAPES, 4)
    got, _ = _run(torch, "Adafactor", dict(lr=torch.tensor(0.3)), init, grads, torch.float32)
    ref = _adafactor_numpy(init, grads, lr=float(np.float32(0.3)))
    ref32 = _adafactor_numpy(init, grads, lr=0.3)
    for a, b, c in zip(got, ref, ref32):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(a, c, rtol=1e-5, atol=1e-6)
    if real_torch is not None:
        want, _ = _run(real_torch, "Adafactor", dict(lr=real_torch.tensor(0.3)), init, grads, real_torch.float32)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    p = [torch.zeros(2, requires_grad=True)]
    for bad, msg in ((dict(lr=-1.0), "Learning rate"), (dict(beta2_decay=0.5), "beta2_decay"),
                     (dict(eps=(-1.0, 1e-3)), "epsilon1"), (dict(eps=(None, -1.0)), "epsilon2"),
                     (dict(d=0.5), "Clipping threshold"), (dict(weight_decay=-1.0), "weight_decay"),
                     (dict(lr=torch.ones(2)), "1-element")):
        with pytest.raises(ValueError, match=msg):
            torch.optim.Adafactor(p, **bad)


def _newton_schulz_numpy(g, steps=5, coef=(3.4445, -4.7750, 2.0315), eps=1e-7):
    a, b, c = coef
    tall = g.shape[0] > g.shape[1]
    x = g.T if tall else g
    x = x / max(np.linalg.norm(x), eps)
    for _ in range(steps):
        gram = x @ x.T
        x = a * x + (b * gram + c * gram @ gram) @ x
    return x.T if tall else x


@pytest.mark.parametrize("device", DEVICES)
def test_muon(device):
    init, grads = _data(2, [(5, 4), (3, 6)], 3)
    kw = dict(lr=0.02, weight_decay=0.01, momentum=0.9)
    got, opt = _run(torch, "Muon", kw, init, grads, torch.float32, device)
    # float64 restatement: B = lerp(B, G, 1 - mu); U = lerp(G, B, mu); p *= 1 - lr wd; p -= lr' NS(U)
    ps, bufs = [a.copy() for a in init], [np.zeros_like(a) for a in init]
    for step in grads:
        for i, g in enumerate(step):
            bufs[i] += (1 - 0.9) * (g - bufs[i])
            upd = _newton_schulz_numpy(g + 0.9 * (bufs[i] - g))
            ps[i] *= 1 - 0.02 * 0.01
            ps[i] -= 0.02 * math.sqrt(max(1, ps[i].shape[0] / ps[i].shape[1])) * upd
    for a, b, a0 in zip(got, ps, init):
        moved = np.abs(b - a0).max()
        assert moved > 1e-2
        np.testing.assert_allclose(a, b, atol=0.05 * moved)  # bfloat16 Newton-Schulz
    sv = np.linalg.svd(_newton_schulz_numpy(grads[0][0]), compute_uv=False)
    assert sv.min() > 0.3 and sv.max() < 1.5  # roughly orthogonal
    assert sorted(opt.state_dict()["state"][0]) == ["momentum_buffer"]
    with pytest.raises(ValueError, match="2D parameters"):
        torch.optim.Muon([torch.zeros(3, requires_grad=True)])
    with pytest.raises(ValueError, match="not supported"):
        torch.optim.Muon([torch.zeros(3, 3, requires_grad=True)], adjust_lr_fn="nope")
    if real_torch is not None:
        for extra in ({}, dict(nesterov=False, adjust_lr_fn="match_rms_adamw")):
            want, _ = _run(real_torch, "Muon", dict(kw, **extra), init, grads, real_torch.float32)
            mine, _ = _run(torch, "Muon", dict(kw, **extra), init, grads, torch.float32, device)
            for a, b, a0 in zip(mine, want, init):
                np.testing.assert_allclose(a, b, atol=0.02 * np.abs(b - a0).max())


def test_sparse_adam_is_not_available():
    with pytest.raises(NotImplementedError, match="sparse"):
        torch.optim.SparseAdam([torch.zeros(2, requires_grad=True)])
