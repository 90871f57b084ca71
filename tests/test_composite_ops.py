"""The ops composed in Python (_math_elementwise.py, _math_reduce.py,
_math_shape.py, _sampling.py, _dtype_info.py's queries), as functions and as
Tensor methods, on the CPU and CUDA: each against NumPy in float64, and
against torch itself where it imports (the same data through both)."""
import itertools
import math

import numpy as np
import pytest

import pycuda_sem as torch

from torch_oracle import _torch as real_torch  # torch where it imports, else None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
pytestmark = pytest.mark.usefixtures("no_tf32")  # float64 references (conftest.py)



def npy(t):
    return t.detach().cpu().double().numpy()


def _data():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 5)).astype(np.float32)
    a[0, 0], a[1, 1] = 0.0, -0.0
    b = rng.standard_normal((4, 5)).astype(np.float32)
    b[0, 1] = 0.0
    return a, b


def _xlogy(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((x == 0) & ~np.isnan(y), 0.0, x * np.log(y))


def _unfold(x, dim, size, step):
    w = np.lib.stride_tricks.sliding_window_view(x, size, axis=dim)
    return np.take(w, np.arange(0, w.shape[dim], step), axis=dim)


def _block_diag(*ms):
    ms = [np.atleast_2d(m) for m in ms]
    out = np.zeros((sum(m.shape[0] for m in ms), sum(m.shape[1] for m in ms)))
    r = c = 0
    for m in ms:
        out[r:r + m.shape[0], c:c + m.shape[1]] = m
        r, c = r + m.shape[0], c + m.shape[1]
    return out


# name: (op over (T, x, y), the NumPy answer over float64 (x, y))
CASES = {
    "clamp_min": (lambda T, x, y: x.clamp_min(0.1), lambda x, y: np.maximum(x, 0.1)),
    "clamp_max": (lambda T, x, y: T.clamp_max(x, y), lambda x, y: np.minimum(x, y)),
    "logaddexp": (lambda T, x, y: T.logaddexp(x, y), np.logaddexp),
    "logaddexp2": (lambda T, x, y: x.logaddexp2(y), np.logaddexp2),
    "xlogy": (lambda T, x, y: T.xlogy(x, y.abs()), lambda x, y: _xlogy(x, np.abs(y))),
    "logit": (lambda T, x, y: T.logit(x.abs() / 3, eps=0.01),
              lambda x, y: (lambda p: np.log(p / (1 - p)))(np.clip(np.abs(x) / 3, 0.01, 0.99))),
    "sinc": (lambda T, x, y: x.sinc(), lambda x, y: np.sinc(x)),
    "float_power": (lambda T, x, y: T.float_power(x.abs(), 2.5), lambda x, y: np.abs(x) ** 2.5),
    "hypot": (lambda T, x, y: T.hypot(x, y), np.hypot),
    "hypot_large": (lambda T, x, y: T.hypot(x * 1e30, y * 1e30), lambda x, y: np.hypot(x, y) * 1e30),
    "signbit": (lambda T, x, y: T.signbit(x), lambda x, y: np.signbit(x)),
    "copysign": (lambda T, x, y: T.copysign(x, y), np.copysign),
    "copysign_number": (lambda T, x, y: x.copysign(-0.0), lambda x, y: -np.abs(x)),
    "sgn": (lambda T, x, y: x.sgn(), lambda x, y: np.sign(x)),
    "heaviside": (lambda T, x, y: T.heaviside(x, y), np.heaviside),
    "deg2rad": (lambda T, x, y: T.deg2rad(x), lambda x, y: np.deg2rad(x)),
    "rad2deg": (lambda T, x, y: x.rad2deg(), lambda x, y: np.rad2deg(x)),
    "fmod": (lambda T, x, y: T.fmod(x * 5, y), lambda x, y: np.fmod(x * 5, y)),
    "fmod_number": (lambda T, x, y: T.fmod(x * 5, -1.5), lambda x, y: np.fmod(x * 5, -1.5)),
    "nansum": (lambda T, x, y: T.nansum(x, 1, keepdim=True), lambda x, y: np.nansum(x, 1, keepdims=True)),
    "nanmean": (lambda T, x, y: x.nanmean(0), lambda x, y: np.nanmean(x, 0)),
    "aminmax": (lambda T, x, y: T.stack(list(T.aminmax(x, dim=1))), lambda x, y: np.stack([x.min(1), x.max(1)])),
    "std_mean": (lambda T, x, y: T.stack(list(T.std_mean(x, 1))),
                 lambda x, y: np.stack([x.std(1, ddof=1), x.mean(1)])),
    "var_mean": (lambda T, x, y: T.stack(list(T.var_mean(x, (0, 1), correction=0, keepdim=True))),
                 lambda x, y: np.stack([x.var(keepdims=True), x.mean(keepdims=True)])),
    "quantile": (lambda T, x, y: x.quantile(0.3), lambda x, y: np.quantile(x, 0.3)),
    "quantile_dim": (lambda T, x, y: T.quantile(x, T.tensor([0.1, 0.5, 0.9], device=x.device), dim=1, keepdim=True),
                     lambda x, y: np.quantile(x, [0.1, 0.5, 0.9], axis=1, keepdims=True)),
    "quantile_lower": (lambda T, x, y: T.quantile(x, 0.37, dim=0, interpolation="lower"),
                       lambda x, y: np.quantile(x, 0.37, axis=0, method="lower")),
    "quantile_midpoint": (lambda T, x, y: T.quantile(x, T.tensor([0.25, 0.75], device=x.device), dim=0,
                                                     interpolation="midpoint"),
                          lambda x, y: np.quantile(x, [0.25, 0.75], axis=0, method="midpoint")),
    "cov": (lambda T, x, y: x.cov(), lambda x, y: np.cov(x)),
    "cov_weights": (lambda T, x, y: T.cov(x, fweights=T.tensor([1, 2, 3, 1, 2], device=x.device),
                                          aweights=T.tensor([0.5, 1., 2., 1., 0.3], device=x.device)),
                    lambda x, y: np.cov(x, fweights=[1, 2, 3, 1, 2], aweights=[0.5, 1, 2, 1, 0.3])),
    "corrcoef": (lambda T, x, y: T.corrcoef(x), lambda x, y: np.corrcoef(x)),
    "ravel": (lambda T, x, y: x.t().ravel(), lambda x, y: x.T.ravel()),
    "unflatten": (lambda T, x, y: x.unflatten(1, (5, 1)), lambda x, y: x.reshape(4, 5, 1)),
    "unfold": (lambda T, x, y: x.unfold(1, 2, 2), lambda x, y: _unfold(x, 1, 2, 2)),
    "unfold_rows": (lambda T, x, y: x.unfold(0, 3, 1), lambda x, y: _unfold(x, 0, 3, 1)),
    "split_with_sizes": (lambda T, x, y: x.split_with_sizes([2, 3], 1)[1], lambda x, y: x[:, 2:]),
    "rot90": (lambda T, x, y: T.rot90(x), lambda x, y: np.rot90(x)),
    "rot90_k3": (lambda T, x, y: x.rot90(3, (1, 0)), lambda x, y: np.rot90(x, 3, (1, 0))),
    "rot90_k-2": (lambda T, x, y: x.rot90(-2), lambda x, y: np.rot90(x, -2)),
    "diff": (lambda T, x, y: x.diff(), lambda x, y: np.diff(x)),
    "diff_ends": (lambda T, x, y: T.diff(x, 2, 0, prepend=y[:1], append=y[-1:]),
                  lambda x, y: np.diff(x, 2, 0, prepend=y[:1], append=y[-1:])),
    "tensordot": (lambda T, x, y: T.tensordot(x, y, ([1], [1])), lambda x, y: np.tensordot(x, y, ([1], [1]))),
    "tensordot_int": (lambda T, x, y: T.tensordot(x.reshape(2, 2, 5), y.reshape(2, 5, 2), 2),
                      lambda x, y: np.tensordot(x.reshape(2, 2, 5), y.reshape(2, 5, 2), 2)),
    "inner": (lambda T, x, y: T.inner(x, y), np.inner),
    "kron": (lambda T, x, y: T.kron(x[:2, :3], y[:3, :2]), lambda x, y: np.kron(x[:2, :3], y[:3, :2])),
    "cartesian_prod": (lambda T, x, y: T.cartesian_prod(x[0], y[1, :2]),
                       lambda x, y: np.array(list(itertools.product(x[0], y[1, :2])))),
    "combinations": (lambda T, x, y: T.combinations(x[0], 3),
                     lambda x, y: np.array(list(itertools.combinations(x[0], 3)))),
    "combinations_repl": (lambda T, x, y: T.combinations(x[0, :3], 2, with_replacement=True),
                          lambda x, y: np.array(list(itertools.combinations_with_replacement(x[0, :3], 2)))),
    "block_diag": (lambda T, x, y: T.block_diag(x[:2, :3], y[0], x[0, 1]),
                   lambda x, y: _block_diag(x[:2, :3], y[0], x[0, 1])),
    "column_stack": (lambda T, x, y: T.column_stack([x[0], y[1]]), lambda x, y: np.column_stack([x[0], y[1]])),
    "row_stack": (lambda T, x, y: T.row_stack([x, y]), lambda x, y: np.vstack([x, y])),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_against_numpy_and_torch(device, name):
    op, ref = CASES[name]
    a, b = _data()
    x, y = torch.tensor(a, device=device), torch.tensor(b, device=device)
    got = op(torch, x, y)
    assert got.device == x.device
    with np.errstate(all="ignore"):
        want = np.asarray(ref(a.astype(np.float64), b.astype(np.float64)))
    assert tuple(got.shape) == want.shape
    np.testing.assert_allclose(npy(got), want, rtol=2e-5, atol=2e-6, equal_nan=True)
    if real_torch is not None:
        r = op(real_torch, real_torch.from_numpy(a), real_torch.from_numpy(b))
        assert str(r.dtype).split(".")[-1] == str(got.dtype).split(".")[-1]
        np.testing.assert_allclose(npy(got), r.double().numpy(), rtol=2e-5, atol=2e-6, equal_nan=True)


@pytest.mark.parametrize("device", DEVICES)
def test_nan_and_infinity_rules(device):
    nan, inf = float("nan"), float("inf")
    x = torch.tensor([inf, -inf, 1.0, -2.0, inf, 0.0, -0.0, nan], device=device)
    r = x.flip(0)
    assert x.isposinf().tolist() == [True, False, False, False, True, False, False, False]
    assert torch.isneginf(x).tolist() == [False, True, False, False, False, False, False, False]
    assert x.signbit().tolist() == [False, True, False, True, False, False, True, False]
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(npy(torch.logaddexp(x, x)), np.logaddexp(npy(x), npy(x)), rtol=1e-6)
    np.testing.assert_allclose(npy(torch.hypot(x, r)), np.hypot(npy(x), npy(r)), rtol=1e-6)
    assert npy(x.nansum()) == np.nansum(npy(x)) or math.isnan(np.nansum(npy(x)))
    q = torch.tensor([[1.0, nan, 3.0], [1.0, 2.0, 3.0]], device=device)
    np.testing.assert_array_equal(npy(q.quantile(0.5, dim=1)), [nan, 2.0])
    np.testing.assert_array_equal(npy(q.nanquantile(0.5, dim=1)), [2.0, 2.0])
    np.testing.assert_array_equal(npy(torch.nanmean(q, 1)), [2.0, 2.0])


@pytest.mark.parametrize("device", DEVICES)
def test_integer_inputs_keep_torch_dtypes(device):
    x = torch.tensor([[-7, 3, 5], [6, -2, 1]], device=device)
    assert torch.fmod(x, 3).dtype == torch.int64 and torch.fmod(x, 3).tolist() == [[-1, 0, 2], [0, -2, 1]]
    assert x.sgn().dtype == torch.int64 and x.sgn().tolist() == [[-1, 1, 1], [1, -1, 1]]
    assert torch.copysign(x, -1).dtype == torch.float32
    assert x.nansum().item() == 6 and x.deg2rad().dtype == torch.float32
    assert torch.xlogy(x.abs(), 2).dtype == torch.float32


def test_gradients_flow_through_the_compositions():
    x = torch.tensor([[0.3, -1.2, 2.0], [0.7, 0.1, -0.4]], dtype=torch.float64, requires_grad=True)
    y = torch.tensor([[1.5, 0.2, -0.9], [2.2, -1.1, 0.6]], dtype=torch.float64, requires_grad=True)
    for f in (lambda a, b: torch.logaddexp(a, b), lambda a, b: torch.hypot(a, b),
              lambda a, b: torch.xlogy(a, b.abs()), lambda a, b: a.sinc() * b,
              lambda a, b: torch.tensordot(a, b, ([1], [1])), lambda a, b: torch.kron(a, b),
              lambda a, b: a.quantile(0.4, dim=1) + b.sum(), lambda a, b: torch.cov(a + b)):
        assert torch.autograd.gradcheck(f, (x, y))


def test_errors_name_the_problem():
    x = torch.randn(3, 4)
    with pytest.raises(RuntimeError, match="must be in the range"):
        x.quantile(1.5)
    with pytest.raises(ValueError, match="interpolation"):
        x.quantile(0.5, interpolation="cubic")
    with pytest.raises(RuntimeError, match="expected rotation dims to be different"):
        x.rot90(1, (0, 0))
    with pytest.raises(RuntimeError, match="maximum size for tensor at dimension 1 is 4"):
        x.unfold(1, 5, 1)
    with pytest.raises(RuntimeError, match="sum exactly to 4"):
        x.split_with_sizes([1, 2], 1)
    with pytest.raises(RuntimeError, match="more than one value"):
        torch.is_nonzero(x)
    with pytest.raises(RuntimeError, match="contracted dimensions need to match"):
        torch.tensordot(x, x, ([1], [0]))
    with pytest.raises(TypeError, match="must be Tensor"):
        torch.hypot([1.0], x)
    assert torch.is_nonzero(torch.tensor([2])) is True and torch.is_same_size(x, x.clone())


# ---- sampling ---------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_multinomial_frequencies_and_support(device):
    g = torch.Generator(device=device) if device == "cpu" else None
    if g is not None:
        g.manual_seed(0)
    else:
        torch.manual_seed(0)
    w = torch.tensor([[0.1, 0.0, 0.5, 0.4], [1.0, 1.0, 0.0, 0.0]], device=device)
    n = 40000
    m = torch.multinomial(w, n, replacement=True, generator=g)
    assert m.shape == (2, n) and m.dtype == torch.int64
    freq = np.stack([np.bincount(m[i].cpu().numpy(), minlength=4) / n for i in range(2)])
    want = npy(w) / npy(w).sum(1, keepdims=True)
    assert np.abs(freq - want).max() < 0.015  # ~6 standard errors at n = 40000
    for _ in range(20):  # without replacement: distinct, never a zero-weight category
        s = w[0].multinomial(3).tolist()
        assert len(set(s)) == 3 and 1 not in s
    with pytest.raises(RuntimeError, match="not enough non-negative category"):
        w.multinomial(3)
    with pytest.raises(RuntimeError, match="element < 0"):
        torch.multinomial(torch.tensor([0.5, -0.1], device=device), 1)


@pytest.mark.parametrize("device", DEVICES)
def test_bernoulli_and_normal_moments(device):
    torch.manual_seed(1)
    p = torch.full((50000,), 0.3, device=device)
    b = torch.bernoulli(p)
    assert set(np.unique(npy(b))) <= {0.0, 1.0} and abs(npy(b).mean() - 0.3) < 0.01
    assert abs(npy(p.bernoulli(0.8)).mean() - 0.8) < 0.01
    n = torch.normal(torch.full((50000,), 2.0, device=device), torch.full((50000,), 3.0, device=device))
    assert abs(npy(n).mean() - 2.0) < 0.06 and abs(npy(n).std() - 3.0) < 0.06
    assert torch.normal(1.0, 2.0, (3, 2), device=device).shape == (3, 2)
    assert torch.normal(torch.zeros(3, device=device)).shape == (3,)
    with pytest.raises(RuntimeError, match="std >= 0"):
        torch.normal(torch.zeros(3), -1.0)
    with pytest.raises(RuntimeError, match="p_in >= 0"):
        torch.bernoulli(torch.tensor([1.5]))


# ---- dtype queries -----------------------------------------------------------------------

def test_result_type_can_cast_is_signed():
    T = torch
    cases = [((T.tensor([1, 2]), 1.0), T.float32), ((T.tensor([1.0]), T.tensor(2, dtype=T.float64)), T.float32),
             ((T.tensor(1), 2.5), T.float32), ((T.tensor([1], dtype=T.int32), T.tensor(1, dtype=T.int64)), T.int32),
             ((T.tensor([True]), 3), T.int64), ((T.tensor([1], dtype=T.uint8), T.tensor([1], dtype=T.int8)), T.int16),
             ((T.tensor(1.0, dtype=T.float64), T.tensor([1], dtype=T.int32)), T.float64)]
    for args, want in cases:
        assert torch.result_type(*args) == want
        assert (args[0] + args[1]).dtype == want  # the same rule the ops follow
    assert not torch.can_cast(torch.float32, torch.int32) and torch.can_cast(torch.int32, torch.float16)
    assert not torch.can_cast(torch.int64, torch.bool) and torch.can_cast(torch.bool, torch.uint8)
    assert [torch.tensor([1], dtype=d).is_signed() for d in (torch.uint8, torch.bool, torch.int8, torch.float16)] \
        == [False, False, True, True]
