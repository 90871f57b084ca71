"""pycuda_sem.special's incomplete gamma, zeta, polygamma, Bessel, Airy and
orthogonal-polynomial functions: against independent float64 references
(power series summed with math.fsum, closed forms, NumPy's polynomial
module, Wronskian identities, exponentially convergent trapezoid sums of
periodic integrals) always, and against torch.special where torch imports.
Tolerances: float64 about 1e-13 relative (looser near zeros of J and Y,
where only absolute accuracy is meaningful), float32 about 1e-6."""
import math

import numpy as np
import pytest

import pycuda_sem as torch

from torch_oracle import _torch as real_torch  # torch where it imports, else None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
EULER = 0.5772156649015329


def npy(t):
    return t.detach().cpu().double().numpy()


def T(x, device, dtype=torch.float64):
    return torch.tensor(np.asarray(x, dtype=np.float64), dtype=dtype, device=device)


# ---- float64 references -------------------------------------------------------------

def _i_series(n, x):
    """I_n(x) = sum (x/2)^(2k+n) / (k! (k+n)!), all terms positive."""
    terms, k, t = [], 0, (x / 2) ** n / math.factorial(n)
    while True:
        terms.append(t)
        k += 1
        t = t * (x / 2) ** 2 / (k * (k + n))
        if t < 1e-18 * terms[0] and k > 5:
            return math.fsum(terms)


def _j_trapezoid(n, x, m=400):
    """J_n(x) = (1/pi) int_0^pi cos(n t - x sin t) dt: the trapezoid rule on a
    periodic integrand converges exponentially."""
    ts = np.arange(m) * (2 * math.pi / m)
    return float(np.mean(np.cos(n * ts - x * np.sin(ts))))


def _j_series(n, x):
    return math.fsum((-1) ** k * (x / 2) ** (2 * k + n) / (math.factorial(k) * math.factorial(k + n))
                     for k in range(60))


def _y0_series(x):
    h = [0.0]
    for k in range(1, 60):
        h.append(h[-1] + 1 / k)
    s = math.fsum((-1) ** (k + 1) * h[k] * (x * x / 4) ** k / math.factorial(k) ** 2 for k in range(1, 60))
    return 2 / math.pi * ((math.log(x / 2) + EULER) * _j_series(0, x) + s)


def _y1_series(x):
    psi = [-EULER]
    for k in range(1, 62):
        psi.append(psi[-1] + 1 / k)  # psi(k + 1)
    s = math.fsum((-1) ** k * (psi[k] + psi[k + 1]) * (x / 2) ** (2 * k + 1)
                  / (math.factorial(k) * math.factorial(k + 1)) for k in range(60))
    return -2 / (math.pi * x) + 2 / math.pi * math.log(x / 2) * _j_series(1, x) - s / math.pi


def _k_series(n, x):
    """K0 / K1 for small x from their power series."""
    h = [0.0]
    for k in range(1, 62):
        h.append(h[-1] + 1 / k)
    if n == 0:
        s = math.fsum((x * x / 4) ** k / math.factorial(k) ** 2 * h[k] for k in range(60))
        return -(math.log(x / 2) + EULER) * _i_series(0, x) + s
    s = math.fsum((x / 2) ** (2 * k + 1) / (math.factorial(k) * math.factorial(k + 1)) * (h[k] + h[k + 1])
                  for k in range(60))
    return 1 / x + math.log(x / 2) * _i_series(1, x) + EULER * _i_series(1, x) - 0.5 * s


def _airy_series(x):
    c1, c2 = 0.355028053887817239260, 0.258819403792806798405
    f, g, tf, tg = [1.0], [x], 1.0, x
    for k in range(1, 60):
        tf = tf * x ** 3 / ((3 * k - 1) * (3 * k))
        tg = tg * x ** 3 / ((3 * k) * (3 * k + 1))
        f.append(tf)
        g.append(tg)
    return c1 * math.fsum(f) - c2 * math.fsum(g)


def _p_series(a, x):
    """P(a, x) by its series (x < a + 1), summed in Python."""
    terms, t, n = [1.0], 1.0, 0
    while t > 1e-18 * math.fsum(terms):
        n += 1
        t *= x / (a + n)
        terms.append(t)
    return math.exp(a * math.log(x) - x - math.lgamma(a + 1)) * math.fsum(terms)


def _q_integer(n, x):
    """Q(n, x) = exp(-x) sum_{k < n} x^k / k! for integer n."""
    return math.exp(-x) * math.fsum(x ** k / math.factorial(k) for k in range(n))


# ---- Bessel functions --------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_modified_bessel_against_series(device):
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(0.01, 20, 60), [1e-6, 0.5, 2.0, 8.0, 8.000001]])
    i0 = np.array([_i_series(0, v) for v in x])
    i1 = np.array([_i_series(1, v) for v in x])
    s = torch.special
    t = T(x, device)
    np.testing.assert_allclose(npy(s.modified_bessel_i0(t)), i0, rtol=2e-15 * 8)
    np.testing.assert_allclose(npy(s.i0(t)), i0, rtol=2e-15 * 8)
    np.testing.assert_allclose(npy(s.i0e(t)), i0 * np.exp(-x), rtol=2e-15 * 8)
    np.testing.assert_allclose(npy(s.i1(t)), i1, rtol=2e-15 * 8)
    np.testing.assert_allclose(npy(s.modified_bessel_i1(t)), i1, rtol=2e-15 * 8)
    np.testing.assert_allclose(npy(s.i1e(t)), i1 * np.exp(-x), rtol=2e-15 * 8)
    # odd / even
    np.testing.assert_allclose(npy(s.i1(-t)), -i1, rtol=2e-14)
    np.testing.assert_allclose(npy(s.i1e(-t)), -i1 * np.exp(-x), rtol=2e-14)
    np.testing.assert_allclose(npy(s.i0e(-t)), i0 * np.exp(-x), rtol=2e-14)
    # K: series for x <= 2, the Wronskian I0 K1 + I1 K0 = 1 / x everywhere
    small = x <= 2
    k0 = npy(s.modified_bessel_k0(t))
    k1 = npy(s.modified_bessel_k1(t))
    np.testing.assert_allclose(k0[small], [_k_series(0, v) for v in x[small]], rtol=1e-13)
    np.testing.assert_allclose(k1[small], [_k_series(1, v) for v in x[small]], rtol=1e-13)
    np.testing.assert_allclose(i0 * k1 + i1 * k0, 1 / x, rtol=1e-13)
    np.testing.assert_allclose(npy(s.scaled_modified_bessel_k0(t)), k0 * np.exp(x), rtol=1e-13)
    np.testing.assert_allclose(npy(s.scaled_modified_bessel_k1(t)), k1 * np.exp(x), rtol=1e-13)
    # float32
    np.testing.assert_allclose(npy(s.i1(T(x, device, torch.float32))), i1, rtol=3e-6)
    np.testing.assert_allclose(npy(s.modified_bessel_k0(T(x, device, torch.float32))), k0, rtol=3e-6)
    if real_torch is not None:
        for name in ("i0e", "i1", "i1e", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
                     "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1"):
            want = getattr(real_torch.special, name)(real_torch.tensor(x)).numpy()
            np.testing.assert_allclose(npy(getattr(s, name)(t)), want, rtol=1e-14 * 4, err_msg=name)


@pytest.mark.parametrize("device", DEVICES)
def test_bessel_first_and_second_kind(device):
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.uniform(0.05, 5, 40), rng.uniform(5, 40, 40), [1e-6, 5.0, 5.000001]])
    t = T(x, device)
    s = torch.special
    j0, j1, y0, y1 = (npy(f(t)) for f in (s.bessel_j0, s.bessel_j1, s.bessel_y0, s.bessel_y1))
    np.testing.assert_allclose(j0, [_j_trapezoid(0, v) for v in x], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(j1, [_j_trapezoid(1, v) for v in x], rtol=1e-12, atol=1e-15)
    small = (x <= 5) & (x > 1e-3)
    np.testing.assert_allclose(y0[small], [_y0_series(v) for v in x[small]], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(y1[small], [_y1_series(v) for v in x[small]], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(j1 * y0 - j0 * y1, 2 / (math.pi * x), rtol=1e-12)  # the Wronskian
    np.testing.assert_allclose(npy(s.bessel_j0(-t)), j0, rtol=0)
    np.testing.assert_allclose(npy(s.bessel_j1(-t)), -j1, rtol=0)
    np.testing.assert_allclose(npy(s.bessel_j0(T(x, device, torch.float32))), j0, atol=2e-6)
    sph = npy(s.spherical_bessel_j0(T([-3.0, -0.3, 0.0, 1e-4, 0.49, 0.51, 7.0], device)))
    np.testing.assert_allclose(sph, [math.sin(-3) / -3, math.sin(-0.3) / -0.3, 1.0, math.sin(1e-4) / 1e-4,
                                     math.sin(0.49) / 0.49, math.sin(0.51) / 0.51, math.sin(7) / 7], rtol=1e-15)
    if real_torch is not None:
        # torch's J and Y drop Cephes' implicit leading denominator coefficient
        # (see _special_coef.py), so they are only good to about 1e-5 there
        for name in ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1"):
            want = getattr(real_torch.special, name)(real_torch.tensor(x)).numpy()
            np.testing.assert_allclose(npy(getattr(s, name)(t)), want, rtol=3e-5, atol=3e-6, err_msg=name)
        want = real_torch.special.spherical_bessel_j0(real_torch.tensor(x)).numpy()
        np.testing.assert_allclose(npy(s.spherical_bessel_j0(t)), want, rtol=1e-15)


@pytest.mark.parametrize("device", DEVICES)
def test_bessel_edges_and_airy(device):
    s = torch.special
    e = T([0.0, -1.0, math.inf, -math.inf, math.nan], device)
    assert npy(s.bessel_y0(e))[0] == -math.inf and np.isnan(npy(s.bessel_y0(e))[1:]).all()
    assert np.isnan(npy(s.bessel_j0(e))[2:]).all() and npy(s.bessel_j0(e))[0] == 1.0
    k = npy(s.modified_bessel_k0(e))
    assert k[0] == math.inf and np.isnan(k[1]) and k[2] == 0.0 and np.isnan(k[4])
    i = npy(s.i0e(e))
    assert i[0] == 1.0 and i[2] == 0.0 and i[3] == 0.0 and np.isnan(i[4])
    assert npy(s.spherical_bessel_j0(e))[2:4].tolist() == [0.0, 0.0]
    x = np.linspace(-4, 4, 33)
    ai = npy(s.airy_ai(T(x, device)))
    np.testing.assert_allclose(ai, [_airy_series(v) for v in x], rtol=1e-12, atol=3e-14)  # the series cancels at 4
    far = npy(s.airy_ai(T([10.0, 200.0, math.inf, -math.inf], device)))
    np.testing.assert_allclose(far[0], 1.1047532552898687e-10, rtol=1e-13)  # Ai(10), DLMF table
    assert far[1] == 0.0 and np.isnan(far[2:]).all()
    if real_torch is not None:
        xs = np.linspace(-30, 30, 241)
        np.testing.assert_allclose(npy(s.airy_ai(T(xs, device))), real_torch.special.airy_ai(
            real_torch.tensor(xs)).numpy(), rtol=1e-4, atol=1e-6)  # torch's is ~1e-5 off below -2.09


def test_bessel_gradients():
    x = torch.tensor([0.3, 1.7, 6.2, 9.5], dtype=torch.float64, requires_grad=True)
    s = torch.special
    for f in (s.i0e, s.i1, s.i1e, s.modified_bessel_k0, s.modified_bessel_k1, s.bessel_j0, s.bessel_y0,
              s.bessel_j1, s.bessel_y1):
        assert torch.autograd.gradcheck(f, (x,)), f.__name__
    g, = torch.autograd.grad(s.bessel_j0(x).sum(), x)  # J0' = -J1
    np.testing.assert_allclose(npy(g), -npy(s.bessel_j1(x)), rtol=1e-12)
    g, = torch.autograd.grad(s.modified_bessel_k0(x).sum(), x)  # K0' = -K1
    np.testing.assert_allclose(npy(g), -npy(s.modified_bessel_k1(x)), rtol=1e-12)


# ---- incomplete gamma ------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_incomplete_gamma_against_references(device):
    rng = np.random.default_rng(2)
    s = torch.special
    # integer a: closed form of Q
    a = rng.integers(1, 40, 60).astype(float)
    x = a * rng.uniform(0.05, 3, 60)
    q = np.array([_q_integer(int(ai), xi) for ai, xi in zip(a, x)])
    np.testing.assert_allclose(npy(s.gammaincc(T(a, device), T(x, device))), q, rtol=1e-12)
    np.testing.assert_allclose(npy(s.gammainc(T(a, device), T(x, device))), 1 - q, rtol=1e-12, atol=1e-15)
    # a = 1/2: P = erf(sqrt(x))
    xh = rng.uniform(0.01, 30, 30)
    np.testing.assert_allclose(npy(s.gammainc(T(np.full(30, 0.5), device), T(xh, device))),
                               [math.erf(math.sqrt(v)) for v in xh], rtol=1e-13)
    np.testing.assert_allclose(npy(s.gammaincc(T(np.full(30, 0.5), device), T(xh, device))),
                               [math.erfc(math.sqrt(v)) for v in xh], rtol=1e-12)
    # x <= 1.1 with small a, where Q has its own series: a = 1/2 and a = 1 (Q = exp(-x))
    xs = np.linspace(0.46, 1.1, 9)
    np.testing.assert_allclose(npy(s.gammaincc(T(np.full(9, 0.5), device), T(xs, device))),
                               [math.erfc(math.sqrt(v)) for v in xs], rtol=3e-14)
    xs = np.linspace(0.92, 1.1, 5)
    np.testing.assert_allclose(npy(s.gammaincc(T(np.ones(5), device), T(xs, device))), np.exp(-xs), rtol=1e-14)
    # general a, x < a + 1: the series in Python
    a = rng.uniform(0.1, 300, 60)
    x = a * rng.uniform(0.01, 1.0, 60)
    want = [_p_series(ai, xi) for ai, xi in zip(a, x)]
    np.testing.assert_allclose(npy(s.gammainc(T(a, device), T(x, device))), want, rtol=1e-12)
    f32 = s.gammainc(T(a, device, torch.float32), T(x, device, torch.float32))
    assert f32.dtype == torch.float32
    np.testing.assert_allclose(npy(f32), [_p_series(float(np.float32(ai)), float(np.float32(xi)))
                                          for ai, xi in zip(a, x)], rtol=2e-6, atol=1e-37)
    # methods, torch-level names, in place
    at, xt = T([2.0, 3.5], device), T([1.0, 4.0], device)
    np.testing.assert_allclose(npy(at.igamma(xt)), npy(torch.igamma(at, xt)), rtol=0)
    np.testing.assert_allclose(npy(at.igammac(xt)), 1 - npy(torch.igamma(at, xt)), rtol=1e-14)
    c = at.clone()
    c.igammac_(xt)
    np.testing.assert_allclose(npy(c), npy(torch.igammac(at, xt)), rtol=0)
    c = at.clone()
    assert c.igamma_(xt) is c
    if real_torch is not None:
        a = np.concatenate([rng.uniform(0.01, 30, 200), rng.uniform(30, 3000, 60)])
        x = np.concatenate([a[:200] * rng.uniform(0, 3, 200), a[200:] * rng.uniform(0.9, 1.1, 60)])
        a = np.concatenate([a, rng.uniform(1e-4, 1.2, 40)])  # small a and x: Q by its own series
        x = np.concatenate([x, rng.uniform(1e-6, 1.1, 40)])
        for name in ("gammainc", "gammaincc"):
            want = getattr(real_torch.special, name)(real_torch.tensor(a), real_torch.tensor(x)).numpy()
            np.testing.assert_allclose(npy(getattr(s, name)(T(a, device), T(x, device))), want, rtol=1e-8,
                                       atol=1e-300, err_msg=name)  # torch itself is ~1e-9 off at large a


@pytest.mark.parametrize("device", DEVICES)
def test_incomplete_gamma_edges_and_gradient(device):
    nan, inf = math.nan, math.inf
    a = [-1, 0, 0, 0, 1, 1, 1, inf, inf, 2, nan, 1]
    x = [1, 0, 1, inf, 0, -1, inf, 1, inf, nan, 1, -0.0]
    p = npy(torch.special.gammainc(T(a, device), T(x, device)))
    q = npy(torch.special.gammaincc(T(a, device), T(x, device)))
    want_p = [nan, nan, 1, 1, 0, nan, 1, 0, nan, nan, nan, 0]
    np.testing.assert_array_equal(p, want_p)
    np.testing.assert_array_equal(q, [v if np.isnan(v) else 1 - v for v in want_p])
    with pytest.raises(NotImplementedError, match="igamma"):
        torch.special.gammainc(torch.tensor([2], device=device), torch.tensor([3], device=device))
    with pytest.raises(NotImplementedError, match="Temme"):
        torch.special.gammainc(T([1e8], device), T([1e8], device))
    assert npy(torch.special.gammainc(T([1e8], device), T([0.9e8], device)))[0] == 0.0
    if device == "cpu":
        av = torch.tensor([1.5, 3.0], dtype=torch.float64)
        xv = torch.tensor([0.7, 4.1], dtype=torch.float64, requires_grad=True)
        assert torch.autograd.gradcheck(lambda v: torch.special.gammainc(av, v), (xv,))
        assert torch.autograd.gradcheck(lambda v: torch.special.gammaincc(av, v), (xv,))
        g, = torch.autograd.grad(torch.special.gammainc(av[:1], xv[:1]).sum(), xv)
        np.testing.assert_allclose(npy(g)[0], 0.7 ** 0.5 * math.exp(-0.7) / math.gamma(1.5), rtol=1e-14)
        with pytest.raises(NotImplementedError, match="derivative for 'igamma: input'"):
            torch.special.gammainc(av.clone().requires_grad_(), xv).sum().backward()


# ---- zeta and polygamma --------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_zeta_and_polygamma(device):
    s = torch.special
    z = npy(s.zeta(T([2.0, 4.0, 2.0, 6.0, 3.0], device), T([1.0, 1.0, 0.5, 3.0, 1.0], device)))
    np.testing.assert_allclose(z[:3], [math.pi ** 2 / 6, math.pi ** 4 / 90, math.pi ** 2 / 2], rtol=1e-15)
    np.testing.assert_allclose(z[3], math.pi ** 6 / 945 - 1 - 2 ** -6, rtol=1e-12)  # the reference cancels
    rng = np.random.default_rng(3)
    x, q = rng.uniform(1.1, 12, 50), rng.uniform(0.05, 30, 50)
    zt = npy(s.zeta(T(x, device), T(q, device)))
    np.testing.assert_allclose(zt - npy(s.zeta(T(x, device), T(q + 1, device))), q ** -x, rtol=1e-12)
    direct = [math.fsum((qi + k) ** -xi for k in range(200000)) for xi, qi in zip(x[:5] + 4, q[:5])]
    np.testing.assert_allclose(npy(s.zeta(T(x[:5] + 4, device), T(q[:5], device))), direct, rtol=1e-13)
    np.testing.assert_allclose(npy(s.zeta(2.0, T([1.0], device))), [math.pi ** 2 / 6], rtol=1e-15)
    np.testing.assert_allclose(npy(s.zeta(T([2.0], device), 1.0)), [math.pi ** 2 / 6], rtol=1e-15)
    ed = npy(s.zeta(T([1.0, 0.5, 3.0, 3.0, 3.0, 2.5], device), T([1.0, 1.0, 0.0, -1.0, -1.5, -1.5], device)))
    assert ed[0] == math.inf and np.isnan(ed[1]) and ed[2] == ed[3] == math.inf
    np.testing.assert_allclose(ed[4], 1 / 1.5 ** 3 * -1 + 1 / 0.5 ** 3 * -1 + 1 / 0.5 ** 3
                               + math.fsum((k + 1.5) ** -3.0 for k in range(100000)) + 0.5 / 100001.5 ** 2,
                               rtol=1e-9)
    assert np.isnan(ed[5])
    # polygamma(n, 1) = (-1)^(n+1) n! zeta(n + 1); recurrence psi_n(x + 1) = psi_n(x) + (-1)^n n! / x^(n+1)
    zeta_int = {3: 1.2020569031595942, 4: math.pi ** 4 / 90, 5: 1.0369277551433699, 6: math.pi ** 6 / 945}
    xs = rng.uniform(0.2, 20, 30)
    for n in (2, 3, 4, 5):
        one = npy(s.polygamma(n, T([1.0], device)))[0]
        np.testing.assert_allclose(one, (-1) ** (n + 1) * math.factorial(n) * zeta_int[n + 1], rtol=1e-14)
        a, b = npy(s.polygamma(n, T(xs, device))), npy(torch.polygamma(n, T(xs + 1, device)))
        np.testing.assert_allclose(b, a + (-1) ** n * math.factorial(n) / xs ** (n + 1), rtol=1e-12)
        assert npy(T(xs[:2], device).polygamma(n)).tolist() == a[:2].tolist()
        if real_torch is not None:
            want = real_torch.special.polygamma(n, real_torch.tensor(xs)).numpy()
            np.testing.assert_allclose(a, want, rtol=1e-13)
            ws = real_torch.special.zeta(real_torch.tensor(x), real_torch.tensor(q)).numpy()
            np.testing.assert_allclose(zt, ws, rtol=1e-13)
    f32 = s.polygamma(3, T(xs, device, torch.float32))
    assert f32.dtype == torch.float32
    np.testing.assert_allclose(npy(f32), npy(s.polygamma(3, T(np.float32(xs), device))), rtol=1e-6)


def test_zeta_and_polygamma_gradients():
    q = torch.tensor([0.7, 2.5, 6.0], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda v: torch.special.zeta(3.5, v), (q,))
    assert torch.autograd.gradcheck(lambda v: torch.special.polygamma(3, v), (q,))
    g, = torch.autograd.grad(torch.special.polygamma(2, q).sum(), q)
    np.testing.assert_allclose(npy(g), npy(torch.special.polygamma(3, q)), rtol=1e-13)
    with pytest.raises(NotImplementedError, match="derivative for 'zeta'"):
        torch.special.zeta(q, torch.tensor([1.0], dtype=torch.float64)).sum().backward()


# ---- orthogonal polynomials -----------------------------------------------------------

def _trig_refs(kind, x, n):
    th = np.arccos(x)
    if kind == "t":
        return np.cos(n * th)
    if kind == "u":
        return np.sin((n + 1) * th) / np.sin(th)
    if kind == "v":
        return np.cos((n + 0.5) * th) / np.cos(th / 2)
    return np.sin((n + 0.5) * th) / np.sin(th / 2)


@pytest.mark.parametrize("device", DEVICES)
def test_orthogonal_polynomials(device):
    from numpy.polynomial import hermite, hermite_e, laguerre, legendre
    rng = np.random.default_rng(4)
    x = rng.uniform(-0.99, 0.99, 80)
    n = rng.integers(0, 30, 80).astype(float)
    s = torch.special
    xt, nt = T(x, device), T(n, device)

    def basis(mod, xv, nv, scale=1.0):
        return np.array([mod(xi, [0] * int(ni) + [1]) for xi, ni in zip(xv, nv)]) * scale

    for kind in "tuvw":
        got = npy(getattr(s, "chebyshev_polynomial_" + kind)(xt, nt))
        np.testing.assert_allclose(got, _trig_refs(kind, x, n), rtol=1e-11, atol=1e-11, err_msg=kind)
        got = npy(getattr(s, "shifted_chebyshev_polynomial_" + kind)(T((x + 1) / 2, device), nt))
        np.testing.assert_allclose(got, _trig_refs(kind, 2 * ((x + 1) / 2) - 1, n), rtol=1e-11, atol=1e-11)
    xw = rng.uniform(-3, 3, 80)
    xwt = T(xw, device)
    np.testing.assert_allclose(npy(s.hermite_polynomial_h(xwt, nt)), basis(hermite.hermval, xw, n), rtol=1e-12,
                               atol=1e-9)
    np.testing.assert_allclose(npy(s.hermite_polynomial_he(xwt, nt)), basis(hermite_e.hermeval, xw, n),
                               rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(npy(s.laguerre_polynomial_l(T(np.abs(xw) * 3, device), nt)),
                               basis(laguerre.lagval, np.abs(xw) * 3, n), rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(npy(s.legendre_polynomial_p(xt, nt)), basis(legendre.legval, x, n), rtol=1e-12,
                               atol=1e-13)
    # |x| > 1 runs the recurrence: T_n(x) = cosh(n acosh x)
    np.testing.assert_allclose(npy(s.chebyshev_polynomial_t(T([1.5, -2.0], device), 9)),
                               [math.cosh(9 * math.acosh(1.5)), -math.cosh(9 * math.acosh(2.0))], rtol=1e-13)
    # numbers for either argument, n truncated, negative / nan n give 0, the endpoints
    np.testing.assert_allclose(npy(s.chebyshev_polynomial_t(0.3, T([4.0, 4.7, -1.0, math.nan], device))),
                               [math.cos(4 * math.acos(0.3))] * 2 + [0.0, 0.0], rtol=1e-14)
    ends = T([1.0, -1.0], device)
    assert npy(s.chebyshev_polynomial_u(ends, 5)).tolist() == [6.0, -6.0]
    assert npy(s.chebyshev_polynomial_v(ends, 5)).tolist() == [1.0, -11.0]
    assert npy(s.chebyshev_polynomial_w(ends, 5)).tolist() == [11.0, -1.0]
    assert npy(s.legendre_polynomial_p(ends, 5)).tolist() == [1.0, -1.0]
    assert np.isnan(npy(s.hermite_polynomial_h(T([0.5], device), 513))).all()
    assert np.isnan(npy(s.hermite_polynomial_h(T([0.5], device, torch.float32), 129))).all()
    r = s.hermite_polynomial_h(torch.tensor([2], device=device), torch.tensor([3], device=device))
    assert r.dtype == torch.float32 and npy(r).tolist() == [40.0]
    assert np.isnan(npy(s.chebyshev_polynomial_t(T([1.5], device), 5000))).all()  # overflow, as torch
    with pytest.raises(NotImplementedError, match="bounded"):
        s.legendre_polynomial_p(T([0.5], device), 10 ** 7)
    if real_torch is not None:
        for name in [k for k in dir(real_torch.special) if k.endswith("_polynomial_" + k[-1])]:
            xx = x if "shifted" not in name else (x + 1) / 2
            want = getattr(real_torch.special, name)(real_torch.tensor(xx), real_torch.tensor(n)).numpy()
            np.testing.assert_allclose(npy(getattr(s, name)(T(xx, device), nt)), want, rtol=1e-12, atol=1e-12,
                                       err_msg=name)


def _erfcx_ref(v):
    """exp(v^2) erfc(v): erfc from math (relative accuracy) and exp of the
    exact square through a two-term split; past 20 the continued fraction
    1 / sqrt(pi) / (v + 1/2 / (v + 1 / (v + 3/2 / ...)))."""
    if v < 20:
        hi = float(np.float32(v))
        lo = v - hi
        return math.exp(hi * hi) * math.exp(lo * (2 * hi + lo)) * math.erfc(v)
    f = v
    for k in range(200, 0, -1):
        f = v + (k / 2) / f
    return 1 / math.sqrt(math.pi) / f


@pytest.mark.parametrize("device", DEVICES)
def test_erfcx(device):
    x = np.concatenate([np.linspace(-20, 11.9, 60), [0.0, 1e-8, 12.0, 12.5, 30.0, 1e4]])
    want = [_erfcx_ref(v) for v in x]
    got = npy(torch.special.erfcx(T(x, device)))
    np.testing.assert_allclose(got, want, rtol=3e-14)
    e = npy(torch.special.erfcx(T([math.inf, -math.inf, math.nan, -30.0], device)))
    assert e[0] == 0.0 and e[1] == math.inf and np.isnan(e[2]) and e[3] == math.inf
    x32 = np.arange(-9.0, 12.0, 0.5)  # exact in float32; float32 overflows below about -9.4
    np.testing.assert_allclose(npy(torch.special.erfcx(T(x32, device, torch.float32))),
                               [_erfcx_ref(v) for v in x32], rtol=2e-6)
    if device == "cpu":
        xt = torch.tensor([-2.0, 0.3, 5.0, 20.0], dtype=torch.float64, requires_grad=True)
        assert torch.autograd.gradcheck(torch.special.erfcx, (xt,))
    if real_torch is not None:
        np.testing.assert_allclose(got, real_torch.special.erfcx(real_torch.tensor(x)).numpy(), rtol=1e-13)


def test_public_names_match_torch_special():
    names = ["gammainc", "gammaincc", "zeta", "i0", "i0e", "i1", "i1e", "bessel_j0", "bessel_j1", "bessel_y0",
             "bessel_y1", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
             "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0", "airy_ai",
             "legendre_polynomial_p", "laguerre_polynomial_l", "hermite_polynomial_he", "softmax",
             "log_softmax", "logsumexp", "expit", "logit"]
    for name in names:
        assert callable(getattr(torch.special, name)), name
    if real_torch is not None:
        ours = set(dir(torch.special))
        missing = {n for n in dir(real_torch.special) if not n.startswith("_")} - ours
        assert missing <= {"Tensor", "common_args", "multi_dim_common", "torch"}, missing
