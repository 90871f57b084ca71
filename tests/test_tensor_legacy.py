"""The legacy API of the oldest CUDA note on the CPU: FloatTensor & co.,
Tensor(*sizes | data), Tensor.new, Tensor.type, get_device."""
import pytest

import pycuda_sem as torch


def test_legacy_constructors():
    x = torch.FloatTensor(1)
    assert x.dtype is torch.float32 and x.shape == (1,) and x.get_device() == -1
    assert torch.FloatTensor(2, 3).shape == (2, 3) and torch.FloatTensor().shape == (0,)
    assert torch.LongTensor([[1, 2, 3]]).tolist() == [[1, 2, 3]]
    assert torch.DoubleTensor([1]).dtype is torch.float64
    for name, dt in (("Half", torch.float16), ("Int", torch.int32), ("Short", torch.int16),
                     ("Byte", torch.uint8), ("Char", torch.int8), ("Bool", torch.bool)):
        t = getattr(torch, name + "Tensor")(2)
        assert t.dtype is dt and isinstance(t, getattr(torch, name + "Tensor"))
    assert not isinstance(torch.zeros(1), torch.LongTensor)
    assert torch.Tensor(8, 42).shape == (8, 42) and torch.Tensor(8, 42).dtype is torch.float32
    assert torch.Tensor([1, 2]).tolist() == [1.0, 2.0]
    assert repr(torch.FloatTensor) == "<class 'pycuda_sem.FloatTensor'>"
    assert repr(torch.cuda.FloatTensor) == "<class 'pycuda_sem.cuda.FloatTensor'>"


def test_note_new_and_like():
    x_cpu = torch.FloatTensor(1)
    x_cpu_long = torch.LongTensor(1)
    y_cpu = x_cpu.new(8, 10, 10).fill_(0.3)
    assert y_cpu.shape == (8, 10, 10) and abs(y_cpu[7, 9, 9].item() - 0.3) < 1e-7
    y_cpu_long = x_cpu_long.new([[1, 2, 3]])
    assert y_cpu_long.dtype is torch.int64 and y_cpu_long.tolist() == [[1, 2, 3]]
    assert torch.ones_like(x_cpu).tolist() == [1.0]


def test_type():
    x = torch.tensor([1.5, -2.5])
    assert x.type() == "pycuda_sem.FloatTensor"
    assert x.type(torch.float64).dtype is torch.float64
    assert x.type(torch.IntTensor).tolist() == [1, -2]
    assert x.type("torch.LongTensor").dtype is torch.int64
    assert x.type("pycuda_sem.ShortTensor").dtype is torch.int16
    assert x.type(torch.FloatTensor) is x
    assert torch.tensor([1], dtype=torch.int64).type() == "pycuda_sem.LongTensor"
    with pytest.raises(ValueError):
        x.type("torch.NoSuchTensor")


def test_device_agnostic_note_example():
    device = torch.device("cpu")
    x = torch.empty((8, 42), device=device)
    assert x.device == device and x.shape == (8, 42)
    x_cpu = torch.empty(2)
    x_cpu_long = torch.empty(2, dtype=torch.int64)
    assert repr(x_cpu.new_full([3, 2], fill_value=0.3)) == (
        "tensor([[0.3000, 0.3000],\n        [0.3000, 0.3000],\n        [0.3000, 0.3000]])")
    assert repr(x_cpu_long.new_tensor([[1, 2, 3]])) == "tensor([[1, 2, 3]])"
    y = torch.ones_like(torch.empty(2, 3))
    assert y.shape == (2, 3) and torch.zeros_like(y).tolist() == [[0.0] * 3] * 2
