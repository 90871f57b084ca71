"""torch compatibility odds and ends, part 3: signal.windows against the
window formulas written in NumPy float64, and quasirandom.SobolEngine
against the Sobol sequence computed here from the published Joe-Kuo table
(its first rows, as printed in the table file) with Bratley and Fox's
algorithm, against the sequence's known first points and its net
properties (scrambled too), and against torch where it is installed."""
import math

import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem.quasirandom import SobolEngine
from pycuda_sem.signal import windows as W

from torch_oracle import _torch as real_torch  # torch where it imports, else None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]


# ---- signal.windows -------------------------------------------------------------------------

def _n(M, sym):
    """Sample positions and the denominator N of the window formulas."""
    return np.arange(M, dtype=np.float64), (M - 1 if sym or M == 1 else M)


def _cosine_sum(M, sym, a):
    n, N = _n(M, sym)
    return sum((-1) ** k * c * np.cos(2 * np.pi * k * n / N) for k, c in enumerate(a))


def ref_window(name, M, sym, **kw):
    if M == 0:
        return np.zeros(0)
    n, N = _n(M, sym)
    if name == "bartlett":
        return np.ones(1) if M == 1 else 1 - np.abs(2 * n / N - 1)
    if name == "cosine":
        return np.sin(np.pi * (n + 0.5) / (N + 1))
    if name == "exponential":
        c = kw.get("center")
        c = N / 2 if c is None else c
        return np.exp(-np.abs(n - c) / kw.get("tau", 1.0))
    if name == "gaussian":
        return np.exp(-0.5 * ((n - N / 2) / kw.get("std", 1.0)) ** 2)
    if name == "kaiser":
        if M == 1:
            return np.ones(1)
        beta = kw.get("beta", 12.0)
        return np.i0(beta * np.sqrt(np.clip(1 - (2 * n / N - 1) ** 2, 0, None))) / np.i0(beta)
    if M == 1:
        return np.ones(1)
    coeffs = {"hann": [0.5, 0.5], "hamming": [0.54, 0.46], "blackman": [0.42, 0.5, 0.08],
              "nuttall": [0.3635819, 0.4891775, 0.1365995, 0.0106411],
              "general_hamming": [kw.get("alpha", 0.54), 1 - kw.get("alpha", 0.54)],
              "general_cosine": kw.get("a")}[name]
    return _cosine_sum(M, sym, coeffs)


CASES = [("bartlett", {}), ("blackman", {}), ("cosine", {}), ("exponential", {"tau": 2.5}),
         ("gaussian", {"std": 1.7}), ("general_cosine", {"a": [0.4, 0.35, 0.25]}),
         ("general_hamming", {"alpha": 0.6}), ("hamming", {}), ("hann", {}),
         ("kaiser", {"beta": 5.0}), ("kaiser", {}), ("nuttall", {})]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,kw", CASES, ids=["%s%s" % (c[0], list(c[1].values()))
                                                for c in CASES])
def test_windows_match_their_formulas(name, kw, device):
    for M in (0, 1, 2, 7, 16, 33):
        for sym in (True, False):
            w = getattr(W, name)(M, sym=sym, dtype=torch.float64, device=device, **kw)
            assert w.shape == (M,) and w.dtype == torch.float64 and w.device.type == device
            np.testing.assert_allclose(w.cpu().numpy(), ref_window(name, M, sym, **kw),
                                       rtol=1e-13, atol=1e-15)
            w32 = getattr(W, name)(M, sym=sym, device=device, **kw)
            assert w32.dtype == torch.float32
            np.testing.assert_allclose(w32.cpu().numpy(), ref_window(name, M, sym, **kw),
                                       rtol=1e-6, atol=1e-7)
            if real_torch is not None and device == "cpu":
                theirs = getattr(real_torch.signal.windows, name)(M, sym=sym,
                                                                  dtype=real_torch.float64, **kw)
                np.testing.assert_allclose(w.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-14)


def test_periodic_window_is_the_longer_symmetric_one_cut():
    for name in ("hann", "blackman", "bartlett", "kaiser", "gaussian", "cosine"):
        per = getattr(W, name)(10, sym=False, dtype=torch.float64).numpy()
        long = getattr(W, name)(11, sym=True, dtype=torch.float64).numpy()
        np.testing.assert_allclose(per, long[:10], rtol=1e-13, atol=1e-15)
    # and hann is torch.hann_window's periodic default
    np.testing.assert_allclose(W.hann(10, sym=False).numpy(), torch.hann_window(10).numpy(),
                               rtol=1e-6, atol=1e-7)


def test_exponential_center_and_requires_grad():
    w = W.exponential(8, center=2.0, tau=3.0, sym=False, dtype=torch.float64)
    np.testing.assert_allclose(w.numpy(), np.exp(-np.abs(np.arange(8) - 2.0) / 3.0), rtol=1e-14)
    g = W.hann(5, requires_grad=True)
    assert g.requires_grad and g.is_leaf


def test_window_argument_errors():
    errors = [(W.hann, (-1,), {}, "non-negative window length"),
              (W.hann, (4,), {"dtype": torch.int64}, "float32 or float64"),
              (W.exponential, (4,), {"tau": 0.0}, "Tau must be positive"),
              (W.exponential, (4,), {"center": 1.0}, "Center must be None"),
              (W.gaussian, (4,), {"std": -1.0}, "Standard deviation must be positive"),
              (W.kaiser, (4,), {"beta": -1.0}, "beta must be non-negative"),
              (W.general_cosine, (4,), {"a": []}, "Coefficients cannot be empty")]
    for fn, args, kw, text in errors:
        with pytest.raises(ValueError, match=text):
            fn(*args, **kw)
        if real_torch is not None:
            kw2 = dict(kw)
            if "dtype" in kw2:
                kw2["dtype"] = real_torch.int64
            with pytest.raises(ValueError, match=text):
                getattr(real_torch.signal.windows, fn.__name__)(*args, **kw2)
    with pytest.raises(TypeError, match="list/tuple"):
        W.general_cosine(4, a=3)


# ---- quasirandom.SobolEngine ----------------------------------------------------------------

# The first rows of the published table new-joe-kuo-6.21201 (d s a m_i), as printed there.
JOE_KUO = """
2 1 0 1
3 2 1 1 3
4 3 1 1 3 1
5 3 2 1 1 1
6 4 1 1 1 3 3
7 4 4 1 3 5 13
8 5 2 1 1 5 5 17
9 5 4 1 1 5 5 5
10 5 7 1 1 7 11 19
11 5 11 1 1 5 1 1
12 5 13 1 1 1 3 11
13 5 14 1 3 5 5 31
14 6 1 1 3 3 9 7 49
15 6 13 1 1 1 15 21 21
16 6 16 1 3 1 13 27 49
17 6 19 1 1 1 15 7 5
18 6 22 1 3 1 15 13 25
19 6 25 1 1 5 5 19 61
20 7 1 1 3 7 11 23 15 103
21 7 4 1 3 7 13 13 15 69
"""


def _reference_points(n, dims):
    """Bratley and Fox's Gray-code algorithm over 32-bit direction numbers
    (as in Joe and Kuo's own generator), from the table above."""
    rows = [list(map(int, line.split())) for line in JOE_KUO.strip().splitlines()]
    bits = max(1, math.ceil(math.log2(n)))
    out = np.zeros((n, dims))
    for j in range(dims):
        if j == 0:
            v = [1 << (32 - i) for i in range(1, bits + 1)]
        else:
            _, s, a, *m = rows[j - 1]
            v = [m[i - 1] << (32 - i) for i in range(1, min(s, bits) + 1)]
            for i in range(s + 1, bits + 1):
                x = v[i - s - 1] ^ (v[i - s - 1] >> s)
                for k in range(1, s):
                    x ^= ((a >> (s - 1 - k)) & 1) * v[i - k - 1]
                v.append(x)
        x = 0
        for i in range(1, n):
            c = 1
            value = i - 1
            while value & 1:  # the lowest zero bit of i - 1
                value >>= 1
                c += 1
            x ^= v[c - 1]
            out[i, j] = x / 2.0 ** 32
    return out


def test_sobol_first_points_are_the_known_ones():
    pts = SobolEngine(3).draw(8, dtype=torch.float64).numpy()
    known = [[0, 0, 0], [0.5, 0.5, 0.5], [0.75, 0.25, 0.25], [0.25, 0.75, 0.75],
             [0.375, 0.375, 0.625], [0.875, 0.875, 0.125], [0.625, 0.125, 0.875],
             [0.125, 0.625, 0.375]]
    np.testing.assert_array_equal(pts, known)


def test_sobol_matches_the_published_table():
    eng = SobolEngine(21)
    got = eng.draw(1000, dtype=torch.float64).numpy()
    np.testing.assert_array_equal(got, _reference_points(1000, 21))


def _primitive_polynomials(s):
    """The a's (middle coefficients) of the primitive polynomials of degree
    s over GF(2), increasing: x has order 2^s - 1 modulo the polynomial."""
    order = (1 << s) - 1
    factors = [q for q in range(2, order + 1) if order % q == 0
               and all(q % r for r in range(2, int(q ** 0.5) + 1))]

    def x_power(e, p):
        result, base = 1, 2
        while e:
            if e & 1:
                result = _mulmod(result, base, p, s)
            base = _mulmod(base, base, p, s)
            e >>= 1
        return result
    out = []
    for a in range(1 << max(s - 1, 0)):
        p = (1 << s) | (a << 1) | 1
        if s == 1:
            p = 0b11
        if x_power(order, p) == 1 and all(x_power(order // q, p) != 1 for q in factors):
            out.append(a)
    return out


def _mulmod(a, b, p, s):
    r = 0
    while b:
        if b & 1:
            r ^= a
        b >>= 1
        a <<= 1
        if (a >> s) & 1:
            a ^= p
    return r


def test_sobol_table_holds_the_primitive_polynomials_in_order():
    from pycuda_sem.quasirandom import _table
    rows = _table()
    assert len(rows) == 1110
    want = []
    s = 1
    while len(want) < len(rows):
        want += [(s, a) for a in _primitive_polynomials(s)]
        s += 1
    assert [(r[0], r[1]) for r in rows] == want[:len(rows)]
    for s, _, m in rows:  # initial numbers: odd and m_i < 2^i
        assert all(v % 2 == 1 and v < 2 ** (i + 1) for i, v in enumerate(m))
    published = [list(map(int, line.split())) for line in JOE_KUO.strip().splitlines()]
    assert [[s, a] + m for s, a, m in rows[:len(published)]] == [p[1:] for p in published]


def _net_ok(pts, m):
    """The first 2**m points of each dimension fall one to an interval of
    width 2**-m, and of dimensions 0 and 1 one to each elementary box of
    area 2**-m (a (0, m, 2)-net)."""
    ok = all(len(np.unique(np.floor(pts[:, d] * 2 ** m))) == 2 ** m for d in range(pts.shape[1]))
    for i in range(m + 1):
        cells = np.floor(pts[:, 0] * 2 ** i) * 2 ** (m - i) + np.floor(pts[:, 1] * 2 ** (m - i))
        ok = ok and len(np.unique(cells)) == 2 ** m
    return ok


@pytest.mark.parametrize("scramble", [False, True])
def test_sobol_net_property(scramble):
    eng = SobolEngine(6, scramble=scramble, seed=11)
    pts = eng.draw_base2(8, dtype=torch.float64).numpy()
    assert pts.shape == (256, 6) and (pts >= 0).all() and (pts < 1).all()
    assert _net_ok(pts, 8)
    nxt = eng.draw_base2(8, dtype=torch.float64).numpy()  # the next 256 complete a 512-net
    assert _net_ok(np.concatenate([pts, nxt]), 9)
    with pytest.raises(ValueError, match="power of 2"):
        eng.draw_base2(3)


def test_sobol_scramble_is_seeded():
    a = SobolEngine(4, scramble=True, seed=3).draw(16)
    b = SobolEngine(4, scramble=True, seed=3).draw(16)
    c = SobolEngine(4, scramble=True, seed=4).draw(16)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert not np.array_equal(a.numpy(), c.numpy())
    assert not np.array_equal(a.numpy(), SobolEngine(4).draw(16).numpy())
    torch.manual_seed(0)
    d = SobolEngine(4, scramble=True).draw(4)  # seed None: drawn from the global generator
    torch.manual_seed(0)
    np.testing.assert_array_equal(d.numpy(), SobolEngine(4, scramble=True).draw(4).numpy())


def test_sobol_state_moves():
    eng = SobolEngine(5)
    full = SobolEngine(5).draw(40, dtype=torch.float64).numpy()
    first = eng.draw(1, dtype=torch.float64).numpy()
    part = eng.draw(9, dtype=torch.float64).numpy()
    np.testing.assert_array_equal(np.concatenate([first, part]), full[:10])
    eng.fast_forward(13)
    np.testing.assert_array_equal(eng.draw(5, dtype=torch.float64).numpy(), full[23:28])
    assert eng.num_generated == 28
    np.testing.assert_array_equal(eng.quasi.numpy() / 2.0 ** 30, full[27])
    eng.reset()
    assert eng.num_generated == 0
    np.testing.assert_array_equal(eng.draw(3, dtype=torch.float64).numpy(), full[:3])
    out = torch.empty(0)
    assert eng.draw(2, out=out) is out and out.shape == (2, 5) and out.dtype == torch.float32
    assert repr(SobolEngine(5, scramble=True, seed=2)) == "SobolEngine(dimension=5, " \
        "scramble=True, seed=2)"
    with pytest.raises(ValueError, match=r"\[1, 21201\]"):
        SobolEngine(0)
    with pytest.raises(NotImplementedError, match="1111"):
        SobolEngine(2000)


@pytest.mark.skipif(real_torch is None, reason="torch not installed")
@pytest.mark.parametrize("dim", [1, 2, 17, 250, 1111])
def test_sobol_matches_torch(dim):
    ours, theirs = SobolEngine(dim), real_torch.quasirandom.SobolEngine(dim)
    np.testing.assert_array_equal(ours.sobolstate.numpy(), theirs.sobolstate.numpy())
    for n in (1, 6, 33):
        np.testing.assert_array_equal(ours.draw(n, dtype=torch.float64).numpy(),
                                      theirs.draw(n, dtype=real_torch.float64).numpy())
    ours.fast_forward(77)
    theirs.fast_forward(77)
    np.testing.assert_array_equal(ours.draw(4).numpy(), theirs.draw(4).numpy())
