"""torch.foreach and torch._foreach_* (foreach.py): every function against
the per-tensor op it loops over, on lists of tensors of different shapes;
the in-place forms keep their tensors; the operand forms (scalar, scalars,
tensors, one tensor) and the errors; and torch's results where it imports."""
import numpy as np
import pytest

import pycuda_sem as torch

from torch_oracle import _torch as real_torch  # torch where it imports, else None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
SHAPES = [(3,), (2, 5), (4, 1, 3)]


def _lists(device, seed=0, positive=False):
    rng = np.random.default_rng(seed)
    arrs = [rng.uniform(0.2, 0.9, s) if positive else rng.standard_normal(s) for s in SHAPES]
    return arrs, [torch.tensor(a, device=device) for a in arrs]


def _close(got, want, rtol=1e-12):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.cpu().numpy(), np.asarray(w, dtype=np.float64), rtol=rtol, atol=1e-300)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(torch.foreach._UNARY))
def test_unary(device, name):
    pos = name in ("acos", "asin", "log", "log10", "log1p", "log2", "rsqrt", "sqrt", "lgamma")
    arrs, xs = _lists(device, positive=pos)
    want = [getattr(x, name)() for x in xs]
    _close(getattr(torch, "_foreach_" + name)(xs), [w.cpu().numpy() for w in want])
    ids = [id(x) for x in xs]
    back = getattr(torch.foreach, name + "_")(xs)
    assert [id(x) for x in back] == ids
    _close(xs, [w.cpu().numpy() for w in want])
    if real_torch is not None:
        ref = getattr(real_torch, "_foreach_" + name)([real_torch.from_numpy(a) for a in arrs])
        _close(want, [r.numpy() for r in ref], rtol=1e-10)


@pytest.mark.parametrize("device", DEVICES)
def test_binary_operand_forms(device):
    arrs, xs = _lists(device)
    _, ys = _lists(device, seed=1)
    yn = [y.cpu().numpy() for y in ys]
    _close(torch._foreach_add(xs, 2.5), [a + 2.5 for a in arrs])
    _close(torch._foreach_add(xs, [1, 2, 3]), [a + k for a, k in zip(arrs, [1, 2, 3])])
    _close(torch._foreach_add(xs, ys, alpha=-2), [a - 2 * b for a, b in zip(arrs, yn)])
    _close(torch._foreach_sub(xs, ys), [a - b for a, b in zip(arrs, yn)])
    _close(torch._foreach_mul(xs, torch.tensor(3.0, device=device)), [3 * a for a in arrs])
    _close(torch._foreach_div(xs, ys), [a / b for a, b in zip(arrs, yn)])
    _close(torch._foreach_maximum(xs, ys), [np.maximum(a, b) for a, b in zip(arrs, yn)])
    _close(torch._foreach_minimum(xs, 0.1), [np.minimum(a, 0.1) for a in arrs])
    _close(torch._foreach_clamp_min(xs, -0.5), [np.maximum(a, -0.5) for a in arrs])
    _close(torch._foreach_clamp_max(xs, [0.0, 0.5, 1.0]),
           [np.minimum(a, k) for a, k in zip(arrs, [0.0, 0.5, 1.0])])
    _close(torch._foreach_pow(xs, 2), [a ** 2 for a in arrs])
    _close(torch._foreach_pow(2.0, xs), [2.0 ** a for a in arrs])
    before = [x.clone() for x in xs]
    back = torch._foreach_mul_(xs, 0.5)
    assert all(b is x for b, x in zip(back, xs))
    _close(xs, [0.5 * b.cpu().numpy() for b in before])


@pytest.mark.parametrize("device", DEVICES)
def test_pointwise_lerp_and_reductions(device):
    arrs, xs = _lists(device)
    _, a = _lists(device, seed=2)
    _, b = _lists(device, seed=3, positive=True)
    an, bn = [t.cpu().numpy() for t in a], [t.cpu().numpy() for t in b]
    _close(torch._foreach_addcmul(xs, a, b, value=2), [x + 2 * p * q for x, p, q in zip(arrs, an, bn)])
    _close(torch._foreach_addcdiv(xs, a, b, [1, 2, 3]),
           [x + k * p / q for x, p, q, k in zip(arrs, an, bn, [1, 2, 3])])
    _close(torch._foreach_addcdiv(xs, a, b, torch.tensor([1.0, 2.0, 3.0])),
           [x + k * p / q for x, p, q, k in zip(arrs, an, bn, [1, 2, 3])])
    _close(torch._foreach_lerp(xs, a, 0.25), [x + 0.25 * (p - x) for x, p in zip(arrs, an)])
    _close(torch._foreach_norm(xs), [np.linalg.norm(x.ravel()) for x in arrs])
    _close(torch._foreach_norm(xs, 1), [np.abs(x).sum() for x in arrs])
    _close(torch._foreach_max(xs), [x.max() for x in arrs])
    _close(torch._foreach_powsum(xs, 3), [(np.abs(x) ** 3).sum() for x in arrs])
    ema = torch._foreach_clone(xs)
    torch._foreach_lerp_(ema, a, 0.1)
    _close(ema, [x + 0.1 * (p - x) for x, p in zip(arrs, an)])
    torch._foreach_copy_(ema, a)
    _close(ema, an)
    torch._foreach_zero_(ema)
    assert all(float(e.abs().sum()) == 0.0 for e in ema)
    m = [torch.tensor(np.arange(6.0).reshape(2, 3), device=device)] * 2
    _close(torch._foreach_mm(m, [t.t() for t in m]), [np.arange(6.0).reshape(2, 3) @ np.arange(6.0).reshape(2, 3).T] * 2)


def test_errors():
    xs = [torch.ones(2), torch.ones(3)]
    with pytest.raises(RuntimeError, match="at least one tensor"):
        torch._foreach_add([], 1)
    with pytest.raises(RuntimeError, match="same number of elements as scalar list"):
        torch._foreach_add(xs, [1])
    with pytest.raises(RuntimeError, match="same number of tensors, got 2 and 1"):
        torch._foreach_add(xs, [torch.ones(2)])
    with pytest.raises(TypeError):
        torch._foreach_add(torch.ones(2), 1)
    with pytest.raises(TypeError):
        torch._foreach_maximum(xs, torch.ones(2))
    with pytest.raises(TypeError):
        torch._foreach_mul(xs, 2, alpha=3)
    with pytest.raises(RuntimeError):
        torch._foreach_add(xs, [torch.ones(2), torch.ones(4)])  # shapes do not broadcast
