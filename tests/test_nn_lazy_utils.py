"""Lazy modules and their placeholders, the nn.init additions (dirac_,
sparse_, deprecated aliases) and the nn.utils additions (get_total_norm,
clip_grads_with_norm_, fusion, skip_init, functional_call, PackedSequence):
against NumPy float64 statements and against torch where it imports."""
import math
import warnings

import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import nn
from pycuda_sem.nn.utils import rnn as rnn_utils

from torch_oracle import _torch as real_torch  # torch where it imports, else None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
pytestmark = pytest.mark.usefixtures("no_tf32")  # float64 references (conftest.py)


# ---- lazy modules -----------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_lazy_linear_materializes_and_becomes_linear(device):
    torch.manual_seed(0)
    m = nn.LazyLinear(3, device=device)
    assert repr(m) == "LazyLinear(in_features=0, out_features=3, bias=True)"
    assert isinstance(m.weight, nn.UninitializedParameter)
    assert repr(m.weight) == "<UninitializedParameter>"
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized"):
        m.weight.shape
    with pytest.raises(ValueError, match="Attempted to use an uninitialized parameter"):
        m.weight.add(1)
    w_obj = m.weight
    opt = torch.optim.SGD(m.parameters(), lr=0.5)  # torch allows it before the first forward
    a = np.random.default_rng(0).standard_normal((4, 5))
    x = torch.tensor(a, dtype=torch.float32, device=device)
    y = m(x)
    assert type(m) is nn.Linear and m.in_features == 5
    assert m.weight is w_obj and type(m.weight) is nn.Parameter
    assert tuple(m.weight.shape) == (3, 5) and m.weight.device.type == device
    # initialised as Linear: U(-1/sqrt(5), 1/sqrt(5))
    w = m.weight.detach().cpu().numpy().copy()
    assert np.abs(w).max() <= 1 / math.sqrt(5) and w.std() > 0.05
    ref = a @ w.T.astype(np.float64) + m.bias.detach().cpu().numpy()
    np.testing.assert_allclose(y.detach().cpu().numpy(), ref, rtol=1e-5, atol=1e-6)
    y.sum().backward()
    opt.step()
    np.testing.assert_allclose(m.weight.detach().cpu().numpy(), w - 0.5 * a.sum(0)[None].repeat(3, 0),
                               rtol=1e-5, atol=1e-6)
    assert "_initialize_hook" not in m.__dict__ and not m._forward_pre_hooks
    assert repr(m) == "Linear(in_features=5, out_features=3, bias=True)"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("cls,eager,shape,wshape", [
    ("LazyConv1d", "Conv1d", (2, 3, 9), (4, 3, 3)),
    ("LazyConv2d", "Conv2d", (2, 3, 7, 6), (4, 3, 3, 3)),
    ("LazyConv3d", "Conv3d", (3, 5, 6, 7), (4, 3, 3, 3, 3)),  # unbatched: channels in dim 0
    ("LazyConvTranspose1d", "ConvTranspose1d", (2, 3, 9), (3, 4, 3)),
    ("LazyConvTranspose2d", "ConvTranspose2d", (2, 3, 5, 6), (3, 4, 3, 3)),
    ("LazyConvTranspose3d", "ConvTranspose3d", (1, 3, 4, 5, 4), (3, 4, 3, 3, 3)),
])
def test_lazy_convs(device, cls, eager, shape, wshape):
    torch.manual_seed(1)
    m = getattr(nn, cls)(4, 3, device=device, dtype=torch.float64)
    assert repr(m).startswith(cls + "(0, 4, kernel_size=")
    a = np.random.default_rng(2).standard_normal(shape)
    y = m(torch.tensor(a, device=device))
    assert type(m) is getattr(nn, eager) and m.in_channels == 3
    assert tuple(m.weight.shape) == wshape and m.weight.dtype == torch.float64
    # the eager module's initialisation: kaiming_uniform(a=sqrt(5)) = U(+-1/sqrt(fan_in))
    fan_in = int(np.prod(wshape[1:]))
    assert np.abs(m.weight.detach().cpu().numpy()).max() <= 1 / math.sqrt(fan_in) + 1e-12
    assert np.abs(m.bias.detach().cpu().numpy()).max() <= 1 / math.sqrt(fan_in) + 1e-12
    ref = getattr(nn, eager)(3, 4, 3, dtype=torch.float64, device=device)
    ref.load_state_dict(m.state_dict())
    np.testing.assert_allclose(y.detach().cpu().numpy(),
                               ref(torch.tensor(a, device=device)).detach().cpu().numpy(), rtol=1e-12)
    if real_torch is not None:
        rm = getattr(real_torch.nn, eager)(3, 4, 3, dtype=real_torch.float64)
        rm.load_state_dict({k: real_torch.from_numpy(v.detach().cpu().numpy()) for k, v in m.state_dict().items()})
        np.testing.assert_allclose(y.detach().cpu().numpy(), rm(real_torch.from_numpy(a)).detach().numpy(),
                                   rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("cls,shape", [("LazyBatchNorm1d", (6, 3)), ("LazyBatchNorm2d", (4, 3, 2, 5)),
                                       ("LazyBatchNorm3d", (2, 3, 2, 2, 3))])
def test_lazy_batchnorm(device, cls, shape):
    m = getattr(nn, cls)(device=device, dtype=torch.float64)
    assert list(m.state_dict().keys()) == ["weight", "bias", "running_mean", "running_var",
                                          "num_batches_tracked"]
    assert isinstance(m.running_mean, nn.UninitializedBuffer)
    a = np.random.default_rng(3).standard_normal(shape) * 2 + 1
    y = m(torch.tensor(a, device=device))
    assert type(m).__name__ == cls[4:] and m.num_features == 3
    assert type(m.running_mean) is torch.Tensor and m.running_mean.dtype == torch.float64
    dims = (0,) + tuple(range(2, len(shape)))
    mean, var = a.mean(dims), a.var(dims)
    ref = (a - mean.reshape((1, 3) + (1,) * (len(shape) - 2))) / np.sqrt(
        var.reshape((1, 3) + (1,) * (len(shape) - 2)) + 1e-5)
    np.testing.assert_allclose(y.detach().cpu().numpy(), ref, rtol=1e-10, atol=1e-10)
    n = a.size // 3
    np.testing.assert_allclose(m.running_mean.cpu().numpy(), 0.1 * mean, rtol=1e-10)
    np.testing.assert_allclose(m.running_var.cpu().numpy(), 0.9 + 0.1 * var * n / (n - 1), rtol=1e-10)
    assert m.num_batches_tracked.item() == 1
    np.testing.assert_array_equal(m.weight.detach().cpu().numpy(), np.ones(3))


@pytest.mark.parametrize("device", DEVICES)
def test_lazy_instancenorm(device):
    m = nn.LazyInstanceNorm2d(affine=True, track_running_stats=True, device=device)
    assert repr(m).startswith("LazyInstanceNorm2d(0, eps=1e-05")
    a = np.random.default_rng(4).standard_normal((2, 3, 4, 5))
    y = m(torch.tensor(a, dtype=torch.float32, device=device))
    assert type(m) is nn.InstanceNorm2d and m.num_features == 3
    ref = (a - a.mean((2, 3), keepdims=True)) / np.sqrt(a.var((2, 3), keepdims=True) + 1e-5)
    np.testing.assert_allclose(y.detach().cpu().numpy(), ref, rtol=1e-4, atol=1e-5)
    u = nn.LazyInstanceNorm1d(affine=True)
    u(torch.tensor(a[0, :, 0], dtype=torch.float32))  # unbatched (C, L): C is dim 0
    assert u.num_features == 3 and tuple(u.weight.shape) == (3,)
    plain = nn.LazyInstanceNorm3d()  # nothing to infer: the class still switches
    plain(torch.randn(1, 2, 2, 2, 2))
    assert type(plain) is nn.InstanceNorm3d


def test_lazy_state_dict_round_trip_and_uninitialized_placeholders():
    src = nn.Linear(5, 3)
    m = nn.LazyLinear(3)
    m.load_state_dict(src.state_dict())
    np.testing.assert_array_equal(m.weight.detach().numpy(), src.weight.detach().numpy())
    assert type(m.weight) is nn.Parameter
    bn = nn.LazyBatchNorm1d()
    ref = nn.BatchNorm1d(4)
    ref.running_mean.fill_(2.0)
    bn.load_state_dict(ref.state_dict())
    np.testing.assert_array_equal(bn.running_mean.numpy(), np.full(4, 2.0))
    p = nn.UninitializedParameter(dtype=torch.float64)
    assert p.requires_grad and isinstance(p, nn.Parameter)
    p.materialize((2, 3))
    assert type(p) is nn.Parameter and tuple(p.shape) == (2, 3) and p.dtype == torch.float64
    b = nn.UninitializedBuffer()
    assert not b.requires_grad and repr(b) == "<UninitializedBuffer>"
    b.materialize((4,))
    assert tuple(b.shape) == (4,) and isinstance(b, torch.Tensor)
    if real_torch is not None:
        rm = real_torch.nn.LazyLinear(3)
        rm.load_state_dict({k: real_torch.from_numpy(v.numpy()) for k, v in src.state_dict().items()})
        assert tuple(rm.weight.shape) == tuple(m.weight.shape)


# ---- nn.init ----------------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape,groups", [((6, 4, 3, 3), 2), ((4, 4, 5), 1), ((3, 5, 3, 3, 3), 1)])
def test_dirac(device, shape, groups):
    w = torch.randn(*shape, device=device)
    nn.init.dirac_(w, groups)
    ref = np.zeros(shape)
    per = shape[0] // groups
    centre = tuple(s // 2 for s in shape[2:])
    for g in range(groups):
        for d in range(min(per, shape[1])):
            ref[(g * per + d, d) + centre] = 1
    np.testing.assert_array_equal(w.cpu().numpy(), ref)
    if real_torch is not None:
        r = real_torch.empty(*shape)
        real_torch.nn.init.dirac_(r, groups)
        np.testing.assert_array_equal(w.cpu().numpy(), r.numpy())
    with pytest.raises(ValueError, match="Only tensors with 3, 4, or 5 dimensions"):
        nn.init.dirac_(torch.empty(3, 3))
    with pytest.raises(ValueError, match="divisible by groups"):
        nn.init.dirac_(torch.empty(3, 3, 3), 2)


@pytest.mark.parametrize("device", DEVICES)
def test_sparse_and_deprecated_aliases(device):
    torch.manual_seed(3)
    w = torch.empty(200, 50, device=device)
    nn.init.sparse_(w, 0.3, std=0.5)
    zeros = (w == 0).sum(0).cpu().numpy()
    assert (zeros == 60).all()  # ceil(0.3 * 200) per column
    nz = w.cpu().numpy()[w.cpu().numpy() != 0]
    assert abs(nz.std() - 0.5) < 0.03
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions"):
        nn.init.sparse_(torch.empty(3), 0.1)
    for old, args in [("eye", (torch.empty(3, 4),)), ("dirac", (torch.empty(2, 2, 3),)),
                      ("sparse", (torch.empty(4, 4), 0.5)), ("uniform", (torch.empty(3),))]:
        with pytest.warns(FutureWarning, match="`nn.init.%s` is now deprecated in favor of "
                                               "`nn.init.%s_`" % (old, old)):
            out = getattr(nn.init, old)(*args)
        assert out is args[0]
    np.testing.assert_array_equal(nn.init.eye_(torch.empty(3, 4)).numpy(), np.eye(3, 4))


# ---- nn.utils ---------------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("norm_type", [2.0, 1.0, math.inf])
def test_get_total_norm_and_clip_grads_with_norm(device, norm_type):
    rng = np.random.default_rng(5)
    grads = [rng.standard_normal(s) for s in [(3, 4), (5,), (2, 2, 2)]]
    params = [torch.zeros(g.shape, dtype=torch.float64, device=device, requires_grad=True) for g in grads]
    for p, g in zip(params, grads):
        p.grad = torch.tensor(g, device=device)
    flat = np.concatenate([g.ravel() for g in grads])
    ref = np.abs(flat).max() if norm_type == math.inf else (np.abs(flat) ** norm_type).sum() ** (1 / norm_type)
    total = nn.utils.get_total_norm([p.grad for p in params], norm_type)
    assert total.item() == pytest.approx(ref, rel=1e-12)
    nn.utils.clip_grads_with_norm_(params, 1.0, total)
    coef = min(1.0, 1.0 / (ref + 1e-6))
    for p, g in zip(params, grads):
        np.testing.assert_allclose(p.grad.cpu().numpy(), g * coef, rtol=1e-12)
    assert nn.utils.get_total_norm([]).item() == 0.0
    # clip_grad_norm_ is the two in a row
    for p, g in zip(params, grads):
        p.grad = torch.tensor(g, device=device)
    t2 = nn.utils.clip_grad_norm_(params, 0.5, norm_type)
    assert t2.item() == pytest.approx(ref, rel=1e-12)
    np.testing.assert_allclose(params[0].grad.cpu().numpy(), grads[0] * min(1, 0.5 / (ref + 1e-6)),
                               rtol=1e-12)
    if real_torch is not None:
        assert real_torch.nn.utils.get_total_norm(
            [real_torch.from_numpy(g) for g in grads], norm_type).item() == pytest.approx(ref, rel=1e-12)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("transpose", [False, True])
def test_fuse_conv_bn(device, transpose):
    torch.manual_seed(4)
    conv = (nn.ConvTranspose2d(3, 4, 3) if transpose else nn.Conv2d(3, 4, 3)).double().to(device)
    bn = nn.BatchNorm2d(4).double().to(device)
    bn.running_mean.copy_(torch.randn(4, dtype=torch.float64))
    bn.running_var.copy_(torch.rand(4, dtype=torch.float64) + 0.5)
    with torch.no_grad():
        bn.weight.copy_(torch.randn(4, dtype=torch.float64))
        bn.bias.copy_(torch.randn(4, dtype=torch.float64))
    conv.eval()
    bn.eval()
    x = torch.randn(2, 3, 6, 6, dtype=torch.float64, device=device)
    fused = nn.utils.fuse_conv_bn_eval(conv, bn, transpose=transpose)
    np.testing.assert_allclose(fused(x).detach().cpu().numpy(), bn(conv(x)).detach().cpu().numpy(),
                               rtol=1e-10, atol=1e-12)
    assert fused is not conv and isinstance(fused.weight, nn.Parameter)
    # the formula by hand
    s = bn.weight.detach().cpu().numpy() / np.sqrt(bn.running_var.cpu().numpy() + bn.eps)
    wshape = (1, 4, 1, 1) if transpose else (4, 1, 1, 1)
    np.testing.assert_allclose(fused.weight.detach().cpu().numpy(),
                               conv.weight.detach().cpu().numpy() * s.reshape(wshape), rtol=1e-12)
    np.testing.assert_allclose(fused.bias.detach().cpu().numpy(),
                               (conv.bias.detach().cpu().numpy() - bn.running_mean.cpu().numpy()) * s
                               + bn.bias.detach().cpu().numpy(), rtol=1e-12)
    conv.train()
    with pytest.raises(AssertionError, match="Fusion only for eval"):
        nn.utils.fuse_conv_bn_eval(conv, bn)


@pytest.mark.parametrize("device", DEVICES)
def test_fuse_linear_bn(device):
    torch.manual_seed(5)
    lin = nn.Linear(5, 3, device=device, dtype=torch.float64).eval()
    bn = nn.BatchNorm1d(3, device=device, dtype=torch.float64).eval()
    bn.running_mean.copy_(torch.randn(3, dtype=torch.float64))
    bn.running_var.copy_(torch.rand(3, dtype=torch.float64) + 0.5)
    x = torch.randn(4, 5, dtype=torch.float64, device=device)
    fused = nn.utils.fuse_linear_bn_eval(lin, bn)
    np.testing.assert_allclose(fused(x).detach().cpu().numpy(), bn(lin(x)).detach().cpu().numpy(),
                               rtol=1e-10, atol=1e-12)
    w, b = nn.utils.fuse_linear_bn_weights(lin.weight, None, bn.running_mean, bn.running_var, 1e-5,
                                           bn.weight, bn.bias)
    s = 1 / np.sqrt(bn.running_var.cpu().numpy() + 1e-5)
    np.testing.assert_allclose(b.detach().cpu().numpy(), -bn.running_mean.cpu().numpy() * s, rtol=1e-12)
    with pytest.raises(AssertionError, match="To fuse, linear.out_features == bn.num_features"):
        nn.utils.fuse_linear_bn_eval(lin, nn.BatchNorm1d(4).eval())


def test_skip_init():
    m = nn.utils.skip_init(nn.Linear, 5, 2)
    assert type(m) is nn.Linear and tuple(m.weight.shape) == (2, 5)
    with pytest.raises(RuntimeError, match="support a 'device' arg"):
        nn.utils.skip_init(nn.ReLU)
    with pytest.raises(RuntimeError, match="Expected a Module"):
        nn.utils.skip_init(int)


@pytest.mark.parametrize("device", DEVICES)
def test_functional_call(device):
    torch.manual_seed(6)
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2)).double().to(device)
    model[2].weight = model[0].weight if False else model[2].weight
    a = np.random.default_rng(7).standard_normal((5, 4))
    x = torch.tensor(a, device=device)
    w0 = torch.tensor(np.random.default_rng(8).standard_normal((3, 4)), device=device, requires_grad=True)
    before = model[0].weight.detach().clone()
    out = torch.func.functional_call(model, {"0.weight": w0}, (x,))
    ref_h = np.maximum(a @ w0.detach().cpu().numpy().T + model[0].bias.detach().cpu().numpy(), 0)
    ref = ref_h @ model[2].weight.detach().cpu().numpy().T + model[2].bias.detach().cpu().numpy()
    np.testing.assert_allclose(out.detach().cpu().numpy(), ref, rtol=1e-12)
    out.sum().backward()
    assert w0.grad is not None and model[0].weight.grad is None
    np.testing.assert_array_equal(model[0].weight.detach().cpu().numpy(), before.cpu().numpy())
    assert isinstance(model[0].weight, nn.Parameter)
    with pytest.warns(FutureWarning, match="stateless.functional_call` is deprecated"):
        out2 = nn.utils.stateless.functional_call(model, {"0.weight": w0}, x)
    np.testing.assert_allclose(out2.detach().cpu().numpy(), ref, rtol=1e-12)
    with pytest.raises(RuntimeError, match="Missing key"):
        torch.func.functional_call(model, {"0.weight": w0}, (x,), strict=True)
    with pytest.raises(ValueError, match="multiple dictionaries"):
        torch.func.functional_call(model, ({"0.weight": w0}, {"0.weight": w0}), (x,))
    # tied weights are replaced together
    tied = nn.Sequential(nn.Linear(3, 3, bias=False), nn.Linear(3, 3, bias=False)).double()
    tied[1].weight = tied[0].weight
    eye = torch.eye(3, dtype=torch.float64)
    y = torch.func.functional_call(tied, {"0.weight": eye}, torch.ones(1, 3, dtype=torch.float64))
    np.testing.assert_array_equal(y.numpy(), np.ones((1, 3)))
    if real_torch is not None:
        rmodel = real_torch.nn.Sequential(real_torch.nn.Linear(4, 3), real_torch.nn.ReLU(),
                                          real_torch.nn.Linear(3, 2)).double()
        rmodel.load_state_dict({k: real_torch.from_numpy(v.cpu().numpy()) for k, v in model.state_dict().items()})
        r = real_torch.func.functional_call(rmodel, {"0.weight": real_torch.from_numpy(w0.detach().cpu().numpy())},
                                            (real_torch.from_numpy(a),))
        np.testing.assert_allclose(out.detach().cpu().numpy(), r.detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_packed_sequence(device, enforce_sorted):
    rng = np.random.default_rng(9)
    lens = [5, 3, 3, 1] if enforce_sorted else [3, 5, 1, 3]
    seqs = [rng.standard_normal((n, 2)) for n in lens]
    ts = [torch.tensor(s, device=device, requires_grad=True) for s in seqs]
    packed = rnn_utils.pack_sequence(ts, enforce_sorted=enforce_sorted)
    assert isinstance(packed, rnn_utils.PackedSequence)
    assert packed.batch_sizes.tolist() == [4, 3, 3, 1, 1] and not packed.batch_sizes.is_cuda
    order = sorted(range(4), key=lambda i: -lens[i])
    ref = np.concatenate([np.stack([seqs[i][t] for i in order if lens[i] > t]) for t in range(5)])
    np.testing.assert_array_equal(packed.data.detach().cpu().numpy(), ref)
    padded, lengths = rnn_utils.pad_packed_sequence(packed, batch_first=True, padding_value=-7.0,
                                                    total_length=6)
    assert lengths.tolist() == lens and tuple(padded.shape) == (4, 6, 2)
    for i, s in enumerate(seqs):
        np.testing.assert_array_equal(padded[i, :lens[i]].detach().cpu().numpy(), s)
        assert (padded[i, lens[i]:].detach().cpu().numpy() == -7.0).all()
    back = rnn_utils.unpack_sequence(packed)
    for b, s in zip(back, seqs):
        np.testing.assert_array_equal(b.detach().cpu().numpy(), s)
    (packed.data * 2).sum().backward()
    np.testing.assert_array_equal(ts[0].grad.cpu().numpy(), np.full(seqs[0].shape, 2.0))
    perm = torch.tensor([2, 0, 3, 1], device=device)
    inv = rnn_utils.invert_permutation(perm)
    assert inv.tolist() == [1, 3, 0, 2]
    assert rnn_utils.invert_permutation(None) is None
    if real_torch is not None:
        rp = real_torch.nn.utils.rnn.pack_sequence([real_torch.from_numpy(s) for s in seqs],
                                                   enforce_sorted=enforce_sorted)
        np.testing.assert_array_equal(packed.data.detach().cpu().numpy(), rp.data.numpy())
        assert packed.batch_sizes.tolist() == rp.batch_sizes.tolist()
    if enforce_sorted:
        with pytest.raises(RuntimeError, match="must be sorted in decreasing order"):
            rnn_utils.pack_padded_sequence(torch.zeros(5, 2, device=device), [1, 2])
