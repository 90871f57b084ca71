"""pycuda_sem.fft: torch.fft's functions.

This file is argument sugar only: it resolves n/s, dim and norm and calls
one C primitive, ``_C._fft_cuda`` (csrc/ops/fft.c: cuFFT, plans bound to the
current stream, work areas from the caching allocator, the per-device LRU
plan cache of backends.cuda.cufft_plan_cache). CPU tensors go to numpy.fft
and come back in torch's dtypes (complex64 for float32 input, complex128 for
float64). On CUDA, float16/bfloat16 and integer inputs are computed in
float32/complex64, and at most 3 dims are transformed at once.
"""
import numpy as _np

from . import _C

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2",
           "irfft2", "fftn", "ifftn", "rfftn", "irfftn", "hfft2", "ihfft2", "hfftn", "ihfftn",
           "fftfreq", "rfftfreq",
           "fftshift", "ifftshift"]

_C2C, _R2C, _C2R = 0, 1, 2
_fft_cuda = _C._fft_cuda  # one global lookup on fft's host-loop path, not two
_NONE, _BY_N, _BY_SQRT_N = 0, 1, 2


def _norm(norm, forward):
    """The scaling a transform applies, from torch's norm names."""
    if norm is None or norm == "backward":
        return _NONE if forward else _BY_N
    if norm == "forward":
        return _BY_N if forward else _NONE
    if norm == "ortho":
        return _BY_SQRT_N
    raise RuntimeError("Invalid normalization mode: %s" % (norm,))


def _wrap(dim, ndim):
    if not -max(ndim, 1) <= dim < max(ndim, 1):
        raise IndexError("Dimension out of range (expected to be in range of [%d, %d], but got %d)"
                         % (-max(ndim, 1), max(ndim, 1) - 1, dim))
    return dim % max(ndim, 1)


def _dims_sizes(x, s, dim, last_c2r=False):
    """torch's rules for (s, dim): dim None and s None -> every dim; s only
    -> the last len(s) dims; a size of -1 (or s None) keeps the input's
    (for c2r the last one defaults to 2 * (m - 1))."""
    if isinstance(dim, int):
        dim = (dim,)
    if isinstance(s, int):
        s = (s,)
    if dim is None:
        dim = tuple(range(x.ndim - (len(s) if s is not None else x.ndim), x.ndim))
    dims = tuple(_wrap(d, x.ndim) for d in dim)
    if len(set(dims)) != len(dims):
        raise RuntimeError("FFT dims must be unique")
    if s is None:
        s = [-1] * len(dims)
    if len(s) != len(dims):
        raise RuntimeError("When given, dim and shape arguments must have the same length")
    sizes = []
    for i, (d, n) in enumerate(zip(dims, s)):
        if n is None or n == -1:
            n = x.shape[d]
            if last_c2r and i == len(dims) - 1:
                n = 2 * (n - 1)
        if n < 1:
            raise RuntimeError("Invalid number of data points (%d) specified" % n)
        sizes.append(int(n))
    return dims, tuple(sizes)


def _np_in(x):
    if str(x.dtype).endswith("float16"):  # float16, bfloat16: NumPy computes in float32
        x = x.float()
    return _np.asarray(x.numpy())


def _cpu_result(arr, like_double):
    if _np.iscomplexobj(arr):
        dt = _np.complex128 if like_double else _np.complex64
    else:
        dt = _np.float64 if like_double else _np.float32
    return _C.from_numpy(_np.ascontiguousarray(arr.astype(dt, copy=False)))


def _is_double(x):
    return str(x.dtype).endswith(("float64", "complex128"))


def _cpu(name, x, sizes, dims, norm):
    fn = getattr(_np.fft, name)
    a = _np_in(x)
    if name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"):
        r = fn(a, n=sizes[0], axis=dims[0], norm=norm)
    else:
        r = fn(a, s=sizes, axes=dims, norm=norm)
    return _cpu_result(r, _is_double(x))


# the NumPy norm= that scales a transform by mode (_NONE, _BY_N, _BY_SQRT_N),
# for a forward (exp(-i..)) and an inverse (exp(+i..)) transform
_NP_NORM = {True: ("backward", "forward", "ortho"), False: ("forward", "backward", "ortho")}


def _cpu_prim(x, kind, dims, sizes, mode, forward, conj_in=False, conj_out=False):
    """_fft_cuda's contract on the CPU, through NumPy: the primitive that the
    autograd formulas call (autograd/_formulas_linalg.py)."""
    a = _np_in(x)
    if conj_in:
        a = _np.conj(a)
    norm = _NP_NORM[bool(forward)][mode]
    if kind == _C2C:
        r = (_np.fft.fftn if forward else _np.fft.ifftn)(a, s=sizes, axes=dims, norm=norm)
    elif kind == _R2C:
        r = _np.fft.rfftn(a, s=sizes, axes=dims, norm=norm)
    else:
        r = _np.fft.irfftn(a, s=sizes, axes=dims, norm=norm)
    if conj_out:
        r = _np.conj(r)
    return _cpu_result(r, _is_double(x))


def _transform(x, name, kind, forward, n_or_s, dim, norm, conj_in=False, conj_out=False,
               norm_forward=None):
    dims, sizes = _dims_sizes(x, n_or_s, dim, last_c2r=(kind == _C2R))
    mode = _norm(norm, forward if norm_forward is None else norm_forward)
    if kind == _R2C and x.is_complex():  # torch's TypeError and wording
        from ._dtype_info import _legacy_name
        legacy = _legacy_name(x)
        if name == "ihfftn":
            raise TypeError("Only supports floating-point dtypes, but found: %s" % legacy)
        raise TypeError("%s expects a real%s input tensor, but got %s"
                        % (name, "-valued" if name.endswith("n") else "", legacy))
    if not x.is_cuda:
        if x.requires_grad and _C.is_grad_enabled():  # recorded: autograd's CPU primitive
            from .autograd._formulas_linalg import fft_prim
            return fft_prim(x, kind, dims, sizes, mode, forward, conj_in, conj_out)
        if not hasattr(_np.fft, name):  # hfftn, ihfftn: NumPy has only the 1-D forms
            return _cpu_prim(x, kind, dims, sizes, mode, forward, conj_in, conj_out)
        return _cpu(name, x, sizes, dims, norm)
    return _C._fft_cuda(x, kind, dims, sizes, mode, forward, conj_in, conj_out)


# ---- one dim -------------------------------------------------------------------

def fft(input, n=None, dim=-1, norm=None):
    """One dimensional discrete Fourier transform."""
    if n is None and norm is None and dim == -1 and input.is_cuda:
        # the common call, without the generic argument resolution
        return _fft_cuda(input, _C2C, None, None, _NONE, True, False, False)
    return _transform(input, "fft", _C2C, True, n, dim, norm)


def ifft(input, n=None, dim=-1, norm=None):
    """Inverse of fft."""
    return _transform(input, "ifft", _C2C, False, n, dim, norm)


def rfft(input, n=None, dim=-1, norm=None):
    """FFT of a real signal: the n // 2 + 1 non-negative frequencies."""
    return _transform(input, "rfft", _R2C, True, n, dim, norm)


def irfft(input, n=None, dim=-1, norm=None):
    """Inverse of rfft: a real signal of length n (default 2 * (m - 1))."""
    return _transform(input, "irfft", _C2R, False, n, dim, norm)


def hfft(input, n=None, dim=-1, norm=None):
    """FFT of a Hermitian-symmetric signal given by its first half: real
    output of length n. hfft(x) = irfft(conj(x)) with forward scaling."""
    return _transform(input, "hfft", _C2R, False, n, dim, norm, conj_in=True,
                      norm_forward=True)


def ihfft(input, n=None, dim=-1, norm=None):
    """Inverse of hfft: conj(rfft(x)) with inverse scaling."""
    return _transform(input, "ihfft", _R2C, True, n, dim, norm, conj_out=True,
                      norm_forward=False)


# ---- several dims ----------------------------------------------------------------

def fftn(input, s=None, dim=None, norm=None):
    """N dimensional discrete Fourier transform."""
    return _transform(input, "fftn", _C2C, True, s, dim, norm)


def ifftn(input, s=None, dim=None, norm=None):
    """Inverse of fftn."""
    return _transform(input, "ifftn", _C2C, False, s, dim, norm)


def rfftn(input, s=None, dim=None, norm=None):
    """N dimensional FFT of a real signal (the last dim halved)."""
    return _transform(input, "rfftn", _R2C, True, s, dim, norm)


def irfftn(input, s=None, dim=None, norm=None):
    """Inverse of rfftn."""
    return _transform(input, "irfftn", _C2R, False, s, dim, norm)


def hfftn(input, s=None, dim=None, norm=None):
    """N dimensional FFT of a Hermitian-symmetric signal given by the first
    half of its last dim: real output, irfftn(conj(x)) with forward scaling."""
    return _transform(input, "hfftn", _C2R, False, s, dim, norm, conj_in=True, norm_forward=True)


def ihfftn(input, s=None, dim=None, norm=None):
    """Inverse of hfftn: conj(rfftn(x)) with inverse scaling."""
    return _transform(input, "ihfftn", _R2C, True, s, dim, norm, conj_out=True, norm_forward=False)


def hfft2(input, s=None, dim=(-2, -1), norm=None):
    """Two dimensional hfftn."""
    return hfftn(input, s, dim, norm)


def ihfft2(input, s=None, dim=(-2, -1), norm=None):
    """Two dimensional ihfftn."""
    return ihfftn(input, s, dim, norm)


def fft2(input, s=None, dim=(-2, -1), norm=None):
    """Two dimensional FFT."""
    return fftn(input, s, dim, norm)


def ifft2(input, s=None, dim=(-2, -1), norm=None):
    """Inverse of fft2."""
    return ifftn(input, s, dim, norm)


def rfft2(input, s=None, dim=(-2, -1), norm=None):
    """Two dimensional FFT of a real signal."""
    return rfftn(input, s, dim, norm)


def irfft2(input, s=None, dim=(-2, -1), norm=None):
    """Inverse of rfft2."""
    return irfftn(input, s, dim, norm)


# ---- helpers -----------------------------------------------------------------------

def _freq_tensor(arr, dtype, device):
    from . import tensor, get_default_dtype
    return tensor(arr, dtype=dtype or get_default_dtype(), device=device)


def fftfreq(n, d=1.0, *, dtype=None, device=None, layout=None, requires_grad=False):
    """Sample frequencies of a signal of size n (cycles per unit of d)."""
    return _freq_tensor(_np.fft.fftfreq(n, d), dtype, device)


def rfftfreq(n, d=1.0, *, dtype=None, device=None, layout=None, requires_grad=False):
    """Sample frequencies for rfft of a signal of size n."""
    return _freq_tensor(_np.fft.rfftfreq(n, d), dtype, device)


def _shift_dims(input, dim):
    if dim is None:
        return tuple(range(input.ndim))
    if isinstance(dim, int):
        return (_wrap(dim, input.ndim),)
    return tuple(_wrap(d, input.ndim) for d in dim)


def fftshift(input, dim=None):
    """Move the zero frequency to the centre (roll by n // 2 per dim)."""
    dims = _shift_dims(input, dim)
    return _C._fft_roll(input, tuple(input.shape[d] // 2 for d in dims), dims)


def ifftshift(input, dim=None):
    """Inverse of fftshift (roll by -(n // 2) per dim)."""
    dims = _shift_dims(input, dim)
    return _C._fft_roll(input, tuple(-(input.shape[d] // 2) for d in dims), dims)
