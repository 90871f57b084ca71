"""pycuda_sem.distributions, second part: the multivariate families
(MultivariateNormal with each of its three parametrisations,
LowRankMultivariateNormal, Dirichlet, Multinomial, the relaxed ones,
MixtureSameFamily) against float64 NumPy formulas and torch; kl_divergence
against Monte-Carlo estimates (within 5 standard errors) and torch;
constraints, transforms and TransformedDistribution, utils, register_kl."""
import math

import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import distributions as D
from pycuda_sem.distributions import constraints, transforms as Tr

from dist_refs import digamma, lgamma
from torch_oracle import _torch as real_torch  # torch where it imports, else None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
pytestmark = pytest.mark.usefixtures("no_tf32")


def npy(t):
    return t.detach().cpu().double().numpy()


def T(a, device="cpu", dtype=None):
    return torch.tensor(np.asarray(a, dtype=np.float64), dtype=dtype or torch.float64, device=device)


_rng = np.random.default_rng(3)
_A = _rng.standard_normal((2, 3, 3))
COV = _A @ _A.transpose(0, 2, 1) + 2 * np.eye(3)
LOC = _rng.standard_normal((2, 3))
CONC = _rng.random((2, 4)) + 0.5
SIMPLEX = _rng.dirichlet(np.ones(4), size=2)


def _mvn_logpdf(x, mu, cov):
    d = x - mu
    sol = np.linalg.solve(cov, d[..., None])[..., 0]
    return -0.5 * (np.einsum("...i,...i", d, sol) + np.log(np.linalg.det(cov)) + mu.shape[-1] * np.log(2 * np.pi))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("param", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_multivariate_normal(param, device):
    m = {"covariance_matrix": COV, "precision_matrix": np.linalg.inv(COV), "scale_tril": np.linalg.cholesky(COV)}[param]
    d = D.MultivariateNormal(T(LOC, device), **{param: T(m, device)})
    x = _rng.standard_normal((5, 2, 3))
    assert d.batch_shape == (2,) and d.event_shape == (3,)
    np.testing.assert_allclose(npy(d.log_prob(T(x, device))), _mvn_logpdf(x, LOC, COV), rtol=1e-9)
    ent = 0.5 * np.log(np.linalg.det(2 * np.pi * np.e * COV))
    np.testing.assert_allclose(npy(d.entropy()), ent, rtol=1e-10)
    np.testing.assert_allclose(npy(d.covariance_matrix), COV, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(npy(d.precision_matrix), np.linalg.inv(COV), rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(npy(d.scale_tril), np.linalg.cholesky(COV), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(npy(d.variance), np.diagonal(COV, axis1=-2, axis2=-1), rtol=1e-9)
    torch.manual_seed(0)
    n = 100000
    s = npy(d.sample((n,)))
    assert s.shape == (n, 2, 3)
    se = np.sqrt(np.diagonal(COV, axis1=-2, axis2=-1) / n)
    assert np.all(np.abs(s.mean(0) - LOC) < 5 * se)
    emp = np.einsum("nbi,nbj->bij", s - LOC, s - LOC) / n
    assert np.all(np.abs(emp - COV) < 0.05 * np.sqrt(np.outer(np.diag(COV[0]), np.diag(COV[0])).max()) * 3)
    assert D.MultivariateNormal(T(LOC, device), T(COV, device)).expand((4, 2)).batch_shape == (4, 2)
    if real_torch is not None:
        r = real_torch.distributions.MultivariateNormal(real_torch.tensor(LOC), **{param: real_torch.tensor(m)})
        np.testing.assert_allclose(npy(d.log_prob(T(x, device))), r.log_prob(real_torch.tensor(x)).numpy(), rtol=1e-10)


def test_multivariate_normal_errors_and_gradients():
    with pytest.raises(ValueError, match="Exactly one of covariance_matrix or precision_matrix or scale_tril"):
        D.MultivariateNormal(torch.zeros(2))
    with pytest.raises(ValueError, match="at least one-dimensional"):
        D.MultivariateNormal(torch.tensor(0.0), torch.eye(2))
    with pytest.raises(ValueError, match="PositiveDefinite"):
        D.MultivariateNormal(torch.zeros(2), torch.tensor([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(ValueError, match="LowerCholesky"):
        D.MultivariateNormal(torch.zeros(2), scale_tril=torch.tensor([[1.0, 1.0], [0.0, 1.0]]))
    loc = T(LOC[0]).requires_grad_(True)
    L = T(np.linalg.cholesky(COV[0])).requires_grad_(True)
    d = D.MultivariateNormal(loc, scale_tril=L)
    x = T(_rng.standard_normal(3))
    (g,) = torch.autograd.grad(d.log_prob(x), loc)
    np.testing.assert_allclose(npy(g), np.linalg.solve(COV[0], npy(x) - LOC[0]), rtol=1e-8)
    z = d.rsample((4,))
    assert torch.autograd.grad(z.sum(), L)[0].shape == (3, 3)


@pytest.mark.parametrize("device", DEVICES)
def test_low_rank_multivariate_normal(device):
    W = _rng.standard_normal((2, 3, 2))
    dg = _rng.random((2, 3)) + 0.5
    cov = W @ W.transpose(0, 2, 1) + np.stack([np.diag(v) for v in dg])
    d = D.LowRankMultivariateNormal(T(LOC, device), T(W, device), T(dg, device))
    x = _rng.standard_normal((4, 2, 3))
    np.testing.assert_allclose(npy(d.log_prob(T(x, device))), _mvn_logpdf(x, LOC, cov), rtol=1e-9)
    np.testing.assert_allclose(npy(d.entropy()), 0.5 * np.log(np.linalg.det(2 * np.pi * np.e * cov)), rtol=1e-10)
    np.testing.assert_allclose(npy(d.covariance_matrix), cov, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(npy(d.precision_matrix), np.linalg.inv(cov), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(npy(d.scale_tril), np.linalg.cholesky(cov), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(npy(d.variance), np.diagonal(cov, axis1=-2, axis2=-1), rtol=1e-9)
    torch.manual_seed(1)
    s = npy(d.sample((100000,)))
    assert np.all(np.abs(s.mean(0) - LOC) < 5 * np.sqrt(np.diagonal(cov, axis1=-2, axis2=-1) / 100000))
    with pytest.raises(ValueError, match="cov_factor must be a batch of matrices with shape 3 x m"):
        D.LowRankMultivariateNormal(T(LOC), T(np.ones((2, 2, 2))), T(dg))


@pytest.mark.parametrize("device", DEVICES)
def test_dirichlet_multinomial(device):
    d = D.Dirichlet(T(CONC, device))
    a0 = CONC.sum(-1)
    lp = ((CONC - 1) * np.log(SIMPLEX)).sum(-1) + lgamma(a0) - lgamma(CONC).sum(-1)
    np.testing.assert_allclose(npy(d.log_prob(T(SIMPLEX, device))), lp, rtol=1e-9)
    ent = lgamma(CONC).sum(-1) - lgamma(a0) + (a0 - 4) * digamma(a0) - ((CONC - 1) * digamma(CONC)).sum(-1)
    np.testing.assert_allclose(npy(d.entropy()), ent, rtol=1e-8)
    mean = CONC / a0[:, None]
    var = CONC * (a0[:, None] - CONC) / (a0[:, None] ** 2 * (a0[:, None] + 1))
    np.testing.assert_allclose(npy(d.mean), mean, rtol=1e-10)
    np.testing.assert_allclose(npy(d.variance), var, rtol=1e-10)
    torch.manual_seed(2)
    s = npy(D.Dirichlet(T(CONC, device, torch.float32)).sample((100000,)))
    np.testing.assert_allclose(s.sum(-1), 1.0, rtol=1e-5)
    assert np.all(np.abs(s.mean(0) - mean) < 5 * np.sqrt(var / 100000))
    m = D.Multinomial(7, probs=T(SIMPLEX, device))
    cnt = np.array([[2.0, 0, 4, 1], [1, 1, 1, 4]])
    want = lgamma(8.0) - lgamma(cnt + 1).sum(-1) + (cnt * np.log(SIMPLEX)).sum(-1)
    np.testing.assert_allclose(npy(m.log_prob(T(cnt, device))), want, rtol=1e-9)
    s = npy(m.sample((40000,)))
    assert np.all(s.sum(-1) == 7)
    se = np.sqrt(7 * SIMPLEX * (1 - SIMPLEX) / 40000)
    assert np.all(np.abs(s.mean(0) - 7 * SIMPLEX) < 5 * se)
    # The entropy against a sum over all 120 outcomes of 7 draws from 4 cells.
    outs = np.array([c for c in np.ndindex(8, 8, 8, 8) if sum(c) == 7], dtype=np.float64)
    lpm = (lgamma(8.0) - lgamma(outs + 1).sum(-1))[:, None] + outs @ np.log(SIMPLEX).T
    np.testing.assert_allclose(npy(m.entropy()), -(np.exp(lpm) * lpm).sum(0), rtol=1e-10)
    if real_torch is not None:
        # Older torch takes lgamma(n + 1) of an integer tensor in float32,
        # which moves its answer by about 1e-7: hence the looser tolerance.
        r = real_torch.distributions.Multinomial(7, probs=real_torch.tensor(SIMPLEX))
        np.testing.assert_allclose(npy(m.entropy()), r.entropy().numpy(), rtol=1e-6)
        rd = real_torch.distributions.Dirichlet(real_torch.tensor(CONC))
        np.testing.assert_allclose(npy(d.mode), rd.mode.numpy(), rtol=1e-10)
    with pytest.raises(NotImplementedError, match="inhomogeneous total_count"):
        D.Multinomial(torch.tensor([3, 4]), probs=T(SIMPLEX))


@pytest.mark.parametrize("device", DEVICES)
def test_relaxed_and_mixture(device):
    temp = T(0.5, device)
    rb = D.RelaxedBernoulli(temp, probs=T([0.2, 0.7], device))
    torch.manual_seed(3)
    s = rb.rsample((50000,))
    assert s.shape == (50000, 2) and bool(((s > 0) & (s < 1)).all())
    # P(sample > 1/2) = P(logistic + logit p > 0) = p, at any temperature
    frac = (npy(s) > 0.5).mean(0)
    assert np.all(np.abs(frac - [0.2, 0.7]) < 5 * np.sqrt(0.25 / 50000))
    x = np.array([0.3, 0.6])
    lt = np.log(x / (1 - x))
    logits = np.log(np.array([0.2, 0.7]) / np.array([0.8, 0.3]))
    diff = logits - 0.5 * lt
    want = np.log(0.5) + diff - 2 * np.log1p(np.exp(diff)) - np.log(x * (1 - x))
    np.testing.assert_allclose(npy(rb.log_prob(T(x, device))), want, rtol=1e-9)
    rc = D.RelaxedOneHotCategorical(temp, probs=T(SIMPLEX, device))
    s = rc.rsample((30000,))
    np.testing.assert_allclose(npy(s.sum(-1)), 1.0, rtol=1e-9)
    arg = npy(s.argmax(-1))  # the argmax of a Gumbel-softmax draw is Categorical(probs)
    for b in range(2):
        freq = np.bincount(arg[:, b].astype(int), minlength=4) / 30000
        assert np.all(np.abs(freq - SIMPLEX[b]) < 5 * np.sqrt(SIMPLEX[b] * (1 - SIMPLEX[b]) / 30000) + 1e-9)
    if real_torch is not None:
        r = real_torch.distributions.RelaxedOneHotCategorical(real_torch.tensor(0.5, dtype=real_torch.float64),
                                                              probs=real_torch.tensor(SIMPLEX))
        v = SIMPLEX[::-1].copy()
        np.testing.assert_allclose(npy(rc.log_prob(T(v, device))), r.log_prob(real_torch.tensor(v)).numpy(), rtol=1e-9)
    mu = _rng.standard_normal((2, 4))
    sd = _rng.random((2, 4)) + 0.5
    mix = D.MixtureSameFamily(D.Categorical(probs=T(SIMPLEX, device)), D.Normal(T(mu, device), T(sd, device)))
    xs = _rng.standard_normal((3, 2))
    comp = -0.5 * ((xs[..., None] - mu) / sd) ** 2 - np.log(sd) - 0.5 * np.log(2 * np.pi) + np.log(SIMPLEX)
    want = np.log(np.exp(comp).sum(-1))
    np.testing.assert_allclose(npy(mix.log_prob(T(xs, device))), want, rtol=1e-9)
    mean = (SIMPLEX * mu).sum(-1)
    var = (SIMPLEX * (sd ** 2 + mu ** 2)).sum(-1) - mean ** 2
    np.testing.assert_allclose(npy(mix.mean), mean, rtol=1e-10)
    np.testing.assert_allclose(npy(mix.variance), var, rtol=1e-9)
    torch.manual_seed(4)
    s = npy(mix.sample((100000,)))
    assert s.shape == (100000, 2) and np.all(np.abs(s.mean(0) - mean) < 5 * np.sqrt(var / 100000))
    with pytest.raises(ValueError, match="does not equal"):
        D.MixtureSameFamily(D.Categorical(probs=T(SIMPLEX)), D.Normal(T(mu[:, :3]), T(sd[:, :3])))


@pytest.mark.parametrize("device", DEVICES)
def test_continuous_bernoulli(device):
    p = np.array([0.1, 0.3, 0.4995, 0.8])
    x = np.array([0.2, 0.7, 0.1, 0.95])
    d = D.ContinuousBernoulli(T(p, device))
    far = np.abs(p - 0.5) > 0.01  # the closed forms; torch's Taylor branch near 1/2 is compared with torch below
    logc = np.log(2 * np.arctanh(1 - 2 * p) / (1 - 2 * p))
    lp = x * np.log(p) + (1 - x) * np.log1p(-p) + logc
    np.testing.assert_allclose(npy(d.log_prob(T(x, device)))[far], lp[far], rtol=1e-9)
    mean = p / (2 * p - 1) + 1 / (2 * np.arctanh(1 - 2 * p))
    np.testing.assert_allclose(npy(d.mean)[far], mean[far], rtol=1e-9)
    cdf = (p ** x * (1 - p) ** (1 - x) + p - 1) / (2 * p - 1)
    np.testing.assert_allclose(npy(d.cdf(T(x, device)))[far], cdf[far], rtol=1e-9)
    np.testing.assert_allclose(npy(d.cdf(d.icdf(T(x, device)))), x, rtol=1e-9)
    torch.manual_seed(6)
    s = npy(d.sample((100000,)))
    assert np.all((s >= 0) & (s <= 1))
    assert np.all(np.abs(s.mean(0) - npy(d.mean)) < 5 * np.sqrt(npy(d.variance) / 100000))
    if real_torch is not None:
        r = real_torch.distributions.ContinuousBernoulli(real_torch.tensor(p))
        np.testing.assert_allclose(npy(d.log_prob(T(x, device))), r.log_prob(real_torch.tensor(x)).numpy(), rtol=1e-12)
        np.testing.assert_allclose(npy(d.entropy()), r.entropy().numpy(), rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(npy(d.variance), r.variance.numpy(), rtol=1e-12)


def _kl_pairs(device):
    P, Q = np.array([0.7, 1.6, 2.5]), np.array([1.2, 0.9, 3.0])
    L1, L2 = np.array([0.1, -0.5, 1.0]), np.array([0.4, 0.3, -0.2])
    t = lambda a: T(a, device)  # noqa: E731
    return {
        "Exponential": (D.Exponential(t(P)), D.Exponential(t(Q))),
        "Gamma": (D.Gamma(t(P * 2), t(Q)), D.Gamma(t(Q * 2), t(P))),
        "Chi2": (D.Chi2(t(P * 3)), D.Chi2(t(Q * 3))),
        "Beta": (D.Beta(t(P * 2), t(Q * 2)), D.Beta(t(Q * 2), t(P))),
        "Laplace": (D.Laplace(t(L1), t(P)), D.Laplace(t(L2), t(Q))),
        "Poisson": (D.Poisson(t(P * 3)), D.Poisson(t(Q * 3))),
        "Geometric": (D.Geometric(t(P / 4)), D.Geometric(t(Q / 4))),
        "Binomial": (D.Binomial(9, t(P / 4)), D.Binomial(9, t(Q / 4))),
        "Cauchy": (D.Cauchy(t(L1), t(P)), D.Cauchy(t(L2), t(Q))),
        "Gumbel": (D.Gumbel(t(L1), t(P)), D.Gumbel(t(L2), t(Q))),
        "HalfNormal": (D.HalfNormal(t(P)), D.HalfNormal(t(Q))),
        "LogNormal": (D.LogNormal(t(L1), t(P)), D.LogNormal(t(L2), t(Q))),
        "Dirichlet": (D.Dirichlet(t(CONC)), D.Dirichlet(t(CONC[::-1].copy()))),
        "MultivariateNormal": (D.MultivariateNormal(t(LOC), t(COV)), D.MultivariateNormal(t(-LOC), t(COV[::-1].copy()))),
        "Bernoulli": (D.Bernoulli(t(P / 4)), D.Bernoulli(t(Q / 4))),
        "Categorical": (D.Categorical(t(SIMPLEX)), D.Categorical(t(SIMPLEX[::-1].copy()))),
        "Normal": (D.Normal(t(L1), t(P)), D.Normal(t(L2), t(Q))),
        "Uniform": (D.Uniform(t(-P), t(P)), D.Uniform(t(-P - 1), t(Q + P))),
    }


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("pair", sorted(_kl_pairs("cpu")))
def test_kl_divergence_monte_carlo(pair, device):
    p, q = _kl_pairs(device)[pair]
    kl = npy(D.kl_divergence(p, q))
    assert kl.shape == tuple(p.batch_shape)
    torch.manual_seed(11)
    n = 200000
    x = p.sample((n,))
    r = npy(p.log_prob(x) - q.log_prob(x))
    se = r.std(0) / math.sqrt(n)
    assert np.all(np.abs(r.mean(0) - kl) < 5 * se + 1e-9), (pair, r.mean(0), kl, se)
    if real_torch is not None:
        rp, rq = _kl_pairs_torch(pair)
        np.testing.assert_allclose(kl, real_torch.distributions.kl_divergence(rp, rq).numpy(), rtol=1e-9)


def _kl_pairs_torch(pair):
    """The same pair, rebuilt in real torch from pycuda_sem's parameters."""
    p, q = _kl_pairs("cpu")[pair]
    R = real_torch.distributions

    def conv(d):
        c = lambda t: real_torch.tensor(npy(t))  # noqa: E731
        name = type(d).__name__
        if name in ("Exponential",):
            return R.Exponential(c(d.rate))
        if name in ("Gamma",):
            return R.Gamma(c(d.concentration), c(d.rate))
        if name == "Chi2":
            return R.Chi2(c(d.df))
        if name == "Beta":
            return R.Beta(c(d.concentration1), c(d.concentration0))
        if name == "Poisson":
            return R.Poisson(c(d.rate))
        if name in ("Geometric", "Bernoulli", "Categorical"):
            return getattr(R, name)(probs=c(d.probs))
        if name == "Binomial":
            return R.Binomial(9, probs=c(d.probs))
        if name in ("HalfNormal",):
            return R.HalfNormal(c(d.scale))
        if name == "Dirichlet":
            return R.Dirichlet(c(d.concentration))
        if name == "MultivariateNormal":
            return R.MultivariateNormal(c(d.loc), c(d.covariance_matrix))
        if name == "Uniform":
            return R.Uniform(c(d.low), c(d.high))
        return getattr(R, name)(c(d.loc), c(d.scale))
    return conv(p), conv(q)


def test_kl_dispatch_and_register():
    class MyExp(D.Exponential):
        pass

    p, q = MyExp(torch.tensor([1.0])), D.Exponential(torch.tensor([2.0]))
    assert npy(D.kl_divergence(p, q))[0] == pytest.approx(math.log(0.5) + 2 - 1)

    @D.register_kl(MyExp, D.Exponential)
    def _kl(a, b):
        return torch.full_like(a.rate, 42.0)

    assert npy(D.kl_divergence(p, q))[0] == 42.0  # the more specific pair wins
    with pytest.raises(TypeError, match="Distribution subclass"):
        D.register_kl(int, D.Normal)
    with pytest.raises(NotImplementedError):
        D.kl_divergence(D.Poisson(torch.tensor(1.0)), D.Normal(0.0, 1.0))
    u = D.kl_divergence(D.Uniform(torch.tensor(0.0), torch.tensor(2.0)), D.Uniform(torch.tensor(0.5), torch.tensor(1.0)))
    assert npy(u) == math.inf


def test_constraints():
    x = torch.tensor([-1.0, 0.0, 0.5, 1.0, 2.0, float("nan")])
    cases = [(constraints.real, [1, 1, 1, 1, 1, 0]), (constraints.positive, [0, 0, 1, 1, 1, 0]),
             (constraints.nonnegative, [0, 1, 1, 1, 1, 0]), (constraints.unit_interval, [0, 1, 1, 1, 0, 0]),
             (constraints.interval(0.0, 0.5), [0, 1, 1, 0, 0, 0]), (constraints.greater_than(0.5), [0, 0, 0, 1, 1, 0]),
             (constraints.boolean, [0, 1, 0, 1, 0, 0]), (constraints.nonnegative_integer, [0, 1, 0, 1, 1, 0]),
             (constraints.integer_interval(0, 1), [0, 1, 0, 1, 0, 0]), (constraints.half_open_interval(0.0, 1.0),
                                                                         [0, 1, 1, 0, 0, 0])]
    for c, want in cases:
        assert npy(c.check(x)).astype(int).tolist() == want, repr(c)
    assert repr(constraints.interval(0.0, 1.0)) == "Interval(lower_bound=0.0, upper_bound=1.0)"
    assert repr(constraints.independent(constraints.real, 1)) == "IndependentConstraint(Real(), 1)"
    assert constraints.simplex.event_dim == 1 and constraints.boolean.is_discrete
    assert npy(constraints.simplex.check(torch.tensor([[0.2, 0.8], [0.5, 0.6]]))).tolist() == [1, 0]
    assert npy(constraints.lower_cholesky.check(torch.tensor([[[1.0, 0], [2, 3]], [[1.0, 1], [0, 1]]]))).tolist() == [1, 0]
    spd = torch.tensor([[2.0, 1.0], [1.0, 2.0]])
    assert bool(constraints.positive_definite.check(spd)) and not bool(constraints.positive_definite.check(-spd))
    assert npy(constraints.independent(constraints.positive, 1).check(torch.tensor([[1.0, 2], [1, -1]]))).tolist() == [1, 0]
    assert constraints.is_dependent(constraints.dependent) and not constraints.is_dependent(constraints.real)
    with pytest.raises(ValueError, match="dependent"):
        constraints.dependent.check(x)
    assert type(D.Uniform(0.0, 2.0).support).__name__ == "_Interval"


def _numeric_logdet(t, x, h=1e-6):
    return np.log(np.abs((npy(t(x + h)) - npy(t(x - h))) / (2 * h)))


def test_transforms():
    x = T(_rng.standard_normal(5) * 0.8)
    xp = x.abs() + 0.3
    for t, arg in ((Tr.ExpTransform(), x), (Tr.SigmoidTransform(), x), (Tr.TanhTransform(), x),
                   (Tr.AffineTransform(1.5, -2.0), x), (Tr.PowerTransform(T(2.5)), xp),
                   (Tr.AffineTransform(T(_rng.standard_normal(5)), T(_rng.random(5) + 0.5)), x)):
        y = t(arg)
        np.testing.assert_allclose(npy(t.inv(y)), npy(arg), rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(npy(t.log_abs_det_jacobian(arg, y)), _numeric_logdet(t, arg), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(npy(t.inv.log_abs_det_jacobian(y, arg)), -_numeric_logdet(t, arg), rtol=1e-6, atol=1e-7)
    c = Tr.ComposeTransform([Tr.AffineTransform(0.5, 2.0), Tr.ExpTransform()])
    y = c(x)
    np.testing.assert_allclose(npy(y), np.exp(0.5 + 2 * npy(x)), rtol=1e-12)
    np.testing.assert_allclose(npy(c.log_abs_det_jacobian(x, y)), np.log(2) + 0.5 + 2 * npy(x), rtol=1e-12)
    np.testing.assert_allclose(npy(c.inv(y)), npy(x), rtol=1e-9)
    assert npy(Tr.AbsTransform()(x)).tolist() == np.abs(npy(x)).tolist()
    sm = Tr.SoftmaxTransform()(T([[1.0, 2.0, 3.0]]))
    np.testing.assert_allclose(npy(sm)[0], np.exp([1, 2, 3]) / np.exp([1, 2, 3]).sum(), rtol=1e-12)
    assert Tr.ExpTransform() == Tr.ExpTransform() and Tr.ExpTransform().inv.inv == Tr.ExpTransform()
    assert Tr.SigmoidTransform().codomain is constraints.unit_interval and Tr.ExpTransform().sign == 1
    cached = Tr.ExpTransform(cache_size=1)
    yc = cached(x)
    assert cached.inv(yc) is x  # cache_size=1 returns the remembered input
    with pytest.raises(ValueError, match="cache_size"):
        Tr.ExpTransform(cache_size=2)


def test_transformed_distribution():
    loc, scale = T([0.3, -1.0]), T([1.5, 0.5])
    td = D.TransformedDistribution(D.Normal(T(0.0), T(1.0)).expand((2,)), [Tr.AffineTransform(loc, scale)])
    x = T([0.1, 0.7])
    np.testing.assert_allclose(npy(td.log_prob(x)), npy(D.Normal(loc, scale).log_prob(x)), rtol=1e-12)
    np.testing.assert_allclose(npy(td.cdf(x)), npy(D.Normal(loc, scale).cdf(x)), rtol=1e-12)
    np.testing.assert_allclose(npy(td.icdf(T([0.2, 0.9]))), npy(D.Normal(loc, scale).icdf(T([0.2, 0.9]))), rtol=1e-12)
    neg = D.TransformedDistribution(D.Exponential(T([2.0])), [Tr.AffineTransform(0.0, -1.0)])
    np.testing.assert_allclose(npy(neg.cdf(T([-0.5]))), [math.exp(-1.0)], rtol=1e-12)  # a decreasing map flips the cdf
    assert td.has_rsample and td.batch_shape == (2,) and td.rsample((3,)).shape == (3, 2)
    tanh_n = D.TransformedDistribution(D.Normal(T([0.0]), T([1.0])), [Tr.TanhTransform()])
    v = T([0.5])
    z = math.atanh(0.5)
    want = -0.5 * z * z - 0.5 * math.log(2 * math.pi) - math.log(1 - 0.25)
    np.testing.assert_allclose(npy(tanh_n.log_prob(v)), [want], rtol=1e-10)
    with pytest.raises(ValueError, match="transforms must be a Transform or"):
        D.TransformedDistribution(D.Normal(0.0, 1.0), "exp")
    e = D.LogNormal(T([0.0]), T([1.0])).expand((3,))
    assert e.batch_shape == (3,) and e.sample().shape == (3,)


def test_utils():
    from pycuda_sem.distributions import utils
    p = T([0.0, 0.25, 1.0])
    lg = npy(utils.probs_to_logits(p, is_binary=True))
    assert np.all(np.isfinite(lg)) and lg[1] == pytest.approx(math.log(1 / 3))
    np.testing.assert_allclose(npy(utils.logits_to_probs(T([0.0, math.log(3.0)]), is_binary=True)), [0.5, 0.75])
    np.testing.assert_allclose(npy(utils.logits_to_probs(T([0.0, math.log(3.0)]))), [0.25, 0.75])
    eps = np.finfo(np.float64).eps
    assert npy(utils.clamp_probs(p)).tolist() == [eps, 0.25, 1 - eps]
    a, b = utils.broadcast_all(T([1.0, 2.0]), 3.0)
    assert a.shape == b.shape == (2,) and b.dtype == torch.float64
    with pytest.raises(ValueError, match="Input arguments must all be instances of numbers.Number"):
        utils.broadcast_all("x", T([1.0]))


def test_expand_of_composite_distributions():
    """expand keeps shared parameters (a relaxed distribution's temperature) and expands children."""
    p = T([0.2, 0.3, 0.5])
    for d in (D.RelaxedOneHotCategorical(T(0.5), p), D.RelaxedBernoulli(T(0.5), T(0.3)), D.OneHotCategorical(p),
              D.Multinomial(4, p), D.MixtureSameFamily(D.Categorical(p), D.Normal(T([0.0, 1, 2]), T([1.0, 1, 1]))),
              D.Beta(T(1.0), T(2.0)), D.StudentT(T(3.0)), D.Gumbel(T(0.0), T(1.0)), D.Dirichlet(T([1.0, 2.0])),
              D.MultivariateNormal(T([0.0, 1.0]), T(np.eye(2))), D.Independent(D.Normal(T([0.0, 1]), T([1.0, 2])), 1)):
        e = d.expand((2,))
        s = e.sample((4,))
        assert e.batch_shape == (2,) and tuple(s.shape) == (4, 2) + tuple(d.event_shape), type(d).__name__
        lp = npy(e.log_prob(s))
        assert lp.shape == (4, 2) and np.all(np.isfinite(lp)), type(d).__name__
        np.testing.assert_allclose(lp, npy(d.log_prob(s)), rtol=1e-12)  # same parameters, broadcast
