"""The math scripts reach for, on the CPU against NumPy: einsum, outer,
cross, linalg.vector_norm / matrix_norm / norm, dist, cdist, trace,
nn.functional.one_hot / normalize, isclose, allclose, equal, addcmul /
addcdiv and testing.assert_close (torch's tolerances and mismatch report)."""
import math

import numpy as np
import pytest

import pycuda_sem as pcs
import pycuda_sem.nn.functional as F
from pycuda_sem import linalg


def rand(shape, dtype=pcs.float64, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape) + 0.1
    if dtype.is_complex:
        a = a + 1j * np.random.default_rng(seed + 100).standard_normal(shape)
    return pcs.tensor(a.tolist(), dtype=dtype)


# ---- einsum -------------------------------------------------------------------------

EINSUMS = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("ij->ji", [(3, 4)]),
    ("ij->", [(3, 4)]),
    ("ij->j", [(3, 4)]),
    ("i,i->", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,jk->...ik", [(2, 2, 3, 4), (4, 5)]),
    ("i...->...", [(3, 2, 2)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("iij->j", [(3, 3, 4)]),
    ("ijk,ikj->i", [(2, 3, 4), (2, 4, 3)]),
    ("ab,ab->a", [(3, 4), (3, 4)]),
    ("ij,kj->ik", [(3, 4), (5, 4)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("i,i,i->i", [(4,), (4,), (4,)]),
    ("ij,j->i", [(3, 1), (4,)]),
]


@pytest.mark.parametrize("eq,shapes", EINSUMS)
def test_einsum_matches_numpy(eq, shapes):
    ts = [rand(s, seed=i) for i, s in enumerate(shapes)]
    r = pcs.einsum(eq, *ts)
    ref = np.einsum(eq, *[t.numpy() for t in ts])
    np.testing.assert_allclose(r.numpy(), ref, rtol=1e-10, atol=1e-12)
    r2 = pcs.einsum(eq, ts)  # the list form
    np.testing.assert_allclose(r2.numpy(), ref, rtol=1e-10, atol=1e-12)


def test_einsum_dtypes_and_errors():
    a = pcs.tensor([[1, 2], [3, 4]])
    assert pcs.einsum("ij,jk->ik", a, a).tolist() == [[7, 10], [15, 22]]
    assert pcs.einsum("ij,jk->ik", a, a.double()).dtype == pcs.float64
    with pytest.raises(RuntimeError, match="einsum"):
        pcs.einsum("ij,jk->ik", a)
    with pytest.raises(RuntimeError, match="einsum"):
        pcs.einsum("ijk->i", a)
    with pytest.raises(RuntimeError, match="output subscript q does not appear"):
        pcs.einsum("ij->q", a)
    with pytest.raises(RuntimeError, match="einsum"):
        pcs.einsum("ij,jk->ik", a, pcs.ones(3, 2, dtype=pcs.int64))
    with pytest.raises(NotImplementedError, match="sublist"):
        pcs.einsum(a, [0, 1])


# ---- products, norms, distances ------------------------------------------------------

@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)])
def test_addcmul_addcdiv(device):
    x, a, b = rand((3, 4), seed=11), rand((4,), seed=12), rand((3, 1), seed=13)
    xn, an, bn = x.numpy(), a.numpy(), b.numpy()
    x, a, b = x.to(device), a.to(device), b.to(device)
    np.testing.assert_allclose(pcs.addcmul(x, a, b).cpu().numpy(), xn + an * bn, rtol=1e-12)
    np.testing.assert_allclose(pcs.addcmul(x, a, b, value=-0.5).cpu().numpy(), xn - 0.5 * an * bn,
                               rtol=1e-12)
    np.testing.assert_allclose(x.addcdiv(a, b, value=2).cpu().numpy(), xn + 2 * an / bn, rtol=1e-12)
    y = x.clone()
    assert y.addcmul_(a, b, value=3) is y
    np.testing.assert_allclose(y.cpu().numpy(), xn + 3 * an * bn, rtol=1e-12)
    y.addcdiv_(a, b)
    np.testing.assert_allclose(y.cpu().numpy(), xn + 3 * an * bn + an / bn, rtol=1e-12)
    out = pcs.empty(3, 4, dtype=pcs.float64, device=device)
    assert pcs.addcdiv(x, a, b, out=out) is out
    np.testing.assert_allclose(out.cpu().numpy(), xn + an / bn, rtol=1e-12)
    i = pcs.tensor([1, 2], device=device)
    assert pcs.addcmul(i, i, i).tolist() == [2, 6]
    with pytest.raises(RuntimeError, match="Integer division with addcdiv is no longer supported"):
        pcs.addcdiv(i, i, i)
    with pytest.raises(TypeError, match="addcmul\\(\\): argument 'tensor1' must be Tensor"):
        pcs.addcmul(x, 2.0, b)
    # gradients through the composition: d/da (x + v a b) = v b
    ag = a.detach().clone().requires_grad_(True)
    pcs.addcmul(x, ag, b, value=0.5).sum().backward()
    np.testing.assert_allclose(ag.grad.cpu().numpy(), 0.5 * bn.sum(0).repeat(4), rtol=1e-12)


def test_outer_cross_trace():
    a, b = rand((3,), seed=1), rand((4,), seed=2)
    np.testing.assert_allclose(pcs.outer(a, b).numpy(), np.outer(a.numpy(), b.numpy()))
    np.testing.assert_allclose(a.outer(b).numpy(), np.outer(a.numpy(), b.numpy()))
    np.testing.assert_allclose(pcs.ger(a, b).numpy(), np.outer(a.numpy(), b.numpy()))
    assert pcs.outer(pcs.tensor([1, 2]), pcs.tensor([1.5])).dtype == pcs.float32
    with pytest.raises(RuntimeError, match="outer: Expected 1-D argument self, but got 2-D"):
        pcs.outer(rand((2, 2)), b)
    x, y = rand((5, 3), seed=3), rand((5, 3), seed=4)
    np.testing.assert_allclose(pcs.cross(x, y, dim=1).numpy(), np.cross(x.numpy(), y.numpy()))
    np.testing.assert_allclose(x.cross(y).numpy(), np.cross(x.numpy(), y.numpy()))
    np.testing.assert_allclose(pcs.cross(x.t(), y.t(), dim=0).numpy(),
                               np.cross(x.numpy(), y.numpy()).T)
    np.testing.assert_allclose(pcs.cross(x, y[:1], dim=-1).numpy(),
                               np.cross(x.numpy(), y.numpy()[:1]))
    with pytest.raises(RuntimeError, match="must have length 3"):
        pcs.cross(rand((2, 4)), rand((2, 4)), dim=1)
    m = rand((4, 5), seed=5)
    assert math.isclose(pcs.trace(m).item(), np.trace(m.numpy()), rel_tol=1e-12)
    assert m.trace().item() == pcs.trace(m).item()
    assert pcs.trace(pcs.tensor([[1, 2], [3, 4]])).dtype == pcs.int64
    with pytest.raises(RuntimeError, match="trace: expected a matrix"):
        pcs.trace(rand((3,)))


@pytest.mark.parametrize("ord", [2, 1, 3.5, math.inf, -math.inf, 0])
def test_vector_norm(ord):
    x = rand((3, 4, 5), seed=6)
    a = x.numpy()
    for dim in (None, 1, (0, 2), -1):
        r = linalg.vector_norm(x, ord, dim)
        flat = a.reshape(-1) if dim is None else a
        ref = np.linalg.norm(flat, ord, axis=dim) if dim is None or isinstance(dim, int) else \
            np.linalg.norm(np.moveaxis(a, dim, (-2, -1)).reshape(4, -1), ord, axis=-1)
        np.testing.assert_allclose(r.numpy(), ref, rtol=1e-10)
    assert linalg.vector_norm(x, ord, (0, 2), keepdim=True).shape == (1, 4, 1)
    assert linalg.vector_norm(x, ord, keepdim=True).shape == (1, 1, 1)
    c = rand((4,), pcs.complex128, seed=7)
    np.testing.assert_allclose(linalg.vector_norm(c, ord).numpy(), np.linalg.norm(c.numpy(), ord))


@pytest.mark.parametrize("ord", ["fro", 1, -1, math.inf, -math.inf])
def test_matrix_norm(ord):
    x = rand((2, 4, 5), seed=8)
    r = linalg.matrix_norm(x, ord)
    ref = np.linalg.norm(x.numpy(), ord, axis=(-2, -1))
    np.testing.assert_allclose(r.numpy(), ref, rtol=1e-10)
    r = linalg.matrix_norm(x, ord, dim=(0, 2), keepdim=True)
    assert r.shape == (1, 4, 1)
    np.testing.assert_allclose(r.numpy().reshape(-1),
                               np.linalg.norm(x.numpy(), ord, axis=(0, 2)), rtol=1e-10)
    np.testing.assert_allclose(linalg.norm(x, ord, dim=(-2, -1)).numpy(), ref, rtol=1e-10)


def test_spectral_matrix_norms_and_linalg_norm():
    x = rand((3, 3), seed=9)
    for ord in ("nuc", 2, -2):  # through svdvals now
        np.testing.assert_allclose(linalg.matrix_norm(x, ord).numpy(), np.linalg.norm(x.numpy(), ord), rtol=1e-12)
    np.testing.assert_allclose(linalg.norm(x).numpy(), np.linalg.norm(x.numpy()), rtol=1e-12)
    np.testing.assert_allclose(linalg.norm(x, dim=1).numpy(), np.linalg.norm(x.numpy(), axis=1))
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor"):
        linalg.vector_norm(pcs.tensor([1, 2]))


@pytest.mark.parametrize("p", [2, 1, 0, 3.0, math.inf])
def test_dist_and_cdist(p):
    a, b = rand((6, 4), seed=10), rand((6, 4), seed=11)
    d = np.abs(a.numpy() - b.numpy()).reshape(-1)
    ref = (d != 0).sum() if p == 0 else d.max() if p == math.inf else (d ** p).sum() ** (1 / p)
    assert math.isclose(pcs.dist(a, b, p).item(), ref, rel_tol=1e-10)
    assert math.isclose(a.dist(b, p).item(), ref, rel_tol=1e-10)
    x1, x2 = rand((2, 5, 3), seed=12), rand((2, 7, 3), seed=13)
    diff = np.abs(x1.numpy()[:, :, None, :] - x2.numpy()[:, None, :, :])
    if p == 0:
        ref = (diff != 0).sum(-1).astype(np.float64)
    elif p == math.inf:
        ref = diff.max(-1)
    else:
        ref = (diff ** p).sum(-1) ** (1 / p)
    np.testing.assert_allclose(pcs.cdist(x1, x2, p).numpy(), ref, rtol=1e-9)
    if p == 2:  # the matmul path (P > 25), as torch
        y1, y2 = rand((30, 3), seed=14), rand((40, 3), seed=15)
        ref = np.sqrt(((y1.numpy()[:, None] - y2.numpy()[None]) ** 2).sum(-1))
        np.testing.assert_allclose(pcs.cdist(y1, y2).numpy(), ref, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(pcs.cdist(x1, x2, compute_mode="use_mm_for_euclid_dist")
                                   .numpy(), np.sqrt((diff ** 2).sum(-1)), rtol=1e-9)


def test_cdist_errors():
    with pytest.raises(RuntimeError, match="cdist only supports floating-point dtypes, X1 got: Long"):
        pcs.cdist(pcs.tensor([[1, 2]]), pcs.tensor([[1, 2]]))
    with pytest.raises(RuntimeError, match="X1 and X2 must have the same number of columns"):
        pcs.cdist(rand((2, 3)), rand((2, 4)))


# ---- nn.functional ---------------------------------------------------------------------

def test_one_hot():
    t = pcs.tensor([[0, 2], [1, 4]])
    r = F.one_hot(t)
    assert r.dtype == pcs.int64 and r.shape == (2, 2, 5)
    np.testing.assert_array_equal(r.numpy(), np.eye(5, dtype=np.int64)[t.numpy()])
    assert F.one_hot(t, 6).shape == (2, 2, 6)
    assert F.one_hot(pcs.empty(0, dtype=pcs.int64), 3).shape == (0, 3)
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes."):
        F.one_hot(t, 3)
    with pytest.raises(RuntimeError, match="Class values must be non-negative."):
        F.one_hot(pcs.tensor([-1, 0]))
    with pytest.raises(RuntimeError, match="one_hot is only applicable to index tensor"):
        F.one_hot(pcs.tensor([1.0]))
    with pytest.raises(RuntimeError, match="Can not infer total number of classes"):
        F.one_hot(pcs.empty(0, dtype=pcs.int64))


@pytest.mark.parametrize("p,dim", [(2.0, 1), (1.0, 0), (3.0, -1)])
def test_normalize(p, dim):
    x = rand((4, 5), seed=16)
    a = x.numpy()
    ref = a / np.maximum(np.sum(np.abs(a) ** p, axis=dim, keepdims=True) ** (1 / p), 1e-12)
    np.testing.assert_allclose(F.normalize(x, p, dim).numpy(), ref, rtol=1e-10)
    z = F.normalize(pcs.zeros(2, 3))
    assert z.tolist() == [[0.0] * 3] * 2  # eps keeps zero rows finite
    out = pcs.empty(4, 5, dtype=pcs.float64)
    assert F.normalize(x, p, dim, out=out) is out


# ---- comparisons ---------------------------------------------------------------------------

def test_isclose_matches_numpy():
    a = rand((50,), seed=17)
    b = a + pcs.tensor((np.random.default_rng(18).standard_normal(50) * 1e-5).tolist(),
                       dtype=pcs.float64)
    for rtol, atol in ((1e-5, 1e-8), (0.0, 1e-6), (1e-4, 0.0), (0.0, 0.0)):
        np.testing.assert_array_equal(pcs.isclose(a, b, rtol, atol).numpy(),
                                      np.isclose(a.numpy(), b.numpy(), rtol, atol))
    s = pcs.tensor([1.0, float("nan"), float("inf"), -float("inf"), float("inf")])
    t = pcs.tensor([1.0, float("nan"), float("inf"), float("inf"), 1e38])
    assert pcs.isclose(s, t).tolist() == [True, False, True, False, False]
    assert s.isclose(t, equal_nan=True).tolist() == [True, True, True, False, False]
    assert pcs.isclose(pcs.tensor([1, 2]), pcs.tensor([1, 3]), atol=1).tolist() == [True, True]
    assert pcs.isclose(pcs.tensor([True, False]), pcs.tensor([True, True])).tolist() == [True, False]
    with pytest.raises(RuntimeError, match="Float did not match Double"):
        pcs.isclose(pcs.tensor([1.0]), pcs.tensor([1.0], dtype=pcs.float64))
    with pytest.raises(RuntimeError, match="rtol must be greater than or equal to zero"):
        pcs.isclose(a, b, rtol=-1)


def test_allclose_equal():
    a = rand((3, 3), seed=19)
    assert pcs.allclose(a, a + 1e-9) is True
    assert a.allclose(a + 1e-3) is False
    assert pcs.allclose(a, a + 1e-3, atol=1e-2) is True
    assert pcs.equal(a, a.clone()) is True
    assert a.equal(a + 1) is False
    assert pcs.equal(a, a[:2]) is False
    assert pcs.equal(pcs.tensor([float("nan")]), pcs.tensor([float("nan")])) is False


# ---- testing.assert_close ---------------------------------------------------------------

def test_assert_close_passes_within_default_tolerances():
    a = rand((10,), pcs.float32, seed=20)
    pcs.testing.assert_close(a, a + 1e-6)
    pcs.testing.assert_close(a.half(), (a + 1e-4).half())
    pcs.testing.assert_close(pcs.tensor([1, 2]), pcs.tensor([1, 2]))
    pcs.testing.assert_close(1.0, 1.0 + 1e-9)
    pcs.testing.assert_close([a, {"x": a}], [a.clone(), {"x": a.clone()}])
    pcs.testing.assert_close(a, a + 0.05, rtol=0, atol=0.1)
    pcs.testing.assert_close(pcs.tensor([float("nan")]), pcs.tensor([float("nan")]), equal_nan=True)


def test_assert_close_report_is_torchs():
    actual = pcs.tensor([1.0, 2.0, 3.0])
    expected = pcs.tensor([1.0, 2.5, 3.0])
    with pytest.raises(AssertionError) as e:
        pcs.testing.assert_close(actual, expected)
    assert str(e.value) == (
        "Tensor-likes are not close!\n\n"
        "Mismatched elements: 1 / 3 (33.3%)\n"
        "Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)\n"
        # float32 arithmetic, as torch's (it prints the float32 quotient's double)
        "Greatest relative difference: 0.20000000298023224 at index (1,) (up to 1.3e-06 "
        "allowed)")
    with pytest.raises(AssertionError) as e:
        pcs.testing.assert_close(pcs.tensor([[1, 2], [3, 4]]), pcs.tensor([[1, 2], [3, 5]]))
    assert str(e.value) == (
        "Tensor-likes are not equal!\n\n"
        "Mismatched elements: 1 / 4 (25.0%)\n"
        "Greatest absolute difference: 1 at index (1, 1)\n"
        "Greatest relative difference: 0.2 at index (1, 1)")
    with pytest.raises(AssertionError) as e:
        pcs.testing.assert_close(pcs.tensor(1.5), pcs.tensor(1.0))
    assert str(e.value) == (
        "Scalars are not close!\n\n"
        "Expected 1.0 but got 1.5.\n"
        "Absolute difference: 0.5 (up to 1e-05 allowed)\n"
        "Relative difference: 0.5 (up to 1.3e-06 allowed)")


def test_assert_close_attribute_checks_and_options():
    a = pcs.tensor([1.0, 2.0])
    with pytest.raises(AssertionError, match="The values for attribute 'shape' do not match"):
        pcs.testing.assert_close(a, pcs.tensor([1.0, 2.0, 3.0]))
    with pytest.raises(AssertionError, match="The values for attribute 'dtype' do not match"):
        pcs.testing.assert_close(a, a.double())
    pcs.testing.assert_close(a, a.double(), check_dtype=False)
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol' must be either specified or "
                       "omitted"):
        pcs.testing.assert_close(a, a, rtol=1e-3)
    with pytest.raises(AssertionError, match="^custom$"):
        pcs.testing.assert_close(a, a + 1, msg="custom")
    with pytest.raises(AssertionError, match="(?s)^Tensor-likes are not close!.* extra$"):
        pcs.testing.assert_close(a, a + 1, msg=lambda m: m + " extra")
    with pytest.raises(AssertionError, match="Mismatched elements: 1 / 1"):
        pcs.testing.assert_close(pcs.tensor([float("nan")]), pcs.tensor([float("nan")]))
    with pytest.raises(TypeError, match="No comparison pair"):
        pcs.testing.assert_close(a, 1.0)
