"""torch.X(input, ...) for ops that are Tensor methods (torch.flatten,
torch.reshape, torch.transpose, torch.clone, the in-place unary forms), the
torch-level spellings of nn.functional layers (whose argument orders differ
in places: torch.batch_norm, torch.embedding, torch.dropout), and torch.finfo
/ torch.iinfo. Where real torch imports, results are compared with its own
on the same data; otherwise with NumPy or with the method they forward to."""
import numpy as np
import pytest

import pycuda_sem as torch
import pycuda_sem.nn.functional as F

from torch_oracle import _torch as real_torch  # torch where it imports, else None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
pytestmark = pytest.mark.usefixtures("no_tf32")  # float64 references (conftest.py)



def npy(t):
    return t.detach().cpu().numpy()


def pair(shape, device, seed=0, dtype=np.float32):
    """The same random values as a pycuda_sem tensor and a NumPy array."""
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return torch.tensor(a, device=device), a


# name, args after input, the NumPy answer for a [2, 3, 4] input a
_VIEWS = [
    ("flatten", (1,), lambda a: a.reshape(2, 12)),
    ("flatten", (), lambda a: a.reshape(24)),
    ("reshape", ((4, 6),), lambda a: a.reshape(4, 6)),
    ("reshape", ((-1,),), lambda a: a.reshape(-1)),
    ("permute", ((2, 0, 1),), lambda a: a.transpose(2, 0, 1)),
    ("transpose", (0, 2), lambda a: a.swapaxes(0, 2)),
    ("select", (1, 2), lambda a: a[:, 2]),
    ("unsqueeze", (1,), lambda a: a[:, None]),
    ("squeeze", (), lambda a: a),
    ("clone", (), lambda a: a),
    ("detach", (), lambda a: a),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", range(len(_VIEWS)))
def test_view_and_copy_functions(device, case):
    name, args, want = _VIEWS[case]
    x, a = pair((2, 3, 4), device)
    got = getattr(torch, name)(x, *args)
    np.testing.assert_array_equal(npy(got), want(a))
    assert got.device == x.device
    if real_torch is not None:
        r = getattr(real_torch, name)(real_torch.from_numpy(a), *args)
        np.testing.assert_array_equal(npy(got), r.numpy())


@pytest.mark.parametrize("device", DEVICES)
def test_t_squeeze_dim_and_keyword_input(device):
    x, a = pair((1, 3), device)
    np.testing.assert_array_equal(npy(torch.t(x)), a.T)
    np.testing.assert_array_equal(npy(torch.squeeze(x, 0)), a[0])
    np.testing.assert_array_equal(npy(torch.flatten(input=x.view(1, 3, 1), start_dim=1)), a)


def test_functions_refuse_a_non_tensor():
    with pytest.raises(TypeError, match="reshape.*must be Tensor, not list"):
        torch.reshape([1, 2], (2,))
    with pytest.raises(TypeError, match="flatten.*missing required argument 'input'"):
        torch.flatten()


def test_clone_is_a_copy_and_records_history():
    x = torch.randn(3, 4, requires_grad=True)
    y = torch.clone(x)
    assert y.data_ptr() != x.data_ptr() and y.grad_fn.name() == "CloneBackward0"
    torch.transpose(y, 0, 1).sum().backward()
    np.testing.assert_array_equal(npy(x.grad), np.ones((3, 4), np.float32))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,ref", [("exp_", np.exp), ("sigmoid_", lambda a: 1 / (1 + np.exp(-a))),
                                      ("relu_", lambda a: np.maximum(a, 0)), ("neg_", np.negative),
                                      ("zero_", np.zeros_like), ("tanh_", np.tanh)])
def test_in_place_unary_functions(device, name, ref):
    x, a = pair((5, 7), device, seed=3)
    ptr = x.data_ptr()
    r = getattr(torch, name)(x)
    assert r is x and x.data_ptr() == ptr
    np.testing.assert_allclose(npy(x), ref(a.astype(np.float64)), rtol=2e-6, atol=1e-7)


# ---- torch-level layer functions -------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_conv_pool_and_friends_are_the_functional_ones(device):
    x, a = pair((2, 3, 8, 8), device, seed=1)
    w, wa = pair((4, 3, 3, 3), device, seed=2)
    got = torch.conv2d(x, w, None, 1, 1)
    np.testing.assert_allclose(npy(got), npy(F.conv2d(x, w, None, 1, 1)), rtol=0, atol=0)
    np.testing.assert_array_equal(npy(torch.max_pool2d(x, 2)), a.reshape(2, 3, 4, 2, 4, 2).max((3, 5)))
    np.testing.assert_array_equal(npy(torch.pixel_shuffle(x[:, :1].expand(2, 4, 8, 8).contiguous(), 2)).shape,
                                  (2, 1, 16, 16))
    if real_torch is not None:
        r = real_torch.conv2d(real_torch.from_numpy(a), real_torch.from_numpy(wa), None, 1, 1)
        np.testing.assert_allclose(npy(got), r.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_batch_norm_takes_aten_argument_order(device):
    """torch.batch_norm(input, weight, bias, running_mean, running_var, ...)
    puts the affine parameters first, where F.batch_norm puts the statistics."""
    x, a = pair((6, 3, 4), device, seed=4)
    w, wa = pair((3,), device, seed=5)
    b, ba = pair((3,), device, seed=6)
    rm, rv = torch.zeros(3, device=device), torch.ones(3, device=device)
    got = torch.batch_norm(x, w, b, rm, rv, True, 0.1, 1e-5, True)
    a64 = a.astype(np.float64)
    mean, var = a64.mean((0, 2), keepdims=True), a64.var((0, 2), keepdims=True)
    want = (a64 - mean) / np.sqrt(var + 1e-5) * wa[:, None] + ba[:, None]
    np.testing.assert_allclose(npy(got), want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(npy(rm), 0.1 * mean.ravel(), rtol=1e-5, atol=1e-7)
    if real_torch is not None:
        r = real_torch.batch_norm(real_torch.from_numpy(a), real_torch.from_numpy(wa),
                                  real_torch.from_numpy(ba), real_torch.zeros(3), real_torch.ones(3),
                                  True, 0.1, 1e-5, True)
        np.testing.assert_allclose(npy(got), r.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_layer_norm_group_norm_and_rms_norm(device):
    x, a = pair((4, 6), device, seed=7)
    a64 = a.astype(np.float64)
    want = (a64 - a64.mean(1, keepdims=True)) / np.sqrt(a64.var(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(npy(torch.layer_norm(x, (6,))), want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(npy(torch.group_norm(x.view(4, 6, 1), 1)), want[:, :, None],
                               rtol=1e-4, atol=1e-5)
    rms = a64 / np.sqrt((a64 ** 2).mean(1, keepdims=True) + 1e-6)
    np.testing.assert_allclose(npy(torch.rms_norm(x, (6,), None, 1e-6)), rms, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_embedding_takes_the_table_first(device):
    w, wa = pair((10, 3), device, seed=8)
    idx = torch.tensor([[1, 4], [9, 0]], device=device)
    np.testing.assert_array_equal(npy(torch.embedding(w, idx)), wa[[[1, 4], [9, 0]]])
    with pytest.raises(NotImplementedError, match="sparse"):
        torch.embedding(w, idx, sparse=True)


@pytest.mark.parametrize("device", DEVICES)
def test_dropout_needs_train_and_keeps_the_expectation(device):
    x = torch.ones(20000, device=device)
    y = torch.dropout(x, 0.25, True)
    kept = npy(y) != 0
    assert 0.72 < kept.mean() < 0.78
    np.testing.assert_allclose(npy(y)[kept], 1 / 0.75, rtol=1e-6)
    assert torch.dropout(x, 0.25, False) is x or np.array_equal(npy(torch.dropout(x, 0.25, False)), npy(x))
    with pytest.raises(TypeError):
        torch.dropout(x, 0.25)


# ---- finfo / iinfo ------------------------------------------------------------------

_FINFO = {  # bits, eps, max, tiny, resolution (torch 2.15's values)
    "float16": (16, 2.0 ** -10, 65504.0, 2.0 ** -14, 1e-3),
    "bfloat16": (16, 2.0 ** -7, 3.3895313892515355e38, 2.0 ** -126, 1e-2),
    "float32": (32, 2.0 ** -23, 3.4028234663852886e38, 2.0 ** -126, 1e-6),
    "float64": (64, 2.0 ** -52, 1.7976931348623157e308, 2.0 ** -1022, 1e-15),
}


@pytest.mark.parametrize("name", sorted(_FINFO))
def test_finfo(name):
    f = torch.finfo(getattr(torch, name))
    bits, eps, mx, tiny, res = _FINFO[name]
    assert (f.bits, f.eps, f.max, f.min, f.tiny, f.smallest_normal, f.dtype) == \
        (bits, eps, mx, -mx, tiny, tiny, name)
    assert f.resolution == pytest.approx(res, rel=1e-12)
    assert isinstance(f.max, float) and f == torch.finfo(getattr(torch, name))
    if real_torch is not None:
        r = real_torch.finfo(getattr(real_torch, name))
        assert (r.bits, r.eps, r.max, r.tiny, r.resolution, r.dtype) == \
            (f.bits, f.eps, f.max, f.tiny, f.resolution, f.dtype)
        assert repr(r) == repr(f)


def test_finfo_default_complex_and_errors():
    assert torch.finfo().dtype == "float32"
    assert torch.finfo(torch.complex128).dtype == "float64"
    assert repr(torch.finfo(torch.float32)) == (
        "finfo(resolution=1e-06, min=-3.40282e+38, max=3.40282e+38, eps=1.19209e-07, "
        "smallest_normal=1.17549e-38, tiny=1.17549e-38, dtype=float32)")
    with pytest.raises(TypeError, match="iinfo"):
        torch.finfo(torch.int32)
    with pytest.raises(TypeError):
        torch.finfo("float32")


@pytest.mark.parametrize("name,lo,hi", [("uint8", 0, 255), ("int8", -128, 127), ("int16", -32768, 32767),
                                        ("int32", -2 ** 31, 2 ** 31 - 1), ("int64", -2 ** 63, 2 ** 63 - 1)])
def test_iinfo(name, lo, hi):
    i = torch.iinfo(getattr(torch, name))
    assert (i.min, i.max, i.dtype, i.bits) == (lo, hi, name, np.dtype(name).itemsize * 8)
    assert isinstance(i.max, int)
    if real_torch is not None:
        assert repr(real_torch.iinfo(getattr(real_torch, name))) == repr(i)


def test_iinfo_refuses_bool_and_floats():
    with pytest.raises(TypeError, match="bool"):
        torch.iinfo(torch.bool)
    with pytest.raises(TypeError):
        torch.iinfo(torch.float32)
    # the values are usable as fill values of their dtype
    x = torch.full((2,), torch.iinfo(torch.int64).min, dtype=torch.int64)
    assert x.tolist() == [-2 ** 63] * 2


# ---- in-place view ops ----------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_in_place_view_ops_change_only_the_geometry(device):
    x = torch.arange(6.0, device=device).reshape(2, 3)
    ptr = x.data_ptr()
    assert x.unsqueeze_(0) is x and tuple(x.shape) == (1, 2, 3)
    x.squeeze_()
    x.t_()
    assert tuple(x.shape) == (3, 2) and x.stride() == (1, 3) and x.data_ptr() == ptr
    x.transpose_(0, 1)
    x.swapdims_(0, 1)
    x.swapaxes_(1, 0)
    np.testing.assert_array_equal(x.cpu().numpy(), np.arange(6.0).reshape(2, 3))
    x.as_strided_((3,), (2,))
    assert x.tolist() == [0.0, 2.0, 4.0]
    y = torch.zeros(4, 1, device=device)
    y.squeeze_(1)
    assert tuple(y.shape) == (4,)
    with pytest.raises(IndexError):
        y.unsqueeze_(5)
    if real_torch is not None:
        r = real_torch.arange(6.0).reshape(2, 3)
        r.unsqueeze_(0).squeeze_().t_()
        assert r.stride() == (1, 3)


def test_in_place_view_ops_and_autograd():
    a = torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        a.unsqueeze_(0)
    with pytest.raises(NotImplementedError, match="unsqueeze_"):
        (a * 2).unsqueeze_(0)
