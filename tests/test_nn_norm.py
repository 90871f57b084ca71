"""BatchNorm1d/2d/3d and GroupNorm (and F.batch_norm / F.group_norm):
outputs and running statistics against NumPy in float64, gradients against
central differences, torch's momentum rules, errors and reprs; on CUDA
against the CPU; against torch on identical inputs where torch imports."""
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

rng = np.random.default_rng(5)


def t64(a, grad=False):
    return torch.tensor(np.asarray(a, dtype=np.float64), dtype=torch.float64, requires_grad=grad)


def np_bn(x, w, b, eps=1e-5):
    dims = (0,) + tuple(range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    mean, var = x.mean(dims, keepdims=True), x.var(dims, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w.reshape(shape) + b.reshape(shape)


@pytest.mark.parametrize("cls,shape", [(nn.BatchNorm1d, (6, 3)), (nn.BatchNorm1d, (4, 3, 5)),
                                       (nn.BatchNorm2d, (2, 3, 4, 5)),
                                       (nn.BatchNorm3d, (2, 3, 2, 2, 3))])
def test_batch_norm_training_eval_and_running_stats(cls, shape):
    bn = cls(3, momentum=0.2).double()
    w, b = rng.normal(size=3), rng.normal(size=3)
    with torch.no_grad():
        bn.weight.copy_(t64(w))
        bn.bias.copy_(t64(b))
    xs = [rng.normal(2.0, 3.0, size=shape) for _ in range(3)]
    rm, rv = np.zeros(3), np.ones(3)
    dims = (0,) + tuple(range(2, len(shape)))
    n = np.prod([shape[d] for d in dims])
    for x in xs:
        out = bn(t64(x))
        np.testing.assert_allclose(out.detach().numpy(), np_bn(x, w, b), rtol=1e-10, atol=1e-12)
        rm = 0.8 * rm + 0.2 * x.mean(dims)
        rv = 0.8 * rv + 0.2 * x.var(dims) * n / (n - 1)  # the unbiased variance, as torch
    np.testing.assert_allclose(bn.running_mean.numpy(), rm, rtol=1e-12)
    np.testing.assert_allclose(bn.running_var.numpy(), rv, rtol=1e-12)
    assert int(bn.num_batches_tracked) == 3
    bn.eval()
    x = rng.normal(size=shape)
    sh = (1, -1) + (1,) * (len(shape) - 2)
    want = (x - rm.reshape(sh)) / np.sqrt(rv.reshape(sh) + 1e-5) * w.reshape(sh) + b.reshape(sh)
    np.testing.assert_allclose(bn(t64(x)).detach().numpy(), want, rtol=1e-10, atol=1e-12)
    assert int(bn.num_batches_tracked) == 3  # eval does not count
    assert set(bn.state_dict()) == {"weight", "bias", "running_mean", "running_var",
                                    "num_batches_tracked"}


def test_momentum_none_is_a_cumulative_average():
    bn = nn.BatchNorm1d(2, momentum=None).double()
    xs = [rng.normal(size=(5, 2)) for _ in range(4)]
    for x in xs:
        bn(t64(x))
    np.testing.assert_allclose(bn.running_mean.numpy(), np.mean([x.mean(0) for x in xs], 0),
                               rtol=1e-12)


def test_without_running_stats_and_affine():
    bn = nn.BatchNorm1d(3, affine=False, track_running_stats=False).double()
    assert bn.weight is None and bn.running_mean is None and list(bn.parameters()) == []
    x = rng.normal(size=(7, 3))
    bn.eval()  # no running statistics: the batch's, as torch
    np.testing.assert_allclose(bn(t64(x)).numpy(), np_bn(x, np.ones(3), np.zeros(3)), rtol=1e-10)


def test_batch_norm_gradients():
    x, w, b = rng.normal(size=(4, 3, 2)), rng.normal(size=3), rng.normal(size=3)
    ts = [t64(a, True) for a in (x, w, b)]
    gy = t64(rng.normal(size=(4, 3, 2)))
    (F.batch_norm(ts[0], None, None, ts[1], ts[2], training=True) * gy).sum().backward()
    eps = 1e-6
    for i, a in enumerate((x, w, b)):
        num = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            args = [np.array(v) for v in (x, w, b)]
            args[i][idx] += eps
            hi = float((F.batch_norm(*map(t64, args[:1]), None, None, *map(t64, args[1:]),
                                     training=True) * gy).sum())
            args[i][idx] -= 2 * eps
            lo = float((F.batch_norm(*map(t64, args[:1]), None, None, *map(t64, args[1:]),
                                     training=True) * gy).sum())
            num[idx] = (hi - lo) / (2 * eps)
        np.testing.assert_allclose(ts[i].grad.numpy(), num, rtol=1e-5, atol=1e-7)


def test_group_norm_against_numpy_and_gradient():
    gn = nn.GroupNorm(2, 4).double()
    w, b = rng.normal(size=4), rng.normal(size=4)
    with torch.no_grad():
        gn.weight.copy_(t64(w))
        gn.bias.copy_(t64(b))
    x = rng.normal(1.0, 2.0, size=(3, 4, 5))
    g = x.reshape(3, 2, -1)
    want = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5)).reshape(
        x.shape) * w.reshape(1, 4, 1) + b.reshape(1, 4, 1)
    xt = t64(x, True)
    out = gn(xt)
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-10, atol=1e-12)
    out.sum().backward()
    # the sum of a normalised group times a per-channel weight: its gradient
    # through the normalisation is exactly zero when each channel's weight is 1
    gn1 = nn.GroupNorm(2, 4).double()
    x1 = t64(x, True)
    gn1(x1).sum().backward()
    np.testing.assert_allclose(x1.grad.numpy(), 0.0, atol=1e-10)
    assert xt.grad is not None and np.abs(xt.grad.numpy()).sum() > 0


def test_errors_and_reprs():
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        nn.BatchNorm1d(3)(torch.randn(2, 3, 4, 5))
    with pytest.raises(ValueError, match=r"expected 4D input \(got 3D input\)"):
        nn.BatchNorm2d(3)(torch.randn(2, 3, 4))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        nn.BatchNorm1d(3)(torch.randn(1, 3))
    nn.BatchNorm1d(3).eval()(torch.randn(1, 3))  # eval: the running statistics, fine
    with pytest.raises(ValueError, match="num_channels must be divisible by num_groups"):
        nn.GroupNorm(3, 4)
    with pytest.raises(RuntimeError, match="divisible by num_groups"):
        F.group_norm(torch.randn(2, 4, 3), 3)
    assert repr(nn.BatchNorm2d(8)) == ("BatchNorm2d(8, eps=1e-05, momentum=0.1, affine=True, "
                                       "track_running_stats=True)")
    assert repr(nn.GroupNorm(2, 8)) == "GroupNorm(2, 8, eps=1e-05, affine=True)"


def test_half_inputs_are_normalised_in_float32():
    x = torch.randn(16, 3) * 100 + 1000
    out = F.batch_norm(x.half(), None, None, training=True)
    assert out.dtype == torch.float16
    ref = F.batch_norm(x.half().float(), None, None, training=True)
    np.testing.assert_allclose(out.float().numpy(), ref.numpy(), atol=2e-3)


@pytest.mark.skipif(real_torch is None, reason="torch is not importable")
def test_match_torch():
    x = rng.normal(size=(6, 4, 3))
    rt = real_torch.nn
    for ours, theirs in ((nn.BatchNorm1d(4, momentum=0.3), rt.BatchNorm1d(4, momentum=0.3)),
                         (nn.GroupNorm(2, 4), rt.GroupNorm(2, 4))):
        ours.double()
        theirs.double()
        for _ in range(2):
            a = ours(t64(x)).detach().numpy()
            b = theirs(real_torch.from_numpy(x)).detach().numpy()
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
        for k, v in theirs.state_dict().items():
            np.testing.assert_allclose(ours.state_dict()[k].numpy(), v.numpy(), rtol=1e-12)
        # torch 2.15 prints the norm layers' bias=True; 2.11, as we do
        assert repr(ours) == re.sub(r"(affine=(?:True|False)), bias=(?:True|False)", r"\1", repr(theirs))


@pytest.mark.cuda
def test_cuda_matches_cpu():
    x = torch.randn(8, 3, 5)
    cpu, gpu = nn.BatchNorm1d(3), nn.BatchNorm1d(3).cuda()
    for _ in range(2):
        a, b = cpu(x), gpu(x.cuda())
        np.testing.assert_allclose(b.detach().cpu().numpy(), a.detach().numpy(), rtol=1e-5,
                                   atol=1e-5)
    np.testing.assert_allclose(gpu.running_var.cpu().numpy(), cpu.running_var.numpy(), rtol=1e-5)
    g = nn.GroupNorm(3, 3).cuda()
    np.testing.assert_allclose(g(x.cuda()).detach().cpu().numpy(),
                               nn.GroupNorm(3, 3)(x).detach().numpy(), rtol=1e-5, atol=1e-5)
