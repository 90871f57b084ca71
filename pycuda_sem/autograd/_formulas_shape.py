"""Backward formulas of views and shape ops (view reshape squeeze permute
transpose expand narrow select diagonal ...), of ops that move or repeat
elements (flip roll repeat tile repeat_interleave diag tril triu) and of
joining and splitting (cat stack split chunk tensor_split unbind).

Pure selections go through the index map (_formulas.via_map): the op is
applied to arange(numel).view(shape), which names the source of every
output element, and the gradient is index_add-ed back. One rule then covers
strides, negative steps, repeats and broadcasting.
"""
from .. import _C
from ._formulas import arg, formula, register, sum_to, via_map


def _shape0(ctx):
    return tuple(ctx.shapes[0])


# ---- views and reshapes ----------------------------------------------------------------

@formula("view view_as reshape reshape_as flatten squeeze unsqueeze",
         node_name="ViewBackward0")
def _reshape(ctx, g):
    if ctx.dtypes[0] != g.dtype and isinstance(arg(ctx, 1, "dtype"), _C.dtype):
        return (g.view(ctx.dtypes[0]),)  # view(dtype): the same bytes read back
    return (g.reshape(_shape0(ctx)),)


@formula("expand expand_as broadcast_to")
def _expand(ctx, g):
    return (sum_to(g, _shape0(ctx)),)


def _perm_args(ctx):
    a = ctx.args[1:]
    if not a:
        a = ctx.kwargs.get("dims")
    elif len(a) == 1 and isinstance(a[0], (tuple, list)):
        a = a[0]
    return [int(d) for d in a]


@formula("permute")
def _permute(ctx, g):
    perm = [d % g.dim() for d in _perm_args(ctx)] if g.dim() else []
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return (g.permute(inv),)


@formula("transpose swapaxes swapdims")
def _transpose(ctx, g):
    d0 = arg(ctx, 1, "dim0", ctx.kwargs.get("axis0"))
    d1 = arg(ctx, 2, "dim1", ctx.kwargs.get("axis1"))
    return (g.transpose(d0, d1),)


@formula("t")
def _t(ctx, g):
    return (g.t(),)


@formula("T", node_name="PermuteBackward0")
def _T(ctx, g):
    return (g.permute(list(range(g.dim()))[::-1]),)


@formula("mT", node_name="TransposeBackward0")
def _mT(ctx, g):
    return (g.transpose(-2, -1),)


@formula("movedim moveaxis")
def _movedim(ctx, g):
    return (g.movedim(arg(ctx, 2, "destination"), arg(ctx, 1, "source")),)


@formula("flip")
def _flip(ctx, g):
    return (g.flip(arg(ctx, 1, "dims")),)


@formula("fliplr")
def _fliplr(ctx, g):
    return (g.fliplr(),)


@formula("flipud")
def _flipud(ctx, g):
    return (g.flipud(),)


@formula("roll")
def _roll(ctx, g):
    shifts = arg(ctx, 1, "shifts")
    dims = arg(ctx, 2, "dims")
    neg = [-int(s) for s in shifts] if isinstance(shifts, (tuple, list)) else -int(shifts)
    if dims is None:
        return (g.roll(neg),)
    return (g.roll(neg, dims),)


@formula("_fft_roll")
def _fft_roll(ctx, g):
    shifts = arg(ctx, 1, "shifts")
    return (_C._fft_roll(g, tuple(-int(s) for s in shifts), arg(ctx, 2, "dims")),)


# ---- selections: via the index map ---------------------------------------------------------

def _via(op):
    """Formula of out = op(x, *rest): op applied to the index map."""
    def fn(ctx, g):
        rest = ctx.args[1:]
        kw = ctx.kwargs
        return (via_map(g, _shape0(ctx), lambda m: op(m, *rest, **kw)),)
    return fn


register("narrow", _via(_C.Tensor.narrow))
register("select", _via(_C.Tensor.select))
register("diagonal", _via(_C.Tensor.diagonal))
register("repeat", _via(_C.Tensor.repeat))
register("tile", _via(_C.Tensor.tile))
register("repeat_interleave", _via(_C.Tensor.repeat_interleave), save=(1,))


@formula("as_strided", save=(0,))
def _as_strided(ctx, g):
    # storage positions relative to x's first element name x's elements when
    # x is contiguous; torch's general rule for overlapping layouts is not here
    x = ctx.args[0]
    if not x.is_contiguous():
        raise NotImplementedError("the derivative of as_strided is implemented for a "
                                  "contiguous input only")
    off = arg(ctx, 3, "storage_offset")
    rel = 0 if off is None else int(off) - x.storage_offset()
    size, stride = arg(ctx, 1, "size"), arg(ctx, 2, "stride")
    return (via_map(g, _shape0(ctx), lambda m: m.as_strided(size, stride, rel)),)


@formula("diag")
def _diag(ctx, g):
    k = arg(ctx, 1, "diagonal", 0)
    if len(ctx.shapes[0]) == 1:
        return (g.diagonal(k),)
    return (via_map(g, _shape0(ctx), lambda m: m.diag(k)),)


@formula("diag_embed")
def _diag_embed(ctx, g):
    return (g.diagonal(arg(ctx, 1, "offset", 0), arg(ctx, 2, "dim1", -2),
                       arg(ctx, 3, "dim2", -1)),)


@formula("tril tril_")
def _tril(ctx, g):
    return (g.tril(arg(ctx, 1, "diagonal", 0)),)


@formula("triu triu_")
def _triu(ctx, g):
    return (g.triu(arg(ctx, 1, "diagonal", 0)),)


# ---- joining and splitting -----------------------------------------------------------------

@formula("cat concat concatenate")
def _cat(ctx, g):
    shapes = ctx.shapes[0]
    dim = arg(ctx, 1, "dim", ctx.kwargs.get("axis", 0))
    d = int(dim) % g.dim()
    out, off = [], 0
    for s in shapes:
        if len(s) == 1 and s[0] == 0 and g.dim() != 1:
            out.append(None)  # a legacy empty 1-D operand takes no part
            continue
        out.append(g.narrow(d, off, s[d]))
        off += s[d]
    return (tuple(out),)


@formula("stack")
def _stack(ctx, g):
    return (tuple(g.unbind(arg(ctx, 1, "dim", 0))),)


@formula("unbind")
def _unbind(ctx, *grads):
    return (_C.stack(list(grads), arg(ctx, 1, "dim", 0)),)


def _join_pieces(dim_pos):
    def fn(ctx, *grads):
        d = int(arg(ctx, dim_pos, "dim", 0)) % max(len(ctx.shapes[0]), 1)
        return (_C.cat(list(grads), d),)
    return fn


register("split", _join_pieces(2))
register("chunk", _join_pieces(2))
register("tensor_split", _join_pieces(2))
