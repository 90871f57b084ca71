"""F.interpolate / nn.Upsample and the channel dropouts: values against
hand-computed cases and torch's formulas, gradients against central
differences, errors and reprs; torch over many shapes and modes where it
imports; CUDA against CPU."""
import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import nn
from pycuda_sem.nn import functional as F

try:
    import torch as real_torch
except Exception:  # noqa: BLE001 - any import failure means no oracle
    real_torch = None


def test_known_values():
    x = torch.arange(16.0).reshape(1, 1, 4, 4)
    up = F.interpolate(x, scale_factor=2, mode="bilinear")
    assert up.shape == (1, 1, 8, 8)
    assert up[0, 0, 0].tolist() == [0.0, 0.25, 0.75, 1.25, 1.75, 2.25, 2.75, 3.0]
    assert up[0, 0, :, 0].tolist() == [0.0, 1.0, 3.0, 5.0, 7.0, 9.0, 11.0, 12.0]
    line = torch.arange(4.0).reshape(1, 1, 4)
    assert F.interpolate(line, size=7, mode="linear", align_corners=True)[0, 0].tolist() == [
        0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0]
    assert F.interpolate(line, scale_factor=2)[0, 0].tolist() == [0, 0, 1, 1, 2, 2, 3, 3]
    assert F.interpolate(line, size=3)[0, 0].tolist() == [0.0, 1.0, 2.0]
    assert F.interpolate(line, size=3, mode="nearest-exact")[0, 0].tolist() == [0.0, 2.0, 3.0]
    assert F.interpolate(x, size=(2, 3))[0, 0].tolist() == [[0, 1, 2], [8, 9, 10]]
    vol = torch.randn(1, 2, 3, 4, 5)
    assert F.interpolate(vol, scale_factor=(2, 1, 0.5), mode="trilinear").shape == (1, 2, 6, 4, 2)


def test_bilinear_gradient():
    rng = np.random.default_rng(2)
    a = rng.normal(size=(1, 2, 3, 4))
    gy = rng.normal(size=(1, 2, 5, 7))

    def f(v):
        return (F.interpolate(torch.tensor(v), size=(5, 7), mode="bilinear").numpy() * gy).sum()

    x = torch.tensor(a, requires_grad=True)
    (F.interpolate(x, size=(5, 7), mode="bilinear") * torch.tensor(gy)).sum().backward()
    num = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        hi, lo = a.copy(), a.copy()
        hi[idx] += 1e-6
        lo[idx] -= 1e-6
        num[idx] = (f(hi) - f(lo)) / 2e-6
    np.testing.assert_allclose(x.grad.numpy(), num, rtol=1e-6, atol=1e-8)


def test_channel_dropout():
    torch.manual_seed(0)
    x = torch.ones(8, 16, 3, 3)
    y = F.dropout2d(x, 0.25)
    per_channel = y.sum((2, 3)).numpy()
    assert set(np.unique(per_channel)) <= {0.0, 9 / 0.75}  # whole channels, rescaled
    assert 0 < (per_channel == 0).sum() < per_channel.size
    assert torch.equal(F.dropout2d(x, 0.5, training=False), x)
    m = nn.Dropout1d(0.5)
    m.eval()
    z = torch.randn(2, 3, 4)
    assert torch.equal(m(z), z)
    assert F.dropout3d(torch.ones(3, 2, 2, 2), 1.0).abs().sum() == 0  # unbatched, p=1
    with pytest.raises(RuntimeError, match="Expected 3D or 4D input"):
        F.dropout2d(torch.ones(2, 3), 0.5)
    with pytest.raises(ValueError, match="dropout probability"):
        nn.Dropout2d(1.5)


def test_errors_and_reprs():
    x = torch.randn(1, 1, 4, 4)
    with pytest.raises(ValueError, match="only one of size or scale_factor"):
        F.interpolate(x)
    with pytest.raises(ValueError, match="align_corners option can only be set"):
        F.interpolate(x, scale_factor=2, align_corners=True)
    with pytest.raises(ValueError, match="Anti-alias"):  # (bicubic, area, antialias: test_interpolate_bicubic_area.py)
        F.interpolate(x, scale_factor=0.5, mode="nearest", antialias=True)
    with pytest.raises(NotImplementedError, match="needs 5D input"):
        F.interpolate(x, scale_factor=2, mode="trilinear")
    assert repr(nn.Upsample(scale_factor=2, mode="bilinear")) == (
        "Upsample(scale_factor=2.0, mode='bilinear')")
    assert repr(nn.Upsample(size=(3, 4))) == "Upsample(size=(3, 4), mode='nearest')"
    assert repr(nn.Dropout2d(0.2)) == "Dropout2d(p=0.2, inplace=False)"
    assert nn.UpsamplingBilinear2d(scale_factor=2)(x).shape == (1, 1, 8, 8)


@pytest.mark.skipif(real_torch is None, reason="torch is not importable")
def test_match_torch():
    rng = np.random.default_rng(9)
    cases = [((1, 2, 5), dict(size=9, mode="linear")),
             ((1, 2, 5), dict(scale_factor=1.7, mode="linear", align_corners=True)),
             ((2, 1, 4, 6), dict(size=(7, 3), mode="bilinear")),
             ((2, 1, 4, 6), dict(scale_factor=(0.6, 2.5), mode="bilinear")),
             ((2, 1, 4, 6), dict(scale_factor=3, mode="nearest")),
             ((2, 1, 5, 7), dict(size=(3, 11), mode="nearest")),
             ((2, 1, 5, 7), dict(size=(3, 11), mode="nearest-exact")),
             ((1, 1, 3, 4, 5), dict(size=(5, 2, 6), mode="trilinear", align_corners=True)),
             ((1, 1, 4, 4), dict(scale_factor=1.5, mode="bilinear",
                                 recompute_scale_factor=True))]
    for shape, kw in cases:
        a = rng.normal(size=shape)
        got = F.interpolate(torch.tensor(a), **kw).numpy()
        want = real_torch.nn.functional.interpolate(real_torch.from_numpy(a), **kw).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=str(kw))


@pytest.mark.cuda
def test_cuda_matches_cpu():
    x = torch.randn(2, 3, 5, 6)
    for kw in (dict(scale_factor=2, mode="bilinear"), dict(size=(4, 9), mode="nearest")):
        np.testing.assert_allclose(F.interpolate(x.cuda(), **kw).cpu().numpy(),
                                   F.interpolate(x, **kw).numpy(), rtol=1e-6, atol=1e-6)
    assert F.dropout2d(x.cuda(), 0.5).is_cuda
