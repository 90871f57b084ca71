"""The ops of _math_more.py (inverse hyperbolics, fmax/fmin, gcd/lcm,
ldexp/frexp/nextafter, i0, angle, the conjugation queries, rsub, fill, the
in-place spellings), _math_linear.py (addmv, addr, addbmm, renorm, the
splits, kaiser_window, ...) and the module constants of _torch_misc.py:
against NumPy in float64, and against torch itself where it imports, with
special values (0, -0, subnormals, inf, nan, huge) in the inputs."""
import math
import warnings

import numpy as np
import pytest

import pycuda_sem as torch

from torch_oracle import _torch as real_torch  # torch where it imports, else None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
pytestmark = [pytest.mark.usefixtures("no_tf32"),  # float64 references (conftest.py)
              pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")]


def npy(t):
    return t.detach().cpu().numpy()


def _specials(rng, n=64):
    """Random values with the special ones mixed in (float64; in float32 the
    huge ones become inf)."""
    v = np.concatenate([rng.standard_normal(n) * 3, rng.uniform(-1, 1, n), np.exp(rng.uniform(-30, 30, n)),
                        [0.0, -0.0, 1.0, -1.0, 1 + 1e-12, 1e-310, -5e-324, 2.2250738585072014e-308,
                         np.inf, -np.inf, np.nan, 1e300, -1e300, 0.999999, -0.999999, 3e8, 1e-20]])
    return v


def _same_nan_inf(a, b):
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
    fin = np.isfinite(b)
    np.testing.assert_array_equal(a[~fin & ~np.isnan(b)], b[~fin & ~np.isnan(b)])


def _close(a, b, rtol):
    _same_nan_inf(a, b)
    fin = np.isfinite(b)
    np.testing.assert_allclose(a[fin], b[fin], rtol=rtol, atol=0)


# ---- the inverse hyperbolics and i0, against NumPy --------------------------------------

UNARY = {
    "acosh": np.arccosh, "asinh": np.arcsinh, "atanh": np.arctanh, "i0": np.i0,
    "angle": lambda x: np.where(np.isnan(x), x, np.where(x < 0, np.pi, 0.0)),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_unary_against_numpy(device, name, dtype):
    rng = np.random.default_rng(1)
    v = _specials(rng)
    if name == "i0":
        v = v[np.abs(v) < 700]  # beyond, float64 overflows (both give inf)
    x = torch.tensor(v, dtype=getattr(torch, dtype), device=device)
    xv = npy(x).astype(np.float64)  # the float32 input, exactly
    with np.errstate(all="ignore"):
        ref = UNARY[name](xv)
    got = getattr(torch, name)(x)
    assert got.dtype == x.dtype and got.device.type == device
    g = npy(got).astype(np.float64)
    if dtype == "float32":
        ref = ref.astype(np.float32).astype(np.float64)
    _close(g, ref, 1e-13 if dtype == "float64" else 4e-6)
    # the sign of zero survives where the function is odd
    if name in ("asinh", "atanh"):
        z = npy(getattr(torch, name)(torch.tensor([-0.0, 0.0], device=device)))
        assert np.signbit(z[0]) and not np.signbit(z[1])
    np.testing.assert_array_equal(npy(getattr(x, name)()), npy(got))
    if real_torch is not None:
        t = getattr(real_torch, name)(real_torch.tensor(npy(x)))
        _close(g, t.double().numpy(), 1e-13 if dtype == "float64" else 4e-6)


def test_aliases_in_place_and_integers():
    x = torch.tensor([1.5, 2.0, 7.0], dtype=torch.float64)
    for a, b in (("arccosh", "acosh"), ("arcsinh", "asinh"), ("arctanh", "atanh")):
        y = x if a == "arccosh" else x / 8
        assert torch.equal(getattr(torch, a)(y), getattr(torch, b)(y))
        z = y.clone()
        assert getattr(z, a + "_")() is z and torch.equal(z, getattr(torch, b)(y))
        w = y.clone()
        getattr(torch, b + "_")(w)
        assert torch.equal(w, z)
    i = torch.tensor([1, 2, 3])
    assert torch.acosh(i).dtype == torch.float32 and torch.angle(i).dtype == torch.float32
    np.testing.assert_allclose(npy(torch.asinh(i)), np.arcsinh([1, 2, 3]), rtol=1e-6)
    with pytest.raises(RuntimeError):
        i.clone().acosh_()  # a float result does not fit an int64 tensor


def test_inverse_hyperbolic_gradients():
    rng = np.random.default_rng(2)
    cases = {
        "acosh": (rng.uniform(1.01, 50, 20), lambda x: 1 / np.sqrt(x * x - 1)),
        "asinh": (np.concatenate([rng.standard_normal(20) * 5, [0.0, 1e-8, 1e9]]),
                  lambda x: 1 / np.sqrt(1 + x * x)),
        "atanh": (np.concatenate([rng.uniform(-0.99, 0.99, 20), [0.0]]), lambda x: 1 / (1 - x * x)),
        "i0": (rng.uniform(-20, 20, 20), None),
    }
    for name, (v, deriv) in cases.items():
        x = torch.tensor(v, dtype=torch.float64, requires_grad=True)
        getattr(torch, name)(x).sum().backward()
        g = npy(x.grad)
        if deriv is None:  # i0' = i1; check by central differences of NumPy's i0
            h = 1e-6
            ref = (np.i0(v + h) - np.i0(v - h)) / (2 * h)
            np.testing.assert_allclose(g, ref, rtol=1e-6)
        else:
            np.testing.assert_allclose(g, deriv(v), rtol=1e-10)
        if real_torch is not None:
            xt = real_torch.tensor(v, dtype=real_torch.float64, requires_grad=True)
            getattr(real_torch, name)(xt).sum().backward()
            np.testing.assert_allclose(g, xt.grad.numpy(), rtol=1e-7)


# ---- fmax/fmin, gcd/lcm ----------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_fmax_fmin(device):
    rng = np.random.default_rng(3)
    a, b = _specials(rng), _specials(rng)[::-1].copy()
    a[:5] = np.nan
    x, y = torch.tensor(a, device=device), torch.tensor(b, device=device)
    np.testing.assert_array_equal(npy(torch.fmax(x, y)), np.fmax(a, b))
    np.testing.assert_array_equal(npy(x.fmin(y)), np.fmin(a, b))
    # promotion: int with float
    r = torch.fmax(torch.tensor([1, 2, 3], device=device), torch.tensor([1.5], device=device))
    assert r.dtype == torch.float32 and npy(r).tolist() == [1.5, 2.0, 3.0]
    assert torch.fmin(torch.tensor([4, -2]), torch.tensor([3, 1])).tolist() == [3, -2]
    if real_torch is not None:
        np.testing.assert_array_equal(npy(torch.fmin(x, y)), real_torch.fmin(
            real_torch.tensor(a), real_torch.tensor(b)).numpy())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "uint8"])
def test_gcd_lcm(device, dtype):
    rng = np.random.default_rng(4)
    hi = 120 if dtype == "uint8" else 10 ** 6
    lo = 0 if dtype == "uint8" else -hi
    a = rng.integers(lo, hi, 200).astype(dtype)
    b = rng.integers(lo, hi, 200).astype(dtype)
    a[:3], b[:3] = [0, 0, 7], [0, 5, 0]
    if dtype == "int64":  # consecutive Fibonacci numbers: Euclid's worst case
        f = [1, 1]
        while f[-1] < 2 ** 62:
            f.append(f[-1] + f[-2])
        a[3], b[3] = f[-2], f[-3]
    x = torch.tensor(a, device=device)
    y = torch.tensor(b, device=device)
    np.testing.assert_array_equal(npy(torch.gcd(x, y)), np.gcd(a, b))
    small = np.abs(a.astype(np.int64)) < 3000
    lx, ly = x[torch.tensor(small, device=device)], y[torch.tensor(small, device=device)]
    with np.errstate(over="ignore"):  # products past the dtype wrap, as C's (and NumPy's, torch's)
        np.testing.assert_array_equal(npy(lx.lcm(ly)), np.lcm(a[small], b[small]))
    z = x.clone()
    assert z.gcd_(y) is z and np.array_equal(npy(z), np.gcd(a, b))
    if real_torch is not None:
        np.testing.assert_array_equal(npy(torch.gcd(x, y)),
                                      real_torch.gcd(real_torch.tensor(a), real_torch.tensor(b)).numpy())


def test_gcd_refuses_floats():
    with pytest.raises(NotImplementedError):
        torch.gcd(torch.tensor([1.0]), torch.tensor([2.0]))
    with pytest.raises(TypeError):
        torch.lcm(torch.tensor([1]), 2)


# ---- ldexp, frexp, nextafter: exact -----------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_frexp_exact(device, dtype):
    rng = np.random.default_rng(5)
    v = _specials(rng).astype(dtype)
    tiny = np.finfo(dtype).smallest_subnormal
    v = np.concatenate([v, [tiny, -tiny * 3, np.finfo(dtype).tiny, np.finfo(dtype).max]]).astype(dtype)
    x = torch.tensor(v, device=device)
    m, e = torch.frexp(x)
    rm, re = np.frexp(v)
    assert m.dtype == x.dtype and e.dtype == torch.int32
    np.testing.assert_array_equal(npy(m), rm)
    np.testing.assert_array_equal(np.signbit(npy(m)), np.signbit(rm))
    fin = np.isfinite(v)
    np.testing.assert_array_equal(npy(e)[fin], re[fin])
    np.testing.assert_array_equal(npy(e)[~fin], 0)
    r = x.frexp()
    assert r.mantissa is not None and np.array_equal(npy(r.exponent), npy(e))
    # ldexp undoes it (float64: the scale 2.0 ** e is exact there)
    if dtype == "float64":
        back = torch.ldexp(m, e.double())  # 2.0 ** e in float64 (it overflows only past 2**1023)
        ok = fin & (np.abs(v) < 1e300)
        np.testing.assert_array_equal(npy(back)[ok], v[ok])
    if real_torch is not None:
        tm, te = real_torch.frexp(real_torch.tensor(v))
        np.testing.assert_array_equal(npy(m), tm.numpy())
        np.testing.assert_array_equal(npy(e), te.numpy())


def test_frexp_half_and_errors():
    v = np.array([0.0, 3.0, -0.375, 6e-8, 65504.0], dtype=np.float16)
    m, e = torch.frexp(torch.tensor(v))
    rm, re = np.frexp(v)
    assert m.dtype == torch.float16
    np.testing.assert_array_equal(npy(m), rm)
    np.testing.assert_array_equal(npy(e), re)
    with pytest.raises(RuntimeError, match="floating-point"):
        torch.frexp(torch.tensor([1, 2]))


def test_ldexp():
    rng = np.random.default_rng(6)
    a = rng.standard_normal(50)
    k = rng.integers(-60, 60, 50)
    np.testing.assert_array_equal(npy(torch.ldexp(torch.tensor(a), torch.tensor(k))), np.ldexp(a, k))
    r = torch.ldexp(torch.tensor([1, 2, 3]), torch.tensor([1, 2, 3]))
    assert r.dtype == torch.float32 and r.tolist() == [2.0, 8.0, 24.0]
    x = torch.tensor([1.5, -2.0])
    assert x.ldexp_(torch.tensor([2, 3])) is x and x.tolist() == [6.0, -16.0]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_nextafter_exact(device, dtype):
    rng = np.random.default_rng(7)
    a = _specials(rng).astype(dtype)
    b = rng.permutation(a)
    b[:6] = a[:6]  # some equal pairs
    x, y = torch.tensor(a, device=device), torch.tensor(b, device=device)
    got = npy(torch.nextafter(x, y))
    ref = np.nextafter(a, b)
    np.testing.assert_array_equal(got, ref)
    np.testing.assert_array_equal(np.signbit(got[~np.isnan(ref)]), np.signbit(ref[~np.isnan(ref)]))
    z = x.clone()
    assert z.nextafter_(y) is z and np.array_equal(npy(z), ref, equal_nan=True)
    if real_torch is not None:
        np.testing.assert_array_equal(got, real_torch.nextafter(real_torch.tensor(a), real_torch.tensor(b)).numpy())


# ---- conjugation queries, rsub, fill, in-place spellings ------------------------------------

def test_conjugation_queries():
    x = torch.tensor([1.5, -2.0])
    for name in ("conj", "conj_physical", "resolve_conj", "resolve_neg"):
        assert getattr(torch, name)(x) is x and getattr(x, name)() is x
    assert torch.is_conj(x) is False and x.is_neg() is False
    assert x.conj_physical_() is x and x.tolist() == [1.5, -2.0]
    c = torch.tensor([1 + 2j, -3j])
    assert npy(torch.conj(c)).tolist() == [1 - 2j, 3j]
    assert npy(c).tolist() == [1 + 2j, -3j]  # not modified
    np.testing.assert_allclose(npy(torch.angle(c)), np.angle(npy(c)), rtol=1e-6)


def test_rsub_and_fill():
    i = torch.tensor([1, 2, 3])
    assert torch.rsub(i, 3).tolist() == [2, 1, 0]
    assert torch.rsub(i, i, alpha=2).tolist() == [-1, -2, -3]
    x = torch.tensor([0.5, 1.5], dtype=torch.float64)
    np.testing.assert_array_equal(npy(torch.rsub(x, torch.tensor([4.0, 4.0], dtype=torch.float64), alpha=3)),
                                  [2.5, -0.5])
    f = torch.fill(i, 2.5)
    assert f.dtype == torch.int64 and f.tolist() == [2, 2, 2] and i.tolist() == [1, 2, 3]
    assert torch.fill(x, torch.tensor(7.0)).tolist() == [7.0, 7.0]


def test_in_place_spellings():
    rng = np.random.default_rng(8)
    a, b = rng.standard_normal(10), rng.standard_normal(10)
    b[0] = a[0]
    for name, op in (("greater_", np.greater), ("greater_equal_", np.greater_equal), ("less_", np.less),
                     ("less_equal_", np.less_equal), ("not_equal_", np.not_equal)):
        x = torch.tensor(a)
        assert getattr(x, name)(torch.tensor(b)) is x
        np.testing.assert_array_equal(npy(x), op(a, b).astype(np.float64))
    x = torch.tensor(a)
    x.arctan2_(torch.tensor(b))
    np.testing.assert_allclose(npy(x), np.arctan2(a, b), rtol=1e-12)
    x = torch.tensor(np.abs(a), dtype=torch.float64)
    x.float_power_(2.5)
    np.testing.assert_allclose(npy(x), np.abs(a) ** 2.5, rtol=1e-12)
    with pytest.raises(RuntimeError):
        torch.tensor([1.0]).float_power_(2)  # float32 self
    x = torch.tensor([-1.0, 0.0, 2.0])
    x.heaviside_(torch.tensor([0.5, 0.5, 0.5]))
    assert x.tolist() == [0.0, 0.5, 1.0]
    x = torch.tensor([1.5, 3.0], dtype=torch.float64)
    x.polygamma_(1)
    np.testing.assert_allclose(npy(x), [0.9348022005446793, 0.3949340668482264], rtol=1e-10)
    x = torch.tensor([2.5, 4.0], dtype=torch.float64)
    x.mvlgamma_(2)
    ref = [math.lgamma(v) + math.lgamma(v - 0.5) + 0.5 * math.log(math.pi) for v in (2.5, 4.0)]
    np.testing.assert_allclose(npy(x), ref, rtol=1e-12)


# ---- linear-algebra glue --------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_addmv_addr_addbmm(device):
    rng = np.random.default_rng(9)
    inp, m, v = rng.standard_normal(4), rng.standard_normal((4, 3)), rng.standard_normal(3)
    T = lambda a: torch.tensor(a, device=device)  # noqa: E731
    np.testing.assert_allclose(npy(torch.addmv(T(inp), T(m), T(v), beta=0.5, alpha=2)),
                               0.5 * inp + 2 * m @ v, rtol=1e-12)
    nan = T(np.full(4, np.nan))
    np.testing.assert_allclose(npy(torch.addmv(nan, T(m), T(v), beta=0)), m @ v, rtol=1e-12)
    x = T(inp)
    assert x.addmv_(T(m), T(v)) is x
    np.testing.assert_allclose(npy(x), inp + m @ v, rtol=1e-12)
    a, b, base = rng.standard_normal(4), rng.standard_normal(5), rng.standard_normal((4, 5))
    np.testing.assert_allclose(npy(torch.addr(T(base), T(a), T(b), alpha=3)), base + 3 * np.outer(a, b), rtol=1e-12)
    y = T(base)
    y.addr_(T(a), T(b), beta=2)
    np.testing.assert_allclose(npy(y), 2 * base + np.outer(a, b), rtol=1e-12)
    b1, b2, c = rng.standard_normal((3, 4, 2)), rng.standard_normal((3, 2, 5)), rng.standard_normal((4, 5))
    np.testing.assert_allclose(npy(T(c).addbmm(T(b1), T(b2), beta=0.5)), 0.5 * c + np.einsum("bij,bjk->ik", b1, b2),
                               rtol=1e-12)
    z = T(c)
    z.addmm_(T(m[:, :2].T.copy()).T.contiguous().reshape(4, 2), T(b2[0]), alpha=2)
    np.testing.assert_allclose(npy(z), c + 2 * m[:, :2] @ b2[0], rtol=1e-12)
    w = T(rng.standard_normal((3, 4, 5)))
    w0 = npy(w).copy()
    w.baddbmm_(T(b1), T(b2))
    np.testing.assert_allclose(npy(w), w0 + b1 @ b2, rtol=1e-12)
    with pytest.raises(RuntimeError):
        torch.addmv(torch.tensor([1, 2]), torch.ones(2, 2, dtype=torch.int64), torch.tensor([1, 1]), beta=0.5)
    if real_torch is not None:
        t = real_torch.addmv(real_torch.tensor(inp), real_torch.tensor(m), real_torch.tensor(v), beta=0.5, alpha=2)
        np.testing.assert_allclose(npy(torch.addmv(T(inp), T(m), T(v), beta=0.5, alpha=2)), t.numpy(), rtol=1e-12)


def test_matrix_helpers():
    rng = np.random.default_rng(10)
    a, b, c = rng.standard_normal((2, 3)), rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    np.testing.assert_allclose(npy(torch.chain_matmul(torch.tensor(a), torch.tensor(b), torch.tensor(c))),
                               a @ b @ c, rtol=1e-12)
    with pytest.raises(RuntimeError, match="one or more"):
        torch.chain_matmul()
    u, v = rng.standard_normal(5) + 1j * rng.standard_normal(5), rng.standard_normal(5) + 1j * rng.standard_normal(5)
    np.testing.assert_allclose(npy(torch.vdot(torch.tensor(u), torch.tensor(v))), np.vdot(u, v), rtol=1e-12)
    np.testing.assert_allclose(npy(torch.tensor(u.real).vdot(torch.tensor(v.real))), np.dot(u.real, v.real),
                               rtol=1e-12)
    with pytest.raises(RuntimeError, match="same dtype"):
        torch.vdot(torch.ones(2), torch.ones(2, dtype=torch.float64))
    np.testing.assert_array_equal(npy(torch.diagflat(torch.tensor(a), 1)), np.diagflat(a, 1))
    np.testing.assert_array_equal(npy(torch.tensor(a).diagflat()), np.diagflat(a))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("p", [1, 2, 3.5, math.inf])
def test_renorm(device, p):
    rng = np.random.default_rng(11)
    a = rng.standard_normal((3, 4, 5))
    for dim in (0, 1, -1):
        others = tuple(d for d in range(3) if d != dim % 3)
        n = np.linalg.norm(np.moveaxis(a, dim, 0).reshape(a.shape[dim], -1), ord=p, axis=1)
        shape = [1, 1, 1]
        shape[dim] = -1
        n = n.reshape(shape)
        ref = np.where(n > 2.0, a * (2.0 / (n + 1e-7)), a)
        got = torch.renorm(torch.tensor(a, device=device), p, dim, 2.0)
        np.testing.assert_allclose(npy(got), ref, rtol=1e-12)
        assert others  # the norm runs over every other dim
    x = torch.tensor(a, device=device)
    assert x.renorm_(2, 0, 1.0) is x
    with pytest.raises(RuntimeError, match="non-positive"):
        torch.renorm(x, 0, 0, 1.0)
    with pytest.raises(IndexError):
        torch.renorm(x, 2, 3, 1.0)
    # differentiable (torch's renorm has a backward through the norm)
    y = torch.tensor(a, requires_grad=True)
    torch.renorm(y, 2, 0, 1.0).sum().backward()
    if real_torch is not None:
        yt = real_torch.tensor(a, requires_grad=True)
        real_torch.renorm(yt, 2, 0, 1.0).sum().backward()
        np.testing.assert_allclose(npy(y.grad), yt.grad.numpy(), rtol=1e-5)
        np.testing.assert_allclose(npy(torch.renorm(torch.tensor(a), p, 1, 2.0)),
                                   real_torch.renorm(real_torch.tensor(a), p, 1, 2.0).numpy(), rtol=1e-12)


def test_splits_pad_narrow_sum_to_size():
    a = np.arange(2 * 6 * 4.0).reshape(2, 6, 4)
    x = torch.tensor(a)
    for fn, ref in ((torch.hsplit, np.hsplit), (torch.vsplit, np.vsplit), (torch.dsplit, np.dsplit)):
        for arg in (2, [1, 3]):
            got = fn(x, arg)
            want = ref(a, arg)
            assert len(got) == len(want)
            for g, w in zip(got, want):
                np.testing.assert_array_equal(npy(g), w)
    assert [npy(t).tolist() for t in torch.arange(6.0).hsplit(3)] == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    with pytest.raises(RuntimeError, match="divisible"):
        torch.hsplit(x, 4)
    with pytest.raises(RuntimeError, match="at least 3"):
        torch.dsplit(x[0], 2)
    np.testing.assert_array_equal(npy(torch.constant_pad_nd(x, [1, 2], 7.0)),
                                  np.pad(a, ((0, 0), (0, 0), (1, 2)), constant_values=7.0))
    n = torch.narrow_copy(x, 1, 2, 3)
    np.testing.assert_array_equal(npy(n), a[:, 2:5])
    n[0, 0, 0] = -1
    assert a[0, 2, 0] == npy(x)[0, 2, 0]  # a copy
    np.testing.assert_array_equal(npy(x.sum_to_size(1, 6, 1)), a.sum(axis=(0, 2), keepdims=True))
    np.testing.assert_array_equal(npy(x.sum_to_size((4,))), a.sum(axis=(0, 1)))
    with pytest.raises(RuntimeError, match="expandable"):
        x.sum_to_size(3)


def test_kaiser_window_and_randint_like():
    for n, periodic, beta in ((1, True, 12.0), (7, False, 3.0), (8, True, 12.0), (16, False, 8.6)):
        got = torch.kaiser_window(n, periodic, beta, dtype=torch.float64)
        ref = np.kaiser(n + 1, beta)[:-1] if periodic and n > 1 else np.kaiser(n, beta)
        np.testing.assert_allclose(npy(got), ref, rtol=1e-12, atol=1e-15)
        if real_torch is not None:
            np.testing.assert_allclose(npy(got), real_torch.kaiser_window(n, periodic, beta,
                                                                          dtype=real_torch.float64).numpy(),
                                       rtol=1e-12, atol=1e-15)
    assert torch.kaiser_window(0).shape == (0,)
    assert torch.kaiser_window(3, layout=torch.strided).shape == (3,)
    with pytest.raises(NotImplementedError, match="layout"):
        torch.kaiser_window(3, layout=torch.sparse_coo)
    x = torch.zeros(2000)
    r = torch.randint_like(x, 3, 6)
    assert r.dtype == torch.float32 and r.shape == (2000,)
    assert set(npy(r).tolist()) == {3.0, 4.0, 5.0}
    r = torch.randint_like(torch.zeros(500, dtype=torch.int32), 4)
    assert r.dtype == torch.int32 and 0 <= int(r.min()) and int(r.max()) == 3


# ---- module constants and queries ---------------------------------------------------------

def test_module_constants_and_queries():
    assert torch.pi == math.pi and torch.e == math.e and torch.inf == math.inf
    assert math.isnan(torch.nan) and torch.newaxis is None
    x = torch.ones(2, 3)
    assert x.layout == torch.strided and x.layout is torch.strided
    assert repr(torch.strided) == "torch.strided" and isinstance(torch.strided, torch.layout)
    assert torch.strided != torch.sparse_coo
    with pytest.raises(TypeError):
        torch.layout()
    assert torch.typename(x) == x.type() and torch.typename(3) == "int"
    assert torch.typename(np.ndarray) == "numpy.ndarray"
    assert torch.is_storage(x.untyped_storage()) and not torch.is_storage(x)
    was = torch.is_warn_always_enabled()
    torch.set_warn_always(True)
    assert torch.is_warn_always_enabled() is True
    torch.set_warn_always(was)
    assert torch.set_flush_denormal(False) is False
    assert torch.get_deterministic_debug_mode() == 0
    try:
        torch.set_deterministic_debug_mode("warn")
        assert torch.get_deterministic_debug_mode() == 1 and torch.are_deterministic_algorithms_enabled()
        torch.set_deterministic_debug_mode(2)
        assert torch.get_deterministic_debug_mode() == 2
        assert not torch.is_deterministic_algorithms_warn_only_enabled()
        with pytest.raises(RuntimeError):
            torch.set_deterministic_debug_mode("loud")
        with pytest.raises(RuntimeError):
            torch.set_deterministic_debug_mode(3)
        with pytest.raises(TypeError):
            torch.set_deterministic_debug_mode(1.0)
    finally:
        torch.set_deterministic_debug_mode(0)
    assert not torch.are_deterministic_algorithms_enabled()
    if real_torch is not None:
        assert real_torch.get_deterministic_debug_mode() == 0


# ---- torch-level losses in aten's argument order (_functional_more.py) ----------------------

def test_torch_level_losses():
    F = torch.nn.functional
    rng = np.random.default_rng(12)
    x, t = rng.standard_normal((4, 3)), rng.uniform(0, 1, (4, 3))
    X, Tt = torch.tensor(x), torch.tensor(t)
    w, pw = torch.tensor(rng.uniform(0.5, 2, 3)), torch.tensor(rng.uniform(0.5, 2, 3))
    for r, name in ((0, "none"), (1, "mean"), (2, "sum")):
        got = torch.binary_cross_entropy_with_logits(X, Tt, w, pw, r)
        np.testing.assert_array_equal(npy(got), npy(F.binary_cross_entropy_with_logits(
            X, Tt, w, reduction=name, pos_weight=pw)))
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # aten's kl_div does not warn about 'mean'
            got_kl = torch.kl_div(X, Tt, r)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            np.testing.assert_array_equal(npy(got_kl), npy(F.kl_div(X, Tt, reduction=name)))
    # the plain NumPy value of BCE with logits (weight and pos_weight), summed
    lw = 1 + (npy(pw) - 1) * t
    ref = npy(w) * ((1 - t) * x + lw * (np.log1p(np.exp(-np.abs(x))) + np.maximum(-x, 0)))
    np.testing.assert_allclose(npy(torch.binary_cross_entropy_with_logits(X, Tt, w, pw, 2)), ref.sum(), rtol=1e-12)
    y = torch.tensor(np.sign(rng.standard_normal(4)))
    a, b = torch.tensor(rng.standard_normal(4)), torch.tensor(rng.standard_normal(4))
    np.testing.assert_allclose(npy(torch.margin_ranking_loss(a, b, y, 0.3, 2)),
                               np.maximum(0, -npy(y) * (npy(a) - npy(b)) + 0.3).sum(), rtol=1e-12)
    np.testing.assert_array_equal(npy(torch.hinge_embedding_loss(a, y, 0.5, 0)),
                                  npy(F.hinge_embedding_loss(a, y, 0.5, reduction="none")))
    np.testing.assert_array_equal(npy(torch.cosine_embedding_loss(X, X.flip(0), y, 0.1)),
                                  npy(F.cosine_embedding_loss(X, X.flip(0), y, 0.1)))
    np.testing.assert_array_equal(npy(torch.triplet_margin_loss(X, X.flip(0), X.flip(1), 1.0, 2, 1e-6, True, 2)),
                                  npy(F.triplet_margin_loss(X, X.flip(0), X.flip(1), swap=True, reduction="sum")))
    np.testing.assert_allclose(npy(torch.poisson_nll_loss(X, Tt, True, False, 1e-8, 1)),
                               (np.exp(x) - t * x).mean(), rtol=1e-12)
    with pytest.raises(TypeError):
        torch.poisson_nll_loss(X, Tt)
    with pytest.raises(TypeError, match="must be int"):
        torch.kl_div(X, Tt, "sum")
    np.testing.assert_array_equal(npy(torch.channel_shuffle(torch.arange(6.0).reshape(1, 6, 1), 2)).ravel(),
                                  [0, 3, 1, 4, 2, 5])
    z = torch.ones(4000)
    assert torch.dropout_(z, 0.5, True) is z
    v = set(npy(z).tolist())
    assert v == {0.0, 2.0}
    assert torch.dropout_(torch.ones(3), 0.5, False).tolist() == [1.0, 1.0, 1.0]
    if real_torch is not None:
        rt = real_torch.binary_cross_entropy_with_logits(
            real_torch.tensor(x), real_torch.tensor(t), real_torch.tensor(npy(w)), real_torch.tensor(npy(pw)), 2)
        np.testing.assert_allclose(npy(torch.binary_cross_entropy_with_logits(X, Tt, w, pw, 2)), rt.numpy(),
                                   rtol=1e-12)
        rk = real_torch.kl_div(real_torch.tensor(x), real_torch.tensor(t), 0, log_target=False)
        np.testing.assert_allclose(npy(torch.kl_div(X, Tt, 0)), rk.numpy(), rtol=1e-12)
