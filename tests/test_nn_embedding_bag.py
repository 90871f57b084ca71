"""F.embedding_bag and nn.EmbeddingBag: sum, mean and max bags from offsets
or 2-D input, per_sample_weights, padding_idx, empty bags; against NumPy
loops written here and against torch (values and weight gradients)."""
import numpy as np
import pytest

import pycuda_sem as torch
import pycuda_sem.nn.functional as F

from torch_oracle import _torch as real_torch  # torch where it imports, else None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
RNG = np.random.default_rng(0)
W = RNG.standard_normal((10, 3))
INP = np.array([1, 2, 4, 5, 4, 3, 2, 9])
OFF = np.array([0, 4, 4, 6])  # the second bag is empty


def _bags(mode, pad=None, weights=None):
    out = []
    ends = list(OFF[1:]) + [len(INP)]
    for s, e in zip(OFF, ends):
        idx = [i for i in range(s, e) if INP[i] != pad]
        rows = [W[INP[i]] * (1.0 if weights is None else weights[i]) for i in idx]
        if not rows:
            out.append(np.zeros(3))
        else:
            out.append({"sum": np.sum, "mean": np.mean, "max": np.max}[mode](rows, axis=0))
    return np.array(out)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_bags(device, mode):
    w, inp, off = (torch.tensor(a, device=device) for a in (W, INP, OFF))
    np.testing.assert_allclose(F.embedding_bag(inp, w, off, mode=mode).cpu().numpy(), _bags(mode), rtol=1e-12)
    np.testing.assert_allclose(F.embedding_bag(inp, w, off, mode=mode, padding_idx=4).cpu().numpy(),
                               _bags(mode, pad=4), rtol=1e-12)
    rows = INP[:6].reshape(2, 3)
    two_d = F.embedding_bag(torch.tensor(rows, device=device), w, mode=mode).cpu().numpy()
    want = {"sum": np.sum, "mean": np.mean, "max": np.max}[mode](W[rows], axis=1)
    np.testing.assert_allclose(two_d, want, rtol=1e-12)
    bag = torch.nn.EmbeddingBag.from_pretrained(w, mode=mode)
    np.testing.assert_allclose(bag(inp, off).cpu().numpy(), _bags(mode), rtol=1e-12)
    if real_torch is not None:
        wt = real_torch.tensor(W, requires_grad=True)
        r = real_torch.nn.functional.embedding_bag(real_torch.tensor(INP), wt, real_torch.tensor(OFF), mode=mode)
        wp = torch.tensor(W, device=device, requires_grad=True)
        got = F.embedding_bag(inp, wp, off, mode=mode)
        np.testing.assert_allclose(got.detach().cpu().numpy(), r.detach().numpy(), rtol=1e-12)
        (got ** 2).sum().backward()
        (r ** 2).sum().backward()
        np.testing.assert_allclose(wp.grad.cpu().numpy(), wt.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_per_sample_weights_and_checks(device):
    psw = RNG.random(len(INP))
    w, inp, off = (torch.tensor(a, device=device) for a in (W, INP, OFF))
    got = F.embedding_bag(inp, w, off, mode="sum", per_sample_weights=torch.tensor(psw, device=device))
    np.testing.assert_allclose(got.cpu().numpy(), _bags("sum", weights=psw), rtol=1e-12)
    with pytest.raises(NotImplementedError, match="per_sample_weights"):
        F.embedding_bag(inp, w, off, mode="mean", per_sample_weights=torch.tensor(psw, device=device))
    with pytest.raises(ValueError, match="offsets has to be None"):
        F.embedding_bag(inp.reshape(2, 4), w, off)
