"""The LU and triangular parts of torch.linalg: lu_factor(_ex), lu,
lu_unpack, lu_solve, solve_triangular, and what is built on them (inv_ex,
solve_ex, cholesky_ex, cholesky_solve, cholesky_inverse).

NumPy has no LU and no triangular solve, so both are written here in
NumPy, vectorised over the batch: a Python loop over the n columns (rows)
only, never over batch elements. The LU is LAPACK's getrf algorithm (partial
pivoting, the first largest |a| wins a tie, a zero pivot neither swaps nor
scales and sets info), and its pivots are LAPACK's: 1-based int32 row swaps,
as torch returns. Like _linalg_host.py, a CUDA input makes a round trip to
the host.

Gradients: the LU factorization (square matrices) and solve_triangular are
autograd Functions whose backward is written with differentiable pycuda_sem
ops; lu_unpack, lu_solve, the *_ex functions and the Cholesky solves are
compositions of those, so they are differentiable too.
"""
import collections

import numpy as np

from . import _C
from .autograd.function import Function
from ._linalg_host import LinAlgError, _check, _host, _back, _mH, cholesky

_LUFactor = collections.namedtuple("linalg_lu_factor", ["LU", "pivots"])
_LUFactorEx = collections.namedtuple("linalg_lu_factor_ex", ["LU", "pivots", "info"])
_LU = collections.namedtuple("linalg_lu", ["P", "L", "U"])
_LUUnpack = collections.namedtuple("lu_unpack", ["P", "L", "U"])
_InvEx = collections.namedtuple("linalg_inv_ex", ["inverse", "info"])
_SolveEx = collections.namedtuple("linalg_solve_ex", ["result", "info"])
_CholeskyEx = collections.namedtuple("linalg_cholesky_ex", ["L", "info"])


def _dtname(t):
    return str(t.dtype).split(".")[-1].capitalize().replace("Float64", "Double").replace("Float32", "Float")


def _batch_msg(info, batched):
    """The index of the first failed batch element, and torch's '(Batch element i): ' prefix."""
    flat = info.reshape(-1)
    i = int(np.flatnonzero(flat)[0])
    return int(flat[i]), ("(Batch element %d): " % i if batched else "")


def _tensor_arg(fname, name, x):
    if not isinstance(x, _C.Tensor):
        raise TypeError("%s(): argument '%s' must be Tensor, not %s" % (fname, name, type(x).__name__))
    return x


# ---- LU in NumPy ------------------------------------------------------------------------

def _lu_numpy(a, pivot=True):
    """getrf on a [..., m, n] array: (LU, 1-based int32 pivots [..., k], int32 info [...])."""
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    k = min(m, n)
    nb = int(np.prod(batch, dtype=np.int64))
    a = np.array(a.reshape((nb, m, n)), copy=True)   # (nb, not -1: a size-0 array has no -1)
    rows = np.arange(nb)
    piv = np.empty((nb, k), np.int32)
    info = np.zeros(nb, np.int32)
    with np.errstate(all="ignore"):
        for j in range(k):
            if pivot:
                col = a[:, j:, j]
                # LAPACK's i?amax: |re| + |im| for complex, the first of equal magnitudes
                mag = np.abs(col.real) + np.abs(col.imag) if np.iscomplexobj(col) else np.abs(col)
                p = j + np.argmax(mag, axis=1)
                rj = a[rows, j, :].copy()
                a[rows, j, :] = a[rows, p, :]
                a[rows, p, :] = rj
                piv[:, j] = p + 1
            else:
                piv[:, j] = j + 1
            d = a[:, j, j]
            zero = d == 0
            info[(info == 0) & zero] = j + 1
            # a zero pivot leaves its column as it is (all zero below it when pivoting)
            a[:, j + 1:, j] /= np.where(zero, 1, d)[:, None]
            a[:, j + 1:, j + 1:] -= a[:, j + 1:, j, None] * a[:, j, None, j + 1:]
    return a.reshape(batch + (m, n)), piv.reshape(batch + (k,)), info.reshape(batch)


def _perm_numpy(piv, m):
    """The row order perm [..., m] of getrf's swaps: row i of P^T A is A[perm[i]]."""
    batch, k = piv.shape[:-1], piv.shape[-1]
    nb = int(np.prod(batch, dtype=np.int64))
    p = piv.reshape((nb, k)).astype(np.int64) - 1
    perm = np.broadcast_to(np.arange(m), (nb, m)).copy()
    rows = np.arange(nb)
    for i in range(k):
        if np.any((p[:, i] < i) | (p[:, i] >= m)):
            raise RuntimeError("lu_unpack: the pivots must be LAPACK pivots in [%d, %d] at position %d"
                               % (i + 1, m, i + 1))
        a, b = perm[:, i].copy(), perm[rows, p[:, i]]
        perm[:, i] = b
        perm[rows, p[:, i]] = a
    return perm.reshape(batch + (m,))


def _gather_rows(B, perm):
    """B[..., perm[i], :] for each i (perm a host int64 array broadcast over B's batch)."""
    idx = _C.tensor(np.ascontiguousarray(perm), dtype=_C.int64)
    if B.device.type != "cpu":
        idx = idx.to(B.device)
    shape = tuple(np.broadcast_shapes(tuple(idx.shape[:-1]), tuple(B.shape[:-2]))) + tuple(B.shape[-2:])
    idx = idx.unsqueeze(-1).expand(shape[:-1] + (B.shape[-1],))
    return _C.gather(B.expand(shape), -2, idx)


class _LUFunction(Function):
    @staticmethod
    def forward(ctx, A, pivot):
        lu, piv, info = _lu_numpy(_host(A), pivot)
        LU, P, I = _back(lu, A), _back(piv, A, _C.int32), _back(info, A, _C.int32)
        ctx.save_for_backward(LU, P)
        ctx.mark_non_differentiable(P, I)
        return LU, P, I

    @staticmethod
    def backward(ctx, gLU, gpiv, ginfo):
        LU, piv = ctx.saved_tensors
        m, n = LU.shape[-2:]
        if m != n:
            raise NotImplementedError("the gradient of the LU factorization of non-square matrices is not "
                                      "implemented in pycuda_sem")
        # A = P L U: gA = P L^-H (tril(L^H gL, -1) + triu(gU U^H)) U^-H (torch's formula)
        L = LU.tril(-1) + _C.eye(n, dtype=LU.dtype, device=LU.device)
        U = LU.triu()
        phi = (_mH(L) @ gLU.tril(-1)).tril(-1) + (gLU.triu() @ _mH(U)).triu()
        X = solve_triangular(_mH(L), phi, upper=True, unitriangular=True)
        X = solve_triangular(_mH(U), X, upper=False, left=False)
        inv_perm = np.argsort(_perm_numpy(_host(piv), n), axis=-1)
        return _gather_rows(X, inv_perm), None


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """(LU, pivots, info): A = P L U packed in LU (L unit lower, U upper),
    LAPACK's 1-based int32 pivots, info > 0 where U has a zero diagonal."""
    _check("torch.lu_factor", A, square=False)
    if not pivot and A.device.type == "cpu":
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    LU, piv, info = _LUFunction.apply(A, bool(pivot))
    if check_errors:
        _raise_lu(info, "torch.linalg.lu_factor_ex")
    return _LUFactorEx(LU, piv, info)


def _raise_lu(info, fname):
    inf = _host(info)
    if inf.any():
        j, prefix = _batch_msg(inf, inf.ndim > 0)
        raise LinAlgError("%s: %sU[%d,%d] is zero and using it on lu_solve would result in a division by zero. "
                          "If you still want to perform the factorization, consider calling linalg.lu(A, pivot) "
                          "or linalg.lu_factor_ex(A, pivot)" % (fname, prefix, j, j))


def lu_factor(A, *, pivot=True, out=None):
    """(LU, pivots) of partial-pivot LU; LinAlgError where U has a zero diagonal entry."""
    LU, piv, info = lu_factor_ex(A, pivot=pivot)
    _raise_lu(info, "torch.linalg.lu_factor")
    return _LUFactor(LU, piv)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """(P, L, U) from lu_factor's packed output: P [.., m, m], L [.., m, k]
    unit lower, U [.., k, n] upper; the parts not asked for are empty."""
    _tensor_arg("lu_unpack", "LU_data", LU_data)
    _tensor_arg("lu_unpack", "LU_pivots", LU_pivots)
    if LU_data.dim() < 2:
        raise RuntimeError("torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: %s instead"
                           % list(LU_data.shape))
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    empty = _C.empty((0,), dtype=LU_data.dtype, device=LU_data.device)
    L = U = P = empty
    if unpack_data:
        L = LU_data[..., :, :k].tril(-1) + _C.eye(m, k, dtype=LU_data.dtype, device=LU_data.device)
        U = LU_data[..., :k, :].triu()
    if unpack_pivots:
        if tuple(LU_pivots.shape) != tuple(LU_data.shape[:-2]) + (k,) or LU_pivots.dtype != _C.int32:
            raise RuntimeError("torch.lu_unpack: LU_pivots must be an int32 tensor of shape %s, got %s of %s"
                               % (list(LU_data.shape[:-2]) + [k], _dtname(LU_pivots), list(LU_pivots.shape)))
        perm = _perm_numpy(_host(LU_pivots), m)
        # P[perm[i], i] = 1, so that A = P L U
        P = _back(np.swapaxes(np.eye(m)[perm], -1, -2), LU_data)
    return _LUUnpack(P, L, U)


def lu(A, *, pivot=True, out=None):
    """(P, L, U) with A = P L U: lu_factor then lu_unpack (differentiable for square A)."""
    LU, piv, _ = lu_factor_ex(A, pivot=pivot)
    return _LU(*lu_unpack(LU, piv))


def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """X with A X = B (A^H X = B when adjoint; X A = B when not left) from A's lu_factor."""
    _check("torch.linalg.lu_solve", LU)
    _tensor_arg("linalg.lu_solve", "B", B)
    if B.dim() < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 dimensions.")
    if B.dtype != LU.dtype:
        raise RuntimeError("linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type %s "
                           "and B of type %s instead" % (_dtname(LU), _dtname(B)))
    if not left:
        r = _mH(lu_solve(LU, pivots, _mH(B), left=True, adjoint=not adjoint))
        return r if out is None else out.copy_(r)
    n = LU.shape[-1]
    if B.shape[-2] != n:
        raise RuntimeError("linalg.lu_solve: Incompatible shapes of A and B for the equation %s = B (%dx%d and %dx%d)"
                           % ("A^H X" if adjoint else "AX", n, n, B.shape[-2], B.shape[-1]))
    if tuple(pivots.shape) != tuple(LU.shape[:-1]):
        raise RuntimeError("linalg.lu_solve: pivots must have shape %s, got %s"
                           % (list(LU.shape[:-1]), list(pivots.shape)))
    perm = _perm_numpy(_host(pivots), n)
    L, U = LU.tril(-1), LU.triu()
    if not adjoint:   # X = U^-1 L^-1 P^T B
        Y = solve_triangular(L, _gather_rows(B, perm), upper=False, unitriangular=True)
        r = solve_triangular(U, Y, upper=True)
    else:             # X = P L^-H U^-H B
        Y = solve_triangular(_mH(U), B, upper=False)
        Y = solve_triangular(_mH(L), Y, upper=True, unitriangular=True)
        r = _gather_rows(Y, np.argsort(perm, axis=-1))
    return r if out is None else out.copy_(r)


# ---- triangular solve --------------------------------------------------------------------

def _trsm_numpy(a, b, upper, unit):
    """X with A X = B for triangular A [..., n, n] (only its triangle read), B [..., n, k] of A's batch."""
    n = a.shape[-1]
    x = np.zeros(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:], dtype=np.result_type(a, b))
    order = range(n - 1, -1, -1) if upper else range(n)
    with np.errstate(all="ignore"):   # a zero diagonal gives inf/nan, as LAPACK's trtrs
        for i in order:
            rest = slice(i + 1, n) if upper else slice(0, i)
            r = b[..., i, :] - (a[..., i, None, rest] @ x[..., rest, :])[..., 0, :]
            x[..., i, :] = r if unit else r / a[..., i, i, None]
    return x


class _SolveTriangular(Function):
    @staticmethod
    def forward(ctx, A, B, upper, unit):
        X = _back(_trsm_numpy(_host(A), _host(B), upper, unit), B)
        ctx.save_for_backward(A, X)
        ctx.upper, ctx.unit = upper, unit
        return X

    @staticmethod
    def backward(ctx, g):
        A, X = ctx.saved_tensors
        gB = solve_triangular(_mH(A), g, upper=not ctx.upper, unitriangular=ctx.unit)
        gA = -(gB @ _mH(X))
        # only A's triangle (without its diagonal when unitriangular) is an input
        off = 1 if ctx.unit else 0
        gA = gA.triu(off) if ctx.upper else gA.tril(-off)
        return gA, gB, None, None


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """X with A X = B (X A = B when not left) for triangular A: only its
    upper (or lower) triangle is read, and its diagonal taken as ones when
    unitriangular. A zero diagonal gives inf/nan, not an error, as torch."""
    _check("linalg.solve_triangular", A)
    if not isinstance(upper, (bool, np.bool_)):
        raise TypeError("linalg.solve_triangular(): argument 'upper' must be bool, not %s" % type(upper).__name__)
    _tensor_arg("linalg.solve_triangular", "B", B)
    if B.dim() < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 dimensions.")
    if not (B.is_floating_point() or B.is_complex()):
        raise RuntimeError("linalg.solve_triangular: Expected a floating point or complex tensor as input. Got %s"
                           % _dtname(B))
    if B.dtype != A.dtype:
        B = B.to(A.dtype)
    if not left:   # X A = B <=> A^T X^T = B^T
        r = solve_triangular(A.mT, B.mT, upper=not upper, unitriangular=unitriangular).mT
        return r if out is None else out.copy_(r)
    n = A.shape[-1]
    if B.shape[-2] != n:
        raise RuntimeError("linalg.solve_triangular: Incompatible shapes of A and B for the equation AX = B "
                           "(%dx%d and %dx%d)" % (n, n, B.shape[-2], B.shape[-1]))
    batch = tuple(np.broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-2])))
    # broadcast first, so that autograd sums the gradients back to the inputs' shapes
    r = _SolveTriangular.apply(A.expand(batch + (n, n)), B.expand(batch + tuple(B.shape[-2:])),
                               bool(upper), bool(unitriangular))
    return r if out is None else out.copy_(r)


# ---- the *_ex forms and the Cholesky solves ----------------------------------------------------

def inv_ex(A, *, check_errors=False, out=None):
    """(inverse, info) through the LU: info > 0 (and inf/nan entries) for a singular matrix."""
    _check("linalg.inv_ex", A)
    LU, piv, info = lu_factor_ex(A)
    inf = _host(info)
    if check_errors and inf.any():
        j, prefix = _batch_msg(inf, inf.ndim > 0)
        raise LinAlgError("linalg.inv_ex: %sThe diagonal element %d is zero, the inversion could not be completed "
                          "because the input matrix is singular." % (prefix, j))
    n = A.shape[-1]
    eye = _C.eye(n, dtype=A.dtype, device=A.device).expand(tuple(A.shape))
    return _InvEx(lu_solve(LU, piv, eye), info)


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """(result, info): linalg.solve through the LU, info > 0 for a singular A instead of an error."""
    _check("linalg.solve_ex", A)
    _tensor_arg("linalg.solve_ex", "B", B)
    if B.dtype != A.dtype:
        raise RuntimeError("linalg.solve: Expected A and B to have the same dtype, but found A of type %s and B of "
                           "type %s instead" % (_dtname(A), _dtname(B)))
    LU, piv, info = lu_factor_ex(A)
    if check_errors and _host(info).any():
        raise LinAlgError("torch.linalg.solve_ex: The solver failed because the input matrix is singular.")
    n = A.shape[-1]
    vector = left and (B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1])))
    Bm = B.unsqueeze(-1) if vector else B
    if Bm.shape[-2 if left else -1] != n:
        raise RuntimeError("linalg.solve: Incompatible shapes of A and B for the equation %s (%s and %s)"
                           % ("AX = B" if left else "XA = B", "x".join(map(str, A.shape[-2:])),
                              "x".join(map(str, B.shape))))
    r = lu_solve(LU, piv, Bm, left=left)
    return _SolveEx(r.squeeze(-1) if vector else r, info)


def _cholesky_info(a):
    """The order of the first leading minor that is not positive-definite (0: none), per matrix."""
    batch, n = a.shape[:-2], a.shape[-1]
    a = a.reshape((int(np.prod(batch, dtype=np.int64)), n, n))
    L = np.zeros_like(a)
    info = np.zeros(a.shape[0], np.int32)
    with np.errstate(all="ignore"):
        for j in range(n):
            d = (a[:, j, j] - np.sum(L[:, j, :j] * np.conj(L[:, j, :j]), axis=1)).real
            bad = ~(d > 0)
            info[(info == 0) & bad] = j + 1
            L[:, j, j] = np.sqrt(np.where(bad, 1, d))
            dot = (L[:, j + 1:, :j] @ np.conj(L[:, j, :j, None]))[..., 0]
            L[:, j + 1:, j] = (a[:, j + 1:, j] - dot) / L[:, j, j, None]
    return info.reshape(batch)


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """(L, info): info > 0 is the order of the first leading minor that is not
    positive-definite; L is then meaningful only for the matrices with info 0."""
    _check("linalg.cholesky_ex", A)
    a = _host(A)
    try:
        np.linalg.cholesky(a)
        info = np.zeros(a.shape[:-2], np.int32)
    except np.linalg.LinAlgError:
        info = _cholesky_info(a)
    if check_errors and info.any():
        j, prefix = _batch_msg(info, info.ndim > 0)
        raise LinAlgError("linalg.cholesky_ex: %sThe factorization could not be completed because the input is not "
                          "positive-definite (the leading minor of order %d is not positive-definite)." % (prefix, j))
    if info.any():
        # factor the good matrices (the others replaced by the identity) and mark the rest nan
        eye = _C.eye(A.shape[-1], dtype=A.dtype, device=A.device)
        bad = _back(info != 0, A, _C.bool).unsqueeze(-1).unsqueeze(-1)
        L = cholesky(_C.where(bad, eye, A), upper=upper)
        L = _C.where(bad, _C.full((), float("nan"), dtype=A.dtype, device=A.device), L)
    else:
        L = cholesky(A, upper=upper)
    return _CholeskyEx(L, _back(info, A, _C.int32))


def _cholesky_args(fname, B, L):
    _tensor_arg(fname, "input", B)
    _tensor_arg(fname, "input2", L)
    if B.dim() < 2:
        raise RuntimeError("b should have at least 2 dimensions, but has %d dimensions instead" % B.dim())
    if L.dim() < 2:
        raise RuntimeError("A should have at least 2 dimensions, but has %d dimensions instead" % L.dim())
    if L.shape[-1] != L.shape[-2]:
        raise RuntimeError("A must be batches of square matrices, but they are %d by %d matrices"
                           % (L.shape[-2], L.shape[-1]))
    if B.dtype != L.dtype:
        raise RuntimeError("Expected b and A to have the same dtype, but found b of type %s and A of type %s "
                           "instead." % (_dtname(B), _dtname(L)))
    _check(fname, L)


def cholesky_solve(B, L, upper=False, *, out=None):
    """X with A X = B, A = L L^H (or U^H U when upper) given the Cholesky factor."""
    _cholesky_args("cholesky_solve", B, L)
    if upper:
        r = solve_triangular(L, solve_triangular(_mH(L), B, upper=False), upper=True)
    else:
        r = solve_triangular(_mH(L), solve_triangular(L, B, upper=False), upper=True)
    return r if out is None else out.copy_(r)


def cholesky_inverse(L, upper=False, *, out=None):
    """A^-1 for A = L L^H (or U^H U) given the Cholesky factor: L^-H L^-1, exactly Hermitian."""
    _tensor_arg("cholesky_inverse", "input", L)
    if L.dim() < 2:
        raise RuntimeError("cholesky_inverse: The input tensor A must have at least 2 dimensions.")
    _check("cholesky_inverse", L)
    eye = _C.eye(L.shape[-1], dtype=L.dtype, device=L.device)
    if upper:   # A^-1 = U^-1 U^-H
        Ui = solve_triangular(L, eye, upper=True)
        r = Ui @ _mH(Ui)
    else:
        Li = solve_triangular(L, eye, upper=False)
        r = _mH(Li) @ Li
    return r if out is None else out.copy_(r)
