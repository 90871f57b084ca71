"""RNN, LSTM, GRU and their cells: outputs and final states against NumPy
references written from the gate equations (float64), over layers,
directions, batch_first, unbatched inputs and given initial states;
gradients against central differences; a sequence task that trains;
errors and reprs; torch's modules on the same state_dict where torch
imports (checks the parameter layout and gate order); CUDA against CPU."""
import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import nn

try:
    import torch as real_torch
except Exception:  # noqa: BLE001 - any import failure means no oracle
    real_torch = None

rng = np.random.default_rng(3)


def sig(v):
    return 1 / (1 + np.exp(-v))


def np_cell(mode, x, h, c, w_ih, w_hh, b_ih, b_hh):
    gx, gh = x @ w_ih.T + b_ih, h @ w_hh.T + b_hh
    if mode == "LSTM":
        i, f, g, o = np.split(gx + gh, 4, -1)
        c = sig(f) * c + sig(i) * np.tanh(g)
        return sig(o) * np.tanh(c), c
    if mode == "GRU":
        xr, xz, xn = np.split(gx, 3, -1)
        hr, hz, hn = np.split(gh, 3, -1)
        r, z = sig(xr + hr), sig(xz + hz)
        n = np.tanh(xn + r * hn)
        return (1 - z) * n + z * h, None
    pre = gx + gh
    return (np.maximum(pre, 0) if mode == "RNN_RELU" else np.tanh(pre)), None


def np_rnn(mode, params, x, layers, dirs, h0=None, c0=None):
    """x [T, B, I]; params: the module's state_dict as NumPy arrays."""
    steps, batch = x.shape[:2]
    hid = params["weight_hh_l0"].shape[1]
    h0 = np.zeros((layers * dirs, batch, hid)) if h0 is None else h0
    c0 = np.zeros_like(h0) if c0 is None else c0
    hn, cn, inp = [], [], x
    for layer in range(layers):
        outs = []
        for d in range(dirs):
            sfx = "_l%d%s" % (layer, "_reverse" if d else "")
            w = [params[n + sfx] for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
            h, c = h0[layer * dirs + d], c0[layer * dirs + d]
            seq = [None] * steps
            for t in (range(steps - 1, -1, -1) if d else range(steps)):
                h, c2 = np_cell(mode, inp[t], h, c, *w)
                c = c2 if c2 is not None else c
                seq[t] = h
            outs.append(np.stack(seq))
            hn.append(h)
            cn.append(c)
        inp = np.concatenate(outs, -1)
    return inp, np.stack(hn), np.stack(cn)


def params_np(m):
    return {k: v.detach().numpy() for k, v in m.state_dict().items()}


@pytest.mark.parametrize("cls,mode,kw", [
    (nn.LSTM, "LSTM", {}), (nn.GRU, "GRU", {}), (nn.RNN, "RNN_TANH", {}),
    (nn.RNN, "RNN_RELU", {"nonlinearity": "relu"}),
    (nn.LSTM, "LSTM", {"num_layers": 2, "bidirectional": True}),
    (nn.GRU, "GRU", {"num_layers": 3, "batch_first": True}),
    (nn.RNN, "RNN_TANH", {"bidirectional": True, "batch_first": True}),
])
def test_against_numpy(cls, mode, kw):
    m = cls(3, 5, **kw).double()
    layers, dirs = kw.get("num_layers", 1), 2 if kw.get("bidirectional") else 1
    x = rng.normal(size=(6, 2, 3))
    h0 = rng.normal(size=(layers * dirs, 2, 5))
    c0 = rng.normal(size=(layers * dirs, 2, 5))
    xin = np.swapaxes(x, 0, 1) if kw.get("batch_first") else x
    hx = (torch.tensor(h0), torch.tensor(c0)) if mode == "LSTM" else torch.tensor(h0)
    out, state = m(torch.tensor(xin), hx)
    ref, hn, cn = np_rnn(mode, params_np(m), x, layers, dirs, h0, c0)
    if kw.get("batch_first"):
        ref = np.swapaxes(ref, 0, 1)
    np.testing.assert_allclose(out.detach().numpy(), ref, rtol=1e-10, atol=1e-12)
    if mode == "LSTM":
        np.testing.assert_allclose(state[0].detach().numpy(), hn, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(state[1].detach().numpy(), cn, rtol=1e-10, atol=1e-12)
    else:
        np.testing.assert_allclose(state.detach().numpy(), hn, rtol=1e-10, atol=1e-12)


def test_unbatched_and_default_state():
    m = nn.GRU(3, 4).double()
    x = rng.normal(size=(5, 3))
    out, h = m(torch.tensor(x))
    ref, hn, _ = np_rnn("GRU", params_np(m), x[:, None], 1, 1)
    assert out.shape == (5, 4) and h.shape == (1, 4)
    np.testing.assert_allclose(out.detach().numpy(), ref[:, 0], rtol=1e-10)


def test_cells_against_numpy():
    for cls, mode in ((nn.LSTMCell, "LSTM"), (nn.GRUCell, "GRU"), (nn.RNNCell, "RNN_TANH")):
        cell = cls(3, 4).double()
        x, h, c = rng.normal(size=(2, 3)), rng.normal(size=(2, 4)), rng.normal(size=(2, 4))
        w = [getattr(cell, n).detach().numpy() for n in ("weight_ih", "weight_hh", "bias_ih",
                                                         "bias_hh")]
        want = np_cell(mode, x, h, c, *w)
        if mode == "LSTM":
            got = cell(torch.tensor(x), (torch.tensor(h), torch.tensor(c)))
            np.testing.assert_allclose(got[0].detach().numpy(), want[0], rtol=1e-10)
            np.testing.assert_allclose(got[1].detach().numpy(), want[1], rtol=1e-10)
        else:
            got = cell(torch.tensor(x), torch.tensor(h))
            np.testing.assert_allclose(got.detach().numpy(), want[0], rtol=1e-10)
        assert cell(torch.tensor(x[0])) is not None  # unbatched, zero state


def test_lstm_gradient_through_time():
    m = nn.LSTM(2, 3, bidirectional=True).double()
    x = rng.normal(size=(4, 1, 2))
    gy = rng.normal(size=(4, 1, 6))
    xt = torch.tensor(x, requires_grad=True)
    (m(xt)[0] * torch.tensor(gy)).sum().backward()
    eps, num = 1e-6, np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        hi, lo = x.copy(), x.copy()
        hi[idx] += eps
        lo[idx] -= eps
        num[idx] = ((m(torch.tensor(hi))[0].detach().numpy()
                     - m(torch.tensor(lo))[0].detach().numpy()) * gy).sum() / (2 * eps)
    np.testing.assert_allclose(xt.grad.numpy(), num, rtol=1e-5, atol=1e-8)
    assert m.weight_hh_l0_reverse.grad is not None


def test_an_lstm_learns_to_sum_a_sequence():
    torch.manual_seed(0)
    lstm, head = nn.LSTM(1, 8, batch_first=True), nn.Linear(8, 1)
    opt = torch.optim.Adam(list(lstm.parameters()) + list(head.parameters()), lr=0.03)
    x = torch.rand(32, 6, 1)
    y = x.sum(1)
    losses = []
    for _ in range(80):
        opt.zero_grad()
        out, _ = lstm(x)
        loss = nn.functional.mse_loss(head(out[:, -1]), y)
        loss.backward()
        opt.step()
        losses.append(float(loss))
    assert losses[-1] < 0.05 * losses[0]


def test_errors_reprs_and_init():
    with pytest.raises(ValueError, match="dropout should be a number in range"):
        nn.LSTM(2, 3, dropout=1.5)
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.GRU(2, 3, dropout=0.5)
    with pytest.raises(ValueError, match="Unknown nonlinearity"):
        nn.RNN(2, 3, nonlinearity="gelu")
    with pytest.raises(ValueError, match="smaller than hidden_size"):  # (proj_size: test_nn_lstm_proj.py)
        nn.LSTM(2, 3, proj_size=3)
    with pytest.raises(RuntimeError, match="input_size. Expected 2, got 3"):
        nn.GRU(2, 3)(torch.randn(4, 1, 3))
    with pytest.raises(RuntimeError, match="Expected hidden size"):
        nn.GRU(2, 3)(torch.randn(4, 2, 2), torch.randn(1, 1, 3))
    assert repr(nn.LSTM(10, 20, num_layers=2, batch_first=True, dropout=0.1)) == (
        "LSTM(10, 20, num_layers=2, batch_first=True, dropout=0.1)")
    assert repr(nn.GRU(4, 5, bias=False, bidirectional=True)) == (
        "GRU(4, 5, bias=False, bidirectional=True)")
    assert repr(nn.LSTMCell(3, 4)) == "LSTMCell(3, 4)"
    m = nn.LSTM(3, 16, num_layers=2)
    assert [n for n, _ in m.named_parameters()][:4] == ["weight_ih_l0", "weight_hh_l0",
                                                        "bias_ih_l0", "bias_hh_l0"]
    assert m.weight_ih_l1.shape == (64, 16)
    assert all(float(p.abs().max()) <= 0.25 for p in m.parameters())  # 1/sqrt(16)


@pytest.mark.skipif(real_torch is None, reason="torch is not importable")
def test_match_torch_on_the_same_weights():
    for name, kw in (("LSTM", {"num_layers": 2, "bidirectional": True}), ("GRU", {}),
                     ("RNN", {"nonlinearity": "relu"})):
        theirs = getattr(real_torch.nn, name)(3, 4, **kw).double()
        ours = getattr(nn, name)(3, 4, **kw).double()
        ours.load_state_dict({k: torch.tensor(v.detach().numpy())
                              for k, v in theirs.state_dict().items()})
        x = rng.normal(size=(5, 2, 3))
        a = ours(torch.tensor(x))[0].detach().numpy()
        b = theirs(real_torch.from_numpy(x))[0].detach().numpy()
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
        assert repr(ours) == repr(theirs)


@pytest.mark.cuda
def test_cuda_matches_cpu():
    m = nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True)
    x = torch.randn(2, 7, 3)
    out, (h, c) = m(x)
    m.cuda()
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        out2, (h2, c2) = m(x.cuda())
    finally:
        torch.backends.cuda.matmul.allow_tf32 = True
    np.testing.assert_allclose(out2.detach().cpu().numpy(), out.detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(c2.detach().cpu().numpy(), c.detach().numpy(), rtol=1e-5, atol=1e-6)
    out2.sum().backward()
    assert m.weight_ih_l0.grad.is_cuda
