"""torch.set_default_device and a device as a context manager: which
factories follow the default (every creation factory, nn layers'
parameters), which keep their input's device (*_like) or an explicit
device=, nesting and restoring, and device=None meaning the default."""
import pytest

import pycuda_sem as torch
import pycuda_sem.nn as nn


@pytest.fixture(autouse=True)
def _restore():
    yield
    torch.set_default_device(None)


def _creations():
    return {
        "zeros": torch.zeros(2), "ones": torch.ones(2, 3), "empty": torch.empty(4), "full": torch.full((2,), 3.0),
        "rand": torch.rand(3), "randn": torch.randn(3), "randint": torch.randint(0, 5, (3,)),
        "randperm": torch.randperm(5), "arange": torch.arange(4), "linspace": torch.linspace(0, 1, 5),
        "logspace": torch.logspace(0, 1, 3), "eye": torch.eye(3), "tensor": torch.tensor([1.0, 2.0]),
        "as_tensor": torch.as_tensor([1, 2]), "empty_strided": torch.empty_strided((2, 2), (2, 1)),
        "tensor_None": torch.tensor([1.0], device=None),
        "linear": nn.Linear(3, 2).weight, "embedding": nn.Embedding(4, 2).weight,
    }


def test_cpu_default_and_the_context_manager_on_the_cpu():
    assert torch.get_default_device() == torch.device("cpu")
    with torch.device("cpu") as d:
        assert d == torch.device("cpu")
        assert all(t.device.type == "cpu" for t in _creations().values())
    torch.set_default_device("cpu")
    assert torch.get_default_device() == torch.device("cpu")
    torch.set_default_device(None)
    assert torch.ones(1).device.type == "cpu"


@pytest.mark.cuda
def test_cuda_default_reaches_every_creation_factory():
    torch.set_default_device("cuda")
    assert torch.get_default_device() == torch.device("cuda", torch.cuda.current_device())
    made = _creations()
    wrong = [k for k, t in made.items() if t.device.type != "cuda"]
    assert not wrong, wrong
    # values as on the CPU
    assert made["arange"].tolist() == [0, 1, 2, 3] and made["eye"].cpu().tolist()[1] == [0.0, 1.0, 0.0]
    # explicit devices and the *_like factories are not overridden
    c = torch.ones(2, device="cpu")
    assert c.device.type == "cpu"
    assert torch.zeros_like(c).device.type == "cpu" and torch.rand_like(c).device.type == "cpu"
    assert torch.zeros_like(made["ones"]).device.type == "cuda"
    assert torch.from_numpy(c.numpy()).device.type == "cpu"
    # a model built under the default trains there
    m = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    loss = m(torch.randn(5, 3)).pow(2).mean()
    loss.backward()
    assert all(p.grad.device.type == "cuda" for p in m.parameters())
    torch.set_default_device(None)
    assert torch.ones(1).device.type == "cpu"


@pytest.mark.cuda
def test_context_manager_nests_and_restores():
    with torch.device("cuda"):
        assert torch.ones(1).device.type == "cuda"
        with torch.device("cpu"):
            assert torch.ones(1).device.type == "cpu"
        assert torch.zeros(1).device.type == "cuda"
        net = nn.Linear(2, 2)
    assert net.weight.device.type == "cuda"
    assert torch.ones(1).device.type == "cpu"
    with torch.device("cuda:0"):
        assert torch.arange(3).device == torch.device("cuda", 0)
    try:
        with torch.device("cuda"):
            raise KeyError("inside")
    except KeyError:
        pass
    assert torch.ones(1).device.type == "cpu"
