"""Ops written in Python over the C ops, where torch writes them in Python too
or where they are compositions off the hot path: the stacking helpers
(hstack, vstack, dstack, atleast_*), meshgrid and broadcasting, einsum
(reduced to permutes, sums and bmm), outer, cross, dist, cdist, trace,
isclose, allclose, equal, addcmul and addcdiv.

The hot paths they lean on (cat, the copies, matmul, the reductions) are C.
Tensor methods of the same names reach these functions through
csrc/ops/py_methods.c.
"""
import builtins
import math
import warnings

from . import _C

__all__ = [
    "atleast_1d", "atleast_2d", "atleast_3d", "hstack", "vstack", "dstack", "meshgrid",
    "broadcast_shapes", "broadcast_tensors", "broadcast_to", "einsum", "outer", "ger", "cross",
    "dist", "cdist", "trace", "isclose", "allclose", "equal", "addcmul", "addcdiv",
]


def _tensors_arg(fname, tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for i, t in enumerate(tensors):
        if not isinstance(t, _C.Tensor):
            raise TypeError("%s(): expected Tensor as element %d, but got %s"
                            % (fname, i, type(t).__name__))
    return tensors


# ---- atleast_*, hstack, vstack, dstack ----------------------------------------------

def _atleast(fname, fn, tensors):
    single = len(tensors) == 1 and isinstance(tensors[0], _C.Tensor)
    ts = _tensors_arg(fname, tensors)
    res = tuple(fn(t) for t in ts)
    return res[0] if single else res


def _as_1d(t):
    return t.reshape(1) if t.dim() == 0 else t


def _as_2d(t):
    if t.dim() == 0:
        return t.reshape(1, 1)
    return t.unsqueeze(0) if t.dim() == 1 else t


def _as_3d(t):
    if t.dim() == 0:
        return t.reshape(1, 1, 1)
    if t.dim() == 1:
        return t.unsqueeze(0).unsqueeze(-1)
    return t.unsqueeze(-1) if t.dim() == 2 else t


def atleast_1d(*tensors):
    """Each tensor viewed with at least one dim (a tuple for several)."""
    return _atleast("atleast_1d", _as_1d, tensors)


def atleast_2d(*tensors):
    """Each tensor viewed with at least two dims (1-D becomes [1, n])."""
    return _atleast("atleast_2d", _as_2d, tensors)


def atleast_3d(*tensors):
    """Each tensor viewed with at least three dims (1-D [1, n, 1], 2-D [m, n, 1])."""
    return _atleast("atleast_3d", _as_3d, tensors)


def hstack(tensors, *, out=None):
    """Tensors joined column-wise: cat along dim 1 (dim 0 for 1-D tensors)."""
    ts = [_as_1d(t) for t in _tensors_arg("hstack", (tensors,))]
    if not ts:
        raise RuntimeError("hstack expects a non-empty TensorList")
    return _C.cat(ts, 0 if ts[0].dim() == 1 else 1, out=out)


def vstack(tensors, *, out=None):
    """Tensors joined row-wise: cat along dim 0 of their atleast_2d views."""
    ts = [_as_2d(t) for t in _tensors_arg("vstack", (tensors,))]
    if not ts:
        raise RuntimeError("vstack expects a non-empty TensorList")
    return _C.cat(ts, 0, out=out)


def dstack(tensors, *, out=None):
    """Tensors joined depth-wise: cat along dim 2 of their atleast_3d views."""
    ts = [_as_3d(t) for t in _tensors_arg("dstack", (tensors,))]
    if not ts:
        raise RuntimeError("dstack expects a non-empty TensorList")
    return _C.cat(ts, 2, out=out)


# ---- broadcasting, meshgrid ---------------------------------------------------------

def broadcast_shapes(*shapes):
    """The shape tensors of these shapes broadcast to."""
    res = []
    for s in shapes:
        s = (s,) if isinstance(s, int) else tuple(s)
        for i, n in enumerate(reversed(s)):
            if n < 0:
                raise RuntimeError("Trying to create tensor with negative dimension %d: %s"
                                   % (n, list(s)))
            if i == len(res):
                res.append(n)
            elif res[i] == 1 or (n != 1 and res[i] == n):
                res[i] = n
            elif n != 1:
                raise RuntimeError(
                    "The size of tensor a (%d) must match the size of tensor b (%d) at "
                    "non-singleton dimension %d" % (res[i], n, len(res) - 1 - i))
    return _C.Size(reversed(res))


def broadcast_tensors(*tensors):
    """Views of the tensors expanded to their common shape."""
    ts = _tensors_arg("broadcast_tensors", tensors)
    shape = broadcast_shapes(*(t.shape for t in ts))
    return tuple(t.expand(shape) for t in ts)


def broadcast_to(input, size):
    """input expanded to size (a view; -1 keeps a size)."""
    return input.expand(size)


def meshgrid(*tensors, indexing=None):
    """Coordinate grids (views) from 0-D or 1-D tensors; indexing 'ij' (the
    default, with torch's warning when not given) or 'xy'."""
    ts = _tensors_arg("meshgrid", tensors)
    if not ts:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise ValueError("torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                         "received: %s" % indexing)
    for t in ts:
        if t.dim() > 1:
            raise RuntimeError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                               "got: %s" % (t,))
        if t.dtype != ts[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if t.device != ts[0].device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    sizes = [t.numel() for t in ts]
    pos = list(range(len(ts)))
    if indexing == "xy" and len(ts) >= 2:
        pos[0], pos[1] = 1, 0
    shape = [0] * len(ts)
    for i, p in enumerate(pos):
        shape[p] = sizes[i]
    res = []
    for i, t in enumerate(ts):
        view = [1] * len(ts)
        view[pos[i]] = sizes[i]
        res.append(t.reshape(view).expand(shape))
    return tuple(res)


# ---- einsum -------------------------------------------------------------------------

def _parse_term(term, ndim, n_ell, where):
    """Labels of one operand: letters as themselves, the ellipsis dims as
    ('...', k) counted so that they right-align across operands."""
    if term.count("...") > 1:
        raise RuntimeError("einsum(): more than one ellipsis ('...') can only be used per operand")
    labels = []
    if "..." in term:
        head, tail = term.split("...")
        e = ndim - len(head) - len(tail)
        if e < 0:
            raise RuntimeError("einsum(): the number of subscripts in the equation (%d) is more "
                               "than the number of dimensions (%d) for operand %d"
                               % (len(head) + len(tail), ndim, where))
        labels = list(head) + [("...", n_ell - e + j) for j in range(e)] + list(tail)
    else:
        labels = list(term)
        if len(labels) != ndim:
            raise RuntimeError("einsum(): the number of subscripts in the equation (%d) does not "
                               "match the number of dimensions (%d) for operand %d and no "
                               "ellipsis was given" % (len(labels), ndim, where))
    for c in labels:
        if isinstance(c, str) and not c.isalpha():
            raise RuntimeError("einsum(): invalid subscript given at index %d in the equation "
                               "string, subscripts must be in [a-zA-Z]" % term.index(c))
    return labels


def _dedup(t, labels):
    """Takes diagonals for labels repeated within one operand."""
    while True:
        seen = {}
        for i, c in enumerate(labels):
            if c in seen:
                j = seen[c]
                if t.shape[i] != t.shape[j]:
                    raise RuntimeError("einsum(): subscript %s is repeated for operand but the "
                                       "sizes don't match, %d != %d" % (c, t.shape[j], t.shape[i]))
                t = t.diagonal(0, j, i)
                labels = [x for k, x in enumerate(labels) if k not in (i, j)] + [c]
                break
            seen[c] = i
        else:
            return t, labels


def _sum_out(t, labels, keep):
    """Sums away the labels not in keep."""
    dims = [i for i, c in enumerate(labels) if c not in keep]
    if dims:
        t = t.sum(dim=tuple(dims))
        labels = [c for c in labels if c in keep]
    return t, labels


def _contract(a, la, b, lb, keep):
    """The product of a and b summed over their shared labels not in keep,
    as one batched matmul."""
    batch = [c for c in la if c in lb and c in keep]
    contr = [c for c in la if c in lb and c not in keep]
    aonly = [c for c in la if c not in lb]
    bonly = [c for c in lb if c not in la]

    def size(t, labels, c):
        return t.shape[labels.index(c)]

    def dims(t, labels, order):
        return [labels.index(c) for c in order]

    bsz = [max(size(a, la, c), size(b, lb, c)) for c in batch]
    ksz = [max(size(a, la, c), size(b, lb, c)) for c in contr]
    a = a.permute(dims(a, la, batch + aonly + contr))
    b = b.permute(dims(b, lb, batch + contr + bonly))
    asz = list(a.shape[len(batch):len(batch) + len(aonly)])
    bosz = list(b.shape[len(batch) + len(contr):])
    a = a.expand(bsz + asz + ksz)
    b = b.expand(bsz + ksz + bosz)
    nb, m, k, n = math.prod(bsz), math.prod(asz), math.prod(ksz), math.prod(bosz)
    a3 = a.reshape(nb, m, k)
    b3 = b.reshape(nb, k, n)
    if a3.dtype.is_floating_point or a3.dtype.is_complex:
        r = _C.bmm(a3, b3)
    else:  # cuBLAS has no integer products: multiply and sum
        r = (a3.unsqueeze(-1) * b3.unsqueeze(1)).sum(dim=2)
    return r.reshape(bsz + asz + bosz), batch + aonly + bonly


def einsum(*args):
    """Einstein summation, e.g. einsum('bij,bjk->bik', a, b): diagonals for
    repeated labels, sums for labels used once, one batched matmul per
    pair of operands (contracted left to right), then a permute."""
    if not args or not isinstance(args[0], str):
        raise NotImplementedError("einsum: only the equation-string form is supported "
                                  "(einsum('ij,jk->ik', a, b)), not the sublist form")
    eq, ops = args[0], args[1:]
    if len(ops) == 1 and isinstance(ops[0], (list, tuple)):
        ops = tuple(ops[0])
    for i, t in enumerate(ops):
        if not isinstance(t, _C.Tensor):
            raise TypeError("einsum(): operand %d must be a Tensor, not %s" % (i, type(t).__name__))
    eq = eq.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ops):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation"
                           if len(ops) > len(terms) else
                           "einsum(): fewer operands were provided than specified in the equation")
    n_ell = 0
    for term, t in zip(terms, ops):
        if "..." in term:
            n_ell = builtins.max(n_ell, t.dim() - len(term.replace("...", "")))
    labels = [_parse_term(term, t.dim(), n_ell, i) for i, (term, t) in enumerate(zip(terms, ops))]
    ell = [("...", j) for j in range(n_ell)]
    if arrow:
        out = []
        if rhs.count("...") > 1:
            raise RuntimeError("einsum(): more than one ellipsis ('...') in the output")
        head, _, tail = rhs.partition("...")
        out = list(head) + (ell if "..." in rhs else []) + list(tail)
        for c in head + tail:
            if not c.isalpha():
                raise RuntimeError("einsum(): invalid subscript given at index %d in the equation "
                                   "string, subscripts must be in [a-zA-Z]" % eq.index(c))
            if list(head + tail).count(c) > 1:
                raise RuntimeError("einsum(): output subscript %s appears more than once in the "
                                   "output" % c)
            if not any(c in ls for ls in labels):
                raise RuntimeError("einsum(): output subscript %s does not appear in the equation "
                                   "for any input operand" % c)
    else:
        counts = {}
        for ls in labels:
            for c in ls:
                if isinstance(c, str):
                    counts[c] = counts.get(c, 0) + 1
        out = ell + sorted(c for c, k in counts.items() if k == 1)
    # sizes of one label must agree (or be 1, which broadcasts)
    sizes = {}
    for i, (t, ls) in enumerate(zip(ops, labels)):
        for c, s in zip(ls, t.shape):
            if c in sizes and s != sizes[c] and s != 1 and sizes[c] != 1:
                raise RuntimeError("einsum(): operands do not broadcast with remapped shapes "
                                   "(original->remapped)")
            sizes[c] = builtins.max(sizes.get(c, 1), s)
    ops = list(ops)
    for i in range(len(ops)):
        ops[i], labels[i] = _dedup(ops[i], labels[i])
    if len(ops) > 1:
        dt = ops[0].dtype
        for t in ops[1:]:
            dt = _C.promote_types(dt, t.dtype)
        ops = [t.to(dt) for t in ops]

    def needed(after):
        keep = set(out)
        for ls in labels[after:]:
            keep.update(ls)
        return keep

    cur, cl = _sum_out(ops[0], labels[0], needed(1))
    for i in range(1, len(ops)):
        keep = needed(i + 1)
        nxt, nl = _sum_out(ops[i], labels[i], keep | set(cl))
        cur, cl = _sum_out(cur, cl, keep | set(nl))
        cur, cl = _contract(cur, cl, nxt, nl, keep)
    cur, cl = _sum_out(cur, cl, set(out))
    # a label of the output that an operand had with size 1 against a larger one
    perm = [cl.index(c) for c in out]
    res = cur.permute(perm) if perm else cur
    want = [sizes[c] for c in out]
    if list(res.shape) != want:
        res = res.expand(want)
    return res


# ---- products, distances --------------------------------------------------------------

def outer(input, vec2, *, out=None):
    """The outer product of two 1-D tensors: input[i] * vec2[j]."""
    for name, t in (("self", input), ("vec2", vec2)):
        if not isinstance(t, _C.Tensor):
            raise TypeError("outer(): argument '%s' must be Tensor, not %s"
                            % ("input" if name == "self" else name, type(t).__name__))
        if t.dim() != 1:
            raise RuntimeError("outer: Expected 1-D argument %s, but got %d-D" % (name, t.dim()))
    return _C.mul(input.unsqueeze(1), vec2, out=out)


ger = outer


# ---- addcmul, addcdiv ------------------------------------------------------------------

def _addc(fname, op, input, tensor1, tensor2, value, out, inplace):
    for name, t in (("input", input), ("tensor1", tensor1), ("tensor2", tensor2)):
        if not isinstance(t, _C.Tensor):
            raise TypeError("%s(): argument '%s' must be Tensor, not %s" % (fname, name, type(t).__name__))
    if op is _C.div and not (tensor1.is_floating_point() or tensor1.is_complex()) \
            and not (tensor2.is_floating_point() or tensor2.is_complex()):
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a future "
                           "release addcdiv will perform a true division of tensor1 and tensor2. "
                           "The historic addcdiv behavior can be implemented as (input + value * "
                           "torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and "
                           "as (input + value * tensor1 / tensor2) for float inputs. The future "
                           "addcdiv behavior is just the latter implementation: (input + value * "
                           "tensor1 / tensor2), for all dtypes.")
    term = op(tensor1, tensor2)
    if not (isinstance(value, (int, float)) and not isinstance(value, bool) and value == 1):
        term = _C.mul(term, value)
    if inplace:
        return input.add_(term)
    return _C.add(input, term, out=out)


def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    """input + value * tensor1 * tensor2, broadcast (torch.addcmul)."""
    return _addc("addcmul", _C.mul, input, tensor1, tensor2, value, out, False)


def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    """input + value * tensor1 / tensor2, broadcast (torch.addcdiv)."""
    return _addc("addcdiv", _C.div, input, tensor1, tensor2, value, out, False)


def addcmul_(input, tensor1, tensor2, *, value=1):
    return _addc("addcmul_", _C.mul, input, tensor1, tensor2, value, None, True)


def addcdiv_(input, tensor1, tensor2, *, value=1):
    return _addc("addcdiv_", _C.div, input, tensor1, tensor2, value, None, True)


def cross(input, other, dim=None, *, out=None):
    """The cross product of 3-vectors along dim (the first dim of size 3
    when dim is None, as torch.cross)."""
    if input.dim() != other.dim():
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    a, b = broadcast_tensors(input, other)
    if dim is None:
        dim = next((i for i, s in enumerate(a.shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    dim = dim + a.dim() if dim < 0 else dim
    if not 0 <= dim < a.dim():
        raise IndexError("Dimension out of range (expected to be in range of [%d, %d], but got %d)"
                         % (-a.dim(), a.dim() - 1, dim))
    if input.shape[dim] != 3 or other.shape[dim] != 3:
        raise RuntimeError("linalg.cross: inputs dimension %d must have length 3. Got %d and %d"
                           % (dim, input.shape[dim], other.shape[dim]))
    a0, a1, a2 = a.unbind(dim)
    b0, b1, b2 = b.unbind(dim)
    return _C.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], dim, out=out)


def dist(input, other, p=2):
    """The p-norm of input - other."""
    return _C.sub(input, other).norm(p)


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """Pairwise p-norm distances between the rows of x1 [.., P, M] and x2
    [.., R, M]: [.., P, R]. p = 2 goes through matmul when P or R > 25 (or
    compute_mode says so), as torch does; other p are computed directly."""
    if x1.dim() < 2 or x2.dim() < 2:
        raise RuntimeError("cdist only supports at least 2D tensors, X1 got: %dD" % x1.dim()
                           if x1.dim() < 2 else
                           "cdist only supports at least 2D tensors, X2 got: %dD" % x2.dim())
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError("X1 and X2 must have the same number of columns. X1: %d X2: %d"
                           % (x1.shape[-1], x2.shape[-1]))
    for name, t in (("X1", x1), ("X2", x2)):
        if not t.dtype.is_floating_point:
            raise RuntimeError("cdist only supports floating-point dtypes, %s got: %s"
                               % (name, _dtype_name(t.dtype)))
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    modes = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
             "donot_use_mm_for_euclid_dist", None)
    if compute_mode not in modes:
        raise ValueError("%s is not a valid value for compute_mode" % compute_mode)
    P, R = x1.shape[-2], x2.shape[-2]
    use_mm = p == 2 and (compute_mode == "use_mm_for_euclid_dist" or (
        compute_mode in ("use_mm_for_euclid_dist_if_necessary", None) and (P > 25 or R > 25)))
    if use_mm:
        n1 = (x1 * x1).sum(dim=-1, keepdim=True)
        n2 = (x2 * x2).sum(dim=-1, keepdim=True)
        prod = _C.matmul(x1, x2.transpose(-2, -1))
        d2 = n1 - 2 * prod + n2.transpose(-2, -1)
        return d2.clamp(min=0).sqrt()
    diff = (x1.unsqueeze(-2) - x2.unsqueeze(-3)).abs()
    if p == 0:
        return (diff != 0).to(x1.dtype).sum(dim=-1)
    if math.isinf(p):
        return diff.amax(dim=-1)
    if p == 1:
        return diff.sum(dim=-1)
    if p == 2:
        return (diff * diff).sum(dim=-1).sqrt()
    return diff.pow(p).sum(dim=-1).pow(1.0 / p)


def trace(input):
    """The sum of the main diagonal of a matrix."""
    if input.dim() != 2:
        raise RuntimeError("trace: expected a matrix, but got tensor with dim %d" % input.dim())
    return input.diagonal().sum()


# ---- comparisons ------------------------------------------------------------------------

def _dtype_name(dt):
    return _C.empty(0, dtype=dt).type().split(".")[-1].replace("Tensor", "")


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|input - other| <= atol + rtol * |other|, elementwise, as torch
    (infinities equal to themselves; NaN equal to NaN with equal_nan)."""
    if not isinstance(input, _C.Tensor) or not isinstance(other, _C.Tensor):
        raise TypeError("isclose(): argument 'other' must be Tensor")
    if input.dtype != other.dtype:
        raise RuntimeError("%s did not match %s" % (_dtype_name(input.dtype),
                                                    _dtype_name(other.dtype)))
    if equal_nan and input.is_complex():
        raise RuntimeError("isclose with equal_nan=True is not supported for complex inputs.")
    if rtol < 0:
        raise RuntimeError("rtol must be greater than or equal to zero, but got %s" % rtol)
    if atol < 0:
        raise RuntimeError("atol must be greater than or equal to zero, but got %s" % atol)
    close = input == other
    if equal_nan and input.is_floating_point():
        close = close | (input.isnan() & other.isnan())
    if rtol == 0 and atol == 0:
        return close
    a, b = input, other
    if input.dtype == _C.bool:
        a, b = a.to(_C.get_default_dtype()), b.to(_C.get_default_dtype())
    allowed = atol + (rtol * b).abs()
    actual = (a - b).abs()
    return close | (actual.isfinite() & (actual <= allowed))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True when isclose holds everywhere."""
    return builtins.bool(isclose(input, other, rtol, atol, equal_nan).all().item())


def equal(input, other):
    """True when both have the same size and the same elements."""
    if not isinstance(input, _C.Tensor) or not isinstance(other, _C.Tensor):
        raise TypeError("equal(): argument 'other' must be Tensor")
    if input.device != other.device:
        raise RuntimeError("Expected all tensors to be on the same device, but found at least two "
                           "devices, %s and %s!" % (input.device, other.device))
    if input.shape != other.shape:
        return False
    return builtins.bool((input == other).all().item())
