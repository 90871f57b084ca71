"""What a recorded op keeps for its backward decides which later in-place
changes are allowed: an op keeps only what the gradients it must compute
read (x * 2 keeps nothing of x, x @ W with W frozen keeps W, topk keeps its
indices, not the values), as torch does, so code that scales the values of
a topk in place (mixture-of-experts routing) or adds to a layer_norm output
runs, with the gradient of the values at the time of the op. What is kept
and then changed still raises torch's error. Gradients are checked against
the same computation written out of place, in float64."""
import numpy as np
import pytest

import pycuda_sem as torch
import pycuda_sem.nn.functional as F

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
pytestmark = pytest.mark.usefixtures("no_tf32")


def _leaf(device, shape=(4, 5), seed=0):
    a = np.random.default_rng(seed).standard_normal(shape)
    return torch.tensor(a, dtype=torch.float64, device=device, requires_grad=True)


def _const(device, shape=(4, 5), seed=1, shift=0.0):
    a = np.random.default_rng(seed).standard_normal(shape) + shift
    return torch.tensor(a, dtype=torch.float64, device=device)


# (name, op of (x, c), whether the change is to the op's input or its output)
CASES = [
    ("mul by a number, input changed", lambda x, c: x * 2.0, "in"),
    ("mul by a frozen tensor, input changed", lambda x, c: x * c, "in"),
    ("frozen tensor times x, input changed", lambda x, c: c * x, "in"),
    ("div by a frozen tensor, input changed", lambda x, c: x / (c + 3), "in"),
    ("div by a number, output changed", lambda x, c: x / 0.5, "out"),
    ("pow by a number, output changed", lambda x, c: x ** 2, "out"),
    ("matmul by a frozen matrix, input changed", lambda x, c: x @ c.t(), "in"),
    ("frozen matrix matmul, input changed", lambda x, c: c.t() @ x, "in"),
    ("mm by a frozen matrix, input changed", lambda x, c: x.mm(c.t()), "in"),
    ("where, input changed", lambda x, c: torch.where(c > 0, x, 0.0), "in"),
    ("lerp by a number, input changed", lambda x, c: torch.lerp(x, c, 0.3), "in"),
    ("layer_norm, output changed", lambda x, c: F.layer_norm(x, (5,)), "out"),
    ("max over a dim, values changed", lambda x, c: x.max(1)[0], "out"),
    ("sort, values changed", lambda x, c: x.sort(1)[0], "out"),
    ("topk, values changed", lambda x, c: x.topk(2, 1)[0], "out"),
    ("cummax, values changed", lambda x, c: x.cummax(1)[0], "out"),
    ("median over a dim, values changed", lambda x, c: x.median(1)[0], "out"),
    ("kthvalue, values changed", lambda x, c: x.kthvalue(2, 1)[0], "out"),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name, op, where", CASES, ids=[c[0] for c in CASES])
def test_change_in_place_after_the_op(device, name, op, where):
    x0 = _leaf(device)
    c = _const(device)
    # out of place: the reference gradient (a weighted sum, so that every
    # element's gradient differs)
    y = op(x0 * 1.0, c)
    w = _const(device, tuple(y.shape), seed=2)
    (y * w).sum().backward()
    want = x0.grad.clone()
    x0.grad = None
    # the same op, then the input or the output changed in place
    x = x0 * 1.0
    y = op(x, c)
    if where == "in":
        x.mul_(1.5)
    else:
        y.mul_(1.5)
    (y * w).sum().backward()
    scale = 1.5 if where == "out" else 1.0
    np.testing.assert_allclose(x0.grad.cpu().numpy(), scale * want.cpu().numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("device", DEVICES)
def test_topk_weights_normalised_in_place(device):
    # mixture-of-experts routing: the top-k probabilities renormalised in place
    logits = _leaf(device, (6, 8), seed=3)
    v = _const(device, (6, 2), seed=4)

    def route(inplace):
        p = logits.softmax(-1)
        wts, idx = p.topk(2, dim=-1)
        if inplace:
            wts /= wts.sum(-1, keepdim=True)
        else:
            wts = wts / wts.sum(-1, keepdim=True)
        return (wts * v).sum() + idx.sum() * 0

    route(False).backward()
    want = logits.grad.clone()
    logits.grad = None
    route(True).backward()
    np.testing.assert_allclose(logits.grad.cpu().numpy(), want.cpu().numpy(), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("device", DEVICES)
def test_div_in_place_by_a_tensor_that_requires_grad(device):
    # a.div_(b) keeps a copy of the a it overwrites (b's gradient reads it),
    # so a may change in place again afterwards
    a0, b = _leaf(device, seed=5), _leaf(device, seed=6)
    with torch.no_grad():
        b.add_(torch.sign(b) * 2)
    (a0 * 1.0 / b * 3).sum().backward()
    wa, wb = a0.grad.clone(), b.grad.clone()
    a0.grad = b.grad = None
    a = a0 * 1.0
    a.div_(b)
    a.mul_(3)
    a.sum().backward()
    np.testing.assert_allclose(a0.grad.cpu().numpy(), wa.cpu().numpy(), rtol=1e-12)
    np.testing.assert_allclose(b.grad.cpu().numpy(), wb.cpu().numpy(), rtol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_what_is_kept_and_changed_still_raises(device):
    # x * y with both requiring grad keeps each for the other's gradient;
    # softmax keeps its output: changing those in place is torch's error
    x, y = _leaf(device, seed=7), _leaf(device, seed=8)
    a = x * 1.0
    z = a * y
    a.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()
    s = (x * 1.0).softmax(-1)
    s.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        s.sum().backward()
    p = x * 1.0
    q = p ** 2
    p.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        q.sum().backward()


@pytest.mark.parametrize("device", DEVICES)
def test_kept_only_when_needed_for_the_exponent_and_the_full_reductions(device):
    # the exponent's gradient of pow and the full max/median are computed
    # from what is kept (the result is made again), against the definition
    x = torch.tensor([[0.5, 1.5, 2.0], [1.0, 3.0, 0.25]], dtype=torch.float64, device=device, requires_grad=True)
    e = torch.tensor([2.0, 0.5, 3.0], dtype=torch.float64, device=device, requires_grad=True)
    r = x ** e
    r.add_(1)
    r.sum().backward()
    xn, en = x.detach().cpu().numpy(), e.detach().cpu().numpy()
    np.testing.assert_allclose(e.grad.cpu().numpy(), (xn ** en * np.log(xn)).sum(0), rtol=1e-12)
    np.testing.assert_allclose(x.grad.cpu().numpy(), en * xn ** (en - 1), rtol=1e-12)
    x.grad = None
    m = (x * 1.0).max()
    m.backward()
    g = np.zeros_like(xn)
    g[1, 1] = 1.0
    np.testing.assert_allclose(x.grad.cpu().numpy(), g)
    x.grad = None
    t = torch.tensor([1.0, 2.0, 2.0, 5.0], dtype=torch.float64, device=device, requires_grad=True)
    t.median().backward()
    np.testing.assert_allclose(t.grad.cpu().numpy(), [0, 0.5, 0.5, 0])
