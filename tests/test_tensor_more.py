"""The scatters and flat writes of _scatter_more.py (slice/select/diagonal/
as_strided_scatter, put/put_, fill_diagonal_, index_reduce) and the tensor
utilities of _tensor_more.py (H/mH/layout, the backend flags, dim_order,
new_empty_strided, the random fills, apply_/map_/map2_, asarray,
frombuffer): against NumPy, and against torch where it imports."""
import numpy as np
import pytest

import pycuda_sem as torch

from torch_oracle import _torch as real_torch  # torch where it imports, else None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
pytestmark = pytest.mark.usefixtures("no_tf32")  # float64 references (conftest.py)


def npy(t):
    return t.detach().cpu().numpy()


# ---- the *_scatter ops --------------------------------------------------------------------

def _scatter_cases(rng):
    a = rng.standard_normal((4, 5, 6))
    return a, [
        ("slice_scatter", dict(dim=1, start=1, end=5, step=2), lambda a: a[:, 1:5:2]),
        ("slice_scatter", dict(dim=-1), lambda a: a[:, :, :]),
        ("slice_scatter", dict(dim=2, start=-3), lambda a: a[:, :, -3:]),
        ("select_scatter", dict(dim=1, index=-2), lambda a: a[:, -2]),
        ("diagonal_scatter", dict(offset=1, dim1=1, dim2=2), lambda a: np.diagonal(a, 1, 1, 2)),
        ("diagonal_scatter", dict(offset=-2, dim1=2, dim2=0), lambda a: np.diagonal(a, -2, 2, 0)),
        ("as_strided_scatter", dict(size=(3, 2), stride=(7, 2), storage_offset=3),
         lambda a: np.lib.stride_tricks.as_strided(a.reshape(-1)[3:], (3, 2), (56, 16))),
    ]


@pytest.mark.parametrize("device", DEVICES)
def test_scatters_against_numpy(device):
    rng = np.random.default_rng(0)
    a, cases = _scatter_cases(rng)
    for name, kw, view in cases:
        src = rng.standard_normal(view(a).shape)
        # NumPy's views (some read-only) name the positions; write through them flat
        pos = view(np.arange(a.size).reshape(a.shape))
        ref = a.copy().reshape(-1)
        ref[pos] = src
        ref = ref.reshape(a.shape)
        x = torch.tensor(a, device=device)
        got = getattr(torch, name)(x, torch.tensor(src, device=device), **kw)
        np.testing.assert_array_equal(npy(got), ref)
        np.testing.assert_array_equal(npy(x), a)  # out of place
        np.testing.assert_array_equal(npy(getattr(x, name)(torch.tensor(src, device=device), **kw)), ref)
        if real_torch is not None:
            t = getattr(real_torch, name)(real_torch.tensor(a), real_torch.tensor(src), **kw)
            np.testing.assert_array_equal(npy(got), t.numpy())


def test_scatter_shapes_and_gradients():
    x = torch.arange(6.0).reshape(2, 3)
    with pytest.raises(RuntimeError, match="src size = \\[2\\], slice size = \\[3\\]"):
        torch.select_scatter(x, torch.ones(2), 0, 0)
    with pytest.raises(RuntimeError, match="slice of self"):
        torch.diagonal_scatter(x, torch.ones(3), 1)
    with pytest.raises(IndexError):
        torch.slice_scatter(x, torch.ones(2, 3), 5)
    # gradients: input gets the gradient outside the view, src inside it
    rng = np.random.default_rng(1)
    a, s = rng.standard_normal((3, 4)), rng.standard_normal(3)
    w = rng.standard_normal((3, 4))
    xa = torch.tensor(a, requires_grad=True)
    xs = torch.tensor(s, requires_grad=True)
    (torch.diagonal_scatter(xa, xs) * torch.tensor(w)).sum().backward()
    mask = np.eye(3, 4, dtype=bool)
    np.testing.assert_array_equal(npy(xa.grad), np.where(mask, 0.0, w))
    np.testing.assert_array_equal(npy(xs.grad), np.diagonal(w))
    xa = torch.tensor(a, requires_grad=True)
    xs = torch.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    (torch.slice_scatter(xa, xs, 1, 0, 4, 2) ** 2).sum().backward()
    g = 2 * a
    g[:, 0:4:2] = 0
    np.testing.assert_allclose(npy(xa.grad), g)
    np.testing.assert_allclose(npy(xs.grad), 2 * npy(xs))


# ---- put, fill_diagonal_, index_reduce ---------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_put(device):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((3, 4))
    idx = np.array([0, 5, -1, 7])
    src = rng.standard_normal(4)
    ref = a.copy().reshape(-1)
    ref[idx] = src
    x = torch.tensor(a, device=device)
    got = x.put(torch.tensor(idx, device=device), torch.tensor(src, device=device))
    np.testing.assert_array_equal(npy(got), ref.reshape(3, 4))
    np.testing.assert_array_equal(npy(x), a)
    # accumulate, with a repeated index, into a non-contiguous tensor in place
    y = torch.tensor(a.T.copy(), device=device).t()
    rep = np.array([1, 1, 2])
    acc = a.copy().reshape(-1)
    np.add.at(acc, rep, src[:3])
    assert y.put_(torch.tensor(rep, device=device), torch.tensor(src[:3], device=device), accumulate=True) is y
    np.testing.assert_allclose(npy(y), acc.reshape(3, 4), rtol=1e-12)
    with pytest.raises(IndexError, match="out of range"):
        x.put(torch.tensor([12], device=device), torch.tensor([1.0], dtype=torch.float64, device=device))
    with pytest.raises(RuntimeError, match="long tensor"):
        x.put(torch.tensor([1], dtype=torch.int32, device=device), torch.tensor([1.0], device=device))
    with pytest.raises(IndexError, match="same number"):
        x.put(torch.tensor([1, 2], device=device), torch.tensor([1.0], device=device))
    if real_torch is not None:
        t = real_torch.tensor(a).put(real_torch.tensor(idx), real_torch.tensor(src))
        np.testing.assert_array_equal(npy(got), t.numpy())


@pytest.mark.parametrize("device", DEVICES)
def test_fill_diagonal_(device):
    for shape, wrap in (((3, 4), False), ((7, 3), True), ((7, 3), False), ((4, 4, 4), False), ((2, 5), True)):
        x = torch.zeros(shape, device=device)
        assert x.fill_diagonal_(5.0, wrap=wrap) is x
        ref = np.zeros(shape)
        np.fill_diagonal(ref, 5.0, wrap=wrap)
        np.testing.assert_array_equal(npy(x), ref)
        if real_torch is not None:
            np.testing.assert_array_equal(npy(x), real_torch.zeros(shape).fill_diagonal_(5.0, wrap=wrap).numpy())
    with pytest.raises(RuntimeError, match="equal length"):
        torch.zeros(3, 4, 3).fill_diagonal_(1)
    with pytest.raises(RuntimeError, match="larger than 1"):
        torch.zeros(3).fill_diagonal_(1)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce(device, reduce, include_self):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((5, 3))
    src = rng.standard_normal((4, 3))
    idx = np.array([0, 4, 0, 2])
    ref = a.copy()
    fn = {"prod": np.prod, "mean": np.mean, "amax": np.max, "amin": np.min}[reduce]
    for row in set(idx.tolist()):
        parts = [src[idx == row]]
        if include_self:
            parts.insert(0, a[row:row + 1])
        ref[row] = fn(np.concatenate(parts), axis=0)
    x = torch.tensor(a, device=device)
    got = x.index_reduce(0, torch.tensor(idx, device=device), torch.tensor(src, device=device), reduce,
                         include_self=include_self)
    np.testing.assert_allclose(npy(got), ref, rtol=1e-12)
    assert x.index_reduce_(0, torch.tensor(idx, device=device), torch.tensor(src, device=device), reduce,
                           include_self=include_self) is x
    np.testing.assert_allclose(npy(x), ref, rtol=1e-12)
    if real_torch is not None:
        t = real_torch.tensor(a).index_reduce(0, real_torch.tensor(idx), real_torch.tensor(src), reduce,
                                              include_self=include_self)
        np.testing.assert_allclose(npy(got), t.numpy(), rtol=1e-12)


def test_index_reduce_errors():
    x = torch.zeros(3, 2)
    with pytest.raises(RuntimeError, match="prod, mean, amax or amin"):
        torch.index_reduce(x, 0, torch.tensor([0]), torch.ones(1, 2), "sum")
    with pytest.raises(RuntimeError):
        torch.index_reduce(x, 0, torch.tensor([0, 1]), torch.ones(1, 2), "amax")


# ---- properties and queries -----------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_H_mH_layout_flags(device):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((2, 3, 4))
    x = torch.tensor(a, device=device)
    np.testing.assert_array_equal(npy(x.mH), np.swapaxes(a, -1, -2))
    np.testing.assert_array_equal(npy(x[0].H), a[0].T)
    assert x[0, 0, 0].H.shape == ()
    with pytest.raises(RuntimeError, match="consider using tensor.mH"):
        x.H
    with pytest.raises(RuntimeError, match="matrices or batches"):
        x[0, 0].mH
    c = torch.tensor(a[0] + 1j * a[0][::-1], device=device)
    np.testing.assert_array_equal(npy(c.H), npy(c).conj().T)
    # mH of a real tensor is a view, and differentiable
    v = x.mH
    assert v.data_ptr() == x.data_ptr()
    g = torch.tensor(a, requires_grad=True)
    (g.mH * torch.tensor(np.swapaxes(a, -1, -2))).sum().backward()
    np.testing.assert_array_equal(npy(g.grad), a)
    assert x.layout is torch.strided and str(x.layout) == "torch.strided"
    for flag in ("is_xpu", "is_mps", "is_ipu", "is_mtia", "is_maia", "is_vulkan", "is_xla", "is_mkldnn",
                 "is_nested", "is_sparse_csr"):
        assert getattr(x, flag) is False
    assert x.to_dense() is x and x.to_dense(torch.float32).dtype == torch.float32
    assert x.is_inference() is False and torch.is_inference(x) is False
    assert x.const_data_ptr() == x.data_ptr()
    assert x.dim_order() == (0, 1, 2) and x.permute(2, 0, 1).dim_order() == (1, 2, 0)
    e = x.new_empty_strided((2, 3), (1, 2))
    assert e.stride() == (1, 2) and e.dtype == x.dtype and e.device == x.device
    if real_torch is not None:
        t = real_torch.tensor(a)
        assert t.permute(2, 0, 1).dim_order() == x.permute(2, 0, 1).dim_order()


def test_method_forms_of_functions():
    rng = np.random.default_rng(5)
    a = rng.standard_normal(20)
    x = torch.tensor(a)
    np.testing.assert_array_equal(npy(x.prelu(torch.tensor([0.25], dtype=torch.float64))),
                                  np.where(a > 0, a, 0.25 * a))
    np.testing.assert_array_equal(npy(x.hardshrink(0.5)), np.where(np.abs(a) > 0.5, a, 0.0))
    h = x.histogram(4)
    rh, re = np.histogram(a, 4)
    np.testing.assert_array_equal(npy(h.hist), rh)
    np.testing.assert_allclose(npy(h.bin_edges), re, rtol=1e-12)
    sig = torch.tensor(rng.standard_normal(64))
    s = sig.stft(16, hop_length=4, window=torch.hann_window(16, dtype=torch.float64), return_complex=True)
    back = s.istft(16, hop_length=4, window=torch.hann_window(16, dtype=torch.float64), length=64)
    np.testing.assert_allclose(npy(back), npy(sig), atol=1e-10)
    assert [p.shape[0] for p in x.unsafe_chunk(4)] == [5, 5, 5, 5]
    assert [p.shape[0] for p in torch.unsafe_split(x, 6)] == [6, 6, 6, 2]
    parts = torch.unsafe_split_with_sizes(x, [5, 15])
    np.testing.assert_array_equal(npy(parts[1]), a[5:])


# ---- random fills -------------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_random_fills(device):
    n = 20000
    g = torch.Generator(device=device) if device == "cpu" else None
    x = torch.empty(n, dtype=torch.float64, device=device)
    torch.manual_seed(0)
    x.log_normal_(0.5, 0.25)
    lx = np.log(npy(x))
    assert abs(lx.mean() - 0.5) < 0.01 and abs(lx.std() - 0.25) < 0.01
    x.cauchy_(1.0, 2.0)
    med = np.median(npy(x))
    assert abs(med - 1.0) < 0.1
    q1, q3 = np.percentile(npy(x), [25, 75])
    assert abs((q3 - q1) / 2 - 2.0) < 0.15  # the Cauchy's semi-interquartile range is sigma
    y = torch.empty(n, device=device).geometric_(0.3)
    v = npy(y)
    assert v.min() >= 1 and np.all(v == np.round(v))
    assert abs(v.mean() - 1 / 0.3) < 0.1
    with pytest.raises(RuntimeError, match="in \\(0, 1\\)"):
        y.geometric_(1.5)
    with pytest.raises(RuntimeError, match="floating point"):
        torch.zeros(3, dtype=torch.int64, device=device).cauchy_()
    if g is not None:  # the same generator state gives the same draws
        g.manual_seed(3)
        a = npy(torch.empty(5).log_normal_(generator=g))
        g.manual_seed(3)
        b = npy(torch.empty(5).log_normal_(generator=g))
        np.testing.assert_array_equal(a, b)


# ---- Python callables -------------------------------------------------------------------------

def test_apply_map_map2():
    x = torch.arange(6.0).reshape(2, 3)
    assert x.apply_(lambda v: v * v + 1) is x
    assert x.tolist() == [[1.0, 2.0, 5.0], [10.0, 17.0, 26.0]]
    i = torch.ones(3, dtype=torch.int64)
    assert i.apply_(lambda v: v * 2.7).tolist() == [2, 2, 2]
    y = torch.ones(2, 3)
    y.map_(torch.tensor([1.0, 2.0, 3.0]), lambda a, b: a + b)  # broadcast
    assert y.tolist() == [[2.0, 3.0, 4.0], [2.0, 3.0, 4.0]]
    z = torch.ones(3).map2_(torch.arange(3.0), torch.full((3,), 2.0), lambda a, b, c: a + b * c)
    assert z.tolist() == [1.0, 3.0, 5.0]
    with pytest.raises(RuntimeError, match="requires grad"):
        torch.ones(2, requires_grad=True).apply_(abs)


@pytest.mark.cuda
def test_apply_refuses_cuda():
    with pytest.raises(TypeError, match="CPU"):
        torch.ones(2, device="cuda").apply_(abs)


# ---- asarray, frombuffer -------------------------------------------------------------------

def test_asarray():
    a = np.arange(4.0)
    t = torch.asarray(a)
    t[0] = 9
    assert a[0] == 9  # shared
    c = torch.asarray(a, copy=True)
    c[1] = -1
    assert a[1] == 1
    assert torch.asarray(a, dtype=torch.float32).dtype == torch.float32
    with pytest.raises(ValueError):
        torch.asarray(a, dtype=torch.float32, copy=False)
    x = torch.ones(3)
    assert torch.asarray(x) is x and torch.asarray(x, copy=True) is not x
    assert torch.asarray(x, dtype=torch.float64).dtype == torch.float64
    assert torch.asarray([1, 2]).dtype == torch.int64 and torch.asarray(3.5).shape == ()
    with pytest.raises(ValueError, match="alias"):
        torch.asarray([1.0, 2.0], copy=False)
    r = torch.asarray([[1.0, 2.0]], requires_grad=True)
    assert r.requires_grad and r.shape == (1, 2)
    if real_torch is not None:
        assert str(real_torch.asarray([1, 2]).dtype).split(".")[-1] == str(torch.asarray([1, 2]).dtype).split(".")[-1]


def test_frombuffer():
    buf = bytearray(np.arange(6, dtype=np.int32).tobytes())
    t = torch.frombuffer(buf, dtype=torch.int32)
    assert t.tolist() == [0, 1, 2, 3, 4, 5]
    t[0] = 42
    assert np.frombuffer(buf, dtype=np.int32)[0] == 42  # shared
    assert torch.frombuffer(buf, dtype=torch.int32, count=2, offset=8).tolist() == [2, 3]
    assert torch.frombuffer(buf, dtype=torch.int16).shape == (12,)
    h = torch.frombuffer(bytearray(np.array([1.5, -2.0], dtype=np.float16).tobytes()), dtype=torch.float16)
    assert h.tolist() == [1.5, -2.0]
    with pytest.warns(UserWarning):
        assert torch.frombuffer(b"abcd", dtype=torch.uint8).tolist() == [97, 98, 99, 100]
    with pytest.raises(ValueError):
        torch.frombuffer(buf, dtype=torch.int32, count=7)
    with pytest.raises(ValueError):
        torch.frombuffer(bytearray(6), dtype=torch.int32)
    with pytest.raises(ValueError):
        torch.frombuffer(bytearray(0), dtype=torch.int32)
    with pytest.raises(TypeError):
        torch.frombuffer([1, 2], dtype=torch.int32)
