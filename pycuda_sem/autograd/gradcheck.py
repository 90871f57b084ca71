"""torch.autograd.gradcheck / gradgradcheck: compare the gradients the engine
computes (analytical: `autograd.grad` with one-hot grad_outputs, one row of
the Jacobian per call) with finite differences (numerical: central
differences, each element of a copy of the input perturbed by +-eps).

Jacobians are laid out as torch's: J[i][j] has one row per element of input i
and one column per element of output j. The numerical one is computed in the
inputs' dtype, so the check only means something in float64/complex128 (a
warning says so otherwise). Complex inputs are perturbed along the real and
the imaginary axis (entry d/dx + 1j d/dy, the gradient convention of torch);
complex outputs are checked as their real and imaginary parts. Fast mode
compares v^T J u for random unit vectors u, v instead of all of J.

Jacobians are held as NumPy arrays on the host (they are small: gradcheck is
for small inputs) and shown as tensors in the error messages.
"""
import itertools
import warnings

import numpy as np

from .. import _C
from .function import Function
from .grad_mode import no_grad, enable_grad

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]

_Tensor = _C.Tensor


class GradcheckError(RuntimeError):
    """Error raised by :func:`gradcheck` and :func:`gradgradcheck`."""


FAILED_NONDET_MSG = """

NOTE: If your op relies on non-deterministic operations i.e., it is listed here:
https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html
this failure might be expected.

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `nondet_tol=<tol>` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_nondet_tol=<tol>`.
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_nondet_tol=<tol>`
"""

FAST_FAIL_SLOW_OK_MSG = """
Fast gradcheck failed but element-wise differences are small. This means that the
test might've passed in slow_mode!

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck:

If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `fast_mode=False` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_fast_mode=False`
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_fast_mode=False`
"""


# ---- helpers -------------------------------------------------------------------------------

def _as_tuple(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _differentiable_outputs(x):
    return tuple(o for o in _as_tuple(x) if isinstance(o, _Tensor) and o.requires_grad)


def _is_float_or_complex(t):
    return isinstance(t, _Tensor) and (t.dtype.is_floating_point or t.dtype.is_complex)


def _np(t):
    """A tensor's values as a flat host array (its own dtype)."""
    return t.detach().cpu().numpy().reshape(-1)


def _show(arr):
    """A Jacobian as torch shows it in messages: a tensor."""
    return str(_from_host(arr))


def _from_host(arr, like=None):
    """A host array as a tensor (of like's shape, dtype and device when given)."""
    arr = np.asarray(arr)
    t = _C.from_numpy(np.ascontiguousarray(arr).reshape(arr.shape))
    if like is not None:
        t = t.reshape(tuple(like.shape)).to(device=like.device, dtype=like.dtype)
    return t


def _allclose(a, n, rtol, atol):
    return bool(np.all(np.abs(a - n) <= atol + rtol * np.abs(n)))


def _check_inputs(tupled_inputs):
    any_requires_grad = False
    for idx, inp in enumerate(tupled_inputs):
        if isinstance(inp, _Tensor) and inp.requires_grad:
            if inp.dtype not in (_C.float64, _C.complex128):
                warnings.warn("Input #%d requires gradient and is not a double precision floating "
                              "point or complex. This check will likely fail if all the inputs "
                              "are not of double precision floating point or complex. " % idx,
                              stacklevel=3)
            if not all(st > 0 or sz <= 1 for st, sz in zip(inp.stride(), inp.shape)):
                raise RuntimeError(
                    "The %dth input has a dimension with stride 0. gradcheck only supports inputs "
                    "that are non-overlapping to be able to compute the numerical gradients "
                    "correctly. You should call .contiguous on the input before passing it to "
                    "gradcheck." % idx)
            any_requires_grad = True
    if not any_requires_grad:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of the them have requires_grad=True.")


def _output_parts(outputs):
    """(output index, part) pairs checked: one per real output, two ('real',
    'imaginary') per complex one."""
    parts = []
    for j, o in enumerate(outputs):
        if o.dtype.is_complex:
            parts += [(j, "real"), (j, "imaginary")]
        else:
            parts.append((j, None))
    return parts


def _part(arr, part):
    if part == "real":
        return arr.real
    if part == "imaginary":
        return arr.imag
    return arr


def _notallclose_msg(a, n, out_idx, inp_idx, part):
    prefix = ("" if part is None else
              "While considering the %s part of complex outputs only, " % part)
    return prefix + "Jacobian mismatch for output %d with respect to input %d,\nnumerical:%s\n" \
        "analytical:%s\n" % (out_idx, inp_idx, _show(n), _show(a))


# ---- numerical Jacobian ------------------------------------------------------------------

def _eval_outputs(func, inputs, out_indices):
    """func(*inputs); the outputs at out_indices as host arrays. Grad mode is
    left as it is: gradgradcheck's function computes gradients inside."""
    outs = _as_tuple(func(*inputs))
    return [_np(outs[k]) for k in out_indices]


def _numerical_jacobians(func, inputs, diff_idx, out_indices, eps):
    """{(input position among diff inputs, output position, part): array}."""
    outputs = _as_tuple(func(*inputs))  # shapes/dtypes only
    jac = {}
    for i, inp_index in enumerate(diff_idx):
        x = inputs[inp_index]
        rows = _numerical_rows(func, inputs, inp_index, out_indices, eps)
        for j, k in enumerate(out_indices):
            o = outputs[k]
            parts = ("real", "imaginary") if o.dtype.is_complex else (None,)
            for part in parts:
                jac[i, j, part] = _assemble(rows, j, part, x.dtype.is_complex, o.numel())
    return jac


def _with_copy(inputs, k):
    """inputs with inputs[k] replaced by a detached copy, and the copy. The
    numerical Jacobian perturbs the copy: the input itself (its storage's
    version, graphs already recorded from it) is never touched."""
    xd = inputs[k].detach().clone()
    return inputs[:k] + (xd,) + inputs[k + 1:], xd


def _numerical_rows(func, inputs, inp_index, out_indices, eps):
    """Per element of the input: per output, (dx, dy or None) host arrays."""
    x = inputs[inp_index]
    inputs, xd = _with_copy(inputs, inp_index)
    rows = []
    for idx in itertools.product(*[range(s) for s in xd.shape]):
        orig = xd[idx].item()

        def diff(delta):
            with no_grad():  # the copy may have been made a leaf requiring grad by func
                xd[idx] = orig - delta
            lo = _eval_outputs(func, inputs, out_indices)
            with no_grad():
                xd[idx] = orig + delta
            hi = _eval_outputs(func, inputs, out_indices)
            with no_grad():
                xd[idx] = orig
            return [(h - lo_) / (2 * eps) for h, lo_ in zip(hi, lo)]

        dx = diff(eps)
        dy = diff(eps * 1j) if x.dtype.is_complex else [None] * len(dx)
        rows.append(list(zip(dx, dy)))
    return rows


def _assemble(rows, j, part, complex_input, numel_out):
    """The (numel_in, numel_out) numerical Jacobian of output j (one part)."""
    out = []
    for row in rows:
        dx, dy = row[j]
        dx = _part(dx, part)
        if complex_input:
            out.append(dx + 1j * _part(dy, part))
        else:
            out.append(dx)
    if not out:
        return np.zeros((0, numel_out))
    return np.stack(out)


# ---- analytical Jacobian -----------------------------------------------------------------

def _vjp(outputs, diff_inputs, j, grad_output):
    """autograd.grad of outputs[j] with grad_output; zeros for unused inputs.
    Returns (grads as host arrays, dtype ok, size ok)."""
    from . import grad as _grad
    gs = _grad((outputs[j],), diff_inputs, (grad_output,), retain_graph=True, allow_unused=True)
    arrays, types_ok, sizes_ok = [], True, True
    for g, x in zip(gs, diff_inputs):
        if g is None:
            arrays.append(np.zeros(x.numel(), dtype=np.complex128 if x.dtype.is_complex
                                   else np.float64))
            continue
        if g.shape != x.shape:
            sizes_ok = False
        elif g.dtype != x.dtype:
            types_ok = False
        arrays.append(_np(g))
    return arrays, types_ok, sizes_ok


def _one_hot(o, k, value):
    go = _C.zeros_like(o, memory_format=_C.contiguous_format)  # written through reshape(-1)
    go.reshape(-1)[k] = value
    return go


def _analytical_jacobians(outputs, diff_inputs, check_grad_dtypes):
    """{(i, j, part): (numel_in, numel_out) array} from one vjp per output
    element (two per element of a complex output); also returns whether a
    second run gave the same values (the reentrancy check) as max |diff|."""
    jac = {}
    max_nondet = 0.0
    for j, o in enumerate(outputs):
        parts = (("real", 1.0), ("imaginary", 1j)) if o.dtype.is_complex else ((None, 1.0),)
        n_out = o.numel()
        for part, unit in parts:
            mats = [np.zeros((x.numel(), n_out), dtype=np.complex128 if x.dtype.is_complex
                             else np.float64) for x in diff_inputs]
            for k in range(n_out):
                go = _one_hot(o, k, unit)
                first, types_ok, sizes_ok = _vjp(outputs, diff_inputs, j, go)
                second, _, _ = _vjp(outputs, diff_inputs, j, go)
                if not types_ok and check_grad_dtypes:
                    raise GradcheckError("Gradient has dtype mismatch")
                if not sizes_ok:
                    raise GradcheckError("Analytical gradient has incorrect size")
                for m, a, b in zip(mats, first, second):
                    m[:, k] = a
                    if a.size:
                        max_nondet = max(max_nondet, float(np.max(np.abs(a - b))))
            for i, m in enumerate(mats):
                jac[i, j, part] = m
    return jac, max_nondet


# ---- the checks ------------------------------------------------------------------------

def _slow_gradcheck(func, tupled_inputs, outputs, out_indices, diff_idx, eps, rtol, atol,
                    check_grad_dtypes, nondet_tol):
    diff_inputs = [tupled_inputs[k] for k in diff_idx]
    numerical = _numerical_jacobians(func, tupled_inputs, diff_idx, out_indices, eps)
    analytical, nondet = _analytical_jacobians(outputs, diff_inputs, check_grad_dtypes)
    for j, o in enumerate(outputs):
        parts = ("real", "imaginary") if o.dtype.is_complex else (None,)
        for part in parts:
            for i in range(len(diff_inputs)):
                a, n = analytical[i, j, part], numerical[i, j, part]
                if not _allclose(a, n, rtol, atol):
                    raise GradcheckError(_notallclose_msg(a, n, j, i, part))
    if nondet > nondet_tol:
        raise GradcheckError(
            "Backward is not reentrant, i.e., running backward with same input and grad_output "
            "multiple times gives different values, although analytical gradient matches "
            "numerical gradient.The tolerance for nondeterminism was %s." % nondet_tol
            + FAILED_NONDET_MSG)


def _unit_vector(rng, numel, is_complex):
    v = rng.random(numel)
    if is_complex:
        v = v + 1j * rng.random(numel)
    norm = np.linalg.norm(v)
    return v / norm if norm > 0 else v


def _fast_gradcheck(func, tupled_inputs, outputs, out_indices, diff_idx, eps, rtol, atol,
                    check_grad_dtypes, nondet_tol):
    from . import grad as _grad
    rng = np.random.default_rng(0)
    diff_inputs = [tupled_inputs[k] for k in diff_idx]
    all_u = [_unit_vector(rng, x.numel(), x.dtype.is_complex) for x in diff_inputs]
    all_v = [_unit_vector(rng, o.numel(), False) for o in outputs]
    # numerical v^T J u: a directional derivative along u per input, then v . d
    numerical = {}
    for i, (k, u) in enumerate(zip(diff_idx, all_u)):
        perturbed, xd = _with_copy(tupled_inputs, k)
        orig = xd.clone()
        delta = _from_host(eps * u, like=xd)
        with no_grad():
            xd.sub_(delta)
        lo = _eval_outputs(func, perturbed, out_indices)
        with no_grad():
            xd.copy_(orig)
            xd.add_(delta)
        hi = _eval_outputs(func, perturbed, out_indices)
        for j, (h, lo_) in enumerate(zip(hi, lo)):
            d = (h - lo_) / (2 * eps)
            for part in (("real", "imaginary") if outputs[j].dtype.is_complex else (None,)):
                numerical[i, j, part] = np.dot(all_v[j], _part(d, part))
    # analytical v^T J u: one vjp with v per output (part), then <g, u>
    for j, o in enumerate(outputs):
        parts = (("real", 1.0), ("imaginary", 1j)) if o.dtype.is_complex else ((None, 1.0),)
        for part, unit in parts:
            v = _from_host(all_v[j] * unit, like=o)
            first, types_ok, sizes_ok = _vjp(outputs, diff_inputs, j, v)
            second, _, _ = _vjp(outputs, diff_inputs, j, v)
            if not types_ok and check_grad_dtypes:
                raise GradcheckError("Gradient has dtype mismatch")
            if not sizes_ok:
                raise GradcheckError("Analytical gradient has incorrect size")
            for i, (g, g2, u) in enumerate(zip(first, second, all_u)):
                a = float(np.sum((np.conj(g) * u).real))
                a2 = float(np.sum((np.conj(g2) * u).real))
                if abs(a - a2) > nondet_tol:
                    raise GradcheckError(
                        "Backward is not reentrant, i.e., running backward with same input and "
                        "grad_output multiple times gives different values, although analytical "
                        "gradient matches numerical gradient.The tolerance for nondeterminism "
                        "was %s." % nondet_tol + FAILED_NONDET_MSG)
                n = numerical[i, j, part]
                adjusted_atol = atol * float(np.sum(u.real)) * float(np.sum(all_v[j]))
                if not abs(a - n) <= adjusted_atol + rtol * abs(n):
                    raise GradcheckError(
                        _notallclose_msg(np.array(a), np.array(n), j, i, part)
                        + _slow_mode_report(func, tupled_inputs, outputs, out_indices, diff_idx,
                                            i, j, part, eps, rtol, atol))


def _slow_mode_report(func, tupled_inputs, outputs, out_indices, diff_idx, i, j, part, eps,
                      rtol, atol):
    diff_inputs = [tupled_inputs[k] for k in diff_idx]
    numerical = _numerical_jacobians(func, tupled_inputs, diff_idx, out_indices, eps)[i, j, part]
    analytical = _analytical_jacobians(outputs, diff_inputs, False)[0][i, j, part]
    max_diff = float(np.max(np.abs(numerical - analytical))) if numerical.size else 0.0
    msg = ("\nThe above quantities relating the numerical and analytical jacobians are computed \n"
           "in fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for more "
           "background \nabout fast mode. Below, we recompute numerical and analytical jacobians "
           "in slow mode:\n\nNumerical:\n %s\nAnalytical:\n%s\n\nThe max per-element difference "
           "(slow mode) is: %s.\n" % (_show(numerical), _show(analytical), max_diff))
    if _allclose(analytical, numerical, rtol, atol):
        msg += FAST_FAIL_SLOW_OK_MSG
    return msg


def _check_no_differentiable_outputs(func, tupled_inputs, func_out, eps):
    """With no output requiring grad, every numerical gradient must be zero."""
    out_indices = [k for k, o in enumerate(func_out) if _is_float_or_complex(o)]
    diff_idx = [k for k, x in enumerate(tupled_inputs)
                if isinstance(x, _Tensor) and x.requires_grad]
    for jac in _numerical_jacobians(func, tupled_inputs, diff_idx, out_indices, eps).values():
        if jac.size and np.any(jac != 0):
            raise GradcheckError("Numerical gradient for function expected to be zero")


class _UndefinedGrad(Function):
    """Identity whose backward passes no gradient on (torch's UndefinedGrad)."""

    @staticmethod
    def forward(ctx, x):
        return x.detach()

    @staticmethod
    def backward(ctx, g):
        return None


def _test_undefined_backward_mode(func, outputs, inputs):
    from . import grad as _grad
    diff_inputs = [x for x in inputs if isinstance(x, _Tensor) and x.requires_grad]

    def warn_bc_breaking():
        warnings.warn("Backwards compatibility: New undefined gradient support checking feature "
                      "is enabled by default, but it may break existing callers of this "
                      "function. If this is true for you, you can call this function with "
                      "\"check_undefined_grad=False\" to disable the feature", stacklevel=4)

    def check(outs):
        zeros = [_C.zeros_like(o) for o in outs]
        try:
            grads = _grad(outs, diff_inputs, zeros, allow_unused=True)
        except RuntimeError as e:
            warn_bc_breaking()
            raise GradcheckError("Expected backward function to handle undefined output grads. "
                                 "Please look at \"Notes about undefined output gradients\" in "
                                 "\"tools/autograd/derivatives.yaml\"") from e
        for g in grads:
            if g is not None and not bool((g == 0).all()):
                warn_bc_breaking()
                raise GradcheckError("Expected all input grads to be undefined or zero when all "
                                     "output grads are undefined or zero. Please look at \"Notes "
                                     "about undefined output gradients\" in "
                                     "\"tools/autograd/derivatives.yaml\"")
        return True

    with enable_grad():
        to_check = [[_UndefinedGrad.apply(o) for o in _differentiable_outputs(func(*inputs))]]
        if len(to_check[0]) > 1:
            for undef in range(len(outputs)):
                outs = _differentiable_outputs(func(*inputs))
                to_check.append([_UndefinedGrad.apply(o) if k == undef else o
                                 for k, o in enumerate(outs)])
        return all(check(outs) for outs in to_check)


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False, check_forward_ad=False,
              check_backward_ad=True, fast_mode=False, masked=None):
    r"""Check gradients computed via small finite differences against analytical
    gradients w.r.t. tensors in :attr:`inputs` that are of floating point or
    complex type and with ``requires_grad=True``.

    The check between numerical and analytical gradients uses
    ``allclose(analytical, numerical, rtol, atol)``; it should be run on
    float64/complex128 inputs. Returns True if all differences satisfy the
    allclose condition; else raises :class:`GradcheckError` (or returns False
    with ``raise_exception=False``).
    """
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad "
                             "to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be "
                             "True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires "
                             "check_forward_ad to be True")
    if check_forward_ad or check_batched_forward_grad:
        raise NotImplementedError("gradcheck: pycuda_sem has no forward-mode AD; "
                                  "check_forward_ad must be False")
    if check_batched_grad:
        raise NotImplementedError("gradcheck: check_batched_grad needs vmap, which pycuda_sem "
                                  "does not have")
    tupled_inputs = _as_tuple(inputs)
    _check_inputs(tupled_inputs)
    try:
        return _gradcheck_helper(func, tupled_inputs, eps, atol, rtol, nondet_tol,
                                 check_undefined_grad, check_grad_dtypes, fast_mode)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _gradcheck_helper(func, tupled_inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
                      check_grad_dtypes, fast_mode):
    with enable_grad():
        func_out = _as_tuple(func(*tupled_inputs))
    outputs = _differentiable_outputs(func_out)
    if not outputs:
        _check_no_differentiable_outputs(func, tupled_inputs, func_out, eps)
        return True
    # positions in func_out of the outputs that are checked
    out_indices = [k for k, o in enumerate(func_out)
                   if isinstance(o, _Tensor) and o.requires_grad]
    diff_idx = [k for k, x in enumerate(tupled_inputs)
                if _is_float_or_complex(x) and x.requires_grad]
    check = _fast_gradcheck if fast_mode else _slow_gradcheck
    check(func, tupled_inputs, outputs, out_indices, diff_idx, eps, rtol, atol,
          check_grad_dtypes, nondet_tol)
    if check_undefined_grad:
        _test_undefined_backward_mode(func, outputs, tupled_inputs)
    return True


def _random_like(x, noncontiguous):
    """Uniform in [-1, 1) like x (torch.testing.make_tensor(low=-1, high=1)), requiring grad."""
    rng = np.random.default_rng()
    shape = tuple(x.shape)
    vals = rng.uniform(-1, 1, shape)
    if x.dtype.is_complex:
        vals = vals + 1j * rng.uniform(-1, 1, shape)
    dtype = x.dtype if (x.dtype.is_floating_point or x.dtype.is_complex) else _C.float64
    t = _from_host(vals).to(device=x.device, dtype=dtype)
    if noncontiguous and t.dim() > 0 and t.numel() > 1:
        t = _C.stack([t, t], dim=-1)[..., 0]
    return t.requires_grad_()


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    r"""Check gradients of gradients: gradcheck of the function mapping
    (inputs, grad_outputs) to the gradients of ``func`` w.r.t. its inputs.
    ``grad_outputs`` default to random tensors like the outputs."""
    tupled_inputs = _as_tuple(inputs)
    if grad_outputs is None:
        with enable_grad():
            outs = _differentiable_outputs(func(*tupled_inputs))
        tupled_grad_outputs = tuple(_random_like(o, gen_non_contig_grad_outputs) for o in outs)
    else:
        tupled_grad_outputs = _as_tuple(grad_outputs)
    num_outputs = len(tupled_grad_outputs)
    diff_input_idx = {k for k, x in enumerate(tupled_inputs)
                      if isinstance(x, _Tensor) and x.requires_grad}
    diff_grad_output_idx = {k for k, x in enumerate(tupled_grad_outputs) if x.requires_grad}

    def new_func(*args):
        from . import grad as _grad
        input_args = tuple(x.requires_grad_() if k in diff_input_idx else x
                           for k, x in enumerate(args[:-num_outputs]))
        outputs = _differentiable_outputs(func(*input_args))
        grad_outs = tuple(x.requires_grad_() if k in diff_grad_output_idx else x
                          for k, x in enumerate(args[-num_outputs:]))
        diff_input_args = tuple(x for k, x in enumerate(input_args) if k in diff_input_idx)
        grad_inputs = _grad(outputs, diff_input_args, grad_outs, create_graph=True,
                            allow_unused=True)
        return tuple(g for g in grad_inputs if g is not None)

    return gradcheck(new_func, tupled_inputs + tupled_grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     fast_mode=fast_mode, check_forward_ad=check_fwd_over_rev,
                     check_backward_ad=check_rev_over_rev, masked=masked)
