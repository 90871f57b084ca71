"""The torch-level and Tensor-method spellings of the factorizations
(torch.det, torch.inverse, x.slogdet(), torch.svd with V instead of Vh,
torch.lu, torch.triangular_solve, torch.cholesky_solve, ...), over
pycuda_sem.linalg, and the removed ones torch 2.x keeps only to raise
(torch.lstsq, torch.solve, torch.eig, torch.symeig, torch.matrix_rank). Tensor methods reach these through
csrc/ops/py_methods.c."""
import collections

from . import _C
from . import linalg
from . import _linalg_lu as _lu
from . import _linalg_more as _more
from ._linalg_host import _mH

_SVD = collections.namedtuple("svd", ["U", "S", "V"])


def det(input):
    return linalg.det(input)


def inverse(input, *, out=None):
    return linalg.inv(input, out=out)


def slogdet(input):
    return linalg.slogdet(input)


def logdet(input):
    """log(det(input)): nan where the determinant is negative, -inf where it is 0."""
    sign, logabs = linalg.slogdet(input)
    if input.is_complex():
        return logabs.to(sign.dtype) + sign.log()
    nan = _C.full((), float("nan"), dtype=logabs.dtype, device=logabs.device)
    return _C.where(sign < 0, nan, logabs)


def pinverse(input, rcond=1e-15):
    return linalg.pinv(input, rtol=rcond)


def matrix_power(input, n):
    return linalg.matrix_power(input, n)


def cholesky(input, upper=False, *, out=None):
    """Removed from torch (2.x raises): the message names linalg.cholesky, as torch's."""
    raise RuntimeError("This function was deprecated since version 1.9 and is now removed. `torch.cholesky` is "
                       "deprecated in favor of `torch.linalg.cholesky`.\nL = torch.cholesky(A) should be replaced "
                       "with:\nL = torch.linalg.cholesky(A)\nU = torch.cholesky(A, upper=True) should be replaced "
                       "with:\nU = torch.linalg.cholesky(A).mH")


def svd(input, some=True, compute_uv=True, *, out=None):
    """The older torch.svd: (U, S, V) with V (not V^H); some=False gives full U and V;
    compute_uv=False gives zero-filled U and V, as torch."""
    U, S, Vh = linalg.svd(input, full_matrices=not some)
    V = _mH(Vh)
    if not compute_uv:
        U, V = _C.zeros_like(U), _C.zeros_like(V)
    return _SVD(U, S, V)


def qr(input, some=True, *, out=None):
    """Removed from torch (2.x raises): the message names linalg.qr, as torch's."""
    raise RuntimeError("This function was deprecated since version 1.9 and is now removed. `torch.qr` is deprecated "
                       "in favor of `torch.linalg.qr` and the boolean parameter `some` has been replaced with a "
                       "string parameter `mode`.\n\nQ, R = torch.qr(A) should be replaced with:\nQ, R = "
                       "torch.linalg.qr(A, mode='reduced')\n\nand\n\nQ, R = torch.qr(A, some=False) should be "
                       "replaced with:\nQ, R = torch.linalg.qr(A, mode='complete')")


# ---- the LU, triangular and Cholesky solves, matrix_exp (torch-level forms) ---------------

_LUWithInfo = collections.namedtuple("_lu_with_info", ["LU", "pivots", "info"])
_TriangularSolve = collections.namedtuple("triangular_solve", ["solution", "cloned_coefficient"])

lu_unpack = _lu.lu_unpack
geqrf = _more.geqrf
ormqr = _more.ormqr
cholesky_solve = _lu.cholesky_solve
cholesky_inverse = _lu.cholesky_inverse


def matrix_exp(input):
    return linalg.matrix_exp(input)


def orgqr(input, tau):
    """The older name of linalg.householder_product."""
    return linalg.householder_product(input, tau)


def lu(A, pivot=True, get_infos=False, out=None):
    """The older torch.lu: (LU, pivots), or (LU, pivots, infos) when get_infos
    (then no error for a singular matrix, as torch)."""
    LU, piv, info = linalg.lu_factor_ex(A, pivot=pivot, check_errors=not get_infos)
    return _LUWithInfo(LU, piv, info) if get_infos else (LU, piv)


def lu_solve(b, LU_data, LU_pivots, *, out=None):
    """The older torch.lu_solve: linalg.lu_solve with b first."""
    return linalg.lu_solve(LU_data, LU_pivots, b, out=out)


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """The older torch.triangular_solve: (solution, a copy of A) of A X = b (A^T X = b when transpose)."""
    M = A.mT if transpose else A
    X = linalg.solve_triangular(M, b, upper=upper != bool(transpose), unitriangular=unitriangular)
    return _TriangularSolve(X, A.clone())


# ---- removed from torch: 2.x keeps the names only to raise -------------------------------------

def _removed(msg):
    raise RuntimeError("This function was deprecated since version 1.9 and is now removed. " + msg)


def lstsq(input, A, *, out=None):
    _removed("`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n`torch.linalg.lstsq` has reversed "
             "arguments and does not return the QR decomposition in the returned tuple (although it returns other "
             "information about the problem).\n\nTo get the QR decomposition consider using `torch.linalg.qr`.\n\n"
             "The returned solution in `torch.lstsq` stored the residuals of the solution in the last m - n columns "
             "of the returned value whenever m > n. In torch.linalg.lstsq, the residuals are in the field "
             "'residuals' of the returned named tuple.\n\nThe unpacking of the solution, as in\nX, _ = "
             "torch.lstsq(B, A).solution[:A.size(1)]\nshould be replaced with:\nX = torch.linalg.lstsq(A, B).solution")


def solve(input, A, *, out=None):
    _removed("`torch.solve` is deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` has its arguments "
             "reversed and does not return the LU factorization.\n\nTo get the LU factorization see `torch.lu`, "
             "which can be used with `torch.lu_solve` or `torch.lu_unpack`.\nX = torch.solve(B, A).solution should "
             "be replaced with:\nX = torch.linalg.solve(A, B)")


def eig(input, eigenvectors=False, *, out=None):
    _removed("`torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather than real tensors "
             "mimicking complex tensors.\n\nL, _ = torch.eig(A) should be replaced with:\nL_complex = "
             "torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, eigenvectors=True) should be replaced with:\n"
             "L_complex, V_complex = torch.linalg.eig(A)")


def symeig(input, eigenvectors=False, upper=True, *, out=None):
    _removed("The default behavior has changed from using the upper triangular portion of the matrix by default to "
             "using the lower triangular portion.\n\nL, _ = torch.symeig(A, upper=upper) should be replaced with:\n"
             "L = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\nL, V = torch.symeig(A, "
             "eigenvectors=True) should be replaced with:\nL, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')")


def matrix_rank(input, tol=None, symmetric=False, *, out=None):
    _removed("\nPlease use the `torch.linalg.matrix_rank` function instead. The parameter 'symmetric' was renamed "
             "in `torch.linalg.matrix_rank()` to 'hermitian'.")
