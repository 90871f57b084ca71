"""autograd.Function: the ctx form and the setup_context form, Function.apply,
ctx.save_for_backward / saved_tensors / needs_input_grad / mark_dirty /
mark_non_differentiable / set_materialize_grads, once_differentiable, and
torch's errors (wrong number of gradients, gradient for a non-tensor, legacy
use). torch 2.x is the reference."""
import re
import warnings

import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import autograd
from pycuda_sem.autograd import Function
from pycuda_sem.autograd.function import FunctionCtx, once_differentiable


def npy(t):
    return t.detach().cpu().numpy()


def leaf(values, dtype=torch.float64, device="cpu"):
    return torch.tensor(values, dtype=dtype, device=device, requires_grad=True)


class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        assert not torch.is_grad_enabled()  # forward runs under no_grad
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        y, = ctx.saved_tensors
        return grad * y


class MulSetup(Function):
    """The setup_context form, with a defaulted argument."""

    @staticmethod
    def forward(x, w, scale=1.0):
        return x * w * scale

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, w, scale = inputs
        ctx.save_for_backward(x, w)
        ctx.scale = scale

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        return grad * w * ctx.scale, grad * x * ctx.scale, None


def test_exp_ctx_form():
    x = leaf([0.0, 1.0])
    y = Exp.apply(x)
    assert y.requires_grad and y.grad_fn is not None
    assert y.grad_fn.name() == "ExpBackward"
    y.sum().backward()
    np.testing.assert_allclose(npy(x.grad), np.exp([0.0, 1.0]))


def test_ctx_is_the_grad_fn_and_function_ctx_type():
    captured = []

    class Ident(Function):
        @staticmethod
        def forward(ctx, x):
            captured.append(ctx)
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return g

    y = Ident.apply(leaf([1.0]))
    assert isinstance(captured[0], FunctionCtx)
    assert y.grad_fn is captured[0]


def test_setup_context_form_with_defaults_and_kwargs():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    y = MulSetup.apply(x, w)
    y.sum().backward()
    np.testing.assert_allclose(npy(x.grad), [3.0, 4.0])
    x.grad = w.grad = None
    MulSetup.apply(x, w, scale=2.0).sum().backward()
    np.testing.assert_allclose(npy(w.grad), [2.0, 4.0])


def test_ctx_form_rejects_keyword_arguments():
    with pytest.raises(TypeError):
        Exp.apply(x=leaf([1.0]))


def test_needs_input_grad_and_non_tensor_args():
    seen = []

    class Scale(Function):
        @staticmethod
        def forward(ctx, x, y, k):
            ctx.k = k
            return x * y * k

        @staticmethod
        def backward(ctx, g):
            seen.append(ctx.needs_input_grad)
            return (g * 2 if ctx.needs_input_grad[0] else None,
                    g if ctx.needs_input_grad[1] else None, None)

    x, y = leaf([1.0]), torch.ones(1, dtype=torch.float64)
    Scale.apply(x, y, 2.0).sum().backward()
    assert tuple(seen[0]) == (True, False, False)
    np.testing.assert_allclose(npy(x.grad), [2.0])


def test_no_input_requires_grad_or_no_grad_mode():
    x = torch.tensor([1.0], dtype=torch.float64)
    y = Exp.apply(x)
    assert not y.requires_grad and y.grad_fn is None
    with torch.no_grad():
        y = Exp.apply(leaf([1.0]))
    assert not y.requires_grad


def test_multiple_outputs_and_grads_of_unused_outputs_are_zeros():
    got = []

    class Split2(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, ga, gb):
            got.append((npy(ga), npy(gb)))
            return ga * 2 + gb * 3

    x = leaf([1.0, 2.0])
    a, b = Split2.apply(x)
    assert a.grad_fn is b.grad_fn
    a.sum().backward()
    np.testing.assert_allclose(got[0][1], [0.0, 0.0])  # materialized by default
    np.testing.assert_allclose(npy(x.grad), [2.0, 2.0])


def test_set_materialize_grads_false_passes_none():
    got = []

    class Split2(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, ga, gb):
            got.append((ga, gb))
            out = torch.zeros_like(ga if ga is not None else gb)
            if ga is not None:
                out = out + ga * 2
            if gb is not None:
                out = out + gb * 3
            return out

    x = leaf([1.0, 2.0])
    a, b = Split2.apply(x)
    b.sum().backward()
    assert got[0][0] is None and got[0][1] is not None
    np.testing.assert_allclose(npy(x.grad), [3.0, 3.0])


def test_mark_dirty_inplace_forward():
    class AddOneInplace(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    base = leaf([1.0, 2.0])
    a = base * 2
    v0 = a._version
    out = AddOneInplace.apply(a)
    assert out is a
    assert a._version > v0
    assert a.grad_fn.name() == "AddOneInplaceBackward"
    np.testing.assert_allclose(npy(a), [3.0, 5.0])
    (out * out).sum().backward()
    np.testing.assert_allclose(npy(base.grad), 2 * 2 * np.array([3.0, 5.0]))


def test_mark_dirty_on_leaf_requiring_grad_raises():
    class AddOneInplace(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        AddOneInplace.apply(leaf([1.0]))


def test_returning_an_input_unchanged():
    class Ident(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = leaf([1.0])
    y = Ident.apply(x)
    assert y is not x and y.grad_fn is not None
    y.sum().backward()
    np.testing.assert_allclose(npy(x.grad), [2.0])


def test_mark_non_differentiable():
    class SortLike(Function):
        @staticmethod
        def forward(ctx, x):
            values = x * 1
            idx = torch.arange(x.numel(), dtype=x.dtype)
            ctx.mark_non_differentiable(idx)
            return values, idx

        @staticmethod
        def backward(ctx, g, g_idx):
            return g

    x = leaf([3.0, 1.0])
    values, idx = SortLike.apply(x)
    assert values.requires_grad and not idx.requires_grad
    values.sum().backward()
    np.testing.assert_allclose(npy(x.grad), [1.0, 1.0])


def test_wrong_number_of_gradients():
    class TwoIn(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return g

    x, y = leaf([1.0]), leaf([2.0])
    with pytest.raises(RuntimeError, match=re.escape(
            "function TwoInBackward returned an incorrect number of gradients "
            "(expected 2, got 1)")):
        TwoIn.apply(x, y).sum().backward()
    # the process and the next graph are fine
    (x * y).sum().backward()
    np.testing.assert_allclose(npy(x.grad), [2.0])


def test_extra_none_gradients_are_allowed():
    class OneIn(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2, None, None

    x = leaf([1.0])
    OneIn.apply(x).sum().backward()
    np.testing.assert_allclose(npy(x.grad), [2.0])


def test_too_many_gradients():
    class OneIn(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g, g

    with pytest.raises(RuntimeError, match=re.escape(
            "function OneInBackward returned an incorrect number of gradients "
            "(expected 1, got 2)")):
        OneIn.apply(leaf([1.0])).sum().backward()


def test_gradient_for_non_tensor_input():
    class Scale(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g, g

    with pytest.raises(RuntimeError, match="returned a gradient different than None at "
                                           "position 2, but the corresponding forward input "
                                           "was not a Variable"):
        Scale.apply(leaf([1.0]), 2.0).sum().backward()


def test_wrong_gradient_shape():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return torch.ones(5, dtype=torch.float64)

    with pytest.raises(RuntimeError):
        Bad.apply(leaf([1.0, 2.0])).sum().backward()


def test_double_backward_through_function():
    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * 3 * x ** 2

    x = leaf([2.0])
    g, = autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(npy(g), [12.0])
    g2, = autograd.grad(g.sum(), x)
    np.testing.assert_allclose(npy(g2), [12.0])


def test_second_backward_through_function_raises():
    x = leaf([1.0])
    y = Exp.apply(x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_once_differentiable():
    class Sq(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            assert not torch.is_grad_enabled()
            x, = ctx.saved_tensors
            return 2 * x * g

    x = leaf([3.0])
    g, = autograd.grad(Sq.apply(x).sum(), x)
    np.testing.assert_allclose(npy(g), [6.0])
    # as in torch, the result requires grad only when an incoming grad does
    g, = autograd.grad(Sq.apply(x).sum(), x, create_graph=True)
    assert not g.requires_grad
    go = torch.ones((), dtype=torch.float64, requires_grad=True)
    g, = autograd.grad(Sq.apply(x).sum(), x, go, create_graph=True)
    assert g.requires_grad
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was "
                                           "marked with @once_differentiable"):
        g.sum().backward()


def test_saved_tensors_version_check():
    class Keep(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * 2

    a = leaf([1.0]) * 1
    y = Keep.apply(a)
    a.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_legacy_uses():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        inst = Exp()
    assert any(issubclass(i.category, DeprecationWarning) for i in w)
    with pytest.raises(RuntimeError, match="Legacy autograd function with non-static forward "
                                           "method is deprecated"):
        inst(leaf([1.0]))


def test_missing_forward_or_backward():
    class NoForward(Function):
        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(NotImplementedError, match="You must implement the forward function for "
                                                  "custom autograd.Function."):
        NoForward.apply(leaf([1.0]))

    class NoBackward(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

    y = NoBackward.apply(leaf([1.0]))
    with pytest.raises(NotImplementedError, match="You must implement either the backward or vjp "
                                                  "method"):
        y.sum().backward()


def test_vjp_alias_and_both_defined():
    class WithVjp(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def vjp(ctx, g):
            return g * 2

    x = leaf([1.0])
    WithVjp.apply(x).sum().backward()
    np.testing.assert_allclose(npy(x.grad), [2.0])

    class Both(WithVjp):
        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(RuntimeError, match="Implementing both 'backward' and 'vjp'"):
        Both.apply(leaf([1.0])).sum().backward()


@pytest.mark.cuda
def test_function_on_cuda(balanced):
    x = leaf([0.0, 1.0], device="cuda")
    y = Exp.apply(x)
    y.sum().backward()
    assert x.grad.device == x.device
    np.testing.assert_allclose(npy(x.grad), np.exp([0.0, 1.0]))
    del x, y


def test_needs_input_grad_in_forward_when_nothing_is_recorded():
    # torch's ctx.needs_input_grad has one entry an argument even when the
    # call records nothing: all False without a requiring input, and each
    # input's requires_grad under no_grad
    seen = []

    class Mul(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w, k):
            seen.append(tuple(ctx.needs_input_grad))
            return x * w * k

        @staticmethod
        def backward(ctx, g):
            seen.append(tuple(ctx.needs_input_grad))
            return g, g, None

    x, w = torch.ones(2), torch.ones(2, requires_grad=True)
    Mul.apply(torch.ones(2), torch.ones(2), 3)
    Mul.apply(x, w, 3).sum().backward()
    with torch.no_grad():
        Mul.apply(x, w, 3)
    assert seen == [(False, False, False), (False, True, False), (False, True, False), (False, True, False)]
