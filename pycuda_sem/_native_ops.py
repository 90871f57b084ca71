"""The aten-level spellings scripts and ports call directly: the native_*
normalisations (the output plus the statistics torch saves for backward),
native_dropout, native_norm, convolution, grid_sampler,
affine_grid_generator and embedding_renorm_. Each maps onto the
nn.functional op, so it runs on CPU and CUDA and the output is
differentiable; the statistics and masks are computed without grad, as
torch's are not differentiable outputs. Statistics keep the input's dtype
(torch on CPU does the same; its CUDA kernels keep float32 statistics for
half inputs)."""
from . import _C
from .autograd.grad_mode import no_grad

__all__ = ["native_layer_norm", "native_batch_norm", "native_group_norm", "native_dropout", "native_norm",
           "convolution", "grid_sampler", "grid_sampler_2d", "grid_sampler_3d", "affine_grid_generator",
           "embedding_renorm_"]


def _F():
    from .nn import functional
    return functional


def _moments(x, dims, eps):
    """(mean, 1/sqrt(biased var + eps)) over dims, kept, without grad."""
    with no_grad():
        mean = x.mean(dims, keepdim=True)
        var = (x - mean).square().mean(dims, keepdim=True)
        return mean, (var + eps).rsqrt()


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """(layer_norm(input), mean, rstd); the statistics have the input's
    leading dims and size 1 in the normalised ones."""
    normalized_shape = tuple(normalized_shape)
    axis = input.dim() - len(normalized_shape)
    if axis < 0 or tuple(input.shape[axis:]) != normalized_shape:
        raise RuntimeError("Given normalized_shape=%s, expected input with shape [*, %s], but got input "
                           "of size%s" % (list(normalized_shape), ", ".join(map(str, normalized_shape)),
                                          list(input.shape)))
    out = _F().layer_norm(input, normalized_shape, weight, bias, eps)
    mean, rstd = _moments(input, tuple(range(axis, input.dim())), eps)
    return out, mean, rstd


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """(batch_norm(input), save_mean, save_invstd): in training the batch
    statistics per channel (shape [C]) and the running stats are updated;
    in evaluation the saved statistics are empty tensors, as torch's."""
    if not training and (running_mean is None or running_var is None):
        raise ValueError("running_mean must be defined in evaluation mode")
    out = _F().batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if training:
        dims = (0,) + tuple(range(2, input.dim()))
        mean, invstd = _moments(input, dims, eps)
        return out, mean.reshape(-1), invstd.reshape(-1)
    empty = _C.empty((0,), dtype=input.dtype, device=input.device)
    return out, empty, empty.clone()


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """(group_norm(input), mean, rstd) with statistics of shape [N, group]."""
    if input.numel() != N * C * HxW:
        raise RuntimeError("Expected input to have %d elements (N=%d, C=%d, HxW=%d), but got %d"
                           % (N * C * HxW, N, C, HxW, input.numel()))
    if C % group != 0:
        raise RuntimeError("Expected number of channels in input to be divisible by num_groups, but got "
                           "input of shape %s and num_groups=%d" % (list(input.shape), group))
    out = _F().group_norm(input, group, weight, bias, eps)
    mean, rstd = _moments(input.reshape(N, group, -1), (2,), eps)
    return out, mean.reshape(N, group), rstd.reshape(N, group)


def native_dropout(input, p, train):
    """(output, mask): with train (None counts as True) each element is kept
    with probability 1-p and scaled by 1/(1-p); mask is the bool keep mask.
    Without train, a copy of input and an all-True mask."""
    if train is None or train:
        if not 0.0 <= p <= 1.0:
            raise RuntimeError("dropout probability has to be between 0 and 1, but got %s" % p)
        with no_grad():
            mask = _C.rand_like(input) >= p if p > 0 else _C.ones_like(input, dtype=_C.bool)
        if p >= 1.0:
            return input * 0.0, mask
        return input * mask * (1.0 / (1.0 - p)), mask
    return input.clone(), _C.ones_like(input, dtype=_C.bool)


def native_norm(input, p=2, dim=None, keepdim=False, dtype=None):
    """The p-norm of all elements (or over dim): linalg.vector_norm. (torch
    registers it for sparse tensors only.)"""
    from .linalg import vector_norm
    return vector_norm(input, 2 if p is None else p, dim=dim, keepdim=keepdim, dtype=dtype)


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """conv{1,2,3}d, or conv_transpose{1,2,3}d when transposed, by weight.dim()."""
    F = _F()
    nd = weight.dim() - 2
    if nd not in (1, 2, 3):
        raise RuntimeError("convolution: expected a 3-D, 4-D or 5-D weight, but got %d-D" % weight.dim())
    if transposed:
        fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[nd - 1]
        return fn(input, weight, bias, tuple(stride), tuple(padding), tuple(output_padding), groups,
                  tuple(dilation))
    if any(int(o) != 0 for o in output_padding):
        raise RuntimeError("convolution: output_padding is only supported with transposed=True")
    fn = (F.conv1d, F.conv2d, F.conv3d)[nd - 1]
    pad = padding if isinstance(padding, str) else tuple(padding)
    return fn(input, weight, bias, tuple(stride), pad, tuple(dilation), groups)


_INTERP = {0: "bilinear", 1: "nearest", 2: "bicubic"}
_PADDING = {0: "zeros", 1: "border", 2: "reflection"}


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """grid_sample with the enum codes: interpolation 0 bilinear, 1 nearest,
    2 bicubic; padding 0 zeros, 1 border, 2 reflection."""
    if interpolation_mode not in _INTERP:
        raise RuntimeError("grid_sampler(): unknown interpolation mode %r (expected 0, 1 or 2)" % (interpolation_mode,))
    if padding_mode not in _PADDING:
        raise RuntimeError("grid_sampler(): unknown padding mode %r (expected 0, 1 or 2)" % (padding_mode,))
    return _F().grid_sample(input, grid, _INTERP[interpolation_mode], _PADDING[padding_mode], bool(align_corners))


def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    """grid_sampler on a 4-D input."""
    if input.dim() != 4:
        raise RuntimeError("grid_sampler_2d(): expected 4D input, but got input with sizes %s" % list(input.shape))
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    """grid_sampler on a 5-D input."""
    if input.dim() != 5:
        raise RuntimeError("grid_sampler_3d(): expected 5D input, but got input with sizes %s" % list(input.shape))
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def affine_grid_generator(theta, size, align_corners):
    """affine_grid(theta, size, align_corners)."""
    return _F().affine_grid(theta, list(size), bool(align_corners))


def embedding_renorm_(weight, indices, max_norm, norm_type):
    """Scale, in place, the rows of weight that indices look up whose
    norm_type-norm exceeds max_norm down to max_norm; returns weight."""
    _F()._embedding_renorm_(weight, indices, max_norm, norm_type)
    return weight
