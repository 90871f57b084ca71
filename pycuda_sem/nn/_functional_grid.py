"""torch.nn.functional.affine_grid and grid_sample (4-D and 5-D),
re-exported by functional.py.

affine_grid maps the normalised output pixel centres through each batch's
2x3 matrix (one batched matmul). grid_sample reads the input at those
points: the 2^d neighbours of each point gathered from the flattened image
and mixed by their (bi/tri)linear weights, the nearest one, or the 4x4
cubic-convolution taps (bicubic, 4-D), with zeros, the border or the
reflection of the image (torch's reflect-then-clip of the coordinates) for
points outside. Compositions of differentiable ops, so the
gradient reaches both the input and the grid.
"""
from .. import _C


def _base_coords(n, align_corners, like):
    """The normalised coordinates of n pixel centres along one axis."""
    if n == 1:
        return _C.zeros(1, dtype=like.dtype, device=like.device)
    r = _C.linspace(-1.0, 1.0, n, dtype=like.dtype, device=like.device)
    return r if align_corners else r * ((n - 1) / n)


def affine_grid(theta, size, align_corners=None):
    """The sampling grid of the affine maps theta: [N, H, W, 2] (x, y) for
    theta [N, 2, 3] and size [N, C, H, W], or [N, D, H, W, 3] (x, y, z) for
    theta [N, 3, 4] and size [N, C, D, H, W]."""
    align_corners = bool(align_corners)
    size = tuple(size)
    if len(size) not in (4, 5):
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D affine "
                                  "transforms, respectively. Got size %s." % (list(size),))
    if not theta.is_floating_point():
        raise ValueError("Expected theta to have floating point type, but got %s" % theta.dtype)
    d = len(size) - 2
    n = size[0]
    if theta.dim() != 3 or tuple(theta.shape[1:]) != (d, d + 1) or theta.shape[0] != n:
        raise ValueError("Expected a batch of %dD affine matrices of shape Nx%dx%d for size %s. Got %s."
                         % (d, d, d + 1, list(size), list(theta.shape)))
    spatial = size[2:]  # (D,) H, W
    axes = [_base_coords(k, align_corners, theta) for k in spatial[::-1]]  # x, y(, z)
    full = tuple(spatial)
    cols = []
    for k, ax in enumerate(axes):  # axis k varies along spatial dim d - 1 - k
        shape = [1] * d
        shape[d - 1 - k] = spatial[d - 1 - k]
        cols.append(ax.reshape(shape).expand(full))
    cols.append(_C.ones(full, dtype=theta.dtype, device=theta.device))
    base = _C.stack(cols, -1)  # [(D,) H, W, d + 1]
    pts = 1
    for k in spatial:
        pts *= k
    grid = base.reshape(1, pts, d + 1).expand(n, pts, d + 1) @ theta.transpose(1, 2)
    return grid.reshape((n,) + full + (d,))


def _unnormalize(coord, size, align_corners):
    if align_corners:
        return (coord + 1) * ((size - 1) / 2)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord, twice_low, twice_high):
    """coord folded into [twice_low / 2, twice_high / 2] by reflection."""
    if twice_low == twice_high:
        return coord * 0
    lo, span = twice_low / 2, (twice_high - twice_low) / 2
    dist = (coord - lo).abs()
    extra = dist.fmod(span)
    even = (dist / span).floor().remainder(2) == 0
    return _C.where(even, extra + lo, (span - extra) + lo)


def _pad_coords(coord, size, padding_mode, align_corners):
    """torch's compute_coordinates: border clips, reflection mirrors (about
    the edge pixels' centres with align_corners, the border without) and
    clips; zeros leaves the coordinate (reads outside are 0)."""
    if padding_mode == "reflection":
        coord = _reflect(coord, 0, 2 * (size - 1)) if align_corners else _reflect(coord, -1, 2 * size - 1)
    if padding_mode in ("border", "reflection"):
        coord = coord.clamp(0, size - 1)
    return coord


def _cubic(t):
    """The four cubic-convolution weights (A = -0.75) of offsets -1 .. 2."""
    a = -0.75

    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return (far(t + 1), near(t), near(1 - t), far(2 - t))


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """input [N, C, H, W] (or [N, C, D, H, W]) read at grid [N, Ho, Wo, 2]
    (or [N, Do, Ho, Wo, 3]; x, y(, z) in [-1, 1]) -> [N, C, Ho, Wo] (or
    [N, C, Do, Ho, Wo])."""
    align_corners = bool(align_corners)
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or "
                         "'bicubic', but got: '%s'" % mode)
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         "'reflection', but got: '%s'" % padding_mode)
    if input.dim() not in (4, 5) or grid.dim() != input.dim():
        raise RuntimeError("grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, "
                           "but got input with sizes %s and grid with sizes %s"
                           % (list(input.shape), list(grid.shape)))
    d = input.dim() - 2
    if mode == "bicubic" and d != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if grid.shape[-1] != d or grid.shape[0] != input.shape[0]:
        raise RuntimeError("grid_sample(): expected grid of shape [%d, %s, %d], got %s"
                           % (input.shape[0], ", ".join(["D_out", "H_out", "W_out"][3 - d:]), d,
                              list(grid.shape)))
    n, c = input.shape[0], input.shape[1]
    spatial = tuple(input.shape[2:])  # (D,) H, W
    sizes = spatial[::-1]  # along x, y(, z)
    out_sp = tuple(grid.shape[1:-1])
    pts = 1
    for v in out_sp:
        pts *= v
    strides = [1]
    for v in sizes[:-1]:
        strides.append(strides[-1] * v)
    grid = grid.to(input.dtype)
    src = [_unnormalize(grid[..., k], sizes[k], align_corners).reshape(n, 1, pts) for k in range(d)]
    flat = input.reshape(n, c, -1)

    def tap(coords):
        """input at the integer points coords (one [N, 1, P] per axis), 0 outside."""
        inside, idx = None, 0
        for k, (x, size) in enumerate(zip(coords, sizes)):
            ok = (x >= 0) & (x <= size - 1)
            inside = ok if inside is None else inside & ok
            idx = idx + x.clamp(0, size - 1) * strides[k]
        return flat.gather(2, idx.long().expand(n, c, pts)) * inside.to(input.dtype)

    if mode == "bicubic":
        # each of the 4x4 taps padded on its own, as torch's get_value_bounded
        x0, y0 = src[0].floor(), src[1].floor()
        wx, wy = _cubic(src[0] - x0), _cubic(src[1] - y0)
        out = 0
        for i in range(4):
            yi = _pad_coords(y0 + (i - 1), sizes[1], padding_mode, align_corners)
            for j in range(4):
                xj = _pad_coords(x0 + (j - 1), sizes[0], padding_mode, align_corners)
                out = out + tap([xj, yi]) * (wx[j] * wy[i])
        return out.reshape((n, c) + out_sp)
    src = [_pad_coords(x, size, padding_mode, align_corners) for x, size in zip(src, sizes)]
    if mode == "nearest":
        out = tap([x.round() for x in src])
    else:  # bilinear (trilinear for 5-D): the 2^d corners by their weights
        lo = [x.floor() for x in src]
        w1 = [x - f for x, f in zip(src, lo)]
        out = 0
        for corner in range(1 << d):
            bits = [(corner >> k) & 1 for k in range(d)]
            wt = None
            for k, b in enumerate(bits):
                wk = w1[k] if b else 1 - w1[k]
                wt = wk if wt is None else wt * wk
            out = out + tap([f + b for f, b in zip(lo, bits)]) * wt
    return out.reshape((n, c) + out_sp)
