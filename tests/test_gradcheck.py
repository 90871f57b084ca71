"""gradcheck / gradgradcheck (slow and fast mode, torch's errors and
warnings) and autograd.functional (jacobian, vjp, jvp, hessian, vhp, hvp)
against analytic values."""
import re
import sys
import warnings

import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import autograd
from pycuda_sem.autograd import Function, functional
from pycuda_sem.autograd.gradcheck import GradcheckError


def npy(t):
    return t.detach().cpu().numpy()


def leaf(values, dtype=torch.float64, device="cpu"):
    return torch.tensor(values, dtype=dtype, device=device, requires_grad=True)


_rng = np.random.default_rng(7)


def rnd(*shape, device="cpu"):
    return torch.tensor(_rng.uniform(-1, 1, shape), dtype=torch.float64, device=device,
                        requires_grad=True)


class WrongExp(Function):
    """exp with a deliberately wrong backward (off by a factor 2)."""

    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        y, = ctx.saved_tensors
        return 2 * g * y


class RightExp(WrongExp):
    @staticmethod
    def backward(ctx, g):
        y, = ctx.saved_tensors
        return g * y


# ---- the names -----------------------------------------------------------------------------

def test_names_follow_torch():
    assert callable(autograd.gradcheck) and callable(autograd.gradgradcheck)
    assert autograd.gradcheck.__name__ == "gradcheck"
    mod = sys.modules["pycuda_sem.autograd.gradcheck"]
    assert mod.gradcheck is autograd.gradcheck and mod.GradcheckError is GradcheckError
    assert issubclass(GradcheckError, RuntimeError)
    assert functional.jacobian is autograd.functional.jacobian


# ---- gradcheck passes ------------------------------------------------------------------------

@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradcheck_passes_on_correct_functions(fast_mode):
    x, w = rnd(3, 4), rnd(4, 2)
    assert autograd.gradcheck(lambda a: a.sin(), (x,), fast_mode=fast_mode)
    assert autograd.gradcheck(lambda a: a ** 3, x, fast_mode=fast_mode)
    assert autograd.gradcheck(lambda a, b: a @ b, (x, w), fast_mode=fast_mode)
    assert autograd.gradcheck(lambda a, b: ((a @ b).exp().sum(), a * 2), (x, w),
                              fast_mode=fast_mode)
    assert autograd.gradcheck(RightExp.apply, (x,), fast_mode=fast_mode)


def test_gradcheck_with_non_tensor_and_non_grad_inputs():
    x, c = rnd(3), torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    assert autograd.gradcheck(lambda a, b, k: a * b * k, (x, c, 2.5))


def test_gradcheck_non_contiguous_input():
    x = rnd(4, 3).detach().t().requires_grad_()
    assert not x.is_contiguous()
    assert autograd.gradcheck(lambda a: a * a, (x,))


def test_gradcheck_complex():
    z = torch.tensor([1 + 2j, -0.5 + 0.25j], dtype=torch.complex128, requires_grad=True)
    assert autograd.gradcheck(lambda a: a * a, (z,))           # complex -> complex
    assert autograd.gradcheck(lambda a: (a * a).abs(), (z,))   # complex -> real


def test_gradcheck_without_differentiable_outputs():
    x = rnd(3)
    assert autograd.gradcheck(lambda a: (a > 0).to(torch.float64), (x,))


# ---- gradcheck fails ---------------------------------------------------------------------

def test_gradcheck_fails_on_wrong_backward():
    x = rnd(3)
    with pytest.raises(GradcheckError) as info:
        autograd.gradcheck(WrongExp.apply, (x,))
    msg = str(info.value)
    assert msg.startswith("Jacobian mismatch for output 0 with respect to input 0,\nnumerical:")
    assert "\nanalytical:" in msg
    # both Jacobians are shown, as torch shows them: (numel in, numel out), diag(exp x) and 2x
    num = np.diag(np.exp(npy(x)))
    assert str(torch.from_numpy(num))[:12] in msg
    assert autograd.gradcheck(WrongExp.apply, (x,), raise_exception=False) is False


def test_gradcheck_fast_mode_fails_on_wrong_backward():
    x = rnd(3)
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to "
                                             "input 0") as info:
        autograd.gradcheck(WrongExp.apply, (x,), fast_mode=True)
    assert "computed \nin fast mode" in str(info.value)
    assert autograd.gradcheck(WrongExp.apply, (x,), fast_mode=True,
                              raise_exception=False) is False


def test_gradcheck_names_the_input_and_output():
    class WrongSecond(Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * 2, a * b

        @staticmethod
        def backward(ctx, ga, gab):
            a, b = ctx.saved_tensors
            return ga * 2 + gab * b, gab * 0  # d(a*b)/db is wrong

    a, b = rnd(2), rnd(2)
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 1 with respect to "
                                             "input 1"):
        autograd.gradcheck(WrongSecond.apply, (a, b))


def test_gradcheck_nondeterministic_backward():
    calls = []

    class Noisy(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            calls.append(1)
            return g * (1 + 1e-9 * len(calls))

    x = rnd(2)
    with pytest.raises(GradcheckError, match="Backward is not reentrant"):
        autograd.gradcheck(Noisy.apply, (x,))
    calls.clear()
    assert autograd.gradcheck(Noisy.apply, (x,), nondet_tol=1e-6)


def test_gradcheck_float32_warns():
    x = torch.tensor([0.5, 1.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        autograd.gradcheck(lambda a: a * 2, (x,), eps=1e-3, atol=1e-2, rtol=1e-2)
    assert any("Input #0 requires gradient and is not a double precision floating point or "
               "complex. This check will likely fail if all the inputs are not of double "
               "precision floating point or complex." in str(i.message) for i in w)


def test_gradcheck_needs_an_input_requiring_grad():
    with pytest.raises(ValueError, match=re.escape(
            "gradcheck expects at least one input tensor to require gradient, but none of the "
            "them have requires_grad=True.")):
        autograd.gradcheck(lambda a: a * 2, (torch.ones(2, dtype=torch.float64),))


def test_gradcheck_unsupported_options():
    with pytest.raises(NotImplementedError):
        autograd.gradcheck(lambda a: a, (rnd(2),), check_forward_ad=True)


# ---- gradgradcheck ------------------------------------------------------------------------

def test_gradgradcheck_passes():
    x, w = rnd(3), rnd(3)
    assert autograd.gradgradcheck(lambda a: a ** 3, (x,))
    assert autograd.gradgradcheck(lambda a, b: (a * b).sin(), (x, w))
    assert autograd.gradgradcheck(lambda a: a.exp(), (x,), gen_non_contig_grad_outputs=True)
    assert autograd.gradgradcheck(lambda a: a ** 3, (x,), (torch.ones(3, dtype=torch.float64)
                                                          .requires_grad_(),))


def test_gradgradcheck_fails_when_backward_is_not_differentiable():
    class CubeDetached(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * 3 * x.detach() ** 2  # right first derivative, no second one

    x = rnd(3)
    assert autograd.gradcheck(CubeDetached.apply, (x,))
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        autograd.gradgradcheck(CubeDetached.apply, (x,))


# ---- functional -----------------------------------------------------------------------------

def test_jacobian_single_and_tuples():
    x = rnd(3)
    jac = functional.jacobian(lambda a: a ** 2, x)
    assert jac.shape == (3, 3) and not jac.requires_grad
    np.testing.assert_allclose(npy(jac), np.diag(2 * npy(x)))

    y = rnd(3)
    ja, jb = functional.jacobian(lambda a, b: 2 * a.exp() + 3 * b, (x, y))
    np.testing.assert_allclose(npy(ja), np.diag(2 * np.exp(npy(x))))
    np.testing.assert_allclose(npy(jb), 3 * np.eye(3))

    m = rnd(2, 3)
    (j0,), (j1,) = functional.jacobian(lambda a: (a.sum(dim=1), a * 2), (m,))
    assert j0.shape == (2, 2, 3) and j1.shape == (2, 3, 2, 3)
    expected = np.zeros((2, 2, 3))
    expected[0, 0, :] = expected[1, 1, :] = 1
    np.testing.assert_allclose(npy(j0), expected)
    np.testing.assert_allclose(npy(j1).reshape(6, 6), 2 * np.eye(6))


def test_jacobian_unused_input_zeros_or_strict_error():
    x, y = rnd(2), rnd(3)
    jx, jy = functional.jacobian(lambda a, b: a * 2, (x, y))
    np.testing.assert_allclose(npy(jy), np.zeros((2, 3)))
    with pytest.raises(RuntimeError, match=re.escape(
            "Output 0 of the user-provided function is independent of input 1. This is not "
            "allowed in strict mode.")):
        functional.jacobian(lambda a, b: a * 2, (x, y), strict=True)


def test_jacobian_create_graph():
    x = rnd(2)
    jac = functional.jacobian(lambda a: a ** 3, x, create_graph=True)
    assert jac.requires_grad
    g, = autograd.grad(jac.sum(), x)
    np.testing.assert_allclose(npy(g), 6 * npy(x))


def test_jacobian_vectorize_gives_same_values():
    x = rnd(3)
    np.testing.assert_allclose(npy(functional.jacobian(lambda a: a.sin(), x, vectorize=True)),
                               np.diag(np.cos(npy(x))))


def test_functional_bad_inputs():
    with pytest.raises(TypeError, match=re.escape(
            "The inputs given to jacobian must be either a Tensor or a tuple of Tensors but the "
            "value at index 1 has type <class 'int'>.")):
        functional.jacobian(lambda a, b: a, (rnd(2), 3))
    with pytest.raises(TypeError, match="The inputs given to vjp must be either a Tensor or a "
                                        "tuple of Tensors but the given inputs has type"):
        functional.vjp(lambda a: a, [rnd(2)])


def test_vjp():
    x = rnd(4, 4)
    v = torch.ones(4, dtype=torch.float64)
    out, g = functional.vjp(lambda a: a.exp().sum(dim=1), x, v)
    np.testing.assert_allclose(npy(out), np.exp(npy(x)).sum(axis=1))
    np.testing.assert_allclose(npy(g), np.exp(npy(x)))
    assert not g.requires_grad and not out.requires_grad

    a, b = rnd(2), rnd(2)
    out, (ga, gb) = functional.vjp(lambda p, q: 2 * p + 3 * q, (a, b), torch.ones(2, dtype=torch.float64))
    np.testing.assert_allclose(npy(ga), [2.0, 2.0])
    np.testing.assert_allclose(npy(gb), [3.0, 3.0])

    out, g = functional.vjp(lambda p: (p * p).sum(), a)  # v may be omitted for one element
    np.testing.assert_allclose(npy(g), 2 * npy(a))


def test_vjp_errors():
    with pytest.raises(RuntimeError, match=re.escape(
            "The vector v can only be None if the user-provided function returns a single "
            "Tensor with a single element.")):
        functional.vjp(lambda a: a * 2, rnd(3))
    with pytest.raises(RuntimeError, match=re.escape(
            "v has invalid size: should be pycuda_sem.Size([3]) but got pycuda_sem.Size([2]).")):
        functional.vjp(lambda a: a * 2, rnd(3), torch.ones(2, dtype=torch.float64))


def test_jvp():
    a, b = rnd(2), rnd(2)
    out, jv = functional.jvp(lambda p, q: 2 * p + 3 * q, (a, b),
                             (torch.ones(2, dtype=torch.float64),
                              torch.ones(2, dtype=torch.float64)))
    np.testing.assert_allclose(npy(jv), [5.0, 5.0])
    x = rnd(3, 2)
    v = rnd(3, 2).detach()
    _, jv = functional.jvp(lambda p: p.exp().sum(dim=1), x, v)
    np.testing.assert_allclose(npy(jv), (np.exp(npy(x)) * npy(v)).sum(axis=1))


def test_hessian():
    x = rnd(3)
    h = functional.hessian(lambda a: (a ** 3).sum(), x)
    np.testing.assert_allclose(npy(h), np.diag(6 * npy(x)))
    a, b = rnd(2), rnd(2)
    (haa, hab), (hba, hbb) = functional.hessian(lambda p, q: (p * q).sum(), (a, b))
    np.testing.assert_allclose(npy(haa), np.zeros((2, 2)))
    np.testing.assert_allclose(npy(hab), np.eye(2))
    np.testing.assert_allclose(npy(hba), np.eye(2))
    with pytest.raises(RuntimeError, match="The Tensor returned by the function given to hessian "
                                           "should contain a single element"):
        functional.hessian(lambda p: p * 2, x)


def test_vhp_hvp():
    x = rnd(3)
    v = rnd(3).detach()
    f = lambda a: (a ** 3).sum()  # noqa: E731
    out, vh = functional.vhp(f, x, v)
    np.testing.assert_allclose(npy(out), (npy(x) ** 3).sum())
    np.testing.assert_allclose(npy(vh), 6 * npy(x) * npy(v))
    _, hv = functional.hvp(f, x, v)
    np.testing.assert_allclose(npy(hv), npy(vh))


@pytest.mark.cuda
def test_gradcheck_on_cuda():
    x = rnd(3, device="cuda")
    assert autograd.gradcheck(lambda a: a.sin() * a, (x,))
    assert autograd.gradcheck(lambda a: a.sin() * a, (x,), fast_mode=True)
    with pytest.raises(GradcheckError):
        autograd.gradcheck(WrongExp.apply, (x,))
    jac = functional.jacobian(lambda a: a ** 2, x)
    np.testing.assert_allclose(npy(jac), np.diag(2 * npy(x)))
