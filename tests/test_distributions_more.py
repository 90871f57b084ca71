"""pycuda_sem.distributions beyond Normal/Uniform/Bernoulli/Categorical:
the univariate families' log_prob, entropy, moments and cdf/icdf against
float64 closed forms (tests/dist_refs.py) and against torch.distributions
where torch imports; sampling checked statistically (sample mean within 5
standard errors, empirical cdf at three points within 5 binomial standard
errors, fixed seeds) and reproducible under manual_seed; torch.poisson,
torch.binomial and torch._standard_gamma by their frequencies."""
import math

import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import distributions as D

from dist_refs import gammainc, lgamma, univariate
from pycuda_sem._sampling_more import _standard_gamma_grad
from torch_oracle import _torch as real_torch  # torch where it imports, else None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]


def npy(t):
    return t.detach().cpu().double().numpy()


_rng = np.random.default_rng(0)
_POS = _rng.random(4) + 0.5
_POS2 = _rng.random(4) + 0.5
_LOC = _rng.standard_normal(4)
_U = _rng.random(4) * 0.8 + 0.1

# name: (params as float64 arrays, a point inside the support per entry, has cdf, has icdf)
CASES = {
    "Exponential": (dict(rate=_POS), _POS2, True, True),
    "Laplace": (dict(loc=_LOC, scale=_POS), _LOC + _POS2 - 1, True, True),
    "Cauchy": (dict(loc=_LOC, scale=_POS), _LOC + _POS2, True, True),
    "Gumbel": (dict(loc=_LOC, scale=_POS), _LOC - _POS2, True, True),
    "HalfNormal": (dict(scale=_POS), _POS2, True, True),
    "HalfCauchy": (dict(scale=_POS), _POS2, True, True),
    "LogNormal": (dict(loc=_LOC, scale=_POS), _POS2, True, True),
    "Gamma": (dict(concentration=_POS * 3, rate=_POS2), _POS2 * 2, True, False),
    "Chi2": (dict(df=_POS * 4), _POS2 * 2, True, False),
    "Beta": (dict(concentration1=_POS * 2, concentration0=_POS2 * 3), _U, False, False),
    "StudentT": (dict(df=_POS * 4 + 2, loc=_LOC, scale=_POS2), _LOC + _U, False, False),
    "Geometric": (dict(probs=_U), np.array([0.0, 1, 4, 2]), True, False),
    "Poisson": (dict(rate=_POS * 5), np.array([0.0, 3, 7, 2]), True, False),
    "Binomial": (dict(total_count=np.array([12.0, 12, 12, 12]), probs=_U), np.array([0.0, 3, 7, 2]), True, False),
}
NAMES = sorted(CASES)


def build(lib, name, params, device=None, dtype=None):
    kw = {k: (lib.tensor(v, dtype=dtype or lib.float64, device=device) if device is not None
              else lib.tensor(v, dtype=dtype or lib.float64)) for k, v in params.items()}
    mod = lib.distributions
    if name == "Binomial":
        return mod.Binomial(kw["total_count"], probs=kw["probs"])
    if name == "Geometric":
        return mod.Geometric(probs=kw["probs"])
    return getattr(mod, name)(**kw)


def _gammainc_missing():
    try:
        torch.special.gammainc(torch.tensor([1.0]), torch.tensor([1.0]))
        return False
    except (NotImplementedError, AttributeError):
        return True


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", NAMES)
def test_closed_forms(name, device):
    params, x, has_cdf, has_icdf = CASES[name]
    d = build(torch, name, params, device)
    want = univariate(name, params, x)
    xt = torch.tensor(x, dtype=torch.float64, device=device)
    assert d.batch_shape == (4,) and d.event_shape == ()
    np.testing.assert_allclose(npy(d.log_prob(xt)), want["log_prob"], rtol=1e-9, atol=1e-11)
    for attr in ("mean", "variance"):
        if attr in want:
            np.testing.assert_allclose(npy(getattr(d, attr)), want[attr], rtol=1e-9)
    if "variance" in want:
        np.testing.assert_allclose(npy(d.stddev), np.sqrt(want["variance"]), rtol=1e-9)
    if "entropy" in want:
        np.testing.assert_allclose(npy(d.entropy()), want["entropy"], rtol=1e-8, atol=1e-10)
    if has_cdf and name in ("Gamma", "Chi2") and _gammainc_missing():
        with pytest.raises(NotImplementedError):
            d.cdf(xt)
    elif has_cdf and name not in ("Geometric", "Poisson", "Binomial"):
        np.testing.assert_allclose(npy(d.cdf(xt)), want["cdf"], rtol=1e-8, atol=1e-10)
    if has_icdf:
        q = torch.tensor(_U, dtype=torch.float64, device=device)
        np.testing.assert_allclose(npy(d.cdf(d.icdf(q))), _U, rtol=1e-9)
    if real_torch is not None:
        r = build(real_torch, name, params)
        rx = real_torch.tensor(x)
        np.testing.assert_allclose(npy(d.log_prob(xt)), r.log_prob(rx).numpy(), rtol=1e-10, atol=1e-12)
        for attr in ("mean", "mode", "variance"):
            np.testing.assert_allclose(npy(getattr(d, attr)), getattr(r, attr).numpy(), rtol=1e-10)
        try:
            want_h = r.entropy().numpy()
        except NotImplementedError:
            want_h = None
        if want_h is not None:
            np.testing.assert_allclose(npy(d.entropy()), want_h, rtol=1e-10, atol=1e-12)
        # The reference lives on the CPU: a bound tensor's device is not compared.
        assert repr(d.support).replace("pycuda_sem", "torch").replace(", device='cuda:0'", "") == repr(r.support)
        assert d.has_rsample == r.has_rsample


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", NAMES)
def test_sampling_statistics(name, device):
    params, _, _, _ = CASES[name]
    d = build(torch, name, params, device, dtype=torch.float32)
    n = 100000
    torch.manual_seed(1234)
    s = npy(d.sample((n,)))
    assert s.shape == (n, 4) and np.isfinite(s).all()
    torch.manual_seed(1234)
    np.testing.assert_array_equal(npy(d.sample((n,))), s)  # reproducible under manual_seed
    ref = univariate(name, params, CASES[name][1])
    if "variance" in ref:  # the mean within 5 standard errors
        se = np.sqrt(ref["variance"] / n)
        assert np.all(np.abs(s.mean(0) - ref["mean"]) < 5 * se), (s.mean(0), ref["mean"], se)
    # the empirical cdf at the 25, 50 and 75 % points of the sample, against the reference cdf
    if name in ("Beta", "StudentT"):
        return  # no closed cdf here; their moments are checked above
    for qv in (0.25, 0.5, 0.75):
        pts = np.quantile(s, qv, axis=0)
        f = univariate(name, params, pts)["cdf"]
        emp = (s <= pts).mean(0)
        se = np.sqrt(np.maximum(f * (1 - f), 1e-4) / n)
        assert np.all(np.abs(emp - f) < 5 * se + 1e-12), (name, qv, emp, f)


@pytest.mark.parametrize("device", DEVICES)
def test_samplers_by_frequency(device):
    """torch.poisson / torch.binomial: the frequency of each k against the pmf
    (5 standard errors), through both methods of each (small and large means)."""
    n = 60000
    torch.manual_seed(5)
    for lam in (3.5, 40.0):
        s = npy(torch.poisson(torch.full((n,), lam, device=device)))
        for k in range(int(lam) - 3, int(lam) + 4):
            f = math.exp(k * math.log(lam) - lam - math.lgamma(k + 1))
            assert abs((s == k).mean() - f) < 5 * math.sqrt(f * (1 - f) / n), (lam, k)
    for cnt, p in ((8, 0.3), (200, 0.7), (60, 0.5)):
        s = npy(torch.binomial(torch.full((n,), float(cnt), device=device), torch.full((n,), p, device=device)))
        assert s.min() >= 0 and s.max() <= cnt and np.all(s == np.round(s))
        mode = int((cnt + 1) * p)
        for k in range(max(mode - 3, 0), mode + 4):
            f = math.exp(math.lgamma(cnt + 1) - math.lgamma(k + 1) - math.lgamma(cnt - k + 1)
                         + k * math.log(p) + (cnt - k) * math.log1p(-p))
            assert abs((s == k).mean() - f) < 5 * math.sqrt(f * (1 - f) / n), (cnt, p, k)
    s = npy(torch._standard_gamma(torch.tensor([0.3, 1.0, 7.5], device=device).expand(n, 3).contiguous()))
    a = np.array([0.3, 1.0, 7.5])
    assert np.all(s > 0) and np.all(np.abs(s.mean(0) - a) < 5 * np.sqrt(a / n))
    assert np.all(np.abs(s.var(0) / a - 1) < 0.08)
    with pytest.raises(RuntimeError):
        torch.poisson(torch.tensor([-1.0], device=device))
    with pytest.raises(RuntimeError):
        torch.binomial(torch.tensor([3.0], device=device), torch.tensor([1.5], device=device))


def test_edge_parameters_of_samplers():
    z = torch.poisson(torch.zeros(5))
    assert npy(z).tolist() == [0.0] * 5
    b = torch.binomial(torch.tensor([0.0, 7.0, 7.0]), torch.tensor([0.4, 0.0, 1.0]))
    assert npy(b).tolist() == [0.0, 0.0, 7.0]
    assert npy(torch._standard_gamma(torch.zeros(3))).tolist() == [0.0] * 3
    g = torch.Generator().manual_seed(3)
    a1 = torch.poisson(torch.full((50,), 20.0), generator=g)
    g.manual_seed(3)
    assert torch.equal(a1, torch.poisson(torch.full((50,), 20.0), generator=g))
    with pytest.raises(TypeError):
        torch.poisson([1.0, 2.0])


@pytest.mark.parametrize("device", DEVICES)
def test_rsample_gradients(device):
    rate = torch.tensor([0.5, 2.0], device=device, requires_grad=True)
    torch.manual_seed(0)
    x = D.Exponential(rate).rsample((50000,))
    x.mean(0).sum().backward()
    # d/drate E[E / rate] = -1 / rate^2; the sample mean of -x / rate, within 5 standard errors
    se = (1 / rate.detach() ** 2).cpu().numpy() / math.sqrt(50000)
    assert np.all(np.abs(npy(rate.grad) + 1 / np.array([0.25, 4.0])) < 5 * se)
    # Gamma: x = g / rate, exact in the rate; in the concentration the implicit gradient,
    # whose mean over draws is d/dc E[x] = 1 / rate (5 standard errors of the per-draw values)
    conc = torch.tensor([0.4, 3.0], device=device, requires_grad=True)
    rate2 = torch.tensor([1.0, 4.0], device=device, requires_grad=True)
    n = 100000
    torch.manual_seed(1)
    g = D.Gamma(conc, rate2).rsample((n,))
    gc, gr = torch.autograd.grad(g.sum(), (conc, rate2))
    np.testing.assert_allclose(npy(gr), -npy(g).sum(0) / npy(rate2), rtol=1e-4)  # float32 sums of 1e5 terms
    per_draw = npy(_standard_gamma_grad(conc.detach().expand(n, 2), g.detach() * rate2.detach())) / npy(rate2)
    np.testing.assert_allclose(npy(gc), per_draw.sum(0), rtol=1e-4)
    se = per_draw.std(0) / math.sqrt(n)
    assert np.all(np.abs(npy(gc) / n - 1 / npy(rate2)) < 5 * se), (npy(gc) / n, se)
    # Beta: d/dc1 E[x] = c0 / (c1 + c0)^2, the mean of the per-draw gradients (3 % here)
    c1 = torch.tensor([2.0], device=device, requires_grad=True)
    c0 = torch.tensor([3.0], device=device)
    (gb,) = torch.autograd.grad(D.Beta(c1, c0).rsample((n,)).sum(), c1)
    assert abs(npy(gb)[0] / n - 3.0 / 25.0) < 0.03 * 3.0 / 25.0
    df = torch.tensor([5.0], device=device, requires_grad=True)
    st = D.StudentT(df, torch.zeros(1, device=device)).rsample((100,))
    assert np.isfinite(npy(torch.autograd.grad(st.pow(2).sum(), df)[0])).all()


def test_standard_gamma_grad_against_numeric_derivative():
    """dx/da = -(dP/da) / pdf with P's derivative by central differences of the series of dist_refs."""
    a = np.array([0.3, 1.0, 2.5, 7.0, 50.0])
    x = np.array([0.05, 2.0, 1.0, 9.0, 45.0])
    h = 1e-6
    pdf = np.exp((a - 1) * np.log(x) - x - lgamma(a))
    want = -(gammainc(a + h, x) - gammainc(a - h, x)) / (2 * h) / pdf
    got = npy(_standard_gamma_grad(torch.tensor(a, dtype=torch.float64), torch.tensor(x, dtype=torch.float64)))
    np.testing.assert_allclose(got, want, rtol=1e-6)
    if real_torch is not None:  # torch's approximation is good to about 1e-4
        np.testing.assert_allclose(got, real_torch._standard_gamma_grad(real_torch.tensor(a), real_torch.tensor(x)).numpy(),
                                   rtol=2e-4)


@pytest.mark.parametrize("device", DEVICES)
def test_rsample_location_scale(device):
    # location/scale families: x = loc + scale * eps, so dx/dloc = 1
    loc = torch.tensor([0.3, -1.0], device=device, requires_grad=True)
    scale = torch.tensor([1.0, 2.0], device=device)
    for cls in (D.Laplace, D.Cauchy, D.Gumbel, D.LogNormal):
        y = cls(loc, scale).rsample((10,))
        (gl,) = torch.autograd.grad(y.sum() if cls is not D.LogNormal else y.log().sum(), loc)
        np.testing.assert_allclose(npy(gl), [10.0, 10.0], rtol=1e-5)
    st = D.StudentT(torch.tensor([5.0], device=device), loc[:1], scale[:1]).rsample((7,))
    assert torch.autograd.grad(st.sum(), loc)[0].shape == (2,)


def test_validation_messages():
    with pytest.raises(ValueError, match=r"Expected parameter rate \(Tensor of shape \(2,\)\) of distribution "
                                         r"Exponential\(rate: .*\) to satisfy the constraint "
                                         r"GreaterThan\(lower_bound=0.0\), but found invalid values"):
        D.Exponential(torch.tensor([1.0, -1.0]))
    D.Exponential(torch.tensor([1.0, -1.0]), validate_args=False)
    d = D.Exponential(torch.tensor([1.0, 2.0]))
    with pytest.raises(ValueError, match=r"Expected value argument \(Tensor of shape \(2,\)\) to be within the "
                                         r"support \(GreaterThanEq\(lower_bound=0.0\)\)"):
        d.log_prob(torch.tensor([1.0, -1.0]))
    with pytest.raises(ValueError, match="The value argument to log_prob must be a Tensor"):
        d.log_prob(1.0)
    with pytest.raises(ValueError, match="Value is not broadcastable with batch_shape"):
        d.log_prob(torch.ones(3))
    with pytest.raises(ValueError, match="Interval"):
        D.Beta(torch.tensor([1.0]), torch.tensor([1.0])).log_prob(torch.tensor([1.5]))
    with pytest.raises(ValueError, match="IntegerInterval"):
        D.Binomial(5, torch.tensor([0.5])).log_prob(torch.tensor([6.0]))
    with pytest.raises(NotImplementedError, match="Inhomogeneous total count"):
        D.Binomial(torch.tensor([3.0, 4.0]), torch.tensor([0.5, 0.5])).entropy()
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        D.Geometric()
    with pytest.raises(ValueError, match="probs"):
        D.Geometric(torch.tensor([0.0]))
    with pytest.raises(ValueError, match="concentration"):
        D.Dirichlet(torch.tensor([1.0, -2.0]))
    with pytest.raises(ValueError, match="one-dimensional"):
        D.Dirichlet(torch.tensor(1.0))
    with pytest.raises(AttributeError, match="NoSuchDistribution"):
        D.NoSuchDistribution  # every torch.distributions name exists now (VonMises & co.: test_distributions_extra*.py)
    if real_torch is not None:
        try:
            real_torch.distributions.Exponential(real_torch.tensor([1.0, -1.0]))
        except ValueError as e:
            assert "to satisfy the constraint GreaterThan(lower_bound=0.0)" in str(e)


@pytest.mark.parametrize("name", NAMES)
def test_expand(name):
    params, x, _, _ = CASES[name]
    d = build(torch, name, params)
    e = d.expand((3, 4))
    assert e.batch_shape == (3, 4) and e.sample((2,)).shape == (2, 3, 4)
    lp = npy(e.log_prob(torch.tensor(x)))
    np.testing.assert_allclose(lp, np.broadcast_to(npy(d.log_prob(torch.tensor(x))), (3, 4)), rtol=1e-12)
