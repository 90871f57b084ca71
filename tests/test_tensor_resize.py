"""Tensor.resize_, resize_as_, set_, is_set_to and view_as_real /
view_as_complex (pycuda_sem/_tensor_set.py over csrc/tensor/tensor_set.c):
torch's semantics, checked against NumPy float64 references and, where it
imports, real torch."""
import gc

import numpy as np
import pytest

import pycuda_sem as torch
from torch_oracle import _torch as real_torch

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]


def _data(seed, n):
    return np.random.default_rng(seed).standard_normal(n)


@pytest.mark.parametrize("device", DEVICES)
def test_resize_shrink_and_grow_keep_prefix(device):
    ref = _data(0, 6)
    a = torch.tensor(ref, device=device)
    assert a.resize_(2, 2) is a
    assert a.shape == (2, 2) and a.stride() == (2, 1)
    np.testing.assert_array_equal(a.cpu().numpy().ravel(), ref[:4])
    ptr = a.data_ptr()
    a.resize_(2, 3)                      # back within the storage: same memory
    assert a.data_ptr() == ptr
    np.testing.assert_array_equal(a.cpu().numpy().ravel(), ref)
    a.resize_((4, 5))                    # grows: a new, bigger storage, prefix kept
    assert a.shape == (4, 5) and a.stride() == (5, 1)
    assert a.untyped_storage().nbytes() >= 20 * 8
    np.testing.assert_array_equal(a.cpu().numpy().ravel()[:6], ref)
    a.resize_(torch.Size([3]))
    np.testing.assert_array_equal(a.cpu().numpy(), ref[:3])


@pytest.mark.parametrize("device", DEVICES)
def test_resize_grow_is_seen_by_views(device):
    ref = _data(1, 10)
    base = torch.tensor(ref, device=device)
    v = base[2:5]
    v.resize_(2)
    assert v.storage_offset() == 2
    np.testing.assert_array_equal(v.cpu().numpy(), ref[2:4])
    v.resize_(20)                        # the shared storage grows in place
    assert v.storage_offset() == 2 and v.shape == (20,)
    np.testing.assert_array_equal(v.cpu().numpy()[:8], ref[2:])
    v[0] = 123.0                         # base views the same (grown) storage
    assert base[2].item() == 123.0
    assert base.untyped_storage().nbytes() >= 22 * 8


@pytest.mark.skipif(real_torch is None, reason="needs real torch")
def test_resize_matches_real_torch():
    ref = _data(2, 12).astype(np.float32)
    ours, theirs = torch.tensor(ref), real_torch.tensor(ref)
    for shape in [(3, 4), (2, 2), (5,), (2, 3, 2), (1, 12), (12,)]:
        ours.resize_(*shape)
        theirs.resize_(*shape)
        assert tuple(ours.shape) == tuple(theirs.shape)
        assert ours.stride() == theirs.stride()
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    z = torch.arange(6.).reshape(2, 3)
    zr = real_torch.arange(6.).reshape(2, 3)
    z.resize_as_(torch.empty(3, 2))
    zr.resize_as_(real_torch.empty(3, 2))
    np.testing.assert_array_equal(z.numpy(), zr.numpy())


def test_resize_refusals():
    x = torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        x.resize_(4)
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        (x * 2).resize_(4)
    n = torch.from_numpy(np.zeros(3))
    with pytest.raises(RuntimeError, match="not resizable"):
        n.resize_(10)
    n.resize_(2)                          # within the storage is fine
    assert n.shape == (2,)
    with pytest.raises(RuntimeError):
        torch.ones(2).resize_(-1)
    with pytest.raises(RuntimeError):
        torch.ones(2).resize_(2 ** 40, 2 ** 40)
    with pytest.raises(TypeError):
        torch.ones(2).resize_("a")


def test_resize_bumps_version_and_channels_last():
    x = torch.ones(3)
    v = x._version
    x.resize_(5)
    assert x._version > v
    y = torch.ones(2, 3, 4, 5)
    y.resize_(2, 3, 4, 5, memory_format=torch.channels_last)
    assert y.stride() == (60, 1, 15, 3)


@pytest.mark.parametrize("device", DEVICES)
def test_set_forms(device):
    ref = _data(3, 10)
    s = torch.tensor(ref, device=device)
    t = torch.empty(3, dtype=torch.float64, device=device)
    assert t.set_(s) is t
    assert t.shape == (10,) and t.is_set_to(s) and s.is_set_to(t)
    t[0] = 5.0
    assert s[0].item() == 5.0
    t.set_(s.untyped_storage(), 2, (2, 2), (1, 2))
    np.testing.assert_array_equal(t.cpu().numpy(), [[ref[2], ref[4]], [ref[3], ref[5]]])
    assert not t.is_set_to(s)
    t.set_(s, 1, (3,))
    np.testing.assert_array_equal(t.cpu().numpy(), ref[1:4])
    t.set_()
    assert t.shape == (0,) and t.numel() == 0
    with pytest.raises(RuntimeError, match="Could not set tensor of type long int to a tensor "
                                           "of type double"):
        torch.empty(1, dtype=torch.float64, device=device).set_(
            torch.arange(3, device=device))
    with pytest.raises(RuntimeError):
        t.set_(s.untyped_storage(), 8, (5,), (1,))   # outside the storage
    with pytest.raises(RuntimeError):
        torch.ones(2, requires_grad=True).set_(s)


@pytest.mark.skipif(real_torch is None, reason="needs real torch")
def test_set_matches_real_torch():
    s, rs = torch.arange(10.), real_torch.arange(10.)
    t, rt = torch.empty(0), real_torch.empty(0)
    t.set_(s.untyped_storage(), 2, (2, 2), (1, 2))
    rt.set_(rs.untyped_storage(), 2, (2, 2), (1, 2))
    np.testing.assert_array_equal(t.numpy(), rt.numpy())
    assert t.stride() == rt.stride() and t.storage_offset() == rt.storage_offset()


@pytest.mark.parametrize("device", DEVICES)
def test_view_as_real_and_complex_share_memory(device):
    rng = np.random.default_rng(4)
    ref = (rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))).astype(np.complex128)
    z = torch.tensor(ref, device=device)
    r = torch.view_as_real(z)
    assert r.dtype == torch.float64 and r.shape == (3, 4, 2) and r.stride() == (8, 2, 1)
    np.testing.assert_array_equal(r.cpu().numpy(), np.stack([ref.real, ref.imag], -1))
    r[1, 2, 1] = 9.0
    assert z[1, 2].item() == complex(ref[1, 2].real, 9.0)
    sl = torch.view_as_real(z[:, 1::2])
    assert sl.stride() == (8, 4, 1) and sl.storage_offset() == 2
    c = torch.view_as_complex(r)
    assert c.dtype == torch.complex128 and c.shape == (3, 4)
    c[0, 0] = 1 + 2j
    assert r[0, 0].tolist() == [1.0, 2.0] and z[0, 0].item() == 1 + 2j
    f = torch.tensor(rng.standard_normal((2, 4)), dtype=torch.float32, device=device)
    c2 = torch.view_as_complex(f[:, :2])
    assert c2.dtype == torch.complex64 and c2.stride() == (2,)
    np.testing.assert_allclose(c2.cpu().numpy(),
                               f.cpu().numpy()[:, 0] + 1j * f.cpu().numpy()[:, 1])


def test_view_as_complex_errors():
    with pytest.raises(RuntimeError, match="last dimension of size 2"):
        torch.view_as_complex(torch.ones(3))
    with pytest.raises(RuntimeError, match="last dimension of size 2"):
        torch.view_as_complex(torch.ones(4, 2).t())
    with pytest.raises(RuntimeError, match="storage_offset divisible by 2"):
        torch.view_as_complex(torch.ones(2, 4)[:, 1:3])
    with pytest.raises(NotImplementedError, match="Long"):
        torch.view_as_complex(torch.ones(4, 2, dtype=torch.int64))
    with pytest.raises(TypeError, match="only supported for complex tensors"):
        torch.view_as_real(torch.ones(2))


def test_view_as_real_gradient():
    z = torch.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    r = torch.view_as_real(z)
    assert r.requires_grad
    np.testing.assert_array_equal(r.detach().numpy(), [[1, 2], [3, -1]])


@pytest.mark.cuda
def test_cuda_resize_memory_returns_to_baseline():
    gc.collect()
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    a = torch.arange(100, device="cuda", dtype=torch.float32)
    v = a[10:]
    a.resize_(1000)
    assert a[99].item() == 99.0 and v[0].item() == 10.0
    v[0] = -1.0
    assert a[10].item() == -1.0
    del a, v
    gc.collect()
    torch.cuda.synchronize()
    assert torch.cuda.memory_allocated() == base
