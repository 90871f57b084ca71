"""torch.amp: autocast's casting policy (CPU with bfloat16 here; CUDA with
float16 under `cuda`), its thread-locality, nesting and decorator form,
gradients in the leaves' dtypes; GradScaler's scaling, unscaling, skipped
steps, scale growth and backoff, errors and state_dict; the deprecated
torch.cuda.amp spellings."""
import threading

import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import nn
from pycuda_sem.nn import functional as F


def test_autocast_casts_matmul_layers_down_and_losses_up():
    lin = nn.Linear(4, 3)
    conv = nn.Conv1d(2, 2, 3)
    x = torch.randn(5, 4, requires_grad=True)
    with torch.autocast("cpu"):
        assert torch.is_autocast_enabled("cpu") and not torch.is_autocast_enabled("cuda")
        assert torch.get_autocast_dtype("cpu") == torch.bfloat16
        y = lin(x)
        assert y.dtype == torch.bfloat16
        assert conv(torch.randn(1, 2, 6)).dtype == torch.bfloat16
        assert F.softmax(y, -1).dtype == torch.float32
        assert F.layer_norm(y, (3,)).dtype == torch.float32
        loss = F.cross_entropy(y, torch.tensor([0, 1, 2, 0, 1]))
        assert loss.dtype == torch.float32
        assert F.mse_loss(y, torch.zeros(5, 3, dtype=torch.bfloat16)).dtype == torch.float32
        d = torch.randn(2, 4, dtype=torch.float64)
        assert F.linear(d, torch.randn(3, 4, dtype=torch.float64)).dtype == torch.float64
        with torch.autocast("cpu", enabled=False):
            assert lin(x).dtype == torch.float32
        assert lin(x).dtype == torch.bfloat16
    assert not torch.is_autocast_enabled("cpu") and lin(x).dtype == torch.float32
    loss.backward()
    assert x.grad.dtype == torch.float32 and lin.weight.grad.dtype == torch.float32


def test_autocast_values_follow_bfloat16_rounding():
    a, w = torch.randn(8, 16), torch.randn(4, 16)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        got = F.linear(a, w)
    want = F.linear(a.bfloat16(), w.bfloat16())
    assert torch.equal(got, want)
    np.testing.assert_allclose(got.float().numpy(), (a @ w.t()).numpy(), rtol=0.05, atol=0.1)


def test_autocast_is_per_thread_and_a_decorator():
    seen = []

    def other():
        seen.append(torch.is_autocast_enabled("cpu"))

    with torch.amp.autocast("cpu"):
        t = threading.Thread(target=other)
        t.start()
        t.join()

    @torch.autocast("cpu")
    def fwd(x):
        return F.linear(x, torch.randn(2, 3))

    assert seen == [False]
    assert fwd(torch.randn(4, 3)).dtype == torch.bfloat16
    assert not torch.is_autocast_enabled("cpu")


def test_autocast_refusals_and_warnings():
    with pytest.raises(RuntimeError, match="unsupported autocast device_type"):
        torch.autocast("tpu")
    with pytest.warns(UserWarning, match="target dtype is not supported"):
        torch.autocast("cpu", dtype=torch.float64)
    with torch.autocast("cpu"):
        with pytest.raises(RuntimeError, match="unsafe to autocast"):
            F.binary_cross_entropy(torch.rand(3), torch.rand(3))
    if not torch.cuda.is_available():
        with pytest.warns(UserWarning, match="CUDA is not available. Disabling"):
            torch.autocast("cuda")


def _train_once(scaler, opt, model, x, y):
    opt.zero_grad()
    loss = F.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    grads = [p.grad.clone() for p in model.parameters()]
    scaler.step(opt)
    scaler.update()
    return loss, grads


def test_grad_scaler_scales_unscales_and_steps():
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    ref = nn.Linear(3, 1)
    ref.load_state_dict(model.state_dict())
    opt, ref_opt = torch.optim.SGD(model.parameters(), lr=0.1), torch.optim.SGD(ref.parameters(),
                                                                                lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)
    x, y = torch.randn(8, 3), torch.randn(8, 1)
    loss = F.mse_loss(model(x), y)
    assert float(scaler.scale(loss)) == pytest.approx(float(loss) * 1024)
    _, grads = _train_once(scaler, opt, model, x, y)
    ref_opt.zero_grad()
    F.mse_loss(ref(x), y).backward()
    for g, p in zip(grads, ref.parameters()):  # unscaled: the true gradients
        np.testing.assert_allclose(g.numpy(), p.grad.numpy(), rtol=1e-6)
    ref_opt.step()
    for p, q in zip(model.parameters(), ref.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-6)
    assert scaler.get_scale() == 1024.0


def test_grad_scaler_skips_inf_steps_and_adjusts_the_scale():
    model = nn.Linear(2, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=8.0, growth_interval=2)
    before = [p.detach().clone() for p in model.parameters()]
    opt.zero_grad()
    scaler.scale(model(torch.tensor([[float("inf"), 1.0]])).sum()).backward()
    assert scaler.step(opt) is None  # skipped
    scaler.update()
    assert scaler.get_scale() == 4.0
    for p, b in zip(model.parameters(), before):
        assert torch.equal(p.detach(), b)
    x, y = torch.randn(4, 2), torch.randn(4, 1)
    _train_once(scaler, opt, model, x, y)
    assert scaler.get_scale() == 4.0
    _train_once(scaler, opt, model, x, y)
    assert scaler.get_scale() == 8.0  # grown after growth_interval clean steps
    assert scaler.state_dict() == {"scale": 8.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                                   "growth_interval": 2, "_growth_tracker": 0}
    other = torch.amp.GradScaler("cpu")
    other.load_state_dict(scaler.state_dict())
    assert other.get_scale() == 8.0 and other.get_growth_interval() == 2


def test_grad_scaler_errors_and_disabled():
    model = nn.Linear(2, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu")
    with pytest.raises(RuntimeError, match="did not use scaler.scale"):
        scaler.unscale_(opt)
    scaler.scale(model(torch.randn(3, 2)).sum()).backward()
    scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        scaler.step(opt)
    with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
        scaler.step(opt, closure=lambda: 0)
    scaler.update()
    off = torch.amp.GradScaler("cpu", enabled=False)
    loss = model(torch.randn(3, 2)).sum()
    assert off.scale(loss) is loss and off.get_scale() == 1.0 and off.state_dict() == {}
    with pytest.raises(ValueError, match="growth factor must be > 1.0"):
        torch.amp.GradScaler("cpu", growth_factor=1.0)


def test_cuda_amp_spellings_warn():
    with pytest.warns(FutureWarning, match="torch.cuda.amp.GradScaler\\(args...\\)` is deprecated"):
        torch.cuda.amp.GradScaler(enabled=False)
    with pytest.warns(FutureWarning, match="torch.cuda.amp.autocast\\(args...\\)` is deprecated"):
        torch.cuda.amp.autocast(enabled=False)


@pytest.mark.cuda
def test_cuda_mixed_precision_training_loop():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    scaler = torch.amp.GradScaler("cuda")
    x = torch.randn(64, 16, device="cuda")
    y = x.sum(1, keepdim=True)
    losses = []
    for _ in range(60):
        opt.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            out = model(x)
            assert out.dtype == torch.float16
            loss = F.mse_loss(out, y)
            assert loss.dtype == torch.float32
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        losses.append(float(loss))
    assert losses[-1] < 0.1 * losses[0]
    assert all(p.grad.dtype == torch.float32 for p in model.parameters())
