"""Backward formulas of elementwise ops: unary, binary, where/clamp/lerp, and
of the casts and moves (to, cuda, float ...), whose gradient is the incoming
one (the engine casts it to the input's dtype and moves it to its device).
"""
import math

from .. import _C
from ._formulas import (
    arg, conj, fit, formula, is_tensor, needs, register, sgn, zero_grad,
)

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)

# ---- unary: grad * conj(f'(x)) ----------------------------------------------------
# d(x, r) gives f' from the input x and/or the result r. Formulas that need
# only r save only r: the in-place variant (exp_) then saves nothing that
# the op overwrites.


def _unary(names, d, uses):
    save = (0,) if "x" in uses else ()

    def fn(ctx, g):
        return (g * conj(d(ctx.args[0], ctx.result)),)
    register(names, fn, save, "r" in uses)


_unary("exp exp_", lambda x, r: r, "r")
_unary("exp2 exp2_", lambda x, r: r * _LN2, "r")
_unary("expm1 expm1_", lambda x, r: r + 1, "r")
_unary("sqrt sqrt_", lambda x, r: 0.5 / r, "r")
_unary("rsqrt rsqrt_", lambda x, r: r.pow(3) * -0.5, "r")
_unary("tan tan_", lambda x, r: 1 + r * r, "r")
_unary("tanh tanh_", lambda x, r: 1 - r * r, "r")
_unary("sigmoid sigmoid_", lambda x, r: r * (1 - r), "r")
_unary("reciprocal reciprocal_", lambda x, r: -(r * r), "r")
_unary("log log_", lambda x, r: x.reciprocal(), "x")
_unary("log2 log2_", lambda x, r: (x * _LN2).reciprocal(), "x")
_unary("log10 log10_", lambda x, r: (x * _LN10).reciprocal(), "x")
_unary("log1p log1p_", lambda x, r: (x + 1).reciprocal(), "x")
_unary("sin sin_", lambda x, r: x.cos(), "x")
_unary("cos cos_", lambda x, r: -x.sin(), "x")
_unary("asin asin_ arcsin arcsin_", lambda x, r: (1 - x * x).rsqrt(), "x")
_unary("acos acos_ arccos arccos_", lambda x, r: -(1 - x * x).rsqrt(), "x")
_unary("atan atan_ arctan arctan_", lambda x, r: (1 + x * x).reciprocal(), "x")
_unary("sinh sinh_", lambda x, r: x.cosh(), "x")
_unary("cosh cosh_", lambda x, r: x.sinh(), "x")
_unary("square square_", lambda x, r: 2 * x, "x")
_unary("erf erf_", lambda x, r: (-x * x).exp() * _TWO_OVER_SQRT_PI, "x")
_unary("erfc erfc_", lambda x, r: (-x * x).exp() * -_TWO_OVER_SQRT_PI, "x")
_unary("erfinv erfinv_", lambda x, r: (r * r).exp() / _TWO_OVER_SQRT_PI, "r")
_unary("lgamma lgamma_", lambda x, r: x.digamma(), "x")
# _trigamma has no formula: its derivative, polygamma(2, x), has no kernel,
# and the engine refuses to differentiate it (NotImplementedError)
_unary("digamma digamma_", lambda x, r: _C._trigamma(x), "x")


@formula("neg neg_ negative negative_")
def _neg(ctx, g):
    return (-g,)


@formula("pos frac frac_")
def _identity(ctx, g):
    return (g,)


@formula("abs abs_ absolute absolute_", save=(0,))
def _abs(ctx, g):
    return (g * sgn(ctx.args[0]),)


@formula("relu relu_", result=True)
def _relu(ctx, g):
    # torch's threshold_backward: 0 where result <= 0, so a NaN lets g through
    return (_C.where(ctx.result <= 0, 0.0, g),)


@formula("_threshold_backward", save=(1,))
def _threshold_backward(ctx, g):
    # relu's one-pass backward (the C formula's): linear in grad, flat in result
    return (_C._threshold_backward(g, ctx.args[1]), None)


_SQRT_2PI = math.sqrt(2.0 * math.pi)
_GELU_K = math.sqrt(2.0 / math.pi)
_GELU_C = 0.044715


@formula("gelu gelu_", save=(0,))
def _gelu(ctx, g):
    # one kernel (kernels/ew_ops.cuh GELU_BWD), itself differentiable below
    return (_C._gelu_backward(g, ctx.args[0], arg(ctx, 1, "approximate", "none")),)


@formula("_gelu_backward", save=(0, 1))
def _gelu_backward(ctx, gg):
    # d/dg: linear in g; d/dx: g * gelu''(x)
    g, x = ctx.args[0], ctx.args[1]
    approx = arg(ctx, 2, "approximate", "none")
    dg = _C._gelu_backward(gg, x, approx) if needs(ctx, 0) else None
    if not needs(ctx, 1):
        return (dg, None)
    if approx == "tanh":
        x2 = x * x
        t = (_GELU_K * (x + _GELU_C * x2 * x)).tanh()
        du = _GELU_K * (1 + 3 * _GELU_C * x2)
        d2 = (1 - t * t) * (du + 0.5 * x * (6 * _GELU_K * _GELU_C * x - 2 * t * du * du))
    else:
        # phi(x) (2 - x^2), phi the standard normal density
        d2 = (-0.5 * x * x).exp() * (2 - x * x) / _SQRT_2PI
    return (dg, gg * g * d2)


@formula("nan_to_num nan_to_num_", save=(0,))
def _nan_to_num(ctx, g):
    return (_C.where(ctx.args[0].isfinite(), g, 0),)


# zero almost everywhere; torch keeps them in the graph with a zero gradient
register("floor floor_ ceil ceil_ round round_ trunc trunc_ fix fix_ sign sign_ "
         "floor_divide floor_divide_", zero_grad)
register("eq_ ne_ lt_ le_ gt_ ge_ logical_and_ logical_or_ logical_xor_ logical_not_", zero_grad,
         node_name="ZeroBackward0")
register("fill_ zero_", zero_grad, node_name="FillBackward0")


@formula("real", node_name="RealBackward0")
def _real(ctx, g):
    if ctx.dtypes[0].is_complex:
        return (g * (1 + 0j),)
    return (g,)


@formula("imag", node_name="ImagBackward0")
def _imag(ctx, g):
    return (g * 1j,)


# ---- binary --------------------------------------------------------------------------
# Either operand may be a Python number (1 - x is sub(1, x)): it gets None.


def _scalar(v, default):
    return default if v is None else v


@formula("add add_")
def _add(ctx, g):
    alpha = _scalar(arg(ctx, 2, "alpha"), 1)
    gb = None
    if needs(ctx, 1):
        gb = g if alpha == 1 else g * conj(alpha)
    return (fit(ctx, 0, g) if needs(ctx, 0) else None, fit(ctx, 1, gb))


@formula("sub sub_ subtract subtract_")
def _sub(ctx, g):
    alpha = _scalar(arg(ctx, 2, "alpha"), 1)
    gb = None
    if needs(ctx, 1):
        gb = -g if alpha == 1 else g * -conj(alpha)
    return (fit(ctx, 0, g) if needs(ctx, 0) else None, fit(ctx, 1, gb))


@formula("mul mul_ multiply multiply_", save=(0, 1), save_when=(1, 0))
def _mul(ctx, g):
    # each operand is kept only for the other's gradient: x * 2 keeps
    # nothing of x, which may then change in place (as torch)
    a, b = ctx.args[0], ctx.args[1]
    ga = fit(ctx, 0, g * conj(b)) if needs(ctx, 0) else None
    gb = fit(ctx, 1, g * conj(a)) if needs(ctx, 1) else None
    return (ga, gb)


@formula("div div_ divide divide_ true_divide true_divide_", save=(0, 1), save_when=(1, None))
def _div(ctx, g):
    # a is kept only when b requires grad (its gradient is -g a / b^2), so
    # x / 2 leaves x free to change in place, as torch; div_ then keeps a
    # copy of the a it overwrites
    if arg(ctx, 2, "rounding_mode") is not None:
        return (_C.zeros_like(g) if needs(ctx, 0) else None,
                _C.zeros_like(g) if needs(ctx, 1) else None)
    b = ctx.args[1]
    ga = fit(ctx, 0, g / conj(b)) if needs(ctx, 0) else None
    gb = fit(ctx, 1, -g * conj(ctx.args[0] / b / b)) if needs(ctx, 1) else None
    return (ga, gb)


@formula("remainder remainder_", save=(0, 1))
def _remainder(ctx, g):
    a, b = ctx.args[0], ctx.args[1]
    gb = None
    if needs(ctx, 1):
        gb = -g * _C.div(a, b, rounding_mode="floor")
    return (g if needs(ctx, 0) else None, gb)


@formula("pow pow_", save=(0, 1))
def _pow(ctx, g):
    a = ctx.args[0] if ctx.args else ctx.kwargs.get("self", ctx.kwargs.get("input"))
    e = arg(ctx, 1, "exponent", ctx.kwargs.get("other"))
    ga = gb = None
    if needs(ctx, 0):
        if is_tensor(e):
            d = _C.where(e == 0, 0, e * a.pow(e - 1))
        elif e == 0:
            d = a * 0
        else:
            d = e * a.pow(e - 1)
        ga = fit(ctx, 0, g * conj(d))
    if needs(ctx, 1):
        # the result is made again rather than kept, so that x ** 2 may be
        # changed in place afterwards (torch keeps only x there)
        r = _C.pow(a, e)
        if is_tensor(a):
            la = a.log()
            if not a.is_complex():
                # 0 ** e has derivative 0 in e for e >= 0 (torch's convention)
                la = _C.where((a == 0) & (e >= 0), 0, la)
            d = r * la
        else:
            d = r * (math.log(a) if not isinstance(a, complex) else complex(_cmath_log(a)))
        gb = fit(ctx, 1, g * conj(d))
    return (ga, gb)


def _cmath_log(z):
    import cmath
    return cmath.log(z)


@formula("atan2 atan2_ arctan2", save=(0, 1))
def _atan2(ctx, g):
    a, b = ctx.args[0], ctx.args[1]
    den = a * a + b * b
    return (g * b / den if needs(ctx, 0) else None,
            g * -a / den if needs(ctx, 1) else None)


def _max_min_weights(a, b, greater):
    """Share of the gradient that goes to a: 1 where a wins, 1/2 on ties."""
    wins = (a > b) if greater else (a < b)
    w = wins.to(a.dtype if is_tensor(a) else b.dtype)
    return w + 0.5 * (a == b).to(w.dtype)


@formula("maximum maximum_", save=(0, 1))
def _maximum(ctx, g):
    return _binary_extreme(ctx, g, True)


@formula("minimum minimum_", save=(0, 1))
def _minimum(ctx, g):
    return _binary_extreme(ctx, g, False)


def _binary_extreme(ctx, g, greater, ia=0, ib=1):
    a, b = ctx.args[ia], ctx.args[ib]
    w = _max_min_weights(a, b, greater)
    out = [None] * len(ctx.args)
    if needs(ctx, ia):
        out[ia] = g * w
    if needs(ctx, ib):
        out[ib] = g * (1 - w)
    return tuple(out)


# ---- where, clamp, lerp --------------------------------------------------------------


@formula("where", save=(0, 1), save_when=(~0, ~1))
def _where(ctx, g):
    # only the condition is read: arg 0 of where(c, x, y), arg 1 of
    # x.where(c, y); a float arg that requires grad is not kept, so it may
    # change in place afterwards (as torch)
    args = ctx.args
    if ctx.dtypes[0] is _C.bool:  # where(condition, input, other)
        c, ix, io = args[0], 1, 2
    else:  # x.where(condition, other)
        c, ix, io = args[1], 0, 2
    out = [None] * len(args)
    if needs(ctx, ix):
        out[ix] = fit(ctx, ix, _C.where(c, g, 0))
    if needs(ctx, io):
        out[io] = fit(ctx, io, _C.where(c, 0, g))
    return tuple(out)


@formula("clamp clamp_ clip clip_", save=(0, 1, 2))
def _clamp(ctx, g):
    x = ctx.args[0]
    lo = arg(ctx, 1, "min")
    hi = arg(ctx, 2, "max")
    keep = None
    if lo is not None:
        keep = x >= lo
    if hi is not None:
        keep = (x <= hi) if keep is None else keep & (x <= hi)
    out = [None] * len(ctx.args)
    if needs(ctx, 0):
        out[0] = g if keep is None else _C.where(keep, g, 0)
    if needs(ctx, 1):
        low = x < lo
        if hi is not None:  # where min > max the result is max
            low = low & (lo <= hi)
        out[1] = _C.where(low, g, 0)
    if needs(ctx, 2):
        high = x > hi
        if lo is not None:
            high = high | (lo > hi)
        out[2] = _C.where(high, g, 0)
    return tuple(out)


@formula("lerp lerp_", save=(0, 1, 2), save_when=(2, 2, None))
def _lerp(ctx, g):
    a, b = ctx.args[0], ctx.args[1]
    w = arg(ctx, 2, "weight")
    ga = fit(ctx, 0, g * conj(1 - w)) if needs(ctx, 0) else None
    gb = fit(ctx, 1, g * conj(w)) if needs(ctx, 1) else None
    gw = fit(ctx, 2, g * conj(b - a)) if needs(ctx, 2) else None
    return (ga, gb, gw)


# ---- casts, moves, copies -------------------------------------------------------------
# The gradient flows back unchanged; the engine casts it to the input's dtype
# and moves it to the input's device. A real input of a cast to complex gets
# the real part.


@formula("to cuda cpu float double half bfloat16 cfloat cdouble type type_as pin_memory",
         node_name="ToCopyBackward0")
def _cast(ctx, g):
    return (fit(ctx, 0, g),)


register("clone contiguous", _cast, node_name="CloneBackward0")


@formula("copy_", node_name="CopyBackwards")
def _copy_(ctx, g):
    return (_C.zeros_like(g) if needs(ctx, 0) else None,
            fit(ctx, 1, g) if needs(ctx, 1) else None)
