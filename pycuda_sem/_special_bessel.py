"""torch.special's Bessel and Airy functions, composed from elementwise ops:
i0e, i1, i1e, modified_bessel_i0/i1/k0/k1, scaled_modified_bessel_k0/k1,
bessel_j0/j1/y0/y1, spherical_bessel_j0 and airy_ai.

They follow the Cephes Mathematics Library's algorithms (the ones torch.special
uses): Chebyshev series in a variable mapped onto [-2, 2] (Clenshaw's
recurrence, _chbevl) for the modified functions, rational approximations on
[0, 5] and a modulus/phase form past 5 for J and Y, power series and
asymptotic rationals for Ai. The coefficient tables are in _special_coef.py
(with Cephes' implicit leading 1 of some denominators written out, which
makes J, Y and Ai more accurate than torch's, about 1e-14 against 1e-5).

Every interval is computed on the whole tensor and chosen with where(); the
branch that is not taken gets a harmless filler value (_masked) so that its
gradient stays finite. Each function computes in its input's floating dtype."""
import math

from . import _C
from . import _special_coef as _c
from ._math_elementwise import _float_of, _out, _t
from ._math_more import _I0A, _I0B, _chbevl, _masked

_TWO_OVER_PI = 2.0 / math.pi
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_PI_4 = math.pi / 4
_3PI_4 = 3 * math.pi / 4
_J0_Z1, _J0_Z2 = 5.78318596294678452118, 30.4712623436620863991  # squares of J0's first zeros
_J1_Z1, _J1_Z2 = 14.6819706421238932572, 49.2184563216946036703  # squares of J1's first zeros


def _polevl(x, coef):
    """sum coef[i] x^(n - i), Horner's rule (highest power first)."""
    r = x * 0 + coef[0]
    for c in coef[1:]:
        r = r * x + c
    return r


def _full(x, v):
    return _C.full((), v, dtype=x.dtype, device=x.device)


def _arg(name, input):
    return _float_of(_t(name, input))


def _keep_nan(x, r):
    return _C.where(x.isnan(), x, r)


# ---- modified Bessel functions of the first kind -------------------------------------

def _i0e_abs(a):
    """exp(-a) I0(a) for a >= 0 (nan-free fillers in the untaken branch)."""
    near = a <= 8
    an, af = _masked(near, a, 1.0), _masked(~near, a, 9.0)
    return _C.where(near, _chbevl(an / 2 - 2, _I0A), _chbevl(32 / af - 2, _I0B) / af.sqrt())


def _i1e_abs(a):
    """exp(-a) I1(a) for a >= 0."""
    near = a <= 8
    an, af = _masked(near, a, 1.0), _masked(~near, a, 9.0)
    return _C.where(near, _chbevl(an / 2 - 2, _c.I1_A) * a, _chbevl(32 / af - 2, _c.I1_B) / af.sqrt())


def i0e(input, *, out=None):
    """The exponentially scaled I0: exp(-|x|) I0(x) (0 at +-inf)."""
    x = _arg("i0e", input)
    return _out(_keep_nan(x, _i0e_abs(x.abs())), out)


def i1(input, *, out=None):
    """The modified Bessel function of the first kind, order 1 (odd)."""
    x = _arg("i1", input)
    a = x.abs()
    return _out(_keep_nan(x, _i1e_abs(a) * a.exp() * x.sign()), out)


def i1e(input, *, out=None):
    """The exponentially scaled I1: exp(-|x|) I1(x)."""
    x = _arg("i1e", input)
    return _out(_keep_nan(x, _i1e_abs(x.abs()) * x.sign()), out)


def modified_bessel_i0(input, *, out=None):
    """I0(x) (the same function as i0)."""
    x = _arg("modified_bessel_i0", input)
    a = x.abs()
    return _out(_keep_nan(x, _i0e_abs(a) * a.exp()), out)


def modified_bessel_i1(input, *, out=None):
    """I1(x) (the same function as i1)."""
    return _out(i1(_arg("modified_bessel_i1", input)), out)


# ---- modified Bessel functions of the second kind ------------------------------------

def _k_parts(x, order):
    """(the K of order 0 or 1 on [0, 2] times exp(x), exp(x) K past 2, the
    mask near), each with fillers in the other branch; x > 0 where used."""
    near = x <= 2
    xn, xf = _masked(near & (x > 0), x, 1.0), _masked(~near, x, 3.0)
    if order == 0:
        small = _chbevl(xn * xn - 2, _c.K0_A) - (0.5 * xn).log() * _i0e_abs(xn) * xn.exp()
        large = _chbevl(8 / xf - 2, _c.K0_B) / xf.sqrt()
    else:
        small = (0.5 * xn).log() * _i1e_abs(xn) * xn.exp() + _chbevl(xn * xn - 2, _c.K1_A) / xn
        large = _chbevl(8 / xf - 2, _c.K1_B) / xf.sqrt()
    return small, large, near, xn, xf


def _k(name, input, order, scaled):
    x = _arg(name, input)
    small, large, near, xn, xf = _k_parts(x, order)
    if scaled:
        r = _C.where(near, small * xn.exp(), large)
    else:
        r = _C.where(near, small, large * (-xf).exp())
    r = _C.where(x == 0, _full(x, math.inf), _C.where(x < 0, _full(x, math.nan), r))
    r = _C.where(x == math.inf, _full(x, 0.0), r)
    return _keep_nan(x, r)


def modified_bessel_k0(input, *, out=None):
    """K0(x) for x >= 0 (inf at 0, nan below)."""
    return _out(_k("modified_bessel_k0", input, 0, False), out)


def modified_bessel_k1(input, *, out=None):
    """K1(x) for x >= 0 (inf at 0, nan below)."""
    return _out(_k("modified_bessel_k1", input, 1, False), out)


def scaled_modified_bessel_k0(input, *, out=None):
    """exp(x) K0(x) for x >= 0."""
    return _out(_k("scaled_modified_bessel_k0", input, 0, True), out)


def scaled_modified_bessel_k1(input, *, out=None):
    """exp(x) K1(x) for x >= 0."""
    return _out(_k("scaled_modified_bessel_k1", input, 1, True), out)


# ---- Bessel functions of the first and second kind ------------------------------------

def _far(xf, pp, pq, qp, qq, shift, second):
    """J (second=False) or Y of order 0 or 1 past 5: the Hankel modulus and
    phase rationals in z = 25 / x^2, combined with cos/sin(x - shift)."""
    z = 25 / (xf * xf)
    p = _polevl(z, pp) / _polevl(z, pq)
    q = 5 / xf * (_polevl(z, qp) / _polevl(z, qq))
    c, s = (xf - shift).cos(), (xf - shift).sin()
    r = p * s + q * c if second else p * c - q * s
    return r * _SQRT_2_OVER_PI / xf.sqrt()


def _j0_abs(a):
    near = a <= 5
    an, af = _masked(near, a, 1.0), _masked(~near, a, 6.0)
    z = an * an
    small = (z - _J0_Z1) * (z - _J0_Z2) * _polevl(z, _c.J0_RP) / _polevl(z, _c.J0_RQ)
    small = _C.where(an < 1e-5, 1 - z / 4, small)
    return _C.where(near, small, _far(af, _c.J0_PP, _c.J0_PQ, _c.J0_QP, _c.J0_QQ, _PI_4, False))


def _j1_signed(x):
    a = x.abs()
    near = a <= 5
    xn, af = _masked(near, x, 1.0), _masked(~near, a, 6.0)
    z = xn * xn
    small = _polevl(z, _c.J1_RP) / _polevl(z, _c.J1_RQ) * xn * (z - _J1_Z1) * (z - _J1_Z2)
    large = _far(af, _c.J1_PP, _c.J1_PQ, _c.J1_QP, _c.J1_QQ, _3PI_4, False) * x.sign()
    return _C.where(near, small, large)


def bessel_j0(input, *, out=None):
    """J0(x), the Bessel function of the first kind of order 0 (even; nan at
    +-inf, as torch's)."""
    x = _arg("bessel_j0", input)
    r = _C.where(x.isinf(), _full(x, math.nan), _j0_abs(_masked(~x.isinf(), x, 1.0).abs()))
    return _out(_keep_nan(x, r), out)


def bessel_j1(input, *, out=None):
    """J1(x), the Bessel function of the first kind of order 1 (odd; nan at
    +-inf, as torch's)."""
    x = _arg("bessel_j1", input)
    r = _C.where(x.isinf(), _full(x, math.nan), _j1_signed(_masked(~x.isinf(), x, 1.0)))
    return _out(_keep_nan(x, r), out)


def _y(name, input, order):
    x = _arg(name, input)
    near = x <= 5
    xn, xf = _masked(near & (x > 0), x, 1.0), _masked(~near & (x < math.inf), x, 6.0)
    z = xn * xn
    if order == 0:
        small = _polevl(z, _c.Y0_YP) / _polevl(z, _c.Y0_YQ) + _TWO_OVER_PI * xn.log() * _j0_abs(xn)
        large = _far(xf, _c.J0_PP, _c.J0_PQ, _c.J0_QP, _c.J0_QQ, _PI_4, True)
    else:
        small = xn * (_polevl(z, _c.Y1_YP) / _polevl(z, _c.Y1_YQ)) + _TWO_OVER_PI * (
            _j1_signed(xn) * xn.log() - 1 / xn)
        large = _far(xf, _c.J1_PP, _c.J1_PQ, _c.J1_QP, _c.J1_QQ, _3PI_4, True)
    r = _C.where(near, small, large)
    r = _C.where(x == 0, _full(x, -math.inf), _C.where(x < 0, _full(x, math.nan), r))
    r = _C.where(x == math.inf, _full(x, math.nan), r)
    return _keep_nan(x, r)


def bessel_y0(input, *, out=None):
    """Y0(x), the Bessel function of the second kind of order 0 (-inf at 0, nan
    below and at +inf, as torch's)."""
    return _out(_y("bessel_y0", input, 0), out)


def bessel_y1(input, *, out=None):
    """Y1(x), the Bessel function of the second kind of order 1 (-inf at 0, nan
    below and at +inf, as torch's)."""
    return _out(_y("bessel_y1", input, 1), out)


def spherical_bessel_j0(input, *, out=None):
    """sin(x) / x, by its Taylor polynomial below |x| = 0.5 (1 at 0, 0 at +-inf)."""
    x = _arg("spherical_bessel_j0", input)
    small = x.abs() < 0.5
    xs, xl = _masked(small, x, 0.0), _masked(~small & ~x.isinf(), x, 1.0)
    z = xs * xs
    taylor = 1 + z * (-1 / 6 + z * (1 / 120 + z * (-1 / 5040 + z * (1 / 362880 + z * (
        -1 / 39916800 + z * (1 / 6227020800))))))
    r = _C.where(small, taylor, xl.sin() / xl)
    return _out(_keep_nan(x, _C.where(x.isinf(), _full(x, 0.0), r)), out)


# ---- the Airy function Ai -------------------------------------------------------------

_AIRY_C1, _AIRY_C2 = 0.355028053887817239260, 0.258819403792806798405  # Ai(0), -Ai'(0)
_AIRY_SQPII = 5.64189583547756286948e-01  # 1 / sqrt(pi)
_AIRY_TERMS = 40  # the power series below |x| = 2.09: term 40 is under 1e-40 of the sum


def airy_ai(input, *, out=None):
    """Ai(x): the power series on [-2.09, 2.09], the asymptotic rational in
    1 / zeta above (exp(-zeta) / x^(1/4) times it) and the modulus/phase form
    below; 0 past 103.892 and nan at +-inf, as torch's."""
    x = _arg("airy_ai", input)
    neg, pos = x < -2.09, x >= 2.09
    mid = ~neg & ~pos
    # below -2.09: z = 1 / zeta, zeta = 2 (-x)^(3/2) / 3
    xn = _masked(neg & ~x.isinf(), x, -3.0)
    zeta_n = -2 * xn * (-xn).sqrt() / 3
    z = 1 / zeta_n
    zz = z * z
    t = zeta_n + 0.25 * math.pi
    far_neg = _AIRY_SQPII / (-xn).sqrt().sqrt() * (
        t.sin() * (1 + zz * _polevl(zz, _c.AIRY_AFN) / _polevl(zz, _c.AIRY_AFD))
        - t.cos() * (z * _polevl(zz, _c.AIRY_AGN) / _polevl(zz, _c.AIRY_AGD)))
    # above 2.09
    xp = _masked(pos & (x <= 103.892), x, 3.0)
    zeta_p = 2 * xp * xp.sqrt() / 3
    far_pos = _AIRY_SQPII * (_polevl(1 / zeta_p, _c.AIRY_AN) / _polevl(1 / zeta_p, _c.AIRY_AD)) / (
        2 * xp.sqrt().sqrt() * zeta_p.exp())
    # the Maclaurin series f = sum x^(3k) / (3k)! * prod(3j - 2), g likewise
    xm = _masked(mid, x, 0.0)
    zc = xm * xm * xm
    f, g, m, n = xm * 0 + 1, xm, xm * 0 + 1, xm
    k = 1.0
    for _ in range(_AIRY_TERMS):
        m = m * zc / ((k + 1) * (k + 2))
        n = n * zc / ((k + 2) * (k + 3))
        k += 3
        f, g = f + m, g + n
    series = _AIRY_C1 * f - _AIRY_C2 * g
    r = _C.where(neg, far_neg, _C.where(pos, far_pos, series))
    r = _C.where(x > 103.892, _full(x, 0.0), r)
    r = _C.where(x.isinf(), _full(x, math.nan), r)
    return _out(_keep_nan(x, r), out)
