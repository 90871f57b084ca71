"""nn.attention.flex_attention: the unfused reference against torch's eager
flex_attention (forward, lse and the block structure of create_block_mask) and
against the same attention written out with ops (gradients: torch's eager flex
has no CPU backward), with score_mod, block masks, and_masks/or_masks, GQA,
rows that every key masks, and the errors."""
import warnings

import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem.nn.attention import flex_attention as fa
from torch_oracle import _torch as real_torch

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
# float32 products in full precision on CUDA (TF32 is on by default), as the
# references are float64
pytestmark = pytest.mark.usefixtures("no_tf32")
try:
    from torch.nn.attention import flex_attention as real_fa
except Exception:  # torch absent or too old
    real_fa = None

B, HQ, HKV, L, S, E, EV = 2, 4, 2, 100, 130, 16, 8
rng = np.random.default_rng(0)
Q, K, V = rng.standard_normal((B, HQ, L, E)), rng.standard_normal((B, HKV, S, E)), rng.standard_normal((B, HKV, S, EV))
BIAS = rng.standard_normal(HQ)
DOC = np.sort(rng.integers(0, 3, S))


def _mods(lib, device):
    bias, doc = lib.tensor(BIAS, device=device), lib.tensor(DOC, device=device)
    causal = lambda b, h, qi, ki: qi >= ki  # noqa: E731
    window = lambda b, h, qi, ki: (qi - ki).abs() < 40  # noqa: E731
    docm = lambda b, h, qi, ki: doc[qi] == doc[ki]  # noqa: E731
    late = lambda b, h, qi, ki: (qi >= 50) & (ki >= qi)  # noqa: E731 - rows q < 50 keep nothing
    smod = lambda s, b, h, qi, ki: s + bias[h] * (qi - ki) * 0.01  # noqa: E731
    return {"causal": dict(mask=causal, bs=32), "score_mod": dict(score=smod),
            "both": dict(score=smod, mask=("and", causal, window), bs=(16, 64), BH=(B, HQ)),
            "doc": dict(mask=("or", docm, lambda b, h, qi, ki: qi < 0), bs=128, BH=(None, HQ), scale=0.3),
            "empty_rows": dict(mask=late, bs=32)}


def _call(lib, m, case, device, dtype, grad):
    spec = _mods(lib, device)[case]
    q, k, v = (lib.tensor(a, dtype=getattr(lib, dtype), device=device).requires_grad_(grad) for a in (Q, K, V))
    kw = {}
    if "score" in spec:
        kw["score_mod"] = spec["score"]
    if "mask" in spec:
        mm = spec["mask"]
        if isinstance(mm, tuple):
            mm = (m.and_masks if mm[0] == "and" else m.or_masks)(*mm[1:])
        bh = spec.get("BH", (None, None))
        kw["block_mask"] = m.create_block_mask(mm, bh[0], bh[1], L, S, device=device, BLOCK_SIZE=spec["bs"])
    if "scale" in spec:
        kw["scale"] = spec["scale"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out, lse = m.flex_attention(q, k, v, enable_gqa=True, return_lse=True, **kw)
    return (q, k, v), out, lse, kw


CASES = ["causal", "score_mod", "both", "doc", "empty_rows"]


@pytest.mark.parametrize("case", CASES)
def test_forward_and_block_structure_match_torch(case):
    if real_fa is None:
        pytest.skip("needs torch's flex_attention as the oracle")
    _, out, lse, kw = _call(torch, fa, case, "cpu", "float64", False)
    _, t_out, t_lse, t_kw = _call(real_torch, real_fa, case, "cpu", "float64", False)
    np.testing.assert_allclose(out.numpy(), t_out.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(lse.numpy(), t_lse.numpy(), rtol=1e-10, atol=1e-12)
    if "block_mask" in kw:
        ours, theirs = kw["block_mask"], t_kw["block_mask"]
        assert ours.shape == theirs.shape and ours.BLOCK_SIZE == theirs.BLOCK_SIZE
        for name in ("kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices", "q_num_blocks",
                     "q_indices"):
            np.testing.assert_array_equal(getattr(ours, name).numpy(), getattr(theirs, name).numpy(), err_msg=name)
        np.testing.assert_array_equal(ours.to_dense().numpy(), theirs.to_dense().numpy())
        assert ours.sparsity() == pytest.approx(theirs.sparsity())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", CASES)
def test_gradients_match_the_attention_written_out(device, dtype, case):
    (q, k, v), out, lse, kw = _call(torch, fa, case, device, dtype, True)
    (out.sum() + out.pow(2).sum() * 0.1).backward()
    # the same attention from ops, in float64 on the CPU
    q2, k2, v2 = (torch.tensor(a, requires_grad=True) for a in (Q, K, V))
    k3, v3 = k2.repeat_interleave(HQ // HKV, 1), v2.repeat_interleave(HQ // HKV, 1)
    sc = q2 @ k3.transpose(-2, -1) * kw.get("scale", E ** -0.5)
    spec = _mods(torch, "cpu")[case]
    if "score" in spec:
        grids = [torch.arange(n).view(*[n if j == i else 1 for j in range(4)]) for i, n in enumerate((B, HQ, L, S))]
        sc = spec["score"](sc, *grids)
    if "block_mask" in kw:
        bm = kw["block_mask"]
        mm = spec["mask"]  # the CPU spec's mask_mod (the block mask's may hold CUDA tensors)
        if isinstance(mm, tuple):
            mm = (fa.and_masks if mm[0] == "and" else fa.or_masks)(*mm[1:])
        keep = fa.create_mask(mm, bm.shape[0], bm.shape[1], L, S, device="cpu")
        sc = sc.masked_fill(~keep, float("-inf"))
    ls = sc.logsumexp(-1)
    o2 = (sc - ls.masked_fill(ls == float("-inf"), 0).unsqueeze(-1)).exp() @ v3
    (o2.sum() + o2.pow(2).sum() * 0.1).backward()
    tol = 1e-10 if dtype == "float64" else 3e-5
    for got, want in ((out, o2), (lse, ls), (q.grad, q2.grad), (k.grad, k2.grad), (v.grad, v2.grad)):
        np.testing.assert_allclose(got.detach().cpu().double().numpy(), want.detach().numpy(), rtol=tol, atol=tol)
    if case == "empty_rows":  # every key masked: output 0, lse -inf, as torch's
        assert (out[:, :, :50] == 0).all() and bool((lse[:, :, :50] == float("-inf")).all())


def test_create_mask_noop_and_aux_outputs():
    m = fa.create_mask(lambda b, h, qi, ki: qi >= ki, 1, 1, 4, 5, device="cpu")
    assert m.dtype == torch.bool and m.shape == (1, 1, 4, 5) and m.sum().item() == 10
    s = fa.create_mask(lambda sc, b, h, qi, ki: sc + qi - ki, 1, 2, 3, 3, device="cpu")
    assert s.shape == (1, 2, 3, 3) and s[0, 1, 2, 0].item() == 2
    bm = fa.create_block_mask(fa.noop_mask, 1, 1, 64, 64, device="cpu", BLOCK_SIZE=32)
    assert bm.sparsity() == 0 and int(bm.full_kv_num_blocks.sum()) == 4
    q, k, v = (torch.tensor(a[:1, :2]) for a in (Q, K, V))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out, aux = fa.flex_attention(q, k, v, return_aux=fa.AuxRequest(lse=True, max_scores=True))
        plain = fa.flex_attention(q, k, v)
    np.testing.assert_allclose(out.numpy(), plain.numpy())
    assert aux.lse.shape == (1, 2, L) and aux.max_scores.shape == (1, 2, L)
    assert "BlockMask(shape=(1, 1, 64, 64), sparsity=0.00%" in repr(bm)


def test_errors():
    q, k, v = (torch.tensor(a) for a in (Q, K, V))
    with pytest.raises(ValueError, match="enable_gqa=True"):
        fa.flex_attention(q, k, v)
    with pytest.raises(ValueError, match="multiple of kv heads"):
        fa.flex_attention(q[:, :3], k, v, enable_gqa=True)
    with pytest.raises(ValueError, match="same embedding dimension"):
        fa.flex_attention(q[..., :8], k, v, enable_gqa=True)
    bm = fa.create_block_mask(lambda b, h, qi, ki: qi >= ki, None, None, 64, 64, device="cpu")
    with pytest.raises(ValueError, match="seq_lengths"):
        fa.flex_attention(q, k, v, block_mask=bm, enable_gqa=True)
    with pytest.raises(RuntimeError, match="mask_mod"):
        fa.create_block_mask(lambda s, b, h, qi, ki: s, None, None, 64, 64, device="cpu")
    with pytest.raises(RuntimeError, match="callable"):
        fa.and_masks(3)
