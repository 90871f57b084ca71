"""Patterns from ordinary training scripts that used to fail: a convolution's
output is laid out as torch's (so `out.view(n, -1)` works), in-place
activations after a layer give the same gradients as the out-of-place ones,
and an in-place op on a view of a temporary is allowed as torch allows it,
while the cases torch refuses (a view of a leaf) are refused."""
import numpy as np
import pytest

import pycuda_sem as torch
import pycuda_sem.nn as nn
import pycuda_sem.nn.functional as F

from torch_oracle import _torch as real_torch  # torch where it imports, else None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
pytestmark = pytest.mark.usefixtures("no_tf32")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("bias", [True, False])
def test_conv_output_memory_format_follows_the_input(device, bias):
    torch.manual_seed(0)
    for layer, shape in ((nn.Conv1d(2, 4, 3, bias=bias), (2, 2, 9)),
                         (nn.Conv2d(2, 4, 3, 2, 1, bias=bias), (2, 2, 8, 8)),
                         (nn.Conv3d(2, 4, 3, 1, 1, bias=bias), (1, 2, 4, 4, 4)),
                         (nn.ConvTranspose2d(2, 4, 3, 2, 1, bias=bias), (2, 2, 5, 5))):
        layer = layer.to(device)
        y = layer(torch.randn(*shape, device=device))
        assert y.is_contiguous(), (type(layer).__name__, y.stride())
        assert y.view(y.shape[0], -1).shape[1] == y[0].numel()
    conv = nn.Conv2d(2, 4, 3, 1, 1, bias=bias).to(device)
    x = torch.randn(2, 2, 8, 8, device=device)
    y_cl = conv(x.contiguous(memory_format=torch.channels_last))
    assert y_cl.is_contiguous(memory_format=torch.channels_last) and not y_cl.is_contiguous()
    np.testing.assert_allclose(y_cl.detach().cpu().numpy(), conv(x).detach().cpu().numpy(),
                               rtol=1e-5, atol=1e-6)
    if real_torch is not None:
        rc = real_torch.nn.Conv2d(2, 4, 3, 1, 1, bias=bias)
        assert rc(real_torch.randn(2, 2, 8, 8)).is_contiguous()


INPLACE = [
    ("leaky_relu", lambda x, ip: F.leaky_relu(x, 0.2, inplace=ip)),
    ("elu", lambda x, ip: F.elu(x, 0.7, inplace=ip)),
    ("selu", lambda x, ip: F.selu(x, inplace=ip)),
    ("celu", lambda x, ip: F.celu(x, 1.3, inplace=ip)),
    ("silu", lambda x, ip: F.silu(x, inplace=ip)),
    ("mish", lambda x, ip: F.mish(x, inplace=ip)),
    ("hardswish", lambda x, ip: F.hardswish(x, inplace=ip)),
    ("hardsigmoid", lambda x, ip: F.hardsigmoid(x, inplace=ip)),
    ("threshold", lambda x, ip: F.threshold(x, 0.1, -2.0, inplace=ip)),
    ("rrelu_eval", lambda x, ip: F.rrelu(x, training=False, inplace=ip)),
    ("relu", lambda x, ip: F.relu(x, inplace=ip)),
    ("relu6", lambda x, ip: F.relu6(x, inplace=ip)),
    ("hardtanh", lambda x, ip: F.hardtanh(x, -0.5, 0.5, inplace=ip)),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,act", INPLACE, ids=[n for n, _ in INPLACE])
def test_inplace_activation_after_a_layer_has_the_out_of_place_gradient(device, name, act):
    torch.manual_seed(1)
    conv = nn.Conv2d(3, 4, 3, 1, 1, bias=False).to(device).double()
    x = torch.randn(2, 3, 6, 6, device=device, dtype=torch.float64)
    grads, outs = [], []
    for ip in (False, True):
        conv.zero_grad()
        y = act(conv(x), ip)
        (y * y).sum().backward()
        outs.append(y.detach().cpu().numpy())
        grads.append(conv.weight.grad.cpu().numpy().copy())
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("device", DEVICES)
def test_dcgan_discriminator_step(device):
    """Conv (no bias) -> LeakyReLU(inplace) -> Conv -> BatchNorm ->
    LeakyReLU(inplace) -> Conv -> Sigmoid, BCELoss, backward: the pattern
    of the DCGAN example, against the same net with out-of-place activations."""
    torch.manual_seed(2)

    def net(ip):
        torch.manual_seed(3)
        return nn.Sequential(nn.Conv2d(1, 4, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=ip),
                             nn.Conv2d(4, 8, 4, 2, 1, bias=False), nn.BatchNorm2d(8),
                             nn.LeakyReLU(0.2, inplace=ip), nn.Conv2d(8, 1, 4, 1, 0, bias=False),
                             nn.Sigmoid()).to(device).double()

    x = torch.rand(5, 1, 16, 16, device=device, dtype=torch.float64) * 2 - 1
    label = torch.full((5,), 1.0, dtype=torch.float64, device=device)
    res = []
    for ip in (False, True):
        d = net(ip)
        loss = nn.BCELoss()(d(x).view(-1, 1).squeeze(1), label)
        loss.backward()
        res.append((loss.item(), [p.grad.cpu().numpy() for p in d.parameters()]))
    assert abs(res[0][0] - res[1][0]) <= 1e-14
    for a, b in zip(res[0][1], res[1][1]):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("device", DEVICES)
def test_inplace_on_views(device):
    w = torch.randn(4, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being "
                                           "used in an in-place operation"):
        w[:2].mul_(2)
    # a view of a temporary that nothing else holds: written as a tensor of its own
    x = torch.randn(4, device=device, dtype=torch.float64, requires_grad=True)
    v = (x * 2)[:3]
    v.mul_(3)
    v.sum().backward()
    np.testing.assert_array_equal(x.grad.cpu().numpy(), [6.0, 6.0, 6.0, 0.0])
    # the base is still reachable: refused, as before (torch would rebase it)
    base = x * 2
    v = base[:3]
    with pytest.raises(RuntimeError, match="in-place operations on a view"):
        v.mul_(3)
    if real_torch is not None:
        rx = real_torch.tensor(x.detach().cpu().numpy(), requires_grad=True)
        rv = (rx * 2)[:3]
        rv.mul_(3)
        rv.sum().backward()
        np.testing.assert_array_equal(rx.grad.numpy(), [6.0, 6.0, 6.0, 0.0])


@pytest.mark.parametrize("device", DEVICES)
def test_gradient_penalty_through_a_padded_conv(device):
    """WGAN-GP: the input gradient of a padded conv net is dense (grad.view
    works, as torch's), and the penalty's double backward matches torch on
    the same weights."""
    torch.manual_seed(4)
    net = nn.Sequential(nn.Conv2d(1, 3, 3, 1, 1), nn.Tanh(), nn.Conv2d(3, 2, 4, 2, 1), nn.Flatten(),
                        nn.Linear(2 * 4 * 4, 1)).double().to(device)
    x = torch.randn(3, 1, 8, 8, dtype=torch.float64, device=device, requires_grad=True)
    out = net(x)
    g = torch.autograd.grad(out, x, torch.ones_like(out), create_graph=True)[0]
    assert g.is_contiguous()
    gp = ((g.view(g.size(0), -1).norm(2, dim=1) - 1) ** 2).mean()
    gp.backward()
    xc = x.detach().contiguous(memory_format=torch.channels_last).requires_grad_(True)
    gc = torch.autograd.grad(net(xc).sum(), xc)[0]
    np.testing.assert_allclose(gc.cpu().numpy(), g.detach().cpu().numpy(), rtol=1e-12)
    if real_torch is not None:
        rnet = real_torch.nn.Sequential(
            real_torch.nn.Conv2d(1, 3, 3, 1, 1), real_torch.nn.Tanh(), real_torch.nn.Conv2d(3, 2, 4, 2, 1),
            real_torch.nn.Flatten(), real_torch.nn.Linear(32, 1)).double()
        with real_torch.no_grad():
            for rp, p in zip(rnet.parameters(), net.parameters()):
                rp.copy_(real_torch.from_numpy(p.detach().cpu().numpy()))
        rx = real_torch.from_numpy(x.detach().cpu().numpy()).requires_grad_(True)
        ro = rnet(rx)
        rg = real_torch.autograd.grad(ro, rx, real_torch.ones_like(ro), create_graph=True)[0]
        rgp = ((rg.view(rg.size(0), -1).norm(2, dim=1) - 1) ** 2).mean()
        rgp.backward()
        assert abs(gp.item() - rgp.item()) <= 1e-12 * abs(rgp.item())
        for rp, p in zip(rnet.parameters(), net.parameters()):
            if rp.grad is None:  # the last bias does not reach the input gradient
                assert p.grad is None
                continue
            np.testing.assert_allclose(p.grad.cpu().numpy(), rp.grad.numpy(), rtol=1e-10, atol=1e-13)
