"""Scatter-style ops composed in Python: slice_scatter, select_scatter,
diagonal_scatter, as_strided_scatter, fill_diagonal_, put/put_ and
index_reduce/index_reduce_.

The *_scatter ops find the positions they write through an index map: the
same view (slice, select, diagonal, as_strided) applied to
arange(numel).view(shape) names the flat position of every element of the
view; one out-of-place index_put on input.reshape(-1) then writes src
there. That is differentiable in both input and src (index_put records),
works for any strides, and never writes into a view of a tensor that
requires grad. The in-place forms (put_, fill_diagonal_) compute the same
out of place and copy_ the result back into self."""
import builtins

from . import _C
from ._math_elementwise import _t


def _index_map(x):
    return _C.arange(x.numel(), dtype=_C.int64, device=x.device).view(tuple(x.shape))


def _scatter_into(fname, x, src, pos):
    """x with src written at the flat positions pos (pos shaped like the view)."""
    _t(fname, src, "src")
    if tuple(src.shape) != tuple(pos.shape):
        raise RuntimeError("expected src to have a size equal to the slice of self. src size = %s, "
                           "slice size = %s" % (list(src.shape), list(pos.shape)))
    flat = x.reshape(-1)
    r = _C.index_put(flat, (pos.reshape(-1),), src.reshape(-1).to(x.dtype))
    return r.view(tuple(x.shape))


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """A copy of input with input[..., start:end:step, ...] (along dim) = src."""
    x = _t("slice_scatter", input)
    nd = builtins.max(x.dim(), 1)
    if not -nd <= dim < nd:
        raise IndexError("Dimension out of range (expected to be in range of [%d, %d], but got %d)"
                         % (-nd, nd - 1, dim))
    if step is None:
        step = 1
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    key = (slice(None),) * (dim % nd) + (slice(start, end, step),)
    return _scatter_into("slice_scatter", x, src, _index_map(x)[key])


def select_scatter(input, src, dim, index):
    """A copy of input with input.select(dim, index) = src."""
    x = _t("select_scatter", input)
    return _scatter_into("select_scatter", x, src, _index_map(x).select(dim, index))


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """A copy of input with input.diagonal(offset, dim1, dim2) = src."""
    x = _t("diagonal_scatter", input)
    return _scatter_into("diagonal_scatter", x, src, _index_map(x).diagonal(offset, dim1, dim2))


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """A copy of input with input.as_strided(size, stride, storage_offset) =
    src (positions counted in input's contiguous layout)."""
    x = _t("as_strided_scatter", input)
    m = _index_map(x)
    pos = m.as_strided(size, stride) if storage_offset is None else m.as_strided(size, stride, storage_offset)
    return _scatter_into("as_strided_scatter", x, src, pos)


# ---- in place over flat positions -----------------------------------------------------------

def fill_diagonal_(input, fill_value, wrap=False):
    """Fill the main diagonal of a matrix, or of a tensor whose dims are all
    equal; for a tall matrix, wrap=True restarts it every cols + 1 rows."""
    x = _t("fill_diagonal_", input)
    if x.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    shape = tuple(x.shape)
    if x.dim() > 2 and builtins.any(s != shape[0] for s in shape):
        raise RuntimeError("all dimensions of input must be of equal length")
    # the flat step between diagonal entries: 1 + cols (2-D), 1 + n + n^2 ... (n-D)
    step, acc = 0, 1
    for s in reversed(shape):
        step += acc
        acc *= s
    limit = x.numel()
    if x.dim() == 2 and shape[0] > shape[1] + 1 and not wrap:
        limit = shape[1] * shape[1]
    if x.numel() == 0:
        return x
    pos = _C.arange(0, limit, step, dtype=_C.int64, device=x.device)
    r = _C.index_fill(x.reshape(-1), 0, pos, fill_value).view(shape)
    return x.copy_(r)


def _put(fname, x, index, source, accumulate):
    _t(fname, x), _t(fname, index, "index"), _t(fname, source, "source")
    if index.dtype != _C.int64:
        raise RuntimeError("put_(): Expected a long tensor for index, but got %s"
                           % str(index.dtype).split(".")[-1].capitalize().replace("Int32", "Int"))
    if source.numel() != index.numel():
        raise IndexError("put_(): Expected source and index to have the same number of elements, but "
                         "got source.numel() = %d, index.numel() = %d" % (source.numel(), index.numel()))
    n = x.numel()
    if index.numel():
        lo, hi = int(index.min()), int(index.max())
        bad = hi if hi >= n else lo if lo < -n else None
        if bad is not None:
            raise IndexError("out of range: tried to access index %d on a tensor of %d elements."
                             % (bad, n))
    idx = index.reshape(-1)
    idx = _C.where(idx < 0, idx + n, idx)
    r = _C.index_put(x.reshape(-1), (idx,), source.reshape(-1).to(x.dtype), accumulate)
    return r.view(tuple(x.shape))


def put(input, index, source, accumulate=False):
    """A copy of input, seen as 1-D, with source written (or added, with
    accumulate) at the flat positions index (negative from the end)."""
    return _put("put", input, index, source, accumulate)


def put_(input, index, source, accumulate=False):
    """put() in place."""
    return input.copy_(_put("put_", input, index, source, accumulate))


_REDUCES = ("prod", "mean", "amax", "amin")


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """input with the slices source[k] (along dim) reduced into
    input[index[k]] by prod, mean, amax or amin (include_self=False leaves the
    slices that are written out of the reduction): scatter_reduce with index
    expanded over source's shape."""
    x = _t("index_reduce", input)
    _t("index_reduce", index, "index"), _t("index_reduce", source, "source")
    if reduce not in _REDUCES:
        raise RuntimeError("index_reduce(): Expected reduce to be one of prod, mean, amax or amin but "
                           "got %s." % reduce)
    nd = builtins.max(x.dim(), 1)
    if not -nd <= dim < nd:
        raise IndexError("Dimension out of range (expected to be in range of [%d, %d], but got %d)"
                         % (-nd, nd - 1, dim))
    dim %= nd
    if index.dim() > 1:
        raise IndexError("index_reduce_(): Index is supposed to be a vector")
    if index.dtype not in (_C.int64, _C.int32):
        raise RuntimeError("index_reduce_(): Expected dtype int32/int64 for index")
    if source.dim() != x.dim() or (x.dim() and source.shape[dim] != index.numel()):
        raise RuntimeError("index_reduce_(): source and index sizes do not match: source %s, index %d"
                           % (list(source.shape), index.numel()))
    if x.dim() == 0:
        shape = [1]
        xs, ss = x.reshape(1), source.reshape(1)
    else:
        shape = [1] * x.dim()
        xs, ss = x, source
    shape[dim] = index.numel()
    idx = index.to(_C.int64).reshape(shape).expand(tuple(ss.shape))
    r = xs.scatter_reduce(dim, idx, ss.to(x.dtype), reduce, include_self=include_self)
    return r.view(tuple(x.shape))


def index_reduce_(input, dim, index, source, reduce, *, include_self=True):
    """index_reduce() in place."""
    return input.copy_(index_reduce(input, dim, index, source, reduce, include_self=include_self))
