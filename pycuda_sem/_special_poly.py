"""torch.special's orthogonal polynomials, p(x, n): chebyshev_polynomial_t/u/v/w,
their shifted_ forms (of 2x - 1), hermite_polynomial_h/he,
laguerre_polynomial_l and legendre_polynomial_p.

Each follows torch's definition, element by element, on whole tensors: n is
truncated to an integer (negative, nan or infinite n gives 0), the special
points x = +-1 have closed forms, Chebyshev's polynomials with |x| < 1 and n
past a small threshold use their trigonometric form (cos(n acos x), ...),
Hermite's give nan past n = 128 (float32) or 512 (float64) as torch's, and
every other element runs the three-term recurrence up to the largest such
n. That loop is bounded: n above _MAX_N where the recurrence is needed
raises NotImplementedError (torch would loop on), and it stops early once
every pending element is nan (the recurrence overflowed, as torch's stops).

The results carry no gradient (torch defines none for these)."""
import math

from . import _C
from ._dtype_info import result_type
from ._math import broadcast_shapes

_MAX_N = 1 << 17
_CHECK_EVERY = 64


def _operands(name, input, n):
    for v, what in ((input, "input"), (n, "n")):
        if not isinstance(v, (_C.Tensor, int, float)) or isinstance(v, bool):
            raise TypeError("%s(): argument '%s' must be Tensor, not %s" % (name, what, type(v).__name__))
    if not isinstance(input, _C.Tensor) and not isinstance(n, _C.Tensor):
        raise TypeError("%s(): argument 'input' must be Tensor, not %s" % (name, type(input).__name__))
    dtype = result_type(input, n)
    if not dtype.is_floating_point:
        dtype = _C.get_default_dtype()
    dev = input.device if isinstance(input, _C.Tensor) else n.device
    x = input.detach().to(dtype) if isinstance(input, _C.Tensor) else _C.tensor(float(input), dtype=dtype,
                                                                                    device=dev)
    nt = n.detach().double() if isinstance(n, _C.Tensor) else _C.tensor(float(n), dtype=_C.float64, device=dev)
    shape = broadcast_shapes(x.shape, nt.shape)
    x, nt = x.expand(shape), nt.expand(shape)
    # n as torch's int64 cast: truncated; nan, inf and |n| >= 2^63 become negative (x86 gives INT64_MIN)
    bad = nt.isnan() | (nt.abs() >= 2.0 ** 63)
    nt = _C.where(bad, _C.full((), -1.0, dtype=_C.float64, device=dev), nt.trunc())
    return x.contiguous(), nt.contiguous()


def _full(x, v):
    return _C.full((), v, dtype=x.dtype, device=x.device)


def _recur(x, nt, pending, p0, p1, step):
    """The recurrence r_k = step(k, r_{k-2}, r_{k-1}) from r_0 = p0, r_1 = p1,
    read off at k = n (for the pending elements; others get 0)."""
    nx = nt.to(x.dtype)
    res = _C.where(nt == 0, p0, _C.where(nt == 1, p1, _full(x, 0.0)))
    if not bool(pending.any()):
        return res
    n_max = int(_C.where(pending, nt, _C.zeros((), dtype=nt.dtype, device=nt.device)).max().item())
    if n_max > _MAX_N:
        raise NotImplementedError("orthogonal polynomial of degree n = %d: the recurrence is bounded at "
                                  "n = %d in pycuda_sem" % (n_max, _MAX_N))
    p, q = p0, p1
    for k in range(2, n_max + 1):
        r = step(k, p, q)
        res = _C.where(nx == k, r, res)
        p, q = q, r
        if k % _CHECK_EVERY == 0 and not bool((pending & (nt > k) & ~q.isnan()).any()):
            return _C.where(pending & (nt > k), _full(x, math.nan), res)  # all overflowed into nan
    return res


def _parity_sign(x, nt):
    """(-1)^n as x's dtype."""
    odd = (nt - 2 * (nt / 2).floor()) == 1
    return _C.where(odd, _full(x, -1.0), _full(x, 1.0))


def _chebyshev(name, input, n, kind, shifted, out):
    x, nt = _operands(name, input, n)
    y = x + x - 1 if shifted else x
    threshold = 6 if (shifted or kind == "t") else 8
    nx = nt.to(x.dtype)
    sgn = _parity_sign(x, nt)
    edge = y.abs() == 1
    trig = ~edge & (nt > threshold) & (y.abs() < 1)
    yt = _C.where(trig, y, _full(y, 0.5))
    th = yt.acos()
    if kind == "t":
        p1 = y
        edge_v = _C.where(y > 0, _full(x, 1.0), sgn)
        trig_v = (nx * th).cos()
    elif kind == "u":
        p1 = y + y
        edge_v = _C.where(y > 0, nx + 1, sgn * (nx + 1))
        s = th.sin()
        trig_v = _C.where(s != 0, ((nx + 1) * th).sin() / s, (nx + 1) * ((nx + 1) * th).cos() / yt)
    elif kind == "v":
        p1 = y + y - 1
        edge_v = _C.where(y > 0, _full(x, 1.0), sgn * (2 * nx + 1))
        trig_v = _C.where((th / 2).sin() != 1, ((nx + 0.5) * th).cos() / (th / 2).cos(), sgn * (2 * nx + 1))
    else:
        p1 = y + y + 1
        edge_v = _C.where(y > 0, 2 * nx + 1, sgn)
        c = (th / 2).cos()
        trig_v = _C.where(c != 1, ((nx + 0.5) * th).sin() / (th / 2).sin(),
                          _C.where(yt > 0, 2 * nx + 1, sgn))
    pending = (nt >= 2) & ~edge & ~trig
    one = _full(x, 1.0)
    r = _recur(x, nt, pending, one.expand(x.shape), p1, lambda k, p, q: (y + y) * q - p)
    r = _C.where(edge, edge_v, _C.where(trig, trig_v, r))
    r = _C.where(nt < 0, _full(x, 0.0), r)
    return r if out is None else out.copy_(r)


def chebyshev_polynomial_t(input, n, *, out=None):
    """T_n(x), Chebyshev's polynomial of the first kind."""
    return _chebyshev("chebyshev_polynomial_t", input, n, "t", False, out)


def chebyshev_polynomial_u(input, n, *, out=None):
    """U_n(x), Chebyshev's polynomial of the second kind."""
    return _chebyshev("chebyshev_polynomial_u", input, n, "u", False, out)


def chebyshev_polynomial_v(input, n, *, out=None):
    """V_n(x), Chebyshev's polynomial of the third kind."""
    return _chebyshev("chebyshev_polynomial_v", input, n, "v", False, out)


def chebyshev_polynomial_w(input, n, *, out=None):
    """W_n(x), Chebyshev's polynomial of the fourth kind."""
    return _chebyshev("chebyshev_polynomial_w", input, n, "w", False, out)


def shifted_chebyshev_polynomial_t(input, n, *, out=None):
    """T*_n(x) = T_n(2x - 1)."""
    return _chebyshev("shifted_chebyshev_polynomial_t", input, n, "t", True, out)


def shifted_chebyshev_polynomial_u(input, n, *, out=None):
    """U*_n(x) = U_n(2x - 1)."""
    return _chebyshev("shifted_chebyshev_polynomial_u", input, n, "u", True, out)


def shifted_chebyshev_polynomial_v(input, n, *, out=None):
    """V*_n(x) = V_n(2x - 1)."""
    return _chebyshev("shifted_chebyshev_polynomial_v", input, n, "v", True, out)


def shifted_chebyshev_polynomial_w(input, n, *, out=None):
    """W*_n(x) = W_n(2x - 1)."""
    return _chebyshev("shifted_chebyshev_polynomial_w", input, n, "w", True, out)


def _hermite(name, input, n, physicists, out):
    x, nt = _operands(name, input, n)
    limit = 128 if x.dtype == _C.float32 else 512 if x.dtype == _C.float64 else 1024
    over = nt > limit
    pending = (nt >= 2) & ~over
    one = _full(x, 1.0).expand(x.shape)
    if physicists:
        r = _recur(x, nt, pending, one, x + x, lambda k, p, q: (x + x) * q - (2 * (k - 1)) * p)
    else:
        r = _recur(x, nt, pending, one, x, lambda k, p, q: x * q - (k - 1) * p)
    r = _C.where(over, _full(x, math.nan), r)
    r = _C.where(nt < 0, _full(x, 0.0), r)
    return r if out is None else out.copy_(r)


def hermite_polynomial_h(input, n, *, out=None):
    """H_n(x), the physicists' Hermite polynomial (nan past n = 128 in float32, 512 in float64)."""
    return _hermite("hermite_polynomial_h", input, n, True, out)


def hermite_polynomial_he(input, n, *, out=None):
    """He_n(x), the probabilists' Hermite polynomial (nan past n = 128 / 512, as H)."""
    return _hermite("hermite_polynomial_he", input, n, False, out)


def laguerre_polynomial_l(input, n, *, out=None):
    """L_n(x), Laguerre's polynomial (1 at x = 0)."""
    x, nt = _operands("laguerre_polynomial_l", input, n)
    at0 = x.abs() == 0
    pending = (nt >= 2) & ~at0
    one = _full(x, 1.0).expand(x.shape)
    r = _recur(x, nt, pending, one, 1 - x,
               lambda k, p, q: ((2 * (k - 1) + 1 - x) * q - (k - 1) * p) / k)
    r = _C.where(at0, one, r)
    r = _C.where(nt < 0, _full(x, 0.0), r)
    return r if out is None else out.copy_(r)


def legendre_polynomial_p(input, n, *, out=None):
    """P_n(x), Legendre's polynomial."""
    x, nt = _operands("legendre_polynomial_p", input, n)
    edge = x.abs() == 1
    pending = (nt >= 2) & ~edge
    one = _full(x, 1.0).expand(x.shape)
    r = _recur(x, nt, pending, one, x, lambda k, p, q: ((2 * (k - 1) + 1) * x * q - (k - 1) * p) / k)
    r = _C.where(edge, _C.where(x > 0, one, _parity_sign(x, nt)), r)
    r = _C.where(nt < 0, _full(x, 0.0), r)
    return r if out is None else out.copy_(r)
