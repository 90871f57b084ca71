"""nn.utils.weight_norm / spectral_norm (the hook forms): the weight each
forward sees, the gradients of g and v, the state dict keys, removal; against
NumPy (and torch where it imports)."""
import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import nn

from torch_oracle import _torch as real_torch  # torch where it imports, else None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
pytestmark = pytest.mark.usefixtures("no_tf32")  # float64 references (conftest.py)



@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm(device, dim):
    torch.manual_seed(0)
    m = nn.utils.weight_norm(nn.Linear(3, 4).to(device), dim=dim)
    assert list(m.state_dict()) == ["bias", "weight_g", "weight_v"]
    g_shape = {0: (4, 1), 1: (1, 3), None: ()}[dim]
    assert tuple(m.weight_g.shape) == g_shape
    with torch.no_grad():
        m.weight_g.mul_(2.0)
    v = m.weight_v.detach().cpu().numpy().astype(np.float64)
    g = m.weight_g.detach().cpu().numpy().astype(np.float64)
    norm = np.linalg.norm(v) if dim is None else np.sqrt((v ** 2).sum(1 - dim, keepdims=True))
    x = torch.randn(5, 3, device=device)
    y = m(x)
    w = v * g / norm
    want = x.cpu().numpy() @ w.T + m.bias.detach().cpu().numpy()
    np.testing.assert_allclose(y.detach().cpu().numpy(), want, rtol=1e-5, atol=1e-5)
    y.sum().backward()
    assert m.weight_g.grad is not None and m.weight_v.grad is not None
    if dim == 0:  # d/dg of sum(x w^T) over rows: (sum_n x_n) . v_i / |v_i|
        want_g = (x.cpu().numpy().sum(0) @ (v / norm).T).reshape(4, 1)
        np.testing.assert_allclose(m.weight_g.grad.cpu().numpy(), want_g, rtol=1e-4, atol=1e-5)
    nn.utils.remove_weight_norm(m)
    assert list(m.state_dict()) == ["bias", "weight"] and isinstance(m.weight, nn.Parameter)
    np.testing.assert_allclose(m.weight.detach().cpu().numpy(), w, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="not found"):
        nn.utils.remove_weight_norm(m)


def test_weight_norm_matches_torch():
    if real_torch is None:
        pytest.skip("torch does not import here")
    t = real_torch.nn.utils.weight_norm(real_torch.nn.Conv1d(2, 5, 3))
    m = nn.utils.weight_norm(nn.Conv1d(2, 5, 3))
    with torch.no_grad():
        for name in ("weight_g", "weight_v", "bias"):
            getattr(m, name).copy_(torch.tensor(getattr(t, name).detach().numpy()))
    x = np.random.default_rng(0).standard_normal((2, 2, 9)).astype(np.float32)
    a, b = m(torch.tensor(x)), t(real_torch.tensor(x))
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)
    a.square().sum().backward()
    b.square().sum().backward()
    np.testing.assert_allclose(m.weight_g.grad.numpy(), t.weight_g.grad.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_spectral_norm(device):
    torch.manual_seed(1)
    m = nn.utils.spectral_norm(nn.Linear(6, 5).to(device))
    assert list(m.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    assert [n for n, _ in m.named_parameters()] == ["bias", "weight_orig"]
    for _ in range(50):
        m(torch.randn(2, 6, device=device))
    s = np.linalg.svd(m.weight.detach().cpu().numpy().astype(np.float64), compute_uv=False)
    assert s[0] == pytest.approx(1.0, rel=1e-4)
    m.eval()
    u = m.weight_u.clone()
    m(torch.randn(2, 6, device=device))
    np.testing.assert_array_equal(m.weight_u.cpu().numpy(), u.cpu().numpy())  # no iteration in eval
    m(torch.randn(2, 6, device=device)).sum().backward()
    assert m.weight_orig.grad is not None
    nn.utils.remove_spectral_norm(m)
    assert list(m.state_dict()) == ["bias", "weight"]
    with pytest.raises(ValueError, match="n_power_iterations"):
        nn.utils.spectral_norm(nn.Linear(2, 2), n_power_iterations=0)
    # the parametrize form exists too (tested in test_nn_parametrize.py)
    p = nn.utils.parametrizations.weight_norm(nn.Linear(2, 2))
    assert "parametrizations.weight.original0" in p.state_dict()
