"""Module.register_full_backward_hook / register_full_backward_pre_hook:
when they run, what they see (grad_input, grad_output against the chain
rule worked out by hand), replacing gradients, inputs that need no
gradient, several inputs and outputs, forward hooks together with them
(a Grad-CAM style capture), removal, and no wiring under no_grad."""
import warnings

import numpy as np
import pytest

import pycuda_sem as torch
import pycuda_sem.nn as nn

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
pytestmark = pytest.mark.usefixtures("no_tf32")

W = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]


def _lin(device):
    lin = nn.Linear(3, 2).double().to(device)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor(W, dtype=torch.float64))
        lin.bias.copy_(torch.tensor([0.5, -0.5], dtype=torch.float64))
    return lin


def _l(t):
    return None if t is None else t.cpu().tolist()


@pytest.mark.parametrize("device", DEVICES)
def test_order_and_what_the_hooks_see(device):
    lin, log = _lin(device), []
    lin.register_full_backward_hook(lambda m, gi, go: log.append(("hook", m is lin, [_l(g) for g in gi], [_l(g) for g in go])))
    lin.register_full_backward_pre_hook(lambda m, go: log.append(("pre", [_l(g) for g in go])))
    x = torch.tensor([[1.0, -2.0, 0.5]], dtype=torch.float64, device=device, requires_grad=True)
    (lin(x) * torch.tensor([2.0, 3.0], dtype=torch.float64, device=device)).sum().backward()
    # grad_output = [2, 3]; grad_input = [2, 3] @ W
    gi = (np.array([[2.0, 3.0]]) @ np.array(W)).tolist()
    assert log == [("pre", [[[2.0, 3.0]]]), ("hook", True, [gi], [[[2.0, 3.0]]])]
    assert x.grad.cpu().tolist() == gi


@pytest.mark.parametrize("device", DEVICES)
def test_replacing_gradients(device):
    lin = _lin(device)
    lin.register_full_backward_hook(lambda m, gi, go: (gi[0] * 10,))
    x = torch.ones(1, 3, dtype=torch.float64, device=device, requires_grad=True)
    lin(x).sum().backward()
    assert x.grad.cpu().tolist() == [[50.0, 70.0, 90.0]]
    # the module's own parameters keep the true gradient
    assert lin.weight.grad.cpu().tolist() == [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    lin2 = _lin(device)
    lin2.register_full_backward_pre_hook(lambda m, go: (go[0] * 0,))
    x.grad = None
    lin2(x).sum().backward()
    assert x.grad.abs().sum().item() == 0 and lin2.weight.grad.abs().sum().item() == 0
    bad = _lin(device)
    bad.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
    with pytest.raises(RuntimeError, match="invalid number of grad_input"):
        bad(x).sum().backward()


@pytest.mark.parametrize("device", DEVICES)
def test_inputs_that_need_no_gradient(device):
    lin, seen = _lin(device), []
    lin.register_full_backward_hook(lambda m, gi, go: seen.append((gi, [_l(g) for g in go])))
    lin(torch.ones(1, 3, dtype=torch.float64, device=device)).sum().backward()
    assert seen == [((None,), [[[1.0, 1.0]]])]

    class Two(nn.Module):
        def forward(self, a, b, k=2):
            return a * b, a + k

    t, got = Two(), []
    t.register_full_backward_hook(lambda m, gi, go: got.append(([_l(g) for g in gi], [_l(g) for g in go])))
    a = torch.ones(2, dtype=torch.float64, device=device, requires_grad=True)
    b = torch.full((2,), 3.0, dtype=torch.float64, device=device)
    o1, o2 = t(a, b)
    (o1.sum() + 2 * o2.sum()).backward()
    # grad of a: b + 2; b needs none: zeros, as torch
    assert got == [([[5.0, 5.0], [0.0, 0.0]], [[1.0, 1.0], [2.0, 2.0]])]
    assert a.grad.cpu().tolist() == [5.0, 5.0]


@pytest.mark.parametrize("device", DEVICES)
def test_with_forward_hooks_removal_and_no_grad(device):
    seq = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1)).double().to(device)
    acts = {}
    fh = seq[0].register_forward_hook(lambda m, i, o: acts.__setitem__("a", o))
    bh = seq[0].register_full_backward_hook(lambda m, gi, go: acts.__setitem__("g", go[0]))
    x = torch.randn(5, 3, dtype=torch.float64, device=device, requires_grad=True)
    seq(x).sum().backward()
    assert acts["a"].shape == (5, 4) and acts["g"].shape == (5, 4)
    # the captured output gradient is the chain rule's: relu mask times the last weight
    mask = (acts["a"] > 0).double()
    np.testing.assert_allclose(acts["g"].cpu().numpy(), (mask * seq[2].weight.detach()).cpu().numpy())
    want = x.grad.clone()
    bh.remove()
    fh.remove()
    assert not seq[0]._backward_hooks
    x.grad = None
    seq(x).sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), want.cpu().numpy())
    calls = []
    seq[2].register_full_backward_hook(lambda m, gi, go: calls.append(1))
    with torch.no_grad():
        assert not seq(x).requires_grad
    assert calls == []
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        seq[0].register_backward_hook(lambda m, gi, go: None)
    assert any(issubclass(i.category, FutureWarning) for i in w)
