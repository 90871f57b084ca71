"""Tensors on the CPU against NumPy: attributes, creation, views, indexing,
NumPy interop, Python conversions. Inputs are random, never all zeros."""
import numpy as np
import pytest

import pycuda_sem as torch

rng = np.random.default_rng(1234)


def rand(*shape):
    return rng.standard_normal(shape).astype(np.float32) + 0.5


def T(a):
    return torch.tensor(a)


# ---- attributes -----------------------------------------------------------

def test_attributes():
    a = rand(2, 3, 4)
    t = T(a)
    assert t.shape == (2, 3, 4) and t.size() == (2, 3, 4)
    assert repr(t.size()) == "pycuda_sem.Size([2, 3, 4])"
    assert t.size(1) == 3 and t.size(-1) == 4 and t.size(dim=0) == 2
    assert t.stride() == (12, 4, 1) and t.stride(0) == 12
    assert t.dim() == t.ndim == 3 and t.numel() == 24 and t.nelement() == 24
    assert t.element_size() == 4 and t.nbytes == 96 and t.itemsize == 4
    assert not t.is_cuda and t.is_cpu and not t.is_pinned()
    assert t.get_device() == -1 and str(t.device) == "cpu"
    assert t.storage_offset() == 0 and t.is_contiguous()
    assert t.dtype is torch.float32 and t.data_ptr() != 0
    assert len(t) == 2
    with pytest.raises(IndexError):
        t.size(3)


def test_scalars_and_conversions():
    t = torch.tensor(2.5)
    assert t.dim() == 0 and t.shape == () and t.item() == 2.5
    assert float(t) == 2.5 and int(t) == 2 and bool(t)
    assert torch.tensor(7).item() == 7 and type(torch.tensor(7).item()) is int
    assert torch.tensor(True).item() is True
    assert torch.tensor(1 + 2j).item() == 1 + 2j
    assert [10, 20, 30][torch.tensor(1)] == 20
    assert f"{torch.tensor(3.14159):.2f}" == "3.14"
    with pytest.raises(TypeError):
        [1, 2][torch.tensor(1.0)]
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(torch.ones(2))
    with pytest.raises(RuntimeError, match="2 elements cannot be converted"):
        float(torch.ones(2))
    with pytest.raises(TypeError, match="0-d"):
        len(t)
    with pytest.raises(TypeError, match="0-d"):
        iter(t)


def test_tolist_and_iteration():
    a = rng.integers(-100, 100, size=(3, 4))
    t = T(a)
    assert t.tolist() == a.tolist()
    assert [r.tolist() for r in t] == a.tolist()
    assert torch.tensor([[True, False]]).tolist() == [[True, False]]


# ---- creation -------------------------------------------------------------

def test_inference():
    assert torch.tensor([1, 2]).dtype is torch.int64
    assert torch.tensor([1., 2]).dtype is torch.float32
    assert torch.tensor([True, False]).dtype is torch.bool
    assert torch.tensor([True, 2]).dtype is torch.int64
    assert torch.tensor([1, 2j]).dtype is torch.complex64
    assert torch.tensor([]).dtype is torch.float32 and torch.tensor([]).shape == (0,)
    assert torch.tensor([[]]).shape == (1, 0)
    assert torch.tensor(np.float64(1.5)).dtype is torch.float64
    assert torch.tensor([np.float32(1.5), 2]).dtype is torch.float32
    assert torch.tensor(np.arange(3, dtype=np.int16)).dtype is torch.int16
    assert torch.tensor([1, 2], dtype=torch.float64).dtype is torch.float64
    assert torch.tensor(((1, 2), (3, 4))).tolist() == [[1, 2], [3, 4]]
    assert torch.tensor([torch.tensor(1.5), torch.tensor(2.5)]).tolist() == [1.5, 2.5]


def test_inference_errors():
    with pytest.raises(ValueError, match="expected sequence of length 2 at dim 1"):
        torch.tensor([[1, 2], [3]])
    with pytest.raises(TypeError):
        torch.tensor(["a"])
    with pytest.raises(TypeError):
        torch.tensor([None])


def test_factories_against_numpy():
    assert np.array_equal(torch.zeros(2, 3).numpy(), np.zeros((2, 3), np.float32))
    assert np.array_equal(torch.ones((2, 3), dtype=torch.int32).numpy(), np.ones((2, 3), np.int32))
    assert np.array_equal(torch.full((2, 2), 7).numpy(), np.full((2, 2), 7))
    assert torch.full((2,), 7).dtype is torch.int64
    assert torch.full((2,), True).dtype is torch.bool
    assert torch.full([2], 1.5).dtype is torch.float32
    assert np.array_equal(torch.arange(5).numpy(), np.arange(5))
    assert np.array_equal(torch.arange(1, 10, 3).numpy(), np.arange(1, 10, 3))
    assert np.allclose(torch.arange(0, 1, 0.1).numpy(), np.arange(0, 1, 0.1, dtype=np.float32))
    assert torch.arange(0, 1, 0.1).dtype is torch.float32
    assert torch.arange(10, 0, -3).tolist() == [10, 7, 4, 1]
    assert np.allclose(torch.linspace(-1, 2, 7).numpy(), np.linspace(-1, 2, 7))
    assert torch.linspace(0, 1, 1).tolist() == [0.0]
    assert np.array_equal(torch.eye(3, 4).numpy(), np.eye(3, 4, dtype=np.float32))
    t = torch.empty_strided((2, 3), (1, 2))
    assert t.stride() == (1, 2) and t.shape == (2, 3)
    assert torch.empty(size=(2, 5)).shape == (2, 5)
    assert torch.empty([]).shape == ()
    with pytest.raises(RuntimeError, match="negative dimension"):
        torch.empty(-1)
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        torch.arange(0, 5, 0)


def test_like_and_new():
    x = torch.tensor(rand(2, 3), dtype=torch.float64)
    for f, v in ((torch.zeros_like, 0), (torch.ones_like, 1)):
        y = f(x)
        assert y.dtype is torch.float64 and y.shape == (2, 3) and (y.numpy() == v).all()
    assert torch.full_like(x, 3).tolist() == [[3.0] * 3] * 2
    assert torch.empty_like(x, dtype=torch.int8).dtype is torch.int8
    y = x.new_full([3, 2], fill_value=0.3)
    assert y.dtype is torch.float64 and np.allclose(y.numpy(), 0.3)
    assert x.new_zeros(4).dtype is torch.float64 and x.new_ones((1, 2)).shape == (1, 2)
    assert x.new_empty(2, 2, dtype=torch.int32).dtype is torch.int32
    z = torch.empty(2, dtype=torch.int64).new_tensor([[1, 2, 3]])
    assert z.dtype is torch.int64 and z.tolist() == [[1, 2, 3]]
    assert x.new(8, 10, 10).fill_(0.3).shape == (8, 10, 10)
    assert x.new(x.size()).shape == (2, 3)
    assert x.new([[1, 2, 3]]).tolist() == [[1.0, 2.0, 3.0]]
    assert x.new().shape == (0,)


def test_uint64_range_bounds_in_linspace_and_arange():
    """An int in [2**63, 2**64) is a bound by its value, not by its int64 bit
    pattern (which is negative); an int64 range cannot hold it, as in torch."""
    assert torch.linspace(0, 1 << 63, 3, dtype=torch.float64).tolist() == [0.0, 2.0 ** 62, 2.0 ** 63]
    assert torch.arange(0, 1 << 63, 1 << 62, dtype=torch.float64).tolist() == [0.0, 2.0 ** 62]
    with pytest.raises(RuntimeError, match="type int64_t without overflow"):
        torch.arange(1 << 63, dtype=torch.int32)


# Every factory that accepts pin_memory= (tests/test_bad_input.py checks that
# each honours it) says so in its docstring; as_tensor refuses it.
PIN_FACTORIES = ["empty", "zeros", "ones", "full", "empty_strided", "arange", "linspace", "eye",
                 "tensor", "empty_like", "zeros_like", "ones_like", "full_like", "rand", "randn",
                 "randint", "randperm", "rand_like", "randn_like"]


@pytest.mark.parametrize("name", PIN_FACTORIES)
def test_factory_docstrings_mention_pin_memory(name):
    doc = getattr(torch, name).__doc__
    assert "pin_memory=False" in doc.split("\n")[0], doc


def test_as_tensor_docstring_names_only_its_arguments():
    doc = torch.as_tensor.__doc__
    assert doc.startswith("as_tensor(data, *, dtype=None, device=None)") and "pin_memory" not in doc


# ---- views ----------------------------------------------------------------

def check_view(t, a, view_of=None):
    assert t.shape == a.shape, (t.shape, a.shape)
    assert np.array_equal(t.numpy(), a)
    if view_of is not None:
        assert t.untyped_storage().data_ptr() == view_of.untyped_storage().data_ptr()


def test_views_share_storage():
    a = rand(2, 3, 4)
    t = T(a)
    check_view(t.view(6, 4), a.reshape(6, 4), t)
    check_view(t.view(-1), a.reshape(-1), t)
    check_view(t.view(2, -1, 2), a.reshape(2, -1, 2), t)
    check_view(t.reshape(4, 6), a.reshape(4, 6), t)
    check_view(t.flatten(), a.flatten(), t)
    check_view(t.flatten(1), a.reshape(2, 12), t)
    check_view(t.permute(2, 0, 1), a.transpose(2, 0, 1), t)
    check_view(t.transpose(0, 2), a.swapaxes(0, 2), t)
    check_view(t[0].t(), a[0].T, t)
    check_view(t.T, a.T, t)
    check_view(t.unsqueeze(1), a[:, None], t)
    check_view(t.unsqueeze(-1), a[..., None], t)
    check_view(t.unsqueeze(1).squeeze(), a, t)
    check_view(t[:1].squeeze(0), a[0], t)
    check_view(t.narrow(1, 1, 2), a[:, 1:3], t)
    check_view(t.select(2, 3), a[:, :, 3], t)
    check_view(t[:, :1].expand(2, 5, 4), np.broadcast_to(a[:, :1], (2, 5, 4)), t)
    check_view(t[0, 0].expand(3, -1), np.broadcast_to(a[0, 0], (3, 4)), t)
    for i, u in enumerate(t.unbind(1)):
        check_view(u, a[:, i], t)
    x = t.view(6, 4)
    x[0, 0] = 42.0
    assert t[0, 0, 0].item() == 42.0  # writes go through views


def test_view_errors_and_reshape_copy():
    t = T(rand(4, 6)).t()
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        t.view(24)
    r = t.reshape(24)  # copies
    assert np.array_equal(r.numpy(), t.numpy().reshape(24))
    assert r.untyped_storage().data_ptr() != t.untyped_storage().data_ptr()
    with pytest.raises(RuntimeError, match="invalid for input of size"):
        t.view(5, 5)
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        t.view(-1, -1)
    with pytest.raises(RuntimeError, match="must match the existing size"):
        T(rand(2, 3)).expand(2, 4)
    with pytest.raises(IndexError, match="Dimension out of range"):
        t.transpose(0, 2)
    with pytest.raises(RuntimeError):
        T(rand(2, 2, 2)).t()


def test_contiguous_clone_detach():
    a = rand(3, 5)
    t = T(a)
    tt = t.t()
    assert not tt.is_contiguous()
    c = tt.contiguous()
    assert c.is_contiguous() and np.array_equal(c.numpy(), a.T)
    assert t.contiguous() is t
    cl = t.clone()
    assert cl.data_ptr() != t.data_ptr() and np.array_equal(cl.numpy(), a)
    assert t.detach().data_ptr() == t.data_ptr()


# torch's preserve_format (the default of clone() and to()): a dense view
# keeps its strides; one that is not dense gets dense strides in its own
# memory order; contiguous() always gives row-major strides.
PRESERVE_CASES = [
    ((4, 5), lambda x: x.t(), (1, 5)),
    ((2, 4, 5), lambda x: x.permute(0, 2, 1)[:, 1:], (16, 1, 4)),
    ((6, 8), lambda x: x[::2, 1::3], (3, 1)),
    ((6, 8), lambda x: x[::2, 1::3].t(), (1, 3)),
    ((3, 1), lambda x: x.expand(3, 4), (4, 1)),
    ((2, 3, 4, 5), lambda x: x.permute(0, 2, 3, 1)[:, :, 1:], (48, 4, 1, 16)),
]


@pytest.mark.parametrize("case", range(len(PRESERVE_CASES)))
def test_clone_and_to_preserve_the_memory_order(case):
    shape, view, want = PRESERVE_CASES[case]
    a = rand(*shape)
    x = view(T(a))
    ref = x.numpy()
    for got in (x.clone(), x.to(torch.float32, copy=True), x.double(), x.half(), x.to(torch.int64),
                x.to("cpu", torch.float64, copy=True)):
        assert got.stride() == want, (got.stride(), want)
        np.testing.assert_array_equal(got.numpy(), ref.astype(got.numpy().dtype, casting="unsafe"))
    c = x.contiguous()
    assert c.is_contiguous() and np.array_equal(c.numpy(), ref)


# ---- indexing -------------------------------------------------------------

INDICES = [0, -1, (1, 2), slice(None), slice(1, None), slice(None, None, 2),
           slice(-3, -1), (Ellipsis, 1), (None, 0), (slice(None), None, 1),
           (0, Ellipsis, slice(1, 3)), (slice(3, 1),), (1, slice(None, None, 3), None, 2),
           (slice(0, 100),)]


@pytest.mark.parametrize("index", INDICES)
def test_getitem_matches_numpy(index):
    a = rand(4, 5, 6)
    t = T(a)
    check_view(t[index], a[index], t)


@pytest.mark.parametrize("index", INDICES)
def test_setitem_matches_numpy(index):
    a = rand(4, 5, 6)
    t = T(a.copy())
    a[index] = 3.25
    t[index] = 3.25
    assert np.array_equal(t.numpy(), a)
    v = rand(*a[index].shape)
    a[index] = v
    t[index] = T(v)
    assert np.array_equal(t.numpy(), a)


def test_setitem_broadcast_and_cast():
    a = rand(3, 4)
    t = T(a.copy())
    t[1:] = torch.tensor([1, 2, 3, 4])  # int64 into float32, broadcast over rows
    a[1:] = np.array([1, 2, 3, 4])
    assert np.array_equal(t.numpy(), a)
    t[0] = [9, 8, 7, 6]
    assert t[0].tolist() == [9, 8, 7, 6]


def test_index_errors():
    t = T(rand(3, 4))
    with pytest.raises(IndexError, match="out of bounds"):
        t[3]
    with pytest.raises(IndexError, match="too many indices"):
        t[0, 0, 0]
    with pytest.raises(ValueError, match="step must be greater than zero"):
        t[::-1]
    # advanced indexing works (tests/test_index.py); its errors are torch's
    assert t[torch.tensor([0, 1])].shape == (2, 4)
    assert t[[0, 1]].shape == (2, 4)
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        t[[0, 3]]


# ---- NumPy ----------------------------------------------------------------

NP_DTYPES = [np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64, np.float16,
             np.float32, np.float64, np.complex64, np.complex128]


@pytest.mark.parametrize("npdt", NP_DTYPES)
def test_numpy_round_trip_shares_memory(npdt):
    a = (rng.standard_normal((3, 4)) * 10).astype(npdt)
    t = torch.from_numpy(a)
    assert str(t.dtype).split(".")[1] == np.dtype(npdt).name.replace("bool", "bool")
    assert np.array_equal(t.numpy(), a)
    n = t.numpy()
    assert n.base is t and np.shares_memory(n, a)
    a.flat[0] = a.flat[1]
    assert t.numpy().flat[0] == a.flat[1]
    assert np.array_equal(np.asarray(t), a)
    assert np.array_equal(t.__array__(), a)


def test_from_numpy_strided_and_errors():
    a = rand(6, 8)[::2, 1::3]
    t = torch.from_numpy(a)
    assert np.array_equal(t.numpy(), a) and t.stride() == (16, 3)
    with pytest.raises(ValueError, match="negative"):
        torch.from_numpy(rand(4)[::-1])
    with pytest.raises(TypeError, match="np.ndarray"):
        torch.from_numpy([1, 2])
    with pytest.raises(TypeError, match="uint16"):
        torch.from_numpy(np.zeros(2, np.uint16) + 1)
    with pytest.raises(TypeError, match="BFloat16"):
        torch.ones(2, dtype=torch.bfloat16).numpy()
    t = torch.tensor(a)  # tensor() copies
    assert not np.shares_memory(t.numpy(), a)
    s = torch.as_tensor(a)  # as_tensor shares when it can
    assert np.shares_memory(s.numpy(), a)
    assert torch.as_tensor(a, dtype=torch.float64).dtype is torch.float64


def test_array_keeps_tensor_alive():
    n = torch.arange(100).view(10, 10).numpy()
    import gc
    gc.collect()
    assert n.sum() == 4950


# ---- misc -----------------------------------------------------------------

def test_complex_parts():
    a = (rng.standard_normal(5) + 1j * rng.standard_normal(5)).astype(np.complex64)
    t = T(a)
    assert np.array_equal(t.real.numpy(), a.real) and np.array_equal(t.imag.numpy(), a.imag)
    t.imag[:] = 0.5
    assert np.all(t.numpy().imag == 0.5)
    r = T(rand(3))
    assert r.real is r
    with pytest.raises(RuntimeError):
        r.imag


def test_no_gpu_errors_are_clear():
    if torch.cuda.device_count() > 0:
        pytest.skip("a GPU is present")
    with pytest.raises(RuntimeError, match="no CUDA GPU"):
        torch.zeros(2, device="cuda")
    with pytest.raises(RuntimeError, match="no CUDA GPU"):
        torch.zeros(2).cuda()
    with pytest.raises(RuntimeError, match="no CUDA GPU"):
        torch.zeros(2).pin_memory()
    with pytest.raises(RuntimeError, match="no CUDA GPU"):
        torch.empty(2, pin_memory=True)
    with pytest.raises(RuntimeError, match="no CUDA GPU"):
        torch.cuda.FloatTensor(1)


# ---- matrix products: alpha and beta ----------------------------------------

def test_integer_addmm_computes_in_the_dtype():
    """Integer products keep integer alpha and beta: exact past 2**53 (they
    used to go through float64), and uint8's -1 wraps to 255 as in torch."""
    big = (1 << 60) + 1
    m = torch.tensor([[big, 3], [1, 1]])
    eye = torch.tensor([[1, 0], [0, 1]])
    assert torch.addmm(m, m, eye).tolist() == [[2 * big, 6], [2, 2]]
    assert torch.addmm(m, m, eye, beta=3, alpha=-2).tolist() == [[big, 3], [1, 1]]
    u = torch.tensor([[1, 2]], dtype=torch.uint8)
    one = torch.tensor([[1]], dtype=torch.uint8)
    assert torch.addmm(u, one, u, beta=-1).tolist() == [[0, 0]]
