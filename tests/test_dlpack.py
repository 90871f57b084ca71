"""DLPack exchange (csrc/tensor/dlpack.c, pycuda_sem/utils/dlpack.py): memory
is shared both ways (a write through one side is read through the other),
capsules are consumed once, the producer's memory is released exactly once
(storages die, allocator statistics return to their baseline), and on the GPU
the exchange works with CuPy and real torch CUDA tensors, with the consumer
stream made to wait for the producer's."""
import gc
import sys
import weakref

import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem.utils import dlpack as dl
from torch_oracle import _torch as real_torch

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
NP_DTYPES = [np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64, np.float16, np.float32,
             np.float64, np.complex64, np.complex128]


def _rand(rng, shape, dtype):
    x = rng.standard_normal(shape) * 10
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


# ---- NumPy (CPU) -------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", NP_DTYPES)
def test_numpy_to_tensor_shares_memory(dtype):
    rng = np.random.default_rng(0)
    a = _rand(rng, (3, 4), dtype)
    ref = a.copy()
    t = torch.from_dlpack(a)
    assert t.shape == (3, 4) and t.device.type == "cpu"
    np.testing.assert_array_equal(t.numpy(), ref)
    assert t.data_ptr() == a.ctypes.data
    a[1, 2] = a[0, 0]          # write through NumPy, read through the tensor
    assert t[1, 2].item() == ref[0, 0]
    t[0, 1] = t[2, 3]          # and the other way
    assert a[0, 1] == ref[2, 3]


@pytest.mark.parametrize("dtype", NP_DTYPES)
def test_tensor_to_numpy_shares_memory(dtype):
    rng = np.random.default_rng(1)
    ref = _rand(rng, (2, 5), dtype)
    t = torch.tensor(ref)
    a = np.from_dlpack(t)
    assert a.dtype == ref.dtype and a.shape == (2, 5)
    np.testing.assert_array_equal(a, ref)
    assert a.ctypes.data == t.data_ptr()
    t[1, 1] = t[0, 0]
    assert a[1, 1] == ref[0, 0]
    a[0, 3] = ref[1, 4]
    assert t[0, 3].item() == ref[1, 4]


def test_strided_and_special_shapes():
    base = np.arange(60, dtype=np.float64).reshape(3, 4, 5)
    for a in (base[:, ::2, 1::2], base.transpose(2, 0, 1), base[1], np.array(3.5),
              np.zeros((0, 3)), base[:, :0]):
        t = torch.from_dlpack(a)
        assert tuple(t.shape) == a.shape
        if a.size:
            assert tuple(s * 8 for s in t.stride()) == a.strides
        np.testing.assert_array_equal(t.numpy(), a)
    t = torch.arange(24.).reshape(4, 6)[1:, ::3].t()
    a = np.from_dlpack(t)
    np.testing.assert_array_equal(a, t.numpy())
    assert a.strides == tuple(s * 4 for s in t.stride())


def test_capsule_consumed_once_and_roundtrip():
    t = torch.arange(5)
    cap = dl.to_dlpack(t)
    assert "dltensor" in repr(cap)
    u = torch.from_dlpack(cap)
    u[0] = 42
    assert t[0].item() == 42
    with pytest.raises(RuntimeError, match="consumed only once"):
        torch.from_dlpack(cap)
    with pytest.raises(TypeError):
        torch.from_dlpack(3)
    v = torch.from_dlpack(t)           # a tensor is a producer too
    v[1] = -1
    assert t.tolist() == [42, -1, 2, 3, 4]


def test_versioned_capsule():
    t = torch.tensor([1.5, 2.5])
    cap = t.__dlpack__(max_version=(1, 0))
    assert "dltensor_versioned" in repr(cap)
    u = torch.from_dlpack(cap)
    u[1] = 7
    assert t.tolist() == [1.5, 7.0]
    assert "dltensor_versioned" not in repr(t.__dlpack__())
    with pytest.raises(BufferError):
        t.__dlpack__(read_only=True)


def test_release_exactly_once_export():
    t = torch.arange(8.)
    w = weakref.ref(t.untyped_storage())
    cap = t.__dlpack__()
    del t
    gc.collect()
    assert w() is not None     # the unconsumed capsule keeps the memory
    del cap
    gc.collect()
    assert w() is None         # released by the capsule's destructor
    t = torch.arange(8.)
    w = weakref.ref(t.untyped_storage())
    a = np.from_dlpack(t)
    del t
    gc.collect()
    assert w() is not None and a[3] == 3.0
    del a
    gc.collect()
    assert w() is None         # released once by NumPy's call of the deleter


def test_release_exactly_once_import():
    a = np.arange(6.0)
    before = sys.getrefcount(a)
    t = torch.from_dlpack(a)
    u = t[2:]
    assert sys.getrefcount(a) > before
    del t
    gc.collect()
    assert u[0].item() == 2.0
    del u
    gc.collect()
    assert sys.getrefcount(a) == before
    # a consumed capsule that then dies must not release a second time
    b = np.arange(4.0)
    before = sys.getrefcount(b)
    cap = b.__dlpack__()
    t = torch.from_dlpack(cap)
    del cap, t
    gc.collect()
    assert sys.getrefcount(b) == before


def test_protocol_rules():
    t = torch.ones(3, requires_grad=True)
    with pytest.raises(BufferError, match="require gradient"):
        t.__dlpack__()
    x = torch.ones(3)
    assert x.__dlpack_device__() == (dl.DLDeviceType.kDLCPU, 0)
    assert int(x.__dlpack_device__()[0]) == 1
    with pytest.raises(AssertionError):
        x.__dlpack__(stream=5)
    with pytest.raises(TypeError):
        x.__dlpack__(stream=1.5)
    c = torch.from_dlpack(x, copy=True)
    c[0] = 9
    assert x[0].item() == 1.0
    with pytest.raises(AssertionError):
        torch.from_dlpack(dl.to_dlpack(x), copy=True)


@pytest.mark.skipif(real_torch is None, reason="needs real torch")
def test_real_torch_cpu_both_ways():
    t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    r = real_torch.from_dlpack(t)
    assert r.shape == (2, 3) and r.data_ptr() == t.data_ptr()
    r[1, 1] = 100
    assert t[1, 1].item() == 100
    r2 = real_torch.arange(4, dtype=real_torch.int64)
    u = torch.from_dlpack(r2)
    assert u.dtype == torch.int64 and u.data_ptr() == r2.data_ptr()
    u[0] = -7
    assert r2[0].item() == -7
    b = real_torch.tensor([1.0, 2.0], dtype=real_torch.bfloat16)
    ub = torch.from_dlpack(b)
    assert ub.dtype == torch.bfloat16 and ub.float().tolist() == [1.0, 2.0]


# ---- CUDA --------------------------------------------------------------------------------------

@pytest.mark.cuda
def test_cuda_export_import_self_and_memory_baseline():
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    t = torch.arange(1000, device="cuda", dtype=torch.float32)
    assert t.__dlpack_device__() == (dl.DLDeviceType.kDLCUDA, 0)
    u = torch.from_dlpack(t.__dlpack__())
    assert u.device.type == "cuda" and u.data_ptr() == t.data_ptr()
    u[5] = -1
    assert t[5].item() == -1
    del t, u
    gc.collect()
    torch.cuda.synchronize()
    assert torch.cuda.memory_allocated() == base


@pytest.mark.cuda
def test_cupy_both_ways():
    cp = pytest.importorskip("cupy")
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    t = torch.arange(12, device="cuda", dtype=torch.float64).reshape(3, 4)
    c = cp.from_dlpack(t)
    assert c.shape == (3, 4) and c.data.ptr == t.data_ptr()
    c[1, 2] = 99.0
    cp.cuda.get_current_stream().synchronize()
    assert t[1, 2].item() == 99.0
    t[0, 0] = -5.0
    torch.cuda.synchronize()
    assert float(c[0, 0]) == -5.0
    del c, t
    gc.collect()
    torch.cuda.synchronize()
    assert torch.cuda.memory_allocated() == base
    a = cp.arange(10, dtype=cp.float32)
    u = torch.from_dlpack(a)
    assert u.device.type == "cuda" and u.data_ptr() == a.data.ptr
    u[3] = 33
    torch.cuda.synchronize()
    assert float(a[3]) == 33.0
    a[4] = 44
    cp.cuda.get_current_stream().synchronize()
    assert u[4].item() == 44.0


@pytest.mark.cuda
def test_cupy_consumer_stream_waits_for_producer():
    """CuPy's from_dlpack passes its current stream (a non-blocking one here)
    to __dlpack__; our current stream (a side stream, still busy) must be
    waited for on it, or the sum would read the zeros before the fill."""
    cp = pytest.importorskip("cupy")
    side = torch.cuda.Stream()
    n = 1 << 22
    t = torch.zeros(n, device="cuda")
    torch.cuda.synchronize()
    consumer = cp.cuda.Stream(non_blocking=True)
    with torch.cuda.stream(side):
        torch.cuda._sleep(50_000_000)
        t.fill_(3.0)
        with consumer:
            arr = cp.from_dlpack(t)
            total = float(arr.sum())
    assert total == 3.0 * n
    torch.cuda.synchronize()


@pytest.mark.cuda
def test_real_torch_cuda_both_ways():
    if real_torch is None or not real_torch.cuda.is_available():
        pytest.skip("needs real torch with CUDA")
    t = torch.arange(8, device="cuda", dtype=torch.float32)
    r = real_torch.from_dlpack(t)
    assert r.is_cuda and r.data_ptr() == t.data_ptr()
    r[2] = 20
    real_torch.cuda.synchronize()
    assert t[2].item() == 20
    r2 = real_torch.arange(5, device="cuda", dtype=real_torch.int32)
    u = torch.from_dlpack(r2)
    assert u.device.type == "cuda" and u.data_ptr() == r2.data_ptr()
    u[1] = -3
    torch.cuda.synchronize()
    assert r2[1].item() == -3
