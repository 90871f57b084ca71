"""Elementwise ops against NumPy (float64 references) on the CPU and, marked
cuda, on the GPU: values, result dtypes, broadcasting, non-contiguous
inputs, operators, in-place forms and errors.

Tolerances (relative and absolute, scaled by the dtype): float64 1e-10,
float32 1e-5, float16 2e-3, bfloat16 1.6e-2 (one ulp of the result, since
inputs and outputs are rounded to the dtype)."""
import math

import numpy as np
import pytest

import pycuda_sem as torch

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
INTS = [torch.int32, torch.int64, torch.int16, torch.uint8]
TOL = {torch.float64: 1e-10, torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}

rng = np.random.default_rng(1234)


def values(shape, dtype, positive=False, lo=0.5, hi=2.0):
    """Random values never zero: magnitude in [lo, hi), random sign."""
    if dtype.is_floating_point:
        v = rng.uniform(lo, hi, size=shape)
    else:
        v = rng.integers(1, 10, size=shape).astype(np.float64)
    if not positive and dtype not in (torch.uint8, torch.bool):
        v = v * rng.choice([-1.0, 1.0], size=shape)
    return v


def make(v, dtype, device):
    """A tensor of dtype holding v (float64 array), and v rounded to the dtype."""
    t = torch.tensor(v, dtype=torch.float64).to(dtype)
    exact = np.asarray(t.to(torch.float64).tolist(), dtype=np.float64).reshape(v.shape)
    return t.to(device), exact


def as_np(t):
    return np.asarray(t.cpu().to(torch.float64).tolist(), dtype=np.float64).reshape(tuple(t.shape))


def close(got, ref, dtype):
    tol = TOL.get(dtype, 0)
    np.testing.assert_allclose(as_np(got), ref, rtol=tol, atol=tol, equal_nan=True)


# ---- binary ------------------------------------------------------------------------------

BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
    "maximum": np.maximum, "minimum": np.minimum, "atan2": np.arctan2,
    "remainder": np.remainder, "floor_divide": np.floor_divide,
}
SHAPES = [((3, 1, 5), (4, 5)), ((7,), (7,)), ((2, 3), ()), ((1,), (6, 1)), ((4, 1), (1, 6))]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOATS + [torch.int32, torch.int64])
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_against_numpy(device, dtype, name):
    if name == "atan2" and not dtype.is_floating_point:
        pytest.skip("atan2 of integers promotes; covered by test_integer_promotions")
    for sa, sb in SHAPES:
        a, an = make(values(sa, dtype), dtype, device)
        b, bn = make(values(sb, dtype), dtype, device)
        r = getattr(torch, name)(a, b)
        want_dtype = torch.get_default_dtype() if (name == "div" and not dtype.is_floating_point) else dtype
        assert r.dtype == want_dtype
        assert tuple(r.shape) == np.broadcast_shapes(sa, sb)
        assert r.device == a.device
        ref = BINARY[name](an, bn)
        if name == "floor_divide" and dtype.is_floating_point:
            # rounding of the quotient may move across an integer in low precision
            ref = np.floor_divide(an, bn)
            assert np.mean(np.abs(as_np(r) - ref) > 0) < 0.05
            continue
        close(r, ref, want_dtype if want_dtype.is_floating_point else dtype)


@pytest.mark.parametrize("device", DEVICES)
def test_pow_and_alpha(device):
    a, an = make(values((5, 4), torch.float32, positive=True), torch.float32, device)
    b, bn = make(values((4,), torch.float32), torch.float32, device)
    close(torch.pow(a, b), an ** bn, torch.float32)
    close(a ** 2, an ** 2, torch.float32)
    close(2 ** b, 2.0 ** bn, torch.float32)
    close(torch.add(a, b, alpha=3), an + 3 * bn, torch.float32)
    close(torch.sub(a, b, alpha=0.5), an - 0.5 * bn, torch.float32)
    i, inn = make(values((6,), torch.int64), torch.int64, device)
    r = i ** 3
    assert r.dtype == torch.int64
    np.testing.assert_array_equal(as_np(r), inn ** 3)
    with pytest.raises(RuntimeError, match="negative integer powers"):
        i ** -1
    with pytest.raises(RuntimeError, match="alpha"):
        torch.add(i, i, alpha=0.5)


@pytest.mark.parametrize("device", DEVICES)
def test_div_rounding_modes(device):
    v = np.array([7.0, -7.0, 7.5, -7.5, 3.0, -3.0])
    w = np.array([2.0, 2.0, -2.0, -2.0, 7.0, 7.0])
    for dtype in [torch.float32, torch.int64]:
        a, an = make(np.trunc(v) if not dtype.is_floating_point else v, dtype, device)
        b, bn = make(w, dtype, device)
        t = torch.div(a, b, rounding_mode="trunc")
        f = torch.div(a, b, rounding_mode="floor")
        assert t.dtype == dtype and f.dtype == dtype
        np.testing.assert_allclose(as_np(t), np.trunc(an / bn))
        np.testing.assert_allclose(as_np(f), np.floor(an / bn))
        np.testing.assert_allclose(as_np(a % b), np.remainder(an, bn))
    with pytest.raises(ValueError):
        torch.div(a, b, rounding_mode="bad")


CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
       "gt": np.greater, "ge": np.greater_equal}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.float16, torch.float64])
def test_comparisons_and_logical(device, dtype):
    a, an = make(np.round(values((4, 6), dtype)), dtype, device)
    b, bn = make(np.round(values((6,), dtype)), dtype, device)
    for name, f in CMP.items():
        r = getattr(torch, name)(a, b)
        assert r.dtype == torch.bool
        np.testing.assert_array_equal(as_np(r), f(an, bn))
    np.testing.assert_array_equal(as_np(a < b), an < bn)
    np.testing.assert_array_equal(as_np(a >= 1), an >= 1)
    np.testing.assert_array_equal(as_np(a == b), an == bn)
    for name, f in [("logical_and", np.logical_and), ("logical_or", np.logical_or),
                    ("logical_xor", np.logical_xor)]:
        r = getattr(torch, name)(a > 0, b > 0)
        assert r.dtype == torch.bool
        np.testing.assert_array_equal(as_np(r), f(an > 0, bn > 0))
    np.testing.assert_array_equal(as_np(torch.logical_not(a > 0)), ~(an > 0))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.uint8, torch.int16, torch.bool])
def test_bitwise(device, dtype):
    if dtype == torch.bool:
        an = rng.integers(0, 2, size=(5, 3)).astype(bool)
        bn = rng.integers(0, 2, size=(3,)).astype(bool)
        a, b = torch.tensor(an).to(device), torch.tensor(bn).to(device)
    else:
        an = rng.integers(1, 100, size=(5, 3))
        bn = rng.integers(1, 100, size=(3,))
        a = torch.tensor(an, dtype=dtype).to(device)
        b = torch.tensor(bn, dtype=dtype).to(device)
    for op, f in [("__and__", np.bitwise_and), ("__or__", np.bitwise_or), ("__xor__", np.bitwise_xor)]:
        r = getattr(a, op)(b)
        assert r.dtype == dtype
        np.testing.assert_array_equal(np.asarray(r.cpu().tolist()), f(an, bn))
    np.testing.assert_array_equal(np.asarray((~a).cpu().tolist()), np.invert(an.astype(
        {torch.int32: np.int32, torch.int64: np.int64, torch.uint8: np.uint8, torch.int16: np.int16,
         torch.bool: bool}[dtype])))
    f = torch.ones(3, device=device)
    with pytest.raises(RuntimeError, match="not implemented for 'Float'"):
        f & f


# ---- promotion ---------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_promotion_rules(device):
    i64 = torch.tensor([1, 2, 3], device=device)
    i32 = torch.tensor([1, 2, 3], dtype=torch.int32, device=device)
    f32 = torch.tensor([1.0, 2.0, 3.0], device=device)
    f64 = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, device=device)
    f16 = f32.half()
    b = torch.tensor([True, False, True], device=device)
    assert (i64 + f32).dtype == torch.float32
    assert (i64 + 2.5).dtype == torch.get_default_dtype()
    assert (i64 + 2).dtype == torch.int64
    assert (i32 + 2).dtype == torch.int32
    assert (i64 / i64).dtype == torch.get_default_dtype()
    assert (i32 / 2).dtype == torch.float32
    assert (f32 + f64).dtype == torch.float64
    assert (f32 < f64).dtype == torch.bool
    assert (f16 + torch.tensor(1.0, device=device)).dtype == torch.float16
    assert (f16 + torch.tensor(1.0, dtype=torch.float64)).dtype == torch.float16  # 0-dim CPU joins
    assert (i32 + torch.tensor(5, device=device)).dtype == torch.int32
    assert (i32 + torch.tensor(5.0, device=device)).dtype == torch.float32
    assert (b + 5).dtype == torch.int64
    assert (b + b).dtype == torch.bool
    assert (b * 1.5).dtype == torch.float32
    assert (f32 + 1j).dtype == torch.complex64
    assert (f64 + 1j).dtype == torch.complex128
    assert torch.atan2(i64, i64).dtype == torch.float32
    assert torch.exp(i64).dtype == torch.float32
    assert torch.abs(i64).dtype == torch.int64
    assert torch.floor(i32).dtype == torch.int32
    np.testing.assert_allclose(as_np(i64 + 2.5), [3.5, 4.5, 5.5])
    np.testing.assert_allclose(as_np(2 - i64), [1, 0, -1])
    np.testing.assert_allclose(as_np(6 / f32), [6, 3, 2])
    with pytest.raises(RuntimeError, match="Subtraction"):
        b - b
    with pytest.raises(RuntimeError, match="Negation"):
        -b


@pytest.mark.parametrize("device", DEVICES)
def test_inplace_and_out(device):
    a, an = make(values((3, 4), torch.float32), torch.float32, device)
    b, bn = make(values((4,), torch.float32), torch.float32, device)
    x = a.clone()
    y = x
    x += b
    assert x is y
    close(x, an + bn, torch.float32)
    x -= 1
    x *= b
    x /= 2
    close(x, (an + bn - 1) * bn / 2, torch.float32)
    x.add_(b, alpha=2).mul_(3)
    close(x, ((an + bn - 1) * bn / 2 + 2 * bn) * 3, torch.float32)
    out = torch.empty(3, 4, device=device)
    r = torch.add(a, b, out=out)
    assert r is out
    close(out, an + bn, torch.float32)
    i = torch.tensor([1, 2, 3], device=device)
    with pytest.raises(RuntimeError, match="can't be cast"):
        i += 1.5
    small = torch.ones(3, 1, device=device)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        small += torch.ones(3, 4, device=device)
    with pytest.raises(RuntimeError, match="must match the size"):
        torch.ones(3, device=device) + torch.ones(4, device=device)


@pytest.mark.parametrize("device", DEVICES)
def test_non_contiguous(device):
    a, an = make(values((6, 8), torch.float32), torch.float32, device)
    b, bn = make(values((8, 6), torch.float32), torch.float32, device)
    close(a + b.t(), an + bn.T, torch.float32)
    close(a[:, ::2] * b.t()[:, 1::2], an[:, ::2] * bn.T[:, 1::2], torch.float32)
    close(torch.exp(a.t()), np.exp(an.T), torch.float32)
    x = a.clone()
    xt = x.t()
    xt += b  # in place through a transposed view
    close(x, an + bn.T, torch.float32)


# ---- ternary -----------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.float16])
def test_where_clamp_lerp(device, dtype):
    a, an = make(values((4, 5), dtype), dtype, device)
    b, bn = make(values((5,), dtype), dtype, device)
    c = a > 0
    close(torch.where(c, a, b), np.where(an > 0, an, bn), dtype)
    close(a.where(c, b), np.where(an > 0, an, bn), dtype)
    close(torch.where(c, a, 0), np.where(an > 0, an, 0), dtype)
    close(torch.clamp(a, min=-1, max=1), np.clip(an, -1, 1), dtype)
    close(a.clamp(min=0), np.maximum(an, 0), dtype)
    close(a.clip(max=0), np.minimum(an, 0), dtype)
    close(torch.clamp(a, min=b, max=b + 1 if dtype.is_floating_point else b + 1),
          np.minimum(np.maximum(an, bn), bn + 1), dtype)
    with pytest.raises(RuntimeError, match="At least one"):
        torch.clamp(a)
    if dtype.is_floating_point:
        close(torch.lerp(a, b, 0.25), an + 0.25 * (bn - an), dtype)
        w, wn = make(rng.uniform(0, 1, size=(4, 5)), dtype, device)
        close(a.lerp(b, w), an + wn * (bn - an), dtype)
    with pytest.raises(RuntimeError, match="boolean"):
        torch.where(a, a, b)


# ---- unary -------------------------------------------------------------------------------

def _gelu(x):
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def _erfinv_by_bisection(y):
    # independent of the library's erfinv: 200 halvings of [-6, 6] on math.erf
    def one(v):
        lo, hi = -6.0, 6.0
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if math.erf(mid) < v else (lo, mid)
        return 0.5 * (lo + hi)
    return np.vectorize(one, otypes=[np.float64])(y)


_lgamma_ref = np.vectorize(math.lgamma, otypes=[np.float64])


def _digamma_by_differences(x):
    # independent of the library's digamma: the five-point derivative of math.lgamma
    h = 1e-3
    f = _lgamma_ref
    return (f(x - 2 * h) - 8 * f(x - h) + 8 * f(x + h) - f(x + 2 * h)) / (12 * h)


UNARY = {
    "neg": (np.negative, False), "abs": (np.abs, False), "sign": (np.sign, False),
    "exp": (np.exp, False), "exp2": (np.exp2, False), "expm1": (np.expm1, False),
    "log": (np.log, True), "log2": (np.log2, True), "log10": (np.log10, True),
    "log1p": (np.log1p, True), "sqrt": (np.sqrt, True), "rsqrt": (lambda x: 1 / np.sqrt(x), True),
    "sin": (np.sin, False), "cos": (np.cos, False), "tan": (np.tan, False),
    "asin": (lambda x: np.arcsin(x / 2.5), None), "acos": (lambda x: np.arccos(x / 2.5), None),
    "atan": (np.arctan, False), "sinh": (np.sinh, False), "cosh": (np.cosh, False),
    "tanh": (np.tanh, False), "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), False),
    "relu": (lambda x: np.maximum(x, 0), False), "gelu": (_gelu, False),
    "floor": (np.floor, False), "ceil": (np.ceil, False), "round": (np.round, False),
    "trunc": (np.trunc, False), "frac": (lambda x: x - np.trunc(x), False),
    "reciprocal": (lambda x: 1 / x, False), "square": (np.square, False),
    "erf": (np.vectorize(math.erf, otypes=[np.float64]), False),
    "erfc": (np.vectorize(math.erfc, otypes=[np.float64]), False),
    "erfinv": (lambda x: _erfinv_by_bisection(x / 2.5), None),
    "lgamma": (_lgamma_ref, True),
    "digamma": (_digamma_by_differences, True),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_against_numpy(device, dtype, name):
    f, positive = UNARY[name]
    v = values((5, 7), dtype, positive=bool(positive), lo=0.5, hi=2.4)
    if positive is None:  # asin/acos/erfinv: the op itself scales by 1/2.5 in the reference
        v = v
    a, an = make(v, dtype, device)
    if positive is None:
        a = a / 2.5
        an = as_np(a) * 2.5
    r = getattr(torch, name)(a)
    assert r.dtype == dtype and tuple(r.shape) == (5, 7)
    assert r.device == a.device
    close(r, f(an), dtype)
    close(getattr(a, name)(), f(an), dtype)
    x = a.clone()
    assert getattr(x, name + "_")() is x
    close(x, f(an), dtype)
    close(getattr(torch, name)(a.t()), f(an).T, dtype)


@pytest.mark.parametrize("device", DEVICES)
def test_unary_integers_and_predicates(device):
    i = torch.tensor([[-3, 1, 4], [2, -5, 9]], device=device)
    n = np.array([[-3, 1, 4], [2, -5, 9]])
    for name, f in [("neg", np.negative), ("abs", np.abs), ("sign", np.sign), ("square", np.square),
                    ("floor", np.floor), ("relu", lambda x: np.maximum(x, 0))]:
        r = getattr(torch, name)(i)
        assert r.dtype == torch.int64, name
        np.testing.assert_array_equal(as_np(r), f(n))
    r = torch.sqrt(i.abs())
    assert r.dtype == torch.float32
    np.testing.assert_allclose(as_np(r), np.sqrt(np.abs(n)), rtol=1e-6)
    np.testing.assert_array_equal(as_np(-i), -n)
    np.testing.assert_array_equal(as_np(abs(i)), np.abs(n))
    x = torch.tensor([1.0, float("nan"), float("inf"), -float("inf"), -2.0], device=device)
    xn = np.array([1.0, np.nan, np.inf, -np.inf, -2.0])
    for name, f in [("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite)]:
        r = getattr(torch, name)(x)
        assert r.dtype == torch.bool
        np.testing.assert_array_equal(as_np(r), f(xn))
    r = torch.nan_to_num(x)
    np.testing.assert_allclose(as_np(r), np.nan_to_num(xn.astype(np.float32)).astype(np.float64))
    r = torch.nan_to_num(x, nan=0.5, posinf=9.0, neginf=-9.0)
    np.testing.assert_allclose(as_np(r), [1.0, 0.5, 9.0, -9.0, -2.0])
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        torch.frac(i)
    g = torch.gelu(x[:1], approximate="tanh")
    np.testing.assert_allclose(as_np(g), [0.8411920], rtol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_complex_elementwise(device):
    an = rng.uniform(0.5, 2, (4, 3)) + 1j * rng.uniform(0.5, 2, (4, 3))
    bn = rng.uniform(0.5, 2, (3,)) + 1j * rng.uniform(0.5, 2, (3,))
    for dtype, tol in [(torch.complex64, 1e-5), (torch.complex128, 1e-12)]:
        a = torch.tensor(an, dtype=dtype).to(device)
        b = torch.tensor(bn, dtype=dtype).to(device)
        for got, want in [(a + b, an + bn), (a - b, an - bn), (a * b, an * bn), (a / b, an / bn),
                          (-a, -an), (torch.exp(a), np.exp(an))]:
            assert got.dtype == dtype
            g = np.asarray(got.cpu().tolist())
            np.testing.assert_allclose(g, want, rtol=tol, atol=tol)
        r = torch.abs(a)
        assert r.dtype == (torch.float32 if dtype == torch.complex64 else torch.float64)
        np.testing.assert_allclose(as_np(r), np.abs(an), rtol=tol)
        with pytest.raises(RuntimeError, match="not implemented for 'Complex"):
            torch.floor(a)
        with pytest.raises(RuntimeError):
            torch.maximum(a, b)


def test_operators_return_notimplemented_for_foreign_types():
    t = torch.ones(3)
    with pytest.raises(TypeError):
        t + "x"
    assert (t == None) is False  # noqa: E711
    assert t != None  # noqa: E711
    assert hash(t) == hash(t)
    assert len({t, t}) == 1


@pytest.mark.parametrize("device", DEVICES)
def test_uint64_range_alpha_and_scalars_keep_their_value(device):
    """An int in [2**63, 2**64) is torch's uint64 Scalar: as add/sub's alpha
    and as a clamp bound it keeps its value in a floating computation (it was
    read as its int64 bit pattern, -2**63), and an integer one refuses it."""
    rng = np.random.default_rng(11)
    x, y = rng.standard_normal(6), rng.standard_normal(6)
    tx, ty = torch.tensor(x, device=device), torch.tensor(y, device=device)
    big = 1 << 63
    np.testing.assert_allclose(torch.add(tx, ty, alpha=big).cpu().numpy(), x + 2.0 ** 63 * y,
                               rtol=1e-15)
    np.testing.assert_allclose(torch.sub(tx, ty, alpha=big).cpu().numpy(), x - 2.0 ** 63 * y,
                               rtol=1e-15)
    ti = torch.tensor([1, 2], device=device)
    with pytest.raises(RuntimeError, match="without overflow"):
        torch.add(ti, ti, alpha=big)
    with pytest.raises(RuntimeError, match="type int without overflow"):  # int32, as torch
        torch.add(ti.int(), ti.int(), alpha=1 << 40)
    huge = torch.tensor([1e19, -1e19, 5.0], dtype=torch.float64, device=device)
    assert huge.clamp(max=big).tolist() == [2.0 ** 63, -1e19, 5.0]
