"""torch.nn.functional.affine_grid and grid_sample for 4-D image batches,
re-exported by functional.py.

affine_grid maps the normalised output pixel centres through each batch's
2x3 matrix (one batched matmul). grid_sample reads the input at those
points: the four neighbours of each point gathered from the flattened image
and mixed by their bilinear weights (or the nearest one), with zeros, the
border or the reflection of the image (torch's reflect-then-clip of the
coordinates) for points outside. Compositions of differentiable ops, so the
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
    """The sampling grid [N, H, W, 2] (x, y) of the affine maps theta [N, 2, 3] for size [N, C, H, W]."""
    align_corners = bool(align_corners)
    size = tuple(size)
    if len(size) != 4:
        raise NotImplementedError("affine_grid: only 4-D sizes (2-D affine maps) are implemented in pycuda_sem, "
                                  "got size %s" % (list(size),))
    if not theta.is_floating_point():
        raise ValueError("Expected theta to have floating point type, but got %s" % theta.dtype)
    n, _, h, w = size
    if theta.dim() != 3 or tuple(theta.shape[1:]) != (2, 3) or theta.shape[0] != n:
        raise ValueError("Expected a batch of 2D affine matrices of shape Nx2x3 for size %s. Got %s."
                         % (list(size), list(theta.shape)))
    xs, ys = _base_coords(w, align_corners, theta), _base_coords(h, align_corners, theta)
    base = _C.stack([xs.reshape(1, w).expand(h, w), ys.reshape(h, 1).expand(h, w),
                     _C.ones((h, w), dtype=theta.dtype, device=theta.device)], -1)  # [H, W, 3]
    grid = base.reshape(1, h * w, 3).expand(n, h * w, 3) @ theta.transpose(1, 2)
    return grid.reshape(n, h, w, 2)


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


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """input [N, C, H, W] read at grid [N, Ho, Wo, 2] (x, y in [-1, 1]) -> [N, C, Ho, Wo]."""
    align_corners = bool(align_corners)
    if mode not in ("bilinear", "nearest"):
        raise NotImplementedError("grid_sample: mode '%s' is not implemented in pycuda_sem (bilinear and nearest "
                                  "are)" % mode)
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         "'reflection', but got: '%s'" % padding_mode)
    if input.dim() != 4:
        raise NotImplementedError("grid_sample: only 4-D inputs are implemented in pycuda_sem, got %dD" % input.dim())
    if grid.dim() != 4 or grid.shape[-1] != 2 or grid.shape[0] != input.shape[0]:
        raise RuntimeError("grid_sample(): expected grid of shape [%d, H_out, W_out, 2], got %s"
                           % (input.shape[0], list(grid.shape)))
    n, c, h, w = input.shape
    ho, wo = grid.shape[1], grid.shape[2]
    grid = grid.to(input.dtype)
    ix = _unnormalize(grid[..., 0], w, align_corners).reshape(n, 1, ho * wo)
    iy = _unnormalize(grid[..., 1], h, align_corners).reshape(n, 1, ho * wo)
    if padding_mode == "reflection":
        # mirrored about the edge pixels' centres (align_corners) or the
        # image border, then clipped, as torch's reflect_coordinates
        if align_corners:
            ix, iy = _reflect(ix, 0, 2 * (w - 1)), _reflect(iy, 0, 2 * (h - 1))
        else:
            ix, iy = _reflect(ix, -1, 2 * w - 1), _reflect(iy, -1, 2 * h - 1)
    if padding_mode in ("border", "reflection"):
        ix, iy = ix.clamp(0, w - 1), iy.clamp(0, h - 1)
    flat = input.reshape(n, c, h * w)

    def tap(x, y):
        """input at integer points (x, y) [N, 1, P], 0 outside."""
        inside = (x >= 0) & (x <= w - 1) & (y >= 0) & (y <= h - 1)
        idx = (y.clamp(0, h - 1) * w + x.clamp(0, w - 1)).long().expand(n, c, ho * wo)
        return flat.gather(2, idx) * inside.to(input.dtype)

    if mode == "nearest":
        out = tap(ix.round(), iy.round())
    else:
        x0, y0 = ix.floor(), iy.floor()
        wx1, wy1 = ix - x0, iy - y0
        wx0, wy0 = 1 - wx1, 1 - wy1
        out = (tap(x0, y0) * (wx0 * wy0) + tap(x0 + 1, y0) * (wx1 * wy0)
               + tap(x0, y0 + 1) * (wx0 * wy1) + tap(x0 + 1, y0 + 1) * (wx1 * wy1))
    return out.reshape(n, c, ho, wo)
