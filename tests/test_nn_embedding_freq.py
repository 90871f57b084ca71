"""Embedding(scale_grad_by_freq=True), F.embedding and F.embedding_bag: the values are the
rows looked up, and each row's gradient is the sum of its occurrences'
gradients divided by how often it occurs in the input (worked out here in
NumPy), with padding_idx rows still getting none; torch on the same data
where it is installed. sparse=True raises NotImplementedError."""
import numpy as np
import pytest

import pycuda_sem as torch
import pycuda_sem.nn.functional as F

from torch_oracle import _torch as real_torch  # torch where it imports, else None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
RNG = np.random.default_rng(0)
W = RNG.standard_normal((6, 3))
IDX = np.array([[1, 2, 1, 5], [1, 0, 2, 2]])
G = RNG.standard_normal((2, 4, 3))


def _want(pad):
    grad = np.zeros_like(W)
    counts = np.bincount(IDX.ravel(), minlength=6)
    for pos, r in np.ndenumerate(IDX):
        if r != pad:
            grad[r] += G[pos] / counts[r]
    return grad


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("pad", [None, 2])
def test_gradient_scaled_by_frequency(device, pad):
    w = torch.tensor(W, device=device, requires_grad=True)
    y = F.embedding(torch.tensor(IDX, device=device), w, padding_idx=pad, scale_grad_by_freq=True)
    np.testing.assert_array_equal(y.detach().cpu().numpy(), W[IDX])
    y.backward(torch.tensor(G, device=device))
    np.testing.assert_allclose(w.grad.cpu().numpy(), _want(pad), rtol=1e-12, atol=1e-15)
    if real_torch is not None:
        rw = real_torch.tensor(W, requires_grad=True)
        real_torch.nn.functional.embedding(real_torch.tensor(IDX), rw, padding_idx=pad,
                                           scale_grad_by_freq=True).backward(real_torch.tensor(G))
        np.testing.assert_allclose(w.grad.cpu().numpy(), rw.grad.numpy(), rtol=1e-12, atol=1e-15)
    m = torch.nn.Embedding(6, 3, scale_grad_by_freq=True).to(device)
    m(torch.tensor(IDX, device=device)).sum().backward()
    np.testing.assert_allclose(m.weight.grad[1].cpu().numpy(), [1.0, 1.0, 1.0])  # three 1s over a count of 3


def test_sparse_raises():
    with pytest.raises(NotImplementedError, match="sparse"):
        F.embedding(torch.tensor([0]), torch.ones(2, 2, requires_grad=True), sparse=True)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_embedding_bag_scale_grad_by_freq(device, mode):
    idx, off = IDX.ravel(), np.array([0, 3, 5])
    w = torch.tensor(W, device=device, requires_grad=True)
    y = F.embedding_bag(torch.tensor(idx, device=device), w, torch.tensor(off, device=device), mode=mode,
                        scale_grad_by_freq=True)
    gb = RNG.standard_normal(tuple(y.shape))
    y.backward(torch.tensor(gb, device=device))
    # each position's share of its bag's gradient, over the row's count in the input
    counts = np.bincount(idx, minlength=6)
    bags = np.searchsorted(off, np.arange(len(idx)), side="right") - 1
    sizes = np.bincount(bags)
    want = np.zeros_like(W)
    for p, r in enumerate(idx):
        share = gb[bags[p]] / (sizes[bags[p]] if mode == "mean" else 1)
        want[r] += share / counts[r]
    np.testing.assert_allclose(w.grad.cpu().numpy(), want, rtol=1e-12, atol=1e-15)
    with pytest.raises(ValueError, match="max mode does not support"):
        F.embedding_bag(torch.tensor(idx, device=device), w, torch.tensor(off, device=device), mode="max",
                        scale_grad_by_freq=True)
