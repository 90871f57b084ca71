"""Backward formulas of indexing: x[key] and x[key] = v, index_select,
gather, scatter (and _add/_reduce), index_add/copy/fill/put, masked_fill,
masked_select, masked_scatter, take, take_along_dim.

The gradient of a gather-like op is a scatter-add of the incoming gradient
(and the other way round), so that both directions stay differentiable and
double backward works. x[key] goes through the index map, which handles
every key form the forward handles (ints, slices with steps, None,
Ellipsis, int and bool tensors, and their mixtures).
"""
from .. import _C
from ._formulas import arg, fit, formula, index_map, needs, via_map, zeros


def _shape0(ctx):
    return tuple(ctx.shapes[0])


# ---- x[key], x[key] = v, index_put ----------------------------------------------------------

@formula("__getitem__", save=(1,), node_name="IndexBackward0")
def _getitem(ctx, g):
    key = ctx.args[1]
    return (via_map(g, _shape0(ctx), lambda m: m[key]),)


def _overwritten(g, in_shape, positions):
    """g with zeros where the op wrote new values (flat positions)."""
    return g.reshape(-1).index_fill(0, positions.reshape(-1), 0).view(tuple(in_shape))


@formula("__setitem__", save=(1,), node_name="CopySlices")
def _setitem(ctx, g):
    key = ctx.args[1]
    shape = _shape0(ctx)
    out = [None, None, None]
    if needs(ctx, 0):
        out[0] = _overwritten(g, shape, index_map(shape, g.device)[key])
    if needs(ctx, 2):
        out[2] = fit(ctx, 2, g[key])
    return tuple(out)


@formula("index_put index_put_", save=(1,))
def _index_put(ctx, g):
    idx = tuple(ctx.args[1])
    shape = _shape0(ctx)
    acc = arg(ctx, 3, "accumulate", False)
    out = [None, None, None]
    if needs(ctx, 0):
        out[0] = g if acc else _overwritten(g, shape, index_map(shape, g.device)[idx])
    if needs(ctx, 2):
        out[2] = fit(ctx, 2, g[idx])
    return tuple(out)


# ---- gather, index_select, take ----------------------------------------------------------------

@formula("index_select", save=(2,))
def _index_select(ctx, g):
    dim, idx = arg(ctx, 1, "dim"), ctx.args[2]
    shape = _shape0(ctx)
    if len(shape) == 0:
        return (g.reshape(()),)
    return (zeros(shape, g).index_add(dim, idx.reshape(-1), g),)


@formula("gather", save=(2,))
def _gather(ctx, g):
    dim, idx = arg(ctx, 1, "dim"), ctx.args[2]
    shape = _shape0(ctx)
    if len(shape) == 0:
        return (g.reshape(()),)
    return (zeros(shape, g).scatter_add(dim, idx, g),)


@formula("take", save=(1,))
def _take(ctx, g):
    idx = ctx.args[1]
    return (via_map(g, _shape0(ctx), lambda m: m.take(idx)),)


@formula("take_along_dim", save=(1,))
def _take_along_dim(ctx, g):
    idx, dim = ctx.args[1], arg(ctx, 2, "dim")
    out = [via_map(g, _shape0(ctx), lambda m: _C.take_along_dim(m, idx, dim))]
    return tuple(out)


# ---- scatter family ---------------------------------------------------------------------------

def _src(ctx):
    """scatter's source: positional arg 3 (tensor or number) or src=/value=."""
    return arg(ctx, 3, "src", ctx.kwargs.get("value"))


@formula("scatter scatter_", save=(2,))
def _scatter(ctx, g):
    if ctx.kwargs.get("reduce") is not None:
        raise NotImplementedError("the derivative for 'scatter' with reduce= is not implemented")
    dim, idx = arg(ctx, 1, "dim"), ctx.args[2]
    out = [None] * len(ctx.args)
    if needs(ctx, 0):
        out[0] = g.scatter(dim, idx, 0)
    if needs(ctx, 3):
        out[3] = fit(ctx, 3, g.gather(dim, idx))
    return tuple(out)


@formula("scatter_add scatter_add_", save=(2,))
def _scatter_add(ctx, g):
    dim, idx = arg(ctx, 1, "dim"), ctx.args[2]
    out = [None] * len(ctx.args)
    if needs(ctx, 0):
        out[0] = g
    if needs(ctx, 3):
        out[3] = fit(ctx, 3, g.gather(dim, idx))
    return tuple(out)


@formula("scatter_reduce scatter_reduce_", save=(0, 2, 3), result=True)
def _scatter_reduce(ctx, g):
    x, dim, idx, src = ctx.args[0], arg(ctx, 1, "dim"), ctx.args[2], ctx.args[3]
    reduce = arg(ctx, 4, "reduce")
    incl = arg(ctx, 5, "include_self", True)
    r = ctx.result
    # positions that received at least one element of src
    hit = zeros(x.shape, g).scatter(dim, idx, 1) != 0
    gx = gs = None
    if reduce == "sum":
        gx = g if incl else _C.where(hit, 0, g)
        gs = g.gather(dim, idx)
    elif reduce == "mean":
        n = zeros(x.shape, g).scatter_add(dim, idx, _C.ones_like(src, dtype=g.dtype))
        if incl:
            n = n + 1
        n = _C.where(n == 0, 1, n)
        gx = g / n if incl else _C.where(hit, 0, g)
        gs = (g / n).gather(dim, idx)
    elif reduce in ("amax", "amin"):
        self_in = (x == r) if incl else ~hit
        src_in = src == r.gather(dim, idx)
        n = self_in.to(g.dtype).scatter_add(dim, idx, src_in.to(g.dtype))
        gx = _C.where(self_in, g / n, 0)
        gs = _C.where(src_in, (g / n).gather(dim, idx), 0)
    elif reduce == "prod":
        # zero-free inputs: d r / d v = r / v
        gx = (g * r / x) if incl else _C.where(hit, 0, g)
        gs = (g * r).gather(dim, idx) / src
    else:
        raise NotImplementedError("the derivative for 'scatter_reduce' with reduce=%r is not "
                                  "implemented" % (reduce,))
    return (gx if needs(ctx, 0) else None, None, None, gs if needs(ctx, 3) else None)


@formula("index_add index_add_", save=(2,))
def _index_add(ctx, g):
    dim, idx = arg(ctx, 1, "dim"), ctx.args[2]
    alpha = arg(ctx, 4, "alpha", 1)
    out = [None] * len(ctx.args)
    if needs(ctx, 0):
        out[0] = g
    if needs(ctx, 3):
        gs = g.index_select(dim, idx) if g.dim() else g.reshape(1)
        if alpha != 1:
            gs = gs * alpha
        out[3] = fit(ctx, 3, gs.reshape(tuple(ctx.shapes[3])))
    return tuple(out)


@formula("index_copy index_copy_", save=(2,))
def _index_copy(ctx, g):
    dim, idx = arg(ctx, 1, "dim"), ctx.args[2]
    out = [None] * len(ctx.args)
    if needs(ctx, 0):
        out[0] = g.index_fill(dim, idx, 0)
    if needs(ctx, 3):
        gs = g.index_select(dim, idx) if g.dim() else g.reshape(1)
        out[3] = fit(ctx, 3, gs.reshape(tuple(ctx.shapes[3])))
    return tuple(out)


@formula("index_fill index_fill_", save=(2,))
def _index_fill(ctx, g):
    dim, idx = arg(ctx, 1, "dim"), ctx.args[2]
    out = [None] * len(ctx.args)
    if needs(ctx, 0):
        out[0] = g.index_fill(dim, idx, 0)
    if needs(ctx, 3):
        out[3] = fit(ctx, 3, (g.index_select(dim, idx) if g.dim() else g).sum())
    return tuple(out)


# ---- masks --------------------------------------------------------------------------------------

@formula("masked_fill masked_fill_", save=(1,))
def _masked_fill(ctx, g):
    mask = ctx.args[1]
    out = [None] * len(ctx.args)
    if needs(ctx, 0):
        out[0] = _C.where(mask, 0, g)
    if needs(ctx, 2):
        out[2] = fit(ctx, 2, _C.where(mask, g, 0).sum())
    return tuple(out)


@formula("masked_select", save=(1,))
def _masked_select(ctx, g):
    mask = ctx.args[1]
    return (via_map(g, _shape0(ctx), lambda m: m.masked_select(mask)),)


@formula("masked_scatter masked_scatter_", save=(1,))
def _masked_scatter(ctx, g):
    mask = ctx.args[1]
    out = [None] * len(ctx.args)
    if needs(ctx, 0):
        out[0] = _C.where(mask, 0, g)
    if needs(ctx, 2):
        sshape = tuple(ctx.shapes[2])
        n_src = 1
        for s in sshape:
            n_src *= s
        sel = g.masked_select(mask)
        if sel.numel() < n_src:
            sel = _C.cat([sel, zeros((n_src - sel.numel(),), g)])
        out[2] = fit(ctx, 2, sel.reshape(sshape))
    return tuple(out)
