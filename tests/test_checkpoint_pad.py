"""torch.utils.checkpoint (gradients and outputs equal to the plain run,
dropout replayed with the saved random state, non-tensor arguments,
checkpoint_sequential, the use_reentrant warning) and
torch.nn.utils.rnn.pad_sequence (values, sides, gradients; PackedSequence
refused); CUDA under `cuda`."""
import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import nn
from pycuda_sem.nn.utils.rnn import pack_padded_sequence, pad_sequence, unpad_sequence
from pycuda_sem.utils.checkpoint import checkpoint, checkpoint_sequential


def _model():
    return nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Tanh(), nn.Linear(8, 3))


def _grads(m, x):
    return [x.grad.clone()] + [p.grad.clone() for p in m.parameters()]


@pytest.mark.parametrize("reentrant", [True, False])
def test_checkpoint_matches_the_plain_run(reentrant):
    m = _model()
    x = torch.randn(5, 4, requires_grad=True)
    torch.manual_seed(7)
    y = checkpoint(m, x, use_reentrant=reentrant)
    (y * torch.arange(3.0)).sum().backward()
    got = _grads(m, x)
    x.grad = None
    m.zero_grad()
    torch.manual_seed(7)
    y2 = m(x)  # the same dropout mask: the recomputation replays the saved state
    (y2 * torch.arange(3.0)).sum().backward()
    assert torch.equal(y, y2)
    for a, b in zip(got, _grads(m, x)):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-7)


def test_checkpoint_with_other_arguments_and_outputs():
    w = torch.randn(3, requires_grad=True)

    def fn(a, scale, b, *, shift):
        return a * w * scale + b, (a * b).sum()

    a, b = torch.randn(3, requires_grad=True), torch.randn(3)
    (y, s) = checkpoint(fn, a, 2.0, b, shift=1, use_reentrant=False)
    (y.sum() + s).backward()
    np.testing.assert_allclose(a.grad.numpy(), (w * 2.0 + b).detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(w.grad.numpy(), (a * 2.0).detach().numpy(), rtol=1e-6)
    assert b.grad is None


def test_checkpoint_sequential_and_warning():
    m = nn.Sequential(*[nn.Linear(4, 4) for _ in range(6)])
    x = torch.randn(2, 4, requires_grad=True)
    y = checkpoint_sequential(m, 3, x, use_reentrant=False)
    y.sum().backward()
    g = x.grad.clone()
    x.grad = None
    m(x).sum().backward()
    np.testing.assert_allclose(g.numpy(), x.grad.numpy(), rtol=1e-6)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        checkpoint(m, x)


def test_pad_sequence():
    seqs = [torch.full((n, 2), float(n)) for n in (2, 4, 1)]
    p = pad_sequence(seqs)
    assert p.shape == (4, 3, 2)
    want = np.full((3, 4, 2), 0.0)
    for i, n in enumerate((2, 4, 1)):
        want[i, :n] = n
    np.testing.assert_array_equal(p.transpose(0, 1).numpy(), want)
    left = pad_sequence(seqs, batch_first=True, padding_value=-1.0, padding_side="left")
    assert left[0].tolist() == [[-1.0, -1.0], [-1.0, -1.0], [2.0, 2.0], [2.0, 2.0]]
    assert [u.shape for u in unpad_sequence(p, [2, 4, 1])] == [(2, 2), (4, 2), (1, 2)]
    a = torch.randn(3, 2, requires_grad=True)
    (pad_sequence([a, torch.randn(5, 2)], batch_first=True) * 2).sum().backward()
    assert a.grad.tolist() == [[2.0, 2.0]] * 3
    with pytest.raises(ValueError, match="padding_side"):
        pad_sequence(seqs, padding_side="middle")
    with pytest.raises(RuntimeError, match="sorted in decreasing order"):  # torch's check
        pack_padded_sequence(p, [2, 4, 1])


@pytest.mark.cuda
def test_checkpoint_on_cuda():
    m = _model().cuda()
    x = torch.randn(5, 4, device="cuda", requires_grad=True)
    torch.cuda.manual_seed(3)
    y = checkpoint(m, x, use_reentrant=False)
    y.sum().backward()
    got = _grads(m, x)
    x.grad = None
    m.zero_grad()
    torch.cuda.manual_seed(3)
    m(x).sum().backward()
    for a, b in zip(got, _grads(m, x)):
        np.testing.assert_allclose(a.cpu().numpy(), b.cpu().numpy(), rtol=1e-5, atol=1e-6)
