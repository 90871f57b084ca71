"""torch.nn.functional convolutions and pooling (re-exported by
functional.py), without cuDNN: the windows of the (padded) input are one
as_strided view [N, C, *out, *kernel], copied once into columns and
multiplied with the weight by one batched matmul (cuBLAS on the GPU), as an
im2col convolution. Pooling reduces the same windows. Everything is a
composition of differentiable C ops (as_strided's backward adds the
overlapping windows' gradients), so autograd needs no formula of its own.
Speed is that of a copy plus a matmul, well below cuDNN's for large images."""
import math

from .. import _C
from ..amp.autocast_mode import _to_lower


def _tuple(v, d, name):
    if isinstance(v, (list, tuple)):
        if len(v) != d:
            raise ValueError("%s must be an int or a tuple of %d ints, got %r" % (name, d, v))
        return tuple(int(x) for x in v)
    return (int(v),) * d


def _batched(input, d, name):
    """(input with a batch dim, whether one was added)."""
    if input.dim() == d + 1:
        return input.unsqueeze(0), True
    if input.dim() != d + 2:
        raise RuntimeError("Expected %dD (unbatched) or %dD (batched) input to %s, but got input "
                           "of size: %s" % (d + 1, d + 2, name, list(input.shape)))
    return input, False


def _windows(x, kernel, stride, dilation):
    """[N, C, *out, *kernel] view of a contiguous [N, C, *spatial] x."""
    d = len(kernel)
    spatial = x.shape[2:]
    out = tuple((spatial[i] - dilation[i] * (kernel[i] - 1) - 1) // stride[i] + 1 for i in range(d))
    if any(o <= 0 for o in out):
        raise RuntimeError("Calculated output size %s is too small: the (padded) input %s is "
                           "smaller than the kernel %s" % (list(out), list(spatial), list(kernel)))
    st = x.stride()
    size = tuple(x.shape[:2]) + out + tuple(kernel)
    strides = (st[0], st[1]) + tuple(st[2 + i] * stride[i] for i in range(d)) \
        + tuple(st[2 + i] * dilation[i] for i in range(d))
    return x.as_strided(size, strides, x.storage_offset()), out


def _pad_list(pads):
    # F.pad's order: the last dim first, (left, right) each
    flat = []
    for left, right in reversed(pads):
        flat += [left, right]
    return flat


class _InputGradLayout:
    """Identity in the forward; in the backward the input's gradient is
    made dense in the input's memory format, as torch's convolution returns
    it. The im2col path's gradient arrives through the padding's slice and
    may be strided (scripts then fail on grad.view(n, -1), as in a
    gradient penalty)."""
    _fn = None

    @classmethod
    def apply(cls, x, channels_last):
        if cls._fn is None:
            from ..autograd import Function

            class InputGradLayout(Function):
                @staticmethod
                def forward(ctx, t, cl):
                    ctx.cl = cl
                    return t.view_as(t)

                @staticmethod
                def backward(ctx, g):
                    from .. import channels_last as _cl2, channels_last_3d as _cl3, contiguous_format
                    fmt = contiguous_format if not ctx.cl else (_cl2 if g.dim() == 4 else _cl3)
                    return g.contiguous(memory_format=fmt), None

            cls._fn = InputGradLayout
        return cls._fn.apply(x, channels_last)


def _channels_last(x, d):
    """Whether x is laid out channels_last (2-D) or channels_last_3d (3-D)
    and not also plainly contiguous (as torch's suggest_memory_format)."""
    from .. import channels_last, channels_last_3d
    fmt = channels_last if d == 2 else channels_last_3d
    return x.is_contiguous(memory_format=fmt) and not x.is_contiguous()


def _conv(input, weight, bias, stride, padding, dilation, groups, d, name):
    from .functional import pad as _pad
    input, weight, bias = _to_lower(input, weight, bias)
    x, unbatched = _batched(input, d, name)
    keep_cl = d in (2, 3) and _channels_last(x, d)  # the output's format follows the input's
    if x.requires_grad and _C.is_grad_enabled():
        x = _InputGradLayout.apply(x, keep_cl)
    if weight.dim() != d + 2:
        raise RuntimeError("%s: expected a %dD weight [out, in/groups, *kernel], got %s"
                           % (name, d + 2, list(weight.shape)))
    n, c = x.shape[0], x.shape[1]
    o, cg = weight.shape[0], weight.shape[1]
    if groups < 1 or c != cg * groups:
        raise RuntimeError("Given groups=%d, weight of size %s, expected input%s to have %d "
                           "channels, but got %d channels instead"
                           % (groups, list(weight.shape), list(x.shape), cg * groups, c))
    if o % groups:
        raise RuntimeError("Given groups=%d, expected weight to be divisible by %d at dimension 0, "
                           "but got weight of size %s instead" % (groups, groups,
                                                                   list(weight.shape)))
    kernel = tuple(weight.shape[2:])
    stride, dilation = _tuple(stride, d, "stride"), _tuple(dilation, d, "dilation")
    if isinstance(padding, str):
        if padding == "valid":
            pads = [(0, 0)] * d
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            pads = []
            for k, dl in zip(kernel, dilation):
                total = dl * (k - 1)
                pads.append((total // 2, total - total // 2))
        else:
            raise ValueError("Invalid padding string %r, should be one of {'valid', 'same'}"
                             % padding)
    else:
        pads = [(p, p) for p in _tuple(padding, d, "padding")]
    if any(p < 0 for pr in pads for p in pr):
        raise RuntimeError("%s: negative padding is not supported" % name)
    if any(p for pr in pads for p in pr):
        x = _pad(x, _pad_list(pads))
    win, out = _windows(x.contiguous(), kernel, stride, dilation)
    kk = 1
    for k in kernel:
        kk *= k
    npos = 1
    for s in out:
        npos *= s
    # columns [groups, N * positions, C/groups * kernel] and weight
    # [groups, C/groups * kernel, O/groups]: one batched matmul
    perm = (0,) + tuple(range(2, 2 + d)) + (1,) + tuple(range(2 + d, 2 + 2 * d))
    cols = win.permute(*perm).reshape(n * npos, groups, cg * kk).transpose(0, 1)
    w = weight.reshape(groups, o // groups, cg * kk).transpose(1, 2)
    y = cols.matmul(w)  # [groups, N * positions, O/groups]
    y = y.transpose(0, 1).reshape((n,) + out + (o,))
    y = y.permute(*((0, d + 1) + tuple(range(1, d + 1))))
    # The matmul leaves the channels innermost (channels_last strides). torch
    # returns the input's memory format: contiguous unless the input is
    # channels_last, and scripts rely on it (out.view(n, -1) after a conv).
    if not keep_cl:
        y = y.contiguous()
    if bias is not None:
        y = y + bias.reshape((1, o) + (1,) * d)
    return y.squeeze(0) if unbatched else y


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution (cross-correlation, as torch) of [N, C, L] or [C, L]."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution (cross-correlation, as torch) of [N, C, H, W] or [C, H, W]."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution (cross-correlation, as torch) of [N, C, D, H, W] or [C, D, H, W]."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, d,
                    name):
    """The gradient of a convolution as a convolution: the input spread out
    by `stride` (zeros between its elements), padded by dilation (k - 1) -
    padding on each side (+ output_padding on the right; a negative pad
    crops), then convolved at stride 1 with the weight flipped and its in
    and out channels swapped per group."""
    from .functional import pad as _pad
    input, weight, bias = _to_lower(input, weight, bias)
    x, unbatched = _batched(input, d, name)
    if weight.dim() != d + 2:
        raise RuntimeError("%s: expected a %dD weight [in, out/groups, *kernel], got %s"
                           % (name, d + 2, list(weight.shape)))
    c = x.shape[1]
    if groups < 1 or c != weight.shape[0] or c % groups:
        raise RuntimeError("Given transposed=1, weight of size %s, expected input%s to have %d "
                           "channels, but got %d channels instead"
                           % (list(weight.shape), list(x.shape), weight.shape[0], c))
    stride, padding = _tuple(stride, d, "stride"), _tuple(padding, d, "padding")
    output_padding, dilation = (_tuple(output_padding, d, "output_padding"),
                                _tuple(dilation, d, "dilation"))
    for op, s, dl in zip(output_padding, stride, dilation):
        if op >= max(s, dl):
            raise RuntimeError("output padding must be smaller than either stride or dilation, "
                               "but got output_padding=%s, stride=%s, dilation=%s"
                               % (list(output_padding), list(stride), list(dilation)))
    kernel = tuple(weight.shape[2:])
    if any(s > 1 for s in stride):
        spread = tuple((n - 1) * s + 1 for n, s in zip(x.shape[2:], stride))
        up = _C.zeros(tuple(x.shape[:2]) + spread, dtype=x.dtype, device=x.device)
        up[(slice(None), slice(None)) + tuple(slice(None, None, s) for s in stride)] = x
        x = up
    pads = [(dl * (k - 1) - p, dl * (k - 1) - p + op)
            for k, p, op, dl in zip(kernel, padding, output_padding, dilation)]
    if any(v for pr in pads for v in pr):
        x = _pad(x, _pad_list(pads))
    cin_g, cout_g = c // groups, weight.shape[1]
    w = weight.reshape((groups, cin_g, cout_g) + kernel).transpose(1, 2)
    w = w.reshape((groups * cout_g, cin_g) + kernel).flip(tuple(range(2, 2 + d)))
    y = _conv(x, w, bias, 1, 0, dilation, groups, d, name)
    return y.squeeze(0) if unbatched else y


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 1, "conv_transpose1d")


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 2, "conv_transpose2d")


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 3, "conv_transpose3d")


# ---- pooling ---------------------------------------------------------------------------------


def _pool_geometry(x, kernel, stride, padding, dilation, ceil_mode, name):
    d = len(kernel)
    stride = kernel if stride is None or stride == [] or stride == () else _tuple(stride, d,
                                                                                  "stride")
    padding, dilation = _tuple(padding, d, "padding"), _tuple(dilation, d, "dilation")
    for k, p, dl in zip(kernel, padding, dilation):
        if p * 2 > dl * (k - 1) + 1:
            raise RuntimeError("%s: pad should be at most half of effective kernel size, but got "
                               "pad=%d, kernel_size=%d and dilation=%d" % (name, p, k, dl))
    pads = []
    for i in range(d):
        length = x.shape[2 + i]
        span = length + 2 * padding[i] - dilation[i] * (kernel[i] - 1) - 1
        if span < 0:
            raise RuntimeError("%s: the (padded) input %s is smaller than the kernel %s"
                               % (name, list(x.shape[2:]), list(kernel)))
        out = (-(-span // stride[i]) if ceil_mode else span // stride[i]) + 1
        if ceil_mode and (out - 1) * stride[i] >= length + padding[i]:
            out -= 1  # the last window must start inside the input or its left padding
        extra = max(0, (out - 1) * stride[i] + dilation[i] * (kernel[i] - 1) + 1
                    - (length + 2 * padding[i]))
        pads.append((padding[i], padding[i] + extra))
    return stride, dilation, pads


def _pool_windows(input, kernel_size, stride, padding, dilation, ceil_mode, d, name, fill):
    from .functional import pad as _pad
    x, unbatched = _batched(input, d, name)
    kernel = _tuple(kernel_size, d, "kernel_size")
    stride, dilation, pads = _pool_geometry(x, kernel, stride, padding, dilation, ceil_mode, name)
    if any(p for pr in pads for p in pr):
        if fill is None:
            raise NotImplementedError("%s: padding (or ceil_mode) of a %s input is not "
                                      "implemented in pycuda_sem" % (name, input.dtype))
        x = _pad(x, _pad_list(pads), value=fill)
    win, _ = _windows(x.contiguous(), kernel, stride, dilation)
    return win, tuple(range(2 + d, 2 + 2 * d)), unbatched, (kernel, stride, dilation, pads)


def _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, d, name):
    if return_indices:
        from ._functional_pool_idx import _max_pool_with_indices
        return _max_pool_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode, d,
                                      name)
    fill = -math.inf if input.is_floating_point() else None
    win, kdims, unbatched, _ = _pool_windows(input, kernel_size, stride, padding, dilation,
                                             ceil_mode, d, name, fill)
    y = win.amax(kdims)
    return y.squeeze(0) if unbatched else y


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 1,
                     "max_pool1d")


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 2,
                     "max_pool2d")


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 3,
                     "max_pool3d")


def _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override,
              d, name):
    win, kdims, unbatched, geo = _pool_windows(input, kernel_size, stride, padding, 1, ceil_mode,
                                               d, name, 0.0)
    total = win.sum(kdims)
    if divisor_override:
        y = total / divisor_override
    else:
        # how many elements each window averages: the input's, plus its
        # padding with count_include_pad, never the ceil_mode overhang
        kernel, stride_, dilation, pads = geo
        x, _ = _batched(input, d, name)
        ones = _C.ones(tuple(x.shape[2:]), dtype=total.dtype, device=input.device)
        from .functional import pad as _pad
        if count_include_pad:
            ones = _pad(ones, _pad_list([(p, p) for p, _ in pads]), value=1.0)
            ones = _pad(ones, _pad_list([(0, r - p) for p, r in pads]), value=0.0)
        else:
            ones = _pad(ones, _pad_list(pads), value=0.0)
        ones = ones.reshape((1, 1) + tuple(ones.shape))
        cw, _ = _windows(ones.contiguous(), kernel, stride_, dilation)
        y = total / cw.sum(kdims)
    return y.squeeze(0) if unbatched else y


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, None, 1,
                     "avg_pool1d")


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override, 2, "avg_pool2d")


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override, 3, "avg_pool3d")


def _adaptive_pool(input, output_size, d, name, reduce):
    """Adaptive pooling by `reduce` ('mean' or 'amax'), one dim at a time:
    bin i of a dim of length L spans [floor(i L / S), ceil((i + 1) L / S));
    equal bins are one reshape and one reduction."""
    x, unbatched = _batched(input, d, name)
    sizes = _tuple(output_size, d, "output_size") if not isinstance(output_size, (list, tuple)) \
        else tuple(x.shape[2 + i] if s is None else int(s) for i, s in enumerate(output_size))
    if len(sizes) != d:
        raise ValueError("%s: output_size must have %d elements" % (name, d))
    y = x
    for i, s in enumerate(sizes):
        dim, length = 2 + i, x.shape[2 + i]
        if s <= 0:
            raise ValueError("%s: output_size must be positive, got %s" % (name, list(sizes)))
        if s > 2 ** 31 - 1:  # a bin a step below: refuse before looping over them
            raise RuntimeError("%s: output_size %d is too large" % (name, s))
        if length % s == 0:
            shape = tuple(y.shape[:dim]) + (s, length // s) + tuple(y.shape[dim + 1:])
            y = getattr(y.reshape(shape), reduce)(dim + 1)
        else:
            starts = [(j * length) // s for j in range(s)]
            ends = [-(-((j + 1) * length) // s) for j in range(s)]
            y = _C.cat([getattr(y.narrow(dim, a, b - a), reduce)(dim, keepdim=True)
                        for a, b in zip(starts, ends)], dim)
    return y.squeeze(0) if unbatched else y


def _adaptive_max_pool(input, output_size, return_indices, d, name):
    if return_indices:
        from ._functional_pool_idx import _adaptive_max_pool_with_indices
        return _adaptive_max_pool_with_indices(input, output_size, d, name)
    return _adaptive_pool(input, output_size, d, name, "amax")


def adaptive_max_pool1d(input, output_size, return_indices=False):
    return _adaptive_max_pool(input, output_size, return_indices, 1, "adaptive_max_pool1d")


def adaptive_max_pool2d(input, output_size, return_indices=False):
    return _adaptive_max_pool(input, output_size, return_indices, 2, "adaptive_max_pool2d")


def adaptive_max_pool3d(input, output_size, return_indices=False):
    return _adaptive_max_pool(input, output_size, return_indices, 3, "adaptive_max_pool3d")


def adaptive_avg_pool3d(input, output_size):
    return _adaptive_pool(input, output_size, 3, "adaptive_avg_pool3d", "mean")


def channel_shuffle(input, groups):
    """[N, C, *] with its C channels regrouped: g groups of C/g become C/g
    groups of g (ShuffleNet's shuffle), by one reshape, transpose and copy."""
    g = int(groups)
    if g <= 0:
        raise ValueError("Number of groups to divide channels in must be positive. Value of groups:%d" % g)
    if input.dim() < 3:
        raise RuntimeError("channel_shuffle expects input to have at least 3 dimensions, but got input "
                           "with sizes %s" % list(input.shape))
    n, c = input.shape[0], input.shape[1]
    if c % g:
        raise RuntimeError("Number of channels must be divisible by groups. Got %d channels and %d groups."
                           % (c, g))
    rest = tuple(input.shape[2:])
    return input.reshape((n, g, c // g) + rest).transpose(1, 2).reshape((n, c) + rest)


def pixel_shuffle(input, upscale_factor):
    """[*, C r^2, H, W] -> [*, C, H r, W r]."""
    r = int(upscale_factor)
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be divisible "
                           "by the square of upscale_factor, but input.size(-3)=%d is not "
                           "divisible by %d" % (c, r * r))
    x = input.reshape(tuple(lead) + (c // (r * r), r, r, h, w))
    k = len(lead)
    x = x.permute(*(tuple(range(k)) + (k, k + 3, k + 1, k + 4, k + 2)))
    return x.reshape(tuple(lead) + (c // (r * r), h * r, w * r))


def pixel_unshuffle(input, downscale_factor):
    """[*, C, H r, W r] -> [*, C r^2, H, W]."""
    r = int(downscale_factor)
    *lead, c, h, w = input.shape
    if h % r or w % r:
        raise RuntimeError("pixel_unshuffle expects height and width to be divisible by "
                           "downscale_factor, got %dx%d and %d" % (h, w, r))
    x = input.reshape(tuple(lead) + (c, h // r, r, w // r, r))
    k = len(lead)
    x = x.permute(*(tuple(range(k)) + (k, k + 2, k + 4, k + 1, k + 3)))
    return x.reshape(tuple(lead) + (c * r * r, h // r, w // r))


def adaptive_avg_pool1d(input, output_size):
    return _adaptive_pool(input, output_size, 1, "adaptive_avg_pool1d", "mean")


def adaptive_avg_pool2d(input, output_size):
    return _adaptive_pool(input, output_size, 2, "adaptive_avg_pool2d", "mean")
