"""The rest of torch.linalg that is not a factorization of its own: cross,
lstsq, matrix_exp, cond, tensorinv, tensorsolve, vander,
householder_product (and torch.geqrf / torch.ormqr that go with it),
eig/eigvals, and the LDL^T functions (not implemented).

Most are compositions of differentiable pycuda_sem ops (cross, matrix_exp,
cond, tensorinv, tensorsolve, vander, householder_product), so they have
gradients for free. lstsq and eig/eigvals are computed on the host by
NumPy's LAPACK (a CUDA input makes a round trip) and have no backward.
"""
import collections
import math

import numpy as np

from . import _C
from .autograd.function import Function
from ._linalg_host import _check, _host, _back, _lapack, _conj, _mH, inv, solve, svdvals
from ._linalg_lu import _dtname, _tensor_arg, inv_ex

_Lstsq = collections.namedtuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
_Eig = collections.namedtuple("linalg_eig", ["eigenvalues", "eigenvectors"])


def cross(input, other, *, dim=-1, out=None):
    """The cross product of 3-vectors along dim (default the last), broadcasting the other dims."""
    from ._math import cross as _cross
    _tensor_arg("linalg.cross", "input", input)
    _tensor_arg("linalg.cross", "other", other)
    if input.dim() != other.dim():
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = dim + input.dim() if dim < 0 else dim
    if not 0 <= d < input.dim():
        raise IndexError("Dimension out of range (expected to be in range of [%d, %d], but got %d)"
                         % (-input.dim(), input.dim() - 1, dim))
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError("linalg.cross: inputs dimension %d must have length 3. Got %d and %d"
                           % (dim, input.shape[d], other.shape[d]))
    if input.dtype != other.dtype:
        raise RuntimeError("expected scalar type %s but found %s" % (_dtname(input), _dtname(other)))
    return _cross(input, other, d, out=out)


# ---- least squares ----------------------------------------------------------------------

class _LstsqFunction(Function):
    @staticmethod
    def forward(ctx, A, B, rcond, driver):
        a, b = _host(A), _host(B)
        m, n = a.shape[-2:]
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        a, b = np.broadcast_to(a, batch + a.shape[-2:]), np.broadcast_to(b, batch + b.shape[-2:])
        U, s, Vh = _lapack("torch.linalg.lstsq", np.linalg.svd, a, False)
        if rcond is None:
            rcond = np.finfo(s.dtype).eps * max(m, n)
        smax = s[..., :1] if s.shape[-1] else np.zeros(batch + (1,), s.dtype)
        keep = s > rcond * smax
        # the minimum-norm solution over the singular values kept (gelsy's and gelsd's answer)
        sinv = np.where(keep, 1 / np.where(keep, s, 1), 0)
        x = np.conj(np.swapaxes(Vh, -1, -2)) @ (sinv[..., :, None] * (np.conj(np.swapaxes(U, -1, -2)) @ b))
        rank = keep.sum(-1)
        real = s.dtype
        res = np.zeros((0,), real)
        if m > n and driver != "gelsy" and bool(np.all(rank == n)):
            res = np.sum(np.abs(a @ x - b) ** 2, axis=-2).astype(real)
        outs = (_back(x.astype(a.dtype), A), _back(res, A, _real(A.dtype)),
                _back(rank, A, _C.int64) if driver != "gels" else _C.empty((0,), dtype=_C.int64, device=A.device),
                _back(s, A, _real(A.dtype)) if driver in ("gelsd", "gelss")
                else _C.empty((0,), dtype=_real(A.dtype), device=A.device))
        ctx.mark_non_differentiable(*outs[1:])
        return outs

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError("the gradient of linalg.lstsq is not implemented in pycuda_sem; use "
                                  "linalg.solve(A.mT @ A, A.mT @ B) or linalg.pinv(A) @ B where a gradient is needed")


def _real(dtype):
    return {_C.complex64: _C.float32, _C.complex128: _C.float64}.get(dtype, dtype)


def lstsq(A, B, rcond=None, *, driver=None):
    """(solution, residuals, rank, singular_values) of min ||A X - B||, by SVD
    on the host. As torch on the CPU: driver 'gelsy' (default) fills rank
    only, 'gelsd'/'gelss' also the singular values, 'gels' neither; residuals
    are filled for m > n and full rank, except with 'gelsy'. No backward."""
    _check("torch.linalg.lstsq", A, square=False)
    _tensor_arg("linalg.lstsq", "B", B)
    if driver is None:
        driver = "gelsy" if A.device.type == "cpu" else "gels"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    if A.device.type != "cpu" and driver != "gels":
        raise RuntimeError("torch.linalg.lstsq: `driver` other than `gels` is not supported on CUDA")
    if B.dtype != A.dtype:
        raise RuntimeError("torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's "
                           "dtype %s and other's dtype %s" % (_dtname(A), _dtname(B)))
    vector = B.dim() == A.dim() - 1
    Bm = B.unsqueeze(-1) if vector else B
    if Bm.dim() < 2 or Bm.shape[-2] != A.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    x, res, rank, s = _LstsqFunction.apply(A, Bm, rcond, driver)
    return _Lstsq(x.squeeze(-1) if vector else x, res.squeeze(-1) if vector and res.numel() else res, rank, s)


# ---- matrix exponential ---------------------------------------------------------------------

# Higham (2005), "The scaling and squaring method for the matrix exponential
# revisited": the [m/m] Pade approximant is accurate to the unit roundoff for
# ||A||_1 <= theta_m; degree 13 for double, 7 for single precision.
_PADE = {
    13: (5.371920351148152, (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
                             129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
                             40840800., 960960., 16380., 182., 1.)),
    7: (3.925724783138660, (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.)),
}


def matrix_exp(A):
    """exp(A) of each square matrix: scaling and squaring with a Pade
    approximant, composed of matmul and solve (so differentiable); the
    scaling s (per matrix) is chosen on the host from the 1-norm."""
    _check("linalg.matrix_exp", A)
    n = A.shape[-1]
    if A.numel() == 0:
        return A.clone()
    if n == 1:
        return A.exp()
    deg = 13 if A.dtype in (_C.float64, _C.complex128) else 7
    theta, b = _PADE[deg]
    with np.errstate(all="ignore"):
        norm1 = np.abs(_host(A)).sum(-2).max(-1)          # [batch]
        finite = np.isfinite(_host(A)).all((-2, -1))
        # a sum of finite entries may overflow: cap it, so that s stays <= ~1030
        norm1 = np.where(np.isfinite(norm1), norm1, np.finfo(np.float64).max)
        s = np.where(finite & (norm1 > theta), np.ceil(np.log2(np.where(finite, norm1, 1) / theta)), 0)
    s = s.astype(np.int64)
    scale = _back((0.5 ** s.astype(np.float64))[..., None, None], A, _real(A.dtype)).to(A.dtype)
    ok = _back(finite[..., None, None], A, _C.bool)
    X = _C.where(ok, A, _C.zeros((), dtype=A.dtype, device=A.device)) * scale
    eye = _C.eye(n, dtype=A.dtype, device=A.device)
    X2 = X @ X
    X4 = X2 @ X2
    X6 = X4 @ X2
    if deg == 13:
        Ui = X6 @ (b[13] * X6 + b[11] * X4 + b[9] * X2) + b[7] * X6 + b[5] * X4 + b[3] * X2 + b[1] * eye
        V = X6 @ (b[12] * X6 + b[10] * X4 + b[8] * X2) + b[6] * X6 + b[4] * X4 + b[2] * X2 + b[0] * eye
    else:
        Ui = b[7] * X6 + b[5] * X4 + b[3] * X2 + b[1] * eye
        V = b[6] * X6 + b[4] * X4 + b[2] * X2 + b[0] * eye
    U = X @ Ui
    R = solve(V - U, V + U)
    steps = _back(s[..., None, None], A, _C.int64)
    for k in range(int(s.max()) if s.size else 0):   # s <= ~1030 (the norm is capped)
        R = _C.where(steps > k, R @ R, R)
    return _C.where(ok, R, _C.full((), float("nan"), dtype=A.dtype, device=A.device))


# ---- condition number, tensor inverse and solve, Vandermonde --------------------------------

def cond(A, p=None, *, out=None):
    """The condition number of each matrix in the p-norm: p None/2/-2 from
    the singular values (any shape), else ||A||_p ||A^-1||_p (square; inf
    for a singular matrix). Differentiable where its parts are."""
    from .linalg import matrix_norm
    _check("linalg.cond", A, square=False)
    if p is None or (not isinstance(p, str) and p in (2, -2)):
        if A.numel() == 0:
            r = _C.zeros(tuple(A.shape[:-2]), dtype=_real(A.dtype), device=A.device)
        else:
            s = svdvals(A)
            r = s[..., -1] / s[..., 0] if p == -2 else s[..., 0] / s[..., -1]
        return r if out is None else out.copy_(r)
    if isinstance(p, bool) or p not in ("fro", "nuc", math.inf, -math.inf, 1, -1):
        raise ValueError("linalg.cond got an invalid norm type: %s" % (p,))
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError("linalg.cond(ord=%s): A must be batches of square matrices, but they are %d by %d "
                           "matrices" % (p, A.shape[-2], A.shape[-1]))
    if A.numel() == 0:
        r = _C.zeros(tuple(A.shape[:-2]), dtype=_real(A.dtype), device=A.device)
        return r if out is None else out.copy_(r)
    Ai, info = inv_ex(A)
    bad = (info > 0).unsqueeze(-1).unsqueeze(-1)
    Ai = _C.where(bad, _C.full((), math.inf, dtype=A.dtype, device=A.device), Ai)
    r = matrix_norm(A, p) * matrix_norm(Ai, p)
    # 0 * inf for a singular matrix: inf, as NumPy's cond
    r = _C.where(r.isnan(), _C.full((), math.inf, dtype=r.dtype, device=r.device), r)
    return r if out is None else out.copy_(r)


def tensorinv(A, ind=2, *, out=None):
    """The inverse of A seen as a matrix of shape (prod(A.shape[:ind]),
    prod(A.shape[ind:])): shape A.shape[ind:] + A.shape[:ind]."""
    _tensor_arg("linalg.tensorinv", "A", A)
    if isinstance(ind, bool) or not isinstance(ind, int) or ind <= 0:
        raise RuntimeError("Expected a strictly positive integer for 'ind', but got %s" % (ind,))
    if ind > A.dim():
        raise RuntimeError("Expected 'ind' to be at most A.dim() = %d, but got %d" % (A.dim(), ind))
    rows, cols = math.prod(A.shape[:ind]), math.prod(A.shape[ind:])
    if rows != cols:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           "prod(self.shape[:ind]), but got %d != %d" % (cols, rows))
    r = inv(A.reshape(rows, cols)).reshape(tuple(A.shape[ind:]) + tuple(A.shape[:ind]))
    return r if out is None else out.copy_(r)


def tensorsolve(A, B, dims=None, *, out=None):
    """X with tensordot(A, X, X.dim()) = B: A's dims (after moving dims to
    the end) split into B.shape and X.shape."""
    _tensor_arg("linalg.tensorsolve", "A", A)
    _tensor_arg("linalg.tensorsolve", "B", B)
    if dims is not None:
        dims = [d + A.dim() if d < 0 else d for d in dims]
        if any(isinstance(d, bool) or not isinstance(d, int) or not 0 <= d < A.dim() for d in dims):
            raise IndexError("linalg.tensorsolve: dims %s out of range for a %d-dim A" % (dims, A.dim()))
        A = A.movedim(dims, list(range(A.dim() - len(dims), A.dim())))
    rows, cols = math.prod(A.shape[:B.dim()]), math.prod(A.shape[B.dim():])
    if rows != cols or tuple(A.shape[:B.dim()]) != tuple(B.shape):
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           "prod(self.shape[:other.ndim]), but got %d != %d" % (cols, rows))
    r = solve(A.reshape(rows, cols), B.reshape(rows)).reshape(tuple(A.shape[B.dim():]))
    return r if out is None else out.copy_(r)


def vander(x, N=None):
    """The Vandermonde matrices of the vectors x [..., n]: [..., n, N] with
    columns x^0, x^1, ... x^(N-1) (increasing, unlike torch.vander)."""
    _tensor_arg("linalg.vander", "x", x)
    if x.dtype == _C.bool:
        raise NotImplementedError("linalg.vander supports floating point, complex, and integer tensors, but got Bool")
    if x.dim() < 1:
        raise RuntimeError("linalg.vander: x must have at least one dimension")
    n = x.shape[-1] if N is None else N
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError("linalg.vander(): argument 'N' must be int")
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    xs = x if (x.is_floating_point() or x.is_complex()) else x.long()
    col = xs.unsqueeze(-1)
    # cumprod, not pow: exact for integers and differentiable at x = 0
    powers = col.expand(tuple(xs.shape) + (n - 1,)).cumprod(-1)
    return _C.cat([_C.ones_like(col), powers], -1)


# ---- Householder products ------------------------------------------------------------------

def householder_product(A, tau, *, out=None):
    """The first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^H with
    v_i the i-th column of A below the diagonal and 1 on it (LAPACK's
    orgqr/ungqr); composed of differentiable ops, one step per reflector."""
    fname = "torch.linalg.householder_product"
    _tensor_arg(fname, "A", A)
    _tensor_arg(fname, "tau", tau)
    if A.dim() < 2:
        raise RuntimeError("%s: input must have at least 2 dimensions." % fname)
    if tau.dim() != A.dim() - 1:
        raise RuntimeError("%s: Expected tau to have one dimension less than input, but got tau.ndim equal to %d "
                           "and input.ndim is equal to %d" % (fname, tau.dim(), A.dim()))
    m, n = A.shape[-2:]
    k = tau.shape[-1]
    if m < n:
        raise RuntimeError("%s: input.shape[-2] must be greater than or equal to input.shape[-1]" % fname)
    if n < k:
        raise RuntimeError("%s: input.shape[-1] must be greater than or equal to tau.shape[-1]" % fname)
    if tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError("%s: Expected batch dimensions of tau to be equal to input.shape[:-2], but got %s"
                           % (fname, list(tau.shape[:-1])))
    if tau.dtype != A.dtype:
        raise RuntimeError("%s: tau dtype %s does not match input dtype %s" % (fname, _dtname(tau), _dtname(A)))
    _check(fname, A, square=False)
    Q = _C.eye(m, n, dtype=A.dtype, device=A.device).expand(tuple(A.shape)).clone()
    r = _apply_reflectors(A, tau, Q, left=True, adjoint=False)
    return r if out is None else out.copy_(r)


def _apply_reflectors(A, tau, C, left, adjoint):
    """Q C, Q^H C, C Q or C Q^H for Q = H_1 ... H_k (the reflectors in A's
    columns, below the diagonal), one rank-1 update per reflector."""
    rows = _C.arange(A.shape[-2], device=A.device).unsqueeze(-1)
    k = tau.shape[-1]
    # Q C applies H_k first, Q^H C H_1^H first; on the right the other way round
    order = range(k - 1, -1, -1) if left != adjoint else range(k)
    for i in order:
        # v: A's column i below the diagonal, 1 on it, 0 above
        v = _C.where(rows > i, A[..., :, i:i + 1], (rows == i).to(A.dtype))
        vh = _mH(v)
        t = tau[..., i:i + 1].unsqueeze(-1)
        t = _conj(t) if adjoint else t
        C = C - t * (v @ (vh @ C)) if left else C - t * ((C @ v) @ vh)
    return C


def ormqr(input, tau, other, left=True, transpose=False, *, out=None):
    """Q @ other (Q^H when transpose; other @ Q when not left) for the Q of
    geqrf's reflectors (input, tau), without forming Q (LAPACK's ormqr);
    differentiable."""
    fname = "torch.ormqr"
    for name, x in (("input", input), ("tau", tau), ("other", other)):
        _tensor_arg("ormqr", name, x)
    if input.dim() < 2 or other.dim() < 2:
        raise RuntimeError("%s: input and other must have at least 2 dimensions." % fname)
    if tau.dim() != input.dim() - 1:
        raise RuntimeError("%s: Expected tau to have one dimension less than input, but got tau.ndim equal to %d "
                           "and input.ndim is equal to %d" % (fname, tau.dim(), input.dim()))
    mn = other.shape[-2] if left else other.shape[-1]
    if input.shape[-2] != mn:
        raise RuntimeError("%s: %s must be equal to input.shape[-2]"
                           % (fname, "other.shape[-2]" if left else "other.shape[-1]"))
    if tau.shape[-1] > min(input.shape[-2:]):
        raise RuntimeError("%s: tau.shape[-1] must be less than or equal to input.shape[-1]" % fname)
    if not (input.dtype == tau.dtype == other.dtype):
        raise RuntimeError("%s: input, tau and other must have the same dtype" % fname)
    _check(fname, input, square=False)
    r = _apply_reflectors(input, tau, other, left=bool(left), adjoint=bool(transpose))
    return r if out is None else out.copy_(r)


_Geqrf = collections.namedtuple("geqrf", ["a", "tau"])


def geqrf(input, *, out=None):
    """(a, tau): LAPACK's geqrf through NumPy's qr(mode='raw') on the host: R
    on and above a's diagonal, the Householder vectors below it. No
    backward (as torch)."""
    _check("torch.geqrf", input, square=False)
    if input.requires_grad and _C.is_grad_enabled():
        raise NotImplementedError("the derivative of geqrf is not implemented (nor in torch); call it on a "
                                  "detached tensor or under no_grad")
    h, tau = _lapack("torch.geqrf", np.linalg.qr, _host(input), "raw")
    return _Geqrf(_back(np.swapaxes(h, -1, -2), input), _back(tau, input))


# ---- general eigenproblem and LDL^T -----------------------------------------------------------

class _EigFunction(Function):
    @staticmethod
    def forward(ctx, A):
        w, V = _lapack("linalg.eig", np.linalg.eig, _host(A))
        ctype = _C.complex128 if A.dtype in (_C.float64, _C.complex128) else _C.complex64
        # NumPy returns real arrays when every eigenvalue is real; torch always complex ones
        return _back(w.astype(np.complex128), A, ctype), _back(V.astype(np.complex128), A, ctype)

    @staticmethod
    def backward(ctx, gw, gV):
        raise NotImplementedError("the gradient of linalg.eig and linalg.eigvals is not implemented in pycuda_sem")


def eig(A, *, out=None):
    """(eigenvalues, eigenvectors) of each square matrix, complex (LAPACK's
    geev on the host: unit-norm eigenvectors). No backward."""
    w, V = _EigFunction.apply(_check("linalg.eig", A))
    return _Eig(w, V)


def eigvals(A, *, out=None):
    """The eigenvalues of each square matrix, complex, in LAPACK's order. No backward."""
    w = eig(A).eigenvalues
    return w if out is None else out.copy_(w)


def _no_ldl(name):
    raise NotImplementedError("linalg.%s (the Bunch-Kaufman LDL^T factorization) is not implemented in pycuda_sem; "
                              "use linalg.cholesky, linalg.lu_factor or linalg.solve instead" % name)


def ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    _no_ldl("ldl_factor_ex")


def ldl_factor(A, *, hermitian=False, out=None):
    _no_ldl("ldl_factor")


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    _no_ldl("ldl_solve")
