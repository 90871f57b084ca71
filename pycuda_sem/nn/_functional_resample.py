"""torch.nn.functional.interpolate (nearest, nearest-exact, linear,
bilinear, bicubic, trilinear, area) and the channel dropouts
dropout1d/2d/3d (re-exported by functional.py). Interpolation works one
spatial dim at a time: an index_select of the source positions each output
reads (and, for the linear modes, a lerp between two; for bicubic, torch's
cubic convolution, A = -0.75, over four clamped neighbours), so it is
differentiable through index_select's backward with torch's source-position
formulas. area is adaptive average pooling to the output size, as torch's.
antialias=True (bilinear, bicubic) resamples each dim by a matrix of
torch's (PIL's) filter weights, the filter stretched by the downscale
factor and each row normalised, applied as one matmul per dim."""
import math
import warnings

from .. import _C

__all__ = ["interpolate", "upsample", "dropout1d", "dropout2d", "dropout3d"]

_MODES_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}
_CUBIC_A = -0.75  # torch's upsample_bicubic2d coefficient


def _out_sizes(input, size, scale_factor, d):
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined")
    spatial = tuple(input.shape[2:])
    if size is not None:
        sizes = tuple(size) if isinstance(size, (list, tuple)) else (size,) * d
        if len(sizes) != d:
            raise ValueError("Input and output must have the same number of spatial dimensions, "
                             "but got input with spatial dimensions of %s and output size of %s. "
                             "Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                             "output size in (o1, o2, ...,oK) format." % (list(spatial),
                                                                          list(sizes)))
        return tuple(int(s) for s in sizes), None
    scales = tuple(scale_factor) if isinstance(scale_factor, (list, tuple)) \
        else (scale_factor,) * d
    if len(scales) != d:
        raise ValueError("Input and scale_factor must have the same number of spatial "
                         "dimensions, but got input with spatial dimensions of %s and "
                         "scale_factor of shape %s." % (list(spatial), list(scales)))
    return tuple(int(math.floor(n * float(s))) for n, s in zip(spatial, scales)), scales


def _cubic_weights(t):
    """The four weights of source positions floor - 1 .. floor + 2 for a
    fractional offset t (Keys' cubic convolution, torch's A)."""
    a = _CUBIC_A

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return (far(t + 1), near(t), near(1 - t), far(2 - t))


def _source(out_len, in_len, scale, align_corners, mode):
    """Per output position: the source coordinate (float)."""
    if mode in ("nearest", "nearest-exact"):
        r = (1.0 / scale) if scale is not None else in_len / out_len
        off = 0.5 if mode == "nearest-exact" else 0.0
        return [min(int(math.floor((i + off) * r)), in_len - 1) for i in range(out_len)]
    if align_corners:
        r = (in_len - 1) / (out_len - 1) if out_len > 1 else 0.0
        return [i * r for i in range(out_len)]
    r = (1.0 / scale) if scale is not None else in_len / out_len
    if mode == "bicubic":  # not clamped at 0: the neighbours are clamped instead
        return [(i + 0.5) * r - 0.5 for i in range(out_len)]
    return [max((i + 0.5) * r - 0.5, 0.0) for i in range(out_len)]


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resizes the spatial dims of an [N, C, *spatial] input."""
    d = input.dim() - 2
    if d < 1 or d > 3:
        raise NotImplementedError("Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                                  "%dD) for the modes: nearest | linear | bilinear | bicubic | "
                                  "trilinear | area | nearest-exact (got %s)" % (input.dim(), mode))
    if mode in ("nearest", "nearest-exact", "area"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif mode in _MODES_DIMS:
        if _MODES_DIMS[mode] != d:
            raise NotImplementedError("Got %dD input, but %s mode needs %dD input"
                                      % (input.dim(), mode, _MODES_DIMS[mode] + 2))
        align_corners = bool(align_corners)
    else:
        raise NotImplementedError("interpolate(mode=%r) is not implemented in pycuda_sem "
                                  "(nearest, nearest-exact, linear, bilinear, bicubic, trilinear, "
                                  "area are)" % mode)
    if antialias and mode not in ("bilinear", "bicubic"):
        raise ValueError("Anti-alias option is restricted to bilinear and bicubic modes and requires a "
                         "4-D tensor as input")
    sizes, scales = _out_sizes(input, size, scale_factor, d)
    if recompute_scale_factor:
        scales = None  # the scale follows from the sizes, as torch
    if mode == "area":
        from . import functional as F
        pool = (F.adaptive_avg_pool1d, F.adaptive_avg_pool2d, F.adaptive_avg_pool3d)[d - 1]
        return pool(input, sizes if d > 1 else sizes[0])
    out = input
    if antialias:
        for i in range(d):
            scale = None if scales is None else float(scales[i])
            out = _aa_dim(out, 2 + i, input.shape[2 + i], sizes[i], scale, align_corners, mode)
        return out
    for i in range(d):
        dim, in_len, out_len = 2 + i, input.shape[2 + i], sizes[i]
        scale = None if scales is None else float(scales[i])
        src = _source(out_len, in_len, scale, align_corners, mode)
        if mode in ("nearest", "nearest-exact"):
            idx = _C.tensor(src, dtype=_C.int64, device=input.device)
            out = out.index_select(dim, idx)
            continue
        if mode == "bicubic":
            out = _cubic_dim(out, dim, in_len, out_len, src)
            continue
        lo = [min(int(math.floor(s)), in_len - 1) for s in src]
        hi = [min(j + 1, in_len - 1) for j in lo]
        w = _C.tensor([s - j for s, j in zip(src, lo)], dtype=out.dtype, device=input.device)
        a = out.index_select(dim, _C.tensor(lo, dtype=_C.int64, device=input.device))
        b = out.index_select(dim, _C.tensor(hi, dtype=_C.int64, device=input.device))
        w = w.reshape((out_len,) + (1,) * (out.dim() - dim - 1))
        out = a + (b - a) * w
    return out


def _aa_weights(in_len, out_len, scale, align_corners, mode):
    """The [out_len, in_len] antialiasing weights of torch's separable
    resampling: each output's window of inputs, the filter (triangle for
    bilinear, cubic with a = -0.5 for bicubic) stretched by the downscale
    factor, normalised to sum to one."""
    import numpy as np
    if align_corners:
        r = (in_len - 1) / (out_len - 1) if out_len > 1 else 0.0
    else:
        r = (1.0 / scale) if scale is not None else in_len / out_len
    interp = 2 if mode == "bilinear" else 4
    support = interp * 0.5 * r if r >= 1.0 else interp * 0.5
    inv = 1.0 / r if r >= 1.0 else 1.0

    def filt(x):
        x = abs(x)
        if mode == "bilinear":
            return 1.0 - x if x < 1.0 else 0.0
        a = -0.5
        if x < 1.0:
            return ((a + 2) * x - (a + 3)) * x * x + 1
        if x < 2.0:
            return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        return 0.0

    w = np.zeros((out_len, in_len))
    for i in range(out_len):
        center = r * (i + 0.5)
        lo = max(int(center - support + 0.5), 0)
        hi = min(int(center + support + 0.5), in_len)
        row = [filt((j - center + 0.5) * inv) for j in range(lo, hi)]
        total = sum(row)
        if total != 0.0:
            w[i, lo:hi] = [v / total for v in row]
    return w


def _aa_dim(x, dim, in_len, out_len, scale, align_corners, mode):
    """x resampled along dim by the antialiasing weights: one matmul."""
    w = _C.tensor(_aa_weights(in_len, out_len, scale, align_corners, mode), dtype=x.dtype, device=x.device)
    return (x.movedim(dim, -1) @ w.t()).movedim(-1, dim)


def _cubic_dim(x, dim, in_len, out_len, src):
    """x resampled along dim at the source coordinates src: the weighted sum
    of the four neighbours floor(s) - 1 .. floor(s) + 2, clamped to the
    edge, as torch's upsample_bicubic2d reads them."""
    base = [int(math.floor(s)) for s in src]
    ws = [_cubic_weights(s - b) for s, b in zip(src, base)]
    shape = (out_len,) + (1,) * (x.dim() - dim - 1)
    out = None
    for k in range(4):
        idx = [min(max(b - 1 + k, 0), in_len - 1) for b in base]
        w = _C.tensor([wk[k] for wk in ws], dtype=x.dtype, device=x.device).reshape(shape)
        term = x.index_select(dim, _C.tensor(idx, dtype=_C.int64, device=x.device)) * w
        out = term if out is None else out + term
    return out


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    warnings.warn("nn.functional.upsample is deprecated. Use nn.functional.interpolate "
                  "instead.", UserWarning, stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def _channel_dropout(input, p, training, inplace, batched_dims, name):
    if p < 0.0 or p > 1.0:
        raise ValueError("dropout probability has to be between 0 and 1, but got %s" % p)
    if input.dim() not in (batched_dims - 1, batched_dims):
        raise RuntimeError("%s: Expected %dD or %dD input, but received a %dD input"
                           % (name, batched_dims - 1, batched_dims, input.dim()))
    if not training or p == 0.0:
        return input
    # one draw per channel: [N, C, 1, ...] (unbatched: [C, 1, ...])
    lead = 2 if input.dim() == batched_dims else 1
    shape = tuple(input.shape[:lead]) + (1,) * (input.dim() - lead)
    if p == 1.0:
        mask = _C.zeros(shape, dtype=input.dtype, device=input.device)
    else:
        mask = _C.empty(shape, dtype=input.dtype, device=input.device).bernoulli_(1 - p)
        mask.div_(1 - p)
    return input.mul_(mask) if inplace else input * mask


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of an (N, C, L) or (C, L) input."""
    return _channel_dropout(input, p, training, inplace, 3, "dropout1d")


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of an (N, C, H, W) or (C, H, W) input."""
    return _channel_dropout(input, p, training, inplace, 4, "dropout2d")


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of an (N, C, D, H, W) or (C, D, H, W) input."""
    return _channel_dropout(input, p, training, inplace, 5, "dropout3d")
