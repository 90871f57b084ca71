"""pycuda_sem.testing: assert_close, with torch's default tolerances by dtype
and its mismatch report; its deprecated forerunner assert_allclose; and
make_tensor, the random test tensor with torch's default value ranges.

Not a hot path: the values are compared on the host with NumPy (a CUDA
tensor is copied to the CPU once), following torch.testing's rules."""
import math as _math
import warnings as _warnings

import numpy as _np

from . import _C
from ._dtype_info import finfo as _finfo, iinfo as _iinfo
from ._tensor_set import view_as_real as _view_as_real

__all__ = ["assert_close", "assert_allclose", "make_tensor"]

# torch.testing's defaults: (rtol, atol) by dtype; exact for the rest
_TOLERANCES = {
    _C.float16: (1e-3, 1e-5),
    _C.bfloat16: (1.6e-2, 1e-5),
    _C.float32: (1.3e-6, 1e-5),
    _C.float64: (1e-7, 1e-7),
    _C.complex64: (1.3e-6, 1e-5),
    _C.complex128: (1e-7, 1e-7),
}


def _tolerances(*dtypes):
    rtols, atols = zip(*(_TOLERANCES.get(d, (0.0, 0.0)) for d in dtypes))
    return max(rtols), max(atols)


def _fail(msg, custom):
    if callable(custom):
        msg = custom(msg)
    elif custom is not None:
        msg = custom
    raise AssertionError(msg)


def _mismatch_msg(identifier, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol):
    equality = rtol == 0 and atol == 0

    def diff_msg(kind, diff, idx, tol):
        if idx is None:
            m = "%s difference: %s" % (kind.title(), diff)
        else:
            m = "Greatest %s difference: %s at index %s" % (kind, diff, idx)
        if not equality:
            m += " (up to %s allowed)" % tol
        return m + "\n"

    msg = "%s are not %s!\n\n" % (identifier, "equal" if equality else "close")
    if extra:
        msg += extra.strip() + "\n"
    msg += diff_msg("absolute", abs_diff, abs_idx, atol)
    msg += diff_msg("relative", rel_diff, rel_idx, rtol)
    return msg.strip()


def _to_numpy(t):
    if t.dtype == _C.bfloat16:
        t = t.float()
    return t.detach().cpu().numpy()


def _isclose(a, e, rtol, atol, equal_nan):
    with _np.errstate(all="ignore"):
        close = a == e
        if equal_nan and a.dtype.kind in "fc":
            close |= _np.isnan(a) & _np.isnan(e)
        if rtol == 0 and atol == 0:
            return close
        if a.dtype.kind == "b":
            a, e = a.astype(_np.float32), e.astype(_np.float32)
        actual = _np.abs(a - e)
        allowed = atol + _np.abs(rtol * e)
        return close | (_np.isfinite(actual) & (actual <= allowed))


def _unravel(flat, shape):
    if not shape:
        return ()
    return tuple(int(i) for i in _np.unravel_index(flat, shape))


def _compare_tensors(actual, expected, rtol, atol, equal_nan, check_device, check_dtype, msg):
    for attr in ("shape",) + (("device",) if check_device else ()) + (
            ("dtype",) if check_dtype else ()):
        a, e = getattr(actual, attr), getattr(expected, attr)
        if a != e:
            _fail("The values for attribute '%s' do not match: %s != %s." % (attr, a, e), msg)
    if rtol is None:
        rtol, atol = _tolerances(actual.dtype, expected.dtype)
    dtype = _C.promote_types(actual.dtype, expected.dtype)
    a = _to_numpy(actual.to(dtype))
    e = _to_numpy(expected.to(dtype))
    matches = _isclose(a, e, rtol, atol, equal_nan)
    if matches.all():
        return
    if a.shape == ():
        av, ev = a.item(), e.item()
        abs_diff = abs(av - ev)
        rel_diff = _math.inf if ev == 0 else abs_diff / abs(ev)
        _fail(_mismatch_msg("Scalars", "Expected %s but got %s." % (ev, av), abs_diff, None, atol,
                            rel_diff, None, rtol), msg)
    n = matches.size
    bad = n - int(matches.sum())
    extra = "Mismatched elements: %d / %d (%.1f%%)" % (bad, n, 100.0 * bad / n)
    af, ef, mf = a.reshape(-1), e.reshape(-1), matches.reshape(-1)
    if af.dtype.kind not in "fc":
        af, ef = af.astype(_np.int64), ef.astype(_np.int64)
    with _np.errstate(all="ignore"):
        abs_diff = _np.abs(af - ef)
        abs_diff[mf] = 0
        rel_diff = abs_diff / _np.abs(ef)
        rel_diff[mf] = 0
    ia, ir = _nanargmax(abs_diff), _nanargmax(rel_diff)
    _fail(_mismatch_msg("Tensor-likes", extra, abs_diff[ia].item(), _unravel(ia, a.shape), atol,
                        rel_diff[ir].item(), _unravel(ir, a.shape), rtol), msg)


def _nanargmax(x):
    # torch.max picks the first NaN, else the first maximum
    if x.dtype.kind in "fc":
        nan = _np.isnan(x)
        if nan.any():
            return int(_np.argmax(nan))
    return int(_np.argmax(x))


def _as_tensor(x):
    if isinstance(x, _C.Tensor):
        return x
    if isinstance(x, (bool, int, float, complex)):
        return _C.tensor(x)
    if isinstance(x, _np.ndarray):
        return _C.from_numpy(x)
    return None


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    """Raises AssertionError unless actual and expected are close:
    |actual - expected| <= atol + rtol * |expected| elementwise, with
    torch's default (rtol, atol) for the dtypes when neither is given, and
    torch's report ("Tensor-likes are not close!", the mismatched count, the
    greatest absolute and relative differences and where). Sequences and
    mappings are compared item by item."""
    if (rtol is None) != (atol is None):
        raise ValueError("Both 'rtol' and 'atol' must be either specified or omitted, but got no "
                         "%s." % ("rtol" if rtol is None else "atol"))
    if isinstance(actual, (list, tuple)) and isinstance(expected, (list, tuple)):
        if len(actual) != len(expected):
            _fail("The length of the sequences mismatch: %d != %d" % (len(actual), len(expected)),
                  msg)
        for a, e in zip(actual, expected):
            assert_close(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan,
                         check_device=check_device, check_dtype=check_dtype, msg=msg)
        return
    if isinstance(actual, dict) and isinstance(expected, dict):
        if set(actual) != set(expected):
            _fail("The keys of the mappings do not match", msg)
        for k in actual:
            assert_close(actual[k], expected[k], rtol=rtol, atol=atol, equal_nan=equal_nan,
                         check_device=check_device, check_dtype=check_dtype, msg=msg)
        return
    a, e = _as_tensor(actual), _as_tensor(expected)
    numbers = (bool, int, float, complex)
    if a is None or e is None or (isinstance(actual, numbers) != isinstance(expected, numbers)):
        if actual is None and expected is None:
            return
        raise TypeError("No comparison pair was able to handle inputs of type %s and %s."
                        % (type(actual), type(expected)))
    if isinstance(actual, numbers):
        # two Python numbers: torch lets an int and a float meet
        check_dtype = False
    _compare_tensors(a, e, rtol, atol, equal_nan, check_device, check_dtype, msg)


# assert_allclose's own (looser) defaults, from before assert_close existed;
# other dtypes compare exactly
_LEGACY_TOLERANCES = {
    _C.float16: (1e-3, 1e-3),
    _C.float32: (1e-4, 1e-5),
    _C.float64: (1e-5, 1e-8),
}


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Deprecated (FutureWarning, as torch): assert_close with the legacy
    default tolerances, NaNs equal by default, and no dtype check; numbers
    and lists become tensors (expected in actual's dtype)."""
    _warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be "
                   "removed in a future release. Please use `torch.testing.assert_close()` "
                   "instead. You can find detailed upgrade instructions in "
                   "https://github.com/pytorch/pytorch/issues/61844.", FutureWarning,
                   stacklevel=2)
    if not isinstance(actual, _C.Tensor):
        actual = _C.tensor(actual)
    if not isinstance(expected, _C.Tensor):
        expected = _C.tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtols, atols = zip(*(_LEGACY_TOLERANCES.get(t.dtype, (0.0, 0.0))
                             for t in (actual, expected)))
        rtol, atol = max(rtols), max(atols)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
                 check_device=True, check_dtype=False, check_stride=False, msg=msg or None)


# ---- make_tensor ---------------------------------------------------------------------------

_INTEGRAL = (_C.uint8, _C.int8, _C.int16, _C.int32, _C.int64)
_FLOATING = (_C.float16, _C.bfloat16, _C.float32, _C.float64)
_COMPLEX = (_C.complex64, _C.complex128)


def _value_range(dtype, low, high, lowest, highest, default_low, default_high):
    """[low, high) after torch's checks and clamping to what the dtype holds
    (ceiled for bool/integers, whose upper bound is exclusive in randint)."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and _math.isnan(v) for v in (low, high)):
        raise ValueError("`low` and `high` cannot be NaN, but got low=%s and high=%s"
                         % (low, high))
    if low == high and dtype in _FLOATING + _COMPLEX:
        _warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or "
                       "complex types is deprecated since 2.1 and will be removed in 2.3. "
                       "Use `torch.full(...)` instead.", FutureWarning, stacklevel=3)
    elif low >= high:
        raise ValueError("`low` must be less than `high`, but got %s >= %s" % (low, high))
    elif high < lowest or low >= highest:
        raise ValueError("The value interval specified by `low` and `high` is [%s, %s), but %s "
                         "only supports [%s, %s)" % (low, high, dtype, lowest, highest))
    low = min(max(low, lowest), highest)
    high = min(max(high, lowest), highest)
    if dtype is _C.bool or dtype in _INTEGRAL:
        return _math.ceil(low), _math.ceil(high)
    return low, high


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False,
                noncontiguous=False, exclude_zero=False, memory_format=None):
    """A tensor of `shape` filled uniformly from [low, high), as
    torch.testing.make_tensor: defaults [0, 2) for bool, [-9, 10) for
    integers (clamped to the dtype: [0, 10) for uint8), [-9, 9) for floating
    and complex dtypes (both parts); bounds outside the dtype are clamped to
    it. noncontiguous=True gives a strided view (every other element of a
    last dim twice as long, offset by one); exclude_zero replaces zeros with
    1 (bool, integers) or finfo.tiny."""
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError("The parameters `noncontiguous` and `memory_format` are mutually "
                         "exclusive, but got noncontiguous=%s and memory_format=%s"
                         % (noncontiguous, memory_format))
    integral = dtype is _C.bool or dtype in _INTEGRAL
    if requires_grad and integral:
        raise ValueError("`requires_grad=True` is not supported for boolean and integral "
                         "dtypes, but got dtype=%s" % (dtype,))
    numel = 1
    for n in shape:
        numel *= n
    noncontiguous = noncontiguous and numel > 1
    if noncontiguous:
        # twice the last dim, so that the view skips real (distinct) values
        shape = shape[:-1] + (2 * shape[-1],)
    if dtype is _C.bool:
        low, high = _value_range(dtype, low, high, 0, 2, 0, 2)
        result = _C.randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in _INTEGRAL:
        info = _iinfo(dtype)
        # randint's bound is an int64: int64's max itself cannot be drawn
        top = info.max + (1 if dtype is not _C.int64 else 0)
        low, high = _value_range(dtype, low, high, info.min, top, -9, 10)
        result = _C.randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in _FLOATING or dtype in _COMPLEX:
        info = _finfo(dtype)
        low, high = _value_range(dtype, low, high, info.min, info.max, -9, 9)
        result = _C.empty(shape, device=device, dtype=dtype)
        target = _view_as_real(result) if dtype in _COMPLEX else result
        if high - low >= info.max:  # uniform_ needs a finite span: draw half, double it
            target.uniform_(low / 2, high / 2).mul_(2)
        else:
            target.uniform_(low, high)
    else:
        raise TypeError("The requested dtype '%s' is not supported by "
                        "torch.testing.make_tensor()." % (dtype,))
    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if integral else _finfo(dtype).tiny
    if dtype in _FLOATING or dtype in _COMPLEX:
        result.requires_grad = requires_grad
    return result
