"""pycuda_sem.ao.quantization (and its older name pycuda_sem.quantization):
the float-mode stubs work as torch's do before conversion (QuantStub and
DeQuantStub are identities, QuantWrapper puts a module between them), and
every quantizing step raises NotImplementedError that names it."""
import numpy as np
import pytest

import pycuda_sem as torch
from torch_oracle import _torch as real_torch

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]


@pytest.mark.parametrize("device", DEVICES)
def test_stubs_are_identities_in_a_float_model(device):
    from pycuda_sem.ao.quantization import DeQuantStub, QuantStub, QuantWrapper
    x = torch.randn(4, 3, device=device)
    assert QuantStub()(x) is x and DeQuantStub()(x) is x
    lin = torch.nn.Linear(3, 2).to(device)
    w = QuantWrapper(lin)
    np.testing.assert_array_equal(w(x).detach().cpu().numpy(), lin(x).detach().cpu().numpy())
    assert list(w.state_dict()) == ["module.weight", "module.bias"]
    assert [n for n, _ in w.named_children()] == ["quant", "dequant", "module"]
    if real_torch is not None:
        tw = real_torch.ao.quantization.QuantWrapper(real_torch.nn.Linear(3, 2))
        assert list(tw.state_dict()) == list(w.state_dict())
        assert [n for n, _ in tw.named_children()] == [n for n, _ in w.named_children()]
        tx = real_torch.randn(2, 3)
        assert real_torch.ao.quantization.QuantStub()(tx) is tx  # torch's float stub too


def test_qconfig_is_kept_and_the_two_names_are_one_module():
    import pycuda_sem.quantization as q
    assert q is torch.quantization is torch.ao.quantization
    s = torch.ao.quantization.QuantStub(qconfig="cfg")
    assert s.qconfig == "cfg" and not hasattr(torch.ao.quantization.QuantStub(), "qconfig")
    assert not hasattr(q, "no_such_name")


@pytest.mark.parametrize("name", ["quantize_dynamic", "prepare", "convert", "quantize", "prepare_qat",
                                  "fuse_modules", "get_default_qconfig"])
def test_quantizing_steps_raise_at_the_call(name):
    fn = getattr(torch.ao.quantization, name)  # importing the name works
    with pytest.raises(NotImplementedError, match="ao.quantization.%s is not implemented" % name):
        fn(torch.nn.Linear(2, 2))


def test_qconfig_values_and_classes_raise():
    with pytest.raises(NotImplementedError, match="default_qconfig"):
        torch.quantization.default_qconfig
    for cls in ("QConfig", "MinMaxObserver", "FakeQuantize"):
        with pytest.raises(NotImplementedError, match=cls):
            getattr(torch.ao.quantization, cls)()
