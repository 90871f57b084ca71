"""Tensors of every dtype with reproducible values, and an exact comparison,
for the round-trip tests (test_serialization.py, test_tensor_copy_pickle.py)."""
import numpy as np

import pycuda_sem as torch

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
          "uint8", "bool", "complex64", "complex128"]


def rand(shape, dtype, seed=0, device="cpu"):
    """Values of `dtype` (a name) drawn from `seed`: complex parts, booleans
    and small non-negative integers where the dtype needs them."""
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(shape) * 10
    if dtype.startswith("complex"):
        v = v + 1j * rng.standard_normal(shape)
    if dtype == "bool":
        v = v > 0
    elif dtype in ("int64", "int32", "int16", "int8", "uint8"):
        v = np.abs(v).astype(np.int64) % 100
    return torch.tensor(v.tolist(), dtype=getattr(torch, dtype), device=device)


def same(a, b):
    """a and b agree exactly in dtype, shape, device and values."""
    assert a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape) and a.device == b.device
    if a.dtype == torch.bfloat16:
        a, b = a.float(), b.float()
    np.testing.assert_array_equal(a.cpu().numpy(), b.cpu().numpy())
