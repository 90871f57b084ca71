"""torch.func's transforms (_func_transforms.py): vmap as the stacked
per-sample results, grad/grad_and_value/vjp/jvp/jacrev/jacfwd/hessian
against closed forms in float64, their composition (per-sample gradients,
grad of grad, ensembles through functional_call), torch's errors, and
torch.func's own results where torch imports."""
import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem.func import (vmap, grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian,
                             functional_call, stack_module_state)

from torch_oracle import _torch as real_torch  # torch where it imports, else None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
pytestmark = pytest.mark.usefixtures("no_tf32")


def _data(device):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3))
    w = rng.standard_normal(3)
    return x, w, torch.tensor(x, device=device), torch.tensor(w, device=device)


def npy(t):
    return t.detach().cpu().numpy()


@pytest.mark.parametrize("device", DEVICES)
def test_vmap_stacks_the_per_sample_results(device):
    x, w, tx, tw = _data(device)
    f = lambda v: (v.sin() * tw).sum()  # noqa: E731
    np.testing.assert_allclose(npy(vmap(f)(tx)), (np.sin(x) * w).sum(1), rtol=1e-14)
    np.testing.assert_allclose(npy(vmap(lambda a, b: a * b, in_dims=(0, None))(tx, tw)), x * w)
    np.testing.assert_allclose(npy(vmap(lambda a: a * 2, out_dims=1)(tx)), (x * 2).T)
    np.testing.assert_allclose(npy(vmap(lambda a: a.exp(), in_dims=1)(tx)), np.exp(x).T, rtol=1e-14)
    np.testing.assert_allclose(npy(vmap(vmap(lambda a: a * a))(tx)), x * x)
    out = vmap(lambda d: {"s": d["a"].sum(), "p": (d["a"], d["a"] * 2)})({"a": tx})
    np.testing.assert_allclose(npy(out["s"]), x.sum(1))
    np.testing.assert_allclose(npy(out["p"][1]), 2 * x)
    assert torch.vmap is vmap


@pytest.mark.parametrize("device", DEVICES)
def test_vmap_randomness(device):
    tx = torch.zeros(5, 3, device=device)
    same = vmap(lambda a: a + torch.rand(3, device=device), randomness="same")(tx)
    assert all(bool((same[i] == same[0]).all()) for i in range(5))
    diff = vmap(lambda a: a + torch.rand(3, device=device), randomness="different")(tx)
    assert not bool((diff[1] == diff[0]).all())


@pytest.mark.parametrize("device", DEVICES)
def test_derivatives_against_closed_forms(device):
    x, w, tx, tw = _data(device)
    f = lambda v: (v.sin() * tw).sum()  # noqa: E731
    np.testing.assert_allclose(npy(grad(f)(tx[0])), np.cos(x[0]) * w, rtol=1e-14)
    g, v = grad_and_value(f)(tx[0])
    assert not g.requires_grad and not v.requires_grad
    np.testing.assert_allclose(float(v), (np.sin(x[0]) * w).sum(), rtol=1e-14)
    np.testing.assert_allclose(npy(vmap(grad(f))(tx)), np.cos(x) * w, rtol=1e-14)
    d2 = grad(grad(lambda s: s.sin()))(torch.tensor(0.7, dtype=torch.float64, device=device))
    assert abs(float(d2) + np.sin(0.7)) < 1e-15
    ga, gb = grad(lambda a, b: (a * b).sum(), argnums=(0, 1))(tx[0], tw)
    np.testing.assert_allclose(npy(ga), w), np.testing.assert_allclose(npy(gb), x[0])
    out, fn = vjp(lambda v: v ** 2, tx[0])
    np.testing.assert_allclose(npy(fn(torch.ones(3, dtype=torch.float64, device=device))[0]), 2 * x[0])
    val, jt = jvp(lambda v: v.exp() * v.sum(), (tx[0],), (tw,))
    jac = np.diag(np.exp(x[0]) * x[0].sum()) + np.outer(np.exp(x[0]), np.ones(3))
    np.testing.assert_allclose(npy(jt), jac @ w, rtol=1e-13)
    np.testing.assert_allclose(npy(jacrev(lambda v: v.exp() * v.sum())(tx[0])), jac, rtol=1e-13)
    ja, jb = jacfwd(lambda a, b: a * b, argnums=(0, 1))(tx[0], tw)
    np.testing.assert_allclose(npy(ja), np.diag(w)), np.testing.assert_allclose(npy(jb), np.diag(x[0]))
    np.testing.assert_allclose(npy(hessian(lambda v: (v ** 3).sum())(tx[0])), np.diag(6 * x[0]), rtol=1e-14)
    (g, aux) = grad(lambda v: ((v * v).sum(), v.mean()), has_aux=True)(tx[0])
    np.testing.assert_allclose(npy(g), 2 * x[0]), np.testing.assert_allclose(float(aux), x[0].mean())


@pytest.mark.parametrize("device", DEVICES)
def test_ensembles_and_parameter_gradients(device):
    torch.manual_seed(0)
    x = torch.randn(5, 3, dtype=torch.float64, device=device)
    m = torch.nn.Linear(3, 2).double().to(device)
    params = {k: v.detach() for k, v in m.named_parameters()}
    g = grad(lambda p, inp: functional_call(m, p, (inp,)).pow(2).sum())(params, x)
    m.zero_grad()
    m(x).pow(2).sum().backward()
    for k, p in m.named_parameters():
        np.testing.assert_allclose(npy(g[k]), npy(p.grad), rtol=1e-13)
    models = [torch.nn.Linear(3, 2).double().to(device) for _ in range(4)]
    ps, bs = stack_module_state(models)
    assert ps["weight"].shape == (4, 2, 3) and ps["weight"].requires_grad
    out = vmap(lambda p, b, inp: functional_call(models[0], (p, b), (inp,)), in_dims=(0, 0, None))(ps, bs, x)
    for i, mi in enumerate(models):
        np.testing.assert_allclose(npy(out[i]), npy(mi(x)), rtol=1e-13)


def test_errors():
    x = torch.ones(2, 3)
    with pytest.raises(ValueError, match="same size in the mapped dimension"):
        vmap(lambda a, b: a + b)(x, torch.ones(3, 2))
    with pytest.raises(ValueError, match="at least one input"):
        vmap(lambda a: a, in_dims=None)(x)
    with pytest.raises(ValueError, match="must only return Tensors"):
        vmap(lambda a: 3.0)(x)
    with pytest.raises(RuntimeError, match="Only allowed values for randomness"):
        vmap(lambda a: a, randomness="sometimes")
    with pytest.raises(RuntimeError, match="Expected f\\(\\*args\\) to return a scalar Tensor"):
        grad(lambda v: v * 2)(x[0])
    with pytest.raises(RuntimeError, match="only 1 positional inputs"):
        grad(lambda v: v.sum(), argnums=1)(x[0])


def test_same_values_as_torch_func():
    if real_torch is None:
        pytest.skip("torch is not installed")
    x, w, tx, tw = _data("cpu")
    rx, rw = real_torch.tensor(x), real_torch.tensor(w)
    rf = real_torch.func
    cases = [
        (lambda v: vmap(grad(lambda s: (s.sin() * tw).sum()))(v),
         lambda v: rf.vmap(rf.grad(lambda s: (s.sin() * rw).sum()))(v)),
        (lambda v: jacrev(lambda s: s.tanh() * s.sum())(v[0]),
         lambda v: rf.jacrev(lambda s: s.tanh() * s.sum())(v[0])),
        (lambda v: hessian(lambda s: (s.exp() * s).sum())(v[1]),
         lambda v: rf.hessian(lambda s: (s.exp() * s).sum())(v[1])),
        (lambda v: jvp(lambda s: s.sin() * s, (v[2],), (tw,))[1],
         lambda v: rf.jvp(lambda s: s.sin() * s, (v[2],), (rw,))[1]),
    ]
    for ours, theirs in cases:
        np.testing.assert_allclose(npy(ours(tx)), theirs(rx).numpy(), rtol=1e-13, atol=1e-15)
