"""FractionalMaxPool2d/3d and F.fractional_max_pool2d/3d (windows, values,
indices and gradients against a NumPy loop reference of torch's interval
rule and against torch with the same _random_samples), CrossMapLRN2d
(values against a NumPy reference and torch, gradient against central
differences), AdaptiveLogSoftmaxWithLoss (against a NumPy full softmax and
torch on the same weights), RNNCellBase, F.native_channel_shuffle and
nn.utils.convert_conv2d/3d_weight_memory_format."""
import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import nn
from pycuda_sem.nn import functional as F
from torch_oracle import _torch as real_torch

pytestmark = pytest.mark.usefixtures("no_tf32")
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
rng = np.random.default_rng(21)


def np_starts(sample, n_in, n_out, k):
    if n_out == 1:
        return [n_in - k]
    alpha = (n_in - k) / (n_out - 1)
    return [int((i + sample) * alpha) - int(sample * alpha) for i in range(n_out - 1)] + [n_in - k]


def np_frac(x, k, out, samples):
    """Loop reference: x [N, C, *S]; samples [N, C, d] (2-D reads them as (w, h))."""
    d = len(out)
    n, c = x.shape[:2]
    y = np.zeros((n, c) + out)
    ind = np.zeros((n, c) + out, dtype=np.int64)
    for b in range(n):
        for ch in range(c):
            s = samples[b, ch][::-1] if d == 2 else samples[b, ch]
            starts = [np_starts(s[j], x.shape[2 + j], out[j], k[j]) for j in range(d)]
            for o in np.ndindex(*out):
                sl = tuple(slice(starts[j][o[j]], starts[j][o[j]] + k[j]) for j in range(d))
                win = x[b, ch][sl]
                a = np.unravel_index(np.argmax(win), win.shape)
                pos = tuple(starts[j][o[j]] + a[j] for j in range(d))
                y[(b, ch) + o] = win[a]
                ind[(b, ch) + o] = np.ravel_multi_index(pos, x.shape[2:])
    return y, ind


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("d,shape,k,out", [(2, (2, 3, 11, 9), (3, 2), (5, 4)),
                                           (2, (1, 2, 6, 6), 2, (5, 5)),
                                           (2, (2, 2, 7, 5), 2, (1, 2)),
                                           (3, (2, 2, 7, 8, 9), (2, 3, 2), (3, 4, 6))])
def test_fractional_max_pool(device, d, shape, k, out):
    x = rng.standard_normal(shape)
    samples = rng.random(shape[:2] + (d,))
    kt = k if isinstance(k, tuple) else (k,) * d
    fn = F.fractional_max_pool2d if d == 2 else F.fractional_max_pool3d
    a = torch.tensor(x, device=device, requires_grad=True)
    y, ind = fn(a, k, output_size=out, return_indices=True,
                _random_samples=torch.tensor(samples, device=device))
    ry, rind = np_frac(x, kt, out, samples)
    np.testing.assert_array_equal(y.detach().cpu().numpy(), ry)
    np.testing.assert_array_equal(ind.cpu().numpy(), rind)
    g = rng.standard_normal(ry.shape)
    (y * torch.tensor(g, device=device)).sum().backward()
    rg = np.zeros(x.shape).reshape(shape[:2] + (-1,))
    for idx in np.ndindex(*ry.shape):
        rg[idx[0], idx[1], rind[idx]] += g[idx]
    np.testing.assert_allclose(a.grad.cpu().numpy(), rg.reshape(shape), rtol=1e-14)
    # unbatched gives the first batch entry
    y1 = fn(a.detach()[0], k, output_size=out,
            _random_samples=torch.tensor(samples[:1], device=device))
    np.testing.assert_array_equal(y1.cpu().numpy(), ry[0])
    if real_torch is not None:
        tfn = getattr(real_torch.nn.functional, fn.__name__)
        for dt in ("float32", "float64"):
            ty, tind = tfn(real_torch.tensor(x, dtype=getattr(real_torch, dt)), k,
                           output_size=out, return_indices=True,
                           _random_samples=real_torch.tensor(samples,
                                                             dtype=getattr(real_torch, dt)))
            my, mind = fn(torch.tensor(x, dtype=getattr(torch, dt), device=device), k,
                          output_size=out, return_indices=True,
                          _random_samples=torch.tensor(samples, dtype=getattr(torch, dt),
                                                       device=device))
            np.testing.assert_array_equal(my.cpu().numpy(), ty.numpy())
            np.testing.assert_array_equal(mind.cpu().numpy(), tind.numpy())


def test_fractional_module_and_errors():
    m = nn.FractionalMaxPool2d(3, output_ratio=(0.5, 0.5))
    assert m.kernel_size == (3, 3) and m.output_ratio == (0.5, 0.5) and m.output_size is None
    x = torch.tensor(rng.standard_normal((2, 3, 10, 12)))
    y = m(x)
    assert tuple(y.shape) == (2, 3, 5, 6)
    m3 = nn.FractionalMaxPool3d(2, output_size=3, return_indices=True)
    y, i = m3(torch.tensor(rng.standard_normal((1, 2, 6, 6, 6))))
    assert tuple(y.shape) == tuple(i.shape) == (1, 2, 3, 3, 3) and i.dtype == torch.int64
    with pytest.raises(ValueError, match="either an output size"):
        nn.FractionalMaxPool2d(2)
    with pytest.raises(ValueError, match="only one of"):
        nn.FractionalMaxPool2d(2, output_size=3, output_ratio=0.5)
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.FractionalMaxPool2d(2, output_ratio=1.5)
    with pytest.raises(RuntimeError, match="too large"):
        F.fractional_max_pool2d(x, 4, output_size=(9, 9))
    with pytest.raises(ValueError, match="output_size or an output_ratio"):
        F.fractional_max_pool2d(x, 2)


def np_crossmap(x, size, alpha, beta, k):
    c = x.shape[1]
    sq = x ** 2
    pre = int((size - 1) / 2 + 1)
    scale = np.zeros_like(x)
    scale[:, 0] = sq[:, :min(pre, c)].sum(1)
    for ch in range(1, c):
        scale[:, ch] = scale[:, ch - 1]
        if ch < c - pre + 1:
            scale[:, ch] += sq[:, ch + pre - 1]
        if ch > pre:
            scale[:, ch] -= sq[:, ch - pre]
    return x * (scale * alpha / size + k) ** -beta


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("channels,size", [(7, 3), (7, 2), (2, 5), (6, 1), (9, 4)])
def test_cross_map_lrn2d(device, channels, size):
    x = rng.standard_normal((2, channels, 3, 4))
    m = nn.CrossMapLRN2d(size, alpha=0.5, beta=0.7, k=1.5)
    assert repr(m) == "CrossMapLRN2d(%d, alpha=0.5, beta=0.7, k=1.5)" % size
    a = torch.tensor(x, device=device, requires_grad=True)
    y = m(a)
    np.testing.assert_allclose(y.detach().cpu().numpy(), np_crossmap(x, size, 0.5, 0.7, 1.5),
                               rtol=1e-13)
    if real_torch is not None:
        ty = real_torch.nn.CrossMapLRN2d(size, alpha=0.5, beta=0.7, k=1.5)(real_torch.tensor(x))
        np.testing.assert_allclose(y.detach().cpu().numpy(), ty.numpy(), rtol=1e-13)
    g = rng.standard_normal(x.shape)
    (y * torch.tensor(g, device=device)).sum().backward()
    num = np.zeros_like(x)
    eps = 1e-6
    for idx in np.ndindex(*x.shape):
        xp, xm = x.copy(), x.copy()
        xp[idx] += eps
        xm[idx] -= eps
        num[idx] = ((np_crossmap(xp, size, 0.5, 0.7, 1.5) - np_crossmap(xm, size, 0.5, 0.7, 1.5))
                    * g).sum() / (2 * eps)
    np.testing.assert_allclose(a.grad.cpu().numpy(), num, rtol=1e-6, atol=1e-8)
    with pytest.raises(ValueError, match="Expected input to be 4D"):
        m(torch.ones(2, 3, 4))


def np_log_softmax(v):
    v = v - v.max(1, keepdims=True)
    return v - np.log(np.exp(v).sum(1, keepdims=True))


@pytest.mark.parametrize("device", DEVICES)
def test_adaptive_log_softmax(device):
    torch.manual_seed(0)
    m = nn.AdaptiveLogSoftmaxWithLoss(16, 20, [4, 10, 15], div_value=2.0, head_bias=True,
                                      dtype=torch.float64).to(device)
    assert [tuple(p.shape) for p in m.parameters()] == [(7, 16), (7,), (8, 16), (6, 8),
                                                       (4, 16), (5, 4), (2, 16), (5, 2)]
    x = rng.standard_normal((9, 16))
    target = np.array([0, 3, 4, 9, 10, 14, 15, 19, 2])
    sd = {k: v.cpu().numpy() for k, v in m.state_dict().items()}
    head = np_log_softmax(x @ sd["head.weight"].T + sd["head.bias"])
    full = [head[:, :4]]
    for i in range(3):
        h = x @ sd["tail.%d.0.weight" % i].T @ sd["tail.%d.1.weight" % i].T
        full.append(np_log_softmax(h) + head[:, 4 + i:5 + i])
    full = np.concatenate(full, 1)
    xa = torch.tensor(x, device=device, requires_grad=True)
    out, loss = m(xa, torch.tensor(target, device=device))
    np.testing.assert_allclose(out.detach().cpu().numpy(), full[np.arange(9), target], rtol=1e-12)
    np.testing.assert_allclose(float(loss), -full[np.arange(9), target].mean(), rtol=1e-12)
    np.testing.assert_allclose(m.log_prob(xa).detach().cpu().numpy(), full, rtol=1e-12)
    np.testing.assert_array_equal(m.predict(xa).cpu().numpy(), full.argmax(1))
    np.testing.assert_allclose(np.exp(full).sum(1), 1.0, rtol=1e-12)
    loss.backward()
    o1, l1 = m(xa[0].detach(), torch.tensor(target[0], device=device))
    assert o1.dim() == 0
    np.testing.assert_allclose(float(o1), full[0, target[0]], rtol=1e-12)
    if real_torch is not None:
        tm = real_torch.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [4, 10, 15], div_value=2.0,
                                                      head_bias=True, dtype=real_torch.float64)
        tm.load_state_dict({k: real_torch.tensor(v) for k, v in sd.items()})
        tx = real_torch.tensor(x, requires_grad=True)
        tout, tloss = tm(tx, real_torch.tensor(target))
        tloss.backward()
        np.testing.assert_allclose(out.detach().cpu().numpy(), tout.detach().numpy(), rtol=1e-12)
        np.testing.assert_allclose(xa.grad.cpu().numpy(), tx.grad.numpy(), rtol=1e-10)
        for (name, p), tp in zip(m.named_parameters(), tm.parameters()):
            np.testing.assert_allclose(p.grad.cpu().numpy(), tp.grad.numpy(), rtol=1e-10,
                                       err_msg=name)
    with pytest.raises(ValueError, match="cutoffs should be"):
        nn.AdaptiveLogSoftmaxWithLoss(16, 20, [4, 4])
    with pytest.raises(RuntimeError, match="Target values should be in"):
        m(xa, torch.tensor([20] * 9, device=device))


def test_rnn_cell_base_channel_shuffle_memory_format():
    for cell in (nn.RNNCell(3, 4), nn.LSTMCell(3, 4), nn.GRUCell(3, 4)):
        assert isinstance(cell, nn.RNNCellBase)
    assert tuple(nn.LSTMCell(3, 4).weight_ih.shape) == (16, 3)
    base = nn.RNNCellBase(3, 5, True, num_chunks=2)
    assert tuple(base.weight_hh.shape) == (10, 5) and tuple(base.bias_ih.shape) == (10,)
    x = torch.tensor(rng.standard_normal((2, 6, 3, 3)))
    np.testing.assert_array_equal(F.native_channel_shuffle(x, 3).numpy(),
                                  F.channel_shuffle(x, 3).numpy())
    net = nn.Sequential(nn.Conv2d(3, 4, 3), nn.Sequential(nn.ConvTranspose2d(4, 2, 2)),
                        nn.Conv3d(2, 2, 1))
    ws = [net[0].weight, net[1][0].weight, net[2].weight]
    vals = [w.detach().numpy().copy() for w in ws]
    nn.utils.convert_conv2d_weight_memory_format(net, torch.channels_last)
    assert net[0].weight is ws[0] and net[1][0].weight is ws[1]
    assert net[0].weight.is_contiguous(memory_format=torch.channels_last)
    assert not net[0].weight.is_contiguous()
    assert net[1][0].weight.is_contiguous(memory_format=torch.channels_last)
    assert net[2].weight.is_contiguous()  # 3-D conv untouched
    nn.utils.convert_conv3d_weight_memory_format(net, torch.channels_last_3d)
    assert net[2].weight.is_contiguous(memory_format=torch.channels_last_3d)
    for w, v in zip(ws, vals):
        np.testing.assert_array_equal(w.detach().numpy(), v)
