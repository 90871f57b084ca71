"""softmax and log_softmax on the CPU, against NumPy in float64: every dim,
dtype=, out=, strided inputs, the nn.functional forms (implicit dim with its
warning), extreme values (large magnitudes, -inf, NaN) and torch's errors."""
import warnings

import numpy as np
import pytest

import pycuda_sem as pcs
import pycuda_sem.nn.functional as F

TOL = {pcs.float32: 1e-5, pcs.float64: 1e-12, pcs.float16: 2e-3, pcs.bfloat16: 1.6e-2}


def rand(shape, dtype=pcs.float32, seed=0, scale=3.0):
    a = np.random.default_rng(seed).standard_normal(shape) * scale + 0.25
    return pcs.tensor(a.tolist(), dtype=dtype)


def ref(a, axis, log):
    a = a.astype(np.float64)
    m = a.max(axis=axis, keepdims=True)
    e = np.exp(a - m)
    s = e.sum(axis=axis, keepdims=True)
    return (a - m - np.log(s)) if log else e / s


def npy(t):
    return t.float().numpy() if t.dtype in (pcs.bfloat16, pcs.float16) else t.numpy()


@pytest.mark.parametrize("dtype", [pcs.float32, pcs.float64, pcs.float16, pcs.bfloat16])
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("shape,dim", [((5, 7), 1), ((5, 7), 0), ((2, 3, 4), 1), ((2, 3, 4), -1),
                                       ((2, 3, 4), 0), ((1, 1), 1), ((9,), 0), ((3, 1000), 1)])
def test_matches_numpy(dtype, log, shape, dim):
    x = rand(shape, dtype, seed=len(shape) + dim)
    f = pcs.log_softmax if log else pcs.softmax
    r = f(x, dim)
    assert r.dtype == dtype and r.shape == x.shape
    np.testing.assert_allclose(npy(r), ref(npy(x), dim, log), rtol=TOL[dtype], atol=TOL[dtype])
    m = x.log_softmax(dim) if log else x.softmax(dim)
    np.testing.assert_array_equal(npy(m), npy(r))
    g = (F.log_softmax if log else F.softmax)(x, dim=dim)
    np.testing.assert_array_equal(npy(g), npy(r))


@pytest.mark.parametrize("log", [False, True])
def test_strided_inputs(log):
    f = pcs.log_softmax if log else pcs.softmax
    x = rand((6, 8), seed=4)
    for v in (x.t(), x[:, ::2], x[::3], x.t()[1:]):
        for dim in (0, 1):
            np.testing.assert_allclose(npy(f(v, dim)), ref(npy(v), dim, log), rtol=1e-5, atol=1e-6)


def test_dtype_argument_casts_first():
    x = rand((4, 5), pcs.float16, seed=5)
    r = pcs.softmax(x, 1, dtype=pcs.float32)
    assert r.dtype == pcs.float32
    np.testing.assert_allclose(r.numpy(), ref(npy(x), 1, False), rtol=1e-5, atol=1e-6)
    assert x.log_softmax(0, dtype=pcs.float64).dtype == pcs.float64
    assert F.softmax(x, dim=1, dtype=pcs.float64).dtype == pcs.float64
    # integers compute through dtype=
    i = pcs.tensor([[1, 2, 3]])
    np.testing.assert_allclose(pcs.softmax(i, 1, dtype=pcs.float64).numpy(),
                               ref(np.array([[1, 2, 3]]), 1, False))


def test_out():
    x = rand((3, 4), seed=6)
    out = pcs.empty(3, 4)
    assert pcs.log_softmax(x, 1, out=out) is out
    np.testing.assert_allclose(out.numpy(), ref(x.numpy(), 1, True), rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match="out="):
        pcs.softmax(x, 1, out=pcs.empty(4, 3))


def test_extremes():
    x = pcs.tensor([[1e4, -1e4, 0.0], [88.0, 89.0, 90.0], [-float("inf"), 0.0, 1.0]])
    np.testing.assert_allclose(pcs.softmax(x, 1).numpy(), ref(x.numpy(), 1, False), atol=1e-7)
    lr = pcs.log_softmax(x, 1).numpy()
    assert lr[2, 0] == -np.inf
    np.testing.assert_allclose(lr[:2], ref(x.numpy(), 1, True)[:2], rtol=1e-6)
    nan = pcs.softmax(pcs.tensor([[float("nan"), 1.0], [1.0, 2.0]]), 1).numpy()
    assert np.isnan(nan[0]).all() and np.isfinite(nan[1]).all()
    allinf = pcs.softmax(pcs.tensor([[-float("inf")] * 3]), 1).numpy()
    assert np.isnan(allinf).all()  # torch gives NaN for a row of -inf too


def test_edges():
    s = pcs.softmax(pcs.tensor(2.0), 0)
    assert s.shape == () and s.item() == 1.0
    assert pcs.log_softmax(pcs.tensor(2.0), -1).item() == 0.0
    e = pcs.softmax(pcs.empty(0, 3), 1)
    assert e.shape == (0, 3)
    assert pcs.softmax(pcs.empty(3, 0), 1).shape == (3, 0)


def test_errors():
    x = rand((2, 3))
    with pytest.raises(IndexError, match="Dimension out of range"):
        pcs.softmax(x, 2)
    with pytest.raises(TypeError, match="missing required argument 'dim'"):
        pcs.softmax(x)
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        pcs.softmax(pcs.tensor([1, 2]), 0)
    with pytest.raises(TypeError, match="must be Tensor"):
        pcs.softmax([1.0, 2.0], 0)


@pytest.mark.parametrize("ndim,implicit", [(1, 0), (2, 1), (3, 0), (4, 1)])
def test_functional_implicit_dim_warns(ndim, implicit):
    x = rand((2,) * ndim, seed=ndim)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        r = F.softmax(x)
    np.testing.assert_array_equal(r.numpy(), pcs.softmax(x, implicit).numpy())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.log_softmax(x, dim=0)
