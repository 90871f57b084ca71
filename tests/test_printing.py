"""Printing: repr/str in PyTorch's format, byte for byte.

Fixed cases run everywhere; where PyTorch is installed (the GPU machine) many
random tensors of every dtype and shape are printed by both and compared."""
import math
import re

import numpy as np
import pytest

import pycuda_sem as torch

CASES = [
    (lambda: torch.tensor([1., 2.]), "tensor([1., 2.])"),
    (lambda: torch.tensor([0.3] * 2).new_full([3, 2], fill_value=0.3),
     "tensor([[0.3000, 0.3000],\n        [0.3000, 0.3000],\n        [0.3000, 0.3000]])"),
    (lambda: torch.empty(2, dtype=torch.int64).new_tensor([[1, 2, 3]]), "tensor([[1, 2, 3]])"),
    (lambda: torch.tensor([True, False]), "tensor([ True, False])"),
    (lambda: torch.tensor([1e-5, 1.0]), "tensor([1.0000e-05, 1.0000e+00])"),
    (lambda: torch.tensor(3.5), "tensor(3.5000)"),
    (lambda: torch.tensor(7), "tensor(7)"),
    (lambda: torch.tensor([]), "tensor([])"),
    (lambda: torch.empty(0, 3), "tensor([], size=(0, 3))"),
    (lambda: torch.tensor([], dtype=torch.int64), "tensor([], dtype=pycuda_sem.int64)"),
    (lambda: torch.arange(10), "tensor([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])"),
    (lambda: torch.tensor([1, -2, 300]), "tensor([  1,  -2, 300])"),
    (lambda: torch.tensor([1.5, math.nan, math.inf]), "tensor([1.5000,    nan,    inf])"),
    (lambda: torch.tensor([1., math.inf]), "tensor([1., inf])"),
    (lambda: torch.zeros(2, dtype=torch.float16), "tensor([0., 0.], dtype=pycuda_sem.float16)"),
    (lambda: torch.tensor([1 + 2j, -3.5 - 4j]), "tensor([ 1.0000+2.j, -3.5000-4.j])"),
    (lambda: torch.tensor([1, 2], dtype=torch.int32), "tensor([1, 2], dtype=pycuda_sem.int32)"),
    (lambda: torch.tensor([123456789.0, 1.0]), "tensor([1.2346e+08, 1.0000e+00])"),
    (lambda: torch.tensor([[-5., -5.], [-5., -5.]]), "tensor([[-5., -5.],\n        [-5., -5.]])"),
]


@pytest.mark.parametrize("make,expected", CASES)
def test_fixed_cases(make, expected):
    assert repr(make()) == expected
    assert str(make()) == expected


def test_summarised():
    s = repr(torch.arange(2000))
    assert s == "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"
    s = repr(torch.arange(3000).view(100, 30))
    assert s.startswith("tensor([[   0,    1,    2,  ...,   27,   28,   29],\n")
    assert "        ...,\n" in s and s.endswith("[2970, 2971, 2972,  ..., 2997, 2998, 2999]])")


def test_printoptions():
    try:
        torch.set_printoptions(precision=2)
        assert repr(torch.tensor([1.2345])) == "tensor([1.23])"
        torch.set_printoptions(sci_mode=True)
        assert repr(torch.tensor([1.5])) == "tensor([1.50e+00])"
    finally:
        torch.set_printoptions(profile="default")
    assert repr(torch.tensor([1.2345])) == "tensor([1.2345])"


# ---- PyTorch as the oracle -----------------------------------------------

def same(ours, theirs):
    """Ours equals torch's text with torch. -> pycuda_sem.; where the longer
    dtype name makes a suffix wrap differently, the wrap is ignored."""
    def norm(s):
        return re.sub(r",\s*\n\s*(dtype=|device=)", r", \1", s)
    return norm(ours) == norm(theirs.replace("torch.", "pycuda_sem."))


def _torch():
    try:
        import torch as real_torch
    except Exception:  # not installed here
        pytest.skip("PyTorch is not installed")
    return real_torch


def random_arrays(seed, count):
    rng = np.random.default_rng(seed)
    shapes = [(), (1,), (5,), (3, 4), (2, 3, 4), (0,), (2, 0), (1100,), (40, 30), (3, 400),
              (2, 2, 2, 2)]
    kinds = ["normal", "big", "small", "int-valued", "mixed"]
    dtypes = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int8", "uint8",
              "bool", "complex64", "complex128"]
    for _ in range(count):
        shape = shapes[rng.integers(len(shapes))]
        kind = kinds[rng.integers(len(kinds))]
        dt = dtypes[rng.integers(len(dtypes))]
        v = rng.standard_normal(shape)
        if kind == "big":
            v = v * 1e9
        elif kind == "small":
            v = v * 1e-6
        elif kind == "int-valued":
            v = np.round(v * 100)
        elif kind == "mixed":
            v = v * 10.0 ** rng.integers(-6, 9, size=shape)
        if dt.startswith("complex"):
            v = v + 1j * rng.standard_normal(shape) * 10
        yield v, dt


def both(real_torch, v, dt):
    if dt == "bfloat16":
        a = np.asarray(v, np.float32)
        return (real_torch.from_numpy(a.copy()).to(real_torch.bfloat16),
                torch.from_numpy(a.copy()).to(torch.bfloat16))
    if dt in ("int64", "int32", "int8", "uint8", "float16"):
        lim = {"int8": 127, "uint8": 255, "float16": 60000}.get(dt, 10 ** 9)
        v = np.clip(np.nan_to_num(np.real(v)), -lim if dt != "uint8" else 0, lim)
        if dt == "float16":
            v = v * 1.0
    if dt == "bool":
        v = np.real(v) > 0
    a = np.asarray(v).astype(dt)
    return real_torch.from_numpy(a.copy()), torch.from_numpy(a.copy())


def test_random_tensors_match_torch():
    real_torch = _torch()
    for v, dt in random_arrays(0, 400):
        theirs, ours = both(real_torch, v, dt)
        assert same(repr(ours), repr(theirs)), (dt, v.shape, repr(ours), repr(theirs))


def test_views_and_special_values_match_torch():
    real_torch = _torch()
    a = np.random.default_rng(3).standard_normal((6, 8)).astype(np.float32)
    a[0, 0], a[1, 1], a[2, 2] = np.nan, np.inf, -np.inf
    t, o = real_torch.from_numpy(a), torch.from_numpy(a)
    for f in (lambda x: x, lambda x: x.t(), lambda x: x[::2, 1::3], lambda x: x[2],
              lambda x: x[0, 0], lambda x: x[3:, :2] * 0 if False else x[3:, :2]):
        assert same(repr(f(o)), repr(f(t)))


@pytest.mark.cuda
def test_cuda_tensors_match_torch():
    real_torch = _torch()
    for v, dt in random_arrays(1, 60):
        theirs, ours = both(real_torch, v, dt)
        assert same(repr(ours.cuda()), repr(theirs.cuda())), (repr(ours), repr(theirs))
    x = torch.empty(2, device="cuda").new_full([3, 2], fill_value=-5)
    assert repr(x) == ("tensor([[-5., -5.],\n        [-5., -5.],\n        [-5., -5.]], "
                       "device='cuda:0')")
