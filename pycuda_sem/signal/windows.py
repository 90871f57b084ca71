"""torch.signal.windows: window functions of length M, in scipy's
conventions (as torch's): sym=True gives the symmetric window for filter
design, sym=False the periodic one for spectral analysis (the symmetric
window of length M + 1 without its last point).

Each is computed from its formula in float64 on the target device (one
arange, then elementwise ops), then cast to float32 or float64 (the only
dtypes torch allows); M = 0 gives an empty tensor and M = 1 a single one
where torch gives that."""
import math

from .. import _C
from .._torch_misc import strided

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]


def _checks(name, M, dtype, layout):
    if dtype is None:
        dtype = _C.get_default_dtype()
    if M < 0:
        raise ValueError("%s requires non-negative window length, got M=%s" % (name, M))
    if layout is not strided:
        raise ValueError("%s is implemented for strided tensors only, got: %s" % (name, layout))
    if dtype not in (_C.float32, _C.float64):
        raise ValueError("%s expects float32 or float64 dtypes, got: %s" % (name, dtype))
    return dtype


def _finish(w, dtype, requires_grad):
    w = w.to(dtype)
    if requires_grad:
        w.requires_grad_()
    return w


def _empty(M, dtype, device, requires_grad):
    return _C.empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)


def _span(M, sym):
    """The denominator of the sample positions: M - 1 symmetric, M
    periodic (M > 1)."""
    return M if not sym and M > 1 else M - 1


def _n(M, device):
    return _C.arange(M, dtype=_C.float64, device=device)


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=strided, device=None,
                requires_grad=False):
    """exp(-|n - center| / tau); center defaults to the window's middle."""
    dtype = _checks("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError("Tau must be positive, got: %s instead." % (tau,))
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return _empty(M, dtype, device, requires_grad)
    if center is None:
        center = _span(M, sym) / 2.0
    w = _C.exp(-(_n(M, device) - center).abs() / tau)
    return _finish(w, dtype, requires_grad)


def cosine(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """sin(pi (n + 1/2) / M) (the sine window)."""
    dtype = _checks("cosine", M, dtype, layout)
    if M == 0:
        return _empty(M, dtype, device, requires_grad)
    w = _C.sin(math.pi * (_n(M, device) + 0.5) / (_span(M, sym) + 1))
    return _finish(w, dtype, requires_grad)


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=strided, device=None,
             requires_grad=False):
    """exp(-(n - c)^2 / (2 std^2)), c the window's middle."""
    dtype = _checks("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError("Standard deviation must be positive, got: %s instead." % (std,))
    if M == 0:
        return _empty(M, dtype, device, requires_grad)
    x = _n(M, device) - _span(M, sym) / 2.0
    w = _C.exp(-(x * x) / (2.0 * std * std))
    return _finish(w, dtype, requires_grad)


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=strided, device=None,
           requires_grad=False):
    """I0(beta sqrt(1 - (2n/N - 1)^2)) / I0(beta), N = M - 1 (M periodic)."""
    from .._math_more import i0
    dtype = _checks("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError("beta must be non-negative, got: %s instead." % (beta,))
    if M == 0:
        return _empty(M, dtype, device, requires_grad)
    if M == 1:
        return _C.ones((1,), dtype=dtype, device=device, requires_grad=requires_grad)
    r = 2.0 * _n(M, device) / _span(M, sym) - 1.0
    arg = (1.0 - r * r).clamp_min(0.0).sqrt() * beta  # clamp: rounding at the ends
    b = _C.tensor(float(beta), dtype=_C.float64, device=device)
    return _finish(i0(arg) / i0(b), dtype, requires_grad)


def general_cosine(M, *, a, sym=True, dtype=None, layout=strided, device=None,
                   requires_grad=False):
    """sum_k (-1)^k a[k] cos(2 pi k n / N), N = M - 1 (M periodic)."""
    dtype = _checks("general_cosine", M, dtype, layout)
    if M == 0:
        return _empty(M, dtype, device, requires_grad)
    if M == 1:
        return _C.ones((1,), dtype=dtype, device=device, requires_grad=requires_grad)
    if not hasattr(a, "__iter__"):
        raise TypeError("Coefficients must be a list/tuple")
    a = list(a)
    if not a:
        raise ValueError("Coefficients cannot be empty")
    phase = 2.0 * math.pi * _n(M, device) / _span(M, sym)
    w = _C.zeros(M, dtype=_C.float64, device=device)
    for k, coef in enumerate(a):
        w = w + ((-1) ** k * float(coef)) * _C.cos(k * phase)
    return _finish(w, dtype, requires_grad)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=strided, device=None,
                    requires_grad=False):
    """alpha - (1 - alpha) cos(2 pi n / N)."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """general_hamming with alpha = 0.54."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """general_hamming with alpha = 0.5."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """general_cosine with a = (0.42, 0.5, 0.08)."""
    dtype = _checks("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def nuttall(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """general_cosine with Nuttall's four coefficients."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """1 - |2n / N - 1| (triangular, zero at the ends), N = M - 1 (M periodic)."""
    dtype = _checks("bartlett", M, dtype, layout)
    if M == 0:
        return _empty(M, dtype, device, requires_grad)
    if M == 1:
        return _C.ones((1,), dtype=dtype, device=device, requires_grad=requires_grad)
    w = 1.0 - (2.0 * _n(M, device) / _span(M, sym) - 1.0).abs()
    return _finish(w, dtype, requires_grad)
