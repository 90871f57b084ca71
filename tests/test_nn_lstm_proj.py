"""LSTM with proj_size: parameter names and shapes (weight_hr_l*), the step
h = W_hr (o * tanh(c)) against a float64 NumPy loop, stacked and
bidirectional shapes, packed sequences, hidden-state checks, the argument
errors, and torch on the same weights where it is installed."""
import numpy as np
import pytest

import pycuda_sem as torch
import pycuda_sem.nn as nn

from torch_oracle import _torch as real_torch  # torch where it imports, else None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
pytestmark = pytest.mark.usefixtures("no_tf32")


def _sig(v):
    return 1 / (1 + np.exp(-v))


def _numpy_lstmp(x, w_ih, w_hh, b_ih, b_hh, w_hr):
    # x [T, B, I]; returns outputs [T, B, P], h [B, P], c [B, H]
    hid = w_hh.shape[0] // 4
    h = np.zeros((x.shape[1], w_hr.shape[0]))
    c = np.zeros((x.shape[1], hid))
    outs = []
    for xt in x:
        g = xt @ w_ih.T + b_ih + h @ w_hh.T + b_hh
        i, f, gg, o = np.split(g, 4, axis=1)
        c = _sig(f) * c + _sig(i) * np.tanh(gg)
        h = (_sig(o) * np.tanh(c)) @ w_hr.T
        outs.append(h)
    return np.stack(outs), h, c


@pytest.mark.parametrize("device", DEVICES)
def test_one_layer_against_numpy(device):
    torch.manual_seed(0)
    m = nn.LSTM(5, 6, proj_size=2).double().to(device)
    names = [n for n, _ in m.named_parameters()]
    assert names == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_hr_l0"]
    assert tuple(m.weight_hh_l0.shape) == (24, 2) and tuple(m.weight_hr_l0.shape) == (2, 6)
    x = np.random.default_rng(1).standard_normal((4, 3, 5))
    out, (h, c) = m(torch.tensor(x, device=device))
    w = {n: p.detach().cpu().numpy() for n, p in m.named_parameters()}
    wo, wh, wc = _numpy_lstmp(x, w["weight_ih_l0"], w["weight_hh_l0"], w["bias_ih_l0"], w["bias_hh_l0"],
                              w["weight_hr_l0"])
    np.testing.assert_allclose(out.detach().cpu().numpy(), wo, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(h[0].detach().cpu().numpy(), wh, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(c[0].detach().cpu().numpy(), wc, rtol=1e-12, atol=1e-14)
    (out.sum() + c.sum()).backward()
    assert m.weight_hr_l0.grad is not None and m.weight_hr_l0.grad.abs().sum().item() > 0


@pytest.mark.parametrize("device", DEVICES)
def test_stacked_bidirectional_packed_and_states(device):
    m = nn.LSTM(4, 8, num_layers=2, bidirectional=True, batch_first=True, proj_size=3).to(device)
    assert tuple(m.weight_ih_l1.shape) == (32, 6) and tuple(m.weight_hr_l1_reverse.shape) == (3, 8)
    x = torch.randn(2, 5, 4, device=device)
    out, (h, c) = m(x)
    assert tuple(out.shape) == (2, 5, 6) and tuple(h.shape) == (4, 2, 3) and tuple(c.shape) == (4, 2, 8)
    h0, c0 = torch.zeros(4, 2, 3, device=device), torch.zeros(4, 2, 8, device=device)
    out2, _ = m(x, (h0, c0))
    np.testing.assert_allclose(out2.detach().cpu().numpy(), out.detach().cpu().numpy(), rtol=1e-6)
    with pytest.raises(RuntimeError, match=r"Expected hidden\[1\] size"):
        m(x, (h0, torch.zeros(4, 2, 3, device=device)))
    packed = nn.utils.rnn.pack_padded_sequence(x, torch.tensor([5, 3]), batch_first=True)
    pout, (ph, pc) = m(packed)
    assert tuple(pout.data.shape) == (8, 6) and tuple(ph.shape) == (4, 2, 3)
    assert "proj_size=3" in repr(m)


def test_argument_errors():
    with pytest.raises(ValueError, match="smaller than hidden_size"):
        nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="positive integer or zero"):
        nn.LSTM(3, 4, proj_size=-1)


def test_same_as_torch_on_the_same_weights():
    if real_torch is None:
        pytest.skip("torch is not installed")
    t = real_torch.nn.LSTM(5, 7, num_layers=2, batch_first=True, bidirectional=True, proj_size=3).double()
    m = nn.LSTM(5, 7, num_layers=2, batch_first=True, bidirectional=True, proj_size=3).double()
    m.load_state_dict({k: torch.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    x = np.random.default_rng(2).standard_normal((2, 4, 5))
    (ot, (ht, ct)), (om, (hm, cm)) = t(real_torch.tensor(x)), m(torch.tensor(x))
    for a, b in ((ot, om), (ht, hm), (ct, cm)):
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-12, atol=1e-14)
