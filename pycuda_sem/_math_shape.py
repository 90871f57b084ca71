"""Rearranging and product ops composed in Python from views, cat and
matmul: ravel, unflatten, unfold, split_with_sizes, rot90, diff, inner,
kron, tensordot, cartesian_prod, combinations, block_diag, column_stack,
row_stack, is_same_size, is_nonzero.

Views stay views (ravel of a contiguous tensor, unflatten, unfold); the
copies go through cat and the copy core, the products through cuBLAS.
Tensor methods of the same names reach these through csrc/ops/py_methods.c.
"""
import builtins
import itertools

from . import _C
from ._math import meshgrid, vstack


def _t(fname, x, what="input"):
    if not isinstance(x, _C.Tensor):
        raise TypeError("%s(): argument '%s' must be Tensor, not %s" % (fname, what, type(x).__name__))
    return x


def _wrap(dim, ndim):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError("Dimension out of range (expected to be in range of [%d, %d], but got %d)"
                         % (-n, n - 1, dim))
    return dim % n


# ---- views --------------------------------------------------------------------------

def ravel(input):
    """input flattened to 1-D (a view when it can be)."""
    return _t("ravel", input).reshape(-1)


def unflatten(input, dim, sizes):
    """dim split into sizes (one may be -1): a view."""
    x = _t("unflatten", input)
    d = _wrap(dim, x.dim())
    sizes = tuple(sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    shape = tuple(x.shape)
    return x.view(shape[:d] + sizes + shape[d + 1:])


def unfold(input, dimension, size, step):
    """Tensor.unfold: every slice of `size` entries along dimension, `step`
    apart, as a new last dim (a view over the same storage)."""
    x = _t("unfold", input)
    d = _wrap(dimension, x.dim())
    n = x.size(d) if x.dim() else 1
    if size > n:
        raise RuntimeError("maximum size for tensor at dimension %d is %d but size is %d" % (d, n, size))
    if step <= 0:
        raise RuntimeError("step is %d but must be > 0" % step)
    if x.dim() == 0:
        return x.reshape(1)
    sizes, strides = list(x.shape), list(x.stride())
    sizes[d] = (n - size) // step + 1
    strides[d] = strides[d] * step
    return x.as_strided(sizes + [size], strides + [x.stride(d)], x.storage_offset())


def split_with_sizes(input, split_sizes, dim=0):
    """Views of the given sizes along dim (they must add up to its size)."""
    x = _t("split_with_sizes", input)
    d = _wrap(dim, x.dim())
    if builtins.sum(split_sizes) != x.size(d):
        raise RuntimeError("split_with_sizes expects split_sizes to sum exactly to %d (input tensor's "
                           "size at dimension %d), but got split_sizes=%s"
                           % (x.size(d), d, list(split_sizes)))
    return x.split(list(split_sizes), d)


def rot90(input, k=1, dims=(0, 1)):
    """Rotated by 90 degrees k times in the plane of dims (from the first
    towards the second)."""
    x = _t("rot90", input)
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError("expected total rotation dims == 2, but got dims = %d" % len(dims))
    if x.dim() < 2:
        raise RuntimeError("expected total dims >= 2, but got total dims = %d" % x.dim())
    a, b = _wrap(dims[0], x.dim()), _wrap(dims[1], x.dim())
    if a == b:
        raise RuntimeError("expected rotation dims to be different, but got dim0 = %d and dim1 = %d"
                           % (a, b))
    k %= 4
    if k == 1:
        return x.flip(b).transpose(a, b)
    if k == 2:
        return x.flip((a, b))
    if k == 3:
        return x.flip(a).transpose(a, b)
    return x.clone()


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The n-th forward difference along dim, after joining prepend and
    append (bool tensors give logical_xor)."""
    x = _t("diff", input)
    if x.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError("order must be non-negative but got %d" % n)
    d = _wrap(dim, x.dim())
    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        parts = [p if p.dim() else p.expand(x.shape[:d] + (1,) + x.shape[d + 1:]) for p in parts]
        x = _C.cat(parts, d)
    for _ in range(n):
        m = x.size(d)
        if m == 0:
            break
        hi, lo = x.narrow(d, 1, m - 1), x.narrow(d, 0, m - 1)
        x = hi ^ lo if x.dtype == _C.bool else hi - lo
    return x


# ---- products ---------------------------------------------------------------------------

def tensordot(a, b, dims=2, out=None):
    """Sum over the last `dims` dims of a and the first of b (an int), or
    over the listed pairs ([dims_a, dims_b]): one matmul of the permuted,
    flattened operands."""
    _t("tensordot", a, "a")
    _t("tensordot", b, "b")
    if isinstance(dims, _C.Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError("tensordot expects dims >= 0, but got dims=%d" % dims)
        da, db = list(range(a.dim() - dims, a.dim())), list(range(dims))
    else:
        da, db = dims
        da = [da] if isinstance(da, int) else list(da)
        db = [db] if isinstance(db, int) else list(db)
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    da = [_wrap(d, a.dim()) for d in da]
    db = [_wrap(d, b.dim()) for d in db]
    for i, j in zip(da, db):
        if a.size(i) != b.size(j):
            raise RuntimeError("contracted dimensions need to match, but first has size %d in dim %d "
                               "and second has size %d in dim %d" % (a.size(i), i, b.size(j), j))
    fa = [d for d in range(a.dim()) if d not in da]
    fb = [d for d in range(b.dim()) if d not in db]
    k = 1
    for d in da:
        k *= a.size(d)
    am = a.permute(fa + da).reshape(-1, k)
    bm = b.permute(db + fb).reshape(k, -1)
    r = am.matmul(bm).reshape([a.size(d) for d in fa] + [b.size(d) for d in fb])
    return r if out is None else out.copy_(r)


def inner(input, other, *, out=None):
    """The sum of products over the last dims (a product for 0-dim operands)."""
    a, b = _t("inner", input), _t("inner", other, "other")
    if a.dim() == 0 or b.dim() == 0:
        r = a * b
    else:
        if a.size(-1) != b.size(-1):
            raise RuntimeError("inner() the last dimension must match on both input tensors but got "
                               "shapes %s and %s" % (list(a.shape), list(b.shape)))
        r = tensordot(a, b, ([-1], [-1]))
    return r if out is None else out.copy_(r)


def kron(input, other, *, out=None):
    """The Kronecker product: blocks input[i] * other, laid out like input."""
    a, b = _t("kron", input), _t("kron", other, "other")
    nd = builtins.max(a.dim(), b.dim())
    a = a.reshape((1,) * (nd - a.dim()) + tuple(a.shape))
    b = b.reshape((1,) * (nd - b.dim()) + tuple(b.shape))
    sa, sb = tuple(a.shape), tuple(b.shape)
    ai = a.reshape(tuple(itertools.chain.from_iterable((n, 1) for n in sa)))
    bi = b.reshape(tuple(itertools.chain.from_iterable((1, n) for n in sb)))
    r = (ai * bi).reshape(tuple(x * y for x, y in zip(sa, sb)))
    return r if out is None else out.copy_(r)


# ---- building ---------------------------------------------------------------------------

def _tensor_list(fname, tensors):
    ts = list(tensors)
    for i, t in enumerate(ts):
        if not isinstance(t, _C.Tensor):
            raise TypeError("%s(): expected Tensor as element %d, but got %s" % (fname, i, type(t).__name__))
    return ts


def cartesian_prod(*tensors):
    """Every combination of one entry from each 1-D tensor, as rows."""
    ts = _tensor_list("cartesian_prod", tensors)
    for t in ts:
        if t.dim() != 1:
            raise RuntimeError("Expect a 1D vector, but got shape %s" % list(t.shape))
    if len(ts) == 1:
        return ts[0].clone()
    grids = meshgrid(*ts, indexing="ij")
    return _C.stack([g.reshape(-1) for g in grids], 1)


def combinations(input, r=2, with_replacement=False):
    """The r-length combinations of a 1-D tensor's entries, as rows (the
    order of itertools.combinations)."""
    x = _t("combinations", input)
    if x.dim() != 1:
        raise RuntimeError("Expect a 1D vector, but got shape %s" % list(x.shape))
    if r < 0:
        raise RuntimeError("Expect a non-negative number, but got %d" % r)
    if r == 0:
        return _C.empty((0,), dtype=x.dtype, device=x.device)
    gen = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = list(gen(range(x.size(0)), r))
    if not idx:
        return _C.empty((0, r), dtype=x.dtype, device=x.device)
    index = _C.tensor(idx, dtype=_C.int64, device=x.device)
    return x[index.reshape(-1)].reshape(len(idx), r)


def block_diag(*tensors):
    """The tensors (0-, 1- or 2-D) on the diagonal of one matrix, zeros elsewhere."""
    ts = _tensor_list("block_diag", tensors)
    ms = []
    for i, t in enumerate(ts):
        if t.dim() > 2:
            raise RuntimeError("torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                               "Input %d has %d dimensions" % (i, t.dim()))
        ms.append(t.reshape(1, 1) if t.dim() == 0 else t.reshape(1, -1) if t.dim() == 1 else t)
    if not ms:
        return _C.empty((1, 0))
    dt = ms[0].dtype
    for m in ms[1:]:
        dt = _C.promote_types(dt, m.dtype)
    rows, cols = builtins.sum(m.size(0) for m in ms), builtins.sum(m.size(1) for m in ms)
    out = _C.zeros((rows, cols), dtype=dt, device=ms[0].device)
    r = c = 0
    for m in ms:
        out[r:r + m.size(0), c:c + m.size(1)] = m
        r, c = r + m.size(0), c + m.size(1)
    return out


def column_stack(tensors, *, out=None):
    """The tensors as columns: 0-D and 1-D become [n, 1], then cat along dim 1."""
    ts = _tensor_list("column_stack", tensors)
    if not ts:
        raise RuntimeError("column_stack expects a non-empty TensorList")
    cols = [t.reshape(-1, 1) if t.dim() <= 1 else t for t in ts]
    return _C.cat(cols, 1, out=out)


def row_stack(tensors, *, out=None):
    """Alias of vstack."""
    return vstack(tensors, out=out)


# ---- queries ------------------------------------------------------------------------------

def is_same_size(input, other):
    """Whether the two tensors have the same shape."""
    return tuple(_t("is_same_size", input).shape) == tuple(_t("is_same_size", other, "other").shape)


def is_nonzero(input):
    """The truth of a one-element tensor (refused for any other size)."""
    x = _t("is_nonzero", input)
    if x.numel() == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if x.numel() > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return builtins.bool(x.item() != 0)


# ---- index arithmetic and membership -----------------------------------------------------

def unravel_index(indices, shape):
    """The coordinates, in a tensor of `shape`, of flat indices (a tuple, one tensor a dim)."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    idx = indices if isinstance(indices, _C.Tensor) else _C.tensor(indices)
    if idx.is_floating_point() or idx.is_complex() or idx.dtype == _C.bool:
        raise TypeError("expected 'indices' to be integer dtype, but got %s" % idx.dtype)
    if any(d < 0 for d in shape):
        raise ValueError("'shape' cannot have negative values, but got %s" % (shape,))
    total = 1
    for d in shape:
        total *= d
    if idx.numel() and bool(((idx < -total) | (idx >= total)).any()):
        raise RuntimeError("'indices' must be in range [-%d, %d)" % (total, total))
    rest = _C.where(idx < 0, idx + total, idx).long()
    out = []
    for d in reversed(shape):
        out.append(rest % d if d else rest)
        rest = rest // d if d else rest
    return tuple(reversed(out))


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each entry of elements is in test_elements (one sort and one
    binary search, not a pairwise compare)."""
    e = elements if isinstance(elements, _C.Tensor) else _C.tensor(elements, device=test_elements.device)
    t = test_elements if isinstance(test_elements, _C.Tensor) else _C.tensor(test_elements, device=e.device)
    t = t.reshape(-1)
    if t.numel() == 0:
        r = _C.zeros(e.shape, dtype=_C.bool, device=e.device)
    else:
        s = t.sort()[0]
        flat = e.reshape(-1).to(s.dtype)
        pos = _C.searchsorted(s, flat).clamp(max=s.numel() - 1)
        r = (s[pos] == flat).reshape(e.shape)
    return ~r if invert else r
