"""torch.return_types: the named-tuple classes that ops with several results
return (max(dim), sort, topk, slogdet, linalg.eigh ...).

The C ops' structseq types (csrc/ops/ops_reduce.c, sort.c) already call this
module home; the Python ops' namedtuples are defined beside their ops. Here
each gets torch's name and this module as its home, so that the results
pickle (a DataLoader worker may return one) and isinstance checks against
torch.return_types.<name> work.
"""
from . import _C
from . import _linalg_lu, _linalg_more, _linalg_polar, _linalg_torch, _math_more, _math_reduce, _misc_api
from . import linalg

_TYPES = {
    "aminmax": _math_reduce._MinMax, "frexp": _math_more._frexp, "geqrf": _linalg_more._Geqrf,
    "histogram": _math_reduce._Histogram, "histogramdd": _misc_api._HistogramDD,
    "linalg_cholesky_ex": _linalg_lu._CholeskyEx, "linalg_eig": _linalg_more._Eig,
    "linalg_eigh": linalg._EighResult, "linalg_inv_ex": _linalg_lu._InvEx, "linalg_lstsq": _linalg_more._Lstsq,
    "linalg_lu": _linalg_lu._LU, "linalg_lu_factor": _linalg_lu._LUFactor,
    "linalg_lu_factor_ex": _linalg_lu._LUFactorEx, "linalg_qr": linalg._QRResult,
    "linalg_slogdet": linalg._SlogdetResult, "linalg_solve_ex": _linalg_lu._SolveEx,
    "linalg_svd": linalg._SvdResult, "linalg_polar": _linalg_polar._Polar, "lu_unpack": _linalg_lu._LUUnpack,
    "svd": _linalg_torch._SVD,
    "triangular_solve": _linalg_torch._TriangularSolve,
}
for _name, _cls in _TYPES.items():
    _cls.__name__ = _cls.__qualname__ = _name
    _cls.__module__ = __name__
    globals()[_name] = _cls
# torch.slogdet and torch.linalg.slogdet return the same pair here
slogdet = linalg._SlogdetResult

for _name in ("cummax", "cummin", "kthvalue", "max", "median", "min", "mode", "nanmedian", "sort", "topk"):
    globals()[_name] = getattr(_C, "_return_types_" + _name)

__all__ = sorted(list(_TYPES) + ["slogdet", "cummax", "cummin", "kthvalue", "max", "median", "min", "mode",
                                 "nanmedian", "sort", "topk"])
del _name, _cls
