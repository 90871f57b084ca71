"""The fused training layers (csrc/ops/fused_layers.c, kernels norm.cu,
xent.cu, dropout.cu, gelu's backward in ew_ops.cuh): layer_norm, rms_norm,
cross_entropy with class indices, dropout, against NumPy float64 references
on the CPU; on CUDA (marker `cuda`) against the CPU path and, where it is
installed, torch. Gradients are checked in float64 by gradcheck."""
import math

import numpy as np
import pytest

import pycuda_sem as torch
import pycuda_sem.nn.functional as F
from pycuda_sem import _C
from pycuda_sem.autograd.gradcheck import gradcheck, gradgradcheck

from torch_oracle import _torch, needs_torch

RNG = np.random.RandomState(0)
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]


def t(a, device="cpu", dtype=torch.float64, rg=False):
    return torch.tensor(np.asarray(a), dtype=dtype, device=device, requires_grad=rg)


def ref_layer_norm(x, w, b, eps, k, rms=False):
    ax = tuple(range(x.ndim - k, x.ndim))
    mu = 0 if rms else x.mean(axis=ax, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=ax, keepdims=True)
    y = (x - mu) / np.sqrt(var + eps)
    if w is not None:
        y = y * w
    if b is not None:
        y = y + b
    return y


# ---- layer_norm / rms_norm ---------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape,k", [((4, 7), 1), ((2, 3, 8), 2), ((5, 1500), 1), ((3, 9000), 1)])
@pytest.mark.parametrize("affine", ["wb", "w", "none"])
def test_layer_norm_forward_backward(device, shape, k, affine):
    x = RNG.standard_normal(shape) * 3 + 1
    ns = shape[-k:]
    w = RNG.standard_normal(ns) if affine != "none" else None
    b = RNG.standard_normal(ns) if affine == "wb" else None
    xt = t(x, device, rg=True)
    wt = t(w, device, rg=True) if w is not None else None
    bt = t(b, device, rg=True) if b is not None else None
    y = F.layer_norm(xt, ns, wt, bt, 1e-5)
    np.testing.assert_allclose(y.cpu().numpy(), ref_layer_norm(x, w, b, 1e-5, k), rtol=1e-10, atol=1e-10)
    leaves = [v for v in (xt, wt, bt) if v is not None]
    if x.size > 100:  # long rows (the re-read kernel path): the backward against NumPy
        g = RNG.standard_normal(shape)
        y.backward(t(g, device))
        ax = tuple(range(x.ndim - k, x.ndim))
        xh = ref_layer_norm(x, None, None, 1e-5, k)
        rs = 1 / np.sqrt(x.var(axis=ax, keepdims=True) + 1e-5)
        dh = g * (w if w is not None else 1)
        gx = rs * (dh - dh.mean(axis=ax, keepdims=True) - xh * (dh * xh).mean(axis=ax, keepdims=True))
        np.testing.assert_allclose(xt.grad.cpu().numpy(), gx, rtol=1e-9, atol=1e-10)
        if wt is not None:
            np.testing.assert_allclose(wt.grad.cpu().numpy(), (g * xh).reshape(-1, *ns).sum(0), rtol=1e-9)
        return
    assert gradcheck(lambda *a: F.layer_norm(a[0], ns, *(list(a[1:]) + [None, None])[:2], eps=1e-5),
                     leaves)


@pytest.mark.parametrize("device", DEVICES)
def test_layer_norm_double_backward(device):
    xt = t(RNG.standard_normal((3, 5)), device, rg=True)
    wt = t(RNG.standard_normal(5), device, rg=True)
    assert gradgradcheck(lambda x, w: F.layer_norm(x, (5,), w, None), [xt, wt])


@pytest.mark.parametrize("device", DEVICES)
def test_rms_norm(device):
    x = RNG.standard_normal((6, 10))
    w = RNG.standard_normal(10)
    xt, wt = t(x, device, rg=True), t(w, device, rg=True)
    y = F.rms_norm(xt, (10,), wt, 1e-6)
    np.testing.assert_allclose(y.cpu().numpy(), ref_layer_norm(x, w, None, 1e-6, 1, rms=True),
                               rtol=1e-10, atol=1e-10)
    assert gradcheck(lambda a, b: F.rms_norm(a, (10,), b, 1e-6), [xt, wt])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_layer_norm_low_precision(device, dtype):
    dt = getattr(torch, dtype)
    x = RNG.standard_normal((8, 300)).astype(np.float32)
    w = RNG.standard_normal(300).astype(np.float32)
    xt = torch.tensor(x, device=device).to(dt)
    wt = torch.tensor(w, device=device).to(dt)
    y = F.layer_norm(xt, (300,), wt, None)
    assert y.dtype == dt
    ref = ref_layer_norm(xt.double().cpu().numpy(), wt.double().cpu().numpy(), None, 1e-5, 1)
    tol = {"float32": 1e-5, "float16": 4e-3, "bfloat16": 3e-2}[dtype]
    np.testing.assert_allclose(y.double().cpu().numpy(), ref, rtol=tol, atol=tol * 4)


def test_layer_norm_grad_weight_is_deterministic_and_matches_reference():
    x = RNG.standard_normal((70, 33))
    g = RNG.standard_normal((70, 33))
    w = RNG.standard_normal(33)
    xt, wt, bt = t(x, rg=True), t(w, rg=True), t(np.zeros(33), rg=True)
    F.layer_norm(xt, (33,), wt, bt).backward(t(g))
    xh = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(wt.grad.numpy(), (g * xh).sum(0), rtol=1e-9)
    np.testing.assert_allclose(bt.grad.numpy(), g.sum(0), rtol=1e-9)


# ---- cross entropy -------------------------------------------------------------------

def ref_xent(x, tg, w, ignore, ls, reduction):
    n, c = x.shape
    m = x.max(1, keepdims=True)
    logp = x - (m + np.log(np.exp(x - m).sum(1, keepdims=True)))
    wv = np.ones(c) if w is None else w
    keep = tg != ignore
    safe = np.where(keep, tg, 0)
    nll = -logp[np.arange(n), safe] * wv[safe] * keep
    smooth = -(logp * wv).sum(1) * keep
    loss = (1 - ls) * nll + ls / c * smooth
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / (wv[safe] * keep).sum()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("ls", [0.0, 0.1])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy(device, reduction, ls, weighted):
    n, c = 5, 12
    x = RNG.standard_normal((n, c)) * 4
    tg = RNG.randint(0, c, n)
    tg[2] = -100
    w = RNG.uniform(0.5, 2, c) if weighted else None
    xt = t(x, device, rg=True)
    tt = torch.tensor(tg, device=device)
    wt = t(w, device) if w is not None else None
    loss = F.cross_entropy(xt, tt, weight=wt, reduction=reduction, label_smoothing=ls)
    np.testing.assert_allclose(loss.detach().cpu().numpy(), ref_xent(x, tg, w, -100, ls, reduction),
                               rtol=1e-10, atol=1e-12)
    assert gradcheck(lambda a: F.cross_entropy(a, tt, weight=wt, reduction=reduction,
                                               label_smoothing=ls), [xt])


@pytest.mark.parametrize("device", DEVICES)
def test_cross_entropy_double_backward(device):
    xt = t(RNG.standard_normal((4, 6)), device, rg=True)
    tt = torch.tensor([1, 0, 5, 2], device=device)
    assert gradgradcheck(lambda a: F.cross_entropy(a, tt, label_smoothing=0.2), [xt])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("n", [1000, 16384, 16385, 40000])
def test_cross_entropy_reduction_in_one_kernel_or_by_sum(device, n):
    """Up to 16384 rows the mean and sum are the op's own one-block kernel
    (the CPU's host loop), beyond it the ordinary sum: both against float64,
    with their gradients, ignored rows and class weights included."""
    c = 37
    x = (RNG.standard_normal((n, c)) * 3).astype(np.float32)
    tg = RNG.randint(0, c, n)
    tg[::7] = -100
    w = RNG.uniform(0.5, 2, c).astype(np.float32)
    for reduction in ("mean", "sum"):
        xt = torch.tensor(x, device=device, requires_grad=True)
        loss = F.cross_entropy(xt, torch.tensor(tg, device=device), weight=torch.tensor(w, device=device),
                               reduction=reduction, label_smoothing=0.05)
        want = ref_xent(x.astype(np.float64), tg, w.astype(np.float64), -100, 0.05, reduction)
        assert loss.dtype == torch.float32 and loss.shape == ()
        assert abs(loss.item() - want) <= 1e-5 * abs(want)
        loss.backward()
        x2 = torch.tensor(x, device=device, requires_grad=True)
        rows = F.cross_entropy(x2, torch.tensor(tg, device=device), weight=torch.tensor(w, device=device),
                               reduction="none", label_smoothing=0.05)
        keep = tg != -100
        den = float((w[np.where(keep, tg, 0)] * keep).sum()) if reduction == "mean" else 1.0
        (rows.sum() / den).backward()
        np.testing.assert_allclose(xt.grad.cpu().numpy(), x2.grad.cpu().numpy(), rtol=1e-4, atol=1e-9)
        again = F.cross_entropy(xt.detach(), torch.tensor(tg, device=device),
                                weight=torch.tensor(w, device=device), reduction=reduction, label_smoothing=0.05)
        assert again.item() == loss.item()  # a fixed order: the same bits


@pytest.mark.parametrize("device", DEVICES)
def test_cross_entropy_mean_of_only_ignored_rows(device):
    xt = t(RNG.standard_normal((4, 6)), device, rg=True)
    tt = torch.tensor([-100] * 4, device=device)
    loss = F.cross_entropy(xt, tt)
    assert math.isnan(loss.item())  # 0 / 0, as torch
    assert F.cross_entropy(xt, tt, reduction="sum").item() == 0
    loss.backward()
    assert not xt.grad.cpu().numpy().any()  # every row ignored: no gradient


def test_cross_entropy_out_of_bounds_target_raises_on_cpu():
    with pytest.raises(IndexError):
        F.cross_entropy(torch.zeros(2, 3), torch.tensor([0, 3]))


def test_cross_entropy_float32_matches_float64():
    x = RNG.standard_normal((16, 50)).astype(np.float32)
    tg = RNG.randint(0, 50, 16)
    a = F.cross_entropy(torch.tensor(x), torch.tensor(tg))
    assert a.dtype == torch.float32
    assert abs(a.item() - ref_xent(x.astype(np.float64), tg, None, -100, 0.0, "mean")) < 1e-5


# ---- dropout ---------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_dropout_mask_scale_and_grad(device):
    torch.manual_seed(5)
    x = t(RNG.standard_normal(1001), device, rg=True)
    y = F.dropout(x, 0.3)
    yn, xn = y.detach().cpu().numpy(), x.detach().cpu().numpy()
    kept = yn != 0
    assert 0.6 < kept.mean() < 0.8
    np.testing.assert_allclose(yn[kept], xn[kept] / 0.7, rtol=1e-12)
    g = RNG.standard_normal(1001)
    y.backward(t(g, device))
    np.testing.assert_allclose(x.grad.cpu().numpy(), np.where(kept, g / 0.7, 0), rtol=1e-12)


def test_dropout_same_seed_same_mask_and_advances():
    torch.manual_seed(11)
    a = F.dropout(torch.ones(100), 0.5)
    b = F.dropout(torch.ones(100), 0.5)
    torch.manual_seed(11)
    c = F.dropout(torch.ones(100), 0.5)
    assert a.tolist() == c.tolist() and a.tolist() != b.tolist()


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("n, lead", [(4099, 0), (4096, 0), (4096, 1)])
def test_dropout_cpu_and_cuda_masks_are_bit_identical(dtype, n, lead):
    # 4096 from an aligned start takes the kernel's packed loads; 4099 and a
    # slice that starts one element in take the element-wise path
    dt = getattr(torch, dtype)
    x = torch.tensor(RNG.standard_normal(n + lead)).to(dt)[lead:]
    torch.manual_seed(123)
    a = F.dropout(x, 0.25)
    torch.manual_seed(123)
    b = F.dropout(x.cuda(), 0.25).cpu()
    assert (a == 0).tolist() == (b == 0).tolist()
    assert a.double().tolist() == b.double().tolist()


@pytest.mark.parametrize("device", DEVICES)
def test_unused_side_outputs_reach_the_formula_as_none(device, monkeypatch):
    # layer_norm's mean/rstd and cross_entropy's lse are outputs of the node;
    # zeros for them would cost several passes over the input per backward
    from pycuda_sem.autograd import _formulas
    seen, orig = {}, {}
    for name in ("_layer_norm", "_cross_entropy"):
        fn, save, res, node, mat = orig[name] = _formulas.REGISTRY[name]

        def spy(ctx, g, *rest, fn=fn, name=name):
            seen[name] = [r is None for r in rest]
            return fn(ctx, g, *rest)
        monkeypatch.setitem(_formulas.REGISTRY, name, (spy, save, res, node, mat))
        _C._register_formula(name, spy, save, res, node, mat)
    try:
        x = t(RNG.standard_normal((6, 5)), device, rg=True)
        F.layer_norm(x, (5,)).sum().backward()
        F.cross_entropy(x, torch.tensor([0, 1, 2, 3, 4, 0], device=device)).backward()
    finally:
        for name, entry in orig.items():
            _C._register_formula(name, *entry)
    # cross_entropy's mean: the side outputs lse and the denominator
    assert seen == {"_layer_norm": [True, True], "_cross_entropy": [True, True]}
    assert x.grad is not None and bool(torch.isfinite(x.grad).all())


# ---- gelu's backward --------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_backward_one_op(device, approximate):
    x = RNG.standard_normal(50) * 3
    g = RNG.standard_normal(50)
    got = _C._gelu_backward(t(g, device), t(x, device), approximate).cpu().numpy()
    if approximate == "tanh":
        k = math.sqrt(2 / math.pi)
        th = np.tanh(k * (x + 0.044715 * x ** 3))
        d = 0.5 * (1 + th) + 0.5 * x * (1 - th ** 2) * k * (1 + 3 * 0.044715 * x ** 2)
    else:
        erf = np.vectorize(math.erf)
        d = 0.5 * (1 + erf(x / math.sqrt(2))) + x * np.exp(-x * x / 2) / math.sqrt(2 * math.pi)
    np.testing.assert_allclose(got, g * d, rtol=1e-12, atol=1e-14)
    xt = t(x, device, rg=True)
    assert gradgradcheck(lambda a: F.gelu(a, approximate=approximate), [xt])


# ---- CUDA against the CPU path and torch ------------------------------------------------

@pytest.mark.cuda
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("n", [8, 40, 64, 768, 1024, 2048, 4096, 12000])
def test_layer_norm_cuda_matches_cpu(dtype, n):
    # 8 to 2048 (float32 to 1024): the kernel of a few lanes a row
    dt = getattr(torch, dtype)
    x = torch.tensor(RNG.standard_normal((33, n)).astype(np.float32)).to(dt)
    w = torch.tensor(RNG.standard_normal(n).astype(np.float32)).to(dt)
    b = torch.tensor(RNG.standard_normal(n).astype(np.float32)).to(dt)
    g = torch.tensor(RNG.standard_normal((33, n)).astype(np.float32)).to(dt)
    outs = []
    for dev in ("cpu", "cuda"):
        # leaves on each device (x.to("cpu") is x itself, so detach first)
        xs = x.detach().to(dev).requires_grad_()
        ws, bs = w.detach().to(dev).requires_grad_(), b.detach().to(dev).requires_grad_()
        y = F.layer_norm(xs, (n,), ws, bs)
        y.backward(g.to(dev))
        outs.append([v.float().cpu().numpy() for v in (y, xs.grad, ws.grad, bs.grad)])
    tol = 1e-4 if dtype == "float32" else 3e-2
    for a, b_ in zip(*outs):
        np.testing.assert_allclose(b_, a, rtol=tol, atol=tol * max(1.0, float(np.abs(a).max()) / 10))


@pytest.mark.cuda
@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_fused_against_torch(dtype):
    dt, tdt = getattr(torch, dtype), getattr(_torch, dtype)
    x = RNG.standard_normal((64, 1000)).astype(np.float32)
    w = RNG.standard_normal(1000).astype(np.float32)
    tg = RNG.randint(0, 1000, 64)
    ours_x = torch.tensor(x, device="cuda").to(dt).requires_grad_()
    ref_x = _torch.tensor(x, device="cuda").to(tdt).requires_grad_()
    ours_w = torch.tensor(w, device="cuda").to(dt)
    ref_w = _torch.tensor(w, device="cuda").to(tdt)
    a = F.layer_norm(ours_x, (1000,), ours_w)
    r = _torch.nn.functional.layer_norm(ref_x, (1000,), ref_w)
    tol = 1e-5 if dtype == "float32" else 2e-2
    np.testing.assert_allclose(a.float().detach().cpu().numpy(), r.float().detach().cpu().numpy(),
                               rtol=tol, atol=tol)
    la = F.cross_entropy(ours_x.float(), torch.tensor(tg, device="cuda"), label_smoothing=0.1)
    lr = _torch.nn.functional.cross_entropy(ref_x.float(), _torch.tensor(tg, device="cuda"),
                                            label_smoothing=0.1)
    assert abs(la.item() - lr.item()) < 1e-4
    la.backward()
    lr.backward()
    np.testing.assert_allclose(ours_x.grad.float().cpu().numpy(), ref_x.grad.float().cpu().numpy(),
                               rtol=1e-3, atol=1e-6)
    gx = RNG.standard_normal(500).astype(np.float32)
    for approx in ("none", "tanh"):
        ga = _C._gelu_backward(torch.tensor(gx, device="cuda"), torch.tensor(gx, device="cuda"), approx)
        xr = _torch.tensor(gx, device="cuda", requires_grad=True)
        _torch.nn.functional.gelu(xr, approximate=approx).backward(_torch.tensor(gx, device="cuda"))
        np.testing.assert_allclose(ga.cpu().numpy(), xr.grad.cpu().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_node_is_named_as_torch_names_it(device, reduction):
    """print(loss) shows grad_fn=<NllLossBackward0>, as torch's does."""
    x = t(RNG.standard_normal((6, 5)), device, dtype=torch.float32, rg=True)
    loss = F.cross_entropy(x, torch.tensor([0, 1, 2, 3, 4, 0], device=device), reduction=reduction)
    assert loss.grad_fn.name() == "NllLossBackward0"
    assert "grad_fn=<NllLossBackward0>" in repr(loss)
    (loss if reduction != "none" else loss.sum()).backward()
    a = x.detach().cpu().numpy().astype(np.float64)
    p = np.exp(a - a.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    p[np.arange(6), [0, 1, 2, 3, 4, 0]] -= 1
    np.testing.assert_allclose(x.grad.cpu().numpy(), p / (6 if reduction == "mean" else 1), rtol=1e-4, atol=1e-6)
