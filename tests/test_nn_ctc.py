"""F.ctc_loss / nn.CTCLoss: losses and gradients against a brute-force
float64 reference that enumerates every alignment (small T and C), against
real torch where it imports (values, and gradients through log_softmax,
where torch's own gradient formula is defined), for padded and concatenated
targets, unbatched inputs, blank other than 0, repeated labels, shorter
inputs, empty targets, impossible alignments and zero_infinity, and the
three reductions."""
import itertools

import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import nn
from pycuda_sem.nn import functional as F
from torch_oracle import _torch as real_torch

pytestmark = pytest.mark.usefixtures("no_tf32")
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]


def collapse(path, blank):
    out, prev = [], None
    for c in path:
        if c != prev and c != blank:
            out.append(c)
        prev = c
    return out


def brute(lp, target, length, blank):
    """-log p(target) and its gradient w.r.t. lp [T, C] (only the first length steps)."""
    steps, classes = lp.shape
    p, grad = 0.0, np.zeros_like(lp)
    for path in itertools.product(range(classes), repeat=length):
        if collapse(path, blank) == list(target):
            pr = np.exp(sum(lp[t, c] for t, c in enumerate(path)))
            p += pr
            for t, c in enumerate(path):
                grad[t, c] += pr
    if p == 0:
        return np.inf, np.zeros_like(lp)
    return -np.log(p), -grad / p


CASES = [  # (input lengths, targets, blank)
    ([5, 5, 4, 3], [[1, 2], [2, 2], [1, 2, 1], []], 0),
    ([6, 5, 2], [[3, 1, 3], [1], [2, 2]], 0),  # the last is impossible: 2 steps for "2 2"
    ([5, 4], [[0, 1], [2, 0, 2]], 3),  # blank is the last class
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("concat", [False, True])
def test_against_brute_force(device, case, concat):
    in_lens, tgts, blank = CASES[case]
    rng = np.random.default_rng(case)
    steps, batch, classes = max(in_lens), len(in_lens), 4
    x = rng.standard_normal((steps, batch, classes))
    lp = x - np.log(np.exp(x).sum(-1, keepdims=True))
    tl = [len(t) for t in tgts]
    if concat:
        targets = torch.tensor(sum(tgts, []) or [0], device=device)
    else:
        width = max(max(tl), 1)
        targets = torch.tensor([t + [1] * (width - len(t)) for t in tgts], device=device)
    refs = [brute(lp[:in_lens[i], i], tgts[i], in_lens[i], blank) for i in range(batch)]
    ref_loss = np.array([r[0] for r in refs])
    for reduction in ("none", "sum", "mean"):
        for zero_inf in (False, True):
            a = torch.tensor(lp, device=device, requires_grad=True)
            loss = F.ctc_loss(a, targets, in_lens, tl, blank=blank, reduction=reduction,
                              zero_infinity=zero_inf)
            rl = np.where(np.isinf(ref_loss), 0.0, ref_loss) if zero_inf else ref_loss
            if reduction == "sum":
                rl = rl.sum()
            elif reduction == "mean":
                rl = (rl / np.maximum(tl, 1)).mean()
            np.testing.assert_allclose(loss.detach().cpu().numpy(), rl, rtol=1e-12)
            if not np.all(np.isfinite(rl)):
                continue
            w = (np.ones(batch) if reduction != "mean"
                 else 1.0 / (np.maximum(tl, 1) * batch))
            loss.sum().backward()
            ref_grad = np.zeros_like(lp)
            for i, (li, gi) in enumerate(refs):
                if np.isfinite(li):
                    ref_grad[:in_lens[i], i] = w[i] * gi
            np.testing.assert_allclose(a.grad.cpu().numpy(), ref_grad, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_against_torch(device, reduction, dtype):
    if real_torch is None:
        pytest.skip("real torch not importable")
    rng = np.random.default_rng(7)
    steps, batch, classes, width = 30, 5, 7, 10
    x = rng.standard_normal((steps, batch, classes))
    tg = rng.integers(1, classes, (batch, width))
    tg[0, 3] = tg[0, 2]  # a repeated label
    in_lens = [30, 28, 17, 9, 30]
    tl = [10, 6, 8, 4, 0]
    g = rng.standard_normal(batch) if reduction == "none" else 1.0
    a = torch.tensor(x, dtype=getattr(torch, dtype), device=device, requires_grad=True)
    b = real_torch.tensor(x, dtype=getattr(real_torch, dtype), requires_grad=True)
    crit = nn.CTCLoss(reduction=reduction)
    la = crit(a.log_softmax(2), torch.tensor(tg, device=device), torch.tensor(in_lens),
              torch.tensor(tl))
    lb = real_torch.nn.CTCLoss(reduction=reduction)(b.log_softmax(2), real_torch.tensor(tg),
                                                    real_torch.tensor(in_lens),
                                                    real_torch.tensor(tl))
    tol = 1e-12 if dtype == "float64" else 2e-5
    np.testing.assert_allclose(la.detach().cpu().numpy(), lb.detach().numpy(), rtol=tol)
    (la * torch.tensor(g, dtype=la.dtype, device=device)).sum().backward()
    (lb * real_torch.tensor(g, dtype=lb.dtype)).sum().backward()
    np.testing.assert_allclose(a.grad.cpu().numpy(), b.grad.numpy(), rtol=tol * 10,
                               atol=tol)
    # concatenated targets give the same
    flat = torch.tensor(np.concatenate([tg[i, :n] for i, n in enumerate(tl)]), device=device)
    lc = F.ctc_loss(a.detach().log_softmax(2), flat, in_lens, tl, reduction=reduction)
    np.testing.assert_allclose(lc.cpu().numpy(), la.detach().cpu().numpy(), rtol=1e-12)


def test_unbatched_module_and_errors():
    rng = np.random.default_rng(3)
    x = torch.tensor(rng.standard_normal((6, 4))).log_softmax(1)
    one = F.ctc_loss(x, torch.tensor([1, 3, 3]), torch.tensor(6), torch.tensor(3),
                     reduction="none")
    assert one.dim() == 0
    ref, _ = brute(x.numpy(), [1, 3, 3], 6, 0)
    np.testing.assert_allclose(float(one), ref, rtol=1e-12)
    batched = F.ctc_loss(x.unsqueeze(1), torch.tensor([[1, 3, 3]]), [6], [3], reduction="none")
    np.testing.assert_allclose(batched.numpy(), [ref], rtol=1e-12)
    crit = nn.CTCLoss(blank=2, zero_infinity=True)
    assert crit.blank == 2 and crit.zero_infinity and crit.reduction == "mean"
    with pytest.raises(ValueError):
        F.ctc_loss(x, torch.tensor([1]), 6, 1, reduction="avg")
    with pytest.raises(RuntimeError, match="input_lengths"):
        F.ctc_loss(x.unsqueeze(1), torch.tensor([[1]]), [7], [1])
    with pytest.raises(RuntimeError):
        F.ctc_loss(x.unsqueeze(1), torch.tensor([[9]]), [6], [1])
