"""pycuda_sem.testing: assert_close, with torch's default tolerances by dtype
and its mismatch report.

Not a hot path: the values are compared on the host with NumPy (a CUDA
tensor is copied to the CPU once), following torch.testing's rules."""
import math as _math

import numpy as _np

from . import _C

__all__ = ["assert_close"]

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
