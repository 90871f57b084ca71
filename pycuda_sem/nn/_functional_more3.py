"""More functional forms: fractional_max_pool2d/3d (Graham's fractional max
pooling, with torch's pseudo-random window starts from `_random_samples`),
native_channel_shuffle and the legacy cross-map LRN of nn.CrossMapLRN2d.

Fractional pooling: every (batch, channel) pair has its own window starts,
so the windows are read with one gather from the flattened spatial dims
(index = the flat position, which is also what return_indices gives, as
torch) and reduced with max; the gradient is gather's."""
from .. import _C

__all__ = ["fractional_max_pool2d", "fractional_max_pool3d", "fractional_max_pool2d_with_indices",
           "fractional_max_pool3d_with_indices", "native_channel_shuffle"]


def _tuple(v, d, name):
    if isinstance(v, (list, tuple)):
        if len(v) != d:
            raise ValueError("%s must be an int or a tuple of %d ints" % (name, d))
        return tuple(v)
    return (v,) * d


def _starts(samples, in_size, out_size, k, dtype):
    """torch's interval generator for one dim: samples [N, C] -> starts [N, C, out]
    (computed in the input's dtype, as torch's kernel does, so the windows agree)."""
    dev = samples.device
    if out_size == 1:
        return _C.full(tuple(samples.shape) + (1,), in_size - k, dtype=_C.int64, device=dev)
    alpha = (_C.tensor(float(in_size - k), dtype=dtype, device=dev)
             / _C.tensor(float(out_size - 1), dtype=dtype, device=dev))
    i = _C.arange(out_size, dtype=dtype, device=dev)
    s = samples.unsqueeze(-1)
    st = (((i + s) * alpha).floor() - (s * alpha).floor()).to(_C.int64)
    last = _C.full_like(st[..., -1:], in_size - k)
    return _C.cat([st[..., :-1], last], -1)


def _fractional(input, kernel_size, output_size, output_ratio, return_indices, samples, d):
    name = "fractional_max_pool%dd" % d
    if output_size is None and output_ratio is None:
        raise ValueError("%s requires specifying either an output_size or an output_ratio" % name)
    if input.dim() not in (d + 1, d + 2):
        raise RuntimeError("%s(): Expected %dD or %dD tensor, but got: %s"
                           % (name, d + 1, d + 2, list(input.shape)))
    unbatched = input.dim() == d + 1
    x = input.unsqueeze(0) if unbatched else input
    spatial = tuple(x.shape[2:])
    k = tuple(int(v) for v in _tuple(kernel_size, d, "kernel_size"))
    if output_size is None:
        ratio = _tuple(output_ratio, d, "output_ratio")
        out = tuple(int(spatial[j] * ratio[j]) for j in range(d))
    else:
        out = tuple(int(v) for v in _tuple(output_size, d, "output_size"))
    for j in range(d):
        if k[j] <= 0 or out[j] <= 0:
            raise RuntimeError("%s(): kernel_size and output_size must be greater than zero, "
                               "but got kernel_size=%s and output_size=%s" % (name, k, out))
        if out[j] + k[j] - 1 > spatial[j]:
            raise RuntimeError("%s(): pool size %d too large relative to input size %d for "
                               "output size %d" % (name, k[j], spatial[j], out[j]))
    n, c = x.size(0), x.size(1)
    if samples is None:
        samples = _C.rand((n, c, d), dtype=x.dtype, device=x.device)
    if tuple(samples.shape) != (n, c, d):
        raise RuntimeError("%s(): Expected _random_samples of shape %s, got %s"
                           % (name, [n, c, d], list(samples.shape)))
    samples = samples.to(x.dtype)
    # which sample drives which dim, as torch's kernels read them: (w, h) in 2-D, (t, h, w) in 3-D
    order = [1, 0] if d == 2 else [0, 1, 2]
    flat = None
    stride = 1
    for j in range(d - 1, -1, -1):  # positions along each dim, flattened with its stride
        st = _starts(samples[..., order[j]], spatial[j], out[j], k[j], x.dtype)
        pos = (st.unsqueeze(-1) + _C.arange(k[j], device=x.device)) * stride  # [N, C, o, k]
        shape = [n, c] + [1] * (2 * d)
        shape[2 + j], shape[2 + d + j] = out[j], k[j]
        pos = pos.reshape(shape)
        flat = pos if flat is None else flat + pos
        stride *= spatial[j]
    idx = flat.expand((n, c) + out + k).reshape((n, c, -1))
    vals = x.reshape((n, c, -1)).gather(2, idx).reshape((n, c) + out + (-1,))
    res, arg = vals.max(-1)
    ind = idx.reshape((n, c) + out + (-1,)).gather(-1, arg.unsqueeze(-1)).squeeze(-1)
    if unbatched:
        res, ind = res.squeeze(0), ind.squeeze(0)
    return (res, ind) if return_indices else res


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    return _fractional(input, kernel_size, output_size, output_ratio, True, _random_samples, 2)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    return _fractional(input, kernel_size, output_size, output_ratio, True, _random_samples, 3)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """Max over k x k windows at pseudo-random fractional strides that give
    output_size (or floor(input size * output_ratio)); _random_samples
    [N, C, 2] in [0, 1) fixes the windows (drawn with rand otherwise)."""
    return _fractional(input, kernel_size, output_size, output_ratio, return_indices,
                       _random_samples, 2)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """The 3-D form of fractional_max_pool2d (_random_samples [N, C, 3])."""
    return _fractional(input, kernel_size, output_size, output_ratio, return_indices,
                       _random_samples, 3)


def native_channel_shuffle(input, groups):
    """channel_shuffle (torch's non-composite entry point; the same result)."""
    from ._functional_conv import channel_shuffle
    return channel_shuffle(input, groups)


def _cross_map_lrn2d(input, size, alpha, beta, k):
    """nn.CrossMapLRN2d's legacy normalisation: x * (k + alpha/size * S)^-beta,
    S a running sum of squares over channels built as torch's loop builds it
    (which never drops channel 0 from the window), here as one [C, C] 0/1
    matrix so that it is one matmul and differentiable."""
    if input.dim() != 4:
        raise ValueError("CrossMapLRN2d: Expected input to be 4D, got %dD instead." % input.dim())
    if not isinstance(size, int) or size <= 0:
        raise ValueError("CrossMapLRN2d: size must be a positive int, got %r" % (size,))
    channels = input.size(1)
    pre_pad = int((size - 1) / 2 + 1)
    rows, cur = [], set(range(min(pre_pad, channels)))
    rows.append(set(cur))
    for c in range(1, channels):
        if c < channels - pre_pad + 1:
            cur.add(c + pre_pad - 1)
        if c > pre_pad:
            cur.discard(c - pre_pad)
        rows.append(set(cur))
    m = _C.tensor([[1.0 if j in r else 0.0 for j in range(channels)] for r in rows],
                  dtype=input.dtype, device=input.device)
    sq = (input * input).movedim(1, -1)  # [N, H, W, C]
    s = (sq @ m.t()).movedim(-1, 1)
    return input * (s * (alpha / size) + k).pow(-beta)
