"""F.interpolate mode='bicubic', mode='area' and antialias=True: against a float64 NumPy
transcription of the definitions (bicubic: Keys' cubic convolution with
A = -0.75 over the 4x4 clamped neighbours of each source point, the source
point from torch's half-pixel or align_corners rule; area: the mean over
each output cell's adaptive window; antialias: weights worked out by hand
and constant images), gradients against torch where it is installed, and
the argument errors."""
import math

import numpy as np
import pytest

import pycuda_sem as torch
import pycuda_sem.nn.functional as F

from torch_oracle import _torch as real_torch  # torch where it imports, else None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
A = -0.75


def _w(t):
    near = lambda x: ((A + 2) * x - (A + 3)) * x * x + 1  # noqa: E731
    far = lambda x: ((A * x - 5 * A) * x + 8 * A) * x - 4 * A  # noqa: E731
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _src(i, n_in, n_out, align, scale):
    if align:
        return i * ((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0)
    r = 1.0 / scale if scale else n_in / n_out
    return (i + 0.5) * r - 0.5


def _bicubic(x, oh, ow, align, scale=None):
    n, c, h, w = x.shape
    out = np.zeros((n, c, oh, ow))
    for oy in range(oh):
        sy = _src(oy, h, oh, align, scale)
        by = math.floor(sy)
        wy = _w(sy - by)
        for ox in range(ow):
            sx = _src(ox, w, ow, align, scale)
            bx = math.floor(sx)
            wx = _w(sx - bx)
            acc = 0.0
            for i in range(4):
                for j in range(4):
                    yy = min(max(by - 1 + i, 0), h - 1)
                    xx = min(max(bx - 1 + j, 0), w - 1)
                    acc = acc + wy[i] * wx[j] * x[:, :, yy, xx]
            out[:, :, oy, ox] = acc
    return out


def _area(x, oh, ow):
    n, c, h, w = x.shape
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        y0, y1 = (i * h) // oh, -((-(i + 1) * h) // oh)
        for j in range(ow):
            x0, x1 = (j * w) // ow, -((-(j + 1) * w) // ow)
            out[:, :, i, j] = x[:, :, y0:y1, x0:x1].mean(axis=(2, 3))
    return out


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("size, align", [((9, 4), False), ((9, 4), True), ((3, 11), False), ((5, 7), True)])
def test_bicubic_against_the_definition(device, size, align):
    x = np.random.default_rng(sum(size)).standard_normal((2, 3, 5, 7))
    t = torch.tensor(x, device=device, requires_grad=True)
    y = F.interpolate(t, size=size, mode="bicubic", align_corners=align)
    np.testing.assert_allclose(y.detach().cpu().numpy(), _bicubic(x, *size, align), rtol=1e-12, atol=1e-12)
    g = np.random.default_rng(1).standard_normal(tuple(y.shape))
    y.backward(torch.tensor(g, device=device))
    if real_torch is not None:
        rt = real_torch.tensor(x, requires_grad=True)
        real_torch.nn.functional.interpolate(rt, size=size, mode="bicubic", align_corners=align).backward(
            real_torch.tensor(g))
        np.testing.assert_allclose(t.grad.cpu().numpy(), rt.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_bicubic_scale_factor_and_dtype(device):
    x = np.random.default_rng(3).standard_normal((1, 1, 4, 4))
    y = F.interpolate(torch.tensor(x, device=device), scale_factor=2.5, mode="bicubic")
    np.testing.assert_allclose(y.cpu().numpy(), _bicubic(x, 10, 10, False, 2.5), rtol=1e-12, atol=1e-12)
    y32 = F.interpolate(torch.tensor(x, dtype=torch.float32, device=device), scale_factor=2, mode="bicubic")
    assert y32.dtype == torch.float32
    np.testing.assert_allclose(y32.cpu().numpy(), _bicubic(x, 8, 8, False, 2), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_area_is_the_window_mean(device):
    x = np.random.default_rng(4).standard_normal((2, 2, 8, 6))
    for size in ((3, 4), (8, 6), (5, 5)):
        y = F.interpolate(torch.tensor(x, device=device), size=size, mode="area")
        np.testing.assert_allclose(y.cpu().numpy(), _area(x, *size), rtol=1e-12, atol=1e-14)
    one = F.interpolate(torch.tensor(x[:, :, 0], device=device), size=4, mode="area")
    np.testing.assert_allclose(one.cpu().numpy(), _area(x[:, :, :1], 1, 4)[:, :, 0], rtol=1e-12)


def test_errors():
    x = torch.ones(1, 1, 4)
    with pytest.raises(NotImplementedError, match="bicubic mode needs 4D input"):
        F.interpolate(x, size=8, mode="bicubic")
    with pytest.raises(ValueError, match="align_corners"):
        F.interpolate(torch.ones(1, 1, 4, 4), size=2, mode="area", align_corners=True)


@pytest.mark.parametrize("device", DEVICES)
def test_antialias_by_hand_and_properties(device):
    # bilinear, 8 -> 4 along W: the triangle filter stretched to half-width 2
    # gives interior rows [1, 3, 3, 1] / 8 over j = 2i-1 .. 2i+2 (a ramp x_j = j
    # reads 2i + 0.5) and the first row [3, 3, 1] / 7 over j = 0 .. 2
    ramp = torch.arange(8, dtype=torch.float64, device=device).reshape(1, 1, 1, 8).expand(1, 1, 2, 8)
    y = F.interpolate(ramp, size=(2, 4), mode="bilinear", antialias=True)
    np.testing.assert_allclose(y[0, 0, 0].cpu().numpy(), [5 / 7, 2.5, 4.5, 44 / 7], rtol=1e-12)
    # a constant image stays constant (every row of weights sums to one)
    c = torch.full((2, 3, 17, 11), 2.5, dtype=torch.float64, device=device)
    for mode in ("bilinear", "bicubic"):
        for size in ((5, 4), (20, 3), (17, 11)):
            out = F.interpolate(c, size=size, mode=mode, antialias=True)
            np.testing.assert_allclose(out.cpu().numpy(), 2.5, rtol=1e-12)
    with pytest.raises(ValueError, match="Anti-alias"):
        F.interpolate(torch.ones(1, 1, 4, 4, device=device), size=2, mode="nearest", antialias=True)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("align", [False, True])
def test_antialias_matches_torch(mode, align):
    if real_torch is None:
        pytest.skip("torch is not installed")
    rng = np.random.default_rng(5)
    for shape, kw in [((1, 2, 16, 13), dict(size=(5, 4))), ((2, 1, 9, 9), dict(scale_factor=0.4)),
                      ((1, 1, 6, 5), dict(size=(11, 3))), ((1, 1, 7, 7), dict(scale_factor=(0.5, 1.7)))]:
        x = rng.standard_normal(shape)
        t, r = torch.tensor(x, requires_grad=True), real_torch.tensor(x, requires_grad=True)
        y = F.interpolate(t, mode=mode, antialias=True, align_corners=align, **kw)
        ry = real_torch.nn.functional.interpolate(r, mode=mode, antialias=True, align_corners=align, **kw)
        np.testing.assert_allclose(y.detach().numpy(), ry.detach().numpy(), rtol=1e-12, atol=1e-13)
        g = rng.standard_normal(tuple(ry.shape))
        y.backward(torch.tensor(g))
        ry.backward(real_torch.tensor(g))
        np.testing.assert_allclose(t.grad.numpy(), r.grad.numpy(), rtol=1e-12, atol=1e-13)
