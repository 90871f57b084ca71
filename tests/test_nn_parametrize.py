"""nn.utils.parametrize (register_parametrization, stacking, right_inverse,
unsafe, remove_parametrizations, cached, is_parametrized,
type_before_parametrizations, transfer_parametrizations_and_params) and
nn.utils.parametrizations (orthogonal with its three maps, weight_norm,
spectral_norm): values and gradients against NumPy float64 references,
class names, reprs and state_dict keys as torch's, and values/gradients
against real torch on the same state where it imports."""
import copy

import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import nn
from pycuda_sem.nn.utils import parametrize as P
from pycuda_sem.nn.utils import parametrizations as PZ
from torch_oracle import _torch as real_torch

pytestmark = pytest.mark.usefixtures("no_tf32")
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
rng = np.random.default_rng(11)


def npy(t):
    return t.detach().cpu().numpy()


def make_sym(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).mT

        def right_inverse(self, a):
            return a.triu()
    return Symmetric


def make_scale(lib):
    class Scale(lib.nn.Module):
        def forward(self, x):
            return 2 * x

        def right_inverse(self, x):
            return x / 2
    return Scale


def make_split(lib):
    class Split(lib.nn.Module):  # right_inverse returns two tensors
        def forward(self, a, b):
            return a + b.exp()

        def right_inverse(self, w):
            return w, lib.zeros_like(w)
    return Split


def sym_np(x):
    return np.triu(x) + np.triu(x, 1).T


@pytest.mark.parametrize("device", DEVICES)
def test_register_stack_and_gradients(device):
    w0 = rng.standard_normal((4, 4))
    g = rng.standard_normal((4, 4))
    m = nn.Linear(4, 4, dtype=torch.float64).to(device)
    with torch.no_grad():
        m.weight.copy_(torch.tensor(w0))
    orig = m.weight
    P.register_parametrization(m, "weight", make_sym(torch)())
    assert type(m).__name__ == "ParametrizedLinear"
    assert P.type_before_parametrizations(m) is nn.Linear and isinstance(m, nn.Linear)
    assert P.is_parametrized(m) and P.is_parametrized(m, "weight")
    assert not P.is_parametrized(m, "bias")
    # the original keeps its identity (an optimizer made before still trains it) and
    # holds right_inverse(w0)
    assert m.parametrizations.weight.original is orig
    np.testing.assert_allclose(npy(orig), np.triu(w0), rtol=0, atol=0)
    np.testing.assert_allclose(npy(m.weight), sym_np(np.triu(w0)), rtol=1e-15)
    P.register_parametrization(m, "weight", make_scale(torch)())
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original"]
    assert "(0): Symmetric()" in repr(m) and "(1): Scale()" in repr(m)
    np.testing.assert_allclose(npy(m.weight), 2 * sym_np(np.triu(w0)), rtol=1e-15)
    (m.weight * torch.tensor(g, device=device)).sum().backward()
    gs = 2 * g
    ref = np.triu(gs) + np.triu(gs.T, 1)  # d/dX of sum(G * (triu X + triu(X,1)^T))
    np.testing.assert_allclose(npy(orig.grad), ref, rtol=1e-14)
    # assignment runs the right_inverses (Scale's, then Symmetric's)
    target = sym_np(rng.standard_normal((4, 4)))
    m.weight = torch.tensor(target, device=device)
    np.testing.assert_allclose(npy(m.weight), target, rtol=1e-14)
    np.testing.assert_allclose(npy(orig), np.triu(target) / 2, rtol=1e-14)
    x = torch.tensor(rng.standard_normal((3, 4)), device=device)
    np.testing.assert_allclose(npy(m(x)), npy(x) @ target.T + npy(m.bias), rtol=1e-12)


def test_same_as_torch_state_dict_and_grads():
    if real_torch is None:
        pytest.skip("real torch not importable")
    w0 = rng.standard_normal((3, 3))
    mods = []
    for lib in (torch, real_torch):
        m = lib.nn.Linear(3, 3, dtype=lib.float64)
        with lib.no_grad():
            m.weight.copy_(lib.tensor(w0))
            m.bias.zero_()
        P_ = lib.nn.utils.parametrize
        P_.register_parametrization(m, "weight", make_split(lib)())
        P_.register_parametrization(m, "weight", make_sym(lib)(), unsafe=True)
        mods.append(m)
    a, b = mods
    assert type(a).__name__ == type(b).__name__
    assert list(a.state_dict()) == list(b.state_dict())
    assert a.parametrizations.weight.unsafe == b.parametrizations.weight.unsafe
    np.testing.assert_allclose(npy(a.weight), b.weight.detach().numpy(), rtol=1e-14)
    g = rng.standard_normal((3, 3))
    (a.weight * torch.tensor(g)).sum().backward()
    (b.weight * real_torch.tensor(g)).sum().backward()
    for pa, pb in zip(a.parameters(), b.parameters()):
        if pb.grad is None:  # the bias is not in the loss
            assert pa.grad is None
            continue
        np.testing.assert_allclose(npy(pa.grad), pb.grad.numpy(), rtol=1e-14)
    assert repr(a) == repr(b)


def test_several_originals_and_remove():
    m = nn.Linear(3, 2, dtype=torch.float64)
    w0 = npy(m.weight).copy()
    P.register_parametrization(m, "weight", make_split(torch)())
    keys = list(m.state_dict())
    assert keys == ["bias", "parametrizations.weight.original0",
                    "parametrizations.weight.original1"]
    plist = m.parametrizations.weight
    assert not plist.is_tensor and plist.ntensors == 2
    np.testing.assert_allclose(npy(m.weight), w0 + 1, rtol=1e-15)
    assert isinstance(plist.original0, nn.Parameter)
    with pytest.raises(ValueError, match="Cannot leave unparametrized"):
        P.remove_parametrizations(m, "weight", leave_parametrized=False)
    P.remove_parametrizations(m, "weight")
    assert type(m) is nn.Linear and not hasattr(m, "parametrizations")
    assert isinstance(m.weight, nn.Parameter) and m.weight.grad_fn is None
    np.testing.assert_allclose(npy(m.weight), w0 + 1, rtol=1e-15)
    assert list(m.state_dict()) == ["bias", "weight"]

    # one original: leave_parametrized=False gives the original back
    m = nn.Linear(3, 3, dtype=torch.float64)
    w0 = npy(m.weight).copy()
    P.register_parametrization(m, "weight", make_scale(torch)())
    orig = m.parametrizations.weight.original
    P.register_parametrization(m, "bias", make_scale(torch)())
    P.remove_parametrizations(m, "weight", leave_parametrized=False)
    assert type(m).__name__ == "ParametrizedLinear"  # bias still parametrized
    assert m.weight is orig
    np.testing.assert_allclose(npy(m.weight), w0 / 2, rtol=1e-15)
    P.remove_parametrizations(m, "bias", leave_parametrized=True)
    assert type(m) is nn.Linear
    with pytest.raises(ValueError, match="does not have a parametrization on"):
        P.remove_parametrizations(m, "weight")


def test_errors_unsafe_and_cached():
    class Grow(nn.Module):
        def forward(self, x):
            return torch.cat([x, x], 0)
    m = nn.Linear(3, 2)
    with pytest.raises(ValueError, match="may not change the shape"):
        P.register_parametrization(m, "weight", Grow())
    assert type(m) is nn.Linear
    P.register_parametrization(m, "weight", Grow(), unsafe=True)
    assert tuple(m.weight.shape) == (4, 3)
    with pytest.raises(ValueError, match="does not have a parameter, a buffer"):
        P.register_parametrization(m, "nothing", Grow())

    class Half(nn.Module):
        def forward(self, x):
            return x.to(torch.float64)
    with pytest.raises(ValueError, match="may not change the dtype"):
        P.register_parametrization(nn.Linear(2, 2), "weight", Half())

    m = nn.Linear(3, 3)
    P.register_parametrization(m, "weight", make_scale(torch)())
    assert m.weight is not m.weight
    with P.cached():
        w = m.weight
        assert m.weight is w
        with P.cached():
            assert m.weight is w
        assert m.weight is w
    assert m.weight is not w
    with pytest.raises(RuntimeError, match="does not implement right_inverse"):
        P.register_parametrization(m, "weight", Grow(), unsafe=True)
        m.weight = torch.zeros(6, 3)
    c = copy.deepcopy(m)
    assert type(c).__name__ == "ParametrizedLinear"
    np.testing.assert_allclose(npy(c.weight), npy(m.weight))


def test_transfer_parametrizations_and_params():
    a = nn.Linear(3, 3, dtype=torch.float64)
    P.register_parametrization(a, "weight", make_sym(torch)())
    b = nn.Linear(3, 3, dtype=torch.float64)
    P.transfer_parametrizations_and_params(a, b)
    assert type(b).__name__ == "ParametrizedLinear"
    assert b.parametrizations.weight.original is a.parametrizations.weight.original
    np.testing.assert_allclose(npy(b.weight), npy(a.weight))


def np_qr_q(w):
    n, k = w.shape
    t = n < k
    a = w.T if t else w
    q, r = np.linalg.qr(a)
    q = q * np.sign(np.diag(r))
    return q.T if t else q


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("omap", ["matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 3, 3)])
def test_orthogonal(device, omap, shape):
    w0 = rng.standard_normal(shape)
    m = nn.Module()
    m.weight = nn.Parameter(torch.tensor(w0, device=device))
    PZ.orthogonal(m, orthogonal_map=omap)
    keys = list(m.state_dict())
    assert keys == ["parametrizations.weight.original", "parametrizations.weight.0.base"]
    w = npy(m.weight)
    # right after registration the weight is the Q of w0's QR (R with a positive diagonal)
    ref = np.stack([np_qr_q(x) for x in w0.reshape((-1,) + shape[-2:])]).reshape(shape)
    np.testing.assert_allclose(w, ref, rtol=1e-10, atol=1e-12)
    # a gradient step on the original keeps it orthogonal
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    g = torch.tensor(rng.standard_normal(shape), device=device)
    (m.weight * g).sum().backward()
    opt.step()
    w = npy(m.weight)
    n, k = shape[-2:]
    gram = w @ np.swapaxes(w, -1, -2) if n <= k else np.swapaxes(w, -1, -2) @ w
    np.testing.assert_allclose(gram, np.broadcast_to(np.eye(min(n, k)), gram.shape), atol=1e-12)
    assert float(np.abs(w - ref).max()) > 1e-4  # it moved
    if real_torch is not None:
        tm = real_torch.nn.Module()
        tm.weight = real_torch.nn.Parameter(real_torch.tensor(w0))
        real_torch.nn.utils.parametrizations.orthogonal(tm, orthogonal_map=omap)
        # the same state (the base of a non-square weight has random extra columns)
        m2 = nn.Module()
        m2.weight = nn.Parameter(torch.tensor(w0, device=device))
        PZ.orthogonal(m2, orthogonal_map=omap)
        m2.load_state_dict({k: torch.tensor(v.numpy(), device=device)
                            for k, v in tm.state_dict().items()})
        np.testing.assert_allclose(npy(m2.weight), tm.weight.detach().numpy(), atol=1e-12)
        g = rng.standard_normal(shape)
        (m2.weight * torch.tensor(g, device=device)).sum().backward()
        (tm.weight * real_torch.tensor(g)).sum().backward()
        np.testing.assert_allclose(npy(m2.parametrizations.weight.original.grad),
                                   tm.parametrizations.weight.original.grad.numpy(), atol=1e-11)


def test_orthogonal_no_trivialization_and_errors():
    w0 = rng.standard_normal((4, 3))
    m = nn.Module()
    m.weight = nn.Parameter(torch.tensor(w0))
    PZ.orthogonal(m, orthogonal_map="householder", use_trivialization=False)
    assert list(m.state_dict()) == ["parametrizations.weight.original"]
    np.testing.assert_allclose(npy(m.weight), np_qr_q(w0), atol=1e-12)
    m = nn.Module()
    m.weight = nn.Parameter(torch.tensor(w0))
    PZ.orthogonal(m, orthogonal_map="cayley", use_trivialization=False)
    with pytest.raises(NotImplementedError, match="use_trivialization=False"):
        m.weight = torch.tensor(np_qr_q(w0))
    with pytest.raises(ValueError, match="orthogonal_map has to be one of"):
        PZ.orthogonal(nn.Linear(3, 3), orthogonal_map="qr")
    with pytest.raises(ValueError, match="Expected a matrix"):
        m = nn.Module()
        m.weight = nn.Parameter(torch.ones(3))
        PZ.orthogonal(m)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm(device, dim):
    conv = nn.Conv2d(2, 3, 3, dtype=torch.float64).to(device)
    w0 = npy(conv.weight).copy()
    PZ.weight_norm(conv, dim=dim)
    keys = list(conv.state_dict())
    assert keys == ["bias", "parametrizations.weight.original0",
                    "parametrizations.weight.original1"]
    g, v = conv.parametrizations.weight.original0, conv.parametrizations.weight.original1
    axes = tuple(i for i in range(4) if i != dim) if dim is not None else None
    norm = np.sqrt((w0 ** 2).sum(axis=axes, keepdims=dim is not None))
    np.testing.assert_allclose(npy(g), norm, rtol=1e-14)
    np.testing.assert_allclose(npy(conv.weight), w0, rtol=1e-13)
    with torch.no_grad():
        g.mul_(2)
    np.testing.assert_allclose(npy(conv.weight), 2 * w0, rtol=1e-13)
    G = rng.standard_normal(w0.shape)
    (conv.weight * torch.tensor(G, device=device)).sum().backward()
    vn = npy(v)
    ref_g = (G * vn / norm).sum(axis=axes, keepdims=dim is not None)
    np.testing.assert_allclose(npy(g.grad), ref_g, rtol=1e-12)
    if real_torch is not None:
        tc = real_torch.nn.Conv2d(2, 3, 3, dtype=real_torch.float64)
        real_torch.nn.utils.parametrizations.weight_norm(tc, dim=dim)
        assert list(tc.state_dict()) == keys
        tc.load_state_dict({k: real_torch.tensor(npy(t)) for k, t in conv.state_dict().items()})
        (tc.weight * real_torch.tensor(G)).sum().backward()
        for name in ("original0", "original1"):
            np.testing.assert_allclose(npy(getattr(conv.parametrizations.weight, name).grad),
                                       getattr(tc.parametrizations.weight, name).grad.numpy(),
                                       rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("device", DEVICES)
def test_spectral_norm(device):
    lin = nn.Linear(5, 4, dtype=torch.float64).to(device)
    w0 = npy(lin.weight).copy()
    PZ.spectral_norm(lin, n_power_iterations=3)
    assert list(lin.state_dict()) == ["bias", "parametrizations.weight.original",
                                      "parametrizations.weight.0._u",
                                      "parametrizations.weight.0._v"]
    sn = lin.parametrizations.weight[0]
    u0, v0 = npy(sn._u).copy(), npy(sn._v).copy()
    w = npy(lin.weight)  # training: 3 more power iterations, then w / (u^T W v)
    u, v = u0, v0
    for _ in range(3):
        u = w0 @ v
        u /= np.linalg.norm(u)
        v = w0.T @ u
        v /= np.linalg.norm(v)
    np.testing.assert_allclose(w, w0 / (u @ w0 @ v), rtol=1e-12)
    np.testing.assert_allclose(npy(sn._u), u, rtol=1e-12)
    for _ in range(30):
        lin.weight
    np.testing.assert_allclose(np.linalg.norm(npy(lin.weight), 2), 1.0, rtol=1e-8)
    lin.eval()
    u1 = npy(sn._u).copy()
    lin.weight
    np.testing.assert_array_equal(npy(sn._u), u1)  # eval: no power iteration
    G = rng.standard_normal(w0.shape)
    (lin.weight * torch.tensor(G, device=device)).sum().backward()
    if real_torch is not None:
        tl = real_torch.nn.Linear(5, 4, dtype=real_torch.float64)
        real_torch.nn.utils.parametrizations.spectral_norm(tl, n_power_iterations=3)
        tl.load_state_dict({k: real_torch.tensor(npy(t)) for k, t in lin.state_dict().items()})
        tl.eval()
        (tl.weight * real_torch.tensor(G)).sum().backward()
        np.testing.assert_allclose(npy(lin.weight), tl.weight.detach().numpy(), rtol=1e-13)
        np.testing.assert_allclose(npy(lin.parametrizations.weight.original.grad),
                                   tl.parametrizations.weight.original.grad.numpy(),
                                   rtol=1e-11, atol=1e-13)
    with pytest.raises(ValueError, match="n_power_iterations"):
        PZ.spectral_norm(nn.Linear(2, 2), n_power_iterations=0)
    ct = nn.ConvTranspose2d(3, 2, 2)
    PZ.spectral_norm(ct)
    assert ct.parametrizations.weight[0].dim == 1


def test_weight_norm_loads_hook_form_state_dict():
    old = nn.utils.weight_norm(nn.Linear(4, 3, dtype=torch.float64))
    with torch.no_grad():
        old.weight_g.mul_(1.5)
    sd = old.state_dict()
    assert sorted(sd) == ["bias", "weight_g", "weight_v"]
    new = PZ.weight_norm(nn.Linear(4, 3, dtype=torch.float64))
    new.load_state_dict(sd)
    np.testing.assert_allclose(npy(new.parametrizations.weight.original0), npy(old.weight_g))
    x = torch.tensor(rng.standard_normal((2, 4)))
    np.testing.assert_allclose(npy(new(x)), npy(old(x)), rtol=1e-14)
    # the public pre-hook sees the module and may rename keys in place
    seen = []

    def hook(module, state_dict, prefix, *rest):
        seen.append(module)
        state_dict[prefix + "weight"] = state_dict.pop(prefix + "w")
    lin = nn.Linear(2, 2)
    h = lin.register_load_state_dict_pre_hook(hook)
    lin.load_state_dict({"w": torch.ones(2, 2), "bias": torch.zeros(2)})
    assert seen == [lin] and float(lin.weight.sum()) == 4
    h.remove()
    with pytest.raises(RuntimeError, match="Missing key"):
        lin.load_state_dict({"w": torch.ones(2, 2), "bias": torch.zeros(2)})
