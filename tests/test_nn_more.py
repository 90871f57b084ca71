"""The smaller layers: pointwise activations (hardswish ... rrelu, PReLU),
cosine similarity and pairwise distance, the padding layers, instance norm,
adaptive max pooling and pixel (un)shuffle: values against NumPy formulas,
a gradient check, reprs and errors; torch's modules on the same inputs where
torch imports; CUDA against CPU."""
import re

import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import nn
from pycuda_sem.nn import functional as F

try:
    import torch as real_torch
except Exception:  # noqa: BLE001 - any import failure means no oracle
    real_torch = None

rng = np.random.default_rng(8)
X = rng.normal(scale=3.0, size=(4, 6))


def t64(a, grad=False):
    return torch.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


ACTS = [
    ("hardswish", lambda x: F.hardswish(x), lambda a: a * np.clip(a + 3, 0, 6) / 6),
    ("hardsigmoid", lambda x: F.hardsigmoid(x), lambda a: np.clip(a + 3, 0, 6) / 6),
    ("softsign", F.softsign, lambda a: a / (1 + np.abs(a))),
    ("tanhshrink", F.tanhshrink, lambda a: a - np.tanh(a)),
    ("threshold", lambda x: F.threshold(x, 0.5, -2.0), lambda a: np.where(a > 0.5, a, -2.0)),
    ("celu", lambda x: F.celu(x, 1.5), lambda a: np.where(a > 0, a, 1.5 * np.expm1(a / 1.5))),
    ("softshrink", lambda x: F.softshrink(x, 1.0),
     lambda a: np.where(a > 1, a - 1, np.where(a < -1, a + 1, 0.0))),
    ("hardshrink", lambda x: F.hardshrink(x, 1.0), lambda a: np.where(np.abs(a) > 1, a, 0.0)),
    ("glu", lambda x: F.glu(x, -1), lambda a: a[:, :3] / (1 + np.exp(-a[:, 3:]))),
    ("rrelu_eval", lambda x: F.rrelu(x, 0.1, 0.3), lambda a: np.where(a >= 0, a, 0.2 * a)),
]


@pytest.mark.parametrize("name,fn,ref", ACTS, ids=[a[0] for a in ACTS])
def test_activations_against_numpy(name, fn, ref):
    np.testing.assert_allclose(fn(t64(X)).numpy(), ref(X), rtol=1e-12, atol=1e-12)


def test_prelu_rrelu_training_and_gradient():
    m = nn.PReLU(3).double()
    x = rng.normal(size=(2, 3, 4))
    w = np.array([0.25, 0.25, 0.25])
    np.testing.assert_allclose(m(t64(x)).detach().numpy(),
                               np.where(x > 0, x, w.reshape(1, 3, 1) * x), rtol=1e-12)
    xt = t64(x, True)
    m(xt).sum().backward()
    np.testing.assert_allclose(m.weight.grad.numpy(), np.where(x > 0, 0, x).sum((0, 2)))
    with pytest.raises(RuntimeError, match="Mismatch of parameter numbers"):
        F.prelu(torch.randn(2, 4), torch.ones(3))
    torch.manual_seed(0)
    y = F.rrelu(t64(-np.ones((1000,))), 0.1, 0.3, training=True).numpy()
    assert -0.3 <= y.min() and y.max() <= -0.1 and y.std() > 0.03


def test_distances():
    a, b = rng.normal(size=(5, 7)), rng.normal(size=(5, 7))
    cos = (a * b).sum(1) / np.sqrt((a * a).sum(1) * (b * b).sum(1))
    np.testing.assert_allclose(F.cosine_similarity(t64(a), t64(b)).numpy(), cos, rtol=1e-12)
    np.testing.assert_allclose(nn.CosineSimilarity(dim=0)(t64(a), t64(b[:1])).numpy(),
                               F.cosine_similarity(t64(a), t64(np.repeat(b[:1], 5, 0)), 0),
                               rtol=1e-12)
    for p in (1.0, 2.0, 3.0):
        want = (np.abs(a - b + 1e-6) ** p).sum(1) ** (1 / p)
        np.testing.assert_allclose(nn.PairwiseDistance(p)(t64(a), t64(b)).numpy(), want,
                                   rtol=1e-12)
    assert F.pairwise_distance(t64(a), t64(b), keepdim=True).shape == (5, 1)


def test_padding_layers():
    x = rng.normal(size=(1, 2, 3, 4))
    pads = (1, 2, 0, 1)  # left, right, top, bottom
    npad = [(0, 0), (0, 0), (0, 1), (1, 2)]
    for layer, mode, kw in ((nn.ZeroPad2d(pads), "constant", {}),
                            (nn.ConstantPad2d(pads, 2.5), "constant", {"constant_values": 2.5}),
                            (nn.ReflectionPad2d(pads), "reflect", {}),
                            (nn.ReplicationPad2d(pads), "edge", {}),
                            (nn.CircularPad2d(pads), "wrap", {})):
        np.testing.assert_allclose(layer(t64(x)).numpy(), np.pad(x, npad, mode=mode, **kw),
                                   err_msg=type(layer).__name__)
    assert nn.ReflectionPad1d(2)(t64(x[0])).shape == (2, 3, 8)
    assert repr(nn.ZeroPad2d((1, 1, 2, 0))) == "ZeroPad2d((1, 1, 2, 0))"
    assert repr(nn.ConstantPad1d(2, 3.5)) == "ConstantPad1d(padding=(2, 2), value=3.5)"
    with pytest.raises(ValueError, match="expects padding of 4 ints"):
        nn.ZeroPad2d((1, 2))


def test_instance_norm():
    x = rng.normal(2.0, 3.0, size=(3, 4, 5, 6))
    m = nn.InstanceNorm2d(4).double()
    mean, var = x.mean((2, 3), keepdims=True), x.var((2, 3), keepdims=True)
    np.testing.assert_allclose(m(t64(x)).numpy(), (x - mean) / np.sqrt(var + 1e-5), rtol=1e-10,
                               atol=1e-12)
    tracked = nn.InstanceNorm1d(4, affine=True, track_running_stats=True).double()
    y = rng.normal(size=(3, 4, 9))
    tracked(t64(y))
    np.testing.assert_allclose(tracked.running_mean.numpy(), 0.1 * y.mean(2).mean(0), rtol=1e-10)
    assert nn.InstanceNorm1d(4)(t64(y[0])).shape == (4, 9)  # unbatched
    assert repr(nn.InstanceNorm2d(8)) == ("InstanceNorm2d(8, eps=1e-05, momentum=0.1, "
                                          "affine=False, track_running_stats=False)")


def test_adaptive_max_pool_and_pixel_shuffle():
    x = rng.normal(size=(2, 3, 7, 10))
    y = F.adaptive_max_pool2d(t64(x), (3, 4)).numpy()
    for i in range(3):
        for j in range(4):
            h0, h1 = (i * 7) // 3, -(-((i + 1) * 7) // 3)
            w0, w1 = (j * 10) // 4, -(-((j + 1) * 10) // 4)
            np.testing.assert_allclose(y[:, :, i, j], x[:, :, h0:h1, w0:w1].max((-2, -1)))
    s = rng.normal(size=(2, 8, 3, 5))
    up = nn.PixelShuffle(2)(t64(s)).numpy()
    assert up.shape == (2, 2, 6, 10)
    # out[n, c, h*r + i, w*r + j] = in[n, c*r*r + i*r + j, h, w]
    assert up[1, 1, 3, 4] == s[1, 1 * 4 + 1 * 2 + 0, 1, 2]
    np.testing.assert_allclose(nn.PixelUnshuffle(2)(t64(up)).numpy(), s)
    with pytest.raises(RuntimeError, match="divisible by the square of upscale_factor"):
        F.pixel_shuffle(torch.randn(1, 6, 2, 2), 2)


@pytest.mark.skipif(real_torch is None, reason="torch is not importable")
def test_match_torch():
    rt = real_torch.nn
    x = rng.normal(size=(2, 4, 5, 6))
    pairs = [(nn.Hardswish(), rt.Hardswish()), (nn.Hardsigmoid(), rt.Hardsigmoid()),
             (nn.CELU(0.7), rt.CELU(0.7)), (nn.Softshrink(0.3), rt.Softshrink(0.3)),
             (nn.GLU(1), rt.GLU(1)), (nn.PReLU(4), rt.PReLU(4)),
             (nn.InstanceNorm2d(4, affine=True), rt.InstanceNorm2d(4, affine=True)),
             (nn.ReflectionPad2d((1, 2, 2, 1)), rt.ReflectionPad2d((1, 2, 2, 1))),
             (nn.AdaptiveMaxPool2d((2, 4)), rt.AdaptiveMaxPool2d((2, 4))),
             (nn.PixelUnshuffle(1), rt.PixelUnshuffle(1)), (nn.Softmax2d(), rt.Softmax2d())]
    for ours, theirs in pairs:
        got = ours.double()(t64(x)).detach().numpy()
        want = theirs.double()(real_torch.from_numpy(x)).detach().numpy()
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12, err_msg=repr(ours))
        # torch 2.15 prints the norm layers' bias=True; 2.11, as we do
        assert repr(ours) == re.sub(r"(affine=(?:True|False)), bias=(?:True|False)", r"\1", repr(theirs))


@pytest.mark.cuda
def test_cuda_matches_cpu():
    x = torch.randn(2, 4, 6, 6)
    for m in (nn.Hardswish(), nn.PReLU(4), nn.InstanceNorm2d(4), nn.ReplicationPad2d(2),
              nn.AdaptiveMaxPool2d(3), nn.PixelShuffle(2)):
        ref = m(x).detach().numpy()
        got = m.cuda()(x.cuda()).detach().cpu().numpy()
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6, err_msg=repr(m))
