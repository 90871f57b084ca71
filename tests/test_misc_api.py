"""The torch-level functions of pycuda_sem/_misc_api.py, torch.cpu and the
amp decorators: against NumPy float64 references (numpy.gradient,
numpy.histogramdd, hand-written loops) and, where it imports, real torch."""
import warnings

import numpy as np
import pytest

import pycuda_sem as torch
from torch_oracle import _torch as real_torch

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]


def _t(a, device, dtype=None):
    return torch.tensor(a, device=device, dtype=dtype)


# ---- device modules --------------------------------------------------------------------------

def test_cpu_module_and_get_device_module():
    assert torch.cpu.is_available() and torch.cpu.is_initialized()
    assert torch.cpu.device_count() == 1 and torch.cpu.current_device() == "cpu"
    assert torch.cpu.synchronize() is None and torch.cpu.set_device("cpu") is None
    s = torch.cpu.Stream()
    assert torch.cpu.current_stream() is not s
    with torch.cpu.stream(s):
        assert torch.cpu.current_stream() is s
    assert torch.cpu.current_stream() is not s
    assert torch.cpu.Event().query()
    assert torch.get_device_module("cpu") is torch.cpu
    assert torch.get_device_module(torch.device("cuda:0")) is torch.cuda
    assert torch.get_device_module("cuda") is torch.cuda
    expected = torch.cuda if torch.cuda.is_available() else torch.cpu
    assert torch.get_device_module() is expected
    with pytest.raises(RuntimeError, match="Invalid value of device"):
        torch.get_device_module(3)
    with pytest.raises(RuntimeError):
        torch.get_device_module("foo")
    x = torch.ones(2)
    getattr(torch, x.device.type).synchronize()
    assert not torch.is_distributed(x)


# ---- gradient --------------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_uniform(device, edge_order):
    f = np.random.default_rng(0).standard_normal((5, 6, 4))
    got = torch.gradient(_t(f, device), spacing=0.7, edge_order=edge_order)
    want = np.gradient(f, 0.7, edge_order=edge_order)
    assert isinstance(got, tuple) and len(got) == 3
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.cpu().numpy(), w, rtol=1e-12, atol=1e-12)
    got = torch.gradient(_t(f, device), spacing=[2.0, 0.5], dim=(0, -1), edge_order=edge_order)
    want = np.gradient(f, 2.0, 0.5, axis=(0, 2), edge_order=edge_order)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.cpu().numpy(), w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_coordinates(device, edge_order):
    rng = np.random.default_rng(1)
    f = rng.standard_normal((7, 3))
    x = np.cumsum(rng.uniform(0.2, 1.5, 7))
    (got,) = torch.gradient(_t(f, device), spacing=(_t(x, device),), dim=0,
                            edge_order=edge_order)
    want = np.gradient(f, x, axis=0, edge_order=edge_order)
    np.testing.assert_allclose(got.cpu().numpy(), want, rtol=1e-11, atol=1e-11)
    if real_torch is not None:
        (r,) = real_torch.gradient(real_torch.tensor(f), spacing=(real_torch.tensor(x),), dim=0,
                                   edge_order=edge_order)
        np.testing.assert_allclose(got.cpu().numpy(), r.numpy(), rtol=1e-11, atol=1e-11)


def test_gradient_ints_and_errors():
    (g,) = torch.gradient(torch.tensor([1, 2, 4]))
    assert g.dtype == torch.float32
    np.testing.assert_allclose(g.numpy(), np.gradient(np.array([1.0, 2, 4])))
    with pytest.raises(RuntimeError, match="at least edge_order"):
        torch.gradient(torch.tensor([1.0, 2.0]), edge_order=2)
    with pytest.raises(RuntimeError, match="edge_order=1 and edge_order=2"):
        torch.gradient(torch.ones(4), edge_order=3)
    with pytest.raises(RuntimeError, match="same length"):
        torch.gradient(torch.ones(4, 4), spacing=[1.0])


# ---- histogramdd -----------------------------------------------------------------------------

def test_histogramdd_against_numpy():
    rng = np.random.default_rng(2)
    pts = rng.standard_normal((200, 3))
    w = rng.uniform(0, 2, 200)
    h, edges = torch.histogramdd(torch.tensor(pts), bins=[3, 4, 5], weight=torch.tensor(w))
    wh, wedges = np.histogramdd(pts, bins=[3, 4, 5], weights=w)
    np.testing.assert_allclose(h.numpy(), wh, rtol=1e-12)
    for e, we in zip(edges, wedges):
        np.testing.assert_allclose(e.numpy(), we, rtol=1e-12)
    h, _ = torch.histogramdd(torch.tensor(pts[:, :2]), bins=4, range=[-1.0, 1.0, -2.0, 2.0],
                             density=True)
    wh, _ = np.histogramdd(pts[:, :2], bins=4, range=[(-1, 1), (-2, 2)], density=True)
    np.testing.assert_allclose(h.numpy(), wh, rtol=1e-12)
    res = torch.histogramdd(torch.tensor([[0.0, 1.0], [1.0, 0.0]]),
                            bins=[torch.tensor([0.0, 0.5, 1.0]), torch.tensor([0.0, 1.0])])
    assert res.hist.tolist() == [[1.0], [1.0]]
    with pytest.raises(RuntimeError):
        torch.histogramdd(torch.ones(3), bins=2)


# ---- complex, adjoint, norms, nonzero_static ---------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_complex_and_polar(device):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal(5), rng.standard_normal(5)
    c = torch.complex(_t(a, device), _t(b, device))
    assert c.dtype == torch.complex128
    np.testing.assert_array_equal(c.cpu().numpy(), a + 1j * b)
    c32 = torch.complex(_t(a, device, torch.float32), _t(b, device, torch.float32))
    assert c32.dtype == torch.complex64
    p = torch.polar(_t(np.abs(a), device), _t(b, device))
    np.testing.assert_allclose(p.cpu().numpy(), np.abs(a) * np.exp(1j * b), rtol=1e-13)
    with pytest.raises(RuntimeError, match="Expected object of scalar type Double"):
        torch.complex(_t(a, device), _t(b, device, torch.float32))
    with pytest.raises(NotImplementedError, match="Long and Long"):
        torch.complex(torch.ones(2, dtype=torch.int64), torch.ones(2, dtype=torch.int64))


@pytest.mark.parametrize("device", DEVICES)
def test_adjoint_and_chalf(device):
    m = np.random.default_rng(4).standard_normal((2, 3, 4))
    t = _t(m, device)
    np.testing.assert_array_equal(t.adjoint().cpu().numpy(), m.transpose(0, 2, 1))
    np.testing.assert_array_equal(torch.adjoint(t).cpu().numpy(), m.transpose(0, 2, 1))
    assert t.adjoint().data_ptr() == t.data_ptr()        # a view for real dtypes
    z = torch.complex(t, t * 2)
    np.testing.assert_array_equal(z.adjoint().cpu().numpy(), (m - 2j * m).transpose(0, 2, 1))
    with pytest.raises(RuntimeError, match="only supported on matrices"):
        torch.ones(3).adjoint()
    with pytest.raises(NotImplementedError, match="complex32"):
        t.chalf()


@pytest.mark.parametrize("device", DEVICES)
def test_deprecated_norms(device):
    m = np.random.default_rng(5).standard_normal((3, 4, 5))
    t = _t(m, device)
    np.testing.assert_allclose(torch.frobenius_norm(t, dim=(1, 2)).cpu().numpy(),
                               np.sqrt((m ** 2).sum(axis=(1, 2))), rtol=1e-12)
    np.testing.assert_allclose(torch.frobenius_norm(t, (1,), True).cpu().numpy(),
                               np.sqrt((m ** 2).sum(axis=1, keepdims=True)), rtol=1e-12)
    np.testing.assert_allclose(torch.nuclear_norm(t[0]).cpu().numpy(),
                               np.linalg.norm(m[0], "nuc"), rtol=1e-10)
    np.testing.assert_allclose(torch.nuclear_norm(t, dim=(1, 2)).cpu().numpy(),
                               [np.linalg.norm(x, "nuc") for x in m], rtol=1e-10)
    v = m[0]
    got = torch.norm_except_dim(t[0], 3, 1)
    assert got.shape == (1, 5)
    np.testing.assert_allclose(got.cpu().numpy(),
                               (np.abs(v) ** 3).sum(0, keepdims=True) ** (1 / 3), rtol=1e-12)
    assert torch.norm_except_dim(t[0], 2, 0).shape == (4, 1)
    np.testing.assert_allclose(torch.norm_except_dim(t[0], 2, -1).cpu().numpy(),
                               np.linalg.norm(v), rtol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_nonzero_static(device):
    a = np.array([[0, 1, 0], [2, 0, 3]])
    t = _t(a, device)
    want = np.argwhere(a)
    np.testing.assert_array_equal(torch.nonzero_static(t, size=2).cpu().numpy(), want[:2])
    got = t.nonzero_static(size=5, fill_value=-7).cpu().numpy()
    np.testing.assert_array_equal(got[:3], want)
    assert (got[3:] == -7).all() and got.shape == (5, 2)
    assert torch.nonzero_static(t, size=0).shape == (0, 2)
    with pytest.raises(RuntimeError, match="non-negative"):
        torch.nonzero_static(t, size=-1)


@pytest.mark.parametrize("device", DEVICES)
def test_inplace_aliases(device):
    x = np.random.default_rng(6).uniform(-0.9, 0.9, 6)
    import math
    for name, ref in [("erf_", np.vectorize(math.erf)), ("erfc_", np.vectorize(math.erfc)),
                      ("arccos_", np.arccos), ("arcsin_", np.arcsin), ("arctan_", np.arctan),
                      ("fix_", np.trunc)]:
        t = _t(x, device)
        r = getattr(torch, name)(t)
        assert r is t
        np.testing.assert_allclose(t.cpu().numpy(), ref(x), rtol=1e-12, atol=1e-15)


# ---- aten spellings of layers ------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_pools_with_indices(device):
    x = np.random.default_rng(7).standard_normal((2, 3, 10))
    out, idx = torch.adaptive_max_pool1d(_t(x, device), 3)
    bounds = [(0, 4), (3, 7), (6, 10)]      # adaptive windows of 10 -> 3
    want = np.stack([x[..., a:b].max(-1) for a, b in bounds], -1)
    wanti = np.stack([x[..., a:b].argmax(-1) + a for a, b in bounds], -1)
    np.testing.assert_array_equal(out.cpu().numpy(), want)
    np.testing.assert_array_equal(idx.cpu().numpy(), wanti)
    out, idx = torch.max_pool1d_with_indices(_t(x, device), 3)
    w = x[..., :9].reshape(2, 3, 3, 3)
    np.testing.assert_array_equal(out.cpu().numpy(), w.max(-1))
    np.testing.assert_array_equal(idx.cpu().numpy(), w.argmax(-1) + np.arange(0, 9, 3))
    out, idx = torch.max_pool1d_with_indices(_t(x, device), 3, 2, 1)
    if real_torch is not None and device == "cpu":
        ro, ri = real_torch.max_pool1d_with_indices(real_torch.tensor(x), 3, 2, 1)
        np.testing.assert_array_equal(out.numpy(), ro.numpy())
        np.testing.assert_array_equal(idx.numpy(), ri.numpy())


@pytest.mark.parametrize("device", DEVICES)
def test_dropouts_aten_order(device):
    x = _t(np.random.default_rng(8).uniform(1, 2, (8, 16, 5)), device)
    torch.manual_seed(0)
    y = torch.feature_dropout(x, 0.5, True)
    ratio = (y / x).cpu().numpy()
    # whole channels: constant along the last dim, either 0 or 1 / (1 - p)
    assert np.allclose(ratio, ratio[..., :1])
    assert set(np.unique(np.round(ratio, 12))) <= {0.0, 2.0}
    assert 0.2 < (ratio[..., 0] == 0).mean() < 0.8
    assert torch.feature_dropout(x, 0.5, False) is x
    z = x.clone()
    assert torch.feature_dropout_(z, 0.5, True) is z
    a = torch.alpha_dropout(x, 0.3, True)
    assert a.shape == x.shape and not torch.equal(a, x)
    assert torch.equal(torch.alpha_dropout(x, 0.3, False), x)
    fa = torch.feature_alpha_dropout(x, 0.3, True)
    fr = fa.cpu().numpy()
    dropped = np.isclose(fr, fr[..., :1]).all(-1)          # dropped channels are constant
    assert dropped.any()
    w = x.clone()
    assert torch.alpha_dropout_(w, 0.3, True) is w and not torch.equal(w, x)
    w = x.clone()
    assert torch.feature_alpha_dropout_(w, 0.3, True) is w
    with pytest.raises(ValueError):
        torch.feature_dropout(x, 1.5, True)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", [0, 1, 2])
def test_embedding_bag_tuple(device, mode):
    rng = np.random.default_rng(9)
    W = rng.standard_normal((6, 3))
    idx = np.array([0, 2, 2, 5, 1, 3, 4])
    offs = np.array([0, 2, 5])
    out, o2b, bag_size, maxi = torch.embedding_bag(_t(W, device), _t(idx, device),
                                                   _t(offs, device), False, mode)
    bags = [idx[0:2], idx[2:5], idx[5:7]]
    red = [np.sum, np.mean, np.max][mode]
    np.testing.assert_allclose(out.cpu().numpy(), np.stack([red(W[b], axis=0) for b in bags]),
                               rtol=1e-12)
    if mode == 0:
        assert o2b.tolist() == [0, 0, 1, 1, 1, 2, 2] and bag_size.tolist() == [0, 0, 0]
        f32 = torch.embedding_bag(_t(W, device, torch.float32), _t(idx, device),
                                  _t(offs, device), False, 0)
        assert f32[1].numel() == 0      # torch's CPU float32 fast path
    else:
        assert o2b.tolist() == [0, 0, 1, 1, 1, 2, 2]
        assert bag_size.tolist() == [2, 3, 2]
    if mode == 2:
        want = np.stack([b[W[b].argmax(0)] for b in bags])
        np.testing.assert_array_equal(maxi.cpu().numpy(), want)
    if real_torch is not None and device == "cpu":
        r = real_torch.embedding_bag(real_torch.tensor(W), real_torch.tensor(idx),
                                     real_torch.tensor(offs), False, mode)
        for mine, theirs in zip((out, o2b, bag_size, maxi), r):
            np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-12)


# ---- autocast state and amp decorators ---------------------------------------------------------

def test_autocast_state_functions():
    assert torch.get_autocast_gpu_dtype() == torch.float16
    assert torch.get_autocast_cpu_dtype() == torch.bfloat16
    assert not torch.is_autocast_cpu_enabled()
    with torch.autocast("cpu"):
        assert torch.is_autocast_cpu_enabled()
    torch.set_autocast_enabled("cpu", True)
    try:
        assert torch.is_autocast_enabled("cpu") and torch.is_autocast_cpu_enabled()
        lin = torch.nn.Linear(4, 3)
        assert lin(torch.ones(2, 4)).dtype == torch.bfloat16   # the setter turns casting on
    finally:
        torch.set_autocast_enabled("cpu", False)
    assert not torch.is_autocast_cpu_enabled()
    assert torch.nn.Linear(4, 3)(torch.ones(2, 4)).dtype == torch.float32
    torch.set_autocast_cpu_dtype(torch.float16)
    try:
        assert torch.get_autocast_cpu_dtype() == torch.float16
    finally:
        torch.set_autocast_dtype("cpu", torch.bfloat16)
    assert torch.is_autocast_cache_enabled()
    torch.set_autocast_cache_enabled(False)
    assert not torch.is_autocast_cache_enabled()
    torch.set_autocast_cache_enabled(True)
    torch.clear_autocast_cache()


def test_custom_fwd_bwd_record_and_restore():
    seen = {}

    class Scale(torch.autograd.Function):
        @staticmethod
        @torch.amp.custom_fwd(device_type="cpu", cast_inputs=torch.float32)
        def forward(ctx, x):
            seen["fwd_dtype"] = x.dtype
            seen["fwd_on"] = torch.is_autocast_enabled("cpu")
            return x * 2

        @staticmethod
        @torch.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            seen["bwd_on"] = torch.is_autocast_enabled("cpu")
            return g * 2

    x = torch.ones(3, dtype=torch.bfloat16, requires_grad=True)
    with torch.autocast("cpu"):
        y = Scale.apply(x)
    assert seen["fwd_dtype"] == torch.float32 and seen["fwd_on"] is False
    y.sum().backward()
    assert seen["bwd_on"] is False
    assert x.grad.tolist() == [2.0, 2.0, 2.0]

    class Plain(torch.autograd.Function):
        @staticmethod
        @torch.amp.custom_fwd(device_type="cpu")
        def forward(ctx, x):
            seen["plain_fwd_on"] = torch.is_autocast_enabled("cpu")
            return x * 3

        @staticmethod
        @torch.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            seen["plain_bwd_on"] = torch.is_autocast_enabled("cpu")
            return g * 3

    x = torch.ones(2, requires_grad=True)
    with torch.autocast("cpu"):
        y = Plain.apply(x)
    y.sum().backward()                       # outside autocast: backward restores it
    assert seen["plain_fwd_on"] is True and seen["plain_bwd_on"] is True
    with pytest.raises(ValueError):
        torch.amp.custom_fwd(device_type=3)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        dec = torch.cuda.amp.custom_fwd(cast_inputs=torch.float16)
        torch.cuda.amp.custom_bwd(lambda ctx, g: g)
    assert callable(dec) and any(issubclass(i.category, FutureWarning) for i in w)


def test_return_types_pickle_and_answer_isinstance():
    import pickle
    x = torch.randn(3, 4)
    a = torch.randn(3, 3, dtype=torch.float64)
    results = {"max": torch.max(x, 0), "sort": torch.sort(x), "kthvalue": torch.kthvalue(x, 2),
               "aminmax": x.aminmax(), "linalg_slogdet": torch.linalg.slogdet(a),
               "linalg_eigh": torch.linalg.eigh(a @ a.T), "linalg_svd": torch.linalg.svd(a),
               "svd": torch.svd(a), "frexp": torch.frexp(x), "linalg_qr": torch.linalg.qr(a)}
    for name, r in results.items():
        cls = getattr(torch.return_types, name)
        assert type(r) is cls and type(r).__module__ == "pycuda_sem.return_types"
        back = pickle.loads(pickle.dumps(r))
        assert type(back) is cls and len(back) == len(r)
        for u, v in zip(back, r):
            assert u.dtype == v.dtype and u.tolist() == v.tolist()
    assert torch.linalg.svd(a)._fields == ("U", "S", "Vh") and torch.svd(a)._fields == ("U", "S", "V")


def test_top_level_grad_scaler_is_the_amp_one():
    assert torch.GradScaler is torch.amp.GradScaler


def test_nn_modules_utils_helpers():
    from collections import OrderedDict
    from pycuda_sem.nn.modules.utils import (_list_with_default, _pair, _quadruple, _reverse_repeat_tuple,
                                             _single, _triple, consume_prefix_in_state_dict_if_present)
    assert (_single(2), _pair(3), _triple([1, 2, 3]), _quadruple(0)) == ((2,), (3, 3), (1, 2, 3), (0, 0, 0, 0))
    assert _reverse_repeat_tuple((1, 2), 2) == (2, 2, 1, 1)
    assert _list_with_default([None, 4], [8, 6, 5]) == [6, 4]
    with pytest.raises(ValueError, match="Input dimension should be at least 3"):
        _list_with_default([None, 4], [8, 6])
    sd = OrderedDict([("module.w", 1), ("module.sub.b", 2), ("other", 3)])
    sd._metadata = OrderedDict([("", {}), ("module", {"v": 1}), ("module.sub", {"v": 1})])
    consume_prefix_in_state_dict_if_present(sd, "module.")
    assert set(sd) == {"w", "sub.b", "other"} and set(sd._metadata) == {"", "sub"}
    if real_torch is not None:
        import torch.nn.modules.utils as theirs
        sd2 = OrderedDict([("module.w", 1), ("module.sub.b", 2), ("other", 3)])
        sd2._metadata = OrderedDict([("", {}), ("module", {"v": 1}), ("module.sub", {"v": 1})])
        theirs.consume_prefix_in_state_dict_if_present(sd2, "module.")
        assert list(sd2) == list(sd) and list(sd2._metadata) == list(sd._metadata)


def test_future_overwrite_module_params_on_conversion():
    import pycuda_sem.__future__ as future
    m = torch.nn.Linear(3, 2)
    w0 = m.weight
    m.weight.grad = torch.ones(2, 3)
    assert not future.get_overwrite_module_params_on_conversion()
    future.set_overwrite_module_params_on_conversion(True)
    try:
        m.double()
        # new Parameter objects; the old one (an optimizer's, say) is left as it was
        assert m.weight is not w0 and isinstance(m.weight, torch.nn.Parameter)
        assert m.weight.dtype == torch.float64 and m.weight.requires_grad
        assert m.weight.grad.dtype == torch.float64 and w0.dtype == torch.float32
    finally:
        future.set_overwrite_module_params_on_conversion(False)
    w1 = m.weight
    m.float()
    assert m.weight is w1 and m.weight.dtype == torch.float32  # the default: in place
    assert future.get_swap_module_params_on_conversion() is False
    future.set_swap_module_params_on_conversion(False)
    with pytest.raises(NotImplementedError, match="set_swap_module_params_on_conversion"):
        future.set_swap_module_params_on_conversion(True)
