"""pycuda_sem.linalg: the norms (vector_norm, matrix_norm, norm).

Compositions of the C reductions: vector norms are the one norm reduction
(csrc/ops/ops_reduce.c), the induced matrix norms 1 and inf (and -1, -inf)
are a sum of absolute values and a max (min). The spectral norms ('nuc', 2,
-2) need an SVD, which pycuda_sem does not have: they raise
NotImplementedError."""
import math as _pymath

from . import _C

__all__ = ["vector_norm", "matrix_norm", "norm"]


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
        raise NotImplementedError("linalg.matrix_norm: ord=%r needs a singular value "
                                  "decomposition, which pycuda_sem does not implement" % (ord,))
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
