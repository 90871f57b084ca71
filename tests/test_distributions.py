"""pycuda_sem.distributions: log_prob, entropy, cdf/icdf, moments and
kl_divergence against closed forms computed here in float64 (and against
torch.distributions where torch imports); sampling by its moments;
reparameterised gradients; argument checks."""
import math

import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import distributions as D

from torch_oracle import _torch as real_torch  # torch where it imports, else None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
_erf = np.vectorize(math.erf)


def npy(t):
    return t.detach().cpu().double().numpy()


def _params():
    rng = np.random.default_rng(0)
    return (rng.standard_normal(5).astype(np.float32), (rng.random(5) + 0.5).astype(np.float32),
            rng.standard_normal(5).astype(np.float32), rng.standard_normal((3, 4)).astype(np.float32))


# name: (build from (T, device, loc, scale, x, logits), evaluate, NumPy answer over float64 params)
def _normal_ref(loc, scale, x, logits):
    lp = -((x - loc) ** 2) / (2 * scale ** 2) - np.log(scale) - 0.5 * np.log(2 * np.pi)
    return {"log_prob": lp, "entropy": 0.5 + 0.5 * np.log(2 * np.pi) + np.log(scale),
            "cdf": 0.5 * (1 + _erf((x - loc) / (scale * np.sqrt(2)))), "mean": loc, "variance": scale ** 2}


def _categorical_ref(loc, scale, x, logits):
    logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    v = np.array([0, 3, 1])
    return {"log_prob": logp[np.arange(3), v], "entropy": -(np.exp(logp) * logp).sum(-1),
            "probs": np.exp(logp)}


def _bernoulli_ref(loc, scale, x, logits):
    p = 1 / (1 + np.exp(-loc))
    v = (x > 0).astype(np.float64)
    return {"log_prob": v * np.log(p) + (1 - v) * np.log1p(-p),
            "entropy": -(p * np.log(p) + (1 - p) * np.log1p(-p)), "mean": p, "variance": p * (1 - p)}


@pytest.mark.parametrize("device", DEVICES)
def test_normal(device):
    loc, scale, x, logits = _params()
    d = D.Normal(torch.tensor(loc, device=device), torch.tensor(scale, device=device))
    want = _normal_ref(*(a.astype(np.float64) for a in (loc, scale, x, logits)))
    xt = torch.tensor(x, device=device)
    np.testing.assert_allclose(npy(d.log_prob(xt)), want["log_prob"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(npy(d.entropy()), want["entropy"], rtol=1e-6)
    np.testing.assert_allclose(npy(d.cdf(xt)), want["cdf"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(npy(d.icdf(d.cdf(xt))), x, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(npy(d.variance), want["variance"], rtol=1e-6)
    assert d.batch_shape == (5,) and d.event_shape == () and d.sample((7, 2)).shape == (7, 2, 5)
    if real_torch is not None:
        r = real_torch.distributions.Normal(real_torch.tensor(loc), real_torch.tensor(scale))
        np.testing.assert_allclose(npy(d.log_prob(xt)), r.log_prob(real_torch.tensor(x)).double().numpy(), rtol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_categorical_and_one_hot(device):
    loc, scale, x, logits = _params()
    want = _categorical_ref(*(a.astype(np.float64) for a in (loc, scale, x, logits)))
    for d in (D.Categorical(logits=torch.tensor(logits, device=device)),
              D.Categorical(probs=torch.tensor(np.exp(logits), device=device))):
        v = torch.tensor([0, 3, 1], device=device)
        np.testing.assert_allclose(npy(d.log_prob(v)), want["log_prob"], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(npy(d.entropy()), want["entropy"], rtol=1e-5)
        np.testing.assert_allclose(npy(d.probs), want["probs"], rtol=1e-5)
        assert d.sample().shape == (3,) and d.sample((6,)).shape == (6, 3)
    torch.manual_seed(0)
    d = D.Categorical(probs=torch.tensor([0.2, 0.0, 0.8], device=device))
    s = d.sample((20000,)).cpu().numpy()
    assert abs((s == 2).mean() - 0.8) < 0.02 and (s == 1).sum() == 0
    oh = D.OneHotCategorical(logits=torch.tensor(logits, device=device))
    draw = oh.sample()
    assert draw.shape == (3, 4) and npy(draw.sum(-1)).tolist() == [1.0, 1.0, 1.0]
    np.testing.assert_allclose(npy(oh.log_prob(draw)), npy(D.Categorical(logits=oh.logits).log_prob(draw.argmax(-1))))


@pytest.mark.parametrize("device", DEVICES)
def test_bernoulli_uniform_independent(device):
    loc, scale, x, logits = _params()
    want = _bernoulli_ref(*(a.astype(np.float64) for a in (loc, scale, x, logits)))
    b = D.Bernoulli(logits=torch.tensor(loc, device=device))
    v = torch.tensor((x > 0).astype(np.float32), device=device)
    np.testing.assert_allclose(npy(b.log_prob(v)), want["log_prob"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(npy(b.entropy()), want["entropy"], rtol=1e-5)
    np.testing.assert_allclose(npy(D.Bernoulli(probs=b.probs).log_prob(v)), want["log_prob"], rtol=1e-4, atol=1e-5)
    u = D.Uniform(torch.tensor(-1.0, device=device), torch.tensor(3.0, device=device), validate_args=False)
    lpu = npy(u.log_prob(torch.tensor([0.0, 5.0], device=device)))
    assert lpu[0] == pytest.approx(-math.log(4.0), rel=1e-6) and lpu[1] == -math.inf
    assert abs(npy(u.sample((40000,))).mean() - 1.0) < 0.03 and npy(u.entropy()) == pytest.approx(math.log(4))
    ind = D.Independent(D.Normal(torch.zeros(4, 3, device=device), torch.ones(4, 3, device=device)), 1)
    assert ind.batch_shape == (4,) and ind.event_shape == (3,)
    np.testing.assert_allclose(npy(ind.log_prob(torch.zeros(4, 3, device=device))), [3 * -0.5 * math.log(2 * math.pi)] * 4,
                               rtol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_kl_divergence(device):
    p = D.Normal(torch.tensor([0.0, 1.0], device=device), torch.tensor([1.0, 2.0], device=device))
    q = D.Normal(torch.tensor([1.0, -1.0], device=device), torch.tensor([2.0, 0.5], device=device))
    mp, sp, mq, sq = np.array([0.0, 1]), np.array([1.0, 2]), np.array([1.0, -1]), np.array([2.0, 0.5])
    want = np.log(sq / sp) + (sp ** 2 + (mp - mq) ** 2) / (2 * sq ** 2) - 0.5
    np.testing.assert_allclose(npy(D.kl_divergence(p, q)), want, rtol=1e-6)
    cp = D.Categorical(probs=torch.tensor([0.5, 0.5, 0.0], device=device))
    cq = D.Categorical(probs=torch.tensor([0.25, 0.25, 0.5], device=device))
    assert npy(D.kl_divergence(cp, cq)) == pytest.approx(math.log(2.0), rel=1e-6)
    assert npy(D.kl_divergence(cq, cp)) == math.inf
    with pytest.raises(NotImplementedError, match="No KL"):
        D.kl_divergence(p, cq)


def test_rsample_is_differentiable_and_sample_is_not():
    loc = torch.tensor([0.5, -1.0], requires_grad=True)
    scale = torch.tensor([1.0, 2.0], requires_grad=True)
    d = D.Normal(loc, scale)
    z = d.rsample((1000,))
    z.mean().backward()
    np.testing.assert_allclose(loc.grad.numpy(), [0.5, 0.5], rtol=1e-4)  # 1000 float32 halves summed
    assert d.sample().requires_grad is False
    lp = D.Normal(loc, scale).log_prob(torch.tensor([0.0, 0.0])).sum()
    assert torch.autograd.grad(lp, loc)[0].shape == (2,)


def test_argument_checks():
    with pytest.raises(ValueError, match="scale"):
        D.Normal(torch.zeros(2), torch.tensor([1.0, -1.0]))
    D.Normal(torch.zeros(2), torch.tensor([1.0, -1.0]), validate_args=False)
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        D.Categorical()
    with pytest.raises(ValueError, match="probs"):
        D.Bernoulli(probs=torch.tensor([1.5]))
    with pytest.raises(AttributeError, match="NoSuchDistribution"):
        D.NoSuchDistribution  # every torch.distributions name exists now (VonMises & co.: test_distributions_extra*.py)


# Every module path torch.distributions has, with the classes torch's __all__ names there.
_TORCH_PATHS = [
    ("bernoulli", "Bernoulli"), ("beta", "Beta"), ("binomial", "Binomial"), ("categorical", "Categorical"),
    ("cauchy", "Cauchy"), ("chi2", "Chi2"), ("continuous_bernoulli", "ContinuousBernoulli"),
    ("dirichlet", "Dirichlet"), ("exponential", "Exponential"), ("fishersnedecor", "FisherSnedecor"),
    ("gamma", "Gamma"), ("generalized_pareto", "GeneralizedPareto"), ("geometric", "Geometric"),
    ("gumbel", "Gumbel"), ("half_cauchy", "HalfCauchy"), ("half_normal", "HalfNormal"),
    ("independent", "Independent"), ("inverse_gamma", "InverseGamma"), ("kumaraswamy", "Kumaraswamy"),
    ("laplace", "Laplace"), ("lkj_cholesky", "LKJCholesky"), ("log_normal", "LogNormal"),
    ("logistic_normal", "LogisticNormal"), ("lowrank_multivariate_normal", "LowRankMultivariateNormal"),
    ("mixture_same_family", "MixtureSameFamily"), ("multinomial", "Multinomial"),
    ("multivariate_normal", "MultivariateNormal"), ("negative_binomial", "NegativeBinomial"),
    ("normal", "Normal"), ("one_hot_categorical", "OneHotCategorical"),
    ("one_hot_categorical", "OneHotCategoricalStraightThrough"), ("pareto", "Pareto"), ("poisson", "Poisson"),
    ("relaxed_bernoulli", "RelaxedBernoulli"), ("relaxed_bernoulli", "LogitRelaxedBernoulli"),
    ("relaxed_categorical", "RelaxedOneHotCategorical"), ("relaxed_categorical", "ExpRelaxedCategorical"),
    ("studentT", "StudentT"), ("transformed_distribution", "TransformedDistribution"),
    ("uniform", "Uniform"), ("von_mises", "VonMises"), ("weibull", "Weibull"), ("wishart", "Wishart"),
]


@pytest.mark.parametrize("path,cls", _TORCH_PATHS)
def test_torch_module_paths_import(path, cls):
    import importlib
    mod = importlib.import_module("pycuda_sem.distributions." + path)
    assert getattr(mod, cls) is getattr(torch.distributions, cls)
    if real_torch is not None:
        assert hasattr(importlib.import_module("torch.distributions." + path), cls)
