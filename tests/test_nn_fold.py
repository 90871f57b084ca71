"""F.unfold / F.fold (and nn.Unfold / nn.Fold) against a NumPy im2col /
col2im written here, and against torch where it imports; gradients by
gradcheck (each is the other's adjoint)."""
import numpy as np
import pytest

import pycuda_sem as torch
import pycuda_sem.nn.functional as F

from torch_oracle import _torch as real_torch  # torch where it imports, else None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
CONFIGS = [dict(kernel_size=3), dict(kernel_size=(2, 3), stride=2, padding=1),
           dict(kernel_size=2, dilation=2, padding=(1, 0), stride=(1, 2))]


def _pair(v):
    return v if isinstance(v, tuple) else (v, v)


def _im2col(x, kernel_size, dilation=1, padding=0, stride=1):
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = map(_pair, (kernel_size, dilation, padding, stride))
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    n, c, h, w = xp.shape
    oh, ow = (h - dh * (kh - 1) - 1) // sh + 1, (w - dw * (kw - 1) - 1) // sw + 1
    cols = np.zeros((n, c, kh, kw, oh, ow), x.dtype)
    for i in range(kh):
        for j in range(kw):
            cols[:, :, i, j] = xp[:, :, i * dh:i * dh + sh * oh:sh, j * dw:j * dw + sw * ow:sw]
    return cols.reshape(n, c * kh * kw, oh * ow), (oh, ow)


def _col2im(cols, out, kernel_size, dilation=1, padding=0, stride=1):
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = map(_pair, (kernel_size, dilation, padding, stride))
    n = cols.shape[0]
    h, w = out[0] + 2 * ph, out[1] + 2 * pw
    oh, ow = (h - dh * (kh - 1) - 1) // sh + 1, (w - dw * (kw - 1) - 1) // sw + 1
    c = cols.shape[1] // (kh * kw)
    blocks = cols.reshape(n, c, kh, kw, oh, ow)
    img = np.zeros((n, c, h, w), cols.dtype)
    for i in range(kh):
        for j in range(kw):
            img[:, :, i * dh:i * dh + sh * oh:sh, j * dw:j * dw + sw * ow:sw] += blocks[:, :, i, j]
    return img[:, :, ph:ph + out[0], pw:pw + out[1]]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("cfg", range(len(CONFIGS)))
def test_unfold_and_fold(device, cfg):
    kw = CONFIGS[cfg]
    a = np.random.default_rng(cfg).standard_normal((2, 3, 7, 8)).astype(np.float32)
    want, _ = _im2col(a, **kw)
    cols = F.unfold(torch.tensor(a, device=device), **kw)
    np.testing.assert_array_equal(cols.cpu().numpy(), want)
    back = F.fold(cols, (7, 8), **kw)
    np.testing.assert_allclose(back.cpu().numpy(), _col2im(want, (7, 8), **kw), rtol=1e-6, atol=1e-6)
    assert torch.nn.Unfold(**kw)(torch.tensor(a, device=device)).shape == cols.shape
    assert torch.nn.Fold((7, 8), **kw)(cols).shape == (2, 3, 7, 8)
    np.testing.assert_array_equal(F.unfold(torch.tensor(a[0], device=device), **kw).cpu().numpy(), want[0])
    if real_torch is not None:
        r = real_torch.nn.functional.unfold(real_torch.from_numpy(a), **kw)
        np.testing.assert_array_equal(cols.cpu().numpy(), r.numpy())
        rf = real_torch.nn.functional.fold(r, (7, 8), **kw)
        np.testing.assert_allclose(back.cpu().numpy(), rf.numpy(), rtol=1e-6, atol=1e-6)


def test_gradients_and_errors():
    x = torch.randn(1, 2, 4, 5, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: F.unfold(t, 2, padding=1, stride=(1, 2)), (x,))
    c = torch.randn(1, 8, 8, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: F.fold(t, (4, 5), 2, stride=(2, 1)), (c,))
    with pytest.raises(RuntimeError, match="sliding blocks"):
        F.fold(torch.randn(1, 8, 6), (4, 5), 2, stride=(2, 1))
    with pytest.raises(RuntimeError, match="divisible"):
        F.fold(torch.randn(1, 7, 8), (4, 5), 2, stride=(2, 1))
    with pytest.raises(NotImplementedError, match="4D"):
        F.unfold(torch.randn(2, 3), 2)
