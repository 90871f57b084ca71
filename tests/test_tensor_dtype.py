"""dtypes: names, aliases, sizes, the promotion table and the default dtype."""
import pickle

import numpy as np
import pytest

import pycuda_sem as torch

ALL = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
       torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64,
       torch.complex128]


def test_names_sizes_and_flags():
    sizes = [1, 1, 1, 2, 4, 8, 2, 2, 4, 8, 8, 16]
    for dt, size in zip(ALL, sizes):
        assert dt.itemsize == size
        assert repr(dt) == "pycuda_sem." + repr(dt).split(".")[1]
        assert torch.empty(3, dtype=dt).element_size() == size
    assert [dt for dt in ALL if dt.is_floating_point] == [
        torch.float16, torch.bfloat16, torch.float32, torch.float64]
    assert [dt for dt in ALL if dt.is_complex] == [torch.complex64, torch.complex128]
    assert not torch.uint8.is_signed and torch.int8.is_signed


def test_aliases_are_the_same_objects():
    assert torch.half is torch.float16 and torch.float is torch.float32
    assert torch.double is torch.float64 and torch.short is torch.int16
    assert torch.int is torch.int32 and torch.long is torch.int64
    assert torch.cfloat is torch.complex64 and torch.cdouble is torch.complex128
    assert repr(torch.float) == "pycuda_sem.float32"
    assert pickle.loads(pickle.dumps(torch.float64)) is torch.float64


def test_promotion_follows_numpy_where_numpy_agrees():
    np_of = {torch.bool: np.bool_, torch.uint8: np.uint8, torch.int8: np.int8,
             torch.int16: np.int16, torch.int32: np.int32, torch.int64: np.int64,
             torch.float16: np.float16, torch.float32: np.float32, torch.float64: np.float64,
             torch.complex64: np.complex64, torch.complex128: np.complex128}
    back = {v: k for k, v in np_of.items()}
    for a in np_of:
        for b in np_of:
            ours = torch.promote_types(a, b)
            assert ours is torch.promote_types(b, a)
            ref = np.promote_types(np_of[a], np_of[b]).type
            # PyTorch differs from NumPy in one family: integers with a float
            # or complex type keep that type (NumPy widens it).
            a_int = not a.is_floating_point and not a.is_complex
            b_int = not b.is_floating_point and not b.is_complex
            if b_int and not a_int:
                assert ours is a
            elif a_int and not b_int:
                assert ours is b
            else:
                assert ours is back[ref], (a, b)
    assert torch.promote_types(torch.float16, torch.bfloat16) is torch.float32
    assert torch.promote_types(torch.bfloat16, torch.int64) is torch.bfloat16
    assert torch.promote_types(torch.float64, torch.complex64) is torch.complex128


def test_default_dtype():
    assert torch.get_default_dtype() is torch.float32
    try:
        torch.set_default_dtype(torch.float64)
        assert torch.tensor([1.5]).dtype is torch.float64
        assert torch.tensor([1j]).dtype is torch.complex128
        assert torch.zeros(2).dtype is torch.float64
        assert repr(torch.tensor([1.5])) == "tensor([1.5000])"
        assert repr(torch.tensor([1.5], dtype=torch.float32)) == \
            "tensor([1.5000], dtype=pycuda_sem.float32)"
    finally:
        torch.set_default_dtype(torch.float32)
    with pytest.raises(TypeError):
        torch.set_default_dtype(torch.int64)


def test_is_floating_point_and_complex():
    assert torch.is_floating_point(torch.zeros(1))
    assert not torch.is_floating_point(torch.zeros(1, dtype=torch.int64))
    assert torch.is_complex(torch.zeros(1, dtype=torch.cfloat))
    assert torch.is_tensor(torch.zeros(1)) and not torch.is_tensor([1])
