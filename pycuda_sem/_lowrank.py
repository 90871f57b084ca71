"""torch.svd_lowrank and torch.pca_lowrank: a truncated SVD by the
randomized range finder of Halko, Martinsson and Tropp (2011, algorithms
4.4 and 5.1), composed of matmul and linalg.qr / linalg.svd.

A random Gaussian test matrix of q columns gives a basis Q of A's range,
sharpened by `niter` power iterations (each re-orthonormalised by QR);
then the SVD of the small matrix Q^H A gives S and V, and Q times its U
gives U. For a matrix of rank <= q the result is A's exact SVD (up to the
signs of the singular vectors); otherwise the top q singular triples
approximately. Results are random (randn draws the test matrix), as in
torch. Works for batched and complex input; the gradient goes through
linalg.qr, which has none here (NotImplementedError in backward)."""
import operator

from . import _C

__all__ = ["svd_lowrank", "pca_lowrank"]


def _linalg():
    from . import linalg
    return linalg


def _approximate_basis(A, q, niter, M):
    """Orthonormal Q (..., m, q) whose span approximates that of A - M."""
    linalg = _linalg()
    dtype = A.dtype if A.is_floating_point() or A.is_complex() else _C.get_default_dtype()
    R = _C.randn(A.shape[-1], q, dtype=dtype, device=A.device)
    X = A.matmul(R) if M is None else A.matmul(R) - M.matmul(R)
    Q = linalg.qr(X).Q
    for _ in range(niter):
        X = A.mH.matmul(Q) if M is None else A.mH.matmul(Q) - M.mH.matmul(Q)
        Q = linalg.qr(X).Q
        X = A.matmul(Q) if M is None else A.matmul(Q) - M.matmul(Q)
        Q = linalg.qr(X).Q
    return Q


def _svd_lowrank(A, q, niter, M):
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.shape)
    wide = m < n
    if wide:  # work on the tall one: the basis is of the smaller side
        A = A.mH
        M = None if M is None else M.mH
    Q = _approximate_basis(A, q, niter, M)
    B = Q.mH.matmul(A) if M is None else Q.mH.matmul(A) - Q.mH.matmul(M)
    U, S, Vh = _linalg().svd(B, full_matrices=False)
    V = Vh.mH
    U = Q.matmul(U)
    if wide:
        U, V = V, U
    return U, S, V


def _check_int(name, value):
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            value = operator.index(value)
        except TypeError:
            raise TypeError("%s must be an int, got %s" % (name, type(value).__name__)) from None
    return value


def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V) with A - M ~= U diag(S) V^H, the q largest singular values,
    by the randomized range finder with `niter`
    subspace iterations. M (broadcast to A) defaults to zero."""
    if not isinstance(A, _C.Tensor):
        raise TypeError("svd_lowrank(): A must be a Tensor, not %s" % type(A).__name__)
    if A.dim() < 2:
        raise RuntimeError("svd_lowrank(): A must have at least 2 dimensions, got %d" % A.dim())
    # torch checks no range here: a negative q fails in randn, q > min(m, n)
    # gives min(m, n) triples, a negative niter runs no iteration
    q = 6 if q is None else _check_int("q", q)
    niter = 2 if niter is None else _check_int("niter", niter)
    return _svd_lowrank(A, q, niter, M)


def pca_lowrank(A, q=None, center=True, niter=2):
    """(U, S, V) of the principal components of the rows of A: the
    low-rank SVD of A with its column means subtracted (center=True). q
    defaults to min(6, m, n); the columns of V are the principal
    directions, S**2 / (m - 1) the variances along them."""
    if not isinstance(A, _C.Tensor):
        raise TypeError("pca_lowrank(): A must be a Tensor, not %s" % type(A).__name__)
    if A.dim() < 2:
        raise RuntimeError("pca_lowrank(): A must have at least 2 dimensions, got %d" % A.dim())
    m, n = A.shape[-2:]
    q = min(6, m, n) if q is None else _check_int("q", q)
    if not 0 <= q <= min(m, n):
        raise ValueError("q(=%d) must be non-negative integer and not greater than min(m, n)=%d"
                         % (q, min(m, n)))
    niter = _check_int("niter", niter)
    if niter < 0:
        raise ValueError("niter(=%d) must be non-negative integer" % niter)
    if not center:
        return _svd_lowrank(A, q, niter, None)
    return _svd_lowrank(A - A.mean(dim=-2, keepdim=True), q, niter, None)
