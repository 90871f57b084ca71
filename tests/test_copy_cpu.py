"""Copies and casts on the CPU: every dtype pair against NumPy's astype,
strided sources and destinations, broadcasting, fill_ and to()."""
import numpy as np
import pytest

import pycuda_sem as torch

rng = np.random.default_rng(7)

NP = {torch.bool: np.bool_, torch.uint8: np.uint8, torch.int8: np.int8,
      torch.int16: np.int16, torch.int32: np.int32, torch.int64: np.int64,
      torch.float16: np.float16, torch.float32: np.float32, torch.float64: np.float64,
      torch.complex64: np.complex64, torch.complex128: np.complex128}


def sample(npdt, shape=(4, 6)):
    """Random values every dtype can hold exactly enough (no overflow)."""
    v = rng.uniform(-100, 100, size=shape)
    if npdt == np.bool_:
        return v > 0
    if npdt == np.uint8:
        return np.abs(v).astype(np.uint8)
    if np.issubdtype(npdt, np.complexfloating):
        return (v + 1j * rng.uniform(-100, 100, size=shape)).astype(npdt)
    return v.astype(npdt)


def ref_cast(a, npdt):
    if np.iscomplexobj(a) and not np.issubdtype(npdt, np.complexfloating):
        a = a.real  # torch keeps the real part
    if np.issubdtype(a.dtype, np.floating) and np.issubdtype(npdt, np.integer):
        a = np.trunc(a).astype(np.int64)  # through int64, as on the GPU
    return a.astype(npdt)


@pytest.mark.parametrize("src", list(NP), ids=str)
@pytest.mark.parametrize("dst", list(NP), ids=str)
def test_cast_pairs(src, dst):
    a = sample(NP[src])
    t = torch.from_numpy(a)
    out = t.to(dst)
    assert out.dtype is dst
    np.testing.assert_array_equal(out.numpy(), ref_cast(a, NP[dst]))
    # strided source and destination
    d = torch.zeros(6, 4, dtype=dst).t()
    d.copy_(t)
    np.testing.assert_array_equal(d.numpy(), ref_cast(a, NP[dst]))


def test_bfloat16_round_trip():
    a = rng.uniform(-10, 10, 100).astype(np.float32)
    b = torch.from_numpy(a).bfloat16().float().numpy()
    # bfloat16 keeps 8 bits of mantissa: relative error at most 2^-9
    assert np.all(np.abs(b - a) <= np.abs(a) * 2.0 ** -8)
    exact = np.array([1.0, -2.5, 0.15625, 2.0 ** 100], np.float32)
    assert np.array_equal(torch.from_numpy(exact).bfloat16().float().numpy(), exact)


def test_half_special_values():
    a = np.array([np.inf, -np.inf, np.nan, 65504, 70000, 1e-8, 6e-5, -0.0], np.float32)
    with np.errstate(over="ignore"):
        ref = a.astype(np.float16)
    np.testing.assert_array_equal(torch.from_numpy(a).half().numpy(), ref)


def test_copy_broadcast_and_errors():
    d = torch.zeros(3, 4)
    d.copy_(torch.tensor([1., 2., 3., 4.]))
    assert d.tolist() == [[1., 2., 3., 4.]] * 3
    with pytest.raises(RuntimeError):
        d.copy_(torch.ones(5))
    with pytest.raises(TypeError):
        d.copy_([1, 2])


def test_fill_and_zero():
    t = torch.empty(3, 5, dtype=torch.int16)
    t.fill_(7)
    assert (t.numpy() == 7).all()
    t.t()[1].fill_(-2)
    assert (t.numpy()[:, 1] == -2).all() and (t.numpy()[:, 0] == 7).all()
    assert (t.zero_().numpy() == 0).all()
    c = torch.empty(4, dtype=torch.complex128).fill_(1 + 2j)
    assert c.tolist() == [1 + 2j] * 4
    f = torch.empty(2).fill_(torch.tensor(2.5))
    assert f.tolist() == [2.5, 2.5]


def test_to_variants_and_shortcuts():
    t = torch.tensor([[1.5, -2.5]])
    assert t.to(torch.float32) is t and t.to("cpu") is t and t.cpu() is t
    assert t.to(torch.float32, copy=True) is not t
    assert t.to(t) is t
    assert t.to(torch.zeros(1, dtype=torch.int64)).dtype is torch.int64
    assert t.to("cpu", torch.float64).dtype is torch.float64
    assert t.to(device="cpu", dtype=torch.int8).tolist() == [[1, -2]]
    for name, dt in (("float", torch.float32), ("double", torch.float64),
                     ("half", torch.float16), ("bfloat16", torch.bfloat16),
                     ("int", torch.int32), ("long", torch.int64), ("bool", torch.bool),
                     ("short", torch.int16), ("char", torch.int8), ("byte", torch.uint8)):
        assert getattr(t, name)().dtype is dt
    # preserve_format: a dense transposed tensor keeps its strides
    x = torch.zeros(3, 4).t()
    assert x.to(torch.float64).stride() == x.stride()


def test_large_strided_copy_releases_gil_and_is_right():
    a = rng.standard_normal((512, 300)).astype(np.float32)
    t = torch.from_numpy(a)
    out = t.t().contiguous()
    assert np.array_equal(out.numpy(), a.T)
    out2 = t[::3, 1::2].to(torch.float64)
    assert np.array_equal(out2.numpy(), a[::3, 1::2].astype(np.float64))
