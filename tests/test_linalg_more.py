"""The LU / triangular / Cholesky solves and the rest of torch.linalg added
with them (_linalg_lu.py, _linalg_more.py, the torch-level forms of
_linalg_torch.py): values against NumPy in float64 (and torch where it
imports), batched and unbatched, float32 and float64; gradients against
finite differences (gradcheck) and torch; torch's errors.

Tolerances: float64 results to 1e-10 relative (well-conditioned inputs:
random matrices plus a multiple of the identity), float32 to 1e-4."""
import math

import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import linalg as LA

from torch_oracle import _torch as real_torch  # torch where it imports, else None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
DTYPES = ["float32", "float64"]
SHAPES = [(), (3,), (2, 2)]  # batch shapes: unbatched, batched, two batch dims
pytestmark = pytest.mark.usefixtures("no_tf32")  # float64 references (conftest.py)


def rand(seed, *shape, well=True):
    """Random matrices, made well-conditioned (+ 3 I) when square and well."""
    a = np.random.default_rng(seed).standard_normal(shape)
    if well and len(shape) >= 2 and shape[-1] == shape[-2]:
        a = a + 3 * np.eye(shape[-1])
    return a


def t(a, device="cpu", dtype="float64", rg=False):
    return torch.tensor(a, dtype=getattr(torch, dtype), device=device, requires_grad=rg)


def npy(x):
    return x.detach().cpu().numpy()


def tol(dtype):
    return dict(rtol=1e-10, atol=1e-10) if dtype == "float64" else dict(rtol=1e-4, atol=1e-4)


def rt(a):
    return real_torch.tensor(np.asarray(a))


def apply_swaps(a, piv):
    """P^T A for LAPACK's 1-based row swaps of one matrix (a hand-written reference)."""
    a = a.copy()
    for i, p in enumerate(piv):
        a[[i, p - 1]] = a[[p - 1, i]]
    return a


# ---- LU -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 5), (3, 4, 4), (2, 6, 4), (2, 3, 4, 6)])
def test_lu_factor_against_swaps_and_torch(device, dtype, shape):
    a = rand(1, *shape, well=False)
    LU, piv = LA.lu_factor(t(a, device, dtype))
    assert piv.dtype == torch.int32 and tuple(piv.shape) == shape[:-1][:-1] + (min(shape[-2:]),)
    m, n = shape[-2:]
    k = min(m, n)
    lu_, p_ = npy(LU).reshape((-1, m, n)), npy(piv).reshape((-1, k))
    for lu1, p1, a1 in zip(lu_, p_, a.reshape((-1, m, n))):
        assert np.all((p1 >= np.arange(1, k + 1)) & (p1 <= m))
        L = np.tril(lu1[:, :k], -1) + np.eye(m, k)
        U = np.triu(lu1[:k])
        np.testing.assert_allclose(L @ U, apply_swaps(a1, p1), **tol(dtype))
        assert np.abs(L).max() <= 1 + 1e-6  # partial pivoting: |l_ij| <= 1
    P, L, U = LA.lu(t(a, device, dtype))
    np.testing.assert_allclose(npy(P @ L @ U), a, **tol(dtype))
    if real_torch is not None and dtype == "float64":
        r = real_torch.linalg.lu_factor(rt(a))
        assert np.array_equal(npy(piv), r.pivots.numpy())
        np.testing.assert_allclose(npy(LU), r.LU.numpy(), rtol=1e-10, atol=1e-12)


def test_lu_singular_info_and_errors():
    z = torch.tensor([[1., 2, 3], [2, 4, 6], [1, 0, 1]], dtype=torch.float64)
    LU, piv, info = LA.lu_factor_ex(z)
    assert npy(piv).tolist() == [2, 3, 3] and int(info) == 3 and info.dtype == torch.int32
    np.testing.assert_allclose(npy(LU), [[2, 4, 6], [0.5, -2, -2], [0.5, 0, 0]], atol=1e-15)
    r = LA.lu_factor_ex(torch.zeros(2, 3, 3))
    assert npy(r.info).tolist() == [1, 1] and npy(r.pivots).tolist() == [[1, 2, 3]] * 2
    with pytest.raises(LA.LinAlgError, match=r"U\[3,3\] is zero"):
        LA.lu_factor(z)
    with pytest.raises(RuntimeError, match=r"Batch element 0"):
        LA.lu_factor_ex(torch.zeros(2, 3, 3), check_errors=True)
    with pytest.raises(RuntimeError, match="without pivoting"):
        LA.lu_factor(z, pivot=False)
    with pytest.raises(RuntimeError, match="2 dimensions"):
        LA.lu_factor(torch.zeros(3))
    with pytest.raises(RuntimeError, match="floating point"):
        LA.lu_factor(torch.ones(3, 3, dtype=torch.int64))
    assert type(LA.lu_factor(z + 3 * torch.eye(3, dtype=torch.float64))).__name__ == "linalg_lu_factor"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch", SHAPES)
def test_lu_solve_left_adjoint(device, dtype, batch):
    a, b = rand(2, *batch, 4, 4), rand(3, *batch, 4, 2)
    LU, piv = LA.lu_factor(t(a, device, dtype))
    B = t(b, device, dtype)
    aH = np.swapaxes(a, -1, -2)
    np.testing.assert_allclose(npy(LA.lu_solve(LU, piv, B)), np.linalg.solve(a, b), **tol(dtype))
    np.testing.assert_allclose(npy(LA.lu_solve(LU, piv, B, adjoint=True)), np.linalg.solve(aH, b), **tol(dtype))
    ref = np.swapaxes(np.linalg.solve(aH, b), -1, -2)
    np.testing.assert_allclose(npy(LA.lu_solve(LU, piv, B.mT, left=False)), ref, **tol(dtype))
    ref = np.swapaxes(np.linalg.solve(a, b), -1, -2)
    np.testing.assert_allclose(npy(LA.lu_solve(LU, piv, B.mT, left=False, adjoint=True)), ref, **tol(dtype))
    np.testing.assert_allclose(npy(torch.lu_solve(B, LU, piv)), np.linalg.solve(a, b), **tol(dtype))
    np.testing.assert_allclose(npy(B.lu_solve(LU, piv)), np.linalg.solve(a, b), **tol(dtype))
    with pytest.raises(RuntimeError, match="Incompatible shapes"):
        LA.lu_solve(LU, piv, t(rand(4, 5, 2), device, dtype))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        LA.lu_solve(LU, piv, t(rand(4, 4), device, dtype)[0])


@pytest.mark.parametrize("device", DEVICES)
def test_lu_unpack_and_torch_lu(device):
    a = rand(5, 2, 5, 3, well=False)
    LU, piv = torch.lu(t(a, device))
    P, L, U = torch.lu_unpack(LU, piv)
    assert tuple(P.shape) == (2, 5, 5) and tuple(L.shape) == (2, 5, 3) and tuple(U.shape) == (2, 3, 3)
    np.testing.assert_allclose(npy(P @ L @ U), a, rtol=1e-12, atol=1e-12)
    assert np.allclose(npy(P).sum(-1), 1) and set(np.unique(npy(P))) <= {0.0, 1.0}
    P2, L2, U2 = torch.lu_unpack(LU, piv, unpack_data=False)
    assert L2.numel() == 0 and U2.numel() == 0 and np.array_equal(npy(P2), npy(P))
    P3, _, _ = torch.lu_unpack(LU, piv, unpack_pivots=False)
    assert P3.numel() == 0
    LU4, piv4, info4 = t(a, device).lu(get_infos=True)
    assert npy(info4).tolist() == [0, 0] and np.array_equal(npy(LU4), npy(LU))
    LU5, piv5, info5 = torch.lu(torch.zeros(3, 3), get_infos=True)
    assert int(info5) == 1
    if real_torch is not None:
        r = real_torch.lu_unpack(*real_torch.linalg.lu_factor(rt(a)))
        for x, y in zip((P, L, U), r):
            np.testing.assert_allclose(npy(x), y.numpy(), rtol=1e-10, atol=1e-12)


# ---- triangular solves ----------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("unit", [True, False])
def test_solve_triangular(device, dtype, upper, unit):
    a, b = rand(6, 3, 4, 4), rand(7, 2, 1, 4, 5)   # batch dims broadcast: (3,) with (2, 1)
    tri = np.triu(a) if upper else np.tril(a)
    if unit:
        tri = tri - tri * np.eye(4) + np.eye(4)
    ref = np.linalg.solve(np.broadcast_to(tri, (2, 3, 4, 4)), np.broadcast_to(b, (2, 3, 4, 5)))
    X = LA.solve_triangular(t(a, device, dtype), t(b, device, dtype), upper=upper, unitriangular=unit)
    assert tuple(X.shape) == (2, 3, 4, 5)
    np.testing.assert_allclose(npy(X), ref, **tol(dtype))
    bl = np.swapaxes(b, -1, -2)   # X A = B
    XL = LA.solve_triangular(t(a, device, dtype), t(bl, device, dtype), upper=upper, left=False,
                             unitriangular=unit)
    np.testing.assert_allclose(npy(XL @ t(tri, device, dtype)), np.broadcast_to(bl, (2, 3, 5, 4)), **tol(dtype))
    sol, coef = torch.triangular_solve(t(b[0, 0], device, dtype), t(a[0], device, dtype), upper=upper,
                                       unitriangular=unit)
    np.testing.assert_allclose(npy(sol), ref[0, 0], **tol(dtype))
    assert np.array_equal(npy(coef), a[0].astype(dtype))
    solT, _ = t(b[0, 0], device, dtype).triangular_solve(t(a[0], device, dtype), upper=upper, transpose=True,
                                                         unitriangular=unit)
    np.testing.assert_allclose(npy(solT), np.linalg.solve(tri[0].T, b[0, 0]), **tol(dtype))
    if real_torch is not None and dtype == "float64":
        r = real_torch.linalg.solve_triangular(rt(a), rt(b), upper=upper, unitriangular=unit)
        np.testing.assert_allclose(npy(X), r.numpy(), rtol=1e-10, atol=1e-12)


def test_solve_triangular_errors_and_zero_diagonal():
    X = LA.solve_triangular(torch.zeros(2, 2), torch.ones(2, 1), upper=True)
    assert math.isinf(float(X[1, 0])) and math.isnan(float(X[0, 0]))  # as torch: no error
    with pytest.raises(TypeError):
        LA.solve_triangular(torch.eye(3), torch.ones(3, 2))  # upper is required
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        LA.solve_triangular(torch.eye(3), torch.ones(3), upper=True)
    with pytest.raises(RuntimeError, match="Incompatible shapes"):
        LA.solve_triangular(torch.eye(3), torch.ones(2, 3), upper=True)
    with pytest.raises(RuntimeError, match="square"):
        LA.solve_triangular(torch.ones(3, 2), torch.ones(3, 3), upper=True)


# ---- the *_ex functions and the Cholesky solves ---------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch", SHAPES)
def test_ex_functions(device, dtype, batch):
    a, b = rand(8, *batch, 4, 4), rand(9, *batch, 4, 3)
    spd = a @ np.swapaxes(a, -1, -2) + np.eye(4)
    inv, info = LA.inv_ex(t(a, device, dtype))
    np.testing.assert_allclose(npy(inv), np.linalg.inv(a), **tol(dtype))
    assert info.dtype == torch.int32 and tuple(info.shape) == batch and not npy(info).any()
    res, info = LA.solve_ex(t(a, device, dtype), t(b, device, dtype))
    np.testing.assert_allclose(npy(res), np.linalg.solve(a, b), **tol(dtype))
    L, info = LA.cholesky_ex(t(spd, device, dtype))
    np.testing.assert_allclose(npy(L), np.linalg.cholesky(spd), **tol(dtype))
    U, _ = LA.cholesky_ex(t(spd, device, dtype), upper=True)
    np.testing.assert_allclose(npy(U), np.swapaxes(np.linalg.cholesky(spd), -1, -2), **tol(dtype))
    Lt = t(np.linalg.cholesky(spd), device, dtype)
    np.testing.assert_allclose(npy(torch.cholesky_solve(t(b, device, dtype), Lt)), np.linalg.solve(spd, b),
                               **tol(dtype))
    np.testing.assert_allclose(npy(torch.cholesky_solve(t(b, device, dtype), Lt.mT, upper=True)),
                               np.linalg.solve(spd, b), **tol(dtype))
    np.testing.assert_allclose(npy(t(b, device, dtype).cholesky_solve(Lt)), np.linalg.solve(spd, b), **tol(dtype))
    ci = torch.cholesky_inverse(Lt)
    np.testing.assert_allclose(npy(ci), np.linalg.inv(spd), **tol(dtype))
    assert np.array_equal(npy(ci), np.swapaxes(npy(ci), -1, -2))  # exactly symmetric
    np.testing.assert_allclose(npy(Lt.mT.cholesky_inverse(upper=True)), np.linalg.inv(spd), **tol(dtype))


def test_ex_functions_report_failures():
    a = np.stack([rand(10, 3, 3), np.zeros((3, 3))])
    inv, info = LA.inv_ex(t(a))
    assert npy(info).tolist() == [0, 1]
    np.testing.assert_allclose(npy(inv)[0], np.linalg.inv(a[0]), rtol=1e-10)
    assert not np.isfinite(npy(inv)[1]).all()
    with pytest.raises(LA.LinAlgError, match=r"Batch element 1\): The diagonal element 1 is zero"):
        LA.inv_ex(t(a), check_errors=True)
    r = LA.solve_ex(t(a[1]), t(np.ones(3)))
    assert int(r.info) == 1 and type(r).__name__ == "linalg_solve_ex"
    with pytest.raises(LA.LinAlgError, match="singular"):
        LA.solve_ex(t(a[1]), t(np.ones(3)), check_errors=True)
    m = np.stack([np.eye(3), np.diag([1., 1, -1]), -np.eye(3)])
    L, info = LA.cholesky_ex(t(m))
    assert npy(info).tolist() == [0, 3, 1]
    np.testing.assert_allclose(npy(L)[0], np.eye(3))
    with pytest.raises(LA.LinAlgError, match=r"Batch element 1\).*order 3 is not positive-definite"):
        LA.cholesky_ex(t(m), check_errors=True)
    with pytest.raises(RuntimeError, match="b should have at least 2 dimensions"):
        torch.cholesky_solve(torch.ones(3), torch.eye(3))
    with pytest.raises(RuntimeError, match="square"):
        torch.cholesky_solve(torch.ones(3, 2), torch.ones(3, 4))
    with pytest.raises(RuntimeError, match="same dtype"):
        torch.cholesky_solve(torch.ones(3, 2), torch.eye(3, dtype=torch.float64))


# ---- lstsq, matrix_exp, cond ----------------------------------------------------------------------

@pytest.mark.parametrize("device", ["cpu"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mn", [(6, 4), (4, 4), (3, 5)])
def test_lstsq(device, dtype, mn):
    m, n = mn
    a, b = rand(11, 2, m, n, well=False), rand(12, 2, m, 3)
    for driver in (None, "gelsy", "gelsd", "gelss", "gels"):
        X, res, rank, sv = LA.lstsq(t(a, device, dtype), t(b, device, dtype), driver=driver)
        refs = [np.linalg.lstsq(a[i], b[i], rcond=None) for i in range(2)]
        np.testing.assert_allclose(npy(X), np.stack([r[0] for r in refs]), **tol(dtype))
        if driver in (None, "gelsy") or m <= n:   # residuals: m > n, full rank, not gelsy
            assert res.numel() == 0
        else:
            np.testing.assert_allclose(npy(res), np.stack([r[1] for r in refs]), rtol=1e-4, atol=1e-6)
        if driver == "gels":
            assert rank.numel() == 0
        else:
            assert npy(rank).tolist() == [min(m, n)] * 2 and rank.dtype == torch.int64
        if driver in ("gelsd", "gelss"):
            np.testing.assert_allclose(npy(sv), np.stack([r[3] for r in refs]), **tol(dtype))
        else:
            assert sv.numel() == 0
    x = LA.lstsq(t(a[0]), t(b[0, :, 0])).solution   # a vector right-hand side
    np.testing.assert_allclose(npy(x), np.linalg.lstsq(a[0], b[0, :, 0], rcond=None)[0], rtol=1e-10)


def test_lstsq_rank_deficient_and_errors():
    a = rand(13, 5, 3, well=False)
    a[:, 2] = a[:, 1]
    b = rand(14, 5, 2)
    r = LA.lstsq(t(a), t(b), driver="gelsd")
    ref = np.linalg.lstsq(a, b, rcond=None)
    np.testing.assert_allclose(npy(r.solution), ref[0], rtol=1e-9, atol=1e-12)   # the minimum-norm solution
    assert int(r.rank) == 2 and r.residuals.numel() == 0 and type(r).__name__ == "linalg_lstsq"
    with pytest.raises(RuntimeError, match="driver"):
        LA.lstsq(t(a), t(b), driver="foo")
    with pytest.raises(RuntimeError, match=r"size\(-2\)"):
        LA.lstsq(t(a), t(b[:3]))
    with pytest.raises(RuntimeError, match="same dtype"):
        LA.lstsq(t(a), t(b, dtype="float32"))
    with pytest.raises(NotImplementedError, match="lstsq"):
        LA.lstsq(t(a, rg=True), t(b)).solution.sum().backward()
    with pytest.raises(RuntimeError, match="torch.linalg.lstsq"):
        torch.lstsq(t(b), t(a))


def expm_ref(a):
    """exp(A) in float64 through the eigendecomposition (complex for a general A)."""
    w, V = np.linalg.eig(a)
    return np.real(V @ (np.exp(w)[..., None] * np.linalg.inv(V)))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch", SHAPES)
def test_matrix_exp(device, dtype, batch):
    a = rand(15, *batch, 4, 4, well=False)
    # norms from small (no scaling) to large (several squarings)
    a = a * (np.linspace(0.05, 4.0, a.size // 16).reshape(batch + (1, 1)) if batch else 2.5)
    e = LA.matrix_exp(t(a, device, dtype))
    np.testing.assert_allclose(npy(e), expm_ref(a), rtol=1e-9 if dtype == "float64" else 2e-4,
                               atol=1e-9 if dtype == "float64" else 2e-4)
    np.testing.assert_allclose(npy(torch.matrix_exp(t(a, device, dtype))), npy(e))
    np.testing.assert_allclose(npy(t(a, device, dtype).matrix_exp()), npy(e))
    if real_torch is not None and dtype == "float64":
        np.testing.assert_allclose(npy(e), real_torch.linalg.matrix_exp(rt(a)).numpy(), rtol=1e-10, atol=1e-10)


def test_matrix_exp_special_cases():
    np.testing.assert_allclose(npy(LA.matrix_exp(t([[0., 1], [0, 0]]))), [[1, 1], [0, 1]], rtol=1e-15)  # nilpotent
    big = np.diag([30., -30.]) + np.array([[0, 1.], [0, 0]])     # the scaling-and-squaring path
    np.testing.assert_allclose(npy(LA.matrix_exp(t(big))), expm_ref(big), rtol=1e-12)
    np.testing.assert_allclose(npy(LA.matrix_exp(t([[2.]]))), [[math.exp(2)]])
    assert tuple(LA.matrix_exp(torch.zeros(0, 3, 3)).shape) == (0, 3, 3)
    assert np.isnan(npy(LA.matrix_exp(t([[math.inf, 0], [0, 1]])))).all()
    with pytest.raises(RuntimeError, match="square"):
        LA.matrix_exp(torch.ones(2, 3))
    with pytest.raises(RuntimeError, match="2 dimensions"):
        LA.matrix_exp(torch.ones(3))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", math.inf, -math.inf, 1, -1])
def test_cond(device, dtype, p):
    a = rand(16, 3, 4, 4)
    c = LA.cond(t(a, device, dtype), p)
    np.testing.assert_allclose(npy(c), np.linalg.cond(a, p), rtol=1e-9 if dtype == "float64" else 1e-4)
    if p in (None, 2, -2):
        nonsq = rand(17, 2, 3, 5)
        np.testing.assert_allclose(npy(LA.cond(t(nonsq, device, dtype), p)), np.linalg.cond(nonsq, p),
                                   rtol=1e-9 if dtype == "float64" else 1e-4)
    else:
        with pytest.raises(RuntimeError, match="square"):
            LA.cond(t(rand(17, 3, 5), device, dtype), p)
        assert math.isinf(float(LA.cond(t(np.diag([1., 0]), device, dtype), p)))
    if real_torch is not None and dtype == "float64":
        np.testing.assert_allclose(npy(c), real_torch.linalg.cond(rt(a), p).numpy(), rtol=1e-9)


def test_cond_errors():
    with pytest.raises(ValueError, match="invalid norm type: 3"):
        LA.cond(torch.eye(3), 3)
    with pytest.raises(ValueError, match="invalid norm type: foo"):
        LA.cond(torch.eye(3), "foo")


# ---- tensorinv, tensorsolve, vander, householder_product, cross, eig -------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_tensorinv_tensorsolve(device, dtype):
    a = rand(18, 24, 24).reshape(4, 6, 8, 3)
    np.testing.assert_allclose(npy(LA.tensorinv(t(a, device, dtype), ind=2)), np.linalg.tensorinv(a, ind=2),
                               **tol(dtype))
    a2, b2 = rand(19, 6, 6).reshape(2, 3, 6), rand(20, 2, 3)
    np.testing.assert_allclose(npy(LA.tensorsolve(t(a2, device, dtype), t(b2, device, dtype))),
                               np.linalg.tensorsolve(a2, b2), **tol(dtype))
    a3 = rand(21, 6, 6).reshape(3, 2, 6).transpose(2, 0, 1)   # dims (0,) moved to the end
    np.testing.assert_allclose(npy(LA.tensorsolve(t(a3, device, dtype), t(b2.reshape(3, 2), device, dtype),
                                                  dims=(0,))),
                               np.linalg.tensorsolve(a3, b2.reshape(3, 2), axes=(0,)), **tol(dtype))
    with pytest.raises(RuntimeError, match="strictly positive"):
        LA.tensorinv(t(a, device, dtype), ind=0)
    with pytest.raises(RuntimeError, match="prod"):
        LA.tensorinv(t(a[..., :2], device, dtype), ind=2)
    with pytest.raises(RuntimeError, match="prod"):
        LA.tensorsolve(t(a2[..., :5], device, dtype), t(b2, device, dtype))


@pytest.mark.parametrize("device", DEVICES)
def test_vander(device):
    x = rand(22, 2, 3)
    V = LA.vander(t(x, device), N=4)
    ref = np.stack([np.vander(r, 4, increasing=True) for r in x])
    np.testing.assert_allclose(npy(V), ref, rtol=1e-14)
    Vi = LA.vander(torch.tensor([1, 2, 3], device=device))
    assert Vi.dtype == torch.int64 and npy(Vi).tolist() == [[1, 1, 1], [1, 2, 4], [1, 3, 9]]
    with pytest.raises(RuntimeError, match="greater than 1"):
        LA.vander(t(x, device), N=1)
    with pytest.raises(NotImplementedError, match="Bool"):
        LA.vander(torch.tensor([True, False], device=device))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch", SHAPES)
def test_householder_product(device, dtype, batch):
    a = rand(23, *batch, 5, 3, well=False)
    h, tau = np.linalg.qr(a, mode="raw")     # LAPACK's geqrf: reflectors (transposed) and tau
    Q = LA.householder_product(t(np.swapaxes(h, -1, -2), device, dtype), t(tau, device, dtype))
    np.testing.assert_allclose(npy(Q), np.linalg.qr(a)[0], **tol(dtype))
    Q2 = LA.householder_product(t(np.swapaxes(h, -1, -2), device, dtype), t(tau[..., :2], device, dtype))
    assert tuple(Q2.shape) == batch + (5, 3)
    with pytest.raises(RuntimeError, match="greater than or equal to tau"):
        LA.householder_product(t(np.swapaxes(h, -1, -2), device, dtype), t(rand(1, *batch, 4), device, dtype))
    with pytest.raises(RuntimeError, match=r"shape\[-2\] must be greater"):
        LA.householder_product(t(h, device, dtype), t(tau[..., :2], device, dtype))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
def test_geqrf_ormqr_orgqr(device, left, transpose):
    a, c = rand(43, 2, 5, 3, well=False), rand(44, 2, 5, 4)
    h, tau = np.linalg.qr(a, mode="raw")
    A, T = torch.geqrf(t(a, device))
    np.testing.assert_allclose(npy(A), np.swapaxes(h, -1, -2), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(npy(T), tau, rtol=1e-12, atol=1e-13)
    q = np.linalg.qr(a, mode="complete")[0]   # the full 5 x 5 Q, as ormqr applies it
    q = np.swapaxes(q, -1, -2) if transpose else q
    C = c if left else np.swapaxes(c, -1, -2)
    ref = q @ C if left else C @ q
    np.testing.assert_allclose(npy(torch.ormqr(A, T, t(C, device), left=left, transpose=transpose)), ref,
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(npy(torch.orgqr(A, T)), np.linalg.qr(a)[0], rtol=1e-10, atol=1e-12)
    with pytest.raises(RuntimeError, match="must be equal to input.shape"):
        torch.ormqr(A, T, t(C[..., :4, :3] if left else C[..., :3, :4], device), left=left)
    with pytest.raises(NotImplementedError, match="geqrf"):
        torch.geqrf(t(a, device, rg=True))


def test_complex_lu_and_triangular():
    rng = np.random.default_rng(45)
    a = rng.standard_normal((2, 4, 4)) + 1j * rng.standard_normal((2, 4, 4)) + 3 * np.eye(4)
    b = rng.standard_normal((2, 4, 2)) + 1j * rng.standard_normal((2, 4, 2))
    A, B = torch.tensor(a), torch.tensor(b)
    P, L, U = LA.lu(A)
    np.testing.assert_allclose(npy(P @ L @ U), a, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(npy(LA.lu_solve(*LA.lu_factor(A), B, adjoint=True)),
                               np.linalg.solve(np.conj(np.swapaxes(a, -1, -2)), b), rtol=1e-10)
    np.testing.assert_allclose(npy(LA.solve_triangular(A, B, upper=True)), np.linalg.solve(np.triu(a), b), rtol=1e-10)
    h, tau = np.linalg.qr(a, mode="raw")
    Hq, Tq = torch.tensor(np.swapaxes(h, -1, -2)), torch.tensor(tau)
    np.testing.assert_allclose(npy(LA.householder_product(Hq, Tq)), np.linalg.qr(a)[0], rtol=1e-10, atol=1e-12)
    qH = np.conj(np.swapaxes(np.linalg.qr(a)[0], -1, -2))
    np.testing.assert_allclose(npy(torch.ormqr(Hq, Tq, B, transpose=True)), qH @ b, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(npy(LA.vecdot(A, A)), np.sum(np.conj(a) * a, -1), rtol=1e-12)
    if real_torch is not None:
        r = real_torch.linalg.lu_factor(rt(a))
        assert np.array_equal(npy(LA.lu_factor(A).pivots), r.pivots.numpy())


@pytest.mark.parametrize("device", DEVICES)
def test_cross(device):
    a, b = rand(24, 4, 1, 3), rand(25, 1, 2, 3)
    np.testing.assert_allclose(npy(LA.cross(t(a, device), t(b, device))), np.cross(a, b), rtol=1e-14)
    a0, b0 = rand(26, 3, 2), rand(27, 3, 1)
    np.testing.assert_allclose(npy(LA.cross(t(a0, device), t(b0, device), dim=0)), np.cross(a0, b0, axis=0),
                               rtol=1e-14)
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        LA.cross(t(a, device), t(b[0, 0], device))
    with pytest.raises(RuntimeError, match="must have length 3"):
        LA.cross(t(a0, device), t(a0, device))
    with pytest.raises(IndexError):
        LA.cross(t(a0, device), t(a0, device), dim=2)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_eig(device, dtype):
    a = rand(28, 2, 4, 4, well=False)
    w, V = LA.eig(t(a, device, dtype))
    assert w.dtype == (torch.complex128 if dtype == "float64" else torch.complex64) and V.dtype == w.dtype
    wn, Vn = npy(w), npy(V)
    np.testing.assert_allclose(a @ Vn, Vn * wn[..., None, :], **tol(dtype))
    np.testing.assert_allclose(np.linalg.norm(Vn, axis=-2), 1, **tol(dtype))
    np.testing.assert_allclose(np.sort_complex(npy(LA.eigvals(t(a, device, dtype))).ravel()),
                               np.sort_complex(np.linalg.eigvals(a).ravel()), **tol(dtype))
    sym = np.diag([1., 2, 3])   # all real eigenvalues: still complex, as torch
    assert LA.eigvals(t(sym, device, dtype)).dtype == w.dtype
    with pytest.raises(NotImplementedError, match="gradient of linalg.eig"):
        LA.eigvals(t(a[0], device, dtype, rg=True)).abs().sum().backward()


def test_removed_and_not_implemented():
    x = torch.eye(3)
    for fn, word in ((lambda: torch.solve(x, x), "torch.linalg.solve"), (lambda: torch.eig(x), "eigvals"),
                     (lambda: torch.symeig(x), "eigvalsh"), (lambda: torch.matrix_rank(x), "matrix_rank")):
        with pytest.raises(RuntimeError, match=word):
            fn()
    for fn in (lambda: LA.ldl_factor(x), lambda: LA.ldl_factor_ex(x), lambda: LA.ldl_solve(x, x, x)):
        with pytest.raises(NotImplementedError, match="LDL"):
            fn()


# ---- gradients ----------------------------------------------------------------------------------------

A0, B0 = rand(30, 3, 3), rand(31, 3, 2)
SPD0 = A0 @ A0.T + np.eye(3)

GRADS = {
    "solve_triangular_upper": (lambda a, b: LA.solve_triangular(a, b, upper=True),
                               lambda a, b: real_torch.linalg.solve_triangular(a, b, upper=True), (A0, B0)),
    "solve_triangular_lower_unit_right": (
        lambda a, b: LA.solve_triangular(a, b.mT, upper=False, left=False, unitriangular=True),
        lambda a, b: real_torch.linalg.solve_triangular(a, b.mT, upper=False, left=False, unitriangular=True),
        (A0, B0)),
    "lu_factor": (lambda a: LA.lu_factor(a).LU, lambda a: real_torch.linalg.lu_factor(a).LU, (rand(32, 4, 4),)),
    "lu": (lambda a: (lambda r: r.L * 2 + r.U)(LA.lu(a)), lambda a: (lambda r: r.L * 2 + r.U)(real_torch.linalg.lu(a)),
           (rand(33, 2, 3, 3, well=False),)),
    "lu_solve": (lambda a, b: LA.lu_solve(*LA.lu_factor(a), b, adjoint=True),
                 lambda a, b: real_torch.linalg.lu_solve(*real_torch.linalg.lu_factor(a), b, adjoint=True), (A0, B0)),
    "inv_ex": (lambda a: LA.inv_ex(a).inverse, lambda a: real_torch.linalg.inv_ex(a).inverse, (A0,)),
    "solve_ex": (lambda a, b: LA.solve_ex(a, b).result, lambda a, b: real_torch.linalg.solve_ex(a, b).result,
                 (A0, B0)),
    "cholesky_ex": (lambda a: LA.cholesky_ex(a + a.mT).L, lambda a: real_torch.linalg.cholesky_ex(a + a.mT).L,
                    (SPD0,)),
    "cholesky_solve": (lambda b, l: torch.cholesky_solve(b, l.tril()),
                       lambda b, l: real_torch.cholesky_solve(b, l.tril()), (B0, np.linalg.cholesky(SPD0))),
    "cholesky_inverse": (lambda l: torch.cholesky_inverse(l.triu(), upper=True),
                         lambda l: real_torch.cholesky_inverse(l.triu(), upper=True), (np.linalg.cholesky(SPD0).T,)),
    "matrix_exp": (lambda a: LA.matrix_exp(a), lambda a: real_torch.linalg.matrix_exp(a), (rand(34, 2, 3, 3) * 2,)),
    "cond_2": (lambda a: LA.cond(a), lambda a: real_torch.linalg.cond(a), (A0,)),
    "cond_fro": (lambda a: LA.cond(a, "fro"), lambda a: real_torch.linalg.cond(a, "fro"), (A0,)),
    "tensorinv": (lambda a: LA.tensorinv(a, ind=1), lambda a: real_torch.linalg.tensorinv(a, ind=1),
                  (rand(35, 4, 4).reshape(4, 2, 2),)),
    "vander": (lambda x: LA.vander(x, N=4), lambda x: real_torch.linalg.vander(x, N=4), (rand(36, 2, 3),)),
    "householder_product": (lambda a, tau: LA.householder_product(a, tau),
                            lambda a, tau: real_torch.linalg.householder_product(a, tau),
                            (rand(37, 4, 3, well=False), rand(38, 2))),
    "ormqr": (lambda a, tau, c: torch.ormqr(a, tau, c, transpose=True),
              lambda a, tau, c: real_torch.ormqr(a, tau, c, transpose=True),
              (rand(46, 4, 3, well=False), rand(47, 3), rand(48, 4, 2))),
    "cross": (lambda a, b: LA.cross(a, b), lambda a, b: real_torch.linalg.cross(a, b),
              (rand(39, 2, 3), rand(40, 1, 3))),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients(name):
    f, rf, arrays = GRADS[name]
    args = [t(a, rg=True) for a in arrays]
    assert torch.autograd.gradcheck(f, args)
    if real_torch is not None and name != "cond_fro":   # torch's cond backward fails (in-place on inv_ex)
        rargs = [real_torch.tensor(a, requires_grad=True) for a in arrays]
        w = np.random.default_rng(41).standard_normal(tuple(f(*args).shape))
        (f(*args) * t(w)).sum().backward()
        (rf(*rargs) * real_torch.tensor(w)).sum().backward()
        for x, r in zip(args, rargs):
            np.testing.assert_allclose(npy(x.grad), r.grad.numpy(), rtol=1e-7, atol=1e-9)


def test_unbatched_results_are_0_dim():
    # the host round trip used to turn a 0-d result into shape (1,) (np.ascontiguousarray)
    a = t(rand(42, 3, 3))
    assert LA.det(a).shape == () and LA.slogdet(a).sign.shape == () and LA.lu_factor_ex(a).info.shape == ()
    assert LA.inv_ex(a).info.shape == () and LA.cholesky_ex(a @ a.mT).info.shape == ()


@pytest.mark.parametrize("shape", [(4, 3), (2, 5, 5), (3, 6, 2)])
@pytest.mark.parametrize("cplx", [False, True])
def test_polar_and_matrix_sqrth(shape, cplx):
    rng = np.random.default_rng(7)
    a = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if cplx else 0)
    U, H = torch.linalg.polar(torch.tensor(a))
    assert type(torch.linalg.polar(torch.tensor(a))) is torch.return_types.linalg_polar
    u, h = U.numpy(), H.numpy()
    eye = np.eye(shape[-1])
    np.testing.assert_allclose(u @ h, a, atol=1e-10)  # A = U H
    np.testing.assert_allclose(np.conj(np.swapaxes(u, -1, -2)) @ u, np.broadcast_to(eye, h.shape), atol=1e-10)
    np.testing.assert_allclose(h, np.conj(np.swapaxes(h, -1, -2)), atol=1e-10)  # Hermitian
    assert (np.linalg.eigvalsh(h) > -1e-10).all()  # positive semi-definite
    # recorded (the eigh path): the same values, and torch's gradients
    ag = torch.tensor(a, requires_grad=True)
    Ug, Hg = torch.linalg.polar(ag)
    np.testing.assert_allclose(Ug.detach().numpy(), u, atol=1e-9)
    np.testing.assert_allclose(Hg.detach().numpy(), h, atol=1e-9)
    w1, w2 = rng.standard_normal(u.shape), rng.standard_normal(h.shape)
    ((Ug.real * torch.tensor(w1)).sum() + (Hg.real * torch.tensor(w2)).sum()).backward()
    n = shape[-1]
    spd = a[..., :n, :] @ np.conj(np.swapaxes(a[..., :n, :], -1, -2)) + 3 * np.eye(n)
    X = torch.linalg.matrix_sqrth(torch.tensor(spd))
    np.testing.assert_allclose(X.numpy() @ X.numpy(), spd, atol=1e-9)
    if real_torch is not None and hasattr(real_torch.linalg, "polar"):
        at = real_torch.tensor(a, requires_grad=True)
        Ut, Ht = real_torch.linalg.polar(at)
        ((Ut.real * real_torch.tensor(w1)).sum() + (Ht.real * real_torch.tensor(w2)).sum()).backward()
        np.testing.assert_allclose(ag.grad.numpy(), at.grad.numpy(), rtol=1e-7, atol=1e-8)
        np.testing.assert_allclose(X.numpy(), real_torch.linalg.matrix_sqrth(real_torch.tensor(spd)).numpy(),
                                   rtol=1e-9, atol=1e-10)


def test_polar_matrix_sqrth_errors_and_indefinite_input():
    with pytest.raises(RuntimeError, match="at least as many rows as columns, but got 2 by 3"):
        torch.linalg.polar(torch.randn(2, 3))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        torch.linalg.polar(torch.randn(3))
    with pytest.raises(RuntimeError, match="square matrices, but they are 2 by 3"):
        torch.linalg.matrix_sqrth(torch.randn(2, 3))
    with pytest.raises(NotImplementedError, match="Got Long"):
        torch.linalg.polar(torch.randint(0, 3, (3, 2)))
    # a negative eigenvalue is taken as 0, as torch's: eigenvalues 3 and -1
    x = torch.linalg.matrix_sqrth(torch.tensor([[1.0, 2.0], [2.0, 1.0]]))
    np.testing.assert_allclose(x.numpy(), np.full((2, 2), np.sqrt(3) / 2), rtol=1e-6)


def test_conj_of_a_tensor_that_requires_grad():
    x = torch.tensor([1 + 2j, -3 + 0.5j], requires_grad=True)
    y = x.conj()
    assert y.grad_fn is not None and y.detach().tolist() == [1 - 2j, -3 - 0.5j]
    (y.real.sum() + 2 * y.imag.sum()).backward()
    assert x.grad.tolist() == [1 - 2j, 1 - 2j]
