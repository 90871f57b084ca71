"""torch.special's incomplete gamma and zeta families, composed from
elementwise ops: gammainc / gammaincc (torch.igamma / igammac and the Tensor
methods), the Hurwitz zeta and polygamma of every order.

The regularised incomplete gamma follows the classic split (Numerical
Recipes' gser / gcf, Cephes' igam / igamc): the power series of P(a, x) where
x < a + 1 and the continued fraction of Q(a, x), evaluated by the modified
Lentz method, elsewhere; the other one is 1 minus it. Both run on the whole
tensor (each element masked to a harmless value in the branch it does not
take), in float64 whatever the input dtype, with a bounded number of terms:
the loop stops early once every element has converged (checked every 32
terms) and never runs past _MAX_TERMS. Both need about 9 sqrt(a) terms where
x is near a, so a above _A_MAX with |x - a| < 40 sqrt(a) (where the answer is
neither 0 nor 1 to double precision) raises NotImplementedError: torch uses
Temme's uniform asymptotic expansion there, which is not written here.
For x <= 1.1 and small a, where Q = 1 - P would cancel, Q has its own series
(Cephes' igamc_series, with lgamma(1 + a) from its Taylor series in zeta(k)).

zeta(x, q) is Cephes' Euler-Maclaurin summation: q^-x + ... + (q + m)^-x
directly (m >= 9 and q + m > 9), then the tail integral and twelve
Bernoulli-number corrections. polygamma(n, x) for n >= 2 is
(-1)^(n+1) n! zeta(n + 1, x), as torch computes it.

Both are autograd Functions: the gradient w.r.t. x of the incomplete gamma
is the gamma density, w.r.t. q of zeta it is -x zeta(x + 1, q); torch has
none w.r.t. a (or zeta's x) and neither has this (NotImplementedError, as
torch's message)."""
import math

from . import _C
from ._dtype_info import result_type
from ._math import broadcast_tensors
from .autograd.function import Function

_EPS = 1.1102230246251565e-16  # 2^-53
_TINY = 1e-300
_MAX_TERMS = 20000
_A_MAX = 1e6
_CHECK_EVERY = 32


def _full(x, v):
    return _C.full((), v, dtype=x.dtype, device=x.device)


def _check(name, a, b, names=("input", "other")):
    """TypeError unless both are tensors or real numbers, one at least a tensor."""
    if not isinstance(a, _C.Tensor) and not isinstance(b, _C.Tensor):
        raise TypeError("%s(): argument '%s' must be Tensor, not %s" % (name, names[0], type(a).__name__))
    for v, what in ((a, names[0]), (b, names[1])):
        if not isinstance(v, (_C.Tensor, int, float)) or isinstance(v, bool):
            raise TypeError("%s(): argument '%s' must be Tensor, not %s" % (name, what, type(v).__name__))


def _pair(name, a, b, names=("input", "other")):
    """Both operands as float64 tensors of one shape, plus the result dtype."""
    _check(name, a, b, names)
    dtype = result_type(a, b)
    dev = a.device if isinstance(a, _C.Tensor) else b.device
    a = a if isinstance(a, _C.Tensor) else _C.tensor(float(a), dtype=_C.float64, device=dev)
    b = b if isinstance(b, _C.Tensor) else _C.tensor(float(b), dtype=_C.float64, device=dev)
    a, b = broadcast_tensors(a, b)
    return a.detach().double(), b.detach().double(), dtype


def _all_done(mask):
    return not bool(mask.any())


# ---- the regularised incomplete gamma -------------------------------------------------

_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156)
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _log_prefactor(a, x):
    """log(x^a e^-x / Gamma(a)) (a, x > 0, finite). For a >= 20 the terms
    a log x, x and lgamma(a) nearly cancel (1e-12 lost at a = 2000), so
    there it is a (log1p(t) - t) + log(a) / 2 - log(2 pi) / 2 - S(a) with
    t = (x - a) / a and S Stirling's series of lgamma (exact to 1e-19 there)."""
    big = a >= 20
    ab = _C.where(big, a, _full(a, 20.0))
    t = (x - ab) / ab
    inv2 = 1 / (ab * ab)
    stirling = _STIRLING[-1] * (ab * 0 + 1)
    for c in _STIRLING[-2::-1]:
        stirling = stirling * inv2 + c
    stirling = stirling / ab
    large = ab * (t.log1p() - t) + 0.5 * ab.log() - _HALF_LOG_2PI - stirling
    return _C.where(big, large, a * x.log() - x - a.lgamma())


def _too_large():
    raise NotImplementedError("gammainc/gammaincc: a above %g with x within 40 sqrt(a) of a needs "
                              "Temme's asymptotic expansion, which pycuda_sem does not have" % _A_MAX)


def _lower_series(a, x):
    """P(a, x) by its power series e^-x x^a / Gamma(a + 1) sum x^n / ((a+1)...(a+n))."""
    term = x * 0 + 1
    total = term
    ap = a
    for i in range(1, _MAX_TERMS + 1):
        ap = ap + 1
        term = term * x / ap
        total = total + term
        if i % _CHECK_EVERY == 0 and _all_done(term > total * _EPS):
            break
    else:
        _too_large()
    return (_log_prefactor(a, x).exp() * total / a).clamp(max=1.0)


def _upper_fraction(a, x):
    """Q(a, x) by the continued fraction e^-x x^a / Gamma(a) / (x + 1 - a -
    1 (1 - a) / (x + 3 - a - 2 (2 - a) / ...)), modified Lentz."""
    b = x + 1 - a
    c = b * 0 + 1 / _TINY
    d = 1 / b
    h = d
    done = b != b  # all False
    for i in range(1, _MAX_TERMS + 1):
        an = -i * (i - a)
        b = b + 2
        d = an * d + b
        d = _C.where(d.abs() < _TINY, _full(d, _TINY), d)
        c = b + an / c
        c = _C.where(c.abs() < _TINY, _full(c, _TINY), c)
        d = 1 / d
        delta = d * c
        # an element stays put once converged: for integer a the fraction
        # ends (an = 0 at i = a), and going on past that would restart it
        h = _C.where(done, h, h * delta)
        done = done | ((delta - 1).abs() <= _EPS)
        if i % _CHECK_EVERY == 0 and bool(done.all()):
            break
    else:
        _too_large()
    return (_log_prefactor(a, x).exp() * h).clamp(min=0.0, max=1.0)


_ZETA_INT = []  # zeta(2), ..., zeta(42) as Python floats, made on first use


def _zeta_ints():
    """zeta(k), k = 2..42: 1000 terms summed exactly (fsum) plus the
    Euler-Maclaurin tail, to within an ulp."""
    if not _ZETA_INT:
        n = 1000.0
        for k in range(2, 43):
            tail = n ** (1 - k) / (k - 1) - 0.5 * n ** -k + k * n ** (-k - 1) / 12 \
                - k * (k + 1) * (k + 2) * n ** (-k - 3) / 720
            _ZETA_INT.append(math.fsum([i ** -float(k) for i in range(1, 1001)] + [tail]))
    return _ZETA_INT


def _lgamma1p(a):
    """lgamma(1 + a) for 0 <= a <= 1.5 without the rounding of 1 + a:
    Taylor's series -gamma a + sum (-1)^k zeta(k) a^k / k on |a| <= 0.5,
    log(a) + lgamma1p(a - 1) on (0.5, 1.5] (the same series at a - 1)."""
    shift = a > 0.5
    t = _C.where(shift, a - 1, a)
    zk = _zeta_ints()
    r = t * 0
    for k in range(42, 1, -1):  # Horner on sum_{k>=2} (-1)^k zeta(k)/k t^(k-2)
        r = r * t + (zk[k - 2] / k) * (1 if k % 2 == 0 else -1)
    r = t * (t * r - 0.5772156649015329)
    return _C.where(shift, r + _C.where(shift, a, _full(a, 1.0)).log(), r)


def _upper_series_small_x(a, x):
    """Q(a, x) for x <= 1.1 and small a, where 1 - P would cancel (Cephes'
    igamc_series): -expm1(a log x - lgamma(1 + a)) - x^a / Gamma(a) sum_{n>=1}
    (-x)^n / (n! (a + n)); 40 terms reach 1e-17 at x = 1.1."""
    fac, total = x * 0 + 1, x * 0
    for n in range(1, 41):
        fac = fac * -x / n
        total = total + fac / (a + n)
    logx = x.log()
    return -(a * logx - _lgamma1p(a)).expm1() - (a * logx - a.lgamma()).exp() * total


def _igamma_pq(a, x):
    """(P, Q) for float64 a, x of one shape, with torch's values at the edges."""
    nan = (a < 0) | (x < 0) | a.isnan() | x.isnan() | ((a == 0) & (x == 0)) | (a.isinf() & x.isinf())
    p_one = ~nan & ((x.isinf()) | ((a == 0) & (x > 0)))
    p_zero = ~nan & ~p_one & ((x == 0) | a.isinf())
    regular = ~nan & ~p_one & ~p_zero
    if bool((regular & (a > _A_MAX) & ((x - a).abs() < 40 * a.sqrt())).any()):
        _too_large()
    use_series = regular & (x < a + 1)
    use_cf = regular & ~use_series
    one = _full(a, 1.0)
    # each loop only where some element takes it (the filler converges at once)
    p_series = (_lower_series(_C.where(use_series, a, one), _C.where(use_series, x, _full(x, 0.5)))
                if bool(use_series.any()) else a * 0)
    q_cf = (_upper_fraction(_C.where(use_cf, a, one), _C.where(use_cf, x, _full(x, 3.0)))
            if bool(use_cf.any()) else a * 0)
    p = _C.where(use_series, p_series, 1 - q_cf)
    q = _C.where(use_series, 1 - p_series, q_cf)
    # small x and a: Q directly (1 - P would keep only its absolute accuracy)
    small = regular & (x <= 1.1) & _C.where(x <= 0.5, a * x.log() >= -0.4, a <= 1.1 * x) & (a <= 1.5)
    if bool(small.any()):
        q_small = _upper_series_small_x(_C.where(small, a, _full(a, 0.5)), _C.where(small, x, _full(x, 0.5)))
        p = _C.where(small, 1 - q_small, p)
        q = _C.where(small, q_small, q)
    zero, nanv = _full(a, 0.0), _full(a, math.nan)
    p = _C.where(p_one, one, _C.where(p_zero, zero, p))
    q = _C.where(p_one, zero, _C.where(p_zero, one, q))
    return _C.where(nan, nanv, p), _C.where(nan, nanv, q)


class _IGamma(Function):
    @staticmethod
    def forward(ctx, a, x, upper, dtype):
        a64, x64, _ = _pair("igamma", a, x)
        p, q = _igamma_pq(a64, x64)
        ctx.save_for_backward(a, x)
        ctx.upper = upper
        return (q if upper else p).to(dtype)

    @staticmethod
    def backward(ctx, grad):
        a, x = ctx.saved_tensors
        if ctx.needs_input_grad[0]:
            raise NotImplementedError("the derivative for '%s: input' is not implemented."
                                      % ("igammac" if ctx.upper else "igamma"))
        if not ctx.needs_input_grad[1]:
            return None, None, None, None
        # d/dx P(a, x) = x^(a-1) e^-x / Gamma(a), computed in logs
        dens = ((a - 1) * x.log() - x - a.lgamma()).exp()
        g = grad * (-dens if ctx.upper else dens)
        return None, g.sum_to_size(x.shape).to(x.dtype), None, None


def _as_tensors(name, a, b):
    """(a, b, result dtype), numbers made 0-dim tensors beside the other operand."""
    _check(name, a, b)
    dtype = result_type(a, b)
    dev = a.device if isinstance(a, _C.Tensor) else b.device
    ft = dtype if dtype.is_floating_point else _C.float64
    a = a if isinstance(a, _C.Tensor) else _C.tensor(float(a), dtype=ft, device=dev)
    b = b if isinstance(b, _C.Tensor) else _C.tensor(float(b), dtype=ft, device=dev)
    return a, b, dtype


def _igamma(name, input, other, upper, out):
    input, other, dtype = _as_tensors(name, input, other)
    if not dtype.is_floating_point:
        raise NotImplementedError('"%s" not implemented for \'%s\''
                                  % (name, str(dtype).split(".")[-1].capitalize()))
    r = _IGamma.apply(input, other, upper, dtype)
    return r if out is None else out.copy_(r)


def gammainc(input, other, *, out=None):
    """The regularised lower incomplete gamma P(a, x) = gamma(a, x) / Gamma(a)
    (a = input, x = other)."""
    return _igamma("igamma", input, other, False, out)


def gammaincc(input, other, *, out=None):
    """The regularised upper incomplete gamma Q(a, x) = 1 - P(a, x)."""
    return _igamma("igammac", input, other, True, out)


igamma = gammainc
igammac = gammaincc


def _inplace(self, r):
    if r.dtype != self.dtype:
        raise RuntimeError("result type %s can't be cast to the desired output type %s"
                           % (str(r.dtype).split(".")[-1].capitalize(), str(self.dtype).split(".")[-1].capitalize()))
    return self.copy_(r)


def igamma_(self, other):
    return _inplace(self, gammainc(self, other))


def igammac_(self, other):
    return _inplace(self, gammaincc(self, other))


# ---- the Hurwitz zeta function -------------------------------------------------------

_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
           -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
           1.8152105401943546773e17, -7.1661652561756670113e18)  # (2k)! / B_2k
_ZETA_MAX_SHIFT = 1 << 20  # q down to about -10^6 (where x is an integer)


def _zeta64(x, q):
    """zeta(x, q) for float64 tensors of one shape, with Cephes' domain rules."""
    q_le0 = q <= 0
    inf = (x == 1) | (~(x < 1) & q_le0 & (q == q.floor()))
    nan = ~inf & ((x < 1) | (q_le0 & (x != x.floor())) | x.isnan() | q.isnan() | (q == math.inf))
    ok = ~inf & ~nan
    xs = _C.where(ok, x, _full(x, 2.0))
    qs = _C.where(ok, q, _full(q, 1.0))
    # m terms past q: at least 9 and until q + m > 9
    m = (9 - qs).floor() + 1
    m = _C.where(m < 9, _full(m, 9.0), m)
    n_max = int(m.max().item()) if m.numel() else 0
    if n_max > _ZETA_MAX_SHIFT:
        raise NotImplementedError("zeta(x, q): q = %g is too far below 0 for the direct sum (q >= -%d "
                                  "is supported)" % (-n_max + 9, _ZETA_MAX_SHIFT - 9))
    s = qs.pow(-xs)
    for i in range(1, n_max + 1):
        s = s + _C.where(m >= i, (qs + i).pow(-xs), _full(s, 0.0))
    w = qs + m
    b = w.pow(-xs)
    # the Euler-Maclaurin tail, where it is not negligible (it would be inf * 0 for huge x)
    tail_on = b.abs() > _EPS * s.abs()
    xt = _C.where(tail_on, xs, _full(xs, 2.0))
    bt = _C.where(tail_on, b, _full(b, 0.0))
    tail = bt * w / (xt - 1) - 0.5 * bt
    a, k = xt * 0 + 1, 0.0
    for coef in _ZETA_A:
        a = a * (xt + k)
        bt = bt / w
        tail = tail + a * bt / coef
        k += 1
        a = a * (xt + k)
        bt = bt / w
        k += 1
    s = s + tail
    return _C.where(inf, _full(s, math.inf), _C.where(nan, _full(s, math.nan), s))


class _Zeta(Function):
    @staticmethod
    def forward(ctx, x, q, dtype):
        x64, q64, _ = _pair("zeta", x, q, ("input", "other"))
        ctx.save_for_backward(x, q)
        ctx.dtype = dtype
        return _zeta64(x64, q64).to(dtype)

    @staticmethod
    def backward(ctx, grad):
        x, q = ctx.saved_tensors
        if ctx.needs_input_grad[0]:
            raise NotImplementedError("the derivative for 'zeta' is not implemented.")
        if not ctx.needs_input_grad[1]:
            return None, None, None
        g = grad * -x * _Zeta.apply(x + 1, q, ctx.dtype)
        return None, g.sum_to_size(q.shape).to(q.dtype), None


def zeta(input, other, *, out=None):
    """The Hurwitz zeta function sum_k (k + q)^-x (x = input, q = other): inf
    at x = 1 and at non-positive integer q, nan for x < 1 and for negative q
    with a non-integer x."""
    input, other, dtype = _as_tensors("zeta", input, other)
    if not dtype.is_floating_point:
        dtype = _C.get_default_dtype()
    r = _Zeta.apply(input, other, dtype)
    return r if out is None else out.copy_(r)


def polygamma_zeta(n, x):
    """polygamma(n, x) = (-1)^(n+1) n! zeta(n + 1, x) for n >= 2 (float x)."""
    sign = 1.0 if n % 2 else -1.0
    scale = sign * (math.exp(math.lgamma(n + 1.0)) if n <= 170 else math.inf)  # n! overflows past 170
    return scale * zeta(_C.full((), float(n + 1), dtype=x.dtype, device=x.device), x)
