"""Linear-algebra glue and small shape/factory ops composed in Python over the
C kernels (mm, mv, bmm, tensor_split, pad, ...): addmv, addr, addbmm and
their in-place forms (with addmm_ and baddbmm_), chain_matmul, vdot,
diagflat, renorm, hsplit/vsplit/dsplit, constant_pad_nd, narrow_copy,
sum_to_size, kaiser_window and randint_like.

The add* ops follow torch's rule for beta == 0: input is ignored, so nan or
inf in it do not reach the result."""
import builtins
import math

from . import _C
from ._math_elementwise import _t


def _beta_alpha(fname, input, product, beta, alpha):
    """beta * input + alpha * product, input broadcast; with beta == 0 the
    input is not read (torch's rule), with alpha == 1 not multiplied."""
    if not (input.is_floating_point() or input.is_complex()):
        for name, v in (("beta", beta), ("alpha", alpha)):
            if isinstance(v, builtins.float):
                raise RuntimeError("For integral input tensors, argument %s must not be a floating "
                                   "point number." % name)
    p = product if alpha == 1 else product * alpha
    if beta == 0:
        shape = _bshape(input, p)
        return p.expand(shape).clone() if tuple(p.shape) != tuple(shape) else p
    return (input if beta == 1 else input * beta) + p


def _bshape(a, b):
    from ._math import broadcast_shapes
    return broadcast_shapes(tuple(a.shape), tuple(b.shape))


def _dims(fname, t, n):
    if t.dim() != n:
        raise RuntimeError("%s: expected %d-D tensor, got %d-D" % (fname, n, t.dim()))


def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * (mat @ vec)."""
    _t("addmv", input), _t("addmv", mat, "mat"), _t("addmv", vec, "vec")
    if mat.dim() != 2 or vec.dim() != 1:
        raise RuntimeError("vector + matrix @ vector expected, got %d, %d, %d"
                           % (input.dim(), mat.dim(), vec.dim()))
    r = _beta_alpha("addmv", input, _C.mv(mat, vec), beta, alpha)
    return r if out is None else out.copy_(r)


def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * outer(vec1, vec2)."""
    _t("addr", input), _t("addr", vec1, "vec1"), _t("addr", vec2, "vec2")
    if vec1.dim() != 1 or vec2.dim() != 1:
        raise RuntimeError("addr: Expected 1-D argument vec1, but got %d-D" % vec1.dim()
                           if vec1.dim() != 1 else
                           "addr: Expected 1-D argument vec2, but got %d-D" % vec2.dim())
    r = _beta_alpha("addr", input, vec1.unsqueeze(1) * vec2.unsqueeze(0), beta, alpha)
    return r if out is None else out.copy_(r)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * the sum over the batch of batch1[i] @ batch2[i]."""
    _t("addbmm", input), _t("addbmm", batch1, "batch1"), _t("addbmm", batch2, "batch2")
    if batch1.dim() != 3 or batch2.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if batch1.dim() != 3 else "batch2 must be a 3D tensor")
    r = _beta_alpha("addbmm", input, _C.bmm(batch1, batch2).sum(0), beta, alpha)
    return r if out is None else out.copy_(r)


def _into(self, r):
    if tuple(r.shape) != tuple(self.shape):
        raise RuntimeError("output with shape %s doesn't match the broadcast shape %s"
                           % (list(self.shape), list(r.shape)))
    return self.copy_(r)


def addmv_(input, mat, vec, *, beta=1, alpha=1):
    return _into(input, addmv(input, mat, vec, beta=beta, alpha=alpha))


def addr_(input, vec1, vec2, *, beta=1, alpha=1):
    return _into(input, addr(input, vec1, vec2, beta=beta, alpha=alpha))


def addbmm_(input, batch1, batch2, *, beta=1, alpha=1):
    return _into(input, addbmm(input, batch1, batch2, beta=beta, alpha=alpha))


def addmm_(input, mat1, mat2, *, beta=1, alpha=1):
    return _into(input, _C.addmm(input, mat1, mat2, beta=beta, alpha=alpha))


def baddbmm_(input, batch1, batch2, *, beta=1, alpha=1):
    return _into(input, _C.baddbmm(input, batch1, batch2, beta=beta, alpha=alpha))


def chain_matmul(*matrices, out=None):
    """The product of 2-D matrices, left to right (torch.linalg.multi_dot's
    deprecated spelling; no reordering of the products here)."""
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for i, m in enumerate(matrices):
        _t("chain_matmul", m, "matrices")
        if m.dim() != 2:
            raise RuntimeError("Tensor dimension is %d, expected 2 instead." % m.dim())
    r = matrices[0]
    for m in matrices[1:]:
        r = _C.mm(r, m)
    if len(matrices) == 1:
        r = r.clone()
    return r if out is None else out.copy_(r)


def vdot(input, other, *, out=None):
    """sum(conj(input) * other) of two 1-D tensors of one dtype."""
    _t("vdot", input), _t("vdot", other, "other")
    if input.dim() != 1 or other.dim() != 1:
        raise RuntimeError("1D tensors expected, but got %dD and %dD tensors" % (input.dim(), other.dim()))
    if input.dtype != other.dtype:
        raise RuntimeError("dot : expected both vectors to have same dtype, but found %s and %s"
                           % (_dname(input.dtype), _dname(other.dtype)))
    if input.is_complex():
        from ._math_more import conj
        r = (conj(input) * other).sum()
    else:
        r = _C.dot(input, other)
    return r if out is None else out.copy_(r)


def _dname(dt):
    n = str(dt).split(".")[-1]
    return {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
            "int32": "Int", "bfloat16": "BFloat16"}.get(n, n.capitalize())


def diagflat(input, offset=0):
    """A 2-D matrix with the flattened input on diagonal `offset`."""
    return _C.diag(_t("diagflat", input).flatten(), offset)


def renorm(input, p, dim, maxnorm):
    """Each slice along dim (over every other dim) whose p-norm exceeds
    maxnorm scaled to norm maxnorm (factor maxnorm / (norm + 1e-7), as torch)."""
    x = _t("renorm", input)
    if not (p > 0):
        raise RuntimeError("renorm: non-positive-norm not supported")
    if not (maxnorm >= 0):
        raise RuntimeError("renorm: expected maxnorm to be >= 0 but got %s" % maxnorm)
    nd = builtins.max(x.dim(), 1)
    if not -nd <= dim < nd:
        raise IndexError("Dimension out of range (expected to be in range of [%d, %d], but got %d)"
                         % (-nd, nd - 1, dim))
    if x.dim() == 0:
        raise RuntimeError("renorm: input needs at least 2 dimensions, got 0 dimensions")
    dim %= nd
    others = [d for d in range(x.dim()) if d != dim]
    norms = x.abs().pow(p).sum(others, keepdim=True).pow(1.0 / p) if others else x.abs()
    if p == math.inf:
        norms = x.abs().amax(others, keepdim=True) if others else x.abs()
    factor = _C.where(norms > maxnorm, maxnorm / (norms + 1e-7), _C.ones((), dtype=norms.dtype,
                                                                        device=norms.device))
    return x * factor


def renorm_(input, p, dim, maxnorm):
    return input.copy_(renorm(input, p, dim, maxnorm))


def _split_along(fname, x, sections, dim, need):
    _t(fname, x)
    if x.dim() < need:
        raise RuntimeError("torch.%s requires a tensor with at least %d dimension, but got a tensor "
                           "with %d dimensions!" % (fname, need, x.dim()))
    if isinstance(sections, int) and not isinstance(sections, bool):
        size = x.shape[dim]
        if sections <= 0 or size % sections:
            raise RuntimeError("torch.%s attempted to split along dimension %d, but the size of the "
                               "dimension %d is not divisible by the split_size %d!"
                               % (fname, dim, size, sections))
    return _C.tensor_split(x, sections, dim)


def hsplit(input, indices_or_sections):
    """tensor_split along dim 1 (dim 0 for 1-D); an int must divide the size."""
    x = _t("hsplit", input)
    return _split_along("hsplit", x, indices_or_sections, 1 if x.dim() > 1 else 0, 1)


def vsplit(input, indices_or_sections):
    """tensor_split along dim 0 of a tensor of at least 2 dims."""
    return _split_along("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input, indices_or_sections):
    """tensor_split along dim 2 of a tensor of at least 3 dims."""
    return _split_along("dsplit", input, indices_or_sections, 2, 3)


def constant_pad_nd(input, pad, value=0):
    """F.pad(input, pad, 'constant', value) (negative pads crop)."""
    from .nn import functional as F
    return F.pad(_t("constant_pad_nd", input), list(pad), "constant", value)


def narrow_copy(input, dim, start, length):
    """narrow(), copied into new memory."""
    return _C.narrow(_t("narrow_copy", input), dim, start, length).clone()


def sum_to_size(input, *size):
    """input summed down to `size` (which it must expand to)."""
    x = _t("sum_to_size", input)
    if len(size) == 1 and isinstance(size[0], (list, tuple, _C.Size)):
        size = tuple(size[0])
    size = tuple(int(s) for s in size)
    shape = tuple(x.shape)
    lead = len(shape) - len(size)
    ok = lead >= 0 and builtins.all(s == 1 or s == shape[lead + i] for i, s in enumerate(size))
    if not ok:
        raise RuntimeError("size {%s} is not expandable to size {%s}." % (list(size), list(shape)))
    dims = list(range(lead)) + [lead + i for i, s in enumerate(size) if s == 1 and shape[lead + i] != 1]
    r = x.sum(dims, keepdim=True) if dims else x
    return r.reshape(size) if tuple(r.shape) != size else r


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  requires_grad=False):
    """i0(beta sqrt(1 - ((k - m/2) / (m/2))^2)) / i0(beta), m = N - 1 (N =
    length + 1 when periodic)."""
    from ._math_more import i0
    from ._math_signal import _window
    from ._torch_misc import check_layout
    check_layout("kaiser_window", layout)

    def fn(k, m):
        a = m / 2.0
        r = ((k - a) / a)
        return i0(beta * (1 - r * r).clamp(min=0).sqrt()) / i0(_C.tensor(float(beta), dtype=_C.float64,
                                                                         device=k.device))
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, fn)


def randint_like(input, low=0, high=None, *, generator=None, dtype=None, layout=None, device=None,
                 requires_grad=False, memory_format=None):
    """Random integers in [low, high) of input's shape (and dtype and
    device unless given); randint_like(input, high) also works."""
    x = _t("randint_like", input)
    from ._torch_misc import check_layout
    check_layout("randint_like", layout)
    if high is None:
        low, high = 0, low
    kw = {} if generator is None else {"generator": generator}
    r = _C.randint(low, high, tuple(x.shape), dtype=dtype or x.dtype,
                   device=device if device is not None else x.device, **kw)
    return r.requires_grad_(True) if requires_grad else r
