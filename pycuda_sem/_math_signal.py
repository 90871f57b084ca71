"""Signal-processing helpers composed from the C ops: the window functions
(hann, hamming, blackman, bartlett), trapezoid and cumulative_trapezoid
integration, the Vandermonde matrix, and scalar_tensor.

Windows are made on the device from arange and cos (one small kernel each);
the integrals are a diff, a product and a sum (or cumsum) along dim."""
import math
import warnings

from . import _C


def _window(name, window_length, periodic, dtype, device, requires_grad, fn):
    if window_length < 0:
        raise RuntimeError("%s requires non-negative window_length, got window_length=%d" % (name, window_length))
    dtype = dtype or _C.get_default_dtype()
    if not dtype.is_floating_point:
        raise RuntimeError("%s expects floating point dtypes, got %s" % (name, dtype))
    if window_length == 0:
        w = _C.empty(0, dtype=dtype, device=device)
    elif window_length == 1:
        w = _C.ones(1, dtype=dtype, device=device)
    else:
        n = window_length + 1 if periodic else window_length
        k = _C.arange(window_length, dtype=_C.float64, device=device)
        w = fn(k, n - 1).to(dtype)
    return w.requires_grad_(requires_grad) if requires_grad else w


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    """0.5 - 0.5 cos(2 pi k / (N - 1)), N = length (+ 1 when periodic)."""
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, m: 0.5 - 0.5 * (k * (2 * math.pi / m)).cos())


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   requires_grad=False):
    """alpha - beta cos(2 pi k / (N - 1))."""
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, m: alpha - beta * (k * (2 * math.pi / m)).cos())


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    """0.42 - 0.5 cos(2 pi k / (N - 1)) + 0.08 cos(4 pi k / (N - 1))."""
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, m: 0.42 - 0.5 * (k * (2 * math.pi / m)).cos() + 0.08 * (k * (4 * math.pi / m)).cos())


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    """1 - |2k / (N - 1) - 1|."""
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, m: 1 - (k * (2.0 / m) - 1).abs())


def _spacing(fname, y, x, dx, dim):
    if x is not None and dx is not None:
        raise RuntimeError("%s: received both x and dx" % fname)
    n = y.size(dim)
    if x is None:
        return None, 1.0 if dx is None else dx, n
    if x.dim() == 1:
        if x.numel() != n:
            raise RuntimeError("%s: There must be one `x` value for each sample point" % fname)
        shape = [1] * y.dim()
        shape[dim % y.dim()] = n
        x = x.reshape(shape)
    return x.diff(dim=dim), None, n


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The integral of y along dim by the trapezoid rule (spacing x or dx, 1 by default)."""
    dxs, step, n = _spacing("trapezoid", y, x, dx, dim)
    if n == 0:
        return y.sum(dim) * 0
    pairs = y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)
    return (pairs * dxs).sum(dim) / 2 if dxs is not None else pairs.sum(dim) * (step / 2)


trapz = trapezoid


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoid integral along dim (one entry fewer than y)."""
    dxs, step, n = _spacing("cumulative_trapezoid", y, x, dx, dim)
    if n == 0:
        return y.narrow(dim, 0, 0)
    pairs = y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)
    return ((pairs * dxs) / 2).cumsum(dim) if dxs is not None else (pairs * (step / 2)).cumsum(dim)


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of a 1-D x: columns x^(N-1) ... x^0 (or increasing)."""
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.numel() if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    xs = x if (x.is_floating_point() or x.is_complex()) else x.long()
    p = _C.arange(n, device=x.device)
    if not increasing:
        p = p.flip(0)
    return xs.unsqueeze(1) ** p.to(xs.dtype).unsqueeze(0) if n else _C.empty((x.numel(), 0), dtype=xs.dtype,
                                                                            device=x.device)


def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False):
    """A 0-dim tensor holding s (the default float dtype unless dtype is given)."""
    t = _C.tensor(float(s) if not isinstance(s, complex) else s, dtype=dtype or _C.get_default_dtype(),
                  device=device)
    return t.requires_grad_(True) if requires_grad else t


# ---- short-time Fourier transforms ------------------------------------------------------

def _stft_window(window, win_length, n_fft, like):
    if window is None:
        window = _C.ones(win_length, dtype=like.dtype if like.is_floating_point() else _C.get_default_dtype(),
                         device=like.device)
    if window.dim() != 1 or window.numel() != win_length:
        raise RuntimeError("stft: expected a 1D window tensor of size equal to win_length=%d, but got window with "
                           "size %s" % (win_length, list(window.shape)))
    if win_length < n_fft:  # centred in n_fft, zeros around it
        left = (n_fft - win_length) // 2
        window = _C.cat([_C.zeros(left, dtype=window.dtype, device=window.device), window,
                         _C.zeros(n_fft - win_length - left, dtype=window.dtype, device=window.device)])
    return window.to(like.device)


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None, align_to_window=None):
    """The short-time Fourier transform of a 1-D signal or a batch of them:
    frames of n_fft samples hop_length apart (the signal padded by n_fft // 2
    on each side when center), windowed, and transformed by one batched
    rfft (fft for complex input or onesided=False): [*, n_freq, n_frames]."""
    from . import fft as _fft
    from .nn import functional as F
    if return_complex is None and not input.is_complex():
        raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will further "
                           "require that return_complex=True in a future PyTorch release.")
    if return_complex is False:
        # torch still returns the old real form [..., 2], with a warning
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch release, stft will "
                      "return complex tensors for all inputs, and return_complex=False will raise an error.\n"
                      "Note: you can still call torch.view_as_real on the complex output to recover the old "
                      "return format.", UserWarning, stacklevel=2)
        from ._tensor_set import view_as_real
        return view_as_real(stft(input, n_fft, hop_length, win_length, window, center, pad_mode, normalized,
                                onesided, True, align_to_window))
    if input.dim() not in (1, 2):
        raise RuntimeError("stft: expected a 1D or 2D tensor, but got %dD" % input.dim())
    hop = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if n_fft <= 0 or hop <= 0 or not 0 < win_length <= n_fft:
        raise RuntimeError("stft: expected 0 < n_fft, 0 < hop_length and 0 < win_length <= n_fft, got n_fft=%d, "
                           "hop_length=%d, win_length=%d" % (n_fft, hop, win_length))
    x = input.reshape(1, -1) if input.dim() == 1 else input
    if center:
        p = n_fft // 2
        x = F.pad(x.unsqueeze(1), (p, p), mode=pad_mode).squeeze(1)
    if x.shape[-1] < n_fft:
        raise RuntimeError("stft: expected 0 < n_fft <= %d, but got n_fft=%d" % (x.shape[-1], n_fft))
    w = _stft_window(window, win_length, n_fft, x)
    frames = x.unfold(-1, n_fft, hop) * w  # [B, n_frames, n_fft]
    one = (not input.is_complex() and not w.is_complex()) if onesided is None else onesided
    spec = _fft.rfft(frames, dim=-1) if one else _fft.fft(frames, dim=-1)
    if normalized:
        spec = spec * (n_fft ** -0.5)
    spec = spec.transpose(1, 2)
    return spec[0] if input.dim() == 1 else spec


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    """The inverse of stft: inverse transforms of the frames, windowed and
    overlap-added, divided by the summed squared window (which must not
    vanish where the signal is kept)."""
    from . import fft as _fft
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor")
    if input.dim() not in (2, 3):
        raise RuntimeError("istft: expected a tensor of shape [n_freq, n_frames] or [B, n_freq, n_frames]")
    hop = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    spec = input.unsqueeze(0) if input.dim() == 2 else input
    n_frames = spec.shape[-1]
    one = (spec.shape[-2] != n_fft) if onesided is None else onesided
    cols = spec.transpose(1, 2)  # [B, n_frames, n_freq]
    if normalized:
        cols = cols * (n_fft ** 0.5)
    frames = _fft.irfft(cols, n=n_fft, dim=-1) if one else _fft.ifft(cols, dim=-1)
    if not return_complex and frames.is_complex():
        frames = frames.real
    w = _stft_window(window, win_length, n_fft, frames if frames.is_floating_point() else frames.real)
    frames = frames * w
    total = n_fft + hop * (n_frames - 1)
    b = frames.shape[0]
    pos = (_C.arange(n_frames, device=frames.device).reshape(-1, 1) * hop
           + _C.arange(n_fft, device=frames.device).reshape(1, -1)).reshape(-1)
    y = _C.zeros((b, total), dtype=frames.dtype, device=frames.device).index_add(1, pos, frames.reshape(b, -1))
    env = _C.zeros(total, dtype=w.dtype, device=w.device).index_add(0, pos, (w * w).repeat(n_frames))
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (total - n_fft // 2 if center else total)
    end = min(end, total)
    y, env = y[:, start:end], env[start:end]
    if env.numel() and float(env.abs().min()) < 1e-11:
        raise RuntimeError("istft: window overlap add min: %g is below 1e-11 (the window fails the NOLA "
                           "condition)" % float(env.abs().min()))
    y = y / env
    if length is not None and y.shape[-1] < length:
        y = _C.cat([y, _C.zeros((b, length - y.shape[-1]), dtype=y.dtype, device=y.device)], -1)
    return y[0] if input.dim() == 2 else y
