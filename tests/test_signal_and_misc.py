"""Windows, trapezoid integration, vander, scalar_tensor, unravel_index,
isin and histogram: against NumPy (and torch where it imports)."""
import math

import numpy as np
import pytest

import pycuda_sem as torch

from torch_oracle import _torch as real_torch  # torch where it imports, else None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
RNG = np.random.default_rng(0)


def npy(t):
    return t.detach().cpu().numpy()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("n", [0, 1, 5, 8])
@pytest.mark.parametrize("periodic", [True, False])
def test_windows(device, n, periodic):
    m = n + 1 if periodic else n
    k = np.arange(n)
    with np.errstate(all="ignore"):
        want = {"hann_window": 0.5 - 0.5 * np.cos(2 * math.pi * k / (m - 1)),
                "hamming_window": 0.54 - 0.46 * np.cos(2 * math.pi * k / (m - 1)),
                "blackman_window": 0.42 - 0.5 * np.cos(2 * math.pi * k / (m - 1)) + 0.08 * np.cos(4 * math.pi * k / (m - 1)),
                "bartlett_window": 1 - np.abs(2 * k / (m - 1) - 1)}
    for name, w in want.items():
        got = getattr(torch, name)(n, periodic=periodic, dtype=torch.float64, device=device)
        np.testing.assert_allclose(npy(got), np.ones(1) if n == 1 else w, rtol=1e-12, atol=1e-12)
        if real_torch is not None:
            r = getattr(real_torch, name)(n, periodic=periodic, dtype=real_torch.float64)
            np.testing.assert_allclose(npy(got), r.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_integration_vander_scalar(device):
    y, x = RNG.standard_normal((3, 6)), np.sort(RNG.standard_normal(6))
    ty, tx = torch.tensor(y, device=device), torch.tensor(x, device=device)
    np.testing.assert_allclose(npy(torch.trapezoid(ty, tx)), np.trapezoid(y, x), rtol=1e-12)
    np.testing.assert_allclose(npy(torch.trapz(ty, dx=0.5, dim=0)), np.trapezoid(y, dx=0.5, axis=0), rtol=1e-12)
    cum = np.cumsum((y[:, 1:] + y[:, :-1]) * np.diff(x) / 2, axis=1)
    np.testing.assert_allclose(npy(torch.cumulative_trapezoid(ty, tx)), cum, rtol=1e-12)
    np.testing.assert_allclose(npy(torch.vander(torch.tensor([1.0, 2.0, 3.0], device=device))), np.vander([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(npy(torch.vander(torch.tensor([1, 2, 3], device=device), 4, increasing=True)),
                                  np.vander([1, 2, 3], 4, increasing=True))
    s = torch.scalar_tensor(3, device=device)
    assert s.dim() == 0 and s.dtype == torch.float32 and s.item() == 3.0


@pytest.mark.parametrize("device", DEVICES)
def test_unravel_index_isin_histogram(device):
    idx = torch.tensor([4, 1, -1, 5], device=device)
    rows, cols = torch.unravel_index(idx, (2, 3))
    assert rows.tolist() == [1, 0, 1, 1] and cols.tolist() == [1, 1, 2, 2]
    with pytest.raises(RuntimeError, match="must be in range"):
        torch.unravel_index(torch.tensor([6]), (2, 3))
    e = torch.tensor([[1, 5], [7, 2]], device=device)
    assert torch.isin(e, torch.tensor([2, 7, 9], device=device)).tolist() == [[False, False], [True, True]]
    assert torch.isin(e, torch.tensor([5], device=device), invert=True).tolist() == [[True, False], [True, True]]
    v = RNG.standard_normal(200)
    for kw, nkw in [(dict(bins=7), dict(bins=7)), (dict(bins=5, range=(-1.0, 1.0), density=True),
                                                  dict(bins=5, range=(-1.0, 1.0), density=True))]:
        h, edges = torch.histogram(torch.tensor(v, device=device), **kw)
        nh, nedges = np.histogram(v, **nkw)
        np.testing.assert_allclose(npy(h), nh, rtol=1e-12)
        np.testing.assert_allclose(npy(edges), nedges, rtol=1e-12)
    w = np.abs(v)
    h, _ = torch.histogram(torch.tensor(v, device=device), bins=torch.tensor([-2.0, -0.5, 0.0, 3.0], dtype=torch.float64,
                                                                             device=device),
                           weight=torch.tensor(w, device=device))
    np.testing.assert_allclose(npy(h), np.histogram(v, bins=[-2.0, -0.5, 0.0, 3.0], weights=w)[0], rtol=1e-12)
    with pytest.raises(RuntimeError, match="same dtype"):
        torch.histogram(torch.tensor(v, device=device), bins=torch.tensor([0.0, 1.0], device=device))


# ---- stft / istft -------------------------------------------------------------------------

def _np_stft(x, n_fft, hop, window, center=True):
    if center:
        x = np.pad(x, (n_fft // 2, n_fft // 2), mode="reflect")
    n = 1 + (len(x) - n_fft) // hop
    frames = np.stack([x[i * hop:i * hop + n_fft] * window for i in range(n)])
    return np.fft.rfft(frames, axis=-1).T


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("n_fft,hop", [(16, 4), (20, 7), (32, 8)])
def test_stft_and_round_trip(device, n_fft, hop):
    x = RNG.standard_normal((2, 100))
    w = torch.hann_window(n_fft, dtype=torch.float64, device=device)
    spec = torch.stft(torch.tensor(x, device=device), n_fft, hop, window=w, return_complex=True)
    want = np.stack([_np_stft(r, n_fft, hop, npy(w)) for r in x])
    np.testing.assert_allclose(npy(spec), want, rtol=1e-10, atol=1e-10)
    back = torch.istft(spec, n_fft, hop, window=w, length=100)
    np.testing.assert_allclose(npy(back), x, rtol=1e-10, atol=1e-10)
    if real_torch is not None:
        r = real_torch.stft(real_torch.tensor(x), n_fft, hop, window=real_torch.hann_window(n_fft, dtype=real_torch.float64),
                            return_complex=True)
        np.testing.assert_allclose(npy(spec), r.numpy(), rtol=1e-10, atol=1e-10)


def test_stft_checks():
    x = torch.randn(64)
    with pytest.raises(RuntimeError, match="return_complex"):
        torch.stft(x, 16)
    # the deprecated real form: view_as_real of the complex result, with torch's warning
    with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
        old = torch.stft(x, 16, return_complex=False)
    new = torch.stft(x, 16, return_complex=True)
    assert old.dtype == torch.float32 and tuple(old.shape) == tuple(new.shape) + (2,)
    np.testing.assert_array_equal(npy(old)[..., 0], npy(new.real))
    np.testing.assert_array_equal(npy(old)[..., 1], npy(new.imag))
    if real_torch is not None:
        with pytest.warns(UserWarning):
            want = real_torch.stft(real_torch.tensor(npy(x)), 16, return_complex=False)
        np.testing.assert_allclose(npy(old), want.numpy(), rtol=1e-5, atol=1e-5)
    w = torch.hann_window(16)
    with pytest.raises(RuntimeError, match="NOLA"):
        torch.istft(torch.stft(x, 16, window=w, center=False, return_complex=True), 16, window=w, center=False)
