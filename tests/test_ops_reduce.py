"""Reductions and scans against NumPy (float64 references), on the CPU and,
marked cuda, on the GPU: whole tensor, one dim, several dims, keepdim,
non-contiguous inputs, result dtypes.

Tolerances: float64 1e-10, float32 1e-4 (sums of thousands of terms),
float16/bfloat16 1e-2 relative (they accumulate in float32; the result is
rounded once)."""
import numpy as np
import pytest

import pycuda_sem as torch

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
TOL = {torch.float64: 1e-10, torch.float32: 1e-4, torch.float16: 1e-2, torch.bfloat16: 1.6e-2}
rng = np.random.default_rng(99)


def make(shape, dtype, device, lo=0.5, hi=2.0):
    v = rng.uniform(lo, hi, size=shape) * rng.choice([-1.0, 1.0], size=shape)
    if not dtype.is_floating_point:
        v = np.round(v * 4)
        v[v == 0] = 1
    t = torch.tensor(v, dtype=torch.float64).to(dtype)
    exact = np.asarray(t.to(torch.float64).tolist(), dtype=np.float64).reshape(shape)
    return t.to(device), exact


def as_np(t):
    return np.asarray(t.cpu().to(torch.float64).tolist(), dtype=np.float64).reshape(tuple(t.shape))


def close(got, ref, dtype):
    tol = TOL.get(dtype, 0)
    np.testing.assert_allclose(as_np(got), ref, rtol=tol, atol=tol)


DIMS = [None, 0, 1, -1, (0, 2), (1, 2), (0, 1, 2)]


def np_axes(dim, ndim):
    if dim is None:
        return tuple(range(ndim))
    return dim if isinstance(dim, tuple) else (dim,)


def lse(x, axis, keepdims):
    m = np.max(x, axis=axis, keepdims=True)
    r = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return r if keepdims else np.squeeze(r, axis=axis)


REDUCE = {
    "sum": np.sum, "mean": np.mean, "prod": np.prod, "amax": np.max, "amin": np.min,
    "std": lambda x, axis, keepdims: np.std(x, axis=axis, keepdims=keepdims, ddof=1),
    "var": lambda x, axis, keepdims: np.var(x, axis=axis, keepdims=keepdims, ddof=1),
    "logsumexp": lse,
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("name", list(REDUCE))
def test_reductions_against_numpy(device, dtype, name):
    # products of 120 terms stay in float16's range when the terms are near 1
    x, xn = make((4, 5, 6), dtype, device, *((0.8, 1.25) if name == "prod" else (0.5, 2.0)))
    for dim in DIMS:
        if name == "logsumexp" and dim is None:
            continue
        for keepdim in (False, True):
            if dim is None and keepdim and name not in ("amax", "amin"):
                continue
            kw = {} if dim is None else {"dim": dim, "keepdim": keepdim}
            r = getattr(torch, name)(x, **kw)
            ref = REDUCE[name](xn, axis=np_axes(dim, 3), keepdims=keepdim and dim is not None)
            assert r.dtype == dtype, (name, dim)
            assert tuple(r.shape) == np.shape(ref), (name, dim, keepdim)
            tol = dtype if name != "prod" else dtype
            close(r, ref, tol)
    # method form and a transposed (non-contiguous) input
    m = getattr(x.transpose(0, 2), name)(dim=1)
    close(m, REDUCE[name](xn.transpose(2, 1, 0), axis=(1,), keepdims=False), dtype)


@pytest.mark.parametrize("device", DEVICES)
def test_large_sums(device):
    # long rows: the split-and-combine path on the GPU
    x, xn = make((3, 100_000), torch.float32, device)
    close(x.sum(), xn.sum(), torch.float32)
    close(x.sum(1), xn.sum(1), torch.float32)
    close(x.sum(0), xn.sum(0), torch.float32)
    close(x.max(), xn.max(), torch.float32)
    y, yn = make((1_000_003,), torch.float32, device)
    np.testing.assert_allclose(as_np(y.sum()), yn.sum(), rtol=1e-4, atol=1e-2)
    close(y.amin(), yn.min(), torch.float32)
    h, hn = make((300_000,), torch.float16, device)
    np.testing.assert_allclose(as_np(h.sum()), hn.sum(), rtol=1e-2, atol=1.0)
    close(y[1::3].sum(), yn[1::3].sum(), torch.float32)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.uint8, torch.bool, torch.int16])
def test_integer_reductions(device, dtype):
    if dtype == torch.bool:
        xn = rng.integers(0, 2, size=(5, 7)).astype(bool)
        x = torch.tensor(xn).to(device)
    else:
        xn = rng.integers(1, 9, size=(5, 7))
        x = torch.tensor(xn, dtype=dtype).to(device)
    s = x.sum()
    assert s.dtype == torch.int64
    assert s.item() == int(xn.sum())
    s1 = torch.sum(x, dim=1)
    assert s1.dtype == torch.int64
    np.testing.assert_array_equal(as_np(s1), xn.sum(1))
    p = x[:2, :4].prod(1)
    assert p.dtype == torch.int64
    np.testing.assert_array_equal(as_np(p), np.prod(xn[:2, :4].astype(np.int64), axis=1))
    if dtype != torch.bool:
        np.testing.assert_array_equal(as_np(x.amax(0)), xn.max(0))
        with pytest.raises(RuntimeError, match="mean"):
            x.mean()
        m = x.sum(dtype=torch.float64)
        assert m.dtype == torch.float64
        assert m.item() == float(xn.sum())
        assert x.mean(dtype=torch.float32).dtype == torch.float32


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.float16])
def test_max_min_with_indices(device, dtype):
    xn = rng.permutation(60).reshape(3, 4, 5).astype(np.float64)
    x = torch.tensor(xn, dtype=dtype).to(device)
    xn = as_np(x)
    for dim in (0, 1, 2, -1):
        for keepdim in (False, True):
            v, i = torch.max(x, dim, keepdim)
            r = torch.max(x, dim=dim, keepdim=keepdim)
            assert r.values.dtype == dtype and r.indices.dtype == torch.int64
            ref_i = np.argmax(xn, axis=dim)
            ref_v = np.max(xn, axis=dim)
            if keepdim:
                ref_i, ref_v = np.expand_dims(ref_i, dim), np.expand_dims(ref_v, dim)
            np.testing.assert_array_equal(as_np(i), ref_i)
            np.testing.assert_array_equal(as_np(v), ref_v)
            mv, mi = x.min(dim, keepdim=keepdim)
            np.testing.assert_array_equal(as_np(mi), np.argmin(xn, axis=dim) if not keepdim
                                          else np.expand_dims(np.argmin(xn, axis=dim), dim))
        np.testing.assert_array_equal(as_np(torch.argmax(x, dim)), np.argmax(xn, axis=dim))
        np.testing.assert_array_equal(as_np(x.argmin(dim=dim)), np.argmin(xn, axis=dim))
    assert torch.argmax(x).item() == int(np.argmax(xn))
    assert x.argmin().item() == int(np.argmin(xn))
    assert tuple(torch.argmax(x, keepdim=True).shape) == (1, 1, 1)
    assert x.max().item() == xn.max() and x.min().item() == xn.min()
    # ties: the first index wins
    t = torch.tensor([1.0, 3.0, 3.0, 2.0], device=device)
    assert t.argmax().item() == 1
    assert torch.max(t, 0).indices.item() == 1
    # max with a tensor is maximum
    np.testing.assert_array_equal(as_np(torch.max(x, x * 0)), np.maximum(xn, 0))
    with pytest.raises(IndexError):
        torch.empty(0, device=device).max()


@pytest.mark.parametrize("device", DEVICES)
def test_norm_all_any_var_options(device):
    x, xn = make((6, 8), torch.float32, device)
    close(x.norm(), np.linalg.norm(xn), torch.float32)
    close(torch.norm(x, p="fro"), np.linalg.norm(xn), torch.float32)
    close(torch.norm(x, 1), np.abs(xn).sum(), torch.float32)
    close(torch.norm(x, 3), (np.abs(xn) ** 3).sum() ** (1 / 3), torch.float32)
    close(torch.norm(x, float("inf")), np.abs(xn).max(), torch.float32)
    close(torch.norm(x, float("-inf")), np.abs(xn).min(), torch.float32)
    close(x.norm(dim=1), np.linalg.norm(xn, axis=1), torch.float32)
    close(torch.norm(x, 2, 0, True), np.linalg.norm(xn, axis=0, keepdims=True), torch.float32)
    c = torch.tensor(xn + 1j * xn, dtype=torch.complex64).to(device)
    r = c.norm()
    assert r.dtype == torch.float32
    close(r, np.linalg.norm(xn + 1j * xn), torch.float32)
    b = x > 0
    assert b.all().dtype == torch.bool
    assert b.any().item() == bool((xn > 0).any())
    assert b.all().item() == bool((xn > 0).all())
    np.testing.assert_array_equal(as_np(b.all(1)), (xn > 0).all(1))
    np.testing.assert_array_equal(as_np(torch.any(b, dim=0, keepdim=True)), (xn > 0).any(0, keepdims=True))
    close(x.var(unbiased=False), np.var(xn), torch.float32)
    close(x.var(1, correction=0), np.var(xn, axis=1), torch.float32)
    close(torch.std(x, 0, True, True), np.std(xn, axis=0, ddof=1, keepdims=True), torch.float32)
    close(x.std(dim=(0, 1), correction=2), np.std(xn, ddof=2), torch.float32)
    with pytest.raises(RuntimeError):
        torch.tensor([1, 2, 3], device=device).var()
    i = torch.tensor([[1, 2], [3, 4]], device=device)
    r = torch.logsumexp(i, 1)
    assert r.dtype == torch.float32
    close(r, np.log(np.exp([1, 3]) + np.exp([2, 4])), torch.float32)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int32, torch.float16])
def test_scans(device, dtype):
    x, xn = make((3, 70, 4), dtype, device, lo=0.9, hi=1.1)
    for dim in (0, 1, 2, -1):
        r = torch.cumsum(x, dim)
        want = torch.int64 if not dtype.is_floating_point else dtype
        assert r.dtype == want
        close(r, np.cumsum(xn, axis=dim), want if want.is_floating_point else dtype)
        p = x[:, :10].cumprod(dim=dim)
        close(p, np.cumprod(xn[:, :10], axis=dim), want if want.is_floating_point else dtype)
    r = x.cumsum(1, dtype=torch.float64)
    assert r.dtype == torch.float64
    long, ln = make((5000,), torch.float32, device)
    np.testing.assert_allclose(as_np(long.cumsum(0)), np.cumsum(ln), rtol=1e-4, atol=1e-3)
    y = x.clone()
    if dtype.is_floating_point:
        assert y.cumsum_(1) is y
        close(y, np.cumsum(xn, axis=1), dtype)


def test_cpu_scans_carry_torchs_accumulator():
    # torch's CPU cumsum/cumprod carry float32 in double and complex64 in
    # complex<double> (acc_type<T, false>), rounding each output once; found
    # against torch by test_printing_ops on the GPU machine
    for dt in (torch.float32, torch.complex64):
        r = torch.tensor([1e8, 1.0, -1e8], dtype=dt).cumsum(0)
        assert r.dtype == dt and r.tolist()[2] == 1.0
    a = np.array([1.4554425477981567, 0.904680073261261, 0.5614602565765381, 0.5247914791107178,
                  1.7199053764343262, 1.8691333532333374], np.float32)  # float32 steps: 1.2472134
    assert torch.tensor(a).cumprod(0)[-1].item() == float(np.cumprod(a, dtype=np.float64)[-1].astype(np.float32))


@pytest.mark.parametrize("device", DEVICES)
def test_complex_reductions(device):
    zn = rng.uniform(-1, 1, (4, 5)) + 1j * rng.uniform(-1, 1, (4, 5))
    z = torch.tensor(zn, dtype=torch.complex128).to(device)
    np.testing.assert_allclose(complex(z.sum().item()), zn.sum(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(z.mean(0).cpu().tolist()), zn.mean(0), rtol=1e-12)
    with pytest.raises(RuntimeError, match="not implemented for 'ComplexDouble'"):
        z.amax()


@pytest.mark.parametrize("device", DEVICES)
def test_empty_and_zero_dim(device):
    e = torch.empty(0, 3, device=device)
    assert e.sum().item() == 0
    assert tuple(e.sum(0).shape) == (3,)
    assert e.prod().item() == 1
    s = torch.tensor(3.5, device=device)
    assert s.sum().item() == 3.5
    assert s.max().item() == 3.5
    assert tuple(s.sum().shape) == ()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dt", [torch.float32, torch.float64, torch.float16], ids=str)
@pytest.mark.parametrize("n", [96, 5000, 1 << 20], ids=lambda n: "n%d" % n)
def test_max_min_propagate_nan(device, dt, n):
    """NaN wins every max/min (whole tensor, along a dim, and the value of
    max(dim)), argmax/argmin point at the first NaN, as in torch; sizes cover
    the warp-per-row, block-per-row and split-row kernels."""
    x = rng.standard_normal(n)
    first = n // 3
    x[first] = np.nan
    x[n - 1] = np.nan
    t = torch.tensor(x, dtype=dt).to(device)
    for f in ("max", "min", "amax", "amin"):
        assert np.isnan(getattr(t, f)().item()), f
    assert t.argmax().item() == first and t.argmin().item() == first
    rows = torch.tensor(x, dtype=dt).double().numpy().reshape(8, -1)  # x rounded to dt
    r = t.reshape(8, -1)
    row, col = divmod(first, n // 8)
    for f, ref in (("amax", np.max), ("amin", np.min)):  # NumPy's max and min propagate NaN
        got = np.asarray(getattr(r, f)(1).double().cpu().tolist())
        np.testing.assert_array_equal(got, ref(rows, 1))  # exact: max picks, never rounds
    v, i = r.max(1)
    assert np.isnan(v.double().cpu().tolist()[row])
    assert i.cpu().tolist()[row] == col
    # without NaN the values are the plain extremes
    y = rng.standard_normal(n)
    u = torch.tensor(y, dtype=dt).to(device)
    yr = torch.tensor(y, dtype=dt).double().numpy()  # y rounded to dt
    assert u.max().item() == yr.max() and u.min().item() == yr.min()
