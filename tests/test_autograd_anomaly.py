"""autograd.detect_anomaly / set_detect_anomaly: nan gradients raise with
torch's message naming the node, a failing backward warns with the stack of
its forward call, the switch is process-wide and restored on exit; off, the
same graphs run as before."""
import warnings

import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import autograd

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]


class NanBackward(autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * float("nan")


@pytest.mark.parametrize("device", DEVICES)
def test_nan_gradient_raises_and_names_the_node(device):
    a = torch.tensor([-1.0, 4.0], device=device, requires_grad=True)
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        ctx = autograd.detect_anomaly()
    with ctx:
        assert torch.is_anomaly_enabled() and torch.is_anomaly_check_nan_enabled()
        y = a.sqrt().sum()
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            with pytest.raises(RuntimeError, match=r"Function 'SqrtBackward0' returned nan values in its 0th output\."):
                y.backward()
        forward = [str(w.message) for w in seen if "Error detected in SqrtBackward0" in str(w.message)]
        assert forward and "test_autograd_anomaly.py" in forward[0]  # the forward call's stack
    assert not torch.is_anomaly_enabled()
    a.sqrt().sum().backward()  # off: the nan flows into the gradient as usual
    assert np.isnan(a.grad.cpu().numpy()[0])


def test_custom_function_and_check_nan_off():
    x = torch.ones(3, requires_grad=True)
    with autograd.set_detect_anomaly(True):
        with pytest.raises(RuntimeError, match="Function 'NanBackwardBackward' returned nan"):
            NanBackward.apply(x).sum().backward()
    with autograd.set_detect_anomaly(True, check_nan=False):
        assert not torch.is_anomaly_check_nan_enabled()
        NanBackward.apply(x).sum().backward()
    assert np.isnan(x.grad.numpy()).all()
    assert not torch.is_anomaly_enabled() and torch.is_anomaly_check_nan_enabled()


def test_finite_graphs_are_unchanged_and_record_their_stack():
    x = torch.randn(4, 3, requires_grad=True)
    w = torch.randn(3, 2, requires_grad=True)
    with autograd.set_detect_anomaly(True):
        y = (x @ w).relu().square().mean()
        assert "traceback_" in y.grad_fn.metadata
        y.backward()
    g1 = x.grad.clone()
    x.grad = None
    (x @ w).relu().square().mean().backward()
    np.testing.assert_array_equal(g1.numpy(), x.grad.numpy())


def test_decorator_form():
    @autograd.detect_anomaly()
    def step():
        return torch.is_anomaly_enabled()
    assert step() is True and not torch.is_anomaly_enabled()
