"""pycuda_sem.special: torch.special's functions that this project has.

Most are the same ops under torch.special's names (erf, expit = sigmoid,
logsumexp, softmax, ...); ndtr, ndtri, log_ndtr, entr and xlog1py are
composed here from erf/erfc/erfinv and the elementwise kernels. gammaln,
digamma (psi) and polygamma of orders 0 and 1 use the lgamma, digamma and
trigamma kernels, higher orders the Hurwitz zeta; multigammaln sums lgamma.
The incomplete gamma and zeta functions are in _special_gamma.py, the Bessel
and Airy functions in _special_bessel.py, the orthogonal polynomials in
_special_poly.py (all compositions of elementwise ops); erfcx is below.
"""
import math

from . import _C
from ._math_elementwise import logit, sinc, xlogy, _float_of, _t
from ._math_more import i0
from ._special_bessel import (airy_ai, bessel_j0, bessel_j1, bessel_y0, bessel_y1, i0e, i1, i1e,  # noqa: F401
                              modified_bessel_i0, modified_bessel_i1, modified_bessel_k0, modified_bessel_k1,
                              scaled_modified_bessel_k0, scaled_modified_bessel_k1, spherical_bessel_j0)
from ._special_poly import (chebyshev_polynomial_t, chebyshev_polynomial_u, chebyshev_polynomial_v,  # noqa: F401
                            chebyshev_polynomial_w, hermite_polynomial_h, hermite_polynomial_he,
                            laguerre_polynomial_l, legendre_polynomial_p, shifted_chebyshev_polynomial_t,
                            shifted_chebyshev_polynomial_u, shifted_chebyshev_polynomial_v,
                            shifted_chebyshev_polynomial_w)
from ._special_gamma import (gammainc, gammaincc, igamma, igamma_, igammac, igammac_,  # noqa: F401
                             polygamma_zeta as _polygamma_zeta, zeta)

erf = _C.erf
erfc = _C.erfc
erfinv = _C.erfinv
exp2 = _C.exp2
expm1 = _C.expm1
log1p = _C.log1p
expit = _C.sigmoid
round = _C.round  # noqa: A001 - torch.special.round
logsumexp = _C.logsumexp
gammaln = _C.lgamma
digamma = _C.digamma
psi = _C.digamma


def polygamma(n, input, *, out=None):
    """The n-th derivative of digamma: n = 0 (digamma) and n = 1 (trigamma)
    by their kernels, higher orders as (-1)^(n+1) n! zeta(n + 1, x) (in
    float64, cast back). (Tensor.polygamma(n) reaches this with the tensor
    first.)"""
    if isinstance(n, _C.Tensor) and not isinstance(input, _C.Tensor):
        n, input = input, n
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError("polygamma(): argument 'n' must be int, not %s" % type(n).__name__)
    x = _t("polygamma", input)
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    if n == 0:
        r = x.digamma()
    elif n == 1:
        r = _C._trigamma(_float_of(x))
    else:
        r = _polygamma_zeta(n, _float_of(x))
    return r if out is None else out.copy_(r)


def multigammaln(input, p, *, out=None):
    """The multivariate log-gamma of dimension p: sum_i lgamma(x - i/2) +
    p (p - 1) / 4 log(pi); every entry must exceed (p - 1) / 2."""
    x = _float_of(_t("multigammaln", input))
    if isinstance(p, bool) or not isinstance(p, int):
        raise TypeError("multigammaln(): argument 'p' must be int, not %s" % type(p).__name__)
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if p > 2 ** 20:  # one lgamma pass per term: refuse before looping
        raise RuntimeError("multigammaln: p = %d is too large" % p)
    if bool((x <= (p - 1) / 2).any()):
        raise RuntimeError("All elements must be greater than (p-1)/2")
    r = (x - 0).lgamma()
    for i in range(1, p):
        r = r + (x - 0.5 * i).lgamma()
    r = r + p * (p - 1) / 4 * math.log(math.pi)
    return r if out is None else out.copy_(r)


mvlgamma = multigammaln

_SQRT2 = math.sqrt(2.0)


def softmax(input, dim, *, dtype=None):
    """softmax along dim (input cast to dtype first when given)."""
    return _C.softmax(input, dim, dtype=dtype) if dtype is not None else _C.softmax(input, dim)


def log_softmax(input, dim, *, dtype=None):
    return _C.log_softmax(input, dim, dtype=dtype) if dtype is not None else _C.log_softmax(input, dim)


def ndtr(input, *, out=None):
    """The standard normal CDF, 0.5 * erfc(-x / sqrt(2)) (accurate in both tails' left side)."""
    x = _float_of(_t("ndtr", input))
    r = 0.5 * (-x / _SQRT2).erfc()
    return r if out is None else out.copy_(r)


def ndtri(input, *, out=None):
    """The inverse of ndtr: sqrt(2) * erfinv(2p - 1)."""
    p = _float_of(_t("ndtri", input))
    r = (2 * p - 1).erfinv() * _SQRT2
    return r if out is None else out.copy_(r)


def log_ndtr(input, *, out=None):
    """log(ndtr(x)), in float64 and cast back: log1p(-ndtr(-x)) above 0,
    directly down to x = -20,
    where ndtr is still a normal float64; below, the asymptotic series
    -x^2/2 - log(-x) - log(2 pi)/2 + log(1 - 1/x^2 + 3/x^4 - 15/x^6), whose
    next term is under 1e-8 there."""
    x0 = _float_of(_t("log_ndtr", input))
    x = x0.double()
    direct = ndtr(x.clamp(min=-20.0)).log()
    xs = x.clamp(max=-20.0)
    z = 1 / (xs * xs)
    tail = (-0.5 * xs * xs - (-xs).log() - 0.5 * math.log(2 * math.pi)
            + (1 - z + 3 * z * z - 15 * z * z * z).log())
    upper = (-0.5 * (x.clamp(min=0.0) / _SQRT2).erfc()).log1p()  # log(1 - ndtr(-x)) for x > 0
    r = _C.where(x < -20.0, tail, _C.where(x > 0, upper, direct)).to(x0.dtype)
    return r if out is None else out.copy_(r)


def entr(input, *, out=None):
    """-x log x elementwise: 0 at 0, -inf below 0."""
    x = _float_of(_t("entr", input))
    zero = _C.zeros((), dtype=x.dtype, device=x.device)
    r = _C.where(x > 0, -x * x.clamp(min=math.ldexp(1.0, -1000)).log(),
                 _C.where(x == 0, zero, _C.full((), float("-inf"), dtype=x.dtype, device=x.device)))
    r = _C.where(x.isnan(), x, r)
    return r if out is None else out.copy_(r)


def xlog1py(input, other, *, out=None):
    """input * log1p(other), 0 where input is 0 (unless other is nan)."""
    x = input if isinstance(input, _C.Tensor) else _C.tensor(input, device=other.device)
    y = other if isinstance(other, _C.Tensor) else _C.tensor(other, device=x.device)
    x, y = _float_of(x), _float_of(y)
    r = _C.where((x == 0) & ~y.isnan(), _C.zeros((), dtype=(x * y).dtype, device=x.device), x * y.log1p())
    return r if out is None else out.copy_(r)


_SPLIT = 134217729.0  # 2^27 + 1: Veltkamp's split of a float64 into two 26-bit halves
_INV_SQRT_PI = 1 / math.sqrt(math.pi)


def _exp_square(x):
    """exp(x^2) without the rounding error of x^2 (which exp would scale by
    x^2): x = hi + lo with hi^2 exact, exp(hi^2) exp(2 hi lo + lo^2)."""
    c = _SPLIT * x
    hi = c - (c - x)
    lo = x - hi
    return (hi * hi).exp() * (lo * (2 * hi + lo)).exp()


def erfcx(input, *, out=None):
    """The scaled complementary error function exp(x^2) erfc(x), in float64
    and cast back: exp(x^2) erfc(x) (x^2 split so that exp sees it exactly)
    up to 12, the asymptotic series 1 / (x sqrt(pi)) sum (-1)^k (2k-1)!! /
    (2x^2)^k (12 terms, 1e-17 there) beyond, and 2 exp(x^2) - erfcx(-x) below
    0 (inf below about -26.6, where exp(x^2) overflows, as torch's)."""
    x0 = _float_of(_t("erfcx", input))
    x = x0.double()
    a = x.abs()
    near = a <= 12
    an = _C.where(near, a, _C.full((), 1.0, dtype=x.dtype, device=x.device))
    af = _C.where(near, _C.full((), 13.0, dtype=x.dtype, device=x.device), a)
    r_near = _exp_square(an) * an.erfc()
    z = 1 / (2 * af * af)
    series = x * 0 + 1
    term = x * 0 + 1
    for k in range(1, 13):
        term = -term * (2 * k - 1) * z
        series = series + term
    r_far = series * _INV_SQRT_PI / af
    pos = _C.where(near, r_near, r_far)  # erfcx(|x|), 0 at +inf
    pos = _C.where(a == math.inf, _C.zeros((), dtype=x.dtype, device=x.device), pos)
    neg = 2 * _exp_square(_C.where(x < 0, x, _C.zeros((), dtype=x.dtype, device=x.device))) - pos
    neg = _C.where(x == -math.inf, _C.full((), math.inf, dtype=x.dtype, device=x.device), neg)
    r = _C.where(x < 0, neg, pos)
    r = _C.where(x.isnan(), x, r).to(x0.dtype)
    return r if out is None else out.copy_(r)

__all__ = ["erf", "erfc", "erfinv", "exp2", "expm1", "log1p", "expit", "round", "logsumexp",
           "softmax", "log_softmax", "logit", "sinc", "xlogy", "ndtr", "ndtri", "log_ndtr", "entr",
           "xlog1py", "gammaln", "digamma", "psi", "polygamma", "multigammaln", "erfcx",
           "gammainc", "gammaincc", "zeta", "i0", "i0e", "i1", "i1e", "modified_bessel_i0",
           "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
           "scaled_modified_bessel_k1", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1",
           "spherical_bessel_j0", "airy_ai", "chebyshev_polynomial_t", "chebyshev_polynomial_u",
           "chebyshev_polynomial_v", "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
           "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w",
           "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"]
