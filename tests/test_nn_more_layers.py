"""LocalResponseNorm, ChannelShuffle, AdaptiveAvgPool3d / AdaptiveMaxPool3d
(and their F forms) against NumPy statements of their definitions, and
against torch where it imports."""
import numpy as np
import pytest

import pycuda_sem as torch
import pycuda_sem.nn.functional as F
from pycuda_sem import nn

from torch_oracle import _torch as real_torch  # torch where it imports, else None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]


def _lrn(a, size, alpha=1e-4, beta=0.75, k=1.0):
    c = a.shape[1]
    sq = a.astype(np.float64) ** 2
    out = np.empty_like(sq)
    for i in range(c):
        lo, hi = max(0, i - size // 2), min(c, i + (size - 1) // 2 + 1)
        out[:, i] = a[:, i] / (k + alpha / size * sq[:, lo:hi].sum(1)) ** beta
    return out


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kw", [dict(size=5), dict(size=2, alpha=1e-2, beta=0.5, k=2.0), dict(size=4)])
def test_local_response_norm(device, kw):
    a = np.random.default_rng(0).standard_normal((2, 7, 5, 6)).astype(np.float32) * 3
    got = nn.LocalResponseNorm(**kw)(torch.tensor(a, device=device))
    np.testing.assert_allclose(got.cpu().numpy(), _lrn(a, **kw), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(F.local_response_norm(torch.tensor(a[..., 0], device=device), **kw).cpu().numpy(),
                               _lrn(a[..., 0], **kw), rtol=1e-5, atol=1e-6)
    if real_torch is not None:
        r = real_torch.nn.LocalResponseNorm(**kw)(real_torch.from_numpy(a))
        np.testing.assert_allclose(got.cpu().numpy(), r.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_channel_shuffle_and_adaptive_3d_pools(device):
    a = np.random.default_rng(1).standard_normal((2, 6, 3, 4)).astype(np.float32)
    got = nn.ChannelShuffle(3)(torch.tensor(a, device=device)).cpu().numpy()
    np.testing.assert_array_equal(got, a.reshape(2, 3, 2, 3, 4).transpose(0, 2, 1, 3, 4).reshape(2, 6, 3, 4))
    with pytest.raises(RuntimeError, match="divisible by groups"):
        F.channel_shuffle(torch.tensor(a, device=device), 4)
    c = np.random.default_rng(2).standard_normal((2, 3, 4, 6, 8)).astype(np.float32)
    x = torch.tensor(c, device=device)
    np.testing.assert_allclose(nn.AdaptiveAvgPool3d((2, 3, 4))(x).cpu().numpy(),
                               c.reshape(2, 3, 2, 2, 3, 2, 4, 2).mean((3, 5, 7)), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(nn.AdaptiveMaxPool3d(2)(x).cpu().numpy(),
                                  c.reshape(2, 3, 2, 2, 2, 3, 2, 4).max((3, 5, 7)))
    if real_torch is not None:
        r = real_torch.nn.AdaptiveAvgPool3d((3, 4, 5))(real_torch.from_numpy(c))
        np.testing.assert_allclose(nn.AdaptiveAvgPool3d((3, 4, 5))(x).cpu().numpy(), r.numpy(), rtol=1e-5, atol=1e-6)
