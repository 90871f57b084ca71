"""F.affine_grid and F.grid_sample (4-D and 5-D): against a NumPy statement of the
sampling written here, and against torch (values and the gradients of both
the input and the grid) where it imports."""
import numpy as np
import pytest

import pycuda_sem as torch
import pycuda_sem.nn.functional as F

from torch_oracle import _torch as real_torch  # torch where it imports, else None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
pytestmark = pytest.mark.usefixtures("no_tf32")  # float64 references (conftest.py)
RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 3, 5, 7))
GRID = RNG.uniform(-1.3, 1.3, (2, 4, 6, 2))



def _reflect(v, lo2, hi2):
    # fold v into [lo2 / 2, hi2 / 2] by mirroring at its ends
    if lo2 == hi2:
        return 0.0
    lo, span = lo2 / 2, (hi2 - lo2) / 2
    d = abs(v - lo)
    flips, extra = np.floor(d / span), np.fmod(d, span)
    return extra + lo if flips % 2 == 0 else span - extra + lo


def _sample(x, grid, mode, padding, align):
    n, c, h, w = x.shape
    out = np.zeros((n, c) + grid.shape[1:3])
    for b in range(n):
        for i in range(grid.shape[1]):
            for j in range(grid.shape[2]):
                gx, gy = grid[b, i, j]
                px = (gx + 1) * (w - 1) / 2 if align else ((gx + 1) * w - 1) / 2
                py = (gy + 1) * (h - 1) / 2 if align else ((gy + 1) * h - 1) / 2
                if padding == "reflection":
                    px = _reflect(px, 0, 2 * (w - 1)) if align else _reflect(px, -1, 2 * w - 1)
                    py = _reflect(py, 0, 2 * (h - 1)) if align else _reflect(py, -1, 2 * h - 1)
                if padding in ("border", "reflection"):
                    px, py = min(max(px, 0), w - 1), min(max(py, 0), h - 1)
                if mode == "nearest":
                    pts = [(np.rint(px), np.rint(py), 1.0)]
                else:
                    x0, y0 = np.floor(px), np.floor(py)
                    pts = [(x0, y0, (1 - (px - x0)) * (1 - (py - y0))), (x0 + 1, y0, (px - x0) * (1 - (py - y0))),
                           (x0, y0 + 1, (1 - (px - x0)) * (py - y0)), (x0 + 1, y0 + 1, (px - x0) * (py - y0))]
                for qx, qy, wt in pts:
                    if 0 <= qx <= w - 1 and 0 <= qy <= h - 1:
                        out[b, :, i, j] += wt * x[b, :, int(qy), int(qx)]
    return out


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample(device, mode, padding, align):
    got = F.grid_sample(torch.tensor(X, device=device), torch.tensor(GRID, device=device), mode=mode,
                        padding_mode=padding, align_corners=align)
    np.testing.assert_allclose(got.cpu().numpy(), _sample(X, GRID, mode, padding, align), rtol=1e-12, atol=1e-12)
    if real_torch is not None:
        r = real_torch.nn.functional.grid_sample(real_torch.tensor(X), real_torch.tensor(GRID), mode=mode,
                                                 padding_mode=padding, align_corners=align)
        np.testing.assert_allclose(got.cpu().numpy(), r.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("align", [False, True])
def test_affine_grid_and_gradients(device, align):
    theta = RNG.standard_normal((2, 2, 3)) * 0.6
    g = F.affine_grid(torch.tensor(theta, device=device), (2, 3, 4, 6), align_corners=align)
    xs = np.linspace(-1, 1, 6) * (1 if align else 5 / 6)
    ys = np.linspace(-1, 1, 4) * (1 if align else 3 / 4)
    base = np.stack(np.broadcast_arrays(xs[None, :], ys[:, None], 1.0), -1)
    np.testing.assert_allclose(g.cpu().numpy(), base @ theta.transpose(0, 2, 1)[:, None], rtol=1e-12, atol=1e-12)
    identity = torch.tensor([[[1.0, 0, 0], [0, 1.0, 0]]] * 2, dtype=torch.float64, device=device)
    same = F.grid_sample(torch.tensor(X, device=device), F.affine_grid(identity, (2, 3, 5, 7), align_corners=align),
                         align_corners=align)
    np.testing.assert_allclose(same.cpu().numpy(), X, rtol=1e-12, atol=1e-12)  # the identity map reads each pixel
    x = torch.tensor(X[:1, :1, :3, :4], device=device, requires_grad=True)
    grid = torch.tensor(GRID[:1, :2, :2] * 0.7, device=device, requires_grad=True)
    assert torch.autograd.gradcheck(lambda a, b: F.grid_sample(a, b, align_corners=align), (x, grid))


def test_checks():
    with pytest.raises(ValueError, match="expected mode"):
        F.grid_sample(torch.zeros(1, 1, 2, 2), torch.zeros(1, 1, 1, 2), mode="area")
    with pytest.raises(RuntimeError, match="bicubic interpolation only supports 4D"):
        F.grid_sample(torch.zeros(1, 1, 2, 2, 2), torch.zeros(1, 1, 1, 1, 3), mode="bicubic")
    with pytest.raises(RuntimeError, match="4D or 5D"):
        F.grid_sample(torch.zeros(1, 1, 2, 2), torch.zeros(1, 1, 1, 1, 3))
    with pytest.raises(ValueError, match="padding_mode"):
        F.grid_sample(torch.zeros(1, 1, 2, 2), torch.zeros(1, 1, 1, 2), padding_mode="mirror")
    with pytest.raises(ValueError, match="Nx2x3"):
        F.affine_grid(torch.zeros(1, 3, 3), (1, 1, 2, 2))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("align", [False, True])
def test_reflection_far_outside_and_its_gradients(device, align):
    # points up to three image widths out, folded back several times
    grid = RNG.uniform(-3.5, 3.5, (2, 3, 4, 2))
    got = F.grid_sample(torch.tensor(X, device=device), torch.tensor(grid, device=device),
                        padding_mode="reflection", align_corners=align)
    np.testing.assert_allclose(got.cpu().numpy(), _sample(X, grid, "bilinear", "reflection", align),
                               rtol=1e-12, atol=1e-12)
    x = torch.tensor(X[:1, :1, :3, :4], device=device, requires_grad=True)
    g = torch.tensor(grid[:1, :2, :2] * 0.9, device=device, requires_grad=True)
    assert torch.autograd.gradcheck(
        lambda a, b: F.grid_sample(a, b, padding_mode="reflection", align_corners=align), (x, g))


def _identity_grid(shape, align, device):
    # the normalised centres of every pixel (voxel), x fastest
    axes = [np.linspace(-1, 1, k) * (1 if align else (k - 1) / k) for k in shape[::-1]]
    mesh = np.meshgrid(*axes[::-1], indexing="ij")[::-1]
    return torch.tensor(np.stack(mesh, -1)[None], device=device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("align", [False, True])
def test_bicubic_and_volumes(device, align):
    # the identity grid reads every pixel back (bicubic weights are 0, 1, 0, 0
    # at integer points; trilinear and nearest likewise at voxel centres)
    x2 = torch.tensor(X[:1], device=device)
    back = F.grid_sample(x2, _identity_grid(X.shape[2:], align, device), mode="bicubic", align_corners=align)
    np.testing.assert_allclose(back.cpu().numpy(), X[:1], rtol=1e-12, atol=1e-12)
    vol = RNG.standard_normal((1, 2, 3, 4, 5))
    for mode in ("bilinear", "nearest"):
        b3 = F.grid_sample(torch.tensor(vol, device=device), _identity_grid(vol.shape[2:], align, device),
                           mode=mode, align_corners=align)
        np.testing.assert_allclose(b3.cpu().numpy(), vol, rtol=1e-12, atol=1e-12)
    # halfway between the centres of a 2x2x2 block: the mean of its 8 voxels
    cube = torch.tensor(vol[:, :, :2, :2, :2], device=device)
    mid = F.grid_sample(cube, torch.zeros(1, 1, 1, 1, 3, dtype=torch.float64, device=device), align_corners=align)
    np.testing.assert_allclose(mid.cpu().numpy()[0, :, 0, 0, 0], vol[0, :, :2, :2, :2].mean(axis=(1, 2, 3)), rtol=1e-12)
    for pad in ("zeros", "border", "reflection"):
        a = torch.tensor(X[:1, :1, :3, :4], device=device, requires_grad=True)
        g = torch.tensor(GRID[:1, :2, :2] * 1.2, device=device, requires_grad=True)
        assert torch.autograd.gradcheck(
            lambda u, v: F.grid_sample(u, v, mode="bicubic", padding_mode=pad, align_corners=align), (a, g))
        a3 = torch.tensor(vol[:, :1, :2, :3, :3], device=device, requires_grad=True)
        g3 = torch.tensor(RNG.uniform(-1.3, 1.3, (1, 2, 2, 1, 3)), device=device, requires_grad=True)
        assert torch.autograd.gradcheck(
            lambda u, v: F.grid_sample(u, v, padding_mode=pad, align_corners=align), (a3, g3))
    if real_torch is not None:
        for pad in ("zeros", "border", "reflection"):
            r = real_torch.nn.functional.grid_sample(real_torch.tensor(X), real_torch.tensor(GRID * 1.4),
                                                     mode="bicubic", padding_mode=pad, align_corners=align)
            got = F.grid_sample(torch.tensor(X, device=device), torch.tensor(GRID * 1.4, device=device),
                                mode="bicubic", padding_mode=pad, align_corners=align)
            np.testing.assert_allclose(got.cpu().numpy(), r.numpy(), rtol=1e-12, atol=1e-12)
            g5 = RNG.uniform(-1.4, 1.4, (1, 2, 3, 2, 3))
            r5 = real_torch.nn.functional.grid_sample(real_torch.tensor(vol), real_torch.tensor(g5),
                                                      padding_mode=pad, align_corners=align)
            got5 = F.grid_sample(torch.tensor(vol, device=device), torch.tensor(g5, device=device),
                                 padding_mode=pad, align_corners=align)
            np.testing.assert_allclose(got5.cpu().numpy(), r5.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("align", [False, True])
def test_affine_grid_3d_and_a_volume_round_trip(device, align):
    theta = RNG.standard_normal((2, 3, 4)) * 0.5
    g = F.affine_grid(torch.tensor(theta, device=device), (2, 1, 3, 4, 5), align_corners=align)
    assert tuple(g.shape) == (2, 3, 4, 5, 3)
    xs, ys, zs = [np.linspace(-1, 1, k) * (1 if align else (k - 1) / k) for k in (5, 4, 3)]
    base = np.stack(np.broadcast_arrays(xs[None, None, :], ys[None, :, None], zs[:, None, None], 1.0), -1)
    np.testing.assert_allclose(g.cpu().numpy(), base @ theta.transpose(0, 2, 1)[:, None, None],
                               rtol=1e-12, atol=1e-12)
    # the identity map reads every voxel back
    eye = torch.tensor(np.eye(3, 4)[None].repeat(1, 0), device=device)
    vol = RNG.standard_normal((1, 2, 3, 4, 5))
    back = F.grid_sample(torch.tensor(vol, device=device), F.affine_grid(eye, (1, 2, 3, 4, 5), align_corners=align),
                         align_corners=align)
    np.testing.assert_allclose(back.cpu().numpy(), vol, rtol=1e-12, atol=1e-12)
    t = torch.tensor(theta[:1], device=device, requires_grad=True)
    assert torch.autograd.gradcheck(lambda a: F.affine_grid(a, (1, 1, 2, 3, 2), align_corners=align), (t,))
    with pytest.raises(ValueError, match="Nx3x4"):
        F.affine_grid(torch.zeros(1, 2, 3, device=device), (1, 1, 2, 2, 2))
