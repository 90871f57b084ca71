"""NumPy scalars are numbers to tensor operators, as in torch: x / np.sqrt(d)
and np.float32(2) * x give tensors of x's dtype (a NumPy scalar promotes
like the Python number of its kind), never ndarrays made by NumPy's operator
after the tensor's declined or by NumPy converting the tensor. Tensors carry
__array_priority__ 1000, as torch's, so NumPy's operators defer to them; an
ndarray operand still raises TypeError, as in torch."""
import numpy as np
import pytest

import pycuda_sem as torch

from torch_oracle import _torch as real_torch  # torch where it imports, else None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
SCALARS = [np.float32(3.5), np.float64(0.25), np.int64(3), np.int32(-2), np.int8(5), np.uint8(7),
           np.float16(1.5)]
OPS = {
    "mul": lambda t, v: t * v, "rmul": lambda t, v: v * t, "add": lambda t, v: t + v,
    "rsub": lambda t, v: v - t, "div": lambda t, v: t / v, "rdiv": lambda t, v: v / t,
    "pow": lambda t, v: t ** (v if abs(v) < 4 else 2), "fn_add": lambda t, v: torch.add(t, v),
    "fn_mul": lambda t, v: torch.mul(t, v), "clamp": lambda t, v: t.clamp(min=v),
    "masked_fill": lambda t, v: t.masked_fill(t > 1, v), "gt": lambda t, v: t > v, "rgt": lambda t, v: v > t,
}


def _as_torch_op(name):
    # the same lambdas, with real torch in place of pycuda_sem for the functions
    return {"fn_add": lambda t, v: real_torch.add(t, v), "fn_mul": lambda t, v: real_torch.mul(t, v)}.get(name, OPS[name])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("name", list(OPS))
def test_numpy_scalars_act_as_python_numbers(device, dtype, name):
    base = np.array([0.5, 1.5, 2.5, 4.0]) if dtype.startswith("float") else np.array([1, 2, 3, 5])
    t = torch.tensor(base.astype(dtype), device=device)
    for v in SCALARS:
        if name in ("div", "rdiv", "pow") and dtype.startswith("int") and isinstance(v, np.integer):
            continue  # integer true division / pow: covered by the float cases
        got = OPS[name](t, v)
        assert isinstance(got, torch.Tensor), (name, type(v), type(got))
        assert got.device.type == device
        # the same op with the equivalent Python number
        py = v.item()
        want = OPS[name](t, py)
        assert got.dtype == want.dtype, (name, type(v).__name__, got.dtype, want.dtype)
        np.testing.assert_array_equal(got.cpu().numpy(), want.cpu().numpy())
        if real_torch is not None:
            r = _as_torch_op(name)(real_torch.tensor(base.astype(dtype)), v)
            assert str(r.dtype).replace("torch.", "") == str(got.dtype).replace("pycuda_sem.", ""), (name, type(v))
            np.testing.assert_allclose(got.cpu().double().numpy(), r.double().numpy(), rtol=1e-3)


@pytest.mark.parametrize("device", DEVICES)
def test_the_attention_scale_idiom(device):
    q = torch.tensor(np.random.default_rng(0).standard_normal((2, 8)), dtype=torch.float32, device=device)
    s = q @ q.t() / np.sqrt(q.shape[-1])
    assert isinstance(s, torch.Tensor) and s.dtype == torch.float32
    np.testing.assert_allclose(s.cpu().numpy(), (q @ q.t()).cpu().numpy() / np.sqrt(8), rtol=1e-6)
    h = torch.ones(3, dtype=torch.float16, device=device) * np.float32(0.5)
    assert isinstance(h, torch.Tensor) and h.dtype == torch.float16


def test_numpy_defers_to_tensors_and_arrays_stay_refused():
    assert torch.ones(1).__array_priority__ == 1000.0
    with pytest.raises(TypeError):
        np.array([1.0, 2.0]) * torch.ones(2)
    # a NumPy scalar on the left of an in-place op's tensor keeps the tensor
    t = torch.ones(2)
    t *= np.float32(2)
    assert t.tolist() == [2.0, 2.0] and isinstance(t, torch.Tensor)


_WRAP_CASES = [
    ("uint8", [44, 1], lambda t: t + 300, [88, 45]),
    ("uint8", [44, 1], lambda t: t - 300, [0, 213]),
    ("uint8", [44, 1], lambda t: t == 300, [True, False]),
    ("uint8", [44, 1], lambda t: t < 300, [False, True]),
    ("uint8", [44, 1], lambda t: t & 300, [44, 0]),
    ("int16", [5, -3], lambda t: t * 40000, [3392, 11072]),
    ("int8", [1, 100], lambda t: t + 200, [-55, 44]),
    ("int32", [1, 7], lambda t: t + 2 ** 40, [1, 7]),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype,values,op,want", _WRAP_CASES)
def test_out_of_range_python_ints_wrap_into_the_dtype(device, dtype, values, op, want):
    # a Python int joins an integer tensor's op in the tensor's dtype by a C
    # conversion, wrapping modulo 2^bits as torch does (NumPy 2 would refuse it)
    t = torch.tensor(values, dtype=getattr(torch, dtype), device=device)
    assert op(t).cpu().tolist() == want
    if real_torch is not None:
        assert op(real_torch.tensor(values, dtype=getattr(real_torch, dtype))).tolist() == want


_CHECKED_CASES = [
    # clamp: a bound that clips nothing moves to the range's end; one that would
    # clip everything is refused (torch 2.15's wording)
    (lambda t: t.clamp(max=300), [3, 200, 44]),
    (lambda t: t.clamp(100, 300), [100, 200, 100]),
    (lambda t: t.clamp(min=-7), [3, 200, 44]),
    (lambda t: t.clone().clamp_(max=2 ** 64 - 1), [3, 200, 44]),
    (lambda t: t.clamp(min=300), "Clamp min value 300 is outside the representable range of Byte"),
    (lambda t: t.clamp(max=-5), "Clamp max value -5 is outside the representable range of Byte"),
    # a 0-dim tensor bound is an operand, not a number: it wraps like the rest
    (lambda t: torch.clamp(t, max=torch.tensor(300)), [3, 44, 44]),
    # pow: the exponent must fit the base's dtype, a number base wraps
    (lambda t: t ** 256, "value cannot be converted to type uint8_t without overflow"),
    (lambda t: 300 ** t, [192, 0, 0]),
    # where: a number branch must fit (down to -255 for uint8, as fill_)
    (lambda t: torch.where(t > 2, t, 300), "value cannot be converted to type uint8_t without overflow"),
    (lambda t: torch.where(t > 50, 300, t), "value cannot be converted to type uint8_t without overflow"),
    (lambda t: torch.where(t > 50, -1, t), [3, 255, 44]),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("k", range(len(_CHECKED_CASES)))
def test_numbers_that_torch_checks_instead_of_wrapping(device, k):
    op, want = _CHECKED_CASES[k]
    t = torch.tensor([3, 200, 44], dtype=torch.uint8, device=device)
    if isinstance(want, str):
        with pytest.raises(RuntimeError, match=want):
            op(t)
    else:
        r = op(t)
        assert r.dtype == torch.uint8 and r.cpu().tolist() == want


def test_clamp_range_of_signed_dtypes():
    i8 = torch.tensor([3, -100], dtype=torch.int8)
    assert i8.clamp(max=1000).tolist() == [3, -100]
    assert i8.clamp(min=-1000).tolist() == [3, -100]
    with pytest.raises(RuntimeError, match="Clamp max value -1000 is outside the representable range of Char"):
        i8.clamp(max=-1000)
    big = torch.tensor([5, -5], dtype=torch.int64)
    assert big.clamp(max=2 ** 63).tolist() == [5, -5]
    with pytest.raises(RuntimeError, match=r"Clamp min value 9.22337e\+18 is outside the representable range of Long"):
        big.clamp(min=2 ** 63)
