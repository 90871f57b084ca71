"""Max pooling with indices, max_unpool, lp_pool, alpha dropout,
gumbel_softmax, pdist, the in-place activation forms, upsample_* aliases,
multilabel_margin_loss and triplet_margin_with_distance_loss: against NumPy
float64 statements of their definitions, and against torch where it imports."""
import itertools
import math
import warnings

import numpy as np
import pytest

import pycuda_sem as torch
import pycuda_sem.nn.functional as F
from pycuda_sem import nn

from torch_oracle import _torch as real_torch  # torch where it imports, else None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
pytestmark = pytest.mark.usefixtures("no_tf32")  # float64 references (conftest.py)


def _np_max_pool(a, kernel, stride, padding, dilation):
    """(values, flat indices) of a max pool over the trailing dims of a
    [N, C, *spatial] float64 array, by brute force; first maximum wins."""
    d = len(kernel)
    spatial = a.shape[2:]
    out = [(spatial[i] + 2 * padding[i] - dilation[i] * (kernel[i] - 1) - 1) // stride[i] + 1
           for i in range(d)]
    vals = np.empty(a.shape[:2] + tuple(out))
    idx = np.empty(a.shape[:2] + tuple(out), dtype=np.int64)
    for n, c in itertools.product(range(a.shape[0]), range(a.shape[1])):
        for o in itertools.product(*[range(s) for s in out]):
            best, bi = -np.inf, -1
            for k in itertools.product(*[range(s) for s in kernel]):
                pos = [o[i] * stride[i] - padding[i] + k[i] * dilation[i] for i in range(d)]
                if any(p < 0 or p >= spatial[i] for i, p in enumerate(pos)):
                    continue
                v = a[(n, c) + tuple(pos)]
                if v > best:
                    best, bi = v, int(np.ravel_multi_index(pos, spatial))
            vals[(n, c) + o], idx[(n, c) + o] = best, bi
    return vals, idx


def _np_adaptive_max(a, sizes):
    d = len(sizes)
    spatial = a.shape[2:]
    vals = np.empty(a.shape[:2] + tuple(sizes))
    idx = np.empty(a.shape[:2] + tuple(sizes), dtype=np.int64)
    for n, c in itertools.product(range(a.shape[0]), range(a.shape[1])):
        for o in itertools.product(*[range(s) for s in sizes]):
            rngs = [range((o[i] * spatial[i]) // sizes[i], -(-((o[i] + 1) * spatial[i]) // sizes[i]))
                    for i in range(d)]
            best, bi = -np.inf, -1
            for pos in itertools.product(*rngs):
                if a[(n, c) + pos] > best:
                    best, bi = a[(n, c) + pos], int(np.ravel_multi_index(pos, spatial))
            vals[(n, c) + o], idx[(n, c) + o] = best, bi
    return vals, idx


POOL_CASES = [
    (1, (2, 3, 11), dict(kernel_size=3, stride=2, padding=1)),
    (1, (3, 10), dict(kernel_size=2, dilation=3)),
    (2, (2, 3, 7, 9), dict(kernel_size=2)),
    (2, (2, 3, 7, 9), dict(kernel_size=(2, 3), stride=(1, 2), padding=(1, 1), dilation=(2, 1))),
    (3, (1, 2, 5, 6, 7), dict(kernel_size=(2, 3, 2), stride=(1, 2, 2), padding=1)),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("d,shape,kw", POOL_CASES)
def test_max_pool_with_indices(device, d, shape, kw):
    a = np.random.default_rng(0).standard_normal(shape)
    fn = getattr(F, "max_pool%dd_with_indices" % d)
    x = torch.tensor(a, device=device, requires_grad=True)
    out, idx = fn(x, **kw)
    assert idx.dtype == torch.int64
    batched = a if len(shape) == d + 2 else a[None]
    k = kw["kernel_size"]
    kernel = k if isinstance(k, tuple) else (k,) * d

    def tup(v, dflt):
        v = kw.get(v, dflt)
        return v if isinstance(v, tuple) else (v,) * d
    vals, ridx = _np_max_pool(batched, kernel, tup("stride", kernel) if "stride" in kw else kernel,
                              tup("padding", 0), tup("dilation", 1))
    if len(shape) == d + 1:
        vals, ridx = vals[0], ridx[0]
    np.testing.assert_array_equal(out.detach().cpu().numpy(), vals)
    np.testing.assert_array_equal(idx.cpu().numpy(), ridx)
    # return_indices=True on the plain function and the module give the same pair
    o2, i2 = getattr(F, "max_pool%dd" % d)(x, return_indices=True, **kw)
    np.testing.assert_array_equal(i2.cpu().numpy(), ridx)
    o3, i3 = getattr(nn, "MaxPool%dd" % d)(return_indices=True, **kw)(x)
    np.testing.assert_array_equal(i3.cpu().numpy(), ridx)
    # the gradient reaches the chosen element only (scatter of the output grad)
    w = np.random.default_rng(1).standard_normal(vals.shape)
    (out * torch.tensor(w, device=device)).sum().backward()
    g = np.zeros(a.size)
    lead = int(np.prod(a.shape[:-d])) if len(shape) == d + 2 else a.shape[0]
    plane = int(np.prod(a.shape[-d:]))
    np.add.at(g, (np.arange(lead)[:, None] * plane + ridx.reshape(lead, -1)).ravel(), w.ravel())
    np.testing.assert_allclose(x.grad.cpu().numpy(), g.reshape(a.shape), rtol=1e-12, atol=1e-12)
    if real_torch is not None:
        ro, ri = getattr(real_torch.nn.functional, "max_pool%dd" % d)(
            real_torch.from_numpy(a), return_indices=True, **kw)
        np.testing.assert_array_equal(idx.cpu().numpy(), ri.numpy())
        np.testing.assert_array_equal(out.detach().cpu().numpy(), ro.numpy())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("d,shape,size", [(1, (2, 3, 11), 4), (1, (3, 10), 10),
                                          (2, (2, 3, 7, 9), (3, 4)), (2, (1, 2, 5, 5), (5, 2)),
                                          (3, (1, 2, 5, 6, 7), (2, 4, 3))])
def test_adaptive_max_pool_with_indices(device, d, shape, size):
    a = np.random.default_rng(2).standard_normal(shape)
    x = torch.tensor(a, device=device, requires_grad=True)
    out, idx = getattr(F, "adaptive_max_pool%dd_with_indices" % d)(x, size)
    sizes = size if isinstance(size, tuple) else (size,) * d
    batched = a if len(shape) == d + 2 else a[None]
    vals, ridx = _np_adaptive_max(batched, sizes)
    if len(shape) == d + 1:
        vals, ridx = vals[0], ridx[0]
    np.testing.assert_array_equal(out.detach().cpu().numpy(), vals)
    np.testing.assert_array_equal(idx.cpu().numpy(), ridx)
    o2, i2 = getattr(nn, "AdaptiveMaxPool%dd" % d)(size, return_indices=True)(x)
    np.testing.assert_array_equal(i2.cpu().numpy(), ridx)
    out.sum().backward()
    assert x.grad.sum().item() == pytest.approx(vals.size)
    if real_torch is not None:
        ro, ri = getattr(real_torch.nn.functional, "adaptive_max_pool%dd" % d)(
            real_torch.from_numpy(a), size, return_indices=True)
        np.testing.assert_array_equal(idx.cpu().numpy(), ri.numpy())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("d,shape,kw", POOL_CASES[:1] + POOL_CASES[2:])
def test_max_unpool(device, d, shape, kw):
    a = np.random.default_rng(3).standard_normal(shape)
    kw = {k: v for k, v in kw.items() if k != "dilation"}
    out, idx = getattr(F, "max_pool%dd" % d)(torch.tensor(a, device=device), return_indices=True,
                                             **kw)
    src = torch.tensor(out.cpu().numpy(), device=device, requires_grad=True)
    layer = getattr(nn, "MaxUnpool%dd" % d)(kw["kernel_size"], kw.get("stride"),
                                            kw.get("padding", 0))
    up = layer(src, idx, output_size=a.shape[-d:])
    assert tuple(up.shape) == a.shape
    # reference: zeros with each value written at its flat index
    o_np, i_np = out.cpu().numpy(), idx.cpu().numpy()
    lead = o_np.shape[:-d]
    ref = np.zeros(lead + (int(np.prod(a.shape[-d:])),))
    flat_o, flat_i = o_np.reshape(-1, int(np.prod(o_np.shape[-d:]))), i_np.reshape(len(ref.reshape(-1, ref.shape[-1])), -1)
    r2 = ref.reshape(-1, ref.shape[-1])
    for row in range(r2.shape[0]):
        r2[row, flat_i[row]] = flat_o[row]
    np.testing.assert_array_equal(up.detach().cpu().numpy(), r2.reshape(a.shape))
    # gradient: the output's gradient gathered back at the indices
    w = np.random.default_rng(4).standard_normal(a.shape)
    (up * torch.tensor(w, device=device)).sum().backward()
    wg = np.take_along_axis(w.reshape(r2.shape), flat_i, 1).reshape(o_np.shape)
    np.testing.assert_allclose(src.grad.cpu().numpy(), wg, rtol=1e-12)
    if real_torch is not None:
        r = getattr(real_torch.nn.functional, "max_unpool%dd" % d)(
            real_torch.from_numpy(o_np), real_torch.from_numpy(i_np), kw["kernel_size"],
            kw.get("stride"), kw.get("padding", 0), output_size=a.shape[-d:])
        np.testing.assert_array_equal(up.detach().cpu().numpy(), r.numpy())
    assert repr(layer).startswith("MaxUnpool%dd(kernel_size=(" % d)


def test_max_unpool_errors_and_default_size():
    x = torch.tensor(np.random.default_rng(5).standard_normal((1, 1, 4, 4)))
    o, i = F.max_pool2d(x, 2, return_indices=True)
    assert tuple(F.max_unpool2d(o, i, 2).shape) == (1, 1, 4, 4)
    with pytest.raises(RuntimeError, match=r"Found an invalid max index: 1\d\d \(output volumes are of size 4x4\)"):
        F.max_unpool2d(o, i + 100, 2)
    with pytest.raises(RuntimeError, match="Expected shape of indices to be same"):
        F.max_unpool2d(o, i[..., :1], 2)
    with pytest.raises(RuntimeError, match="should be type int64 but got: Float"):
        F.max_unpool2d(o, i.float(), 2)
    with pytest.raises(RuntimeError, match="should be a 3d or 4d Tensor"):
        F.max_unpool2d(o[0, 0], i[0, 0], 2)
    with pytest.raises(ValueError, match="dim 0 must be between 2 and 6"):
        F.max_unpool2d(o, i, 2, output_size=(9, 9))
    assert repr(nn.MaxUnpool1d(2, 1, 1)) == "MaxUnpool1d(kernel_size=(2,), stride=(1,), padding=(1,))"


def _np_lp(a, p, k, s):
    """(sum over 2-D windows of x^p)^(1/p), windows k x k at stride s."""
    n_out = [(a.shape[2 + i] - k) // s + 1 for i in range(2)]
    out = np.empty(a.shape[:2] + tuple(n_out))
    for i, j in itertools.product(range(n_out[0]), range(n_out[1])):
        w = a[:, :, i * s:i * s + k, j * s:j * s + k]
        if p == math.inf:
            out[:, :, i, j] = np.abs(w).max((2, 3))
        else:
            out[:, :, i, j] = (w ** p).sum((2, 3)) ** (1.0 / p)
    return out


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("p", [1, 2, 3, math.inf])
def test_lp_pool(device, p):
    a = np.abs(np.random.default_rng(6).standard_normal((2, 3, 7, 8))) + 0.1
    x = torch.tensor(a, device=device, requires_grad=True)
    got = nn.LPPool2d(p, 3, 2)(x)
    np.testing.assert_allclose(got.detach().cpu().numpy(), _np_lp(a, p, 3, 2), rtol=1e-10)
    got.sum().backward()
    if p == 2:  # d/dx (sum x^2)^(1/2) = x / norm, summed over the windows x is in
        ref = np.zeros_like(a)
        norm = _np_lp(a, 2, 3, 2)
        for i, j in itertools.product(range(norm.shape[2]), range(norm.shape[3])):
            ref[:, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3] += a[:, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3] \
                / norm[:, :, i:i + 1, j:j + 1]
        np.testing.assert_allclose(x.grad.cpu().numpy(), ref, rtol=1e-10)
    one = F.lp_pool1d(torch.tensor(a[:, :, 0], device=device), p, 2)
    ref1 = (np.abs(a[:, :, 0, :8].reshape(2, 3, 4, 2)).max(-1) if p == math.inf
            else (a[:, :, 0, :8].reshape(2, 3, 4, 2) ** p).sum(-1) ** (1.0 / p))
    np.testing.assert_allclose(one.cpu().numpy(), ref1, rtol=1e-10)
    three = F.lp_pool3d(torch.tensor(a[:, :, :6, :6].reshape(2, 3, 2, 3, 6), device=device), p, (2, 3, 2))
    assert tuple(three.shape) == (2, 3, 1, 1, 3)
    # torch releases before 2.10 or so gave 1.0 for p = inf (pow(inf) then
    # pow(1/inf)); the definition above is the reference, torch only for finite p.
    if real_torch is not None and p != math.inf:
        ra = real_torch.from_numpy(a)
        np.testing.assert_allclose(got.detach().cpu().numpy(),
                                   real_torch.nn.LPPool2d(p, 3, 2)(ra).numpy(), rtol=1e-10)
        np.testing.assert_allclose(three.cpu().numpy(), real_torch.nn.functional.lp_pool3d(
            ra[:, :, :6, :6].reshape(2, 3, 2, 3, 6), p, (2, 3, 2)).numpy(), rtol=1e-10)
    with pytest.raises(ValueError, match="norm_type must be a non-zero value"):
        F.lp_pool2d(x, 0, 2)
    assert repr(nn.LPPool1d(2, 3, 1)) == "LPPool1d(norm_type=2, kernel_size=3, stride=1, ceil_mode=False)"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("p", [0.1, 0.3, 0.6])
def test_alpha_dropout_keeps_selu_statistics(device, p):
    torch.manual_seed(0)
    x = torch.randn(400000, dtype=torch.float64, device=device)
    y = F.alpha_dropout(x, p, training=True)
    assert abs(y.mean().item()) < 0.01 and abs(y.std().item() - 1) < 0.01
    # dropped units all take one value: alpha a (p - 1), a = 1 / sqrt((alpha^2 p + 1)(1 - p))
    alpha = 1.7580993408473766
    a = 1 / math.sqrt((alpha ** 2 * p + 1) * (1 - p))
    is_dropped = np.isclose(y.cpu().numpy(), alpha * a * (p - 1), rtol=1e-12, atol=0)
    assert abs(is_dropped.mean() - p) < 0.01
    kept = ~is_dropped
    np.testing.assert_allclose(y.cpu().numpy()[kept], (x.cpu().numpy() * a + alpha * a * p)[kept],
                               rtol=1e-12)
    z = F.feature_alpha_dropout(torch.randn(2000, 50, 8, dtype=torch.float64, device=device), p,
                                True)
    assert abs(z.mean().item()) < 0.02 and abs(z.std().item() - 1) < 0.02
    # one draw per (sample, channel): a dropped channel is constant
    zn = z.cpu().numpy()
    const = (zn == zn[:, :, :1]).all(-1)
    assert abs(const.mean() - p) < 0.02
    layer = nn.AlphaDropout(p)
    layer.eval()
    assert layer(x) is x
    assert F.alpha_dropout(x, p) is x  # torch's default is training=False
    assert repr(nn.FeatureAlphaDropout(p)) == "FeatureAlphaDropout(p=%s, inplace=False)" % p
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.alpha_dropout(x, 1.5, True)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        F.feature_alpha_dropout(x, 0.5, True)


@pytest.mark.parametrize("device", DEVICES)
def test_gumbel_softmax(device):
    rng = np.random.default_rng(7)
    logits_np = rng.standard_normal((4000, 5))
    logits = torch.tensor(logits_np, device=device, requires_grad=True)
    torch.manual_seed(1)
    y = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(y.sum(-1).detach().cpu().numpy(), 1.0, rtol=1e-12)
    h = F.gumbel_softmax(logits, tau=1.0, hard=True)
    hn = h.detach().cpu().numpy()
    assert set(np.unique(hn)) == {0.0, 1.0} and (hn.sum(-1) == 1).all()
    # samples of argmax(logits + Gumbel) are distributed as softmax(logits)
    probs = np.exp(logits_np[0]) / np.exp(logits_np[0]).sum()
    many = F.gumbel_softmax(torch.tensor(np.tile(logits_np[:1], (20000, 1)), device=device),
                            hard=True).cpu().numpy().mean(0)
    np.testing.assert_allclose(many, probs, atol=0.015)
    # straight-through: the gradient of the hard sample is the soft sample's
    w = torch.tensor(rng.standard_normal((4000, 5)), device=device)
    (h * w).sum().backward()
    g_hard = logits.grad.cpu().numpy()
    assert np.abs(g_hard).max() > 0
    dim0 = F.gumbel_softmax(logits.detach().t(), dim=0)
    np.testing.assert_allclose(dim0.sum(0).cpu().numpy(), 1.0, rtol=1e-12)
    with pytest.warns(UserWarning, match="deprecated"):
        F.gumbel_softmax(logits.detach(), eps=1e-3)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("p", [0, 1, 2, 3.5, math.inf])
def test_pdist(device, p):
    a = np.random.default_rng(8).standard_normal((7, 4))
    x = torch.tensor(a, device=device, requires_grad=True)
    got = F.pdist(x, p)
    i, j = np.triu_indices(7, 1)
    diff = np.abs(a[i] - a[j])
    ref = ((diff != 0).sum(1).astype(float) if p == 0 else diff.max(1) if p == math.inf
           else (diff ** p).sum(1) ** (1 / p))
    np.testing.assert_allclose(got.detach().cpu().numpy(), ref, rtol=1e-12)
    np.testing.assert_allclose(torch.pdist(x, p).detach().cpu().numpy(), ref, rtol=1e-12)
    if p == 2:
        got.sum().backward()
        g = np.zeros_like(a)
        u = (a[i] - a[j]) / ref[:, None]
        np.add.at(g, i, u)
        np.add.at(g, j, -u)
        np.testing.assert_allclose(x.grad.cpu().numpy(), g, rtol=1e-10)
    if real_torch is not None:
        np.testing.assert_allclose(got.detach().cpu().numpy(),
                                   real_torch.pdist(real_torch.from_numpy(a), p).numpy(), rtol=1e-12)
    with pytest.raises(RuntimeError, match="pdist only supports 2D tensors, got: 3D"):
        F.pdist(x[None])
    with pytest.raises(RuntimeError, match="non-negative p"):
        F.pdist(x, -1)


@pytest.mark.parametrize("device", DEVICES)
def test_inplace_activations(device):
    a = np.random.default_rng(9).standard_normal((5, 6)) * 3
    alpha, scale = 1.6732632423543772, 1.0507009873554805
    cases = [
        (F.elu_, (), np.where(a > 0, a, np.expm1(a))),
        (F.selu_, (), scale * np.where(a > 0, a, alpha * np.expm1(a))),
        (F.celu_, (0.5,), np.where(a > 0, a, 0.5 * np.expm1(a / 0.5))),
        (F.threshold_, (0.3, -2.0), np.where(a > 0.3, a, -2.0)),
        (F.hardtanh_, (-0.5, 2.0), np.clip(a, -0.5, 2.0)),
        (F.rrelu_, (0.1, 0.3), np.where(a >= 0, a, a * 0.2)),
        (torch.celu_, (), np.where(a > 0, a, np.expm1(a))),
        (torch.selu_, (), scale * np.where(a > 0, a, alpha * np.expm1(a))),
        (torch.threshold_, (0.0, 7.0), np.where(a > 0, a, 7.0)),
        (torch.rrelu_, (0.1, 0.3), np.where(a >= 0, a, a * 0.2)),
    ]
    for fn, args, ref in cases:
        x = torch.tensor(a, device=device)
        out = fn(x, *args)
        assert out is x or out.data_ptr() == x.data_ptr(), fn
        np.testing.assert_allclose(x.cpu().numpy(), ref, rtol=1e-12, atol=1e-12, err_msg=str(fn))
    x = torch.tensor(a, device=device)
    F.rrelu_(x, 0.1, 0.3, training=True)
    slope = x.cpu().numpy()[a < 0] / a[a < 0]
    assert (slope >= 0.1 - 1e-12).all() and (slope <= 0.3 + 1e-12).all() and slope.std() > 0
    if real_torch is not None:
        r = real_torch.from_numpy(a.copy())
        real_torch.nn.functional.celu_(r, 0.5)
        np.testing.assert_allclose(r.numpy(), cases[2][2], rtol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_upsample_aliases(device):
    a = np.random.default_rng(10).standard_normal((1, 2, 3, 4))
    x = torch.tensor(a, device=device)
    with pytest.warns(UserWarning, match="upsample_bilinear` is deprecated"):
        b = F.upsample_bilinear(x, scale_factor=2)
    # align_corners=True: output position i maps to i (in - 1) / (out - 1)
    rows, cols = np.linspace(0, 2, 6), np.linspace(0, 3, 8)
    r0, c0 = np.floor(rows).astype(int).clip(max=1), np.floor(cols).astype(int).clip(max=2)
    fr, fc = rows - r0, cols - c0
    top = a[:, :, r0][:, :, :, c0] * (1 - fc) + a[:, :, r0][:, :, :, c0 + 1] * fc
    bot = a[:, :, r0 + 1][:, :, :, c0] * (1 - fc) + a[:, :, r0 + 1][:, :, :, c0 + 1] * fc
    ref = top * (1 - fr[:, None]) + bot * fr[:, None]
    np.testing.assert_allclose(b.cpu().numpy(), ref, rtol=1e-12, atol=1e-12)
    with pytest.warns(UserWarning, match="upsample_nearest` is deprecated"):
        n = F.upsample_nearest(x, size=(6, 8))
    np.testing.assert_array_equal(n.cpu().numpy(), a.repeat(2, 2).repeat(2, 3))
    if real_torch is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = real_torch.nn.functional.upsample_bilinear(real_torch.from_numpy(a), scale_factor=2)
        np.testing.assert_allclose(b.cpu().numpy(), r.numpy(), rtol=1e-12)


def _np_multilabel_margin(x, y):
    out = []
    for xr, yr in zip(x, y):
        tg = []
        for t in yr:
            if t == -1:
                break
            tg.append(t)
        s = 0.0
        for j in tg:
            for i in range(len(xr)):
                if i not in tg:
                    s += max(0.0, 1 - (xr[j] - xr[i]))
        out.append(s / len(xr))
    return np.array(out)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_multilabel_margin_loss(device, reduction):
    rng = np.random.default_rng(11)
    a = rng.standard_normal((6, 5))
    y = np.array([[3, 0, -1, 1, 2], [1, 2, 3, 4, 0], [-1, 2, 2, 2, 2], [4, 4, -1, 0, 0],
                  [0, -1, -1, -1, -1], [2, 1, 0, -1, 3]])
    x = torch.tensor(a, device=device, requires_grad=True)
    got = nn.MultiLabelMarginLoss(reduction=reduction)(x, torch.tensor(y, device=device))
    ref = _np_multilabel_margin(a, y)
    ref = {"none": ref, "mean": ref.mean(), "sum": ref.sum()}[reduction]
    np.testing.assert_allclose(got.detach().cpu().numpy(), ref, rtol=1e-12)
    one = F.multilabel_margin_loss(torch.tensor(a[0], device=device), torch.tensor(y[0], device=device),
                                   reduction="none")
    assert one.dim() == 0 and one.item() == pytest.approx(_np_multilabel_margin(a[:1], y[:1])[0])
    if real_torch is not None:
        rx = real_torch.tensor(a, requires_grad=True)
        r = real_torch.nn.functional.multilabel_margin_loss(rx, real_torch.from_numpy(y),
                                                            reduction=reduction)
        np.testing.assert_allclose(got.detach().cpu().numpy(), r.detach().numpy(), rtol=1e-12)
        r.sum().backward()
        got.sum().backward()
        np.testing.assert_allclose(x.grad.cpu().numpy(), rx.grad.numpy(), rtol=1e-12)
    with pytest.raises(RuntimeError, match="out of range"):
        F.multilabel_margin_loss(x, torch.full((6, 5), 9, device=device))
    with pytest.raises(RuntimeError, match="inconsistent target size"):
        F.multilabel_margin_loss(x, torch.zeros(3, 5, dtype=torch.int64, device=device))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("swap", [False, True])
def test_triplet_margin_with_distance_loss(device, swap):
    rng = np.random.default_rng(12)
    a, p, n = (rng.standard_normal((8, 5)) for _ in range(3))
    ta, tp, tn = (torch.tensor(v, device=device, requires_grad=True) for v in (a, p, n))

    def d_np(u, v):
        return np.sqrt(((u - v + 1e-6) ** 2).sum(-1))
    dn = np.minimum(d_np(a, n), d_np(p, n)) if swap else d_np(a, n)
    ref = np.maximum(1.5 + d_np(a, p) - dn, 0)
    layer = nn.TripletMarginWithDistanceLoss(margin=1.5, swap=swap, reduction="none")
    np.testing.assert_allclose(layer(ta, tp, tn).detach().cpu().numpy(), ref, rtol=1e-10)
    cos = lambda u, v: 1 - F.cosine_similarity(u, v)  # noqa: E731
    got = F.triplet_margin_with_distance_loss(ta, tp, tn, distance_function=cos, swap=swap)

    def c_np(u, v):
        return 1 - (u * v).sum(-1) / np.linalg.norm(u, axis=-1) / np.linalg.norm(v, axis=-1)
    dn = np.minimum(c_np(a, n), c_np(p, n)) if swap else c_np(a, n)
    np.testing.assert_allclose(got.item(), np.maximum(1 + c_np(a, p) - dn, 0).mean(), rtol=1e-10)
    got.backward()
    if real_torch is not None:
        ra, rp, rn = (real_torch.tensor(v, requires_grad=True) for v in (a, p, n))
        r = real_torch.nn.functional.triplet_margin_with_distance_loss(
            ra, rp, rn, distance_function=lambda u, v: 1 - real_torch.nn.functional.cosine_similarity(u, v),
            swap=swap)
        r.backward()
        np.testing.assert_allclose(ta.grad.cpu().numpy(), ra.grad.numpy(), rtol=1e-10, atol=1e-12)
    assert "PairwiseDistance()" in repr(nn.TripletMarginWithDistanceLoss())
    with pytest.raises(ValueError, match="margin must be greater than 0"):
        F.triplet_margin_with_distance_loss(ta, tp, tn, margin=0)
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        F.triplet_margin_with_distance_loss(ta, tp, tn[0])
