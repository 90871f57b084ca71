"""Top-level torch functions and a few Tensor methods that the earlier files
did not have: torch.get_device_module, gradient (numpy.gradient's rules),
histogramdd, complex/polar, adjoint, chalf (refused: no complex32), the
deprecated norms (frobenius_norm, nuclear_norm, norm_except_dim),
nonzero_static, is_distributed, the in-place aliases erf_ ... fix_, the aten
spellings of pooling-with-indices, dropouts and embedding_bag (argument
orders and return tuples as aten's), and the autocast state functions
(get_autocast_gpu_dtype, set_autocast_enabled, ...) over
amp/autocast_mode.py's thread-local state. Thin compositions of existing
ops, so autograd and both devices come for free."""
import builtins
import collections
import operator
import threading

from . import _C

_INT64_MAX = (1 << 63) - 1


def _tensor_arg(fname, name, x):
    if not isinstance(x, _C.Tensor):
        raise TypeError("%s(): argument '%s' must be Tensor, not %s"
                        % (fname, name, type(x).__name__))
    return x


# ---- device modules --------------------------------------------------------------------------

def get_device_module(device=None):
    """The module of a device type: pycuda_sem.cuda for 'cuda' (or a cuda
    device), pycuda_sem.cpu for 'cpu'; None gives the current accelerator's
    (cuda when a GPU is present, else cpu)."""
    import pycuda_sem
    if isinstance(device, _C.device):
        name = device.type
    elif isinstance(device, str):
        name = _C.device(device).type
    elif device is None:
        name = "cuda" if _C.is_available() else "cpu"
    else:
        raise RuntimeError("Invalid value of device '%s', expect torch.device, str, or None"
                           % (device,))
    mod = getattr(pycuda_sem, name, None)
    if mod is None:
        raise RuntimeError("Device '%s' does not have a corresponding module registered as "
                           "'torch.%s'." % (name, name))
    return mod


def is_distributed(input):
    """False: tensors are never distributed here (as torch's, for dense tensors)."""
    _tensor_arg("is_distributed", "input", input)
    return False


# ---- complex construction ---------------------------------------------------------------------

def complex(real, imag, *, out=None):
    """real + i*imag, elementwise: float32 -> complex64, float64 -> complex128
    (both the same dtype, as torch)."""
    _tensor_arg("complex", "real", real)
    _tensor_arg("complex", "imag", imag)
    ok = (_C.float32, _C.float64, _C.float16)
    if real.dtype not in ok or imag.dtype not in ok:
        names = {_C.int64: "Long", _C.int32: "Int", _C.int16: "Short", _C.int8: "Char",
                 _C.uint8: "Byte", _C.bool: "Bool", _C.bfloat16: "BFloat16"}
        raise NotImplementedError("Expected both inputs to be Half, Float or Double tensors but "
                                  "got %s and %s" % (names.get(real.dtype, str(real.dtype)),
                                                     names.get(imag.dtype, str(imag.dtype))))
    if real.dtype != imag.dtype:
        pretty = {_C.float32: "Float", _C.float64: "Double", _C.float16: "Half"}
        raise RuntimeError("Expected object of scalar type %s but got scalar type %s for second "
                           "argument" % (pretty[real.dtype], pretty[imag.dtype]))
    if real.dtype == _C.float16:
        raise NotImplementedError("complex(): complex32 (ComplexHalf) is not supported by "
                                  "pycuda_sem")
    cd = _C.complex64 if real.dtype == _C.float32 else _C.complex128
    r = real.to(cd) + imag.to(cd) * 1j
    if out is not None:
        out.copy_(r)
        return out
    return r


def polar(abs, angle, *, out=None):
    """abs * (cos(angle) + i sin(angle))."""
    _tensor_arg("polar", "abs", abs)
    _tensor_arg("polar", "angle", angle)
    return complex(abs * angle.cos(), abs * angle.sin(), out=out)


def adjoint(input):
    """The conjugate transpose of the last two dims (a view for real dtypes;
    complex ones are conjugated as a copy: there is no lazy conjugate bit)."""
    _tensor_arg("adjoint", "input", input)
    if input.dim() < 2:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of "
                           "matrices. Got %d-D tensor." % input.dim())
    from ._tensor_more import _prop_mH
    return _prop_mH(input)


def chalf(self, memory_format=None):
    raise NotImplementedError("chalf(): pycuda_sem has no complex32 (ComplexHalf) dtype")


# ---- deprecated norms (aten spellings) ----------------------------------------------------------

def frobenius_norm(input, dim, keepdim=False, *, out=None):
    """The 2-norm over `dim` (linalg.vector_norm(input, 2, dim, keepdim))."""
    from . import linalg
    r = linalg.vector_norm(_tensor_arg("frobenius_norm", "input", input), 2, dim, keepdim)
    return r if out is None else out.copy_(r)


def nuclear_norm(input, dim=None, keepdim=False, *, out=None):
    """The sum of singular values of a matrix, or of the matrices over the
    two dims `dim` (linalg.matrix_norm(input, 'nuc', dim, keepdim))."""
    from . import linalg
    _tensor_arg("nuclear_norm", "input", input)
    if isinstance(dim, bool):  # nuclear_norm(input, keepdim) positional form
        dim, keepdim = None, dim
    if dim is None:
        if input.dim() != 2:
            raise RuntimeError("Expected a tensor with 2 dimensions, but got a tensor with %d "
                               "dimensions instead." % input.dim())
        dim = (-2, -1)
    r = linalg.matrix_norm(input, "nuc", dim, keepdim)
    return r if out is None else out.copy_(r)


def norm_except_dim(v, pow=2, dim=0):
    """The pow-norm over every dim but `dim` (kept, the others size 1);
    dim=-1: the norm of everything (weight_norm's helper)."""
    from . import linalg
    _tensor_arg("norm_except_dim", "v", v)
    dim = operator.index(dim)
    if dim == -1:
        return linalg.vector_norm(v, pow)
    if not 0 <= dim < max(v.dim(), 1):
        raise IndexError("Dimension out of range (expected to be in range of [%d, %d], but got "
                         "%d)" % (-max(v.dim(), 1), max(v.dim(), 1) - 1, dim))
    others = [d for d in range(v.dim()) if d != dim]
    return linalg.vector_norm(v, pow, others, keepdim=True) if others else v.abs()


# ---- nonzero_static --------------------------------------------------------------------------

def nonzero_static(input, *, size, fill_value=-1):
    """nonzero(input) with exactly `size` rows: cut, or padded with fill_value."""
    _tensor_arg("nonzero_static", "input", input)
    size = operator.index(size)
    fill_value = operator.index(fill_value)
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    nz = input.nonzero()
    n = nz.shape[0]
    if n >= size:
        return nz[:size].clone()
    if size > _INT64_MAX // max(input.dim(), 1):
        raise RuntimeError("nonzero_static: size %d is too large" % size)
    pad = _C.full((size - n, input.dim()), fill_value, dtype=_C.int64, device=input.device)
    return _C.cat([nz, pad], 0)


# ---- in-place aliases ------------------------------------------------------------------------

def erf_(input):
    return input.erf_()


def erfc_(input):
    return input.erfc_()


def arccos_(input):
    return input.arccos_()


def arcsin_(input):
    return input.arcsin_()


def arctan_(input):
    return input.arctan_()


def fix_(input):
    return input.fix_()


# ---- aten spellings of nn functions ----------------------------------------------------------

def adaptive_max_pool1d(input, output_size):
    """(output, indices), as aten's."""
    from .nn import functional as F
    return F.adaptive_max_pool1d_with_indices(input, output_size, return_indices=True)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode=False):
    """(output, indices) of max_pool1d."""
    from .nn import functional as F
    return F.max_pool1d(input, kernel_size, stride if stride not in ((), []) else None, padding,
                        dilation, ceil_mode, return_indices=True)


def alpha_dropout(input, p, train):
    from .nn import functional as F
    return F.alpha_dropout(input, p, train)


def alpha_dropout_(input, p, train):
    from .nn import functional as F
    return F.alpha_dropout(input, p, train, inplace=True)


def feature_alpha_dropout(input, p, train):
    from .nn import functional as F
    return F.feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input, p, train):
    from .nn import functional as F
    return F.feature_alpha_dropout(input, p, train, inplace=True)


def _feature_mask(input, p):
    if input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    shape = list(input.shape[:2]) + [1] * (input.dim() - 2)
    if p == 1:
        return _C.zeros(shape, dtype=input.dtype, device=input.device)
    keep = _C.empty(shape, dtype=input.dtype, device=input.device).bernoulli_(1 - p)
    return keep.div_(1 - p)


def _check_p(p):
    p = float(p)
    if not 0 <= p <= 1:
        raise ValueError("dropout probability has to be between 0 and 1, but got %s" % p)
    return p


def feature_dropout(input, p, train):
    """Dropout of whole channels (dim 1) of an (N, C, *) input, scaled by 1/(1-p)."""
    _tensor_arg("feature_dropout", "input", input)
    p = _check_p(p)
    if not train or p == 0:
        return input
    return input * _feature_mask(input, p)


def feature_dropout_(input, p, train):
    _tensor_arg("feature_dropout_", "input", input)
    p = _check_p(p)
    if not train or p == 0:
        return input
    return input.mul_(_feature_mask(input, p))


def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """aten's embedding_bag: (output, offset2bag, bag_size, max_indices), mode
    0 sum, 1 mean, 2 max. output is F.embedding_bag's; offset2bag[i] is the bag
    of indices[i]; bag_size counts each bag's entries; max_indices (max mode)
    are the weight rows that gave each maximum. The bookkeeping tensors follow
    the CPU kernel's shapes (sum mode: zeros, and offset2bag empty for float32)."""
    from .nn import functional as F
    _tensor_arg("embedding_bag", "weight", weight)
    _tensor_arg("embedding_bag", "indices", indices)
    _tensor_arg("embedding_bag", "offsets", offsets)
    mode = operator.index(mode)
    if mode not in (0, 1, 2):
        raise RuntimeError("embedding_bag: mode must be 0 (sum), 1 (mean) or 2 (max), got %d"
                           % mode)
    if indices.dim() != 1 or offsets.dim() != 1:
        raise ValueError("embedding_bag: indices and offsets must be 1-D")
    out = F.embedding_bag(indices, weight, offsets, None, 2, scale_grad_by_freq,
                          ("sum", "mean", "max")[mode], sparse, per_sample_weights,
                          include_last_offset, padding_idx)
    nbags = out.shape[0]
    dev = weight.device
    n = indices.shape[0]
    starts = offsets[:nbags].to(_C.int64)
    # offset2bag: bag number of each index (a cumulative count of bag starts)
    marks = _C.zeros(n + 1, dtype=_C.int64, device=dev)
    if nbags:
        marks.index_add_(0, starts.clamp(0, n), _C.ones(nbags, dtype=_C.int64, device=dev))
    offset2bag = marks[:n].cumsum(0) - 1 if n else marks[:0]
    ends = _C.cat([starts[1:], _C.tensor([n], device=dev)]) if nbags else starts
    if include_last_offset and nbags:
        ends = _C.cat([starts[1:], offsets[nbags:nbags + 1].to(_C.int64)])
    counts = (ends - starts).clamp(min=0)
    if padding_idx is not None and n:
        keep = (indices != padding_idx).to(_C.int64)
        counts = _C.zeros(nbags, dtype=_C.int64, device=dev).index_add_(0, offset2bag, keep)
    if mode == 0:
        # torch's CPU sum kernel leaves offset2bag empty on its float32 fast path
        o2b = offset2bag[:0] if weight.dtype == _C.float32 else offset2bag
        zeros = _C.zeros(nbags, dtype=_C.int64, device=dev)
        return out, o2b, zeros, zeros.clone()
    if mode == 1:
        return out, offset2bag, counts, counts.clone()
    # max: for each bag and column, the first index whose row reached the maximum
    rows = weight.detach()[indices]                                    # (n, D)
    hit = rows == out.detach()[offset2bag]
    big = _C.full_like(rows, 0, dtype=_C.int64) + _INT64_MAX
    cand = _C.where(hit, indices.to(_C.int64).unsqueeze(1).expand_as(big), big)
    maxi = _C.full((nbags, weight.shape[1]), _INT64_MAX, dtype=_C.int64, device=dev)
    maxi = maxi.scatter_reduce(0, offset2bag.unsqueeze(1).expand_as(cand), cand, "amin")
    maxi = _C.where(maxi == _INT64_MAX, _C.zeros_like(maxi) - 1, maxi)
    return out, offset2bag, counts, maxi


# ---- gradient --------------------------------------------------------------------------------

def _shape_along(t, dim, ndim):
    shape = [1] * ndim
    shape[dim] = -1
    return t.reshape(shape)


def _grad_one(f, dim, h, edge_order):
    """numpy.gradient along one dim: h a Python number (uniform spacing) or a
    1-D tensor of coordinates."""
    n = f.shape[dim]
    nd = f.dim()
    if n < edge_order + 1:
        raise RuntimeError("torch.gradient expected each dimension size to be at least "
                           "edge_order+1")

    def sl(start, length):
        return f.narrow(dim, start, length)

    if not isinstance(h, _C.Tensor):
        h = float(h)
        interior = (sl(2, n - 2) - sl(0, n - 2)) / (2 * h)
        if edge_order == 1:
            first = (sl(1, 1) - sl(0, 1)) / h
            last = (sl(n - 1, 1) - sl(n - 2, 1)) / h
        else:
            first = (-1.5 * sl(0, 1) + 2 * sl(1, 1) - 0.5 * sl(2, 1)) / h
            last = (0.5 * sl(n - 3, 1) - 2 * sl(n - 2, 1) + 1.5 * sl(n - 1, 1)) / h
        return _C.cat([first, interior, last], dim)
    x = h.to(f.dtype)
    if x.dim() != 1 or x.shape[0] != n:
        raise RuntimeError("torch.gradient expected each tensor to be on the same device and "
                           "of size %d along dim %d" % (n, dim))
    dx = x[1:] - x[:-1]
    d1, d2 = dx[:-1], dx[1:]
    a = _shape_along(-d2 / (d1 * (d1 + d2)), dim, nd)
    b = _shape_along((d2 - d1) / (d1 * d2), dim, nd)
    c = _shape_along(d1 / (d2 * (d1 + d2)), dim, nd)
    interior = a * sl(0, n - 2) + b * sl(1, n - 2) + c * sl(2, n - 2)
    if edge_order == 1:
        first = (sl(1, 1) - sl(0, 1)) / dx[0]
        last = (sl(n - 1, 1) - sl(n - 2, 1)) / dx[-1]
    else:
        e1, e2 = dx[0], dx[1]
        first = (-(2 * e1 + e2) / (e1 * (e1 + e2)) * sl(0, 1) + (e1 + e2) / (e1 * e2) * sl(1, 1)
                 - e1 / (e2 * (e1 + e2)) * sl(2, 1))
        e1, e2 = dx[-2], dx[-1]
        last = (e2 / (e1 * (e1 + e2)) * sl(n - 3, 1) - (e2 + e1) / (e1 * e2) * sl(n - 2, 1)
                + (2 * e2 + e1) / (e2 * (e1 + e2)) * sl(n - 1, 1))
    return _C.cat([first, interior, last], dim)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """The gradient of samples of a function, as numpy.gradient: central
    differences inside, one-sided ones of edge_order (1 or 2) at the ends.
    spacing: a number (every dim), a list of numbers (one a dim) or a list
    of 1-D coordinate tensors. Returns a tuple, one tensor a dim."""
    _tensor_arg("gradient", "input", input)
    if edge_order not in (1, 2) or isinstance(edge_order, bool):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    nd = input.dim()
    if dim is None:
        dims = list(range(nd))
    elif isinstance(dim, int):
        dims = [dim]
    else:
        dims = [operator.index(d) for d in dim]
    dims = [d + nd if d < 0 else d for d in dims]
    for d in dims:
        if not 0 <= d < nd:
            raise IndexError("Dimension out of range (expected to be in range of [%d, %d])"
                             % (-nd, nd - 1))
    if len(set(dims)) != len(dims):
        raise RuntimeError("torch.gradient: dim has repeated entries")
    if isinstance(spacing, (list, tuple)):
        if len(spacing) != len(dims):
            raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar or "
                               "it's spacing and dim arguments to have the same length, but got "
                               "a spacing argument of length %d and a dim argument of length %d."
                               % (len(spacing), len(dims)))
        hs = list(spacing)
    else:
        hs = [spacing] * len(dims)
    f = input
    if not (f.is_floating_point() or f.is_complex()):
        f = f.to(_C.get_default_dtype())
    return tuple(_grad_one(f, d, h.item() if isinstance(h, _C.Tensor) and h.dim() == 0 else h,
                           edge_order) for d, h in zip(dims, hs))


# ---- histogramdd -----------------------------------------------------------------------------

_HistogramDD = collections.namedtuple("histogramdd", ["hist", "bin_edges"])


def histogramdd(input, bins, *, range=None, weight=None, density=False, out=None):
    """An N-dimensional histogram of the points in input's last dim (computed
    with NumPy on the host, returned on input's device): bins an int, N ints
    or N 1-D edge tensors; range a flat [min0, max0, min1, max1, ...]."""
    import numpy as np
    _tensor_arg("histogramdd", "input", input)
    if input.dim() < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions, "
                           "but got %d" % input.dim())
    if not input.is_floating_point():
        raise RuntimeError("torch.histogramdd: input tensor and bins tensors should have the "
                           "same dtype, but got input %s" % input.dtype)
    n = input.shape[-1]
    pts = input.detach().reshape(-1, n).cpu().numpy().astype(np.float64)
    if isinstance(bins, int):
        nb = [bins] * n
    else:
        nb = list(bins)
        if len(nb) != n:
            raise RuntimeError("torch.histogramdd: expected %d sequences of bin edges for each "
                               "of the %d dimensions of input, but got %d" % (n, n, len(nb)))
        nb = [b.detach().cpu().numpy().astype(np.float64) if isinstance(b, _C.Tensor)
              else operator.index(b) for b in nb]
    for b in nb:
        if isinstance(b, int) and not 0 < b <= 1 << 24:
            raise RuntimeError("torch.histogramdd(): bins must be > 0 (and at most 2**24), "
                               "but got %d" % b)
    rng = None
    if range is not None:
        r = [float(v) for v in range]
        if len(r) != 2 * n:
            raise RuntimeError("torch.histogramdd: for a %d-dimensional histogram, range "
                               "should have %d elements, but got %d" % (n, 2 * n, len(r)))
        rng = [(r[2 * i], r[2 * i + 1]) for i in builtins.range(n)]
    w = None
    if weight is not None:
        w = weight.detach().reshape(-1).cpu().numpy().astype(np.float64)
    hist, edges = np.histogramdd(pts, bins=nb, range=rng, weights=w, density=density)
    hist = _C.tensor(hist, dtype=input.dtype, device=input.device)
    edges = tuple(_C.tensor(e, dtype=input.dtype, device=input.device) for e in edges)
    return _HistogramDD(hist, edges)


# ---- autocast state --------------------------------------------------------------------------

_setter_on = threading.local()


def _ac():
    from .amp import autocast_mode
    return autocast_mode


def is_autocast_cpu_enabled():
    """Whether autocast is on for the CPU in this thread."""
    return _ac().is_autocast_enabled("cpu")


def get_autocast_gpu_dtype():
    """The CUDA autocast dtype of this thread (float16 unless changed)."""
    return _ac().get_autocast_dtype("cuda")


def get_autocast_cpu_dtype():
    """The CPU autocast dtype of this thread (bfloat16 unless changed)."""
    return _ac().get_autocast_dtype("cpu")


def set_autocast_enabled(device_type, enabled=None):
    """Turn autocast on or off for device_type ('cuda' when only a flag is
    given, torch's legacy form) in this thread, outside any context manager."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    ac = _ac()
    if device_type not in ("cuda", "cpu"):
        raise RuntimeError("unsupported autocast device_type '%s'" % device_type)
    st = ac._state()
    st[device_type] = (bool(enabled), st[device_type][1])
    # the autocast helpers skip all work while no region is open: a setter
    # that turns autocast on opens one until it is turned off again
    on = getattr(_setter_on, "devices", None)
    if on is None:
        on = _setter_on.devices = set()
    if enabled and device_type not in on:
        on.add(device_type)
        ac._open[0] += 1
    elif not enabled and device_type in on:
        on.discard(device_type)
        ac._open[0] -= 1


def set_autocast_cpu_enabled(enabled):
    set_autocast_enabled("cpu", enabled)


def set_autocast_dtype(device_type, dtype):
    """The dtype autocast casts to on device_type, in this thread."""
    ac = _ac()
    if device_type not in ("cuda", "cpu"):
        raise RuntimeError("unsupported autocast device_type '%s'" % device_type)
    if not isinstance(dtype, _C.dtype):
        raise TypeError("set_autocast_dtype(): dtype must be a dtype, not %s"
                        % type(dtype).__name__)
    st = ac._state()
    st[device_type] = (st[device_type][0], dtype)


def set_autocast_gpu_dtype(dtype):
    set_autocast_dtype("cuda", dtype)


def set_autocast_cpu_dtype(dtype):
    set_autocast_dtype("cpu", dtype)


_cache_enabled = [True]


def is_autocast_cache_enabled():
    """The autocast weight-cast cache flag (there is no cache here: casts
    are recomputed; the flag is kept for code that reads it back)."""
    return _cache_enabled[0]


def set_autocast_cache_enabled(enabled):
    _cache_enabled[0] = bool(enabled)


def clear_autocast_cache():
    """Nothing to clear: autocast keeps no cast cache here."""
