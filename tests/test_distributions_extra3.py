"""pycuda_sem.distributions.ExponentialFamily and the KL pairs added with
it: the Bregman-divergence entropy against each family's closed form, the
Bregman KL against the registered closed forms and (ContinuousBernoulli, which
has no pair of its own) a float64 quadrature; the class tree against torch's;
the Pareto pairs of torch's table against quadratures of E_p[log p - log q]
written from the densities, and against torch."""
import math

import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import distributions as D
from pycuda_sem.distributions.kl_extra import _kl_expfamily_expfamily

from dist_refs import lgamma
from torch_oracle import _torch as real_torch  # torch where it imports, else None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
pytestmark = pytest.mark.usefixtures("no_tf32")  # the Wishart pairs multiply matrices


def npy(t):
    return t.detach().cpu().double().numpy()


def T(a, device="cpu"):
    return torch.tensor(np.asarray(a, dtype=np.float64), dtype=torch.float64, device=device)


def _families(lib, device=None):
    """Pairs (p, q) of each exponential family, float64, on device."""
    dd = lib.distributions
    kw = {"dtype": lib.float64} if device is None else {"dtype": lib.float64, "device": device}

    def t(v):
        return lib.tensor(v, **kw)
    return {
        "Normal": (dd.Normal(t([0.3, -1.0]), t([0.8, 2.0])), dd.Normal(t([1.0, 0.5]), t([1.5, 0.6]))),
        "Exponential": (dd.Exponential(t([0.5, 2.0])), dd.Exponential(t([1.5, 0.3]))),
        "Gamma": (dd.Gamma(t([2.5, 0.7]), t([1.2, 0.4])), dd.Gamma(t([1.5, 3.0]), t([0.5, 2.0]))),
        "Beta": (dd.Beta(t([2.0, 0.6]), t([3.0, 1.5])), dd.Beta(t([0.8, 4.0]), t([1.2, 2.5]))),
        "Dirichlet": (dd.Dirichlet(t([[1.5, 0.7, 2.0], [3.0, 1.0, 0.4]])),
                      dd.Dirichlet(t([[0.9, 2.2, 1.0], [1.0, 1.0, 1.0]]))),
        "Bernoulli": (dd.Bernoulli(probs=t([0.2, 0.65])), dd.Bernoulli(probs=t([0.5, 0.1]))),
        "Poisson": (dd.Poisson(t([1.5, 7.0])), dd.Poisson(t([3.0, 0.4]))),
        "ContinuousBernoulli": (dd.ContinuousBernoulli(probs=t([0.2, 0.7, 0.9])),
                                dd.ContinuousBernoulli(probs=t([0.4, 0.1, 0.6]))),
    }


WITH_CARRIER = ["Normal", "Exponential", "Gamma", "Bernoulli", "ContinuousBernoulli"]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(_families(torch)))
def test_bregman_entropy(name, device):
    p, _ = _families(torch, device)[name]
    assert isinstance(p, D.ExponentialFamily)
    if name in WITH_CARRIER:
        np.testing.assert_allclose(npy(D.ExponentialFamily.entropy(p)), npy(p.entropy()), rtol=1e-9, atol=1e-12)
    else:  # no carrier measure (as in torch): only their closed-form entropies
        with pytest.raises(NotImplementedError):
            D.ExponentialFamily.entropy(p)
    if name == "Poisson":
        with pytest.raises(NotImplementedError):
            p.entropy()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(_families(torch)))
def test_bregman_kl(name, device):
    p, q = _families(torch, device)[name]
    breg = npy(_kl_expfamily_expfamily(p, q))
    if name != "ContinuousBernoulli":  # against the registered closed form
        np.testing.assert_allclose(breg, npy(D.kl_divergence(p, q)), rtol=1e-9, atol=1e-12)
    else:
        # KL(p || q) = int_0^1 p (log p - log q): the density lambda^x (1 - lambda)^(1 - x) C(lambda),
        # C(lambda) = 2 atanh(1 - 2 lambda) / (1 - 2 lambda)
        x = np.linspace(0, 1, 200001)

        def logpdf(lam):
            lam = lam[:, None]
            return x * np.log(lam) + (1 - x) * np.log1p(-lam) + np.log(2 * np.arctanh(1 - 2 * lam) / (1 - 2 * lam))
        lp, lq = logpdf(npy(p.probs)), logpdf(npy(q.probs))
        want = np.trapezoid(np.exp(lp) * (lp - lq), x, axis=1)
        np.testing.assert_allclose(breg, want, rtol=1e-8)
        np.testing.assert_allclose(npy(D.kl_divergence(p, q)), want, rtol=1e-8)  # dispatched to the Bregman form
        if real_torch is not None:
            rp, rq = _families(real_torch)[name]
            np.testing.assert_allclose(breg, real_torch.distributions.kl_divergence(rp, rq).detach().numpy(),
                                       rtol=1e-9)
    np.testing.assert_allclose(npy(_kl_expfamily_expfamily(p, p)), 0.0, atol=1e-10)


def test_bregman_kl_gradient_and_cross_families():
    loc = T([1.0, 0.5]).requires_grad_(True)
    p = D.Normal(T([0.3, -1.0]), T([0.8, 2.0]))
    q = D.Normal(loc, T([1.5, 0.6]))
    (g,) = torch.autograd.grad(_kl_expfamily_expfamily(p, q).sum(), loc)
    np.testing.assert_allclose(npy(g), (np.array([1.0, 0.5]) - [0.3, -1.0]) / np.array([1.5, 0.6]) ** 2, rtol=1e-9)
    # q with more batch dims than p: the inner products still reduce only each parameter's event dims
    pd = D.Dirichlet(T([1.5, 0.7, 2.0]))
    qd = D.Dirichlet(T([[0.9, 2.2, 1.0], [1.0, 1.0, 1.0]]))
    got = npy(_kl_expfamily_expfamily(pd, qd))
    assert got.shape == (2,)
    np.testing.assert_allclose(got, [npy(D.kl_divergence(pd, D.Dirichlet(qd.concentration[i]))) for i in range(2)],
                               rtol=1e-10)
    pw = D.Wishart(T(5.0), covariance_matrix=T(np.eye(2) + 0.3))
    qw = D.Wishart(T([4.0, 6.5]), covariance_matrix=T([[2.0, 0.1], [0.1, 0.5]]))
    got = npy(D.kl_divergence(pw, qw))
    want = [npy(D.kl_divergence(pw, D.Wishart(T(v), covariance_matrix=T([[2.0, 0.1], [0.1, 0.5]]))))
            for v in (4.0, 6.5)]
    np.testing.assert_allclose(got, want, rtol=1e-10)
    with pytest.raises(NotImplementedError, match="cross KL-divergence between different exponential families"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Gamma(1.0, 1.0))
    with pytest.raises(NotImplementedError, match="No KL"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Cauchy(0.0, 1.0))


def test_exponential_family_tree_matches_torch():
    ours = {n: getattr(D, n) for n in D.__all__ if isinstance(getattr(D, n), type)}
    fam = [n for n, c in ours.items() if issubclass(c, D.Distribution) and issubclass(c, D.ExponentialFamily)]
    assert set(fam) >= {"Normal", "Exponential", "Gamma", "Chi2", "Beta", "Dirichlet", "Bernoulli", "Poisson",
                        "ContinuousBernoulli", "Wishart", "ExponentialFamily"}
    if real_torch is not None:
        rd = real_torch.distributions
        for n, c in ours.items():
            if hasattr(rd, n) and isinstance(getattr(rd, n), type) and issubclass(c, D.Distribution):
                assert issubclass(c, D.ExponentialFamily) == issubclass(getattr(rd, n), rd.ExponentialFamily), n


def _expect(f, a, s, n=600001, t_max=80.0):
    """E f(X) for X ~ Pareto(s, a): X = s exp(T / a), T ~ Exponential(1), by the trapezoid rule in T."""
    t = np.linspace(0, t_max, n)
    return np.trapezoid(np.exp(-t) * f(s * np.exp(t / a)), t)


def _pareto_logpdf(x, s, a):
    return np.log(a) + a * np.log(s) - (a + 1) * np.log(x)


def _normal_logpdf(x, m, sd):
    return -0.5 * ((x - m) / sd) ** 2 - np.log(sd) - 0.5 * np.log(2 * np.pi)


PS, PA = np.array([0.8, 1.5]), np.array([4.5, 3.0])


def _pareto_q(lib, name, device=None):
    kw = {"dtype": lib.float64} if device is None else {"dtype": lib.float64, "device": device}

    def t(v):
        return lib.tensor(v, **kw)
    dd = lib.distributions
    return {"Pareto": dd.Pareto(t([0.5, 1.5]), t([2.0, 5.0])), "Exponential": dd.Exponential(t([0.7, 1.3])),
            "Gamma": dd.Gamma(t([2.0, 0.7]), t([1.1, 0.5])), "Normal": dd.Normal(t([1.0, -0.5]), t([1.5, 2.0]))}[name]


Q_LOGPDF = {
    "Pareto": lambda x, i: _pareto_logpdf(x, [0.5, 1.5][i], [2.0, 5.0][i]),
    "Exponential": lambda x, i: np.log([0.7, 1.3][i]) - [0.7, 1.3][i] * x,
    "Gamma": lambda x, i: ([2.0, 0.7][i] * np.log([1.1, 0.5][i]) - lgamma([2.0, 0.7][i])
                           + ([2.0, 0.7][i] - 1) * np.log(x) - [1.1, 0.5][i] * x),
    "Normal": lambda x, i: _normal_logpdf(x, [1.0, -0.5][i], [1.5, 2.0][i]),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("qname", sorted(Q_LOGPDF))
def test_kl_pareto_to(qname, device):
    p = D.Pareto(T(PS, device), T(PA, device))
    q = _pareto_q(torch, qname, device)
    got = npy(D.kl_divergence(p, q))
    want = [_expect(lambda x: _pareto_logpdf(x, PS[i], PA[i]) - Q_LOGPDF[qname](x, i), PA[i], PS[i])
            for i in range(2)]
    np.testing.assert_allclose(got, want, rtol=1e-7)
    if real_torch is not None:
        rp = real_torch.distributions.Pareto(real_torch.tensor(PS), real_torch.tensor(PA))
        np.testing.assert_allclose(got, real_torch.distributions.kl_divergence(rp, _pareto_q(real_torch, qname))
                                   .numpy(), rtol=1e-10)


def test_kl_pareto_limits_and_infinite_pairs():
    # p's support starts below q's, or p lacks the moments q's log density needs: infinite
    p = D.Pareto(T([0.4, 2.0, 1.0]), T([3.0, 3.0, 0.9]))
    q = D.Pareto(T([0.5, 0.5, 0.5]), T([2.0, 2.0, 2.0]))
    kl = npy(D.kl_divergence(p, q))
    assert kl[0] == math.inf and np.isfinite(kl[1:]).all()
    assert npy(D.kl_divergence(p, D.Exponential(T([1.0, 1.0, 1.0]))))[2] == math.inf  # alpha <= 1
    assert npy(D.kl_divergence(D.Pareto(T([1.0]), T([1.5])), D.Normal(T([0.0]), T([1.0]))))[0] == math.inf
    one = T([1.0])
    pairs = [(D.Beta(one, one), D.Pareto(one, one)), (D.ContinuousBernoulli(probs=T([0.3])), D.Pareto(one, one)),
             (D.Exponential(one), D.Pareto(one, one)), (D.Gamma(one, one), D.Pareto(one, one)),
             (D.Gumbel(one, one), D.Pareto(one, one)), (D.Laplace(one, one), D.Pareto(one, one)),
             (D.Normal(one, one), D.Pareto(one, one)), (D.Pareto(one, one), D.Beta(one, one)),
             (D.Pareto(one, one), D.ContinuousBernoulli(probs=T([0.3]))),
             (D.Pareto(one, one), D.Uniform(T([0.0]), T([5.0])))]
    for a, b in pairs:
        assert npy(D.kl_divergence(a, b))[0] == math.inf, (type(a).__name__, type(b).__name__)
    # Uniform -> Pareto: finite when the uniform sits above the Pareto's scale
    u = D.Uniform(T([0.9, 2.0, 0.2]), T([2.5, 4.0, 1.0]))
    q = D.Pareto(T([0.8, 1.5, 0.5]), T([2.0, 3.0, 1.0]))
    got = npy(D.kl_divergence(u, q))
    lo, hi, s, a = np.array([0.9, 2.0]), np.array([2.5, 4.0]), np.array([0.8, 1.5]), np.array([2.0, 3.0])
    x = np.linspace(0, 1, 100001)[:, None] * (hi - lo) + lo  # E over the uniform of -log(h - l) - log q
    want = np.trapezoid(-np.log(hi - lo) - _pareto_logpdf(x, s, a), x, axis=0) / (hi - lo)
    np.testing.assert_allclose(got[:2], want, rtol=1e-9)
    assert got[2] == math.inf
    if real_torch is not None:
        rd = real_torch.distributions
        ru = rd.Uniform(real_torch.tensor([0.9, 2.0, 0.2]), real_torch.tensor([2.5, 4.0, 1.0]))
        rq = rd.Pareto(real_torch.tensor([0.8, 1.5, 0.5]), real_torch.tensor([2.0, 3.0, 1.0]))
        np.testing.assert_allclose(got, rd.kl_divergence(ru, rq).double().numpy(), rtol=1e-6)
        rp = rd.Pareto(real_torch.tensor([0.4, 2.0, 1.0]), real_torch.tensor([3.0, 3.0, 0.9]))
        rq = rd.Pareto(real_torch.tensor([0.5, 0.5, 0.5]), real_torch.tensor([2.0, 2.0, 2.0]))
        np.testing.assert_allclose(kl, rd.kl_divergence(rp, rq).double().numpy(), rtol=1e-6)
