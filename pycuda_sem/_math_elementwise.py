"""Elementwise ops composed in Python from the C kernels, as torch's own
decompositions write them: clamp_min/clamp_max, logaddexp(2), xlogy, hypot,
copysign, signbit, sgn, positive, float_power, deg2rad/rad2deg, fmod,
heaviside, logit, sinc, isposinf/isneginf/isreal.

Each is a handful of whole-tensor kernels, off the hot path of training
(the activations and the optimizer steps are single C kernels); gradients
come from the ops they are built of. Tensor methods of the same names reach
these through csrc/ops/py_methods.c.
"""
import math

from . import _C


def _t(fname, x, what="input"):
    if not isinstance(x, _C.Tensor):
        raise TypeError("%s(): argument '%s' must be Tensor, not %s" % (fname, what, type(x).__name__))
    return x


def _float_of(x):
    """x as the floating dtype an elementwise math op computes in."""
    return x if x.is_floating_point() or x.is_complex() else x.to(_C.get_default_dtype())


def _out(r, out):
    if out is None:
        return r
    return out.copy_(r)


def _inplace(self, r):
    if r.dtype != self.dtype:
        raise RuntimeError("result type %s can't be cast to the desired output type %s"
                           % (str(r.dtype).split(".")[-1].capitalize(), str(self.dtype).split(".")[-1].capitalize()))
    return self.copy_(r)


# ---- bounds ----------------------------------------------------------------------

def clamp_min(input, min, *, out=None):
    """max(input, min) elementwise (min a number or a tensor)."""
    return _C.clamp(_t("clamp_min", input), min=min, out=out)


def clamp_max(input, max, *, out=None):
    """min(input, max) elementwise."""
    return _C.clamp(_t("clamp_max", input), max=max, out=out)


def clamp_min_(input, min):
    return input.clamp_(min=min)


def clamp_max_(input, max):
    return input.clamp_(max=max)


# ---- logs and exponentials ------------------------------------------------------------

def _logaddexp(fname, a, b, log_of_sum):
    _t(fname, a)
    a, b = _float_of(a), _float_of(b) if isinstance(b, _C.Tensor) else b
    m = _C.maximum(a, b) if isinstance(b, _C.Tensor) else a.clamp(min=b)
    d = -(a - b).abs()
    r = m + log_of_sum(d)
    # equal infinities: a - b is nan, the answer is that infinity
    return _C.where((a == b) & m.isinf(), m, r)


def logaddexp(input, other, *, out=None):
    """log(exp(input) + exp(other)) without overflow: max + log1p(exp(-|a - b|))."""
    return _out(_logaddexp("logaddexp", input, other, lambda d: d.exp().log1p()), out)


def logaddexp2(input, other, *, out=None):
    """log2(2**input + 2**other) without overflow."""
    return _out(_logaddexp("logaddexp2", input, other,
                           lambda d: d.exp2().log1p() / math.log(2.0)), out)


def xlogy(input, other, *, out=None):
    """input * log(other), 0 where input is 0 (unless other is nan)."""
    x = input if isinstance(input, _C.Tensor) else _C.tensor(input)
    y = other if isinstance(other, _C.Tensor) else _C.tensor(other, device=x.device)
    if not isinstance(input, _C.Tensor):
        x = x.to(y.device)
    x, y = _float_of(x), _float_of(y)
    r = _C.where((x == 0) & ~y.isnan(), _C.zeros((), dtype=(x * y).dtype, device=x.device), x * y.log())
    return _out(r, out)


def xlogy_(input, other):
    return _inplace(input, xlogy(input, other))


def logit(input, eps=None):
    """log(p / (1 - p)), with p clamped to [eps, 1 - eps] when eps is given."""
    p = _float_of(_t("logit", input))
    if eps is not None:
        p = p.clamp(eps, 1.0 - eps)
    return (p / (1 - p)).log()


def logit_(input, eps=None):
    return _inplace(input, logit(input, eps))


def sinc(input, *, out=None):
    """sin(pi x) / (pi x), 1 at 0."""
    x = _float_of(_t("sinc", input))
    px = x * math.pi
    r = _C.where(x == 0, _C.ones((), dtype=x.dtype, device=x.device), px.sin() / px)
    return _out(r, out)


def sinc_(input):
    return _inplace(input, sinc(input))


def float_power(input, exponent, *, out=None):
    """input ** exponent in double precision (complex128 for complex operands)."""
    cx = any(isinstance(v, _C.Tensor) and v.is_complex() or isinstance(v, complex)
             for v in (input, exponent))
    dt = _C.complex128 if cx else _C.float64
    base = input.to(dt) if isinstance(input, _C.Tensor) else input
    e = exponent.to(dt) if isinstance(exponent, _C.Tensor) else exponent
    return _out(_C.pow(base, e), out)


# ---- magnitudes and signs ---------------------------------------------------------------

def hypot(input, other, *, out=None):
    """sqrt(input**2 + other**2), scaled by the larger magnitude so that
    neither square overflows."""
    a, b = _t("hypot", input).abs(), _t("hypot", other, "other").abs()
    hi, lo = _C.maximum(a, b), _C.minimum(a, b)
    ratio = _C.where(hi == 0, _C.zeros((), dtype=hi.dtype, device=hi.device), lo / hi)
    r = hi * (1 + ratio * ratio).sqrt()
    # an infinite side wins over a nan one, as C's hypot
    inf = a.isinf() | b.isinf()
    return _out(_C.where(inf, _C.full((), float("inf"), dtype=r.dtype, device=r.device), r), out)


def hypot_(input, other):
    return _inplace(input, hypot(input, other))


def signbit(input, *, out=None):
    """True where the sign bit is set: negative numbers, -0.0 and -inf."""
    x = _t("signbit", input)
    if not x.is_floating_point():
        r = x < 0
    else:
        r = (x < 0) | ((x == 0) & ((1 / x) < 0))
    return _out(r, out)


def copysign(input, other, *, out=None):
    """|input| with the sign bit of other (a tensor or a number)."""
    a = _float_of(_t("copysign", input)).abs()
    if isinstance(other, _C.Tensor):
        neg = signbit(other)
    else:
        neg = math.copysign(1.0, other) < 0
        return _out(-a if neg else a, out)
    return _out(_C.where(neg, -a, a), out)


def copysign_(input, other):
    return _inplace(input, copysign(input, other))


def sgn(input, *, out=None):
    """sign(input) for real tensors; input / |input| (0 at 0) for complex."""
    x = _t("sgn", input)
    if not x.is_complex():
        return _C.sign(x, out=out) if out is not None else x.sign()
    m = x.abs()
    r = _C.where(m == 0, _C.zeros((), dtype=x.dtype, device=x.device), x / m)
    return _out(r, out)


def sgn_(input):
    return _inplace(input, sgn(input))


def positive(input):
    """input itself, as torch (refused for bool tensors)."""
    if _t("positive", input).dtype == _C.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def heaviside(input, values, *, out=None):
    """0 where input < 0, values where input == 0, 1 where input > 0."""
    x, v = _t("heaviside", input), _t("heaviside", values, "values")
    if x.dtype != v.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes")
    r = _C.where(x == 0, v, (x > 0).to(x.dtype))
    return _out(r, out)


def deg2rad(input, *, out=None):
    return _out(_float_of(_t("deg2rad", input)) * (math.pi / 180.0), out)


def rad2deg(input, *, out=None):
    return _out(_float_of(_t("rad2deg", input)) * (180.0 / math.pi), out)


def deg2rad_(input):
    return _inplace(input, deg2rad(input))


def rad2deg_(input):
    return _inplace(input, rad2deg(input))


# ---- remainders -------------------------------------------------------------------------

def fmod(input, other, *, out=None):
    """The C remainder: the sign of input (remainder() takes the divisor's)."""
    r = _C.remainder(_t("fmod", input), other)
    b = other
    fix = (r != 0) & ((r < 0) != (input < 0))
    return _out(_C.where(fix, r - b, r), out)


def fmod_(input, other):
    return _inplace(input, fmod(input, other))


# ---- tests ------------------------------------------------------------------------------

def isposinf(input, *, out=None):
    x = _t("isposinf", input)
    return _out(x.isinf() & (x > 0) if x.is_floating_point() else _C.zeros(x.shape, dtype=_C.bool, device=x.device), out)


def isneginf(input, *, out=None):
    x = _t("isneginf", input)
    return _out(x.isinf() & (x < 0) if x.is_floating_point() else _C.zeros(x.shape, dtype=_C.bool, device=x.device), out)


def isreal(input):
    """True where the imaginary part is 0 (everywhere for real dtypes)."""
    x = _t("isreal", input)
    if not x.is_complex():
        return _C.ones(x.shape, dtype=_C.bool, device=x.device)
    return x.imag == 0
