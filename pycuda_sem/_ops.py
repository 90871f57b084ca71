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


def scan(name, x, axis, out):
    f = np.cumsum if name == "cumsum" else np.cumprod
    with np.errstate(all="ignore"):
        _put(out, f(x, axis=axis, dtype=out.dtype) if x.ndim else x)


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
