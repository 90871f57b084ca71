"""torch.Generator on the CPU and on a GPU (the diffusion-sampling idiom
torch.Generator(device="cuda").manual_seed(0) passed as generator=), their
seeds and states, and cuda.default_generators accepted as generator=.
Their independence from the default generators: test_generator_independent.py."""
import pytest

import pycuda_sem as torch


def test_cpu_handle():
    g = torch.Generator()
    assert g.device == torch.device("cpu") and "cpu" in repr(g)
    assert torch.Generator(device=torch.device("cpu")).device.type == "cpu"
    assert g.manual_seed(7) is g and g.initial_seed() == 7
    a = torch.randn(5, generator=g)
    state = g.get_state()
    b = torch.randn(5, generator=g)
    g.set_state(state)
    assert torch.equal(torch.randn(5, generator=g), b) and not torch.equal(a, b)
    g.manual_seed(7)
    assert torch.equal(torch.randn(5, generator=g), a)


def test_cuda_handle_without_a_gpu():
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    with pytest.raises(RuntimeError, match="no CUDA GPU"):
        torch.Generator(device="cuda")


@pytest.mark.cuda
def test_cuda_handle():
    g = torch.Generator(device="cuda").manual_seed(0)
    assert g.device == torch.device("cuda", torch.cuda.current_device()) and g.initial_seed() == 0
    a = torch.randn(4, 8, device="cuda", generator=g)
    state = g.get_state()
    b = torch.rand(16, device="cuda", generator=g)
    g.set_state(state)
    assert torch.equal(torch.rand(16, device="cuda", generator=g), b)
    g.manual_seed(0)
    assert torch.equal(torch.randn(4, 8, device="cuda", generator=g), a)
    d = torch.cuda.default_generators[torch.cuda.current_device()]
    d.manual_seed(0)
    assert torch.equal(torch.randn(4, 8, device="cuda", generator=d), a)
    assert torch.randint(0, 10, (3,), device="cuda", generator=g).device.type == "cuda"
