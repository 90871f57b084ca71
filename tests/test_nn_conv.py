"""Convolution and pooling (nn/_functional_conv.py, nn/modules/conv.py):
values against NumPy references in float64 (sliding windows and einsum)
over strides, padding, dilation, groups, padding modes and ceil_mode;
gradients against central differences; errors and reprs; CUDA against the
CPU; torch on identical inputs where torch imports."""
import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import nn
from pycuda_sem.nn import functional as F

try:
    import torch as real_torch
except Exception:  # noqa: BLE001 - any import failure means no oracle
    real_torch = None

rng = np.random.default_rng(11)
swv = np.lib.stride_tricks.sliding_window_view


def t64(a, grad=False):
    return torch.tensor(np.asarray(a, dtype=np.float64), dtype=torch.float64, requires_grad=grad)


def np_windows(x, kernel, stride, dilation):
    """[N, C, *out, *kernel] windows of an already padded x."""
    d = len(kernel)
    span = tuple(dl * (k - 1) + 1 for k, dl in zip(kernel, dilation))
    w = swv(x, span, axis=tuple(range(2, 2 + d)))
    idx = (slice(None), slice(None)) + tuple(slice(None, None, s) for s in stride) \
        + tuple(slice(None, None, dl) for dl in dilation)
    return w[idx]


def np_conv(x, w, b, stride, padding, dilation, groups):
    d = w.ndim - 2
    x = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    win = np_windows(x, w.shape[2:], stride, dilation)
    n, c = x.shape[:2]
    o, cg = w.shape[:2]
    outs = []
    for g in range(groups):
        xw = win[:, g * cg:(g + 1) * cg]
        wg = w[g * (o // groups):(g + 1) * (o // groups)]
        letters = "defg"[:d]
        outs.append(np.einsum("nc%s%s,oc%s->no%s" % (letters, "hijk"[:d], "hijk"[:d], letters),
                              xw, wg))
    y = np.concatenate(outs, 1)
    if b is not None:
        y = y + b.reshape((1, -1) + (1,) * d)
    return y


@pytest.mark.parametrize("d,fn", [(1, F.conv1d), (2, F.conv2d), (3, F.conv3d)])
@pytest.mark.parametrize("stride,padding,dilation,groups,bias", [
    (1, 0, 1, 1, True), (2, 1, 1, 1, False), (1, 2, 2, 2, True), (3, 1, 2, 4, True)])
def test_conv_against_numpy(d, fn, stride, padding, dilation, groups, bias):
    spatial = {1: (11,), 2: (9, 8), 3: (7, 6, 8)}[d]
    kernel = {1: (3,), 2: (3, 2), 3: (2, 3, 2)}[d]
    x = rng.normal(size=(2, 4) + spatial)
    w = rng.normal(size=(8, 4 // groups) + kernel)
    b = rng.normal(size=8) if bias else None
    y = fn(t64(x), t64(w), None if b is None else t64(b), stride, padding, dilation, groups)
    ref = np_conv(x, w, b, (stride,) * d, (padding,) * d, (dilation,) * d, groups)
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-10, atol=1e-10)


def test_conv2d_unbatched_same_valid_and_padding_modes():
    x, w = rng.normal(size=(3, 7, 6)), rng.normal(size=(5, 3, 3, 4))
    y = F.conv2d(t64(x), t64(w), padding="same")
    assert y.shape == (5, 7, 6)
    # "same" with an even kernel: one more on the right, as torch
    ref = np_conv(np.pad(x[None], [(0, 0), (0, 0), (1, 1), (1, 2)]), w, None, (1, 1), (0, 0),
                  (1, 1), 1)[0]
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-10)
    assert F.conv2d(t64(x), t64(w), padding="valid").shape == (5, 5, 3)
    for mode, np_mode in (("reflect", "reflect"), ("replicate", "edge"), ("circular", "wrap")):
        m = nn.Conv2d(3, 5, (3, 4), padding=(1, 2), padding_mode=mode, bias=False).double()
        with torch.no_grad():
            m.weight.copy_(t64(w))
        ref = np_conv(np.pad(x[None], [(0, 0), (0, 0), (1, 1), (2, 2)], mode=np_mode), w, None,
                      (1, 1), (0, 0), (1, 1), 1)[0]
        np.testing.assert_allclose(m(t64(x)).detach().numpy(), ref, rtol=1e-10, err_msg=mode)


def _fd(fn, arrays, eps=1e-6):
    ts = [t64(a, True) for a in arrays]
    gy = rng.normal(size=fn(*ts).shape)
    (fn(*ts) * t64(gy)).sum().backward()
    for i, a in enumerate(arrays):
        num = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            hi = [np.array(v) for v in arrays]
            lo = [np.array(v) for v in arrays]
            hi[i][idx] += eps
            lo[i][idx] -= eps
            num[idx] = ((fn(*map(t64, hi)).numpy() - fn(*map(t64, lo)).numpy()) * gy).sum() / (
                2 * eps)
        np.testing.assert_allclose(ts[i].grad.numpy(), num, rtol=1e-5, atol=1e-7)


def test_conv_and_pool_gradients():
    x, w, b = rng.normal(size=(2, 2, 5, 4)), rng.normal(size=(4, 1, 2, 3)), rng.normal(size=4)
    _fd(lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=1, dilation=(1, 2), groups=2),
        [x, w, b])
    _fd(lambda x: F.max_pool2d(x, 2, stride=1, padding=1), [rng.normal(size=(1, 2, 4, 5))])
    _fd(lambda x: F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True,
                               count_include_pad=False), [rng.normal(size=(1, 2, 6, 5))])


def np_pool(x, k, s, p, dl, ceil, fill, d=2):
    extra = []
    for i in range(d):
        length = x.shape[2 + i]
        span = length + 2 * p - dl * (k - 1) - 1
        out = (-(-span // s) if ceil else span // s) + 1
        if ceil and (out - 1) * s >= length + p:
            out -= 1
        extra.append(max(0, (out - 1) * s + dl * (k - 1) + 1 - (length + 2 * p)))
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p + e) for e in extra], constant_values=fill)
    return np_windows(xp, (k,) * d, (s,) * d, (dl,) * d), extra


@pytest.mark.parametrize("k,s,p,dl,ceil", [(2, 2, 0, 1, False), (3, 2, 1, 1, True),
                                           (3, 1, 1, 2, False), (2, 3, 1, 1, True)])
def test_max_pool2d_against_numpy(k, s, p, dl, ceil):
    x = rng.normal(size=(2, 3, 7, 8))
    win, _ = np_pool(x, k, s, p, dl, ceil, -np.inf)
    y = F.max_pool2d(t64(x), k, s, p, dl, ceil_mode=ceil)
    np.testing.assert_allclose(y.numpy(), win.max((-2, -1)))
    m = nn.MaxPool2d(k, s, p, dl, ceil_mode=ceil)
    np.testing.assert_allclose(m(t64(x)).numpy(), win.max((-2, -1)))


@pytest.mark.parametrize("k,s,p,ceil,inc", [(2, 2, 0, False, True), (3, 2, 1, True, True),
                                            (3, 2, 1, True, False), (3, 1, 1, False, False)])
def test_avg_pool2d_against_numpy(k, s, p, ceil, inc):
    x = rng.normal(size=(2, 3, 7, 8))
    win, extra = np_pool(x, k, s, p, 1, ceil, 0.0)
    ones = np.ones((1, 1) + x.shape[2:])
    if inc:  # the padding counts, the ceil_mode overhang does not
        count_in = np.pad(ones, [(0, 0), (0, 0), (p, p), (p, p)], constant_values=1.0)
        count_in = np.pad(count_in, [(0, 0), (0, 0), (0, extra[0]), (0, extra[1])])
    else:
        count_in = np.pad(ones, [(0, 0), (0, 0), (p, p + extra[0]), (p, p + extra[1])])
    counts = np_windows(count_in, (k, k), (s, s), (1, 1)).sum((-2, -1))
    want = win.sum((-2, -1)) / counts
    y = F.avg_pool2d(t64(x), k, s, p, ceil_mode=ceil, count_include_pad=inc)
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-12)
    assert np.allclose(F.avg_pool2d(t64(x), k, s, p, divisor_override=2).numpy(),
                       np_pool(x, k, s, p, 1, False, 0.0)[0].sum((-2, -1)) / 2)


def test_adaptive_avg_pool_bins():
    x = rng.normal(size=(2, 3, 7, 10))
    y = F.adaptive_avg_pool2d(t64(x), (3, 4)).numpy()
    for i in range(3):
        for j in range(4):
            h0, h1 = (i * 7) // 3, -(-((i + 1) * 7) // 3)
            w0, w1 = (j * 10) // 4, -(-((j + 1) * 10) // 4)
            np.testing.assert_allclose(y[:, :, i, j], x[:, :, h0:h1, w0:w1].mean((-2, -1)))
    np.testing.assert_allclose(nn.AdaptiveAvgPool2d(1)(t64(x)).numpy(),
                               x.mean((-2, -1), keepdims=True))
    np.testing.assert_allclose(F.adaptive_avg_pool1d(t64(x[:, :, 0]), 5).numpy(),
                               x[:, :, 0].reshape(2, 3, 5, 2).mean(-1))


def test_a_small_cnn_trains():
    torch.manual_seed(0)
    m = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Conv2d(4, 8, 3), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 2))
    x = torch.randn(16, 1, 8, 8)
    y = (x[:, 0, :4].sum((1, 2)) > x[:, 0, 4:].sum((1, 2))).long()
    opt = torch.optim.Adam(m.parameters(), lr=0.02)
    losses = []
    for _ in range(60):
        opt.zero_grad()
        loss = F.cross_entropy(m(x), y)
        loss.backward()
        opt.step()
        losses.append(float(loss))
    assert losses[-1] < 0.5 * losses[0]


def test_errors_and_reprs():
    with pytest.raises(RuntimeError, match="expected input.*to have 4 channels, but got 3"):
        F.conv2d(torch.randn(1, 3, 5, 5), torch.randn(2, 2, 3, 3), groups=2)
    with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\) input"):
        F.conv2d(torch.randn(5, 5), torch.randn(2, 1, 3, 3))
    with pytest.raises(RuntimeError, match="too small"):
        F.conv2d(torch.randn(1, 1, 2, 2), torch.randn(1, 1, 3, 3))
    with pytest.raises(ValueError, match="not supported for strided convolutions"):
        nn.Conv2d(1, 1, 3, stride=2, padding="same")
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        nn.Conv1d(1, 1, 3, padding_mode="mirror")
    with pytest.raises(RuntimeError, match="pad should be at most half"):
        F.max_pool2d(torch.randn(1, 1, 5, 5), 2, padding=2)
    _, idx = F.max_pool2d(torch.randn(1, 1, 4, 4), 2, return_indices=True)
    assert idx.dtype == torch.int64 and tuple(idx.shape) == (1, 1, 2, 2)
    assert repr(nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False)) == (
        "Conv2d(3, 8, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), bias=False)")
    assert repr(nn.Conv1d(2, 4, 5, padding="same", dilation=2, groups=2,
                          padding_mode="reflect")) == (
        "Conv1d(2, 4, kernel_size=(5,), stride=(1,), padding=same, dilation=(2,), groups=2, "
        "padding_mode=reflect)")
    assert repr(nn.AvgPool2d(2)) == "AvgPool2d(kernel_size=2, stride=2, padding=0)"
    w = nn.Conv2d(4, 6, 3).weight
    bound = 1 / np.sqrt(4 * 9)  # kaiming_uniform(a=sqrt(5)): 1/sqrt(fan_in)
    assert w.shape == (6, 4, 3, 3) and float(w.abs().max()) <= bound


@pytest.mark.skipif(real_torch is None, reason="torch is not importable")
def test_match_torch():
    rt = real_torch.nn.functional
    x = rng.normal(size=(2, 4, 9, 7))
    w = rng.normal(size=(6, 2, 3, 2))
    tx, tw = real_torch.from_numpy(x), real_torch.from_numpy(w)
    np.testing.assert_allclose(
        F.conv2d(t64(x), t64(w), stride=(2, 1), padding=(1, 2), dilation=(2, 1), groups=2).numpy(),
        rt.conv2d(tx, tw, stride=(2, 1), padding=(1, 2), dilation=(2, 1), groups=2).numpy(),
        rtol=1e-10, atol=1e-10)
    for k, s, p, ceil in ((3, 2, 1, True), (2, 3, 1, True), (3, 2, 0, False)):
        np.testing.assert_allclose(F.max_pool2d(t64(x), k, s, p, ceil_mode=ceil).numpy(),
                                   rt.max_pool2d(tx, k, s, p, ceil_mode=ceil).numpy())
        for inc in (True, False):
            np.testing.assert_allclose(
                F.avg_pool2d(t64(x), k, s, p, ceil_mode=ceil, count_include_pad=inc).numpy(),
                rt.avg_pool2d(tx, k, s, p, ceil_mode=ceil, count_include_pad=inc).numpy(),
                rtol=1e-12)
    np.testing.assert_allclose(F.adaptive_avg_pool2d(t64(x), (4, 3)).numpy(),
                               rt.adaptive_avg_pool2d(tx, (4, 3)).numpy(), rtol=1e-12)
    for ours, theirs in ((nn.Conv2d(3, 8, 3, padding="same", padding_mode="circular"),
                          real_torch.nn.Conv2d(3, 8, 3, padding="same", padding_mode="circular")),
                         (nn.MaxPool2d(3, 2, 1, ceil_mode=True),
                          real_torch.nn.MaxPool2d(3, 2, 1, ceil_mode=True))):
        assert repr(ours) == repr(theirs)


@pytest.mark.cuda
def test_cuda_matches_cpu():
    torch.manual_seed(1)
    m = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, groups=1), nn.ReLU(),
                      nn.MaxPool2d(2, ceil_mode=True), nn.Conv2d(8, 4, 3, stride=2),
                      nn.AvgPool2d(2, padding=1, count_include_pad=False))
    x = torch.randn(4, 3, 13, 11)
    ref = m(x).detach().numpy()
    m.cuda()
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        out = m(x.cuda())
    finally:
        torch.backends.cuda.matmul.allow_tf32 = True
    np.testing.assert_allclose(out.detach().cpu().numpy(), ref, rtol=1e-4, atol=1e-5)
    out.sum().backward()
    assert m[0].weight.grad.is_cuda


# ---- transposed convolutions --------------------------------------------------------------


def np_conv_transpose(x, w, b, stride, padding, output_padding, groups, dilation):
    """The definition: every input element scatters weight * value into the
    output at stride spacing, then padding is cropped from both ends."""
    d = x.ndim - 2
    n, cin = x.shape[:2]
    cout_g = w.shape[1]
    kernel = w.shape[2:]
    full = [(x.shape[2 + i] - 1) * stride[i] + dilation[i] * (kernel[i] - 1) + 1
            + output_padding[i] for i in range(d)]
    out = np.zeros((n, cout_g * groups) + tuple(full))
    cin_g = cin // groups
    for ci in range(cin):
        g = ci // cin_g
        for pos in np.ndindex(*x.shape[2:]):
            for kpos in np.ndindex(*kernel):
                at = tuple(pos[i] * stride[i] + kpos[i] * dilation[i] for i in range(d))
                sl = (slice(None), slice(g * cout_g, (g + 1) * cout_g)) + at
                out[sl] += x[(slice(None), ci) + pos][:, None] * w[(ci, slice(None)) + kpos]
    crop = (slice(None), slice(None)) + tuple(
        slice(padding[i], full[i] - padding[i]) for i in range(d))
    out = out[crop]
    if b is not None:
        out = out + b.reshape((1, -1) + (1,) * d)
    return out


@pytest.mark.parametrize("d,fn", [(1, F.conv_transpose1d), (2, F.conv_transpose2d)])
@pytest.mark.parametrize("stride,padding,output_padding,groups,dilation", [
    (1, 0, 0, 1, 1), (2, 1, 1, 1, 1), (3, 1, 2, 2, 1), (2, 2, 0, 2, 2)])
def test_conv_transpose_against_numpy(d, fn, stride, padding, output_padding, groups, dilation):
    spatial = {1: (5,), 2: (4, 3)}[d]
    kernel = {1: (3,), 2: (3, 2)}[d]
    x = rng.normal(size=(2, 4) + spatial)
    w = rng.normal(size=(4, 3) + kernel)
    b = rng.normal(size=3 * groups)
    y = fn(t64(x), t64(w), t64(b), stride, padding, output_padding, groups, dilation)
    ref = np_conv_transpose(x, w, b, (stride,) * d, (padding,) * d, (output_padding,) * d,
                            groups, (dilation,) * d)
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-10, atol=1e-10)


def test_conv_transpose_gradient_module_and_errors():
    _fd(lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1),
        [rng.normal(size=(1, 2, 2, 3)), rng.normal(size=(2, 2, 3, 3))])
    m = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2)
    assert m.weight.shape == (4, 3, 3, 3) and m.bias.shape == (6,)
    x = torch.randn(1, 4, 5, 5)
    assert m(x).shape == (1, 6, 10, 10) and m(x, output_size=(9, 9)).shape == (1, 6, 9, 9)
    assert repr(m) == ("ConvTranspose2d(4, 6, kernel_size=(3, 3), stride=(2, 2), "
                       "padding=(1, 1), output_padding=(1, 1), groups=2)")
    with pytest.raises(ValueError, match="valid sizes range"):
        m(x, output_size=(12, 12))
    with pytest.raises(RuntimeError, match="output padding must be smaller"):
        F.conv_transpose2d(x, torch.randn(4, 3, 3, 3), stride=1, output_padding=1)
    with pytest.raises(ValueError, match='Only "zeros" padding mode'):
        nn.ConvTranspose1d(2, 2, 3, padding_mode="reflect")


@pytest.mark.skipif(real_torch is None, reason="torch is not importable")
def test_conv_transpose_matches_torch():
    x = rng.normal(size=(2, 4, 5, 6))
    w = rng.normal(size=(4, 3, 3, 2))
    got = F.conv_transpose2d(t64(x), t64(w), stride=(2, 3), padding=(1, 0), output_padding=(1, 2),
                             groups=2, dilation=(1, 1)).numpy()
    want = real_torch.nn.functional.conv_transpose2d(
        real_torch.from_numpy(x), real_torch.from_numpy(w), stride=(2, 3), padding=(1, 0),
        output_padding=(1, 2), groups=2).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
    assert repr(nn.ConvTranspose2d(4, 6, 3, stride=2)) == repr(
        real_torch.nn.ConvTranspose2d(4, 6, 3, stride=2))
