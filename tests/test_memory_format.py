"""Memory formats (torch.contiguous_format, channels_last, channels_last_3d,
preserve_format): the objects, the strides each gives contiguous(), clone(),
to(), empty() and the *_like factories, is_contiguous(memory_format=), the
errors torch raises, Module.to(memory_format=) and gradients through the
format changes. Runs on the CPU, and on the GPU where there is one; values
are checked against NumPy."""
import pickle

import numpy as np
import pytest

import pycuda_sem as torch

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
rng = np.random.default_rng(5)


def nchw(shape=(2, 3, 4, 5), device="cpu", dtype=torch.float32):
    a = rng.standard_normal(shape).astype(np.float32)
    return torch.from_numpy(a).to(device=device, dtype=dtype), a


def test_objects():
    fmts = [torch.contiguous_format, torch.channels_last, torch.channels_last_3d, torch.preserve_format]
    assert [repr(f) for f in fmts] == ["pycuda_sem.contiguous_format", "pycuda_sem.channels_last",
                                       "pycuda_sem.channels_last_3d", "pycuda_sem.preserve_format"]
    for f in fmts:
        assert isinstance(f, torch.memory_format)
        assert pickle.loads(pickle.dumps(f)) is f
    assert len(set(map(id, fmts))) == 4


@pytest.mark.parametrize("device", DEVICES)
def test_channels_last_strides_and_values(device):
    x, a = nchw(device=device)
    c = x.contiguous(memory_format=torch.channels_last)
    assert c.stride() == (60, 1, 15, 3)  # the strides of an NHWC array
    assert c.is_contiguous(memory_format=torch.channels_last) and not c.is_contiguous()
    assert x.is_contiguous() and not x.is_contiguous(memory_format=torch.channels_last)
    np.testing.assert_array_equal(c.cpu().numpy(), a)
    assert c.contiguous(memory_format=torch.channels_last) is c
    back = c.contiguous()
    assert back.stride() == (60, 20, 5, 1)
    np.testing.assert_array_equal(back.cpu().numpy(), a)
    for got in (x.to(memory_format=torch.channels_last), x.clone(memory_format=torch.channels_last),
                x.to(torch.float64, memory_format=torch.channels_last),
                torch.empty(2, 3, 4, 5, device=device, memory_format=torch.channels_last)):
        assert got.stride() == (60, 1, 15, 3)
    np.testing.assert_allclose(x.to(torch.float64, memory_format=torch.channels_last).cpu().numpy(), a)
    # preserve_format keeps channels-last through casts, clones and the *_like family
    for got in (c.clone(), c.half(), c.double(), c.to(torch.int32), torch.empty_like(c), torch.zeros_like(c),
                torch.ones_like(c), torch.full_like(c, 2.5), torch.rand_like(c), torch.randn_like(c)):
        assert got.stride() == (60, 1, 15, 3), got.stride()
    assert np.all(torch.full_like(c, 2.5).cpu().numpy() == 2.5)
    assert np.all(torch.zeros_like(c).cpu().numpy() == 0) and np.all(torch.ones_like(c).cpu().numpy() == 1)
    r = torch.rand_like(c).cpu().numpy()
    assert r.min() >= 0 and r.max() < 1 and r.std() > 0.1
    assert torch.zeros_like(c, memory_format=torch.contiguous_format).stride() == (60, 20, 5, 1)
    assert c.clone(memory_format=torch.contiguous_format).stride() == (60, 20, 5, 1)
    # to() aliases only when the format is the one the tensor is in
    assert c.to(memory_format=torch.channels_last) is c and x.to(memory_format=torch.contiguous_format) is x
    assert x.to(memory_format=torch.channels_last) is not x


@pytest.mark.parametrize("device", DEVICES)
def test_channels_last_3d(device):
    x, a = nchw((2, 3, 4, 5, 6), device=device)
    c = x.contiguous(memory_format=torch.channels_last_3d)
    assert c.stride() == (360, 1, 90, 18, 3)
    assert c.is_contiguous(memory_format=torch.channels_last_3d)
    assert not c.is_contiguous(memory_format=torch.channels_last)  # wrong rank: False, no error
    np.testing.assert_array_equal(c.cpu().numpy(), a)


def test_size_one_dims_are_ignored():
    x, _ = nchw((2, 1, 4, 5))  # C == 1: row-major and channels-last at once
    assert x.is_contiguous() and x.is_contiguous(memory_format=torch.channels_last)
    y, _ = nchw((1, 3, 1, 1))
    assert y.is_contiguous(memory_format=torch.channels_last)


def test_errors():
    x, _ = nchw()
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        torch.randn(3, 4).contiguous(memory_format=torch.channels_last)
    with pytest.raises(RuntimeError, match="required rank 5 tensor"):
        torch.empty(2, 3, memory_format=torch.channels_last_3d)
    with pytest.raises(RuntimeError, match="preserve memory format is unsupported by the contiguous"):
        x.contiguous(memory_format=torch.preserve_format)
    with pytest.raises(RuntimeError, match="preserve memory format"):
        x.is_contiguous(memory_format=torch.preserve_format)
    with pytest.raises(RuntimeError, match="preserve memory format"):
        torch.empty(2, 3, memory_format=torch.preserve_format)
    for call in (lambda: x.contiguous(memory_format="channels_last"), lambda: x.clone(memory_format=1),
                 lambda: x.to(memory_format=torch.float32), lambda: torch.empty_like(x, memory_format=0),
                 lambda: x.half(memory_format="x")):
        with pytest.raises(TypeError, match="memory_format"):
            call()
    with pytest.raises(TypeError):
        x.clone(torch.channels_last, torch.channels_last)
    assert not torch.randn(3, 4).is_contiguous(memory_format=torch.channels_last)


def test_only_empty_and_the_like_factories_take_a_format():
    # torch takes memory_format= in empty() and the *_like factories and
    # refuses it in the others, naming the argument
    x, _ = nchw()
    cl = torch.channels_last
    for call in (lambda: torch.zeros(2, 3, 4, 5, memory_format=cl), lambda: torch.ones(2, 3, 4, 5, memory_format=cl),
                 lambda: torch.full((2, 3, 4, 5), 1.0, memory_format=cl),
                 lambda: torch.rand(2, 3, 4, 5, memory_format=cl), lambda: torch.randn(2, 3, 4, 5, memory_format=cl),
                 lambda: torch.randint(0, 5, (2, 3, 4, 5), memory_format=cl),
                 lambda: torch.arange(5, memory_format=cl)):
        with pytest.raises(TypeError, match="memory_format"):
            call()
    assert torch.empty(2, 3, 4, 5, memory_format=cl).stride() == (60, 1, 15, 3)
    for f in (torch.empty_like, torch.zeros_like, torch.ones_like, torch.rand_like, torch.randn_like):
        assert f(x, memory_format=cl).stride() == (60, 1, 15, 3)
    assert torch.full_like(x, 2.0, memory_format=cl).stride() == (60, 1, 15, 3)


def test_module_to_channels_last_and_gradients():
    m = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8), torch.nn.Flatten(),
                            torch.nn.Linear(8 * 6 * 6, 4))
    out = m.to(memory_format=torch.channels_last)
    assert out is m
    w = m[0].weight
    assert isinstance(w, torch.nn.Parameter) and w.requires_grad
    assert w.is_contiguous(memory_format=torch.channels_last)
    assert m[3].weight.is_contiguous()  # 2-D: untouched
    with pytest.raises(TypeError):
        m.to(memory_format="channels_last")
    x, _ = nchw((2, 3, 8, 8))
    xc = x.to(memory_format=torch.channels_last).requires_grad_()
    y = m(xc)
    y.sum().backward()
    assert xc.grad.shape == xc.shape and w.grad.shape == w.shape
    # the same model row-major gives the same numbers
    m2 = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8), torch.nn.Flatten(),
                             torch.nn.Linear(8 * 6 * 6, 4))
    m2.load_state_dict(m.state_dict())
    x2 = x.clone().requires_grad_()
    np.testing.assert_allclose(m2(x2).detach().numpy(), y.detach().numpy(), rtol=1e-5, atol=1e-5)


def test_gradients_through_format_changes():
    x, a = nchw()
    x.requires_grad_()
    y = x.contiguous(memory_format=torch.channels_last) * 2
    z = y.clone(memory_format=torch.contiguous_format).sum()
    z.backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full(a.shape, 2, np.float32))
