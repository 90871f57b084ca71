"""Reductions composed in Python from the C ones: nansum, nanmean, aminmax,
std_mean, var_mean, quantile, nanquantile, cov, corrcoef.

The C reductions (sum, amax, var, sort) do the passes over the data; these
add the masking, pairing or interpolation torch's definitions ask for.
Tensor methods of the same names reach these through csrc/ops/py_methods.c.
"""
import collections

from . import _C

_MinMax = collections.namedtuple("aminmax", ["min", "max"])


def _t(fname, x):
    if not isinstance(x, _C.Tensor):
        raise TypeError("%s(): argument 'input' must be Tensor, not %s" % (fname, type(x).__name__))
    return x


def _dims(dim):
    return () if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)


def _reduce_kw(dim, keepdim):
    return {} if dim is None or _dims(dim) == () else {"dim": dim, "keepdim": keepdim}


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """sum with nan counted as 0."""
    x = _t("nansum", input)
    if x.is_floating_point() or x.is_complex():
        x = x.nan_to_num(0.0, posinf=float("inf"), neginf=float("-inf")) if not x.is_complex() \
            else _C.where(x.isnan(), _C.zeros((), dtype=x.dtype, device=x.device), x)
    return x.sum(**_reduce_kw(dim, keepdim), dtype=dtype) if dtype is not None \
        else x.sum(**_reduce_kw(dim, keepdim))


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """mean over the entries that are not nan (nan where every one is)."""
    x = _t("nanmean", input)
    if not (x.is_floating_point() or x.is_complex()):
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype but got "
                           + str(x.dtype).split(".")[-1].capitalize())
    if dtype is not None:
        x = x.to(dtype)
    keep = ~x.isnan()
    return nansum(x, dim, keepdim) / keep.sum(**_reduce_kw(dim, keepdim))


def aminmax(input, *, dim=None, keepdim=False):
    """(min, max) in one call, as a named tuple."""
    x = _t("aminmax", input)
    if x.numel() == 0:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                           "operation has no identity.")
    if dim is None:
        lo, hi = x.amin(), x.amax()
        if keepdim:
            shape = (1,) * x.dim()
            lo, hi = lo.reshape(shape), hi.reshape(shape)
        return _MinMax(lo, hi)
    return _MinMax(x.amin(dim, keepdim), x.amax(dim, keepdim))


def _stat_mean(fname, stat, input, dim, unbiased, keepdim, correction):
    x = _t(fname, input)
    if isinstance(dim, bool):  # the legacy form f(input, unbiased)
        dim, unbiased = None, dim
    kw = {"keepdim": keepdim}
    if dim is not None:
        kw["dim"] = dim
    if correction is not None:
        kw["correction"] = correction
    elif unbiased is not None:
        kw["correction"] = 1 if unbiased else 0
    r = getattr(x, stat)(**kw)
    m = x.mean(dim, keepdim) if dim is not None else x.mean()
    if dim is None and keepdim:
        m = m.reshape((1,) * x.dim())
    return r, m


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(std, mean) over dim (all dims when None), one pass each."""
    return _stat_mean("std_mean", "std", input, dim, unbiased, keepdim, correction)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(var, mean) over dim."""
    return _stat_mean("var_mean", "var", input, dim, unbiased, keepdim, correction)


# ---- quantiles --------------------------------------------------------------------------

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(fname, input, q, dim, keepdim, interpolation, ignore_nan):
    x = _t(fname, input)
    if interpolation not in _INTERPOLATIONS:
        raise ValueError("%s() interpolation must be one of linear, lower, higher, midpoint or "
                         "nearest. Got %s" % (fname, interpolation))
    if not x.is_floating_point():
        raise RuntimeError("%s() input tensor must be either float or double dtype" % fname)
    scalar_q = not isinstance(q, _C.Tensor) or q.dim() == 0
    qt = q.to(x.device, x.dtype) if isinstance(q, _C.Tensor) else _C.tensor(q, dtype=x.dtype, device=x.device)
    qv = qt.reshape(-1)
    if qv.numel() and bool(((qv < 0) | (qv > 1)).any()):
        raise RuntimeError("%s() q values must be in the range [0, 1]" % fname)
    if dim is None:
        src, d = x.reshape(-1), 0
    else:
        d = dim % max(x.dim(), 1)
        src = x
    s = src.movedim(d, -1).sort(-1)[0] if src.dim() else src.reshape(1)
    n = s.size(-1)
    nan = s.isnan()
    if ignore_nan:
        count = (~nan).sum(-1, keepdim=True).to(x.dtype)
    else:
        count = _C.full(s.shape[:-1] + (1,), float(n), dtype=x.dtype, device=x.device)
    pos = qv.reshape((1,) * (s.dim() - 1) + (-1,)) * (count - 1).clamp(min=0)
    lo, hi = pos.floor(), pos.ceil()
    if interpolation == "lower":
        pos = lo
    elif interpolation == "higher":
        pos = hi
    elif interpolation == "nearest":
        pos = pos.round()
    lo_i = lo.long().clamp(0, max(n - 1, 0))
    hi_i = hi.long().clamp(0, max(n - 1, 0))
    if interpolation in ("lower", "higher", "nearest"):
        r = s.gather(-1, pos.long().clamp(0, max(n - 1, 0)).expand(s.shape[:-1] + (qv.numel(),)))
    else:
        shape = s.shape[:-1] + (qv.numel(),)
        a = s.gather(-1, lo_i.expand(shape))
        b = s.gather(-1, hi_i.expand(shape))
        w = 0.5 if interpolation == "midpoint" else (pos - lo).expand(shape)
        r = a + (b - a) * w
    # a nan makes the whole slice nan (quantile), or an all-nan slice does (nanquantile)
    bad = (count == 0) if ignore_nan else nan.any(-1, keepdim=True)
    r = _C.where(bad, _C.full((), float("nan"), dtype=x.dtype, device=x.device), r)
    r = r.movedim(-1, 0)  # q first, as torch
    if dim is None:
        r = r.reshape((qv.numel(),) + ((1,) * x.dim() if keepdim else ()))
    elif keepdim:
        r = r.unsqueeze(d + 1)
    return r[0] if scalar_q else r


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """The q-th quantiles (q a number or a 1-D tensor in [0, 1]) of input,
    flattened or along dim; a slice with a nan gives nan."""
    r = _quantile("quantile", input, q, dim, keepdim, interpolation, False)
    return r if out is None else out.copy_(r)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """quantile over the entries that are not nan."""
    r = _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)
    return r if out is None else out.copy_(r)


# ---- covariance -------------------------------------------------------------------------

def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in input's rows (observations
    in columns), torch's definition with frequency and analytic weights."""
    x = _t("cov", input)
    if x.dim() > 2:
        raise ValueError("cov(): expected input to have two or fewer dimensions but got an input "
                         "with %d dimensions" % x.dim())
    x = x.reshape(1, -1) if x.dim() < 2 else x
    if not (x.is_floating_point() or x.is_complex()):
        x = x.to(_C.get_default_dtype())
    n = x.size(1)
    w = None
    if fweights is not None:
        w = fweights.to(x.dtype)
    if aweights is not None:
        w = aweights.to(x.dtype) if w is None else w * aweights.to(x.dtype)
    if w is None:
        wsum = float(n)
        avg = x.mean(1, keepdim=True)
        norm = wsum - correction
    else:
        wsum = w.sum()
        avg = (x * w).sum(1, keepdim=True) / wsum
        if aweights is None or correction == 0:
            norm = wsum - correction
        else:
            norm = wsum - correction * (w * aweights.to(x.dtype)).sum() / wsum
    xm = x - avg
    xw = xm if w is None else xm * w
    c = xw.matmul(xm.t().conj() if xm.is_complex() else xm.t())
    if not isinstance(norm, _C.Tensor):
        norm = max(norm, 0)
    else:
        norm = norm.clamp(min=0)
    c = c / norm
    return c.reshape(()) if input.dim() < 2 or c.numel() == 1 and input.dim() < 2 else c


def corrcoef(input):
    """Pearson correlation coefficients of input's rows, clipped to [-1, 1]."""
    c = cov(input)
    if c.dim() == 0:
        return c / c
    d = c.diagonal()
    sd = d.sqrt()
    c = c / sd.unsqueeze(1) / sd.unsqueeze(0)
    return c.clamp(-1, 1) if not c.is_complex() else c


# ---- histograms ---------------------------------------------------------------------------

_Histogram = collections.namedtuple("histogram", ["hist", "bin_edges"])


def histogram(input, bins, *, range=None, weight=None, density=False, out=None):
    """(hist, bin_edges) of input's values: `bins` equal bins over `range`
    (the data's min and max by default) or the given increasing edges; the
    last bin includes its right edge, as NumPy's and torch's."""
    x = _t("histogram", input)
    if not x.is_floating_point():
        raise RuntimeError("torch.histogram: input tensor and bins tensors should have the same dtype, but got "
                           "input %s" % str(x.dtype).split(".")[-1])
    flat = x.reshape(-1)
    if isinstance(bins, int):
        if bins <= 0:
            raise RuntimeError("torch.histogram(): bins must be > 0, but got %d" % bins)
        if range is not None:
            lo, hi = float(range[0]), float(range[1])
        elif flat.numel():
            lo, hi = float(flat.min()), float(flat.max())
        else:
            lo, hi = 0.0, 0.0
        if lo > hi:
            raise RuntimeError("torch.histogram(): min should not exceed max, but got min %s max %s" % (lo, hi))
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5  # NumPy's widening of an empty range (torch: the same)
        edges = _C.linspace(lo, hi, bins + 1, dtype=x.dtype, device=x.device)
    else:
        if bins.dtype != x.dtype:
            raise RuntimeError("torch.histogram: input tensor and bins tensors should have the same dtype, but got "
                               "input with dtype %s and bins with dtype %s" % (str(x.dtype).split(".")[-1],
                                                                               str(bins.dtype).split(".")[-1]))
        if bins.dim() != 1 or bins.numel() < 2:
            raise RuntimeError("torch.histogram(): bins tensor should have one dimension and at least 2 elements")
        edges = bins
    nb = edges.numel() - 1
    inside = (flat >= edges[0]) & (flat <= edges[-1])
    b = (_C.searchsorted(edges, flat, right=True) - 1).clamp(0, nb - 1)
    w = inside.to(x.dtype) if weight is None else weight.reshape(-1).to(x.dtype) * inside.to(x.dtype)
    hist = _C.zeros(nb, dtype=x.dtype, device=x.device).index_add(0, b, w)
    if density:
        hist = hist / (hist.sum() * edges.diff())
    return _Histogram(hist, edges)
