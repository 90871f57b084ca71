"""Losses of nn.functional and their modules against NumPy formulas in
float64, for every reduction; gradients against central differences; torch's
argument errors and warnings; CUDA runs against the CPU."""
import math
import warnings

import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import nn
from pycuda_sem.nn import functional as F

try:
    import torch as real_torch
except Exception:  # noqa: BLE001
    real_torch = None

rng = np.random.default_rng(1)


def t64(a, grad=False):
    return torch.tensor(np.asarray(a, dtype=np.float64), dtype=torch.float64, requires_grad=grad)


def fd_grad(fn, a, eps=1e-6):
    num = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        hi, lo = a.copy(), a.copy()
        hi[idx] += eps
        lo[idx] -= eps
        num[idx] = (float(fn(t64(hi))) - float(fn(t64(lo)))) / (2 * eps)
    return num


def check_grad(fn, a, rtol=1e-4, atol=1e-7):
    x = t64(a, True)
    fn(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), fd_grad(fn, a), rtol=rtol, atol=atol)


def reduce(l, reduction):
    return {"none": l, "mean": l.mean(), "sum": l.sum()}[reduction]


REDS = ["none", "mean", "sum"]
X = rng.normal(size=(4, 5))
Y = rng.normal(size=(4, 5))


# ---- regression --------------------------------------------------------------------

@pytest.mark.parametrize("reduction", REDS)
def test_pointwise_losses(reduction):
    d = X - Y
    cases = [
        (F.mse_loss, {}, d ** 2, nn.MSELoss),
        (F.l1_loss, {}, np.abs(d), nn.L1Loss),
        (F.smooth_l1_loss, {"beta": 0.5},
         np.where(np.abs(d) < 0.5, 0.5 * d ** 2 / 0.5, np.abs(d) - 0.25), nn.SmoothL1Loss),
        (F.huber_loss, {"delta": 0.7},
         np.where(np.abs(d) < 0.7, 0.5 * d ** 2, 0.7 * (np.abs(d) - 0.35)), nn.HuberLoss),
    ]
    for fn, kw, ref, mod in cases:
        got = fn(t64(X), t64(Y), reduction=reduction, **kw)
        np.testing.assert_allclose(got.numpy(), reduce(ref, reduction), rtol=1e-12)
        np.testing.assert_allclose(mod(reduction=reduction, **kw)(t64(X), t64(Y)).numpy(),
                                   reduce(ref, reduction), rtol=1e-12)
        check_grad(lambda x: fn(x, t64(Y), reduction="sum", **kw), X)


def test_smooth_l1_with_beta_zero_is_l1_and_errors():
    np.testing.assert_allclose(float(F.smooth_l1_loss(t64(X), t64(Y), beta=0.0)), np.abs(X - Y).mean())
    with pytest.raises(ValueError, match="bogus is not a valid value for reduction"):
        F.mse_loss(t64(X), t64(Y), reduction="bogus")
    with pytest.warns(UserWarning, match="Using a target size"):
        F.mse_loss(t64(X), t64(Y[0]))
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated, please use "
                                         "reduction='sum' instead."):
        r = F.l1_loss(t64(X), t64(Y), size_average=False)
    np.testing.assert_allclose(float(r), np.abs(X - Y).sum())


# ---- classification ----------------------------------------------------------------

def np_log_softmax(a, axis=1):
    m = a.max(axis, keepdims=True)
    return a - m - np.log(np.exp(a - m).sum(axis, keepdims=True))


def np_nll(logp, target, weight=None, ignore_index=-100, reduction="mean"):
    """Class dim 1; target (N, ...)."""
    C = logp.shape[1]
    w = np.ones(C) if weight is None else weight
    keep = target != ignore_index
    safe = np.where(keep, target, 0)
    picked = np.take_along_axis(logp, safe[:, None], 1)[:, 0]
    ww = w[safe] * keep
    loss = -picked * ww
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / ww.sum()


@pytest.mark.parametrize("reduction", REDS)
def test_nll_and_cross_entropy_with_class_indices(reduction):
    logits = rng.normal(size=(6, 4))
    target = np.array([0, 3, 1, 1, 2, 3])
    w = rng.uniform(0.5, 2, size=4)
    logp = np_log_softmax(logits)
    tt = torch.from_numpy(target)
    for kw in ({}, {"weight": w}, {"ignore_index": 1}, {"weight": w, "ignore_index": 3}):
        targ = {k: (t64(v) if k == "weight" else v) for k, v in kw.items()}
        ref = np_nll(logp, target, reduction=reduction, **kw)
        np.testing.assert_allclose(F.cross_entropy(t64(logits), tt, reduction=reduction, **targ).numpy(),
                                   ref, rtol=1e-12)
        np.testing.assert_allclose(F.nll_loss(t64(logp), tt, reduction=reduction, **targ).numpy(), ref,
                                   rtol=1e-12)
        np.testing.assert_allclose(nn.CrossEntropyLoss(reduction=reduction, **targ)(t64(logits), tt).numpy(),
                                   ref, rtol=1e-12)
        np.testing.assert_allclose(nn.NLLLoss(reduction=reduction, **targ)(t64(logp), tt).numpy(), ref,
                                   rtol=1e-12)
    check_grad(lambda x: F.cross_entropy(x, tt, weight=t64(w), ignore_index=1), logits)


def test_cross_entropy_spatial_and_unbatched():
    logits = rng.normal(size=(2, 3, 4, 5))
    target = rng.integers(0, 3, size=(2, 4, 5))
    logp = np_log_softmax(logits)
    ref = -np.take_along_axis(logp, target[:, None], 1)[:, 0]
    np.testing.assert_allclose(F.cross_entropy(t64(logits), torch.from_numpy(target), reduction="none").numpy(),
                               ref, rtol=1e-12)
    v = rng.normal(size=5)
    np.testing.assert_allclose(float(F.cross_entropy(t64(v), torch.tensor(2))),
                               -np_log_softmax(v[None])[0, 2], rtol=1e-12)


@pytest.mark.parametrize("reduction", REDS)
def test_cross_entropy_label_smoothing(reduction):
    logits = rng.normal(size=(5, 4))
    target = np.array([0, 1, 2, 3, 1])
    w = rng.uniform(0.5, 2, size=4)
    eps = 0.2
    logp = np_log_softmax(logits)
    for weight, ignore in ((None, -100), (w, -100), (None, 1), (w, 2)):
        wv = np.ones(4) if weight is None else weight
        keep = target != ignore
        smooth = -(logp * wv).sum(1) * keep
        nll = np_nll(logp, target, weight, ignore, reduction)
        if reduction == "mean":
            smooth = smooth.sum() / (wv[np.where(keep, target, 0)] * keep).sum() if weight is not None \
                else smooth.sum() / keep.sum()
        elif reduction == "sum":
            smooth = smooth.sum()
        ref = (1 - eps) * nll + eps / 4 * smooth
        got = F.cross_entropy(t64(logits), torch.from_numpy(target), reduction=reduction,
                              weight=None if weight is None else t64(weight), ignore_index=ignore,
                              label_smoothing=eps)
        np.testing.assert_allclose(got.numpy(), ref, rtol=1e-12)


@pytest.mark.parametrize("reduction", REDS)
def test_cross_entropy_with_probabilities(reduction):
    logits = rng.normal(size=(3, 4))
    p = rng.uniform(size=(3, 4))
    p /= p.sum(1, keepdims=True)
    w = rng.uniform(0.5, 2, size=4)
    logp = np_log_softmax(logits)
    for weight, eps in ((None, 0.0), (w, 0.0), (w, 0.3)):
        q = p * (1 - eps) + eps / 4
        per = -(logp * q * (1 if weight is None else weight)).sum(1)
        ref = reduce(per, reduction)
        got = F.cross_entropy(t64(logits), t64(p), reduction=reduction, label_smoothing=eps,
                              weight=None if weight is None else t64(weight))
        np.testing.assert_allclose(got.numpy(), ref, rtol=1e-12)
    check_grad(lambda x: F.cross_entropy(x, t64(p)), logits)


def test_classification_errors():
    x = t64(rng.normal(size=(3, 4)))
    with pytest.raises(ValueError, match=r"Expected input batch_size \(3\) to match target batch_size \(2\)."):
        F.cross_entropy(x, torch.tensor([0, 1]))
    with pytest.raises(IndexError, match="Target 7 is out of bounds."):
        F.nll_loss(x, torch.tensor([0, 7, 1]))
    with pytest.raises(RuntimeError, match="expected scalar type Long but found Float"):
        F.nll_loss(x, torch.tensor([0.0, 1.0, 1.0]))
    with pytest.raises(RuntimeError, match="weight tensor should be defined either for all 4 classes"):
        F.nll_loss(x, torch.tensor([0, 1, 1]), weight=t64([1.0, 2.0]))
    # every target ignored: mean is 0/0, NaN as in torch
    assert math.isnan(float(F.cross_entropy(x, torch.tensor([-100, -100, -100]))))


# ---- binary ------------------------------------------------------------------------

@pytest.mark.parametrize("reduction", REDS)
def test_binary_cross_entropy(reduction):
    p = rng.uniform(0.05, 0.95, size=(4, 3))
    y = rng.uniform(size=(4, 3))
    w = rng.uniform(0.5, 2, size=3)
    per = -(y * np.log(p) + (1 - y) * np.log(1 - p))
    np.testing.assert_allclose(F.binary_cross_entropy(t64(p), t64(y), reduction=reduction).numpy(),
                               reduce(per, reduction), rtol=1e-12)
    np.testing.assert_allclose(nn.BCELoss(weight=t64(w), reduction=reduction)(t64(p), t64(y)).numpy(),
                               reduce(per * w, reduction), rtol=1e-12)
    check_grad(lambda x: F.binary_cross_entropy(x, t64(y)), p)
    # log clamped at -100: a certain wrong answer costs 100, not inf
    assert float(F.binary_cross_entropy(t64([0.0]), t64([1.0]))) == 100.0
    with pytest.raises(ValueError, match="Using a target size"):
        F.binary_cross_entropy(t64(p), t64(y[0]))
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(t64([1.5]), t64([1.0]))


@pytest.mark.parametrize("reduction", REDS)
def test_bce_with_logits(reduction):
    x = rng.normal(size=(4, 3)) * 3
    y = rng.uniform(size=(4, 3))
    pw = rng.uniform(0.5, 3, size=3)
    w = rng.uniform(0.5, 2, size=(4, 1))
    s = 1 / (1 + np.exp(-x))
    per = -(pw * y * np.log(s) + (1 - y) * np.log(1 - s)) * w
    got = F.binary_cross_entropy_with_logits(t64(x), t64(y), weight=t64(w), pos_weight=t64(pw),
                                             reduction=reduction)
    np.testing.assert_allclose(got.numpy(), reduce(per, reduction), rtol=1e-10)
    m = nn.BCEWithLogitsLoss(pos_weight=t64(pw), reduction=reduction)
    assert list(m.state_dict()) == ["pos_weight"]  # weight=None is a buffer slot, not saved
    per = -(pw * y * np.log(s) + (1 - y) * np.log(1 - s))
    np.testing.assert_allclose(m(t64(x), t64(y)).numpy(), reduce(per, reduction), rtol=1e-10)
    check_grad(lambda a: F.binary_cross_entropy_with_logits(a, t64(y), pos_weight=t64(pw)), x)
    big = t64([1000.0, -1000.0], True)
    loss = F.binary_cross_entropy_with_logits(big, t64([0.0, 1.0]), reduction="sum")
    loss.backward()
    assert float(loss) == 2000.0 and big.grad.tolist() == [1.0, -1.0]
    with pytest.raises(ValueError, match=r"Target size \(.*\) must be the same as input size"):
        F.binary_cross_entropy_with_logits(t64(x), t64(y[0]))


def test_kl_div():
    logq = np_log_softmax(rng.normal(size=(3, 4)))
    p = rng.uniform(size=(3, 4))
    p[0, 0] = 0.0
    p /= p.sum(1, keepdims=True)
    plogp = np.where(p > 0, p * np.log(np.where(p > 0, p, 1)), 0.0)
    per = plogp - p * logq
    np.testing.assert_allclose(F.kl_div(t64(logq), t64(p), reduction="none").numpy(), per, rtol=1e-12)
    np.testing.assert_allclose(float(F.kl_div(t64(logq), t64(p), reduction="batchmean")), per.sum() / 3)
    np.testing.assert_allclose(float(F.kl_div(t64(logq), t64(p), reduction="sum")), per.sum())
    with pytest.warns(UserWarning, match="reduction: 'mean' divides the total loss"):
        np.testing.assert_allclose(float(F.kl_div(t64(logq), t64(p))), per.mean())
    logp = np.log(np.where(p > 0, p, 1e-3))
    per = np.exp(logp) * (logp - logq)
    m = nn.KLDivLoss(reduction="batchmean", log_target=True)
    np.testing.assert_allclose(float(m(t64(logq), t64(logp))), per.sum() / 3, rtol=1e-12)
    check_grad(lambda x: F.kl_div(x, t64(p), reduction="batchmean"), logq)
    # no NaN from the zero target entry, in either gradient
    pt = t64(p, True)
    F.kl_div(t64(logq), pt, reduction="sum").backward()
    assert np.isfinite(pt.grad.numpy()).all()


def test_loss_module_reprs_and_buffers():
    assert repr(nn.CrossEntropyLoss()) == "CrossEntropyLoss()"
    assert repr(nn.MSELoss(reduction="sum")) == "MSELoss()"
    m = nn.CrossEntropyLoss(weight=torch.ones(3), label_smoothing=0.1)
    assert list(m.state_dict()) == ["weight"] and m.label_smoothing == 0.1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert nn.MSELoss(size_average=False).reduction == "sum"
        assert nn.MSELoss(reduce=False).reduction == "none"


@pytest.mark.skipif(real_torch is None, reason="torch is not importable")
def test_losses_match_torch():
    x, y = rng.normal(size=(5, 4)), rng.integers(0, 4, size=5)
    tx, ty = real_torch.from_numpy(x), real_torch.from_numpy(y)
    for kw in ({}, {"label_smoothing": 0.1}, {"ignore_index": 2}):
        np.testing.assert_allclose(float(F.cross_entropy(t64(x), torch.from_numpy(y), **kw)),
                                   float(real_torch.nn.functional.cross_entropy(tx, ty, **kw)), rtol=1e-12)
    p = rng.uniform(size=(5, 4))
    np.testing.assert_allclose(
        float(F.binary_cross_entropy_with_logits(t64(x), t64(p), pos_weight=t64(np.ones(4) * 2))),
        float(real_torch.nn.functional.binary_cross_entropy_with_logits(
            tx, real_torch.from_numpy(p), pos_weight=real_torch.ones(4, dtype=real_torch.float64) * 2)),
        rtol=1e-12)


@pytest.mark.cuda
def test_losses_on_cuda_match_cpu():
    x = torch.randn(8, 5)
    t = torch.randint(0, 5, (8,))
    p = torch.rand(8, 5)
    cases = [lambda a, b, c: F.cross_entropy(a, b, label_smoothing=0.1, ignore_index=2),
             lambda a, b, c: F.nll_loss(a.log_softmax(1), b),
             lambda a, b, c: F.cross_entropy(a, c.softmax(1)),
             lambda a, b, c: F.mse_loss(a, c), lambda a, b, c: F.smooth_l1_loss(a, c),
             lambda a, b, c: F.binary_cross_entropy_with_logits(a, c),
             lambda a, b, c: F.binary_cross_entropy(a.sigmoid(), c),
             lambda a, b, c: F.kl_div(a.log_softmax(1), c.softmax(1), reduction="batchmean")]
    for fn in cases:
        xc = x.cuda().requires_grad_()
        xh = x.clone().requires_grad_()
        lc, lh = fn(xc, t.cuda(), p.cuda()), fn(xh, t, p)
        lc.backward()
        lh.backward()
        np.testing.assert_allclose(float(lc.cpu()), float(lh), rtol=1e-5)
        np.testing.assert_allclose(xc.grad.cpu().numpy(), xh.grad.numpy(), rtol=1e-4, atol=1e-6)


@pytest.mark.cuda
@pytest.mark.parametrize("C", [1, 3, 16, 64, 300, 4096, 5000])
def test_cross_entropy_cuda_every_row_width(C):
    # every lane layout of the CUDA kernels: a few lanes a row (C <= 256), a
    # warp a row (up to 4096 classes) and a block a row; with weights, label
    # smoothing and ignored rows, forward and backward against the CPU path
    rows = 37
    g = np.random.default_rng(C)
    x = torch.tensor(g.standard_normal((rows, C)).astype(np.float32) * 3)
    t = torch.tensor(g.integers(0, C, rows))
    t[5] = -100
    w = torch.tensor(g.random(C).astype(np.float32) + 0.5)
    for kw in ({}, {"weight": w, "label_smoothing": 0.2}):
        xc = x.cuda().requires_grad_()
        xh = x.clone().requires_grad_()
        kc = {k: (v.cuda() if hasattr(v, "cuda") else v) for k, v in kw.items()}
        lc, lh = F.cross_entropy(xc, t.cuda(), **kc), F.cross_entropy(xh, t, **kw)
        lc.backward()
        lh.backward()
        np.testing.assert_allclose(float(lc.cpu()), float(lh), rtol=2e-5, atol=1e-6)
        np.testing.assert_allclose(xc.grad.cpu().numpy(), xh.grad.numpy(), rtol=1e-4, atol=1e-6)
        per = F.cross_entropy(xc.detach(), t.cuda(), reduction="none", **kc)
        np.testing.assert_allclose(per.cpu().numpy(), F.cross_entropy(x, t, reduction="none", **kw).numpy(),
                                   rtol=2e-5, atol=1e-6)



@pytest.mark.cuda
@pytest.mark.parametrize("C", [3, 7, 1001, 50257])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_cross_entropy_cuda_rows_off_16_byte_boundaries(C, dtype):
    # C not a whole number of 16-byte packs, and a contiguous view that
    # starts one element in: the kernels read each row as scalar ends around
    # whole packs. Forward and backward (weights, label smoothing, an
    # ignored row) against the float64 CPU path on the same stored values
    rows = 13
    g = np.random.default_rng(C)
    a = (g.standard_normal(rows * C + 1) * 3).astype(np.float32)
    t = torch.tensor(g.integers(0, C, rows))
    t[4] = -100
    w = torch.tensor(g.random(C).astype(np.float32) + 0.5)
    dt = getattr(torch, dtype)
    base = torch.tensor(a).to(dt).cuda()
    rtol = {"float16": 4e-3, "bfloat16": 2e-2, "float32": 1e-4, "float64": 1e-10}[dtype]
    for x in (base[:-1].view(rows, C), base[1:].view(rows, C)):
        for kw in ({}, {"weight": w, "label_smoothing": 0.1}):
            xc = x.clone().requires_grad_()
            xh = x.double().cpu().requires_grad_()
            kc = {k: (v.cuda() if hasattr(v, "cuda") else v) for k, v in kw.items()}
            kh = {k: (v.double() if hasattr(v, "double") else v) for k, v in kw.items()}
            lc = F.cross_entropy(xc, t.cuda(), reduction="sum", **kc)
            lh = F.cross_entropy(xh, t, reduction="sum", **kh)
            lc.backward()
            lh.backward()
            np.testing.assert_allclose(float(lc.double().cpu()), float(lh), rtol=rtol)
            gh = xh.grad.numpy()
            np.testing.assert_allclose(xc.grad.double().cpu().numpy(), gh, rtol=rtol,
                                       atol=rtol * np.abs(gh).max())
            assert (xc.grad[4] == 0).all()


@pytest.mark.cuda
@pytest.mark.parametrize("C", [5, 1003, 8192])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_cross_entropy_cuda_inf_and_nan_logits(C, dtype):
    # A +inf or NaN logit makes its row's loss NaN (log_softmax of the row is
    # NaN, as in torch), wherever the kernel meets it: a scalar end of a row
    # off a 16-byte boundary, or inside a pack; the other rows stay equal to
    # the CPU result on the same stored values
    rows = 8
    g = np.random.default_rng(C + 11)
    a = (g.standard_normal((rows, C + 1)) * 3).astype(np.float32)
    bad = {0: (0, np.inf), 1: (C - 1, np.inf), 2: (C // 2, np.inf), 5: (C // 3, np.nan), 6: (C - 1, np.nan)}
    t = g.integers(0, C, rows)
    dt = getattr(torch, dtype)
    for shift in (0, 1):
        b = a.copy()
        for r, (c, v) in bad.items():
            b[r, c + shift] = v
        x = torch.tensor(b).to(dt).cuda()[:, shift:shift + C]
        got = F.cross_entropy(x, torch.tensor(t).cuda(), reduction="none").float().cpu().numpy()
        want = F.cross_entropy(x.cpu().double(), torch.tensor(t), reduction="none").numpy()
        for r in range(rows):
            if r in bad:
                assert np.isnan(got[r]), (r, got[r])
            else:
                np.testing.assert_allclose(got[r], want[r], rtol=1e-5 if dtype == "float32" else 2e-3, atol=1e-5)


@pytest.mark.cuda
@pytest.mark.parametrize("C", [5, 64, 1000, 1003, 8192])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_cross_entropy_cuda_masked_logits(C, dtype):
    # -inf logits (a masked vocabulary) ahead of the finite ones in a row, and
    # rows offset by one element (no 16-byte packs): the loss stays finite,
    # per row against a float64 NumPy reference (log-sum-exp over the finite
    # logits); a row that is all -inf gives NaN as in torch
    rows = 19
    g = np.random.default_rng(C + 7)
    a = (g.standard_normal((rows, C + 1)) * 3).astype(np.float32)
    a[:, : (C + 1) // 2] = -np.inf
    a[3, :] = -np.inf
    t = g.integers((C + 1) // 2, C, rows)
    dt = getattr(torch, dtype)
    for x_np, x in ((a[:, :C], torch.tensor(a[:, :C].copy()).to(dt).cuda()),
                    (a[:, 1:], torch.tensor(a).to(dt).cuda()[:, 1:])):
        xs = x.float().cpu().numpy().astype(np.float64)
        m = xs.max(axis=1, keepdims=True)
        with np.errstate(invalid="ignore"):
            want = (m[:, 0] + np.log(np.exp(xs - m).sum(axis=1))) - xs[np.arange(rows), t]
        got = F.cross_entropy(x, torch.tensor(t).cuda(), reduction="none").float().cpu().numpy()
        assert np.isnan(got[3]) and np.isnan(want[3])
        keep = np.arange(rows) != 3
        np.testing.assert_allclose(got[keep], want[keep], rtol=1e-5 if dtype == "float32" else 2e-3, atol=1e-5)