"""torch.nn.functional.unfold (im2col) and fold (col2im), for 4-D image
batches (3-D unbatched), re-exported by functional.py.

unfold copies the windows of the padded input (the as_strided view the
convolutions use) into [N, C * kh * kw, L] columns; fold adds columns back
into an image with one index_add over precomputed flat positions, so that
overlapping windows sum, as torch's col2im does. Both are compositions of
differentiable ops: each is the other's gradient.
"""
from .. import _C
from ._functional_conv import _tuple, _windows


def _image(input, name, want_channels_dim):
    if input.dim() not in (want_channels_dim, want_channels_dim + 1):
        raise NotImplementedError("Input Error: Only %dD or %dD input Tensors are supported in %s "
                                  "(got %dD)" % (want_channels_dim, want_channels_dim + 1, name, input.dim()))
    if input.dim() == want_channels_dim:
        return input.unsqueeze(0), True
    return input, False


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding blocks of a [N, C, H, W] input as columns [N, C * kh * kw, L]
    (L blocks, row-major over the output grid)."""
    from .functional import pad as _pad
    x, unbatched = _image(input, "unfold", 3)
    k, d = _tuple(kernel_size, 2, "kernel_size"), _tuple(dilation, 2, "dilation")
    p, s = _tuple(padding, 2, "padding"), _tuple(stride, 2, "stride")
    if min(k) <= 0 or min(d) <= 0 or min(s) <= 0 or min(p) < 0:
        raise RuntimeError("unfold: kernel_size, dilation and stride must be positive and padding "
                           "non-negative, got %s, %s, %s, %s" % (k, d, s, p))
    if any(p):
        x = _pad(x, (p[1], p[1], p[0], p[0]))
    w, out = _windows(x.contiguous(), k, s, d)  # [N, C, oh, ow, kh, kw]
    n, c = x.shape[0], x.shape[1]
    cols = w.permute(0, 1, 4, 5, 2, 3).reshape(n, c * k[0] * k[1], out[0] * out[1])
    return cols.squeeze(0) if unbatched else cols


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Columns [N, C * kh * kw, L] summed back into [N, C, H, W] (H, W =
    output_size): the inverse placement of unfold, overlaps added."""
    x, unbatched = _image(input, "fold", 2)
    o, k = _tuple(output_size, 2, "output_size"), _tuple(kernel_size, 2, "kernel_size")
    d, p, s = _tuple(dilation, 2, "dilation"), _tuple(padding, 2, "padding"), _tuple(stride, 2, "stride")
    n, ckk, length = x.shape
    kk = k[0] * k[1]
    if ckk % kk:
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product of "
                           "kernel_size, but got input.size(1)=%d and kernel_size=%s" % (ckk, k))
    hp, wp = o[0] + 2 * p[0], o[1] + 2 * p[1]
    blocks = [(hp - d[0] * (k[0] - 1) - 1) // s[0] + 1, (wp - d[1] * (k[1] - 1) - 1) // s[1] + 1]
    if blocks[0] <= 0 or blocks[1] <= 0 or blocks[0] * blocks[1] != length:
        raise RuntimeError("Given output_size=%s, kernel_size=%s, dilation=%s, padding=%s, stride=%s, "
                           "expected size of input's dimension 2 to match the calculated number of "
                           "sliding blocks %d * %d = %d, but got input.size(2)=%d."
                           % (o, k, d, p, s, blocks[0], blocks[1], blocks[0] * blocks[1], length))
    c = ckk // kk
    dev = x.device
    # flat position in the padded image of (kernel row, kernel col, block)
    ki = _C.arange(k[0], device=dev).reshape(k[0], 1, 1, 1) * d[0]
    kj = _C.arange(k[1], device=dev).reshape(1, k[1], 1, 1) * d[1]
    bi = _C.arange(blocks[0], device=dev).reshape(1, 1, blocks[0], 1) * s[0]
    bj = _C.arange(blocks[1], device=dev).reshape(1, 1, 1, blocks[1]) * s[1]
    pos = ((ki + bi) * wp + (kj + bj)).reshape(-1)  # [kh * kw * L]
    vals = x.reshape(n, c, kk * length)
    img = _C.zeros((n, c, hp * wp), dtype=x.dtype, device=dev).index_add(2, pos, vals)
    img = img.reshape(n, c, hp, wp)[:, :, p[0]:p[0] + o[0], p[1]:p[1] + o[1]]
    return img.squeeze(0) if unbatched else img
