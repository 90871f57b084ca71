"""The torch-level and Tensor-method spellings of the factorizations
(torch.det, torch.inverse, x.slogdet(), torch.svd with V instead of Vh,
...), over pycuda_sem.linalg. Tensor methods reach these through
csrc/ops/py_methods.c."""
import collections

from . import _C
from . import linalg

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
    V = Vh.transpose(-2, -1)
    V = V.conj() if V.is_complex() else V
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
