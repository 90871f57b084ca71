"""linalg.polar and linalg.matrix_sqrth (torch 2.15): two decompositions
composed from the SVD and the symmetric eigendecomposition, so that they
run on both devices and autograd flows through the latter.

polar(A) = (U, H) with A = U H: from A = W S V^H (reduced SVD), U = W V^H
has orthonormal columns and H = V S V^H is positive semi-definite, as
torch's SVD-based path (and SciPy's polar) computes it; when autograd
records, through the eigendecomposition of A^H A instead. matrix_sqrth(A) is
V sqrt(L) V^H from A's eigendecomposition, negative eigenvalues (A not
positive semi-definite) taken as 0, as torch's."""
import collections

from . import _C

_Polar = collections.namedtuple("linalg_polar", ["U", "H"])


def _check_float(name, A):
    if not (A.is_floating_point() or A.is_complex()):
        from ._dtype_info import _legacy_name
        raise NotImplementedError("%s: Expected a floating point or complex tensor as input. Got %s"
                                  % (name, _legacy_name(A)))


def polar(A, *, out=None):
    """The polar decomposition A = U H of a (batch of) m x n matrix with
    m >= n: U with orthonormal columns, H Hermitian positive semi-definite."""
    from .linalg import svd
    if A.dim() < 2:
        raise RuntimeError("linalg.polar: The input tensor A must have at least 2 dimensions.")
    _check_float("linalg.polar", A)
    m, n = A.shape[-2], A.shape[-1]
    if m < n:
        raise RuntimeError("linalg.polar: input must have at least as many rows as columns, but got %d by %d "
                           "matrices" % (m, n))
    if A.requires_grad and _C.is_grad_enabled():
        # Recorded: through eigh, whose backward exists here (the SVD's
        # singular vectors have none): H = sqrt(A^H A), U = A H^-1, defined
        # for full column rank, where torch's gradient is defined too.
        from .linalg import eigh
        L, V = eigh(A.mH @ A)
        s = L.clamp(min=0).sqrt().unsqueeze(-2).to(V.dtype)
        H = (V * s) @ V.mH
        U = A @ ((V / s) @ V.mH)
    else:
        W, S, Vh = svd(A, full_matrices=False)
        U = W @ Vh
        H = (Vh.mH * S.unsqueeze(-2).to(Vh.dtype)) @ Vh
    if out is not None:
        out[0].resize_(U.shape).copy_(U)
        out[1].resize_(H.shape).copy_(H)
        return _Polar(out[0], out[1])
    return _Polar(U, H)


def matrix_sqrth(A):
    """The principal square root X (X X = A) of a (batch of) symmetric or
    Hermitian positive-definite matrix; only A's lower triangle is read."""
    from .linalg import eigh
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError("linalg.matrix_sqrth: A must be batches of square matrices, but they are %d by %d "
                           "matrices" % (A.shape[-2] if A.dim() >= 2 else 1, A.shape[-1]))
    _check_float("linalg.matrix_sqrth", A)
    L, V = eigh(A)
    root = L.clamp(min=0).sqrt()
    return (V * root.unsqueeze(-2).to(V.dtype)) @ V.mH

