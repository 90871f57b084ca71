"""linalg's factorizations (computed on the host by LAPACK): values against
NumPy in float64, gradients against finite differences (gradcheck) and torch
where it imports, torch's errors for singular and non-positive-definite
input, the older torch-level forms."""
import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import linalg as LA

from torch_oracle import _torch as real_torch  # torch where it imports, else None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
pytestmark = pytest.mark.usefixtures("no_tf32")  # float64 references (conftest.py)
RNG = np.random.default_rng(0)
A = RNG.standard_normal((2, 4, 4)) + 2 * np.eye(4)
SPD = A @ A.transpose(0, 2, 1) + 4 * np.eye(4)
B = RNG.standard_normal((2, 4, 3))



def t(a, device, rg=False):
    return torch.tensor(a, device=device, requires_grad=rg)


def npy(x):
    return x.detach().cpu().numpy()


@pytest.mark.parametrize("device", DEVICES)
def test_values_against_numpy(device):
    a, spd, b = t(A, device), t(SPD, device), t(B, device)
    np.testing.assert_allclose(npy(LA.inv(a)), np.linalg.inv(A), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(npy(LA.det(a)), np.linalg.det(A), rtol=1e-12)
    sign, logabs = LA.slogdet(a)
    np.testing.assert_allclose(npy(sign), np.linalg.slogdet(A)[0])
    np.testing.assert_allclose(npy(logabs), np.linalg.slogdet(A)[1], rtol=1e-12)
    np.testing.assert_allclose(npy(LA.solve(a, b)), np.linalg.solve(A, B), rtol=1e-12, atol=1e-13)
    v = RNG.standard_normal((2, 4))
    np.testing.assert_allclose(npy(LA.solve(a, t(v, device))), np.linalg.solve(A, v[..., None])[..., 0], rtol=1e-12)
    L = LA.cholesky(spd)
    np.testing.assert_allclose(npy(L @ L.mT), SPD, rtol=1e-12)
    assert np.allclose(np.triu(npy(L)[0], 1), 0)
    w, V = LA.eigh(spd)
    np.testing.assert_allclose(npy(w), np.linalg.eigvalsh(SPD), rtol=1e-12)
    np.testing.assert_allclose(npy(V @ torch.diag_embed(w) @ V.mT), SPD, rtol=1e-11)
    U, S, Vh = LA.svd(b, full_matrices=False)
    np.testing.assert_allclose(npy(S), np.linalg.svd(B, compute_uv=False), rtol=1e-12)
    np.testing.assert_allclose(npy(U @ torch.diag_embed(S) @ Vh), B, rtol=1e-12, atol=1e-13)
    Q, R = LA.qr(b)
    np.testing.assert_allclose(npy(Q @ R), B, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(npy(LA.pinv(b)), np.linalg.pinv(B), rtol=1e-11, atol=1e-12)
    assert npy(LA.matrix_rank(b)).tolist() == [3, 3]
    np.testing.assert_allclose(npy(LA.matrix_power(a, -2)), np.linalg.matrix_power(A, -2), rtol=1e-11)
    np.testing.assert_allclose(npy(LA.matrix_norm(b, "nuc")), np.linalg.norm(B, "nuc", axis=(1, 2)), rtol=1e-12)
    np.testing.assert_allclose(npy(LA.matrix_norm(b, 2)), np.linalg.norm(B, 2, axis=(1, 2)), rtol=1e-12)
    np.testing.assert_allclose(npy(LA.multi_dot([a[0], a[1], b[0]])), A[0] @ A[1] @ B[0], rtol=1e-12)
    np.testing.assert_allclose(npy(torch.logdet(spd)), np.linalg.slogdet(SPD)[1], rtol=1e-12)
    assert LA.inv(a).device == a.device


@pytest.mark.parametrize("fn", ["inv", "det", "logabsdet", "solve", "cholesky", "eigvalsh", "eigh_vectors",
                                "svdvals", "nuc"])
def test_gradients(fn):
    a0 = t(A[0], "cpu", rg=True)
    spd0 = t(SPD[0], "cpu", rg=True)
    b0 = t(B[0], "cpu", rg=True)
    cases = {
        "inv": (lambda x: LA.inv(x), (a0,)),
        "det": (lambda x: LA.det(x), (a0,)),
        "logabsdet": (lambda x: LA.slogdet(x).logabsdet, (a0,)),
        "solve": (lambda x, y: LA.solve(x, y), (a0, b0)),
        "cholesky": (lambda x: LA.cholesky(0.5 * (x + x.mT)), (spd0,)),
        "eigvalsh": (lambda x: LA.eigvalsh(x + x.mT), (a0,)),
        "eigh_vectors": (lambda x: (lambda r: r.eigenvectors * r.eigenvectors)(LA.eigh(x + x.mT)), (a0,)),
        "svdvals": (lambda x: LA.svdvals(x), (b0,)),
        "nuc": (lambda x: LA.matrix_norm(x, "nuc"), (b0,)),
    }
    f, args = cases[fn]
    assert torch.autograd.gradcheck(f, args)
    if real_torch is not None:
        rargs = [real_torch.tensor(x.detach().numpy(), requires_grad=True) for x in args]
        rcases = {"inv": lambda x: real_torch.linalg.inv(x), "det": lambda x: real_torch.linalg.det(x),
                  "logabsdet": lambda x: real_torch.linalg.slogdet(x).logabsdet,
                  "solve": lambda x, y: real_torch.linalg.solve(x, y),
                  "cholesky": lambda x: real_torch.linalg.cholesky(0.5 * (x + x.mT)),
                  "eigvalsh": lambda x: real_torch.linalg.eigvalsh(x + x.mT),
                  "eigh_vectors": lambda x: (lambda r: r.eigenvectors * r.eigenvectors)(real_torch.linalg.eigh(x + x.mT)),
                  "svdvals": lambda x: real_torch.linalg.svdvals(x),
                  "nuc": lambda x: real_torch.linalg.matrix_norm(x, "nuc")}
        f(*args).sum().backward()
        rcases[fn](*rargs).sum().backward()
        for x, r in zip(args, rargs):
            np.testing.assert_allclose(x.grad.numpy(), r.grad.numpy(), rtol=1e-9, atol=1e-11)


def test_errors_and_missing_gradients():
    with pytest.raises(LA.LinAlgError, match="singular"):
        LA.inv(torch.zeros(3, 3))
    with pytest.raises(RuntimeError, match="positive-definite"):
        LA.cholesky(-torch.eye(3))
    with pytest.raises(RuntimeError, match="Expected a floating point"):
        LA.det(torch.ones(3, 3, dtype=torch.int64))
    with pytest.raises(RuntimeError, match="square"):
        LA.inv(torch.ones(3, 4))
    x = torch.randn(4, 4, dtype=torch.float64, requires_grad=True)
    with pytest.raises(NotImplementedError, match="singular vectors"):
        LA.svd(x)[0].sum().backward()
    with pytest.raises(NotImplementedError, match="qr"):
        LA.qr(x)
    with pytest.raises(RuntimeError, match="torch.linalg.qr"):
        torch.qr(x)
    with pytest.raises(RuntimeError, match="torch.linalg.cholesky"):
        x.detach().cholesky()
    U, S, V = torch.svd(torch.tensor(B[0]))
    np.testing.assert_allclose(npy(U @ torch.diag(S) @ V.t()), B[0], rtol=1e-12, atol=1e-13)
