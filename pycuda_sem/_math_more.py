"""More elementwise ops composed in Python from the C kernels: the inverse
hyperbolic functions (acosh, asinh, atanh and their arc* aliases), the
nan-ignoring fmax/fmin, gcd/lcm on integer tensors, ldexp/frexp/nextafter
(exact, through the bits: Tensor.view(int dtype) reinterprets them), i0,
angle, the conjugation queries of real tensors (conj, resolve_conj, is_conj,
...), rsub, fill, and the in-place spellings torch has for ops that are out
of place here (greater_, float_power_, heaviside_, polygamma_, ...).

Everything is whole-tensor kernels; the differentiable ones get their
gradients from the ops they are built of, so each is written so that no
branch of a `where` sees an input that would make its derivative inf or nan
(the masked inputs below)."""
import collections
import math

from . import _C
from ._math import broadcast_tensors
from ._math_elementwise import _float_of, _inplace, _out, _t

_LN2 = math.log(2.0)
_BIG = 2.0 ** 28  # past it, acosh(x) = log(2x) and asinh(x) = log(2x) to the last bit


def _masked(cond, x, filler):
    """x where cond holds, a harmless filler elsewhere: the branch of a
    where() that is not taken still runs, and its gradient must stay finite."""
    return _C.where(cond, x, _C.full((), filler, dtype=x.dtype, device=x.device))


def _sign_of(x):
    """+1 / -1 by the sign bit (-0.0 gives -1), as a constant (no gradient)."""
    neg = (x < 0) | ((x == 0) & ((1 / x) < 0))
    one = _C.ones((), dtype=x.dtype, device=x.device)
    return _C.where(neg, -one, one).detach()


# ---- inverse hyperbolic functions ------------------------------------------------------

def acosh(input, *, out=None):
    """log(x + sqrt(x^2 - 1)), written as log1p(t + sqrt(t (t + 2))) with
    t = x - 1 (exact near 1) and as log(x) + log 2 for huge x (no overflow);
    nan below 1."""
    x = _float_of(_t("acosh", input))
    big = x > _BIG
    t = _masked(~big, x, 2.0) - 1
    small = (t + (t * (t + 2)).sqrt()).log1p()
    large = _masked(big, x, 2.0).log() + _LN2
    r = _C.where(big, large, small)
    # below 1 (down to -inf, where t (t + 2) is +inf again) the answer is nan
    return _out(_C.where(x < 1, _C.full((), math.nan, dtype=x.dtype, device=x.device), r), out)


def asinh(input, *, out=None):
    """sign(x) asinh(|x|), asinh(a) = log1p(a + a^2 / (1 + sqrt(1 + a^2)))
    (exact for tiny a, -0.0 kept) and log(a) + log 2 for huge a."""
    x = _float_of(_t("asinh", input))
    s = _sign_of(x)
    a = x * s  # |x| with derivative s: asinh'(0) stays 1 (abs' would give 0)
    big = a > _BIG
    am = _masked(~big, a, 1.0)
    small = (am + am * am / (1 + (1 + am * am).sqrt())).log1p()
    large = _masked(big, a, 2.0).log() + _LN2
    r = _C.where(big, large, small) * s
    return _out(_C.where(x.isnan(), x, r), out)


def atanh(input, *, out=None):
    """sign(x) 0.5 log1p(2a / (1 - a)), a = |x|: accurate near 0 and near
    +-1 (1 - a is exact there); +-inf at +-1, nan past them."""
    x = _float_of(_t("atanh", input))
    s = _sign_of(x)
    a = x * s
    r = 0.5 * (2 * a / (1 - a)).log1p() * s
    return _out(_C.where(x.isnan(), x, r), out)


def acosh_(input):
    return _inplace(input, acosh(input))


def asinh_(input):
    return _inplace(input, asinh(input))


def atanh_(input):
    return _inplace(input, atanh(input))


arccosh, arcsinh, arctanh = acosh, asinh, atanh
arccosh_, arcsinh_, arctanh_ = acosh_, asinh_, atanh_


# ---- nan-ignoring max/min ---------------------------------------------------------------

def fmax(input, other, *, out=None):
    """maximum() that takes the other operand where one is nan (nan only
    where both are)."""
    a, b = _t("fmax", input), _t("fmax", other, "other")
    m = _C.maximum(a, b)
    if m.is_floating_point():
        m = _C.where(a.isnan(), b.to(m.dtype), _C.where(b.isnan(), a.to(m.dtype), m))
    return _out(m, out)


def fmin(input, other, *, out=None):
    """minimum() that takes the other operand where one is nan."""
    a, b = _t("fmin", input), _t("fmin", other, "other")
    m = _C.minimum(a, b)
    if m.is_floating_point():
        m = _C.where(a.isnan(), b.to(m.dtype), _C.where(b.isnan(), a.to(m.dtype), m))
    return _out(m, out)


# ---- gcd / lcm -----------------------------------------------------------------------------

_INT_DTYPES = ("uint8", "int8", "int16", "int32", "int64")


def _int_pair(fname, a, b):
    _t(fname, a), _t(fname, b, "other")
    dt = _C.promote_types(a.dtype, b.dtype)
    name = str(dt).split(".")[-1]
    if name not in _INT_DTYPES:
        raise NotImplementedError('"%s_cpu" not implemented for \'%s\'' % (fname, name.capitalize()
                                  if name != "bool" else "Bool"))
    a, b = broadcast_tensors(a.to(dt), b.to(dt))
    return a, b


def _gcd(a, b):
    # Euclid on whole tensors; the number of rounds is bounded by the
    # Fibonacci growth (93 covers int64), and the loop stops once every
    # remainder is 0.
    a, b = a.abs(), b.abs()
    zero = _C.zeros((), dtype=a.dtype, device=a.device)
    for i in range(96):
        done = b == 0
        if i % 4 == 0 and bool(done.all()):
            break
        r = _C.remainder(a, _C.where(done, _C.ones((), dtype=b.dtype, device=b.device), b))
        a, b = _C.where(done, a, b), _C.where(done, zero, r)
    return a


def gcd(input, other, *, out=None):
    """The greatest common divisor, elementwise, of integer tensors
    (non-negative; gcd(0, 0) = 0)."""
    a, b = _int_pair("gcd", input, other)
    return _out(_gcd(a, b), out)


def lcm(input, other, *, out=None):
    """|a / gcd(a, b) * b|, 0 where gcd is 0 (integer tensors)."""
    a, b = _int_pair("lcm", input, other)
    g = _gcd(a, b)
    zero = g == 0
    q = _C.floor_divide(a, _C.where(zero, _C.ones((), dtype=g.dtype, device=g.device), g))
    # C's integer promotion, as torch's kernel: types narrower than int multiply and
    # take abs() in 32 bits, then wrap back to the dtype
    wide = q.element_size() < 4
    m = (q.to(_C.int32) * b.to(_C.int32)).abs().to(q.dtype) if wide else (q * b).abs()
    return _out(_C.where(zero, _C.zeros((), dtype=g.dtype, device=g.device), m), out)


def gcd_(input, other):
    return _inplace(input, gcd(input, other))


def lcm_(input, other):
    return _inplace(input, lcm(input, other))


# ---- ldexp / frexp / nextafter --------------------------------------------------------------

def ldexp(input, other, *, out=None):
    """input * 2**other, as torch writes it (mul(input, pow(2.0, other))),
    with the power from exp2: exact at integer exponents, where CUDA's
    float64 pow(2.0, e) measured 1 ulp off for some e (H200)."""
    _t("ldexp", input), _t("ldexp", other, "other")
    return _out(_C.mul(input, _C.exp2(other)), out)


def ldexp_(input, other):
    return _inplace(input, ldexp(input, other))


_frexp = collections.namedtuple("frexp", ["mantissa", "exponent"])

# (bits dtype, mantissa bits, exponent mask, bias of [0.5, 1), scale for subnormals)
_LAYOUT = {"float64": ("int64", 52, 0x7FF, 1022, 64), "float32": ("int32", 23, 0xFF, 126, 32)}


def frexp(input, *, out=None):
    """(mantissa, exponent) with input = mantissa * 2**exponent and
    0.5 <= |mantissa| < 1, exactly, from the bits; 0, inf and nan give
    (input, 0); subnormals are scaled into the normal range first. float16
    and bfloat16 go through float32 (exact)."""
    x = _t("frexp", input)
    if not x.is_floating_point():
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    name = str(x.dtype).split(".")[-1]
    w = x if name in _LAYOUT else x.float()
    ibits, mbits, emask, bias, scale = _LAYOUT[str(w.dtype).split(".")[-1]]
    ib = getattr(_C, ibits)
    special = (w == 0) | ~w.isfinite()
    sub = ~special & (w.abs() < 2.0 ** (1 - bias))  # below the smallest normal
    ws = _C.where(sub, w * 2.0 ** scale, w)
    bits = ws.view(ib)
    e = (bits >> mbits) & emask
    exponent = _C.where(special, _C.zeros((), dtype=ib, device=w.device),
                        e - bias - _C.where(sub, scale, 0).to(ib))
    mbits_new = (bits & ~(emask << mbits)) | (bias << mbits)
    mantissa = _C.where(special, w, mbits_new.view(w.dtype))
    r = _frexp(mantissa.to(x.dtype), exponent.to(_C.int32))
    if out is not None:
        out[0].copy_(r[0]), out[1].copy_(r[1])
        return _frexp(out[0], out[1])
    return r


def nextafter(input, other, *, out=None):
    """The next float after input towards other, by one step of the bits
    (float32 and float64; nan if either is nan; other where they are equal)."""
    x, y = _t("nextafter", input), _t("nextafter", other, "other")
    dt = _C.promote_types(x.dtype, y.dtype)
    if dt not in (_C.float32, _C.float64):
        raise NotImplementedError("nextafter is implemented for float32 and float64 here, not %s" % dt)
    x, y = broadcast_tensors(x.to(dt), y.to(dt))
    ib = _C.int64 if dt == _C.float64 else _C.int32
    bits = x.contiguous().view(ib)
    # away from zero when the step goes the way of x's sign, else towards it
    up = (y > x) == (x > 0)
    stepped = _C.where(up, bits + 1, bits - 1).view(dt)
    tiny = _C.ones((), dtype=ib, device=x.device).view(dt)  # the smallest subnormal
    at_zero = _C.where(y > 0, tiny, -tiny)
    r = _C.where(x == 0, at_zero, stepped)
    r = _C.where(x == y, y, r)
    r = _C.where(x.isnan() | y.isnan(), _C.full((), float("nan"), dtype=dt, device=x.device), r)
    return _out(r, out)


def nextafter_(input, other):
    return _inplace(input, nextafter(input, other))


# ---- i0 (Cephes' Chebyshev expansions, as torch's and NumPy's) ----------------------------

_I0A = (-4.4153416464793395e-18, 3.3307945188222384e-17, -2.431279846547955e-16,
        1.715391285555133e-15, -1.1685332877993451e-14, 7.676185498604936e-14,
        -4.856446783111929e-13, 2.95505266312964e-12, -1.726826291441556e-11,
        9.675809035373237e-11, -5.189795601635263e-10, 2.6598237246823866e-09,
        -1.300025009986248e-08, 6.046995022541919e-08, -2.670793853940612e-07,
        1.1173875391201037e-06, -4.4167383584587505e-06, 1.6448448070728896e-05,
        -5.754195010082104e-05, 0.00018850288509584165, -0.0005763755745385824,
        0.0016394756169413357, -0.004324309995050576, 0.010546460394594998,
        -0.02373741480589947, 0.04930528423967071, -0.09490109704804764, 0.17162090152220877,
        -0.3046826723431984, 0.6767952744094761)
_I0B = (-7.233180487874754e-18, -4.830504485944182e-18, 4.46562142029676e-17,
        3.461222867697461e-17, -2.8276239805165836e-16, -3.425485619677219e-16,
        1.7725601330565263e-15, 3.8116806693526224e-15, -9.554846698828307e-15,
        -4.150569347287222e-14, 1.54008621752141e-14, 3.8527783827421426e-13,
        7.180124451383666e-13, -1.7941785315068062e-12, -1.3215811840447713e-11,
        -3.1499165279632416e-11, 1.1889147107846439e-11, 4.94060238822497e-10,
        3.3962320257083865e-09, 2.266668990498178e-08, 2.0489185894690638e-07,
        2.8913705208347567e-06, 6.889758346916825e-05, 0.0033691164782556943, 0.8044904110141088)


def _chbevl(x, coef):
    b0, b1, b2 = x * 0 + coef[0], x * 0, x * 0
    for c in coef[1:]:
        b2, b1 = b1, b0
        b0 = x * b1 - b2 + c
    return 0.5 * (b0 - b2)


def i0(input, *, out=None):
    """The modified Bessel function of the first kind, order 0: exp(|x|)
    times a Chebyshev series on [0, 8] and past 8 (Cephes' coefficients);
    nan at +-inf, as torch's (its formula gives inf / inf there)."""
    x = _float_of(_t("i0", input))
    a = x * _sign_of(x)
    near = a <= 8
    an, af = _masked(near, a, 1.0), _masked(~near, a, 9.0)
    r_near = an.exp() * _chbevl(an / 2 - 2, _I0A)
    r_far = af.exp() * _chbevl(32 / af - 2, _I0B) / af.sqrt()
    r = _C.where(near, r_near, r_far)  # +-inf: inf / inf = nan, as torch's
    return _out(_C.where(x.isnan(), x, r), out)


def i0_(input):
    return _inplace(input, i0(input))


# ---- angle and the conjugation queries of real tensors --------------------------------

def angle(input, *, out=None):
    """The argument: atan2(imag, real) for complex; pi below 0 and 0
    elsewhere for real inputs (nan kept; integers give the default float)."""
    x = _t("angle", input)
    if x.is_complex():
        return _out(_C.atan2(x.imag, x.real), out)
    x = _float_of(x)
    r = _C.where(x < 0, _C.full((), math.pi, dtype=x.dtype, device=x.device),
                 _C.zeros((), dtype=x.dtype, device=x.device))
    return _out(_C.where(x.isnan(), x, r), out)


def conj(input):
    """self for real tensors; for complex ones the conjugate as a new tensor
    (pycuda_sem has no lazy conjugate bit, so is_conj() is always False)."""
    x = _t("conj", input)
    if not x.is_complex():
        return x
    if x.requires_grad and _C.is_grad_enabled():
        # recorded: re - i im from differentiable parts (negating the clone's
        # imaginary view in place is not recordable here)
        cd = x.dtype
        return x.real.to(cd) - x.imag.to(cd) * 1j
    r = x.clone()
    r.imag.neg_()
    return r


def conj_physical(input, *, out=None):
    """The conjugate, materialised (self for real tensors)."""
    x = _t("conj_physical", input)
    return x if out is None and not x.is_complex() else _out(conj(x), out)


def conj_physical_(input):
    x = _t("conj_physical_", input)
    if x.is_complex():
        x.imag.neg_()
    return x


def resolve_conj(input):
    """self: there is no lazy conjugate bit to resolve."""
    return _t("resolve_conj", input)


def resolve_neg(input):
    """self: there is no lazy negative bit to resolve."""
    return _t("resolve_neg", input)


def is_conj(input):
    """False: conjugates are always materialised here."""
    _t("is_conj", input)
    return False


def is_neg(input):
    """False: negations are always materialised here."""
    _t("is_neg", input)
    return False


# ---- rsub, fill ----------------------------------------------------------------------------

def rsub(input, other, alpha=1):
    """other - alpha * input (torch.rsub; other a tensor or a number)."""
    _t("rsub", input)
    return _C.sub(other, input, alpha=alpha)


def fill(input, value):
    """A new tensor of input's shape, dtype and device, every element value
    (a number or a 0-D tensor)."""
    x = _t("fill", input)
    return _C.empty_like(x).fill_(value)


# ---- in-place spellings of ops that are out of place here ------------------------------

def greater_(input, other):
    return input.gt_(other)


def greater_equal_(input, other):
    return input.ge_(other)


def less_(input, other):
    return input.lt_(other)


def less_equal_(input, other):
    return input.le_(other)


def not_equal_(input, other):
    return input.ne_(other)


def arctan2_(input, other):
    return input.atan2_(other)


def float_power_(input, exponent):
    """In-place float_power: self must be float64 (or complex128), as torch."""
    x = _t("float_power_", input)
    want = _C.complex128 if x.is_complex() or isinstance(exponent, complex) or (
        isinstance(exponent, _C.Tensor) and exponent.is_complex()) else _C.float64
    if x.dtype != want:
        raise RuntimeError("the base given to float_power_ has dtype %s but the operation's result "
                           "requires dtype %s" % (str(x.dtype).split(".")[-1].capitalize(),
                                                  str(want).split(".")[-1].capitalize()))
    from ._math_elementwise import float_power
    return x.copy_(float_power(x, exponent))


def heaviside_(input, values):
    from ._math_elementwise import heaviside
    return _inplace(input, heaviside(input, values))


def polygamma_(input, n):
    from .special import polygamma
    return _inplace(input, polygamma(n, input))


def mvlgamma_(input, p):
    from .special import multigammaln
    return _inplace(input, multigammaln(input, p))
