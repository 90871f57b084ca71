"""Max pooling that also returns where each maximum came from, its inverse
(max_unpool), and power-average pooling (lp_pool), for torch.nn.functional
(re-exported by functional.py).

The indices are torch's: for each output element, the flat position of the
chosen input element within its (unpadded) spatial plane, int64. They come
from one argmax over a gathered [N, C, *out, K] block of candidates, and the
values from one gather at that argmax, so the gradient goes to the chosen
element only, as torch's does (amax would share it among ties). argmax keeps
the first of equal maxima, torch's choice too. Everything is a composition
of differentiable C ops: no autograd formula of its own."""
import math

from .. import _C
from ._functional_conv import _batched, _pool_windows, _tuple

__all__ = ["max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices",
           "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "adaptive_max_pool3d_with_indices", "max_unpool1d", "max_unpool2d", "max_unpool3d",
           "lp_pool1d", "lp_pool2d", "lp_pool3d"]


def _plane_strides(spatial):
    """Row-major strides of the spatial plane (the flat index's weights)."""
    strides, acc = [], 1
    for s in reversed(spatial):
        strides.append(acc)
        acc *= s
    return strides[::-1]


def _along(t, i, ndim):
    """1-D t reshaped to broadcast along dim i of an ndim-dim block."""
    shape = [1] * ndim
    shape[i] = -1
    return t.reshape(shape)


def _pick(values, flat_index, unbatched):
    """(max, index) over the last dim of values [N, C, *out, K], index taken
    from flat_index (broadcastable to it)."""
    arg = values.argmax(-1, keepdim=True)
    out = values.gather(-1, arg).squeeze(-1)
    idx = flat_index.expand(values.shape).gather(-1, arg).squeeze(-1)
    if unbatched:
        out, idx = out.squeeze(0), idx.squeeze(0)
    return out, idx


def _max_pool_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode, d, name):
    fill = -math.inf if input.is_floating_point() else None
    win, _, unbatched, geo = _pool_windows(input, kernel_size, stride, padding, dilation,
                                           ceil_mode, d, name, fill)
    kernel, stride, dilation, pads = geo
    n, c = win.shape[0], win.shape[1]
    out = tuple(win.shape[2:2 + d])
    x, _ = _batched(input, d, name)
    spatial = tuple(x.shape[2:])
    # input coordinate of (output position o, kernel offset k) along dim i:
    # o stride - left pad + k dilation; the flat index weighs them row-major
    ndim = 2 * d
    flat = None
    for i, w in enumerate(_plane_strides(spatial)):
        o = _C.arange(out[i], device=input.device) * stride[i] - pads[i][0]
        k = _C.arange(kernel[i], device=input.device) * dilation[i]
        term = (_along(o, i, ndim) + _along(k, d + i, ndim)) * w
        flat = term if flat is None else flat + term
    kk = 1
    for k in kernel:
        kk *= k
    values = win.reshape((n, c) + out + (kk,))
    return _pick(values, flat.reshape((1, 1) + out + (kk,)), unbatched)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """(max_pool1d(input, ...), flat indices of the maxima); return_indices
    is ignored, as torch's."""
    return _max_pool_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode, 1,
                                  "max_pool1d")


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return _max_pool_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode, 2,
                                  "max_pool2d")


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return _max_pool_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode, 3,
                                  "max_pool3d")


def _adaptive_sizes(x, output_size, d, name):
    sizes = _tuple(output_size, d, "output_size") if not isinstance(output_size, (list, tuple)) \
        else tuple(x.shape[2 + i] if s is None else int(s) for i, s in enumerate(output_size))
    if len(sizes) != d:
        raise ValueError("%s: output_size must have %d elements" % (name, d))
    for s in sizes:
        if s <= 0:
            raise ValueError("%s: output_size must be positive, got %s" % (name, list(sizes)))
        if s > 2 ** 31 - 1:
            raise RuntimeError("%s: output_size %d is too large" % (name, s))
    return sizes


def _adaptive_max_pool_with_indices(input, output_size, d, name):
    """Bin j of S over a length L spans [floor(jL/S), ceil((j+1)L/S)), at most
    ceil(L/S) + 1 long. Every bin gathers that many candidates, the offsets
    past its end clamped to its last element: a repeat of an element already
    seen, so neither the max nor the first argmax changes."""
    x, unbatched = _batched(input, d, name)
    if x.numel() == 0 and any(s == 0 for s in x.shape[2:]):
        raise RuntimeError("%s: the spatial dims of the input must be non-empty, got %s"
                           % (name, list(x.shape)))
    sizes = _adaptive_sizes(x, output_size, d, name)
    n, c = x.shape[0], x.shape[1]
    spatial = tuple(x.shape[2:])
    dev = input.device
    ndim = 2 * d
    flat = None
    spans = []
    for i, w in enumerate(_plane_strides(spatial)):
        length, s = spatial[i], sizes[i]
        j = _C.arange(s, device=dev)
        start = (j * length).div(s, rounding_mode="floor")
        end = -((-(j + 1) * length).div(s, rounding_mode="floor"))
        span = -(-length // s) + 1
        spans.append(span)
        k = _C.arange(span, device=dev)
        pos = _C.minimum(_along(start, i, ndim) + _along(k, d + i, ndim),
                         _along(end - 1, i, ndim))
        term = pos * w
        flat = term if flat is None else flat + term
    kk = 1
    for sp in spans:
        kk *= sp
    flat = flat.reshape(sizes + (kk,))
    plane = x.reshape(n, c, -1)
    values = plane.gather(-1, flat.reshape(1, 1, -1).expand(n, c, flat.numel()))
    values = values.reshape((n, c) + sizes + (kk,))
    return _pick(values, flat.reshape((1, 1) + sizes + (kk,)), unbatched)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """(adaptive_max_pool1d(input, output_size), flat indices of the maxima)."""
    return _adaptive_max_pool_with_indices(input, output_size, 1, "adaptive_max_pool1d")


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    return _adaptive_max_pool_with_indices(input, output_size, 2, "adaptive_max_pool2d")


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    return _adaptive_max_pool_with_indices(input, output_size, 3, "adaptive_max_pool3d")


# ---- max_unpool ------------------------------------------------------------------------------

# torch's C++ scalar type names, as its dtype errors print them
_SCALAR_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
                 "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def _unpool_output_size(input, kernel, stride, padding, output_size):
    d = len(kernel)
    default = [(input.shape[input.dim() - d + i] - 1) * stride[i] + kernel[i] - 2 * padding[i]
               for i in range(d)]
    if output_size is None:
        ret = default
    else:
        output_size = [int(s) for s in output_size]
        if len(output_size) == d + 2:
            output_size = output_size[2:]
        if len(output_size) != d:
            raise ValueError("output_size should be a sequence containing %d or %d elements, but "
                             "it has a length of '%d'" % (d, d + 2, len(output_size)))
        for i in range(d):
            lo, hi = default[i] - stride[i], default[i] + stride[i]
            if not lo < output_size[i] < hi:
                raise ValueError('invalid output_size "%s" (dim %d must be between %d and %d)'
                                 % (tuple(output_size), i, lo, hi))
        ret = output_size
    for i in range(d):
        if ret[i] < 0:
            raise ValueError("max_unpooling: output_size must contain non-negative spatial "
                             "dimensions, but got output_size[%d]=%d" % (i, ret[i]))
    return ret


def _max_unpool(input, indices, kernel_size, stride, padding, output_size, d, name):
    """Zeros of the output size with input's values written at the indices
    (each [N, C] plane flat), by one scatter: differentiable in input (its
    gradient is the output's gradient gathered back at the indices)."""
    kernel = _tuple(kernel_size, d, "kernel_size")
    stride = kernel if stride is None else _tuple(stride, d, "stride")
    padding = _tuple(padding, d, "padding")
    rank = 2 if d == 1 else d  # torch's 1-D form is the 2-D one on [.., L, 1]
    if input.dim() not in (d + 1, d + 2):
        raise RuntimeError("Input to max_unpooling%dd should be a %dd or %dd Tensor, but got a "
                           "tensor with %d dimensions." % (rank, rank + 1, rank + 2, input.dim()))
    if indices.dtype != _C.int64:
        name_ = str(indices.dtype).rsplit(".", 1)[-1]
        raise RuntimeError("elements in indices should be type int64 but got: %s"
                           % _SCALAR_NAMES.get(name_, name_))
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError("Expected shape of indices to be same as that of the input tensor (%s) "
                           "but got indices tensor with shape: %s"
                           % (list(input.shape), list(indices.shape)))
    size = _unpool_output_size(input, kernel, stride, padding, output_size)
    lead = tuple(input.shape[:input.dim() - d])
    plane = 1
    for s in size:
        plane *= s
    flat_idx = indices.reshape(lead + (-1,))
    if flat_idx.numel():
        # one host read, as torch's CPU kernel checks every index
        lo, hi = flat_idx.min().item(), flat_idx.max().item()
        if lo < 0 or hi >= plane:
            shown = size + [1] if d == 1 else size
            raise RuntimeError("Found an invalid max index: %d (output volumes are of size %s)"
                               % (hi if hi >= plane else lo, "x".join(str(s) for s in shown)))
    out = _C.zeros(lead + (plane,), dtype=input.dtype, device=input.device)
    out = out.scatter(-1, flat_idx, input.reshape(lead + (-1,)))
    return out.reshape(lead + tuple(size))


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool1d: values back at their indices, zeros elsewhere."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1,
                       "max_unpool1d")


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2,
                       "max_unpool2d")


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 3,
                       "max_unpool3d")


# ---- lp_pool ---------------------------------------------------------------------------------

def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, d):
    """(sum over the window of x^p)^(1/p), torch's composition: the average
    of x^p times the window size, its sign kept and negative values cut by
    relu (so p-th roots of sums rounded below zero give 0, not NaN); p = inf
    is the max of |x|, -inf the min."""
    from . import functional as F
    max_pool = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[d - 1]
    avg_pool = (F.avg_pool1d, F.avg_pool2d, F.avg_pool3d)[d - 1]
    if isinstance(norm_type, (int, float)):
        if norm_type == 0:
            raise ValueError("norm_type must be a non-zero value, but got %s" % norm_type)
        if norm_type == math.inf:
            return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -math.inf:
            return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    kernel = _tuple(kernel_size, d, "kernel_size")
    count = 1
    for k in kernel:
        count *= k
    out = avg_pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * out.abs().relu()).mul(count).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3)
