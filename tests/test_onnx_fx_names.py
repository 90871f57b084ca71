"""pycuda_sem.onnx and pycuda_sem.fx: what model code calls while it runs
works (is_in_onnx_export is False, fx.wrap returns its argument), and the
exporter and tracer raise NotImplementedError that names them."""
import pytest

import pycuda_sem as torch


def test_runtime_names():
    assert torch.onnx.is_in_onnx_export() is False

    def f(x):
        return x + 1

    assert torch.fx.wrap(f) is f and torch.fx.wrap("f") == "f"
    assert torch.fx.wrap(f)(torch.ones(1)).tolist() == [2.0]


@pytest.mark.parametrize("call, name", [
    (lambda: torch.onnx.export(torch.nn.Linear(1, 1), torch.ones(1, 1), "m.onnx"), "onnx.export"),
    (lambda: torch.onnx.dynamo_export(torch.nn.Linear(1, 1)), "onnx.dynamo_export"),
    (lambda: torch.fx.symbolic_trace(torch.nn.Linear(1, 1)), "fx.symbolic_trace"),
    (lambda: torch.fx.GraphModule(torch.nn.Linear(1, 1), None), "fx.GraphModule"),
    (lambda: torch.fx.Tracer(), "fx.Tracer"),
])
def test_exporter_and_tracer_raise(call, name):
    with pytest.raises(NotImplementedError, match=name.replace(".", r"\.")):
        call()
