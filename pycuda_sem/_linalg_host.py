"""The matrix factorizations of torch.linalg, computed on the host by
NumPy's LAPACK, with torch's gradients.

There is no cuSOLVER path yet: a CUDA input is copied to the host (a
synchronisation), factorized there, and the result copied back to its
device. Batched inputs ([..., m, n]) are factorized matrix by matrix by
NumPy's stacked routines. Each op is an autograd Function whose backward is
written with pycuda_sem ops (so it runs on the input's device and can be
differentiated again where torch's can): inv, det, slogdet, solve, cholesky,
eigh/eigvalsh, and the singular values; the singular vectors, QR and pinv
have no backward here (NotImplementedError when one is needed).
"""
import numpy as np

from . import _C
from .autograd.function import Function


class LinAlgError(RuntimeError):
    """A matrix the factorization cannot handle (singular, not positive-definite)."""


_LAPACK_DTYPES = ("float32", "float64", "complex64", "complex128")


def _check(fname, A, square=True):
    if not isinstance(A, _C.Tensor):
        raise TypeError("%s(): argument 'A' must be Tensor, not %s" % (fname, type(A).__name__))
    name = str(A.dtype).split(".")[-1]
    if name not in _LAPACK_DTYPES:
        raise RuntimeError("%s: Expected a floating point or complex tensor as input. Got %s"
                           % (fname, name.capitalize()))
    if A.dim() < 2:
        raise RuntimeError("%s: The input tensor A must have at least 2 dimensions." % fname)
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError("%s: A must be batches of square matrices, but they are %d by %d matrices"
                           % (fname, A.shape[-2], A.shape[-1]))
    return A


def _host(t):
    return t.detach().cpu().numpy()


def _back(a, like, dtype=None):
    """A NumPy result as a tensor on like's device (like's dtype, or dtype)."""
    a = np.ascontiguousarray(a).reshape(np.shape(a))   # ascontiguousarray makes a 0-d array 1-d
    t = _C.tensor(a, dtype=dtype or like.dtype)
    return t.to(like.device) if like.device.type != "cpu" else t


def _lapack(fname, fn, *args):
    with np.errstate(all="ignore"):
        try:
            return fn(*args)
        except np.linalg.LinAlgError as e:
            msg = str(e)
            if "positive definite" in msg:
                raise LinAlgError("%s: The factorization could not be completed because the input is not "
                                  "positive-definite." % fname) from None
            if "ingular" in msg:
                raise LinAlgError("%s: The input matrix is singular, so the operation could not be "
                                  "completed." % fname) from None
            raise LinAlgError("%s: %s" % (fname, msg)) from None


def _conj(t):
    """The complex conjugate (there is no Tensor.conj yet: real - i imag); a real t as it is."""
    if not t.is_complex():
        return t
    return t.real.to(t.dtype) - t.imag.to(t.dtype) * 1j


def _mH(t):
    return _conj(t.transpose(-2, -1))


# ---- inverse, determinant, solve --------------------------------------------------------

class _Inv(Function):
    @staticmethod
    def forward(ctx, A):
        r = _back(_lapack("linalg.inv", np.linalg.inv, _host(A)), A)
        ctx.save_for_backward(r)
        return r

    @staticmethod
    def backward(ctx, g):
        (Ai,) = ctx.saved_tensors
        AiH = _mH(Ai)
        return -(AiH @ g @ AiH)


class _SlogDet(Function):
    @staticmethod
    def forward(ctx, A):
        sign, logabs = _lapack("linalg.slogdet", np.linalg.slogdet, _host(A))
        real = _C.float64 if A.dtype in (_C.float64, _C.complex128) else _C.float32
        s, la = _back(sign, A), _back(logabs, A, real)
        ctx.save_for_backward(A)
        ctx.mark_non_differentiable(s)
        ctx.set_materialize_grads(False)
        return s, la

    @staticmethod
    def backward(ctx, gs, gla):
        (A,) = ctx.saved_tensors
        if gla is None:
            return None
        # d log|det A| = Re tr(A^-1 dA): the gradient is A^-H (times the real cotangent)
        return gla.unsqueeze(-1).unsqueeze(-1).to(A.dtype) * _mH(inv(A))


class _Solve(Function):
    @staticmethod
    def forward(ctx, A, B, vector):
        b = _host(B)
        x = _lapack("linalg.solve", np.linalg.solve, _host(A), b[..., None] if vector else b)
        X = _back(x[..., 0] if vector else x, B)
        ctx.save_for_backward(A, X)
        ctx.vector = vector
        return X

    @staticmethod
    def backward(ctx, g):
        A, X = ctx.saved_tensors
        gB = solve(_mH(A), g)
        if ctx.vector:
            gA = -(gB.unsqueeze(-1) @ _mH(X.unsqueeze(-1)))
        else:
            gA = -(gB @ _mH(X))
        return gA, gB, None


def inv(A, *, out=None):
    """The inverse of each square matrix of A (LinAlgError if singular)."""
    r = _Inv.apply(_check("linalg.inv", A))
    return r if out is None else out.copy_(r)


def slogdet(A, *, out=None):
    """(sign, log|det|) of each square matrix: a named pair (sign, logabsdet)."""
    from .linalg import _SlogdetResult
    s, la = _SlogDet.apply(_check("linalg.slogdet", A))
    return _SlogdetResult(s, la)


def det(A, *, out=None):
    """The determinant of each square matrix (differentiable where A is invertible)."""
    s, la = _SlogDet.apply(_check("linalg.det", A))
    r = s * la.exp().to(s.dtype)
    return r if out is None else out.copy_(r)


def solve(A, B, *, left=True, out=None):
    """X with A X = B (left) or X A = B; B a matrix batch or, when its dims
    are A's batch dims and one vector dim, vectors."""
    _check("linalg.solve", A)
    if not isinstance(B, _C.Tensor):
        raise TypeError("linalg.solve(): argument 'B' must be Tensor, not %s" % type(B).__name__)
    if not left:
        return _mH(solve(_mH(A), _mH(B))) if out is None else out.copy_(_mH(solve(_mH(A), _mH(B))))
    vector = B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    if B.dtype != A.dtype:
        raise RuntimeError("linalg.solve: Expected A and B to have the same dtype, but found A of type %s and B of "
                           "type %s instead" % (str(A.dtype).split(".")[-1], str(B.dtype).split(".")[-1]))
    n = A.shape[-1]
    if B.shape[-1 if vector else -2] != n:
        raise RuntimeError("linalg.solve: Incompatible shapes of A and B for the equation AX = B (%s and %s)"
                           % ("x".join(map(str, A.shape[-2:])), "x".join(map(str, B.shape))))
    if vector and B.dim() == 1 and A.dim() > 2:
        B = B.expand(tuple(A.shape[:-1]))
    r = _Solve.apply(A, B, vector)
    return r if out is None else out.copy_(r)


# ---- Cholesky, eigh ------------------------------------------------------------------

class _Cholesky(Function):
    @staticmethod
    def forward(ctx, A):
        L = _back(_lapack("linalg.cholesky", np.linalg.cholesky, _host(A)), A)
        ctx.save_for_backward(L)
        return L

    @staticmethod
    def backward(ctx, gL):
        (L,) = ctx.saved_tensors
        # gA = sym(L^-H Phi(L^H gL) L^-1), Phi: the lower triangle, diagonal halved
        phi = (_mH(L) @ gL).tril()
        phi = phi - 0.5 * _C.diag_embed(phi.diagonal(0, -2, -1))
        Li = inv(L)
        S = _mH(Li) @ phi @ Li
        return 0.5 * (S + _mH(S))


def cholesky(A, *, upper=False, out=None):
    """The lower (or upper) Cholesky factor of each Hermitian positive-definite matrix."""
    L = _Cholesky.apply(_check("linalg.cholesky", A))
    r = _mH(L) if upper else L
    return r if out is None else out.copy_(r)


class _Eigh(Function):
    @staticmethod
    def forward(ctx, A, uplo):
        w, V = _lapack("linalg.eigh", np.linalg.eigh, _host(A), uplo)
        real = _C.float64 if A.dtype in (_C.float64, _C.complex128) else _C.float32
        wt, Vt = _back(w, A, real), _back(V, A)
        ctx.save_for_backward(wt, Vt)
        ctx.set_materialize_grads(False)
        return wt, Vt

    @staticmethod
    def backward(ctx, gw, gV):
        w, V = ctx.saved_tensors
        VH = _mH(V)
        inner = _C.zeros(V.shape, dtype=V.dtype, device=V.device)
        if gV is not None:
            # the eigenvector part, over the gaps E_ij = w_j - w_i (diagonal left out)
            VhgV = VH @ gV
            E = w.unsqueeze(-2) - w.unsqueeze(-1)
            eye = _C.eye(w.shape[-1], dtype=w.dtype, device=w.device)
            F = (1 - eye) / (E + eye)
            skew = 0.5 * (VhgV - _mH(VhgV))
            inner = inner + skew * F.to(V.dtype)
        if gw is not None:
            inner = inner + _C.diag_embed(gw.to(V.dtype))
        return V @ inner @ VH, None


def eigh(A, UPLO="L", *, out=None):
    """Eigenvalues (ascending, real) and orthonormal eigenvectors of each
    Hermitian matrix (from its UPLO triangle): a named pair (eigenvalues, eigenvectors)."""
    from .linalg import _EighResult
    if UPLO not in ("L", "U"):
        raise RuntimeError("Expected UPLO argument to be 'L' or 'U', but got %s" % UPLO)
    w, V = _Eigh.apply(_check("linalg.eigh", A), UPLO)
    return _EighResult(w, V)


def eigvalsh(A, UPLO="L", *, out=None):
    """The eigenvalues of each Hermitian matrix, ascending."""
    r = eigh(A, UPLO).eigenvalues
    return r if out is None else out.copy_(r)


# ---- SVD, QR, pseudo-inverse ----------------------------------------------------------

class _Svd(Function):
    @staticmethod
    def forward(ctx, A, full_matrices):
        U, S, Vh = _lapack("linalg.svd", np.linalg.svd, _host(A), full_matrices)
        real = _C.float64 if A.dtype in (_C.float64, _C.complex128) else _C.float32
        Ut, St, Vht = _back(U, A), _back(S, A, real), _back(Vh, A)
        ctx.save_for_backward(Ut, Vht)
        ctx.k = St.shape[-1]
        ctx.set_materialize_grads(False)  # unused U, Vh reach backward as None
        return Ut, St, Vht

    @staticmethod
    def backward(ctx, gU, gS, gVh):
        if gU is not None or gVh is not None:
            raise NotImplementedError("the gradient of the singular vectors (linalg.svd's U and Vh) is not "
                                      "implemented in pycuda_sem; the singular values' is (linalg.svdvals)")
        if gS is None:
            return None, None
        U, Vh = ctx.saved_tensors
        k = ctx.k
        Uk, Vhk = U[..., :, :k], Vh[..., :k, :]
        return (Uk * gS.unsqueeze(-2).to(U.dtype)) @ Vhk, None


def svd(A, full_matrices=True, *, driver=None, out=None):
    """U, S, Vh with A = U diag(S) Vh (S descending): a named triple."""
    from .linalg import _SvdResult
    U, S, Vh = _Svd.apply(_check("linalg.svd", A, square=False), bool(full_matrices))
    return _SvdResult(U, S, Vh)


def svdvals(A, *, driver=None, out=None):
    """The singular values of each matrix, descending (differentiable)."""
    _, S, _ = _Svd.apply(_check("linalg.svdvals", A, square=False), False)
    return S if out is None else out.copy_(S)


def qr(A, mode="reduced", *, out=None):
    """Q, R with A = Q R ('reduced', 'complete', or 'r': R only, Q empty).
    No backward here."""
    from .linalg import _QRResult
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError("qr received unrecognized mode '%s' but expected one of 'reduced' (default), 'r', or "
                           "'complete'" % mode)
    a = _host(_check("linalg.qr", A, square=False))
    if mode == "r":
        R = _back(_lapack("linalg.qr", np.linalg.qr, a, "r"), A)
        Q = _C.empty((0,), dtype=A.dtype, device=A.device)
    else:
        q, r = _lapack("linalg.qr", np.linalg.qr, a, mode)
        Q, R = _back(q, A), _back(r, A)
    if A.requires_grad and _C.is_grad_enabled():
        raise NotImplementedError("the gradient of linalg.qr is not implemented in pycuda_sem; call it on a "
                                  "detached tensor or under no_grad")
    return _QRResult(Q, R)


def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """The Moore-Penrose pseudo-inverse (singular values below
    max(atol, rtol * the largest) dropped). No backward here."""
    _check("linalg.pinv", A, square=False)
    if A.requires_grad and _C.is_grad_enabled():
        raise NotImplementedError("the gradient of linalg.pinv is not implemented in pycuda_sem")
    a = _host(A)
    if atol is None and rtol is None:
        rtol = max(a.shape[-2:]) * np.finfo(a.real.dtype).eps
    s = np.linalg.svd(a, compute_uv=False)
    smax = s[..., :1] if s.shape[-1] else np.zeros(s.shape[:-1] + (1,))
    tol = np.maximum(atol or 0.0, (rtol or 0.0) * smax)
    u, s2, vh = np.linalg.svd(a, full_matrices=False)
    sinv = np.where(s2 > tol, 1.0 / np.where(s2 > tol, s2, 1.0), 0.0)
    r = np.conj(np.swapaxes(vh, -1, -2)) @ (sinv[..., :, None] * np.conj(np.swapaxes(u, -1, -2)))
    r = _back(r.astype(a.dtype), A)
    return r if out is None else out.copy_(r)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """The number of singular values above max(atol, rtol * the largest)."""
    a = _host(_check("linalg.matrix_rank", A, square=False))
    s = np.linalg.svd(a, compute_uv=False)
    if atol is None and rtol is None:
        rtol = max(a.shape[-2:]) * np.finfo(a.real.dtype).eps
    smax = s[..., :1] if s.shape[-1] else np.zeros(s.shape[:-1] + (1,))
    tol = np.maximum(atol or 0.0, (rtol or 0.0) * smax)
    r = _back((s > tol).sum(-1), A, _C.int64)
    return r if out is None else out.copy_(r)
