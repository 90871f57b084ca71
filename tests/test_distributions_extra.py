"""pycuda_sem.distributions, the univariate families added last: VonMises,
Weibull, Pareto, Kumaraswamy, InverseGamma, FisherSnedecor,
GeneralizedPareto and NegativeBinomial. log_prob, moments, entropy and cdf
against float64 closed forms (tests/dist_refs_extra.py) and against torch
where it imports (plus support repr and has_rsample); sampling statistically
(1e5 draws, fixed seeds: the mean within 5 standard errors, the empirical cdf
at three quantiles within 5 binomial standard errors); rsample gradients
(the mean of per-draw gradients within 5 standard errors of d mean / d
parameter); expand; validate_args errors."""
import math
import re

import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import distributions as D

from dist_refs_extra import bessel_i, univariate
from torch_oracle import _torch as real_torch  # torch where it imports, else None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]


def npy(t):
    return t.detach().cpu().double().numpy()


_rng = np.random.default_rng(38)
_POS = _rng.random(4) + 0.5
_POS2 = _rng.random(4) + 0.5
_LOC = _rng.standard_normal(4)
_U = _rng.random(4) * 0.8 + 0.1

# name: (params, a point inside the support per entry, has cdf, has icdf)
CASES = {
    "VonMises": (dict(loc=_LOC, concentration=np.array([0.3, 1.5, 4.0, 12.0])), _LOC + 2 * _U - 1, False, False),
    "Weibull": (dict(scale=_POS * 2, concentration=np.array([0.7, 1.5, 2.5, 4.0])), _POS2, True, True),
    "Pareto": (dict(scale=_POS, alpha=np.array([2.5, 3.5, 5.0, 8.0])), _POS + _POS2, True, True),
    "Kumaraswamy": (dict(concentration1=np.array([0.7, 1.5, 2.5, 4.0]),
                         concentration0=np.array([1.2, 3.0, 0.8, 5.0])), _U, True, True),
    "InverseGamma": (dict(concentration=np.array([2.5, 3.5, 5.0, 8.0]), rate=_POS * 2), _POS2, True, False),
    "FisherSnedecor": (dict(df1=np.array([3.0, 5.5, 10.0, 2.5]), df2=np.array([5.0, 7.5, 12.0, 9.0])), _POS2,
                       False, False),
    "GeneralizedPareto": (dict(loc=_LOC, scale=_POS, concentration=np.array([-0.3, 0.0, 0.2, 0.4])),
                          _LOC + _U * _POS, True, True),
    "NegativeBinomial": (dict(total_count=np.array([2.0, 3.5, 0.7, 10.0]), probs=_U), np.array([0.0, 3, 1, 12]),
                         False, False),
}
NAMES = sorted(CASES)
# torch's ordinary draws; True where reparameterised (as torch)
RSAMPLE = {"VonMises": False, "Weibull": True, "Pareto": True, "Kumaraswamy": True, "InverseGamma": True,
           "FisherSnedecor": True, "GeneralizedPareto": True, "NegativeBinomial": False}


def build(lib, name, params, device="cpu", dtype=None, **kw):
    args = {k: lib.tensor(v, dtype=dtype or lib.float64, device=device) for k, v in params.items()}
    if name == "NegativeBinomial":
        return lib.distributions.NegativeBinomial(args["total_count"], probs=args["probs"], **kw)
    return getattr(lib.distributions, name)(**args, **kw)


def _torch_has(name):
    return real_torch is not None and hasattr(real_torch.distributions, name)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", NAMES)
def test_closed_forms(name, device):
    params, x, has_cdf, has_icdf = CASES[name]
    d = build(torch, name, params, device)
    want = univariate(name, params, x)
    xt = torch.tensor(x, dtype=torch.float64, device=device)
    assert d.batch_shape == (4,) and d.event_shape == ()
    assert d.has_rsample == RSAMPLE[name]
    np.testing.assert_allclose(npy(d.log_prob(xt)), want["log_prob"], rtol=1e-9, atol=1e-11)
    for attr in ("mean", "variance", "mode"):
        np.testing.assert_allclose(npy(getattr(d, attr)), want[attr], rtol=1e-9, equal_nan=True)
    if "entropy" in want:
        np.testing.assert_allclose(npy(d.entropy()), want["entropy"], rtol=1e-8, atol=1e-9)  # digamma ref ~1e-10
    else:
        with pytest.raises(NotImplementedError):
            d.entropy()  # torch has none for these either
    if has_cdf:
        np.testing.assert_allclose(npy(d.cdf(xt)), want["cdf"], rtol=1e-9, atol=1e-12)
    if has_icdf:
        q = torch.tensor(_U, dtype=torch.float64, device=device)
        np.testing.assert_allclose(npy(d.cdf(d.icdf(q))), _U, rtol=1e-9)
    if _torch_has(name):
        # torch's GeneralizedPareto compares its concentration with a float32 zero
        # (float64 parameters fail there), so it is run in float32; torch's
        # VonMises uses a 1e-7-accurate polynomial for the Bessel functions
        dt = real_torch.float32 if name == "GeneralizedPareto" else real_torch.float64
        tol = {"GeneralizedPareto": 2e-5, "VonMises": 1e-5}.get(name, 1e-9)
        r = build(real_torch, name, params, dtype=dt)
        rx = real_torch.tensor(x, dtype=dt)
        np.testing.assert_allclose(npy(d.log_prob(xt)), r.log_prob(rx).double().numpy(), rtol=tol, atol=tol)
        # torch's Kumaraswamy.mode takes log(1 - b): NaN for every b > 1 (compared with the definition above)
        for attr in ("mean", "variance") + (("mode",) if name != "Kumaraswamy" else ()):
            np.testing.assert_allclose(npy(getattr(d, attr)), getattr(r, attr).double().numpy(), rtol=tol,
                                       equal_nan=True)
        if "entropy" in want:
            np.testing.assert_allclose(npy(d.entropy()), r.entropy().double().numpy(), rtol=tol, atol=tol)
        if has_cdf:
            np.testing.assert_allclose(npy(d.cdf(xt)), r.cdf(rx).double().numpy(), rtol=tol, atol=tol)
        # the reference is on the CPU: device, dtype and line wrapping are not compared
        def plain(s):
            s = re.sub(r",\s*(device='cuda:\d+'|dtype=torch\.float64)", "", s.replace("pycuda_sem", "torch"))
            return re.sub(r"\s+", " ", s)
        assert plain(repr(d.support)) == plain(repr(r.support))
        assert d.has_rsample == r.has_rsample
        assert sorted(d.arg_constraints) == sorted(r.arg_constraints)


def test_von_mises_bessel_terms():
    # log I0 through i0e stays finite and accurate far beyond where I0 overflows float32
    k = np.array([1e-6, 0.05, 3.75, 40.0, 700.0])
    d = D.VonMises(torch.zeros(5, dtype=torch.float64), torch.tensor(k, dtype=torch.float64))
    lp0 = npy(d.log_prob(torch.zeros(5, dtype=torch.float64)))
    np.testing.assert_allclose(lp0[:4], k[:4] - np.log(2 * np.pi * bessel_i(0, k[:4])), rtol=1e-12)
    # the large-kappa limit: a normal of variance 1 / kappa, log I0 ~ k - log(2 pi k) / 2 (1 + 1/(8k))
    assert lp0[4] == pytest.approx(0.5 * np.log(700 / (2 * np.pi)) - np.log1p(1 / 5600), rel=1e-6)
    c = torch.tensor([0.5, 2.0, 9.0], dtype=torch.float64, requires_grad=True)
    lp = D.VonMises(torch.tensor(0.2, dtype=torch.float64), c).log_prob(torch.tensor(1.0, dtype=torch.float64))
    (g,) = torch.autograd.grad(lp.sum(), c)
    kc = npy(c)
    np.testing.assert_allclose(npy(g), np.cos(0.8) - bessel_i(1, kc) / bessel_i(0, kc), rtol=1e-10)


@pytest.mark.parametrize("device", DEVICES)
def test_von_mises_sampling(device):
    k = np.array([1e-7, 0.3, 2.0, 50.0])
    loc = np.array([3.0, -1.0, 0.5, -3.1])
    d = D.VonMises(torch.tensor(loc, dtype=torch.float32, device=device),
                   torch.tensor(k, dtype=torch.float32, device=device))
    n = 100000
    torch.manual_seed(5)
    s = d.sample((n,))
    assert s.dtype == torch.float32 and tuple(s.shape) == (n, 4) and not s.requires_grad
    s = npy(s)
    assert np.all(s >= -math.pi) and np.all(s <= math.pi)
    torch.manual_seed(5)
    np.testing.assert_array_equal(npy(d.sample((n,))), s)
    # circular moments: E cos(X - loc) = I1/I0, E sin(X - loc) = 0, E cos 2(X - loc) = I2/I0
    a1 = bessel_i(1, k) / bessel_i(0, k)
    a2 = bessel_i(2, k) / bessel_i(0, k)
    c1, s1, c2 = np.cos(s - loc), np.sin(s - loc), np.cos(2 * (s - loc))
    var_c1 = (1 + a2) / 2 - a1 ** 2
    var_s1 = (1 - a2) / 2
    assert np.all(np.abs(c1.mean(0) - a1) < 5 * np.sqrt(var_c1 / n) + 1e-6), (c1.mean(0), a1)
    assert np.all(np.abs(s1.mean(0)) < 5 * np.sqrt(var_s1 / n) + 1e-6)
    assert np.all(np.abs(c2.mean(0) - a2) < 5 * np.sqrt(0.5 / n) + 1e-6)
    with pytest.raises(NotImplementedError):
        d.rsample()
    if real_torch is not None:
        assert not real_torch.distributions.VonMises(real_torch.tensor(0.0), real_torch.tensor(1.0)).has_rsample


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", [n for n in NAMES if n != "VonMises"])
def test_sampling_statistics(name, device):
    params, x, has_cdf, _ = CASES[name]
    d = build(torch, name, params, device)
    n = 100000
    torch.manual_seed(1234)
    s = npy(d.sample((n,)))
    assert s.shape == (n, 4) and np.isfinite(s).all()
    torch.manual_seed(1234)
    np.testing.assert_array_equal(npy(d.sample((n,))), s)  # reproducible under manual_seed
    ref = univariate(name, params, x)
    se = np.sqrt(ref["variance"] / n)
    assert np.all(np.abs(s.mean(0) - ref["mean"]) < 5 * se), (s.mean(0), ref["mean"], se)
    if name == "NegativeBinomial":  # the frequencies of three counts against the pmf
        for k in (0.0, 1.0, 3.0):
            f = np.exp(univariate(name, params, np.full(4, k))["log_prob"])
            emp = (s == k).mean(0)
            assert np.all(np.abs(emp - f) < 5 * np.sqrt(f * (1 - f) / n) + 1e-12), (k, emp, f)
        assert np.all(s == np.round(s)) and np.all(s >= 0)
    if has_cdf:
        for qv in (0.25, 0.5, 0.75):
            pts = np.quantile(s, qv, axis=0)
            f = univariate(name, params, pts)["cdf"]
            emp = (s <= pts).mean(0)
            assert np.all(np.abs(emp - f) < 5 * np.sqrt(f * (1 - f) / n) + 1e-12), (name, qv, emp, f)
    if name == "FisherSnedecor":  # no cdf in torch: the sample variance instead (df2 > 8 has a 4th moment)
        assert abs(s[:, 2].var() - ref["variance"][2]) < 0.1 * ref["variance"][2]


# one parameter point per family, for the gradient of the mean
GRAD_CASES = {
    "Weibull": dict(scale=1.3, concentration=2.2),
    "Pareto": dict(scale=0.8, alpha=4.5),
    "Kumaraswamy": dict(concentration1=1.7, concentration0=2.6),
    "InverseGamma": dict(concentration=5.5, rate=1.6),
    "FisherSnedecor": dict(df1=6.0, df2=14.0),
    "GeneralizedPareto": dict(loc=0.3, scale=1.4, concentration=0.15),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_rsample_gradients(name, device):
    # n copies of one parameter point: each draw's gradient lands in its own
    # entry, so their mean estimates d E[X] / d theta with a known standard error
    point = GRAD_CASES[name]
    n = 100000
    leaves = {k: torch.full((n,), v, dtype=torch.float64, device=device, requires_grad=True)
              for k, v in point.items()}
    d = getattr(D, name)(**leaves)
    torch.manual_seed(7)
    x = d.rsample()
    grads = torch.autograd.grad(x.sum(), list(leaves.values()))
    for (k, v), g in zip(point.items(), grads):
        g = npy(g)
        h = 1e-6 * max(1.0, abs(v))
        with np.errstate(all="ignore"):  # only the mean is read
            up = univariate(name, {**point, k: v + h}, np.zeros(1))["mean"]
            dn = univariate(name, {**point, k: v - h}, np.zeros(1))["mean"]
        want = (up - dn) / (2 * h)
        assert abs(g.mean() - want) < 5 * g.std() / math.sqrt(n) + 1e-9, (name, k, g.mean(), want)
    assert not d.sample().requires_grad


@pytest.mark.parametrize("name", NAMES)
def test_expand_and_shapes(name):
    params, x, _, _ = CASES[name]
    d = build(torch, name, params)
    e = d.expand((3, 4))
    assert type(e) is type(d) and e.batch_shape == (3, 4) and e.sample((2,)).shape == (2, 3, 4)
    xt = torch.tensor(x, dtype=torch.float64)
    np.testing.assert_allclose(npy(e.log_prob(xt)), np.broadcast_to(npy(d.log_prob(xt)), (3, 4)), rtol=1e-12)
    np.testing.assert_allclose(npy(e.mean), np.broadcast_to(npy(d.mean), (3, 4)), rtol=1e-12)
    assert d.sample().shape == (4,) and d.sample((5, 2)).shape == (5, 2, 4)
    scalar = build(torch, name, {k: v[1] for k, v in params.items()})
    assert scalar.batch_shape == () and scalar.sample((3,)).shape == (3,)


def test_scalar_arguments_and_dtypes():
    # plain numbers broadcast to default-dtype tensors, as in torch
    for d in (D.Weibull(1.0, 2.0), D.Pareto(1.0, 3.0), D.Kumaraswamy(2.0, 3.0), D.InverseGamma(3.0, 2.0),
              D.FisherSnedecor(4.0, 6.0), D.GeneralizedPareto(0.0, 1.0, 0.1), D.NegativeBinomial(3.0, 0.5),
              D.VonMises(0.0, 1.0)):
        assert d.batch_shape == () and d.sample().dtype == torch.float32, type(d)
    d = D.Weibull(torch.tensor([1.0, 2.0]), torch.tensor([1.5, 3.0]))
    assert d.rsample((3,)).dtype == torch.float32 and d.log_prob(torch.tensor([0.5, 1.0])).dtype == torch.float32
    nb = D.NegativeBinomial(torch.tensor([2.0, 5.0]), logits=torch.tensor([-0.3, 0.4]))
    np.testing.assert_allclose(npy(nb.probs), 1 / (1 + np.exp([0.3, -0.4])), rtol=1e-6)
    np.testing.assert_allclose(npy(nb.mean), [2 * np.exp(-0.3), 5 * np.exp(0.4)], rtol=1e-6)
    assert nb.param_shape == (2,)
    # total_count 0: the point mass at 0
    z = D.NegativeBinomial(torch.tensor([0.0]), probs=torch.tensor([0.4]))
    assert npy(z.log_prob(torch.tensor([0.0])))[0] == 0.0 and npy(z.sample((10,))).sum() == 0


def test_generalized_pareto_support_and_tails():
    gp = D.GeneralizedPareto(torch.tensor(1.0, dtype=torch.float64), torch.tensor(2.0, dtype=torch.float64),
                             torch.tensor(-0.5, dtype=torch.float64))
    assert float(gp.support.upper_bound) == pytest.approx(5.0)  # loc - scale / c
    assert npy(gp.cdf(torch.tensor(5.0, dtype=torch.float64))) == pytest.approx(1.0)
    u = D.GeneralizedPareto(torch.tensor(0.0, dtype=torch.float64), torch.tensor(2.0, dtype=torch.float64),
                            torch.tensor(-1.0, dtype=torch.float64))  # the uniform on [0, 2]
    np.testing.assert_allclose(npy(u.log_prob(torch.tensor([0.3, 1.7], dtype=torch.float64))), [-np.log(2)] * 2)
    heavy = D.GeneralizedPareto(torch.tensor([0.0, 0.0]), torch.tensor([1.0, 1.0]), torch.tensor([0.7, 1.2]))
    assert np.isnan(npy(heavy.variance)).all() and np.isnan(npy(heavy.mean))[1] and np.isfinite(npy(heavy.mean))[0]
    lsf = npy(gp.log_survival_function(torch.tensor([2.0], dtype=torch.float64)))
    np.testing.assert_allclose(lsf, [2.0 * np.log1p(-0.5 * 0.5)], rtol=1e-12)  # -log1p(c z) / c
    heavy_pareto = D.Pareto(torch.tensor([1.0]), torch.tensor([0.5]))  # alpha <= 1: no mean, no variance
    assert np.isinf(npy(heavy_pareto.mean)).all() and np.isinf(npy(heavy_pareto.variance)).all()


def _raises(fn, match, torch_fn=None):
    with pytest.raises(ValueError, match=match):
        fn(torch)
    if real_torch is not None and torch_fn is not False:
        with pytest.raises(ValueError, match=match):
            (torch_fn or fn)(real_torch)


def test_validate_args_errors():
    t = torch.tensor
    _raises(lambda m: m.distributions.VonMises(m.tensor([0.0]), m.tensor([-1.0])), "concentration")
    _raises(lambda m: m.distributions.Weibull(m.tensor([-1.0]), m.tensor([1.0])), "scale")
    # Pareto's alpha is its base Exponential's rate, checked there first (as in torch)
    _raises(lambda m: m.distributions.Pareto(m.tensor([1.0]), m.tensor([0.0])), "rate")
    _raises(lambda m: m.distributions.Pareto(m.tensor([1.0]), m.tensor([2.0])).log_prob(m.tensor([0.5])),
            "within the support")
    _raises(lambda m: m.distributions.Kumaraswamy(m.tensor([1.0]), m.tensor([2.0])).log_prob(m.tensor([1.5])),
            "within the support")
    _raises(lambda m: m.distributions.InverseGamma(m.tensor([1.0]), m.tensor([-2.0])), "rate")
    # torch names its inner Gamma's concentration here, we name df1; both say which constraint
    _raises(lambda m: m.distributions.FisherSnedecor(m.tensor([-1.0]), m.tensor([2.0])), "GreaterThan")
    with pytest.raises(ValueError, match="df1"):
        D.FisherSnedecor(t([-1.0]), t([2.0]))
    _raises(lambda m: m.distributions.GeneralizedPareto(m.tensor([0.0]), m.tensor([-1.0]), m.tensor([0.1])),
            "scale")
    _raises(lambda m: m.distributions.GeneralizedPareto(m.tensor([0.0]), m.tensor([1.0]), m.tensor([0.1]))
            .log_prob(m.tensor([-0.5])), "within the support",
            torch_fn=None if _torch_has("GeneralizedPareto") else False)
    _raises(lambda m: m.distributions.NegativeBinomial(m.tensor([2.0]), probs=m.tensor([1.0])), "probs")
    _raises(lambda m: m.distributions.NegativeBinomial(m.tensor([-2.0]), probs=m.tensor([0.5])), "total_count")
    _raises(lambda m: m.distributions.NegativeBinomial(m.tensor([2.0])), "Either `probs` or `logits`")
    _raises(lambda m: m.distributions.NegativeBinomial(m.tensor([2.0]), probs=m.tensor([0.5]))
            .log_prob(m.tensor([1.5])), "within the support")
    # validate_args=False lets bad values through
    D.Weibull(t([-1.0]), t([1.0]), validate_args=False)
    D.Pareto(t([1.0]), t([2.0]), validate_args=False).log_prob(t([0.5]))
    with pytest.raises(AttributeError):
        D.NoSuchDistribution
