"""torch 2.15's `bias` argument of BatchNorm, InstanceNorm, GroupNorm and
SyncBatchNorm: bias=False keeps the affine weight only, the output is the
normalised input times the weight, and the default layers are unchanged."""
import numpy as np
import pytest

import pycuda_sem as torch
import pycuda_sem.nn as nn

from torch_oracle import _torch as real_torch  # torch where it imports, else None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]


def _normalised(x, axes, eps=1e-5):
    m = x.mean(axis=axes, keepdims=True)
    v = x.var(axis=axes, keepdims=True)
    return (x - m) / np.sqrt(v + eps)


@pytest.mark.parametrize("device", DEVICES)
def test_bias_false_keeps_the_weight_only(device):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3, 5, 5))
    w = rng.standard_normal(3)
    cases = [(nn.BatchNorm2d(3, bias=False), (0, 2, 3)),
             (nn.InstanceNorm2d(3, affine=True, bias=False), (2, 3)),
             (nn.SyncBatchNorm(3, bias=False), (0, 2, 3))]
    for m, axes in cases:
        m = m.double().to(device)
        assert [n for n, _ in m.named_parameters()] == ["weight"] and m.bias is None
        assert "bias=False" in repr(m)
        with torch.no_grad():
            m.weight.copy_(torch.tensor(w))
        y = m(torch.tensor(x, device=device)).cpu().numpy()
        np.testing.assert_allclose(y, _normalised(x, axes) * w.reshape(1, 3, 1, 1), rtol=1e-10, atol=1e-12)
        if real_torch is not None:
            try:
                rm = type(m).__mro__[0]
                rcls = getattr(real_torch.nn, rm.__name__)
                kw = {"affine": True} if "Instance" in rm.__name__ else {}
                r = rcls(3, bias=False, **kw).double()
            except TypeError:  # a torch before 2.15 has no bias argument
                continue
            with real_torch.no_grad():
                r.weight.copy_(real_torch.from_numpy(w))
            np.testing.assert_allclose(y, r(real_torch.from_numpy(x)).detach().numpy(), rtol=1e-10, atol=1e-12)
    g = nn.GroupNorm(1, 3, bias=False).double().to(device)
    assert [n for n, _ in g.named_parameters()] == ["weight"] and repr(g).endswith("bias=False)")
    yg = g(torch.tensor(x, device=device)).detach().cpu().numpy()
    np.testing.assert_allclose(yg, _normalised(x, (1, 2, 3)), rtol=1e-10, atol=1e-12)
    d = nn.BatchNorm2d(3)
    assert [n for n, _ in d.named_parameters()] == ["weight", "bias"] and "bias" not in repr(d)
