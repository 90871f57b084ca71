"""pycuda_sem.linalg: the norms (vector_norm, matrix_norm, norm), the
factorizations (_linalg_host.py: inv, det, slogdet, solve, cholesky, eigh,
eigvalsh, svd, svdvals, qr, pinv, matrix_rank, on the host by NumPy's
LAPACK), the LU and triangular solves (_linalg_lu.py, LU written in NumPy),
the rest (_linalg_more.py: cross, lstsq, matrix_exp, cond, tensorinv,
tensorsolve, vander, householder_product, eig, eigvals), and matmul-based
helpers (matrix_power, multi_dot, vecdot).

The norms are compositions of the C reductions: vector norms are the one
norm reduction (csrc/ops/ops_reduce.c), the induced matrix norms 1 and inf
(and -1, -inf) a sum of absolute values and a max (min), the spectral ones
('nuc', 2, -2) sums and extremes of svdvals."""
import collections as _collections
import math as _pymath

from . import _C
from ._linalg_host import (  # noqa: F401
    LinAlgError, inv, det, slogdet, solve, cholesky, eigh, eigvalsh, svd, svdvals, qr, pinv, matrix_rank,
)
from ._linalg_host import _conj
from ._linalg_lu import (  # noqa: F401
    lu_factor, lu_factor_ex, lu, lu_solve, solve_triangular, inv_ex, solve_ex, cholesky_ex,
)
from ._linalg_more import (  # noqa: F401
    cross, lstsq, matrix_exp, cond, tensorinv, tensorsolve, vander, householder_product, eig, eigvals,
    ldl_factor, ldl_factor_ex, ldl_solve,
)
from ._linalg_polar import polar, matrix_sqrth  # noqa: F401

__all__ = ["vector_norm", "matrix_norm", "norm", "LinAlgError", "inv", "det", "slogdet", "solve", "cholesky",
           "eigh", "eigvalsh", "svd", "svdvals", "qr", "pinv", "matrix_rank", "matrix_power", "multi_dot",
           "vecdot", "matmul", "diagonal", "lu_factor", "lu_factor_ex", "lu", "lu_solve", "solve_triangular",
           "inv_ex", "solve_ex", "cholesky_ex", "cross", "lstsq", "matrix_exp", "cond", "tensorinv", "tensorsolve",
           "vander", "householder_product", "eig", "eigvals", "ldl_factor", "ldl_factor_ex", "ldl_solve", "polar",
           "matrix_sqrth"]

_SlogdetResult = _collections.namedtuple("slogdet", ["sign", "logabsdet"])
_EighResult = _collections.namedtuple("eigh", ["eigenvalues", "eigenvectors"])
_SvdResult = _collections.namedtuple("svd", ["U", "S", "Vh"])
_QRResult = _collections.namedtuple("qr", ["Q", "R"])
matmul = _C.matmul


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonals of A's matrices (a view), over its last two dims by default."""
    return A.diagonal(offset, dim1, dim2)


def matrix_power(A, n, *, out=None):
    """A to the integer power n by repeated squaring (n < 0: of inv(A); 0: the identity)."""
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError("linalg.matrix_power: A must be batches of square matrices")
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError("linalg.matrix_power(): argument 'n' must be int")
    if n == 0:
        r = _C.eye(A.shape[-1], dtype=A.dtype, device=A.device).expand(tuple(A.shape)).clone()
    else:
        base, k, r = (inv(A) if n < 0 else A), abs(n), None
        while k:
            if k & 1:
                r = base if r is None else r @ base
            k >>= 1
            if k:
                base = base @ base
    return r if out is None else out.copy_(r)


def multi_dot(tensors, *, out=None):
    """The product of a chain of matrices (the first may be a vector, as the last),
    multiplied in the order that needs the fewest scalar products."""
    ts = list(tensors)
    if len(ts) < 2:
        raise RuntimeError("multi_dot(): expected at least 2 tensors but got %d" % len(ts))
    first_vec, last_vec = ts[0].dim() == 1, ts[-1].dim() == 1
    if first_vec:
        ts[0] = ts[0].unsqueeze(0)
    if last_vec:
        ts[-1] = ts[-1].unsqueeze(1)
    dims = [ts[0].shape[0]] + [t.shape[1] for t in ts]
    n = len(ts)
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k

    def chain(i, j):
        return ts[i] if i == j else chain(i, split[i][j]) @ chain(split[i][j] + 1, j)
    r = chain(0, n - 1)
    if first_vec:
        r = r.squeeze(0)
    if last_vec:
        r = r.squeeze(-1)
    return r if out is None else out.copy_(r)


def vecdot(x, y, *, dim=-1, out=None):
    """sum(conj(x) * y) over dim, broadcasting the other dims."""
    r = (_conj(x) * y).sum(dim)
    return r if out is None else out.copy_(r)


def _dims(dim, ndim):
    if dim is None:
        return None
    return (dim,) if isinstance(dim, int) else tuple(dim)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """The ord-norm of x over dim (all dims by default) as a vector."""
    if not isinstance(x, _C.Tensor):
        raise TypeError("linalg.vector_norm(): argument 'input' must be Tensor, not %s"
                        % type(x).__name__)
    if isinstance(ord, str):
        raise RuntimeError("linalg.vector_norm: ord must be a number, not '%s'" % ord)
    dims = _dims(dim, x.dim())
    if dims is None and keepdim:
        r = x.norm(float(ord), None, False, dtype=dtype).reshape([1] * x.dim())
    else:
        r = x.norm(float(ord), dims, keepdim, dtype=dtype)
    if out is not None:
        out.copy_(r)
        return out
    return r


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """The ord-norm of the matrices of A over the two dims of dim: 'fro',
    1, -1, inf, -inf ('nuc', 2, -2 raise NotImplementedError: no SVD)."""
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    d0, d1 = (d + A.dim() if d < 0 else d for d in dim)
    if d0 == d1:
        raise RuntimeError("linalg.matrix_norm: dims must be different. Got (%d, %d)" % dim)
    if dtype is not None:
        A = A.to(dtype)
    if ord == "fro":
        r = vector_norm(A, 2, (d0, d1), keepdim)
    elif ord in ("nuc", 2, -2):
        M = A.movedim((d0, d1), (-2, -1))
        s = svdvals(M)
        r = s.sum(-1) if ord == "nuc" else s.amax(-1) if ord == 2 else s.amin(-1)
        if keepdim:
            r = r.unsqueeze(min(d0, d1)).unsqueeze(max(d0, d1))
    elif ord in (1, -1, _pymath.inf, -_pymath.inf):
        if not (A.is_floating_point() or A.is_complex()):
            raise RuntimeError("linalg.matrix_norm: Expected a floating point or complex tensor "
                               "as input. Got %s" % A.dtype)
        # 1: the largest column sum (sum over rows d0, max over columns d1);
        # inf: the largest row sum
        sum_dim, ext_dim = (d0, d1) if ord in (1, -1) else (d1, d0)
        s = A.abs().sum(dim=sum_dim, keepdim=True)
        r = s.amax(dim=ext_dim, keepdim=True) if ord > 0 else s.amin(dim=ext_dim, keepdim=True)
        if not keepdim:
            r = r.squeeze((d0, d1))
    else:
        raise RuntimeError("linalg.matrix_norm: Order %s not supported." % (ord,))
    if out is not None:
        out.copy_(r)
        return out
    return r


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    """linalg.norm: a matrix norm when ord is a string or dim has two
    entries (or A is 2-D with ord given and no dim), else a vector norm."""
    if dim is not None and not isinstance(dim, int):
        dim = tuple(dim)
    matrix = isinstance(ord, str) or (isinstance(dim, tuple) and len(dim) == 2) or (
        dim is None and ord is not None and A.dim() == 2)
    if matrix:
        return matrix_norm(A, "fro" if ord is None else ord, dim if dim is not None else (-2, -1),
                           keepdim, dtype=dtype, out=out)
    if ord is None:
        ord = 2
    return vector_norm(A, ord, dim, keepdim, dtype=dtype, out=out)
