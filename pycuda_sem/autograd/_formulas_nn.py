"""Backward formulas of the fused training layers (csrc/ops/fused_layers.c):
layer_norm/rms_norm, cross entropy with class indices, Philox dropout.

The plain backward is one fused kernel (the op's *_backward twin). Under
create_graph (grad mode on during backward) the gradient is composed from
differentiable ops instead, so double backward works.
"""
from .. import _C
from ._formulas import formula, needs


def _composed_norm(x, w, mean, rstd, rms, gy, n):
    # xh = (x - mean) rstd over rows of n; the classic layer-norm backward
    rows = rstd.numel()
    xr, gr = x.reshape(rows, n), gy.reshape(rows, n)
    rs = rstd.reshape(rows, 1)
    xh = xr * rs if rms else (xr - mean.reshape(rows, 1)) * rs
    dh = gr if w is None else gr * w.reshape(1, n)
    m2 = (dh * xh).mean(1, keepdim=True)
    gx = dh - xh * m2 if rms else dh - dh.mean(1, keepdim=True) - xh * m2
    return (rs * gx).reshape(x.shape), (gr * xh).sum(0), gr.sum(0)


@formula("_layer_norm", save=(0, 2), result=(1, 2), materialize=False)
def _layer_norm(ctx, gy, *gstats):
    x, w = ctx.args[0], ctx.args[2]
    n, rms = int(ctx.args[1]), bool(ctx.args[5]) if len(ctx.args) > 5 else bool(ctx.kwargs.get("rms"))
    res = ctx.result
    mean, rstd = (None, res[1]) if rms else (res[1], res[2])
    need = (needs(ctx, 0), needs(ctx, 2) and w is not None, needs(ctx, 3))
    if gy is None:  # the output itself is not kept (it may change in place)
        gy = _C.zeros_like(x)
    if _C.is_grad_enabled():
        gx, gw, gb = _composed_norm(x, w, mean, rstd, rms, gy, n)
    else:
        gx, gw, gb = _C._layer_norm_backward(gy, x, mean, rstd, w, n, rms, need)
    # mean and rstd as outputs (rarely used): d mean/dx = 1/n,
    # d rstd/dx = -rstd^3 (x - mean) / n
    gm, gr = (None, gstats[0]) if rms else (gstats + (None, None))[:2]
    if gx is not None and (gm is not None or gr is not None):
        rows = rstd.numel()
        xr = x.reshape(rows, n)
        extra = 0
        if gm is not None:
            extra = extra + gm.reshape(rows, 1) / n
        if gr is not None:
            d = xr if rms else xr - mean.reshape(rows, 1)
            extra = extra - gr.reshape(rows, 1) * rstd.reshape(rows, 1).pow(3) * d / n
        gx = gx + extra.reshape(x.shape)
    gw = gw.reshape(tuple(ctx.shapes[2])) if need[1] and gw is not None else None
    gb = gb.reshape(tuple(ctx.shapes[3])) if need[2] and gb is not None else None
    return (gx if need[0] else None, None, gw, gb)


def _composed_xent(x, t, w, ignore, ls, gl):
    # differentiable twin of _cross_entropy_backward (double backward)
    n, c = x.shape
    keep = t != ignore
    safe = _C.where(keep, t, 0)
    p = x.log_softmax(1).exp()
    onehot = _C.zeros_like(x).scatter(1, safe.unsqueeze(1), 1.0)
    wt = keep.to(x.dtype) if w is None else w.to(x.dtype)[safe] * keep.to(x.dtype)
    gx = (1 - ls) * wt.unsqueeze(1) * (p - onehot)
    if ls > 0:
        wv = _C.ones(c, dtype=x.dtype, device=x.device) if w is None else w.to(x.dtype)
        gx = gx + (ls / c) * keep.to(x.dtype).unsqueeze(1) * (wv.sum() * p - wv.unsqueeze(0))
    return gl.reshape(-1, 1) * gx


@formula("_cross_entropy", save=(0, 1, 2), result=True, materialize=False,
         node_name="NllLossBackward0")
def _cross_entropy(ctx, gl, glse=None, gdenom=None):
    x, t, w, ignore, ls = ctx.args[:5]
    lse = ctx.result[1]
    gx = None
    reduction = ctx.args[5] if len(ctx.args) > 5 else 0
    if gl is not None and reduction:
        # result is (reduced loss, lse, denominator): every row gets the
        # reduced loss's gradient, over the denominator for a mean
        gl = gl / ctx.result[2] if reduction == 2 else gl
    if gl is not None:
        if _C.is_grad_enabled():
            gx = _composed_xent(x, t, w, ignore, ls, gl)
        else:
            gx = _C._cross_entropy_backward(gl, x, t, w, lse, ignore, ls)
    if glse is not None:  # d lse / dx = softmax(x)
        p = x.log_softmax(1).exp() * glse.reshape(-1, 1)
        gx = p if gx is None else gx + p
    return (gx, None, None, None, None)


@formula("_philox_dropout")
def _philox_dropout(ctx, g):
    # linear in the input: the same mask (seed, offset) on the gradient
    a = ctx.args
    return (_C._philox_dropout(g, a[1], a[2], a[3]), None, None, None)
