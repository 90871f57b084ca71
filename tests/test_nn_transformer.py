"""Transformer layers: each layer equal to the composition of its own
submodules in torch's order (post-norm and norm_first), causal and padding
masks doing what they say, deep-copied stacks, torch's modules on the same
state_dict where torch imports, a small model that trains, errors; CUDA
against CPU."""
import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import nn
from pycuda_sem.nn import functional as F

try:
    import torch as real_torch
except Exception:  # noqa: BLE001 - any import failure means no oracle
    real_torch = None


def close(a, b, tol=1e-10):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_is_its_composition(norm_first):
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, norm_first=norm_first,
                                       activation="gelu").double()
    x = torch.randn(5, 3, 8, dtype=torch.float64)

    def sa(v):
        return layer.self_attn(v, v, v, need_weights=False)[0]

    def ff(v):
        return layer.linear2(F.gelu(layer.linear1(v)))
    if norm_first:
        want = x + sa(layer.norm1(x))
        want = want + ff(layer.norm2(want))
    else:
        want = layer.norm1(x + sa(x))
        want = layer.norm2(want + ff(want))
    close(layer(x), want)


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_is_its_composition(norm_first):
    torch.manual_seed(1)
    layer = nn.TransformerDecoderLayer(8, 4, 12, dropout=0.0, norm_first=norm_first,
                                       batch_first=True).double()
    x, mem = torch.randn(2, 4, 8, dtype=torch.float64), torch.randn(2, 6, 8, dtype=torch.float64)

    def sa(v):
        return layer.self_attn(v, v, v, need_weights=False)[0]

    def ca(v):
        return layer.multihead_attn(v, mem, mem, need_weights=False)[0]

    def ff(v):
        return layer.linear2(F.relu(layer.linear1(v)))
    if norm_first:
        want = x + sa(layer.norm1(x))
        want = want + ca(layer.norm2(want))
        want = want + ff(layer.norm3(want))
    else:
        want = layer.norm1(x + sa(x))
        want = layer.norm2(want + ca(want))
        want = layer.norm3(want + ff(want))
    close(layer(x, mem), want)


def test_masks_and_stacks():
    torch.manual_seed(2)
    model = nn.Transformer(16, 4, 2, 2, 32, dropout=0.0, batch_first=True).double()
    src, tgt = torch.randn(2, 7, 16, dtype=torch.float64), torch.randn(2, 5, 16,
                                                                         dtype=torch.float64)
    mask = nn.Transformer.generate_square_subsequent_mask(5, dtype=torch.float64)
    assert mask.shape == (5, 5) and float(mask[0, 1]) == float("-inf") and float(mask[1, 0]) == 0
    out = model(src, tgt, tgt_mask=mask, tgt_is_causal=True)
    tgt2 = tgt.clone()
    tgt2[:, 3:] = 9.0  # later positions cannot change earlier outputs
    out2 = model(src, tgt2, tgt_mask=mask, tgt_is_causal=True)
    close(out[:, :3], out2[:, :3])
    assert not np.allclose(out[:, 3:].detach().numpy(), out2[:, 3:].detach().numpy())
    pad = torch.tensor([[False] * 5 + [True] * 2, [False] * 7])
    src2 = src.clone()
    src2[0, 5:] = -4.0  # padded source positions cannot change anything
    close(model(src, tgt, src_key_padding_mask=pad, memory_key_padding_mask=pad),
          model(src2, tgt, src_key_padding_mask=pad, memory_key_padding_mask=pad))
    enc = model.encoder
    assert enc.layers[0] is not enc.layers[1] and len(enc.layers) == 2
    assert enc.layers[0].linear1.weight is not enc.layers[1].linear1.weight
    names = [n for n, _ in model.named_parameters()]
    assert "encoder.layers.0.self_attn.in_proj_weight" in names
    assert "decoder.layers.1.multihead_attn.out_proj.bias" in names
    assert "decoder.norm.weight" in names


def test_a_small_transformer_trains():
    torch.manual_seed(3)
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0,
                                                           batch_first=True), 2)
    head = nn.Linear(8, 1)
    opt = torch.optim.Adam(list(enc.parameters()) + list(head.parameters()), lr=0.01)
    x = torch.randn(16, 6, 8)
    y = x[:, :, 0].sum(1, keepdim=True)
    losses = []
    for _ in range(60):
        opt.zero_grad()
        loss = F.mse_loss(head(enc(x).mean(1)), y)
        loss.backward()
        opt.step()
        losses.append(float(loss))
    assert losses[-1] < 0.3 * losses[0]


def test_errors():
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")
    m = nn.Transformer(8, 2, 1, 1, 16)
    with pytest.raises(RuntimeError, match="must be equal to d_model"):
        m(torch.randn(3, 2, 8), torch.randn(3, 2, 6))
    with pytest.raises(RuntimeError, match="batch number of src and tgt"):
        m(torch.randn(3, 2, 8), torch.randn(3, 4, 8))


@pytest.mark.skipif(real_torch is None, reason="torch is not importable")
def test_match_torch_on_the_same_weights():
    rt = real_torch.nn
    cases = [(nn.TransformerEncoderLayer(8, 2, 16, batch_first=True, norm_first=True),
              rt.TransformerEncoderLayer(8, 2, 16, batch_first=True, norm_first=True)),
             (nn.Transformer(8, 2, 2, 1, 16), rt.Transformer(8, 2, 2, 1, 16))]
    rng = np.random.default_rng(4)
    for ours, theirs in cases:
        ours.double().eval()
        theirs.double().eval()
        ours.load_state_dict({k: torch.tensor(v.detach().numpy())
                              for k, v in theirs.state_dict().items()})
        a = rng.normal(size=(3, 4, 8))
        if isinstance(ours, nn.Transformer):
            b = rng.normal(size=(5, 4, 8))
            got = ours(torch.tensor(a), torch.tensor(b))
            want = theirs(real_torch.from_numpy(a), real_torch.from_numpy(b))
        else:
            got, want = ours(torch.tensor(a)), theirs(real_torch.from_numpy(a))
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-9,
                                   atol=1e-10)


@pytest.mark.cuda
def test_cuda_matches_cpu():
    torch.manual_seed(5)
    m = nn.Transformer(16, 4, 1, 1, 32, dropout=0.0, batch_first=True)
    src, tgt = torch.randn(2, 6, 16), torch.randn(2, 4, 16)
    ref = m(src, tgt).detach().numpy()
    m.cuda()
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        out = m(src.cuda(), tgt.cuda())
    finally:
        torch.backends.cuda.matmul.allow_tf32 = True
    np.testing.assert_allclose(out.detach().cpu().numpy(), ref, rtol=1e-4, atol=1e-5)
