"""pycuda_sem.distributions, the multivariate families added last:
LogisticNormal, LKJCholesky, Wishart and OneHotCategoricalStraightThrough,
against float64 closed forms written from their definitions
(tests/dist_refs_extra.py: the stick-breaking Jacobian, the LKJ normaliser of
Lewandowski et al., the Wishart density/entropy/KL) and torch where it imports;
their sample statistics (1e5 draws, 5 standard errors), rsample gradients,
expand and argument errors."""
import math
import warnings

import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import distributions as D

from dist_refs_extra import lkj_cholesky_log_prob, lkj_log_normalizer, wishart, wishart_kl
from torch_oracle import _torch as real_torch  # torch where it imports, else None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
pytestmark = pytest.mark.usefixtures("no_tf32")


def npy(t):
    return t.detach().cpu().double().numpy()


def T(a, device="cpu", dtype=None):
    return torch.tensor(np.asarray(a, dtype=np.float64), dtype=dtype or torch.float64, device=device)


_rng = np.random.default_rng(83)
LOC = _rng.standard_normal((2, 3))
SCALE = _rng.random((2, 3)) + 0.5


def _logistic_normal_ref(y, loc, scale):
    """log density of y (on the K-simplex): the Normal density of the
    stick-breaking preimage x minus log|det dy/dx|, written from the map:
    z_i = y_i / (stick before i), x_i = logit(z_i) + log(K - 1 - i), and the
    triangular Jacobian's diagonal z_i (1 - z_i) (stick before i)."""
    k1 = y.shape[-1] - 1
    before = 1 - np.concatenate([np.zeros(y.shape[:-1] + (1,)), np.cumsum(y[..., :-1], -1)[..., :-1]], -1)
    z = y[..., :-1] / before
    x = np.log(z / (1 - z)) + np.log(np.arange(k1, 0, -1))
    normal = (-0.5 * ((x - loc) / scale) ** 2 - np.log(scale) - 0.5 * np.log(2 * np.pi)).sum(-1)
    return normal - (np.log(z) + np.log1p(-z) + np.log(before)).sum(-1), x


@pytest.mark.parametrize("device", DEVICES)
def test_logistic_normal(device):
    d = D.LogisticNormal(T(LOC, device), T(SCALE, device))
    assert d.batch_shape == (2,) and d.event_shape == (4,) and d.has_rsample
    y = _rng.dirichlet(np.ones(4) * 2, size=(5, 2))
    want, _ = _logistic_normal_ref(y, LOC, SCALE)
    np.testing.assert_allclose(npy(d.log_prob(T(y, device))), want, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(npy(d.loc), LOC) and np.testing.assert_allclose(npy(d.scale), SCALE)
    n = 100000
    torch.manual_seed(11)
    s = d.sample((n,))
    assert tuple(s.shape) == (n, 2, 4)
    s = npy(s)
    np.testing.assert_allclose(s.sum(-1), 1.0, rtol=1e-12)
    assert np.all(s > 0)
    # the preimages of the draws are Normal(loc, scale): their means within 5 standard errors
    _, x = _logistic_normal_ref(s, LOC, SCALE)
    assert np.all(np.abs(x.mean(0) - LOC) < 5 * SCALE / math.sqrt(n))
    assert np.all(np.abs(x.std(0) - SCALE) < 5 * SCALE / math.sqrt(2 * n))
    one = D.LogisticNormal(T(0.3, device), T(1.2, device))  # a scalar base becomes a 1-vector
    assert one.batch_shape == () and one.event_shape == (2,)
    e = d.expand((3, 2))
    assert e.batch_shape == (3, 2) and e.sample().shape == (3, 2, 4)
    np.testing.assert_allclose(npy(e.log_prob(T(y[0], device))), np.broadcast_to(want[0], (3, 2)), rtol=1e-12)
    if real_torch is not None:
        r = real_torch.distributions.LogisticNormal(real_torch.tensor(LOC), real_torch.tensor(SCALE))
        np.testing.assert_allclose(npy(d.log_prob(T(y, device))), r.log_prob(real_torch.tensor(y)).numpy(),
                                   rtol=1e-10)
        assert repr(d.support) == repr(r.support) and d.has_rsample == r.has_rsample
        assert r.event_shape == d.event_shape and r.batch_shape == d.batch_shape


def test_logistic_normal_rsample_gradient():
    # the draw is a fixed map of loc + scale * eps: autograd against a central difference at one seed
    loc = T(LOC[0]).requires_grad_(True)
    scale = T(SCALE[0])
    w = T([0.3, -1.0, 0.5, 2.0])
    torch.manual_seed(4)
    y = D.LogisticNormal(loc, scale).rsample((3,))
    (g,) = torch.autograd.grad((y * w).sum(), loc)
    h = 1e-6
    for i in range(3):
        e = np.zeros(3)
        e[i] = h
        vals = []
        for sgn in (1, -1):
            torch.manual_seed(4)
            vals.append(npy((D.LogisticNormal(T(LOC[0] + sgn * e), scale).rsample((3,)) * w).sum()))
        assert npy(g)[i] == pytest.approx((vals[0] - vals[1]) / (2 * h), rel=1e-6, abs=1e-8)
    with pytest.raises(ValueError, match="scale"):
        D.LogisticNormal(T([0.0, 1.0]), T([1.0, -1.0]))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dim", [2, 3, 4])
def test_lkj_cholesky(dim, device):
    eta = np.array([0.5, 1.0, 3.0])
    d = D.LKJCholesky(dim, T(eta, device))
    assert d.batch_shape == (3,) and d.event_shape == (dim, dim) and not d.has_rsample
    n = 100000
    torch.manual_seed(21 + dim)
    L = d.sample((n,))
    assert tuple(L.shape) == (n, 3, dim, dim)
    assert bool(D.constraints.corr_cholesky.check(L).all())
    Ln = npy(L)
    np.testing.assert_allclose(npy(d.log_prob(L[:7])), np.stack([lkj_cholesky_log_prob(Ln[:7, b], eta[b])
                                                                   for b in range(3)], -1), rtol=1e-9, atol=1e-10)
    # off-diagonal correlations: (r + 1) / 2 ~ Beta(b, b), b = eta - 1 + dim / 2, so
    # E r = 0, E r^2 = 1 / (2b + 1), E r^4 = 3 / ((2b + 1)(2b + 3))
    R = Ln @ np.swapaxes(Ln, -1, -2)
    np.testing.assert_allclose(np.diagonal(R, axis1=-2, axis2=-1), 1.0, rtol=1e-6)
    b = eta - 1 + dim / 2
    m2, m4 = 1 / (2 * b + 1), 3 / ((2 * b + 1) * (2 * b + 3))
    for i, j in [(1, 0), (dim - 1, 0), (dim - 1, dim - 2)]:
        r = R[:, :, i, j]
        assert np.all(np.abs(r.mean(0)) < 5 * np.sqrt(m2 / n)), (i, j, r.mean(0))
        assert np.all(np.abs((r ** 2).mean(0) - m2) < 5 * np.sqrt((m4 - m2 ** 2) / n)), (i, j)
    # a joint moment: E det(R)^k = c_d(eta + k) / c_d(eta), c_d the LKJ normaliser
    det = np.prod(np.diagonal(Ln, axis1=-2, axis2=-1) ** 2, -1)
    m1 = np.exp([lkj_log_normalizer(dim, e + 1) - lkj_log_normalizer(dim, e) for e in eta])
    m2 = np.exp([lkj_log_normalizer(dim, e + 2) - lkj_log_normalizer(dim, e) for e in eta])
    assert np.all(np.abs(det.mean(0) - m1) < 5 * np.sqrt((m2 - m1 ** 2) / n)), (det.mean(0), m1)
    if real_torch is not None:
        rt = real_torch.distributions.LKJCholesky(dim, real_torch.tensor(eta))
        np.testing.assert_allclose(npy(d.log_prob(L[:7])), rt.log_prob(real_torch.tensor(Ln[:7])).numpy(),
                                   rtol=1e-9, atol=1e-10)
        assert repr(d.support) == repr(rt.support) and d.has_rsample == rt.has_rsample


def test_lkj_cholesky_normalisation_and_errors():
    # dim 2: L = [[1, 0], [r, sqrt(1 - r^2)]], the density over r integrates to 1
    r = np.linspace(-1, 1, 20001)[1:-1]
    L = np.zeros((r.size, 2, 2))
    L[:, 0, 0], L[:, 1, 0], L[:, 1, 1] = 1, r, np.sqrt(1 - r * r)
    for eta in (1.0, 2.5, 6.0):  # (the grid leaves out 1e-4 at the ends, where eta = 1 has density 1/2)
        p = np.exp(npy(D.LKJCholesky(2, T(eta)).log_prob(T(L))))
        assert np.trapezoid(p, r) == pytest.approx(1.0, abs=2e-4)
    with pytest.raises(ValueError, match="Expected dim to be an integer greater than or equal to 2"):
        D.LKJCholesky(1)
    with pytest.raises(ValueError, match="concentration"):
        D.LKJCholesky(3, T([1.0, -0.5]))
    with pytest.raises(ValueError, match="within the support"):
        D.LKJCholesky(2).log_prob(torch.tensor([[1.0, 0.0], [0.5, 0.5]]))
    e = D.LKJCholesky(3, T([0.7, 2.0])).expand((4, 2))
    assert e.batch_shape == (4, 2) and e.sample((5,)).shape == (5, 4, 2, 3, 3)
    assert D.LKJCholesky(3).sample().dtype == torch.float32


_A = _rng.standard_normal((3, 3))
COV = _A @ _A.T + 1.5 * np.eye(3)
COV2 = np.array([[2.0, 0.3, -0.4], [0.3, 1.0, 0.2], [-0.4, 0.2, 1.5]])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("param", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_wishart(param, device):
    m = {"covariance_matrix": COV, "precision_matrix": np.linalg.inv(COV), "scale_tril": np.linalg.cholesky(COV)}
    df = np.array([4.5, 7.0])
    d = D.Wishart(T(df, device), **{param: T(m[param], device)})
    assert d.batch_shape == (2,) and d.event_shape == (3, 3) and d.has_rsample
    n = 100000
    torch.manual_seed(31)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no singular-sample warning for a well-conditioned draw
        X = d.sample((n,))
    assert tuple(X.shape) == (n, 2, 3, 3) and bool(D.constraints.positive_definite.check(X[:50]).all())
    Xn = npy(X)
    for b in range(2):
        ref = wishart(df[b], COV, Xn[:6, b])
        np.testing.assert_allclose(npy(d.log_prob(X[:6]))[:, b], ref["log_prob"], rtol=1e-9)
        np.testing.assert_allclose(npy(d.entropy())[b], ref["entropy"], rtol=1e-9)
        np.testing.assert_allclose(npy(d.mean)[b], ref["mean"], rtol=1e-9)
        np.testing.assert_allclose(npy(d.variance)[b], ref["variance"], rtol=1e-9)
        np.testing.assert_allclose(npy(d.mode)[b], (df[b] - 4) * COV, rtol=1e-9)
        # sample mean within 5 standard errors, entry by entry
        assert np.all(np.abs(Xn[:, b].mean(0) - ref["mean"]) < 5 * np.sqrt(ref["variance"] / n))
    np.testing.assert_allclose(npy(d.covariance_matrix[0]), COV, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(npy(d.precision_matrix[1]), np.linalg.inv(COV), rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(npy(d.scale_tril[0]), np.linalg.cholesky(COV), rtol=1e-9, atol=1e-12)
    # the Bregman form of the entropy agrees with the closed one
    np.testing.assert_allclose(npy(D.ExponentialFamily.entropy(d)), npy(d.entropy()), rtol=1e-9)
    if real_torch is not None:
        r = real_torch.distributions.Wishart(real_torch.tensor(df), **{param: real_torch.tensor(m[param])})
        xr = real_torch.tensor(Xn[:6])
        np.testing.assert_allclose(npy(d.log_prob(X[:6])), r.log_prob(xr).numpy(), rtol=1e-9)
        np.testing.assert_allclose(npy(d.entropy()), r.entropy().numpy(), rtol=1e-9)
        np.testing.assert_allclose(npy(d.variance), r.variance.numpy(), rtol=1e-9)
        assert repr(d.support) == repr(r.support) and d.has_rsample == r.has_rsample


def test_wishart_kl_rsample_and_errors():
    p = D.Wishart(T([4.5, 6.0]), covariance_matrix=T(COV))
    q = D.Wishart(T([5.0, 3.5]), covariance_matrix=T(COV2))
    kl = npy(D.kl_divergence(p, q))  # through the Bregman divergence of the log normaliser
    np.testing.assert_allclose(kl, [wishart_kl(4.5, COV, 5.0, COV2), wishart_kl(6.0, COV, 3.5, COV2)], rtol=1e-9)
    assert npy(D.kl_divergence(p, p)) == pytest.approx([0.0, 0.0], abs=1e-10)
    if real_torch is not None:  # torch's Bregman KL sums over the batch, so one at a time
        rp = real_torch.distributions.Wishart(real_torch.tensor(4.5, dtype=real_torch.float64),
                                              covariance_matrix=real_torch.tensor(COV))
        rq = real_torch.distributions.Wishart(real_torch.tensor(5.0, dtype=real_torch.float64),
                                              covariance_matrix=real_torch.tensor(COV2))
        assert kl[0] == pytest.approx(float(real_torch.distributions.kl_divergence(rp, rq).detach()), rel=1e-9)
    # d E[X] / d df = Sigma: the mean of n per-draw gradients (one df leaf each)
    n = 100000
    df = torch.full((n,), 5.0, dtype=torch.float64, requires_grad=True)
    torch.manual_seed(41)
    X = D.Wishart(df, covariance_matrix=T(COV2)).rsample()
    (g,) = torch.autograd.grad(X[:, 0, 0].sum(), df)
    g = npy(g)
    assert abs(g.mean() - COV2[0, 0]) < 5 * g.std() / math.sqrt(n)
    with pytest.raises(AssertionError, match="Exactly one of covariance_matrix or precision_matrix or scale_tril"):
        D.Wishart(T(4.0))
    with pytest.raises(ValueError, match="expected to be greater than ndim - 1 = 2"):
        D.Wishart(T(1.5), covariance_matrix=T(COV))
    with pytest.raises(ValueError, match="at least two-dimensional"):
        D.Wishart(T(4.0), covariance_matrix=T([1.0, 2.0]))
    with pytest.raises(ValueError, match="PositiveDefinite"):
        D.Wishart(T(4.0), covariance_matrix=T([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.warns(UserWarning, match="Low df values detected"):
        D.Wishart(T(2.5), covariance_matrix=T(COV))
    e = p.expand((3, 2))
    assert e.batch_shape == (3, 2) and e.rsample((4,)).shape == (4, 3, 2, 3, 3)
    np.testing.assert_allclose(npy(e.entropy()), np.broadcast_to(npy(p.entropy()), (3, 2)), rtol=1e-12)
    scalar_df = D.Wishart(4.0, scale_tril=T(np.linalg.cholesky(COV)))
    assert scalar_df.batch_shape == () and scalar_df.sample().shape == (3, 3)


@pytest.mark.parametrize("device", DEVICES)
def test_one_hot_categorical_straight_through(device):
    probs = T([[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]], device).requires_grad_(True)
    d = D.OneHotCategoricalStraightThrough(probs=probs)
    assert d.has_rsample and isinstance(d, D.OneHotCategorical)
    n = 50000
    torch.manual_seed(3)
    s = d.rsample((n,))
    assert s.requires_grad and tuple(s.shape) == (n, 2, 3)
    sn = npy(s)
    assert set(np.unique(sn)) <= {0.0, 1.0} and np.all(sn.sum(-1) == 1)
    p = npy(probs)
    assert np.all(np.abs(sn.mean(0) - p) < 5 * np.sqrt(p * (1 - p) / n))
    # straight through: sum(w * draw) differentiates as n * sum(w * probs / probs.sum(-1))
    w = T([1.0, -2.0, 0.5], device)
    (g,) = torch.autograd.grad((s * w).sum(), probs)
    wn = npy(w)
    np.testing.assert_allclose(npy(g), n * (wn - (p * wn).sum(-1, keepdims=True)), rtol=1e-9)
    if real_torch is not None:
        rp = real_torch.tensor(p, requires_grad=True)
        rs = real_torch.distributions.OneHotCategoricalStraightThrough(probs=rp).rsample((n,))
        (rg,) = real_torch.autograd.grad((rs * real_torch.tensor(wn)).sum(), rp)
        np.testing.assert_allclose(npy(g), rg.numpy(), rtol=1e-9)
    assert not d.sample().requires_grad
    e = d.expand((4, 2))
    assert type(e) is D.OneHotCategoricalStraightThrough and e.rsample().shape == (4, 2, 3)
    if real_torch is not None:
        r = real_torch.distributions.OneHotCategoricalStraightThrough(probs=real_torch.tensor(p))
        v = real_torch.eye(3, dtype=real_torch.float64)[[2, 0]]
        np.testing.assert_allclose(npy(d.log_prob(T(v.numpy(), device))), r.log_prob(v).numpy(), rtol=1e-12)
        assert d.has_rsample == r.has_rsample and repr(d.support) == repr(r.support)
