"""Backward formulas of reductions (sum mean prod amax amin max min std var
norm logsumexp dist trace), scans (cumsum cumprod cummax cummin
logcumsumexp) and sorting/selection (sort msort topk kthvalue median
nanmedian mode): the incoming gradient is put back on the reduced dims and
broadcast, or scattered to the positions the op selected.
"""
import math

from .. import _C
from ._formulas import (
    arg, conj, formula, is_tensor, needs, ones, reduced_dims, register, sgn, unreduce, zeros,
)


def _dim(ctx, i=1):
    d = arg(ctx, i, "dim")
    return ctx.kwargs.get("axis") if d is None else d


def _count(in_shape, dims):
    n = 1
    for d in dims:
        n *= in_shape[d]
    return n


# ---- sum, mean, prod -------------------------------------------------------------------

@formula("sum")
def _sum(ctx, g):
    shape = ctx.shapes[0]
    return (unreduce(g, shape, _dim(ctx), arg(ctx, 2, "keepdim", False)).expand(tuple(shape)),)


@formula("mean")
def _mean(ctx, g):
    shape = ctx.shapes[0]
    dim = _dim(ctx)
    n = _count(shape, reduced_dims(dim, len(shape)))
    g = unreduce(g, shape, dim, arg(ctx, 2, "keepdim", False))
    return ((g / n).expand(tuple(shape)),)


def _prod_except(x, d):
    """Along dim d, the product of all the other elements: exclusive cumprods
    from both ends, right for zeros too (torch's prod_safe_zeros_backward)."""
    n = x.shape[d]
    if n == 1:
        return ones(x.shape, x)
    one_shape = list(x.shape)
    one_shape[d] = 1
    one = ones(one_shape, x)
    left = _C.cat([one, x.narrow(d, 0, n - 1)], d).cumprod(d)
    right = _C.cat([x.narrow(d, 1, n - 1), one], d).flip([d]).cumprod(d).flip([d])
    return left * right


@formula("prod", save=(0,))
def _prod(ctx, g):
    x = ctx.args[0]
    dim = _dim(ctx)
    if x.dim() == 0:
        return (g,)
    if dim is None:
        return ((g * conj(_prod_except(x.reshape(-1), 0))).reshape(x.shape),)
    d = int(dim) % x.dim()
    g = unreduce(g, x.shape, d, arg(ctx, 2, "keepdim", False))
    return (g * conj(_prod_except(x, d)),)


# ---- amax, amin, max, min ----------------------------------------------------------------

def _amax_like(ctx, g):
    x, r = ctx.args[0], ctx.result
    dim = _dim(ctx)
    if dim is None and len(ctx.args) < 2:
        dim = ()
    keep = arg(ctx, 2, "keepdim", False)
    r_u = unreduce(r, x.shape, dim, keep)
    g_u = unreduce(g, x.shape, dim, keep)
    mask = (x == r_u).to(g.dtype)
    dims = reduced_dims(dim, x.dim())
    count = mask.sum(dims, keepdim=True) if dims else mask
    return (g_u * mask / count,)


register("amax", _amax_like, save=(0,), result=True)
register("amin", _amax_like, save=(0,), result=True)


def _indices(ctx, op):
    """The indices output of a (values, indices) op. The contract puts it in
    ctx.result; an engine that saves only the differentiable outputs gets it
    by running the op again on the saved input (same input, same indices)."""
    r = ctx.result
    if isinstance(r, tuple) and len(r) > 1:
        return r[1]
    from .grad_mode import no_grad
    with no_grad():
        return op(ctx.args[0].detach(), *ctx.args[1:], **ctx.kwargs)[1]


def _select_back(g, idx, in_shape, dim, keepdim):
    """Gradient of values selected by indices along dim: scattered back."""
    if len(in_shape) == 0:
        return g.reshape(())
    if not keepdim:
        g = g.unsqueeze(dim)
        idx = idx.unsqueeze(dim)
    return zeros(in_shape, g).scatter(dim, idx, g)


def _max_min(greater):
    def fn(ctx, *grads):
        g = grads[0]
        x = ctx.args[0]
        a1 = arg(ctx, 1, "dim")
        other = ctx.kwargs.get("other")
        if is_tensor(a1) or other is not None:  # max(input, other)
            from ._formulas_math import _binary_extreme
            if other is not None:
                raise NotImplementedError("max/min: 'other' given by keyword has no gradient path")
            return _binary_extreme(ctx, g, greater)
        if a1 is None:  # full reduction: the value made again from x
            from .grad_mode import no_grad
            with no_grad():
                r = _C.amax(x.detach()) if greater else _C.amin(x.detach())
            return (_evenly_full(g, x, r),)
        idx = _indices(ctx, _C.max if greater else _C.min)
        d = int(a1) % max(x.dim(), 1)
        return (_select_back(g, idx, x.shape, d, arg(ctx, 2, "keepdim", False)),)
    return fn


def _evenly_full(g, x, r):
    mask = (x == r).to(g.dtype)
    return g * mask / mask.sum()


# the indices are kept, not the values (which a caller may scale in place)
register("max", _max_min(True), save=(0, 1), result=(1,))
register("min", _max_min(False), save=(0, 1), result=(1,))


# ---- var, std, norm, logsumexp, dist, trace -------------------------------------------------

def _var_args(ctx):
    dim = arg(ctx, 1, "dim")
    unb = arg(ctx, 2, "unbiased")
    if isinstance(dim, bool):
        unb, dim = dim, None
    keep = arg(ctx, 3, "keepdim", False)
    c = 1.0
    if unb is not None:
        c = 1.0 if unb else 0.0
    corr = ctx.kwargs.get("correction")
    if corr is not None:
        c = float(corr)
    return dim, keep, c


def _centered(ctx):
    x = ctx.args[0]
    dim, keep, c = _var_args(ctx)
    dims = reduced_dims(dim, x.dim())
    n = _count(x.shape, dims)
    mean = x.mean(dims, keepdim=True) if dims else x
    return x, dim, keep, c, n, x - mean


@formula("var", save=(0,))
def _var(ctx, g):
    x, dim, keep, c, n, xc = _centered(ctx)
    return (unreduce(g, x.shape, dim, keep) * xc * (2.0 / (n - c)),)


@formula("std", save=(0,), result=True)
def _std(ctx, g):
    x, dim, keep, c, n, xc = _centered(ctx)
    r_u = unreduce(ctx.result, x.shape, dim, keep)
    g_u = unreduce(g, x.shape, dim, keep)
    scale = _C.where(r_u == 0, 0, g_u / (_C.where(r_u == 0, 1, r_u) * (n - c)))
    return (xc * scale,)


def _norm_back(g_u, x, r_u, p, dims):
    """Gradient of the p-norm r of x over dims (r_u, g_u broadcastable)."""
    if p == 0:
        return x * 0
    if p == 1:
        return sgn(x) * g_u
    if p == 2:
        return x * _C.where(r_u == 0, 0, g_u / _C.where(r_u == 0, 1, r_u))
    if math.isinf(p):
        ax = x.abs()
        mask = (ax == r_u).to(ax.dtype)
        count = mask.sum(dims, keepdim=True) if dims else mask
        return sgn(x) * mask * g_u / count
    ax = x.abs()
    safe_r = _C.where(r_u == 0, 1, r_u)
    scale = _C.where(r_u == 0, 0, g_u / safe_r.pow(p - 1))
    if p < 1:
        return _C.where(ax == 0, 0, sgn(x) * ax.pow(p - 1)) * scale
    return sgn(x) * ax.pow(p - 1) * scale


def _p(v):
    return 2.0 if v is None or v == "fro" else float(v)


@formula("norm", save=(0,), result=True)
def _norm(ctx, g):
    x = ctx.args[0]
    p = _p(arg(ctx, 1, "p"))
    dim = arg(ctx, 2, "dim")
    keep = arg(ctx, 3, "keepdim", False)
    dims = reduced_dims(dim, x.dim())
    r_u = unreduce(ctx.result, x.shape, dim, keep)
    g_u = unreduce(g, x.shape, dim, keep)
    return (_norm_back(g_u, x, r_u, p, dims),)


@formula("dist", save=(0, 1), result=True)
def _dist(ctx, g):
    a, b = ctx.args[0], ctx.args[1]
    d = a - b
    gd = _norm_back(g, d, ctx.result, _p(arg(ctx, 2, "p")), tuple(range(d.dim())))
    return (gd if needs(ctx, 0) else None, -gd if needs(ctx, 1) else None)


@formula("logsumexp", save=(0,), result=True)
def _logsumexp(ctx, g):
    x = ctx.args[0]
    dim = _dim(ctx)
    keep = arg(ctx, 2, "keepdim", False)
    r_u = unreduce(ctx.result, x.shape, dim, keep)
    return (unreduce(g, x.shape, dim, keep) * (x - r_u).exp(),)


@formula("trace")
def _trace(ctx, g):
    n, m = ctx.shapes[0]
    return (_C.eye(n, m, dtype=g.dtype, device=g.device) * g,)


# ---- scans ----------------------------------------------------------------------------------

def _rev_cumsum(t, d):
    return t.flip([d]).cumsum(d).flip([d])


def _scan_dim(ctx, x_ndim):
    return int(arg(ctx, 1, "dim")) % max(x_ndim, 1)


@formula("cumsum cumsum_")
def _cumsum(ctx, g):
    if len(ctx.shapes[0]) == 0:
        return (g,)
    return (_rev_cumsum(g, _scan_dim(ctx, g.dim())),)


@formula("cumprod cumprod_", save=(0,), result=True)
def _cumprod(ctx, g):
    x = ctx.args[0]
    if x.dim() == 0:
        return (g,)
    d = _scan_dim(ctx, x.dim())
    if not bool((x == 0).any()):
        return (_rev_cumsum(g * conj(ctx.result), d) / conj(x),)
    # with zeros: out_k = prod_{j<=k} x_j, so d out_k / d x_i = prod_{j<=k, j!=i} x_j.
    # O(n^2) in the scanned dim, built from a triangular mask
    n = x.shape[d]
    xm = x.movedim(d, -1).unsqueeze(-2)  # [..., 1, n]: x_j
    gm = g.movedim(d, -1)  # [..., n]: g_k
    rows = []
    for i in range(n):  # row i: sum_k>=i g_k prod_{j<=k, j!=i} x_j
        xi = _C.cat([xm[..., :i], ones(xm[..., i:i + 1].shape, x), xm[..., i + 1:]], -1)
        pre = xi.squeeze(-2).cumprod(-1)
        rows.append((gm[..., i:] * conj(pre[..., i:])).sum(-1))
    return (_C.stack(rows, -1).movedim(-1, d),)


@formula("logcumsumexp", save=(0,), result=True)
def _logcumsumexp(ctx, g):
    # torch's: split g by sign, each part through a reversed logcumsumexp in log space
    x, r = ctx.args[0], ctx.result
    if x.dim() == 0:
        return (g,)
    d = _scan_dim(ctx, x.dim())
    lowest = -1e300 if g.dtype is _C.float64 else -3e38
    la = g.abs().log()
    pos = _C.where(g > 0, la, lowest)
    neg = _C.where(g < 0, la, lowest)

    def rev_lcse(t):
        return t.flip([d]).logcumsumexp(d).flip([d])
    return ((rev_lcse(pos - r) + x).exp() - (rev_lcse(neg - r) + x).exp(),)


def _scan_select_of(op):
    def fn(ctx, gv, *rest):
        x_shape = ctx.shapes[0]
        if len(x_shape) == 0:
            return (gv,)
        d = int(arg(ctx, 1, "dim")) % len(x_shape)
        return (zeros(x_shape, gv).scatter_add(d, _indices(ctx, op), gv),)
    return fn


register("cummax", _scan_select_of(_C.cummax), result=(1,))
register("cummin", _scan_select_of(_C.cummin), result=(1,))


# ---- sorting and selection -------------------------------------------------------------------

@formula("sort", result=(1,))
def _sort(ctx, gv, *rest):
    x_shape = ctx.shapes[0]
    if len(x_shape) == 0:
        return (gv,)
    d = int(arg(ctx, 1, "dim", -1)) % len(x_shape)
    return (zeros(x_shape, gv).scatter(d, _indices(ctx, _C.sort), gv),)


@formula("topk", result=(1,))
def _topk(ctx, gv, *rest):
    x_shape = ctx.shapes[0]
    if len(x_shape) == 0:
        return (gv,)
    d = int(arg(ctx, 2, "dim", -1)) % len(x_shape)
    return (zeros(x_shape, gv).scatter(d, _indices(ctx, _C.topk), gv),)


@formula("msort", save=(0,))
def _msort(ctx, g):
    x = ctx.args[0]
    if x.dim() == 0:
        return (g,)
    idx = x.argsort(0, stable=True)
    return (zeros(x.shape, g).scatter(0, idx, g),)


def _kth_like(dim_pos, op):
    def fn(ctx, *grads):
        gv = grads[0]
        x_shape = ctx.shapes[0]
        r = ctx.result
        if not isinstance(r, tuple):  # median() / nanmedian() of all elements: shared among equals
            from .grad_mode import no_grad
            with no_grad():
                r = op(ctx.args[0].detach())
            return (_evenly_full(gv, ctx.args[0], r),)
        d = int(arg(ctx, dim_pos, "dim", -1)) % max(len(x_shape), 1)
        keep = arg(ctx, dim_pos + 1, "keepdim", False)
        return (_select_back(gv, _indices(ctx, op), x_shape, d, keep),)
    return fn


# the indices kept, the values free to change in place (as torch); the
# input too for the full median, whose gradient is shared among equals
register("kthvalue", _kth_like(2, _C.kthvalue), save=(0,), result=(1,))
register("median", _kth_like(1, _C.median), save=(0,), result=(1,))
register("nanmedian", _kth_like(1, _C.nanmedian), save=(0,), result=(1,))
register("mode", _kth_like(1, _C.mode), save=(0,), result=(1,))
