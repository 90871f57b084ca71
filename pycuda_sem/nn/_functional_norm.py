"""torch.nn.functional.batch_norm, group_norm and instance_norm (re-exported by
functional.py): compositions of differentiable C ops, so autograd needs no
formula of its own; half inputs are normalised in float32, as torch's
kernels accumulate, and come back in their dtype."""
from .. import _C
from ..amp.autocast_mode import _to_float32
from ..autograd.grad_mode import no_grad


def _upcast(input):
    # half inputs are normalised in float32, as torch's kernels accumulate
    # (layer_norm and rms_norm in functional.py use it too)
    if input.dtype in (_C.float16, _C.bfloat16):
        return input.float(), input.dtype
    return input, None


def _channel_shape(input):
    # [C] parameters broadcast along dim 1: [1, C, 1, ...]
    return (1, input.size(1)) + (1,) * (input.dim() - 2)


def _affine(out, input, weight, bias):
    shape = _channel_shape(input)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Normalises each channel (dim 1) over the batch and the spatial dims:
    with the batch's statistics when training (biased variance), updating
    running_mean / running_var in place by `momentum` (the unbiased variance,
    as torch), or with the running statistics otherwise."""
    if input.dim() < 2:
        raise ValueError("batch_norm: expected an input of at least 2 dims (N, C, ...), got %dD"
                         % input.dim())
    dims = (0,) + tuple(range(2, input.dim()))
    shape = _channel_shape(input)
    x, back = _upcast(input)
    if training:
        n = input.numel() // input.size(1)
        if n == 1:
            raise ValueError("Expected more than 1 value per channel when training, got input "
                             "size %s" % (tuple(input.shape),))
        mean = x.mean(dims, keepdim=True)
        var = x.var(dims, correction=0, keepdim=True)
        if running_mean is not None or running_var is not None:
            with no_grad():
                if running_mean is not None:
                    running_mean.mul_(1 - momentum).add_(
                        mean.detach().reshape(-1).to(running_mean.dtype) * momentum)
                if running_var is not None:
                    unbiased = var.detach().reshape(-1) * (n / (n - 1))
                    running_var.mul_(1 - momentum).add_(unbiased.to(running_var.dtype) * momentum)
    else:
        if running_mean is None or running_var is None:
            raise ValueError("batch_norm: running_mean and running_var are needed when not "
                             "training")
        mean = running_mean.reshape(shape).to(x.dtype)
        var = running_var.reshape(shape).to(x.dtype)
    out = (x - mean) * (var + eps).rsqrt()
    if back is not None:
        out = out.to(back)
    return _affine(out, input, weight, bias)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalises each of num_groups groups of channels (dim 1) of each
    sample over its channels and spatial dims (biased variance)."""
    if input.dim() < 2:
        raise ValueError("group_norm: expected an input of at least 2 dims (N, C, ...), got %dD"
                         % input.dim())
    c = input.size(1)
    if num_groups <= 0 or c % num_groups:
        raise RuntimeError("Expected number of channels in input to be divisible by num_groups, "
                           "but got input of shape %s and num_groups=%d"
                           % (list(input.shape), num_groups))
    input, weight, bias = _to_float32(input, weight, bias)
    x, back = _upcast(input)
    g = x.reshape(input.size(0), num_groups, -1)
    out = (g - g.mean(-1, keepdim=True)) * (g.var(-1, correction=0, keepdim=True) + eps).rsqrt()
    out = out.reshape(tuple(input.shape))
    if back is not None:
        out = out.to(back)
    return _affine(out, input, weight, bias)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """Normalises each channel of each sample over its spatial dims: batch
    norm of the input seen as one sample with N*C channels (running
    statistics, when given, are averaged over the batch, as torch)."""
    if input.dim() < 3:
        raise ValueError("instance_norm: expected an input of at least 3 dims (N, C, ...), got "
                         "%dD" % input.dim())
    n, c = input.size(0), input.size(1)
    if not use_input_stats:
        return batch_norm(input, running_mean, running_var, weight, bias, False, momentum, eps)
    folded = input.reshape((1, n * c) + tuple(input.shape[2:]))
    rm = running_mean.repeat(n) if running_mean is not None else None
    rv = running_var.repeat(n) if running_var is not None else None
    out = batch_norm(folded, rm, rv, None, None, True, momentum, eps)
    if running_mean is not None:
        with no_grad():
            running_mean.copy_(rm.reshape(n, c).mean(0))
            running_var.copy_(rv.reshape(n, c).mean(0))
    return _affine(out.reshape(tuple(input.shape)), input, weight, bias)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Each entry over (k + alpha / size * the sum of squares of the `size`
    channels around it) ** beta, the window padded with zeros (AlexNet's
    normalisation): the channel sums as `size` shifted slices of one padded
    tensor of squares."""
    if input.dim() < 3:
        raise ValueError("Expected 3D or higher dimensionality input (got %d dimensions)" % input.dim())
    if input.numel() == 0:
        return input
    c = input.shape[1]
    sq = input * input
    lo, hi = size // 2, (size - 1) // 2
    zeros = lambda n: _C.zeros((input.shape[0], n) + tuple(input.shape[2:]), dtype=sq.dtype, device=sq.device)
    padded = _C.cat([p for p in (zeros(lo) if lo else None, sq, zeros(hi) if hi else None) if p is not None], 1)
    total = padded.narrow(1, 0, c)
    for i in range(1, size):
        total = total + padded.narrow(1, i, c)
    return input / (total * (alpha / size) + k) ** beta
