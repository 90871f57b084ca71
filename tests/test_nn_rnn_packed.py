"""RNN / LSTM / GRU on PackedSequence inputs: the packed output rows and the
final states (each sequence's own last step, in the caller's batch order)
against running every sequence alone at its own length (float64, no torch
needed), for one and two layers, both directions, batch_first, given
initial states and unsorted batches; gradients of the weights, of the input
and of the initial state against the same per-sequence reference; and
values and gradients against real torch's modules on the same weights."""
import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import nn
from pycuda_sem.nn.utils import rnn as rnn_utils
from torch_oracle import _torch as real_torch

pytestmark = pytest.mark.usefixtures("no_tf32")
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
MODES = ["RNN", "LSTM", "GRU"]
LENGTHS = [3, 5, 1, 4]  # unsorted on purpose, one sequence of a single step


def make(mode, layers, bidir, batch_first, device, seed=0):
    torch.manual_seed(seed)
    cls = getattr(nn, mode)
    return cls(3, 4, num_layers=layers, bidirectional=bidir, batch_first=batch_first,
               dtype=torch.float64).to(device)


def inputs(mode, layers, dirs, device, seed=1, with_hx=True):
    rng = np.random.default_rng(seed)
    seqs = [rng.standard_normal((n, 3)) for n in LENGTHS]
    hx = None
    if with_hx:
        hx = [rng.standard_normal((layers * dirs, len(LENGTHS), 4))
              for _ in range(2 if mode == "LSTM" else 1)]
    w_out = rng.standard_normal((sum(LENGTHS), 4 * dirs))
    return seqs, hx, w_out


def tensors(arrs, device):
    return [torch.tensor(a, device=device, requires_grad=True) for a in arrs]


def run_packed(m, mode, seqs, hx, batch_first, device):
    xs = tensors(seqs, device)
    padded = rnn_utils.pad_sequence(xs, batch_first=batch_first)
    packed = rnn_utils.pack_padded_sequence(padded, LENGTHS, batch_first=batch_first,
                                            enforce_sorted=False)
    h = tensors(hx, device) if hx is not None else None
    out, state = m(packed, (tuple(h) if mode == "LSTM" else h[0]) if h is not None else None)
    return xs, h, packed, out, state


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("layers,bidir", [(1, False), (2, False), (1, True), (2, True)])
@pytest.mark.parametrize("batch_first", [False, True])
def test_packed_matches_each_sequence_alone(device, mode, layers, bidir, batch_first):
    dirs = 2 if bidir else 1
    m = make(mode, layers, bidir, batch_first, device)
    seqs, hx, w_out = inputs(mode, layers, dirs, device)
    xs, h, packed, out, state = run_packed(m, mode, seqs, hx, batch_first, device)
    assert isinstance(out, rnn_utils.PackedSequence)
    assert out.batch_sizes.tolist() == packed.batch_sizes.tolist() == [4, 3, 3, 2, 1]
    assert out.sorted_indices.tolist() == packed.sorted_indices.tolist()
    assert out.unsorted_indices.tolist() == packed.unsorted_indices.tolist()
    assert tuple(out.data.shape) == (sum(LENGTHS), 4 * dirs)
    padded, lens = rnn_utils.pad_packed_sequence(out, batch_first=True)
    assert lens.tolist() == LENGTHS
    hn = state[0] if mode == "LSTM" else state
    loss = (out.data * torch.tensor(w_out, device=device)).sum() + (hn * hn).sum()
    if mode == "LSTM":
        loss = loss + state[1].sum()
    grads = torch.autograd.grad(loss, list(m.parameters()) + xs + h)

    # reference: each sequence alone (unbatched, no packing) with its own initial state;
    # the loss weights the packed rows, so map every packed row to (sequence, step)
    ref_loss = 0
    sorted_idx = packed.sorted_indices.tolist()
    row_of = {}
    r = 0
    for t, n in enumerate(packed.batch_sizes.tolist()):
        for j in range(n):
            row_of[(sorted_idx[j], t)] = r
            r += 1
    wt = torch.tensor(w_out, device=device)
    for i, x in enumerate(xs):
        hi = None
        if h is not None:
            hi = tuple(v[:, i] for v in h) if mode == "LSTM" else h[0][:, i]
        o, st = m(x, hi)
        np.testing.assert_allclose(padded[i, :LENGTHS[i]].detach().cpu().numpy(),
                                   o.detach().cpu().numpy(), rtol=1e-12, atol=1e-12)
        assert float(padded[i, LENGTHS[i]:].abs().sum()) == 0  # padding stays padding
        hs = st[0] if mode == "LSTM" else st
        np.testing.assert_allclose(hn[:, i].detach().cpu().numpy(), hs.detach().cpu().numpy(),
                                   rtol=1e-12, atol=1e-12)
        if mode == "LSTM":
            np.testing.assert_allclose(state[1][:, i].detach().cpu().numpy(),
                                       st[1].detach().cpu().numpy(), rtol=1e-12, atol=1e-12)
            ref_loss = ref_loss + st[1].sum()
        rows = torch.tensor([row_of[(i, t)] for t in range(LENGTHS[i])], device=device)
        ref_loss = ref_loss + (o * wt.index_select(0, rows)).sum() + (hs * hs).sum()
    ref = torch.autograd.grad(ref_loss, list(m.parameters()) + xs + h)
    for g, gr in zip(grads, ref):
        np.testing.assert_allclose(g.cpu().numpy(), gr.cpu().numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("layers,bidir,with_hx", [(1, False, False), (2, True, True),
                                                  (1, True, False), (2, False, True)])
def test_packed_against_torch(device, mode, layers, bidir, with_hx):
    if real_torch is None:
        pytest.skip("real torch not importable")
    dirs = 2 if bidir else 1
    m = make(mode, layers, bidir, False, device)
    seqs, hx, w_out = inputs(mode, layers, dirs, device, seed=5, with_hx=with_hx)
    xs, h, packed, out, state = run_packed(m, mode, seqs, hx, False, device)
    hs = list(state) if mode == "LSTM" else [state]
    loss = (out.data * torch.tensor(w_out, device=device)).sum() + sum((v * v).sum() for v in hs)
    grads = torch.autograd.grad(loss, list(m.parameters()) + xs + (h or []))

    tm = getattr(real_torch.nn, mode)(3, 4, num_layers=layers, bidirectional=bidir,
                                      dtype=real_torch.float64)
    tm.load_state_dict({k: real_torch.tensor(v.cpu().numpy()) for k, v in m.state_dict().items()})
    txs = [real_torch.tensor(s, requires_grad=True) for s in seqs]
    tpacked = real_torch.nn.utils.rnn.pack_sequence(txs, enforce_sorted=False)
    th = [real_torch.tensor(v, requires_grad=True) for v in hx] if with_hx else []
    tout, tstate = tm(tpacked, (tuple(th) if mode == "LSTM" else th[0]) if with_hx else None)
    ths = list(tstate) if mode == "LSTM" else [tstate]
    tloss = ((tout.data * real_torch.tensor(w_out)).sum() + sum((v * v).sum() for v in ths))
    tgrads = real_torch.autograd.grad(tloss, list(tm.parameters()) + txs + th)
    assert tout.batch_sizes.tolist() == out.batch_sizes.tolist()
    np.testing.assert_allclose(out.data.detach().cpu().numpy(), tout.data.detach().numpy(),
                               rtol=1e-10, atol=1e-12)
    for a, b in zip(hs, ths):
        np.testing.assert_allclose(a.detach().cpu().numpy(), b.detach().numpy(),
                                   rtol=1e-10, atol=1e-12)
    assert len(grads) == len(tgrads)
    for g, tg in zip(grads, tgrads):
        np.testing.assert_allclose(g.cpu().numpy(), tg.numpy(), rtol=1e-9, atol=1e-11)


def test_packed_sorted_float32_and_errors():
    torch.manual_seed(0)
    m = nn.GRU(3, 4)
    rng = np.random.default_rng(2)
    x = torch.tensor(rng.standard_normal((5, 3, 3)), dtype=torch.float32)
    packed = rnn_utils.pack_padded_sequence(x, [5, 3, 2])  # sorted: no indices
    out, hn = m(packed)
    assert out.sorted_indices is None and out.unsorted_indices is None
    assert out.data.dtype == torch.float32 and tuple(hn.shape) == (1, 3, 4)
    # the full-length sequence's final state equals the padded run's last step
    full, hpad = m(x)
    np.testing.assert_allclose(hn[0, 0].detach().numpy(), hpad[0, 0].detach().numpy(),
                               rtol=1e-6, atol=1e-6)
    short, _ = m(x[:2, 2])
    np.testing.assert_allclose(hn[0, 2].detach().numpy(), short[-1].detach().numpy(),
                               rtol=1e-6, atol=1e-6)
    with pytest.raises(RuntimeError, match="Expected hidden size"):
        m(packed, torch.zeros(1, 4, 4))
    with pytest.raises(RuntimeError, match="input.size"):
        nn.GRU(2, 4)(packed)
