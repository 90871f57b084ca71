"""The margin, embedding, triplet, soft-margin, Poisson/Gaussian NLL and
multi-label/multi-class margin losses: values against NumPy from torch's
formulas in float64 for every reduction, a gradient, errors; torch's
modules on the same inputs where torch imports; CUDA against CPU."""
import math

import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import nn
from pycuda_sem.nn import functional as F

try:
    import torch as real_torch
except Exception:  # noqa: BLE001 - any import failure means no oracle
    real_torch = None

rng = np.random.default_rng(12)
X1, X2, X3 = (rng.normal(size=(6, 4)) for _ in range(3))
SIGN = np.where(rng.random(6) > 0.5, 1.0, -1.0)
SIGN4 = np.where(rng.random((6, 4)) > 0.5, 1.0, -1.0)
CLS = rng.integers(0, 4, size=6)
MULTI = (rng.random((6, 4)) > 0.5).astype(np.float64)
COUNTS = rng.poisson(3.0, size=(6, 4)).astype(np.float64)
VAR = rng.random((6, 4)) + 0.1


def t(a):
    return torch.tensor(a)


def cos_rows(a, b):
    return (a * b).sum(1) / np.sqrt(((a * a).sum(1) + 1e-12) * ((b * b).sum(1) + 1e-12))


def dist(a, b, p=2.0, eps=1e-6):
    return (np.abs(a - b + eps) ** p).sum(-1) ** (1 / p)


def stirling(y):
    s = np.maximum(y, 1)
    return np.where(y > 1, s * np.log(s) - s + 0.5 * np.log(2 * np.pi * s), 0)


def multi_margin(x, y, p=1, margin=1.0):
    z = np.maximum(0, margin - x[np.arange(len(y)), y][:, None] + x) ** p
    z[np.arange(len(y)), y] = 0
    return z.sum(1) / x.shape[1]


def logsig(v):
    return -np.log1p(np.exp(-v))


CASES = [
    ("margin_ranking", lambda r: F.margin_ranking_loss(t(X1[:, 0]), t(X2[:, 0]), t(SIGN), 0.3,
                                                       reduction=r),
     np.maximum(0, -SIGN * (X1[:, 0] - X2[:, 0]) + 0.3)),
    ("hinge_embedding", lambda r: F.hinge_embedding_loss(t(X1), t(SIGN4), 0.5, reduction=r),
     np.where(SIGN4 == 1, X1, np.maximum(0, 0.5 - X1))),
    ("soft_margin", lambda r: F.soft_margin_loss(t(X1), t(SIGN4), reduction=r),
     np.log1p(np.exp(-SIGN4 * X1))),
    ("cosine_embedding", lambda r: F.cosine_embedding_loss(t(X1), t(X2), t(SIGN), 0.1,
                                                           reduction=r),
     np.where(SIGN == 1, 1 - cos_rows(X1, X2), np.maximum(0, cos_rows(X1, X2) - 0.1))),
    ("triplet", lambda r: F.triplet_margin_loss(t(X1), t(X2), t(X3), 1.5, reduction=r),
     np.maximum(0, 1.5 + dist(X1, X2) - dist(X1, X3))),
    ("triplet_swap_p1", lambda r: F.triplet_margin_loss(t(X1), t(X2), t(X3), 1.0, p=1,
                                                        swap=True, reduction=r),
     np.maximum(0, 1.0 + dist(X1, X2, 1) - np.minimum(dist(X1, X3, 1), dist(X2, X3, 1)))),
    ("poisson_log", lambda r: F.poisson_nll_loss(t(X1), t(COUNTS), reduction=r),
     np.exp(X1) - COUNTS * X1),
    ("poisson_full", lambda r: F.poisson_nll_loss(t(VAR), t(COUNTS), log_input=False,
                                                  full=True, reduction=r),
     VAR - COUNTS * np.log(VAR + 1e-8) + stirling(COUNTS)),
    ("gaussian", lambda r: F.gaussian_nll_loss(t(X1), t(X2), t(VAR), full=True, reduction=r),
     0.5 * (np.log(VAR) + (X1 - X2) ** 2 / VAR) + 0.5 * math.log(2 * math.pi)),
    ("multilabel_soft", lambda r: F.multilabel_soft_margin_loss(t(X1), t(MULTI), reduction=r),
     -(MULTI * logsig(X1) + (1 - MULTI) * logsig(-X1)).mean(1)),
    ("multi_margin", lambda r: F.multi_margin_loss(t(X1), t(CLS), reduction=r),
     multi_margin(X1, CLS)),
    ("multi_margin_p2", lambda r: F.multi_margin_loss(t(X1), t(CLS), p=2, margin=0.5,
                                                      reduction=r),
     multi_margin(X1, CLS, 2, 0.5)),
]


@pytest.mark.parametrize("name,fn,want", CASES, ids=[c[0] for c in CASES])
def test_against_numpy(name, fn, want):
    np.testing.assert_allclose(fn("none").numpy(), want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(float(fn("mean")), want.mean(), rtol=1e-10)
    np.testing.assert_allclose(float(fn("sum")), want.sum(), rtol=1e-10)


def test_gradient_and_errors():
    x = torch.tensor(X1, requires_grad=True)
    F.multi_margin_loss(x, t(CLS)).backward()
    g = x.grad.numpy()
    eps, num = 1e-6, np.zeros_like(X1)
    for idx in np.ndindex(X1.shape):
        hi, lo = X1.copy(), X1.copy()
        hi[idx] += eps
        lo[idx] -= eps
        num[idx] = (multi_margin(hi, CLS).mean() - multi_margin(lo, CLS).mean()) / (2 * eps)
    np.testing.assert_allclose(g, num, rtol=1e-5, atol=1e-8)
    with pytest.raises(ValueError, match="var has negative"):
        F.gaussian_nll_loss(t(X1), t(X2), t(-VAR))
    with pytest.raises(ValueError, match="var is of incorrect size"):
        F.gaussian_nll_loss(t(X1), t(X2), t(VAR[:, :2]))
    with pytest.raises(ValueError, match="expected margin to be greater than 0"):
        nn.TripletMarginLoss(margin=0.0)
    with pytest.raises(ValueError, match="only p == 1 and p == 2"):
        nn.MultiMarginLoss(p=3)
    assert repr(nn.CosineEmbeddingLoss()) == "CosineEmbeddingLoss()"


@pytest.mark.skipif(real_torch is None, reason="torch is not importable")
def test_match_torch():
    rt, tt = real_torch.nn, real_torch.from_numpy
    pairs = [
        (nn.MarginRankingLoss(0.2), rt.MarginRankingLoss(0.2), (X1[:, 0], X2[:, 0], SIGN)),
        (nn.HingeEmbeddingLoss(0.7), rt.HingeEmbeddingLoss(0.7), (X1, SIGN4)),
        (nn.SoftMarginLoss(), rt.SoftMarginLoss(), (X1, SIGN4)),
        (nn.CosineEmbeddingLoss(0.2), rt.CosineEmbeddingLoss(0.2), (X1, X2, SIGN)),
        (nn.TripletMarginLoss(swap=True), rt.TripletMarginLoss(swap=True), (X1, X2, X3)),
        (nn.PoissonNLLLoss(full=True), rt.PoissonNLLLoss(full=True), (X1, COUNTS)),
        (nn.GaussianNLLLoss(), rt.GaussianNLLLoss(), (X1, X2, VAR)),
        (nn.MultiLabelSoftMarginLoss(), rt.MultiLabelSoftMarginLoss(), (X1, MULTI)),
    ]
    for ours, theirs, args in pairs:
        got = float(ours(*[t(a) for a in args]))
        want = float(theirs(*[tt(np.ascontiguousarray(a)) for a in args]))
        assert got == pytest.approx(want, rel=1e-10), type(ours).__name__
    got = float(nn.MultiMarginLoss(p=2)(t(X1), t(CLS)))
    want = float(rt.MultiMarginLoss(p=2)(tt(X1), tt(CLS)))
    assert got == pytest.approx(want, rel=1e-10)


@pytest.mark.cuda
def test_cuda_matches_cpu():
    for name, fn, _ in CASES[:4]:
        assert np.isfinite(float(fn("mean"))), name
    x, y = torch.randn(8, 5), torch.randint(0, 5, (8,))
    np.testing.assert_allclose(float(F.multi_margin_loss(x.cuda(), y.cuda())),
                               float(F.multi_margin_loss(x, y)), rtol=1e-5)
    a, b, c = torch.randn(8, 5), torch.randn(8, 5), torch.randn(8, 5)
    np.testing.assert_allclose(float(F.triplet_margin_loss(a.cuda(), b.cuda(), c.cuda())),
                               float(F.triplet_margin_loss(a, b, c)), rtol=1e-5)
