"""NumPy kernels for CPU tensors.

The C front door (csrc/ops/ops.c) has already decided everything torch's rules
decide: the result dtype, the broadcast shape, the output tensor. It calls
these functions with NumPy views: ``out`` (a zero-copy view of the result, to
be written) and the inputs, already cast to the compute dtype (numbers arrive
as 0-dim arrays of that dtype). Each function only computes.
"""
import math

import numpy as np


def _put(out, r):
    np.copyto(out, r, casting="unsafe")


def _check_int_divisor(b):
    # PyTorch raises for an integer division by zero on the CPU (on the GPU
    # the hardware's answer stands, as in PyTorch).
    if b.dtype.kind in "iu" and not np.all(b):
        raise RuntimeError("ZeroDivisionError")


def _int_div_trunc(a, b):
    q = np.abs(a) // np.where(b == 0, 1, np.abs(b))
    return np.where((a < 0) != (b < 0), -q, q)


def _lerp(a, b, w):
    d = b - a
    return np.where(np.abs(w) < 0.5, a + w * d, b - d * (1 - w))


def _gelu(x):
    erf = np.vectorize(math.erf, otypes=[np.float64])
    return 0.5 * x * (1.0 + erf(x.astype(np.float64) / math.sqrt(2.0)))


def _gelu_tanh(x):
    k = math.sqrt(2.0 / math.pi)
    return 0.5 * x * (1 + np.tanh(k * (x + 0.044715 * x * x * x)))


_erf = np.vectorize(math.erf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def _erfinv(y):
    """The inverse of erf in float64: Giles' single-precision approximation
    (2010) as the start, then two Newton steps on erf(x) = y, which bring it
    to float64 accuracy; +-1 give +-inf and |y| > 1 gives nan, as torch."""
    y = np.asarray(y, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = -np.log((1.0 - y) * (1.0 + y))
        small = w < 5.0
        ws = np.where(small, w - 2.5, np.sqrt(np.where(small, 5.0, w)) - 3.0)
        cs = [2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
              -0.00125372503, -0.00417768164, 0.246640727, 1.50140941]
        cl = [-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
              -0.0076224613, 0.00943887047, 1.00167406, 2.83297682]
        ps, pl = np.zeros_like(y), np.zeros_like(y)
        for a, b in zip(cs, cl):
            ps, pl = ps * ws + a, pl * ws + b
        x = np.where(small, ps, pl) * y
        for _ in range(2):
            x = x - (_erf(x) - y) / (2.0 / math.sqrt(math.pi) * np.exp(-x * x))
    x = np.where(np.abs(y) == 1.0, np.copysign(np.inf, y), x)
    return np.where(np.abs(y) > 1.0, np.nan, x)


def _lgamma(x):
    """log|Gamma(x)|, +inf at the poles (0 and the negative integers), as torch."""
    x = np.asarray(x, dtype=np.float64)
    pole = (x <= 0) & (x == np.floor(x))
    nan = np.isnan(x)
    r = np.vectorize(math.lgamma, otypes=[np.float64])(np.where(pole | nan, 1.0, x))
    return np.where(nan, np.nan, np.where(pole, np.inf, r))


def _shift_up(x, step):
    """(x moved above 10 by steps of 1, the sum of step(x) over the steps)."""
    acc = np.zeros_like(x)
    for _ in range(10):
        below = x < 10
        acc = acc + np.where(below, step(np.where(below, x, 1.0)), 0.0)
        x = np.where(below, x + 1, x)
    return x, acc


def _digamma(x):
    """psi(x) as the kernels compute it (gamma_fns.cuh): reflection below 0,
    recurrence up to 10, then the asymptotic series."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        neg = x < 0
        shift = np.where(neg, -np.pi / np.tan(np.pi * np.where(neg, x, 0.5)), 0.0)
        y, acc = _shift_up(np.where(neg, 1 - x, x), lambda v: -1 / v)
        r = 1 / (y * y)
        series = r * (1 / 12 - r * (1 / 120 - r * (1 / 252 - r * (1 / 240 - r * (1 / 132 - r * 691 / 32760)))))
        out = shift + acc + np.log(y) - 0.5 / y - series
    out = np.where(x == 0, np.where(np.signbit(x), np.inf, -np.inf), out)
    return np.where(neg & (x == np.floor(x)), np.nan, out)


def _trigamma(x):
    """psi'(x): reflection at and below 0, recurrence, asymptotic series."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        neg = x <= 0
        s = np.sin(np.pi * np.where(neg, x, 0.5))
        shift = np.where(neg, np.pi ** 2 / (s * s), 0.0)
        y, acc = _shift_up(np.where(neg, 1 - x, x), lambda v: 1 / (v * v))
        r = 1 / (y * y)
        series = 1 / y + r / 2 + r / y * (1 / 6 - r * (1 / 30 - r * (1 / 42 - r * (1 / 30 - r * 5 / 66))))
        out = shift + np.where(neg, -1.0, 1.0) * (acc + series)
    return np.where(neg & (x == np.floor(x)), np.inf, out)


def _sign(x):
    return ((x > 0).astype(np.int8) - (x < 0).astype(np.int8)).astype(x.dtype)


_BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
    "true_divide": np.true_divide,
    "floor_divide": np.floor_divide, "div_floor": np.floor_divide,
    "remainder": np.remainder, "maximum": np.maximum, "minimum": np.minimum,
    "atan2": np.arctan2, "eq": np.equal, "ne": np.not_equal, "lt": np.less,
    "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
    "logical_and": np.logical_and, "logical_or": np.logical_or,
    "logical_xor": np.logical_xor, "bitwise_and": np.bitwise_and,
    "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor,
    "bitwise_left_shift": np.left_shift, "bitwise_right_shift": np.right_shift,
}

_UNARY = {
    "neg": np.negative, "abs": np.abs, "sign": _sign, "exp": np.exp, "exp2": np.exp2,
    "expm1": np.expm1, "log": np.log, "log2": np.log2, "log10": np.log10,
    "log1p": np.log1p, "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x),
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "relu": lambda x: np.where(np.isnan(x) | (x > 0), x, 0) if x.dtype.kind == "f"
    else np.maximum(x, 0),
    "gelu": _gelu, "gelu_tanh": _gelu_tanh,
    "floor": np.floor, "ceil": np.ceil, "round": np.round, "trunc": np.trunc,
    "frac": lambda x: x - np.trunc(x), "reciprocal": lambda x: 1 / x,
    "square": lambda x: x * x, "bitwise_not": np.invert, "logical_not": np.logical_not,
    "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite,
    "erf": _erf, "erfc": _erfc, "erfinv": _erfinv,
    "lgamma": _lgamma, "digamma": _digamma, "_trigamma": _trigamma,
}


def _make_binary(f):
    checks_divisor = f in (np.floor_divide, np.remainder)

    def run(out, a, b):
        if checks_divisor:
            _check_int_divisor(b)
        with np.errstate(all="ignore"):
            _put(out, f(a, b))
    return run


def _make_unary(f):
    def run(out, x):
        with np.errstate(all="ignore"):
            if x.dtype.kind in "iub" and f in (np.floor, np.ceil, np.round, np.trunc):
                _put(out, x)
            else:
                _put(out, f(x))
    return run


for _name, _f in _BINARY.items():
    globals()[_name] = _make_binary(_f)
for _name, _f in _UNARY.items():
    globals()[_name] = _make_unary(_f)


def add_alpha(out, a, b, alpha):
    _put(out, a + np.asarray(alpha, dtype=a.dtype) * b)


def sub_alpha(out, a, b, alpha):
    _put(out, a + np.asarray(alpha, dtype=a.dtype) * b)


def div_trunc(out, a, b):
    _check_int_divisor(b)
    with np.errstate(all="ignore"):
        _put(out, np.trunc(a / b) if a.dtype.kind in "fc" else _int_div_trunc(a, b))


def pow(out, a, b):  # noqa: A001 - the op's name
    with np.errstate(all="ignore"):
        _put(out, np.power(a, b))


def threshold_backward(out, g, r):
    _put(out, np.where(r <= 0, np.zeros((), g.dtype), g))


def gelu_backward(out, g, x):
    # g * (Phi(x) + x phi(x)), in float64 and rounded once
    x64 = x.astype(np.float64)
    erf = np.vectorize(math.erf, otypes=[np.float64])
    cdf = 0.5 * (1.0 + erf(x64 / math.sqrt(2.0)))
    pdf = np.exp(-0.5 * x64 * x64) / math.sqrt(2.0 * math.pi)
    with np.errstate(all="ignore"):
        _put(out, g * (cdf + x64 * pdf))


def gelu_tanh_backward(out, g, x):
    k, c = math.sqrt(2.0 / math.pi), 0.044715
    x64 = x.astype(np.float64)
    with np.errstate(all="ignore"):
        t = np.tanh(k * (x64 + c * x64 ** 3))
        d = 0.5 * (1 + t) + 0.5 * x64 * (1 - t * t) * k * (1 + 3 * c * x64 * x64)
        _put(out, g * d)


def where(out, cond, x, y):
    _put(out, np.where(cond, x, y))


def clamp(out, x, lo, hi):
    with np.errstate(all="ignore"):
        _put(out, np.minimum(np.maximum(x, lo), hi))


def lerp(out, a, b, w):
    with np.errstate(all="ignore"):
        _put(out, _lerp(a, b, w))


def nan_to_num(out, x, nan, posinf, neginf):
    if x.dtype.kind in "fc":
        _put(out, np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf))
    else:
        _put(out, x)


# ---- reductions and scans ---------------------------------------------------

def _acc(x):
    if x.dtype.kind in "biu":
        return np.int64
    if x.dtype == np.float16:
        return np.float32
    return None


def _argext(x, axes, is_max):
    # one dim (argmax/argmin and max/min with dim): first occurrence, NaN wins
    ax = axes[0]
    if x.dtype.kind == "f":
        nan = np.isnan(x)
        if nan.any():
            return np.where(nan.any(axis=ax, keepdims=True),
                            np.argmax(nan, axis=ax, keepdims=True),
                            (np.argmax if is_max else np.argmin)(x, axis=ax, keepdims=True))
    return (np.argmax if is_max else np.argmin)(x, axis=ax, keepdims=True)


def _lse(x, axes):
    m = np.max(x, axis=axes, keepdims=True)
    m_safe = np.where(np.isfinite(m), m, 0)
    with np.errstate(all="ignore"):
        s = np.sum(np.exp(x - m_safe), axis=axes, keepdims=True)
        return np.log(s) + m_safe


def _norm(x, axes, p):
    a = np.abs(x).astype(np.float64)
    if p == 2:
        return np.sqrt(np.sum(a * a, axis=axes, keepdims=True))
    if p == 1:
        return np.sum(a, axis=axes, keepdims=True)
    if p == 0:
        return np.sum(a != 0, axis=axes, keepdims=True)
    return np.sum(a ** p, axis=axes, keepdims=True) ** (1.0 / p)


def reduce(name, x, axes, out, idx, param):
    """Reduces x over axes (keepdims) into out (and idx for max/min with a dim)."""
    kw = dict(axis=axes, keepdims=True)
    with np.errstate(all="ignore"):
        if name in ("sum", "mean", "prod"):
            f = {"sum": np.sum, "mean": np.mean, "prod": np.prod}[name]
            r = f(x, dtype=_acc(x), **kw)
        elif name in ("max", "min", "amax", "amin"):
            is_max = name in ("max", "amax")
            if idx is not None:
                i = _argext(x, axes, is_max)
                _put(idx, i)
                if out is not None:
                    _put(out, np.take_along_axis(x, i, axis=axes[0]))
                return None
            r = (np.max if is_max else np.min)(x, **kw)
        elif name in ("argmax", "argmin"):
            _put(idx, _argext(x, axes, name == "argmax"))
            return None
        elif name in ("all", "any"):
            r = (np.all if name == "all" else np.any)(x != 0, **kw)
        elif name in ("var", "std"):
            n = 1
            for a in axes:
                n *= x.shape[a]
            xd = x.astype(np.float64)
            m2 = np.sum((xd - np.mean(xd, **kw)) ** 2, **kw)
            r = m2 / max(n - param, 0)
            if name == "std":
                r = np.sqrt(r)
        elif name == "norm":
            r = _norm(x, axes, param)
        elif name == "logsumexp":
            r = _lse(x, axes)
        else:
            raise NotImplementedError(name)
        _put(out, r)
    return None


def scan(name, x, axis, out, lowp=0):
    f = np.cumsum if name == "cumsum" else np.cumprod
    # torch's CPU scans carry the running value in acc_type<T, false> and round
    # each partial result once: float for float16 and bfloat16 (lowp: bfloat16
    # comes as a float32 stand-in), double for float32, complex<double> for
    # complex64 (NumPy would carry it in the output's type).
    acc = {np.dtype(np.float32): np.float64, np.dtype(np.complex64): np.complex128}.get(out.dtype, out.dtype)
    if lowp or out.dtype == np.float16:
        acc = np.float32
    with np.errstate(all="ignore"):
        _put(out, f(x, axis=axis, dtype=acc) if x.ndim else x)


# ---- softmax (softmax.c) ------------------------------------------------------

def softmax(out, x, axis, log):
    """softmax (log 0) or log_softmax (log 1) of x along axis into out;
    float16 computes in float32, as on the GPU."""
    xf = x.astype(np.float32) if x.dtype == np.float16 else x
    if xf.ndim == 0:
        xf = xf.reshape(1)
        axis = 0
    with np.errstate(all="ignore"):
        m = np.max(xf, axis=axis, keepdims=True)
        e = np.exp(xf - m)
        s = np.sum(e, axis=axis, keepdims=True)
        r = (xf - m) - np.log(s) if log else e / s
    _put(out, r.reshape(out.shape))


# ---- sorting, selection and scans (csrc/ops/sort.c, select.c, scan.c) --------------
# The C side hands over "rows": the input with the working dim moved last,
# contiguous; `n` is the row length; `vout`/`iout` the outputs to write (or
# None); the op's own arguments follow. Sorts are stable; NaN sorts last as in
# torch (NumPy's order too), -0.0 equals +0.0.

def _argsort_rows(x, desc):
    if not desc:
        return np.argsort(x, axis=1, kind="stable")
    # Descending and stable: the ascending stable order of the reversed row,
    # reversed, keeps equal values in their first-to-last order.
    n = x.shape[1]
    return n - 1 - np.argsort(x[:, ::-1], axis=1, kind="stable")[:, ::-1]


def sort_rows(x, n, vout, iout, desc):
    x = x.reshape(-1, n)
    i = _argsort_rows(x, desc)
    if iout is not None:
        _put(iout.reshape(-1, n), i)
    if vout is not None:
        _put(vout.reshape(-1, n), np.take_along_axis(x, i, axis=1))


def pick_rows(x, n, vout, iout, op, k):
    """kthvalue (position k), median, nanmedian, mode of each row."""
    x = x.reshape(-1, n)
    i = _argsort_rows(x, False)
    s = np.take_along_axis(x, i, axis=1)
    rows = np.arange(x.shape[0])
    if op == "kth":
        pos = np.full(rows.shape, k)
    elif op in ("median", "nanmedian"):
        cnt = (~np.isnan(s)).sum(axis=1) if s.dtype.kind == "f" else np.full(rows.shape, n)
        if op == "median":  # a NaN is the median: the first one
            pos = np.where(cnt < n, cnt, (n - 1) // 2)
        else:
            pos = np.where(cnt > 0, (cnt - 1) // 2, 0)
    else:  # mode: the longest run (the smallest value among ties), its last index
        pos = np.empty(rows.shape, np.int64)
        for r in rows:
            row = s[r]
            heads = np.flatnonzero(np.concatenate(([True], row[1:] != row[:-1])))
            lens = np.diff(np.append(heads, n))
            b = int(np.argmax(lens))
            pos[r] = heads[b] + lens[b] - 1
    _put(vout.reshape(-1), s[rows, pos])
    _put(iout.reshape(-1), i[rows, pos])


def scan_rows(x, n, vout, iout, name):
    """cummax / cummin (torch's ties: the later index; NaN propagates) and logcumsumexp."""
    x = x.reshape(-1, n)
    with np.errstate(all="ignore"):
        if name == "logcumsumexp":
            _put(vout.reshape(-1, n), np.logaddexp.accumulate(x, axis=1))
            return
        f = np.maximum if name == "cummax" else np.minimum
        v = f.accumulate(x, axis=1)
        # The index is the last position where the element equals the running
        # value: each such element set (or tied) it, and nothing after did.
        hit = x == v
        if x.dtype.kind == "f":
            hit |= np.isnan(x) & np.isnan(v)
        pos = np.where(hit, np.arange(n), -1)
        _put(vout.reshape(-1, n), v)
        _put(iout.reshape(-1, n), np.maximum.accumulate(pos, axis=1))


def _runs(x):
    """Heads of runs of equal neighbours in a 1-D array (NaN never equal)."""
    heads = np.ones(x.shape[0], bool)
    if x.shape[0] > 1:
        heads[1:] = x[1:] != x[:-1]
    return heads


def unique_flat(x, consecutive):
    """(values, inverse, counts) of unique / unique_consecutive over a flat array."""
    n = x.shape[0]
    if consecutive:
        order = np.arange(n)
        s = x
    else:
        order = np.argsort(x, kind="stable")
        s = x[order]
    heads = _runs(s)
    run = np.cumsum(heads) - 1
    inv = np.empty(n, np.int64)
    inv[order] = run
    starts = np.flatnonzero(heads)
    counts = np.diff(np.append(starts, n)).astype(np.int64)
    return s[heads], inv, counts


def unique_dim(x, dim, consecutive):
    """unique / unique_consecutive of the slices along dim, compared whole
    (lexicographically, for the sorted form)."""
    xm = np.moveaxis(x, dim, 0)
    m = xm.shape[0]
    flat = xm.reshape(m, -1)
    if consecutive:
        order = np.arange(m)
    else:
        order = np.lexsort(flat.T[::-1]) if flat.shape[1] else np.arange(m)
    s = flat[order]
    heads = np.ones(m, bool)
    if m > 1:
        heads[1:] = np.any(s[1:] != s[:-1], axis=1) if flat.shape[1] else False
    run = np.cumsum(heads) - 1
    inv = np.empty(m, np.int64)
    inv[order] = run
    counts = np.diff(np.append(np.flatnonzero(heads), m)).astype(np.int64)
    vals = np.moveaxis(xm[order][heads], 0, dim)
    return np.ascontiguousarray(vals), inv, counts


def searchsorted_rows(seq, sorter, vals, n, per_row, right, out):
    """torch's binary search (Bucketization.cuh), vectorised: the first
    position whose element is not < v (>= for right=False; > for right)."""
    seq = seq.reshape(-1, n)
    srt = None if sorter is None else sorter.reshape(-1, n)
    v = vals.reshape(-1)
    rows = np.zeros(v.shape, np.int64) if seq.shape[0] == 1 else np.arange(v.shape[0]) // per_row
    lo = np.zeros(v.shape, np.int64)
    hi = np.full(v.shape, n, np.int64)
    with np.errstate(all="ignore"):
        while True:
            act = lo < hi
            if not act.any():
                break
            mid = lo + ((hi - lo) >> 1)
            at = np.minimum(mid, n - 1)
            col = at if srt is None else srt[rows, at]
            m = seq[rows, col]
            go = ~(m > v) if right else ~(m >= v)
            lo = np.where(act & go, mid + 1, lo)
            hi = np.where(act & ~go, mid, hi)
    _put(out.reshape(-1), lo)


def bincount(x, w, bins):
    return np.bincount(x, weights=w, minlength=bins)


def histc(x, bins, lo, hi, out):
    """torch's bin rule: outside [lo, hi] (and NaN) dropped, x == hi in the last bin."""
    acc = np.float64 if x.dtype == np.float64 else np.float32
    v = x.reshape(-1).astype(acc)
    lo_a, hi_a = acc(lo), acc(hi)
    with np.errstate(all="ignore"):
        keep = (v >= lo_a) & (v <= hi_a)
        b = ((v[keep] - lo_a) * acc(bins) / (hi_a - lo_a)).astype(np.int64)
    b[b == bins] = bins - 1
    _put(out, np.bincount(b, minlength=bins)[:bins])


# ---- indexing (csrc/ops/index_exec.c) ------------------------------------
# The C engine computes element offsets into the indexed tensor's storage
# (``flat``, a 1-D view of all of it) and has checked their range; these
# kernels only reduce values into those offsets, in index order.

_SCATTER_SET, _SCATTER_ADD, _SCATTER_MUL, _SCATTER_MEAN, _SCATTER_AMAX, _SCATTER_AMIN = range(6)


def nonzero(a):
    return np.ascontiguousarray(np.argwhere(a).astype(np.int64, copy=False))


def _identity(dtype, mode):
    if mode in (_SCATTER_ADD, _SCATTER_MEAN):
        return 0
    if mode == _SCATTER_MUL:
        return 1
    if dtype.kind == "b":
        return mode == _SCATTER_AMIN
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.min if mode == _SCATTER_AMAX else info.max
    return -np.inf if mode == _SCATTER_AMAX else np.inf


def index_scatter(flat, off, vals, mode, include_self):
    off = off.reshape(-1)
    vals = vals.reshape(-1)
    u, inv = np.unique(off, return_inverse=True)
    inv = inv.reshape(-1)
    if include_self:
        acc = flat[u].copy()
    else:
        acc = np.full(u.shape, _identity(flat.dtype, mode), dtype=flat.dtype)
    ufunc = {_SCATTER_ADD: np.add, _SCATTER_MEAN: np.add, _SCATTER_MUL: np.multiply,
             _SCATTER_AMAX: np.maximum, _SCATTER_AMIN: np.minimum}[mode]
    with np.errstate(all="ignore"):
        ufunc.at(acc, inv, vals.astype(flat.dtype, copy=False))
        if mode == _SCATTER_MEAN:
            cnt = np.bincount(inv, minlength=u.size) + (1 if include_self else 0)
            if flat.dtype.kind in "iub":
                acc = np.floor_divide(acc, cnt.astype(acc.dtype))
            else:
                acc = acc / cnt.astype(acc.dtype)
    flat[u] = acc


# ---- the fused training layers' CPU twins (csrc/ops/fused_layers.c) --------------
# Arrays arrive contiguous in the accumulation type (float32, float64 for
# float64 inputs); outputs are written in place.

def layer_norm(y, mean, rstd, x, w, b, eps, rms):
    n = rstd.shape[0]
    xr = x.reshape(n, -1)
    mu = np.zeros((n, 1), x.dtype) if rms else xr.mean(axis=1, keepdims=True, dtype=x.dtype)
    d = xr - mu
    rs = (1.0 / np.sqrt((d * d).mean(axis=1, keepdims=True) + x.dtype.type(eps))).astype(x.dtype)
    o = d * rs
    if w is not None:
        o = o * w.reshape(1, -1)
    if b is not None:
        o = o + b.reshape(1, -1)
    _put(y.reshape(n, -1), o)
    if mean is not None:
        _put(mean, mu[:, 0])
    _put(rstd, rs[:, 0])


def layer_norm_backward(gx, gw, gb, gy, x, mean, rstd, w, rms):
    n = rstd.shape[0]
    xr, gr = x.reshape(n, -1), gy.reshape(n, -1)
    mu = 0 if mean is None else mean.reshape(n, 1)
    xh = (xr - mu) * rstd.reshape(n, 1)
    if gx is not None:
        dh = gr if w is None else gr * w.reshape(1, -1)
        m1 = 0 if rms else dh.mean(axis=1, keepdims=True)
        m2 = (dh * xh).mean(axis=1, keepdims=True)
        _put(gx.reshape(n, -1), rstd.reshape(n, 1) * (dh - m1 - xh * m2))
    if gw is not None:
        _put(gw, (gr * xh).sum(axis=0))
    if gb is not None:
        _put(gb, gr.sum(axis=0))


def cross_entropy(loss, lse, x, t, w, ignore, ls):
    n, c = x.shape
    m = x.max(axis=1, keepdims=True) if c else np.zeros((n, 1), x.dtype)
    with np.errstate(all="ignore"):
        l = (m + np.log(np.exp(x - m).sum(axis=1, keepdims=True)))[:, 0]
    keep = t != ignore
    bad = keep & ((t < 0) | (t >= c))
    if bad.any():
        raise IndexError("Target %d is out of bounds." % int(t[bad][0]))
    safe = np.where(keep, t, 0)
    wv = np.ones(c, x.dtype) if w is None else w
    nll = (l - x[np.arange(n), safe]) * wv[safe]
    out = (1 - ls) * nll
    if ls > 0:
        out = out + ls / c * (wv.sum() * l - (x * wv).sum(axis=1))
    _put(loss, np.where(keep, out, 0))
    _put(lse, l)


def cross_entropy_backward(gx, g, x, t, w, lse, ignore, ls):
    n, c = x.shape
    keep = t != ignore
    safe = np.where(keep, t, 0)
    wv = np.ones(c, x.dtype) if w is None else w
    gr = np.broadcast_to(g.reshape(-1), (n,)).reshape(n, 1)
    with np.errstate(all="ignore"):
        p = np.exp(x - lse.reshape(n, 1))
    d = p.copy()
    d[np.arange(n), safe] -= 1
    v = (1 - ls) * wv[safe].reshape(n, 1) * d
    if ls > 0:
        v = v + ls / c * (wv.sum() * p - wv.reshape(1, c))
    _put(gx, np.where(keep.reshape(n, 1), gr * v, 0))


def philox_dropout(y, x, mask, scale):
    # (x * scale) * kept, rounded as the kernel does in the accumulation type
    with np.errstate(all="ignore"):
        _put(y, (x * x.dtype.type(scale)) * mask.astype(x.dtype))
