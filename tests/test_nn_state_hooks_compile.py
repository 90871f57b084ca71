"""Module.register_state_dict_pre_hook / register_state_dict_post_hook,
Module.compile() and Module.to_empty(): when the hooks run, what they may
change, removal, that a compiled module still computes the same, and what
to_empty replaces."""
import pytest

import pycuda_sem as torch
import pycuda_sem.nn as nn


def test_state_dict_hooks():
    m = nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 1))
    seen = []
    h1 = m[0].register_state_dict_pre_hook(lambda mod, prefix, keep_vars: seen.append(("pre", prefix, keep_vars)))
    def drop_bias(mod, sd, prefix, meta):
        del sd[prefix + "bias"]

    h2 = m[0].register_state_dict_post_hook(drop_bias)
    sd = m.state_dict()
    assert seen == [("pre", "0.", False)]
    assert list(sd) == ["0.weight", "1.weight", "1.bias"]
    h1.remove()
    h2.remove()
    assert list(m.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias"] and len(seen) == 1
    m.register_state_dict_post_hook(lambda mod, sd, prefix, meta: {})
    with pytest.raises(RuntimeError, match="must return None"):
        m.state_dict()


def test_module_compile_keeps_the_module_working():
    torch.manual_seed(0)
    m = nn.Linear(3, 2)
    x = torch.randn(4, 3)
    want = m(x)
    assert m.compile() is None
    m.compile(mode="max-autotune", fullgraph=True)
    assert torch.equal(m(x), want)
    with pytest.raises(RuntimeError):
        m.compile(mode="fastest", options={"a": 1})


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)])
def test_to_empty(device):
    m = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    assert m.to_empty(device=device) is m
    for n, p in m.named_parameters():
        assert isinstance(p, nn.Parameter) and p.requires_grad and p.device.type == device
    assert tuple(m[0].weight.shape) == (3, 2) and m[1].running_mean.device.type == device
    assert m[0].weight.dtype == torch.float32  # new storage, same shapes and dtypes
    with torch.no_grad():
        for p in m.parameters():
            p.fill_(0.5)
    assert m[0](torch.ones(1, 2, device=device)).tolist() == [[1.5, 1.5, 1.5]]
