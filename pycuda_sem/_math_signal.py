"""Signal-processing helpers composed from the C ops: the window functions
(hann, hamming, blackman, bartlett), trapezoid and cumulative_trapezoid
integration, the Vandermonde matrix, and scalar_tensor.

Windows are made on the device from arange and cos (one small kernel each);
the integrals are a diff, a product and a sum (or cumsum) along dim."""
import math

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
