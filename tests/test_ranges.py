"""Factories whose values follow from the index: arange, linspace, logspace,
eye, tril_indices, triu_indices. On CUDA each is one kernel launch (no host
staging); the values must equal the CPU path's exactly, and the CPU path must
match NumPy (float64 reference, tolerances stated per case)."""
import numpy as np
import pytest

import pycuda_sem as torch

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]


def _same(a, b):
    """Bit-equal values (NaN equal to NaN), same dtype and shape."""
    assert a.dtype == b.dtype and a.shape == b.shape
    if a.dtype == torch.bfloat16:
        a, b = a.float(), b.float()
    return np.array_equal(a.cpu().numpy(), b.cpu().numpy(), equal_nan=a.is_floating_point())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("args,dtype", [
    ((10,), None), ((-3, 17, 4), None), ((5, -7, -3), torch.int32), ((0.5, 9.25, 0.75), None),
    ((1, 2, 0.1), torch.float64), ((0, 300, 7), torch.float16), ((0, 300, 7), torch.bfloat16),
    ((2**40, 2**40 + 50, 9), None), ((0, 0), None), ((0, 5, 1), torch.uint8),
])
def test_arange_matches_numpy_and_cpu(device, args, dtype):
    t = torch.arange(*args, dtype=dtype, device=device)
    ref = np.arange(*args, dtype=np.float64)
    assert t.shape == (len(ref),)
    got = t.cpu().float().numpy().astype(np.float64) if t.dtype in (torch.float16, torch.bfloat16) \
        else t.cpu().numpy().astype(np.float64)
    tol = 2e-2 * np.abs(ref) if t.dtype in (torch.float16, torch.bfloat16) else 1e-6 * np.abs(ref) + 1e-12
    assert np.all(np.abs(got - ref) <= tol)
    if device == "cuda":
        assert _same(t, torch.arange(*args, dtype=dtype))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.int64])
@pytest.mark.parametrize("start,end,steps", [(0, 1, 11), (-3.5, 7.25, 1000), (5, -5, 2), (2, 2, 1),
                                             (0, 1, 0)])
def test_linspace_ends_exact_and_cpu_equal(device, dtype, start, end, steps):
    t = torch.linspace(start, end, steps, dtype=dtype, device=device)
    assert t.shape == (steps,) and t.dtype == dtype
    if steps and dtype in (torch.float32, torch.float64):
        a = t.cpu().numpy()
        assert a[0] == np.array(start, a.dtype) and a[-1] == np.array(end if steps > 1 else start, a.dtype)
        np.testing.assert_allclose(a, np.linspace(start, end, steps), rtol=1e-6, atol=1e-6)
    if device == "cuda":
        assert _same(t, torch.linspace(start, end, steps, dtype=dtype))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("base", [10.0, 2, 0.5])
def test_logspace(device, dtype, base):
    t = torch.logspace(-2, 3, 23, base=base, dtype=dtype, device=device)
    ref = np.logspace(-2, 3, 23, base=base)
    np.testing.assert_allclose(t.cpu().numpy().astype(np.float64), ref,
                               rtol=1e-5 if dtype == torch.float32 else 1e-12)
    assert torch.logspace(0, 2, 3, device=device).tolist() == [1.0, 10.0, 100.0]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("n,m", [(0, 0), (1, 1), (4, 4), (3, 7), (9, 2)])
def test_eye(device, n, m):
    for dtype in (torch.float32, torch.int64, torch.bool, torch.complex64):
        t = torch.eye(n, m, dtype=dtype, device=device)
        assert t.shape == (n, m) and t.dtype == dtype
        np.testing.assert_array_equal(t.cpu().numpy(), np.eye(n, m, dtype=t.cpu().numpy().dtype))


@pytest.mark.parametrize("device", DEVICES)
def test_tril_triu_indices_against_numpy(device):
    for rows in range(0, 7):
        for cols in range(0, 7):
            for off in range(-8, 9):
                lo = torch.tril_indices(rows, cols, off, device=device)
                up = torch.triu_indices(rows, cols, off, device=device)
                assert lo.dtype == torch.int64 and lo.shape[0] == 2
                np.testing.assert_array_equal(lo.cpu().numpy(), np.stack(np.tril_indices(rows, off, cols)))
                np.testing.assert_array_equal(up.cpu().numpy(), np.stack(np.triu_indices(rows, off, cols)))
    big = torch.tril_indices(300, 200, -5, dtype=torch.int32, device=device)
    np.testing.assert_array_equal(big.cpu().numpy(), np.stack(np.tril_indices(300, -5, 200)))


def test_tri_indices_bad_arguments():
    with pytest.raises(RuntimeError, match="row must be non-negative"):
        torch.tril_indices(-1, 3)
    with pytest.raises(RuntimeError, match="col must be non-negative"):
        torch.triu_indices(3, -2)
    with pytest.raises(TypeError, match="must be int"):
        torch.tril_indices(3.5, 3)
    with pytest.raises(RuntimeError, match="not implemented for 'Float'"):
        torch.tril_indices(3, 3, dtype=torch.float32)
    with pytest.raises(TypeError):
        torch.tril_indices(3)


def test_range_errors():
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        torch.arange(0, 5, 0)
    with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
        torch.logspace(0, 1, -1)
    with pytest.raises(TypeError):
        torch.logspace(0, 1)


@pytest.mark.cuda
def test_cuda_ranges_against_torch():
    real = pytest.importorskip("torch")
    for name, args, kw in [("arange", (3, 1000, 7), {}), ("arange", (0.1, 99.3, 0.37), {}),
                           ("linspace", (-1.5, 8.0, 777), {}),
                           ("linspace", (-1.5, 8.0, 777), {"dtype": "float64"}),
                           ("logspace", (-3, 4, 101), {"base": 3.0}),
                           ("eye", (5, 9), {}), ("tril_indices", (40, 30, 3), {}),
                           ("triu_indices", (40, 30, -3), {})]:
        ours = getattr(torch, name)(*args, device="cuda",
                                    **{k: getattr(torch, v) for k, v in kw.items() if k == "dtype"},
                                    **{k: v for k, v in kw.items() if k != "dtype"})
        theirs = getattr(real, name)(*args, device="cuda",
                                     **{k: getattr(real, v) for k, v in kw.items() if k == "dtype"},
                                     **{k: v for k, v in kw.items() if k != "dtype"})
        a, b = ours.cpu().numpy(), theirs.cpu().numpy()
        assert a.shape == b.shape and a.dtype == b.dtype, name
        # torch's float32 kernels fuse multiply-adds, ours round each step (to
        # match the CPU bit for bit): a few float32 ulps of the range's scale
        scale = float(np.abs(b).max()) if b.size else 1.0
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=4e-7 * scale, err_msg=name)
