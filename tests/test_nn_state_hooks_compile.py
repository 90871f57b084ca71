"""Module.register_state_dict_pre_hook / register_state_dict_post_hook and
Module.compile(): when the hooks run, what they may change, removal, and
that a compiled module still computes the same."""
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
