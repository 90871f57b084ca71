"""torch.cond / while_loop, the native_* normalisations and dropout,
convolution / grid_sampler / affine_grid_generator / embedding_renorm_,
torch.func's functionalize / linearize / replace_all_batch_norm_modules_,
torch.cuda's submodule names and nn.NLLLoss2d: values against float64 NumPy
formulas on random inputs, statistic shapes and results against torch where
it is installed."""
import warnings

import numpy as np
import pytest

import pycuda_sem as torch
import pycuda_sem.nn.functional as F

from torch_oracle import _torch as real_torch  # torch where it imports, else None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
pytestmark = pytest.mark.usefixtures("no_tf32")
_rng = np.random.default_rng(11)


def npy(t):
    return t.detach().cpu().double().numpy()


def T(a, device="cpu", requires_grad=False):
    return torch.tensor(np.asarray(a, dtype=np.float64), dtype=torch.float64, device=device,
                        requires_grad=requires_grad)


def R(a, requires_grad=False):
    return real_torch.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


# ---- cond / while_loop --------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("pred", [True, False])
def test_cond_takes_one_branch_and_differentiates_it(device, pred):
    a = _rng.standard_normal(4)
    x = T(a, device, requires_grad=True)
    p = torch.tensor(pred, device=device)
    out = torch.cond(p, lambda v: (v * v).sum(), lambda v: v.sin().sum(), (x,))
    out.backward()
    if pred:
        np.testing.assert_allclose(npy(out), (a * a).sum(), rtol=1e-12)
        np.testing.assert_allclose(npy(x.grad), 2 * a, rtol=1e-12)
    else:
        np.testing.assert_allclose(npy(out), np.sin(a).sum(), rtol=1e-12)
        np.testing.assert_allclose(npy(x.grad), np.cos(a), rtol=1e-12)


def test_cond_forms_and_errors():
    x = T([1.0, 2.0])
    assert npy(torch.cond(False, lambda v: v + 1, lambda v: v - 1, [x])).tolist() == [0.0, 1.0]
    assert npy(torch.cond(torch.tensor([True]), lambda: x * 2, lambda: x)).tolist() == [2.0, 4.0]
    two = torch.cond(True, lambda v: (v, v + 1), lambda v: (v, v - 1), (x,))
    assert isinstance(two, tuple) and npy(two[1]).tolist() == [2.0, 3.0]
    with pytest.raises(RuntimeError, match="Expected pred to be bool or single-element tensor"):
        torch.cond(torch.tensor([True, False]), lambda v: v, lambda v: v, (x,))
    if real_torch is not None:
        with pytest.raises(RuntimeError, match="Expected pred to be bool or single-element tensor"):
            real_torch.cond(real_torch.tensor([True, False]), lambda v: v, lambda v: v, (R([1.0, 2.0]),))


@pytest.mark.parametrize("device", DEVICES)
def test_while_loop(device):
    a = _rng.standard_normal(3)
    i, s = torch.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s * 2),
                            (torch.tensor(0, device=device), T(a, device)))
    assert int(i) == 4
    np.testing.assert_allclose(npy(s), a * 16, rtol=1e-12)
    x = T(a, device, requires_grad=True)
    _, y = torch.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * v.cos()),
                            (torch.tensor(0, device=device), x))
    y.sum().backward()
    v, g = a.copy(), np.ones(3)
    for _ in range(3):                      # chain rule through each iteration
        g = g * (np.cos(v) - v * np.sin(v))
        v = v * np.cos(v)
    np.testing.assert_allclose(npy(y), v, rtol=1e-12)
    np.testing.assert_allclose(npy(x.grad), g, rtol=1e-10)
    with pytest.raises(RuntimeError, match="same number of outputs"):
        torch.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1,), (torch.tensor(0), x))


def test_fork_wait_are_jit_aliases():
    assert torch.fork is torch.jit.fork and torch.wait is torch.jit.wait
    assert torch.wait(torch.fork(lambda a, b: a * b, 6, 7)) == 42


# ---- native_* normalisations -------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_native_layer_norm(device):
    a = _rng.standard_normal((2, 3, 4, 5)) * 2 + 1
    w, b = _rng.standard_normal((4, 5)), _rng.standard_normal((4, 5))
    x = T(a, device, requires_grad=True)
    out, mean, rstd = torch.native_layer_norm(x, [4, 5], T(w, device), T(b, device), 1e-5)
    m = a.mean((2, 3), keepdims=True)
    r = 1 / np.sqrt(a.var((2, 3), keepdims=True) + 1e-5)
    assert tuple(mean.shape) == (2, 3, 1, 1) and tuple(rstd.shape) == (2, 3, 1, 1)
    np.testing.assert_allclose(npy(mean), m, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(npy(rstd), r, rtol=1e-10)
    np.testing.assert_allclose(npy(out), (a - m) * r * w + b, rtol=1e-10, atol=1e-12)
    out.sum().backward()                    # the output is differentiable
    assert x.grad is not None and not mean.requires_grad
    if real_torch is not None:
        ro, rm, rr = real_torch.native_layer_norm(R(a), [4, 5], R(w), R(b), 1e-5)
        assert tuple(rm.shape) == tuple(mean.shape)
        np.testing.assert_allclose(npy(out), ro.numpy(), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(npy(rstd), rr.numpy(), rtol=1e-10)


@pytest.mark.parametrize("device", DEVICES)
def test_native_batch_norm_training_and_eval(device):
    a = _rng.standard_normal((4, 3, 5)) * 3 + 2
    w, b = _rng.standard_normal(3), _rng.standard_normal(3)
    rm0, rv0 = _rng.standard_normal(3), _rng.random(3) + 0.5
    rm, rv = T(rm0, device), T(rv0, device)
    out, sm, si = torch.native_batch_norm(T(a, device), T(w, device), T(b, device), rm, rv, True, 0.1, 1e-5)
    mean = a.mean((0, 2))
    var = a.var((0, 2))
    assert tuple(sm.shape) == (3,) and tuple(si.shape) == (3,)
    np.testing.assert_allclose(npy(sm), mean, rtol=1e-12)
    np.testing.assert_allclose(npy(si), 1 / np.sqrt(var + 1e-5), rtol=1e-10)
    ref = (a - mean[:, None]) / np.sqrt(var[:, None] + 1e-5) * w[:, None] + b[:, None]
    np.testing.assert_allclose(npy(out), ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(npy(rm), 0.9 * rm0 + 0.1 * mean, rtol=1e-12)
    np.testing.assert_allclose(npy(rv), 0.9 * rv0 + 0.1 * a.var((0, 2), ddof=1), rtol=1e-12)
    out, sm, si = torch.native_batch_norm(T(a, device), None, None, rm, rv, False, 0.1, 1e-5)
    assert tuple(sm.shape) == (0,) and tuple(si.shape) == (0,)
    np.testing.assert_allclose(npy(out), (a - npy(rm)[:, None]) / np.sqrt(npy(rv)[:, None] + 1e-5), rtol=1e-10)
    with pytest.raises(ValueError, match="running_mean must be defined in evaluation mode"):
        torch.native_batch_norm(T(a, device), None, None, None, None, False, 0.1, 1e-5)
    if real_torch is not None:
        _, rsm, _ = real_torch.native_batch_norm(R(a), None, None, R(rm0), R(rv0), True, 0.1, 1e-5)
        _, esm, _ = real_torch.native_batch_norm(R(a), None, None, R(rm0), R(rv0), False, 0.1, 1e-5)
        assert tuple(rsm.shape) == (3,) and tuple(esm.shape) == (0,)


@pytest.mark.parametrize("device", DEVICES)
def test_native_group_norm(device):
    a = _rng.standard_normal((2, 6, 4)) + 0.3
    w, b = _rng.standard_normal(6), _rng.standard_normal(6)
    out, mean, rstd = torch.native_group_norm(T(a, device), T(w, device), T(b, device), 2, 6, 4, 3, 1e-5)
    g = a.reshape(2, 3, -1)
    m, v = g.mean(-1), g.var(-1)
    assert tuple(mean.shape) == (2, 3) and tuple(rstd.shape) == (2, 3)
    np.testing.assert_allclose(npy(mean), m, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(npy(rstd), 1 / np.sqrt(v + 1e-5), rtol=1e-10)
    ref = ((g - m[..., None]) / np.sqrt(v[..., None] + 1e-5)).reshape(2, 6, 4) * w[:, None] + b[:, None]
    np.testing.assert_allclose(npy(out), ref, rtol=1e-10, atol=1e-12)
    if real_torch is not None:
        _, rm, rr = real_torch.native_group_norm(R(a), R(w), R(b), 2, 6, 4, 3, 1e-5)
        assert tuple(rm.shape) == (2, 3)
        np.testing.assert_allclose(npy(rstd), rr.numpy(), rtol=1e-10)
    with pytest.raises(RuntimeError, match="divisible by num_groups"):
        torch.native_group_norm(T(a, device), None, None, 2, 6, 4, 4, 1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_native_dropout(device):
    a = _rng.standard_normal((200, 50)) + 3.0          # no zeros: the mask shows in the output
    x = T(a, device, requires_grad=True)
    out, mask = torch.native_dropout(x, 0.3, True)
    assert mask.dtype == torch.bool and tuple(mask.shape) == (200, 50)
    mk = mask.cpu().numpy()
    np.testing.assert_allclose(npy(out), a * mk / 0.7, rtol=1e-12)
    assert abs(mk.mean() - 0.7) < 0.02                 # 10000 Bernoulli(0.7): sd 0.0046
    out.sum().backward()
    np.testing.assert_allclose(npy(x.grad), mk / 0.7, rtol=1e-12)
    out, mask = torch.native_dropout(T(a, device), 0.3, False)
    assert bool(mask.all()) and np.array_equal(npy(out), a)
    out, mask = torch.native_dropout(T(a, device), 1.0, True)
    assert not bool(mask.any()) and not npy(out).any()
    if real_torch is not None:
        ro, rmask = real_torch.native_dropout(R(a), 0.3, False)
        assert rmask.dtype == real_torch.bool and bool(rmask.all())


@pytest.mark.parametrize("device", DEVICES)
def test_native_norm(device):
    a = _rng.standard_normal((3, 4))
    np.testing.assert_allclose(npy(torch.native_norm(T(a, device))), np.sqrt((a * a).sum()), rtol=1e-12)
    np.testing.assert_allclose(npy(torch.native_norm(T(a, device), 1)), np.abs(a).sum(), rtol=1e-12)


# ---- convolution, grid_sampler, affine_grid_generator, embedding_renorm_ -----------------

@pytest.mark.parametrize("device", DEVICES)
def test_convolution_matches_definition(device):
    a, w, b = _rng.standard_normal((2, 3, 9)), _rng.standard_normal((4, 3, 3)), _rng.standard_normal(4)
    out = torch.convolution(T(a, device), T(w, device), T(b, device), [2], [1], [1], False, [0], 1)
    ap = np.pad(a, ((0, 0), (0, 0), (1, 1)))
    ref = np.stack([np.einsum("nci,oci->no", ap[:, :, s:s + 3], w) for s in range(0, 9, 2)], -1) + b[:, None]
    np.testing.assert_allclose(npy(out), ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_convolution_transposed_and_grouped(device):
    a, w = _rng.standard_normal((1, 4, 5, 5)), _rng.standard_normal((4, 3, 3, 3))
    x, wt = T(a, device), T(w, device)
    got = torch.convolution(x, wt, None, [2, 2], [1, 1], [1, 1], True, [1, 1], 2)
    want = F.conv_transpose2d(x, wt, None, 2, 1, 1, 2, 1)
    np.testing.assert_array_equal(npy(got), npy(want))
    wg = T(_rng.standard_normal((6, 2, 3, 3)), device)
    got = torch.convolution(x, wg, None, [1, 1], [0, 0], [2, 2], False, [0, 0], 2)
    np.testing.assert_array_equal(npy(got), npy(F.conv2d(x, wg, None, 1, 0, 2, 2)))
    if real_torch is not None:
        r = real_torch.convolution(R(a), R(w), None, [2, 2], [1, 1], [1, 1], True, [1, 1], 2)
        np.testing.assert_allclose(npy(want), r.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("interp,pad", [(0, 0), (1, 1), (0, 1), (1, 0), (0, 2), (1, 2), (2, 0), (2, 2)])
def test_grid_sampler_codes(device, interp, pad):
    a = _rng.standard_normal((1, 2, 5, 6))
    g = _rng.uniform(-1.2, 1.2, (1, 3, 4, 2))
    got = torch.grid_sampler(T(a, device), T(g, device), interp, pad, False)
    names = {0: "bilinear", 1: "nearest", 2: "bicubic"}, {0: "zeros", 1: "border", 2: "reflection"}
    want = F.grid_sample(T(a, device), T(g, device), names[0][interp], names[1][pad], False)
    np.testing.assert_array_equal(npy(got), npy(want))
    np.testing.assert_array_equal(npy(torch.grid_sampler_2d(T(a, device), T(g, device), interp, pad, False)),
                                  npy(want))
    if real_torch is not None:
        r = real_torch.grid_sampler(R(a), R(g), interp, pad, False)
        np.testing.assert_allclose(npy(got), r.numpy(), rtol=1e-10, atol=1e-12)
    with pytest.raises(RuntimeError, match="expected 5D input"):
        torch.grid_sampler_3d(T(a, device), T(g, device), interp, pad, False)


def test_grid_sampler_code_errors():
    a, g = T(_rng.standard_normal((1, 1, 3, 3))), T(_rng.uniform(-1, 1, (1, 2, 2, 2)))
    with pytest.raises(RuntimeError, match="unknown interpolation mode"):
        torch.grid_sampler(a, g, 5, 0, False)
    with pytest.raises(RuntimeError, match="unknown padding mode"):
        torch.grid_sampler(a, g, 0, 3, False)
    np.testing.assert_array_equal(npy(torch.grid_sampler(a, g, 2, 0, False)),
                                  npy(F.grid_sample(a, g, "bicubic", "zeros", False)))
    np.testing.assert_array_equal(npy(torch.grid_sampler(a, g, 0, 2, False)),
                                  npy(F.grid_sample(a, g, "bilinear", "reflection", False)))


@pytest.mark.parametrize("device", DEVICES)
def test_affine_grid_generator(device):
    theta = _rng.standard_normal((2, 2, 3))
    got = torch.affine_grid_generator(T(theta, device), [2, 1, 3, 4], False)
    xs, ys = (2 * np.arange(4) + 1) / 4 - 1, (2 * np.arange(3) + 1) / 3 - 1   # pixel centres
    base = np.stack(np.broadcast_arrays(xs[None, :], ys[:, None], 1.0), -1)    # [3, 4, 3]
    ref = np.einsum("hwk,njk->nhwj", base, theta)
    np.testing.assert_allclose(npy(got), ref, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("device", DEVICES)
def test_embedding_renorm_(device):
    w0 = _rng.standard_normal((5, 3)) * 2
    w = T(w0, device)
    idx = torch.tensor([0, 3, 3], device=device)
    assert torch.embedding_renorm_(w, idx, 1.0, 2.0) is w
    ref = w0.copy()
    for i in (0, 3):
        n = np.linalg.norm(ref[i])
        if n > 1.0:
            ref[i] *= 1.0 / (n + 1e-7)
    np.testing.assert_allclose(npy(w), ref, rtol=1e-12)


# ---- torch.func ---------------------------------------------------------------------------

def test_functionalize_returns_function():
    def f(x):
        y = x.clone()
        y.add_(1)
        return y
    assert torch.func.functionalize(f) is f
    with pytest.raises(RuntimeError, match="invalid argument for remove"):
        torch.func.functionalize(f, remove="everything")


@pytest.mark.parametrize("device", DEVICES)
def test_linearize(device):
    a, t1, t2 = _rng.standard_normal((3, 4))
    out, jvp_fn = torch.func.linearize(lambda x: x.sin() * x, T(a, device))
    np.testing.assert_allclose(npy(out), np.sin(a) * a, rtol=1e-12)
    for t in (t1, t2):
        np.testing.assert_allclose(npy(jvp_fn(T(t, device))), (np.cos(a) * a + np.sin(a)) * t, rtol=1e-10)
    if real_torch is not None:
        _, rj = real_torch.func.linearize(lambda x: x.sin() * x, R(a))
        np.testing.assert_allclose(npy(jvp_fn(T(t1, device))), rj(R(t1)).detach().numpy(), rtol=1e-10)


def test_replace_all_batch_norm_modules_():
    def build(lib):
        return lib.nn.Sequential(lib.nn.Conv1d(2, 3, 1), lib.nn.BatchNorm1d(3), lib.nn.ReLU(),
                                 lib.nn.Sequential(lib.nn.BatchNorm1d(3)))
    libs = [torch] + ([real_torch] if real_torch is not None else [])
    for lib in libs:
        m = build(lib).double()
        assert lib.func.replace_all_batch_norm_modules_(m) is m
        for bn in (m[1], m[3][0]):
            assert bn.running_mean is None and bn.running_var is None and bn.num_batches_tracked is None
            assert bn.track_running_stats is False
        m.eval()      # without running stats, eval normalises with the batch's statistics
        a = _rng.standard_normal((4, 3, 5))
        y = npy(m[1](lib.tensor(a, dtype=lib.float64)))
        ref = (a - a.mean((0, 2), keepdims=True)) / np.sqrt(a.var((0, 2), keepdims=True) + 1e-5)
        np.testing.assert_allclose(y, ref, rtol=1e-6, atol=1e-6)   # BatchNorm weights are 1, 0


# ---- torch.cuda submodules, NLLLoss2d ------------------------------------------------------

def test_cuda_submodules_reexport():
    import pycuda_sem.cuda as cuda
    from pycuda_sem.cuda import graphs, memory, random, streams
    for name in ("manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed", "get_rng_state",
                 "set_rng_state", "get_rng_state_all", "set_rng_state_all"):
        assert getattr(random, name) is getattr(cuda, name)
    for name in ("memory_allocated", "max_memory_allocated", "memory_reserved", "empty_cache",
                 "memory_stats", "memory_summary", "reset_peak_memory_stats", "mem_get_info"):
        assert getattr(memory, name) is getattr(cuda, name)
    assert streams.Stream is cuda.Stream and streams.Event is cuda.Event
    assert streams.ExternalStream is cuda.ExternalStream
    assert graphs.CUDAGraph is cuda.CUDAGraph and graphs.graph is cuda.graph
    assert graphs.make_graphed_callables is cuda.make_graphed_callables
    gens = cuda.default_generators
    assert isinstance(gens, tuple) and len(gens) == cuda.device_count()
    if real_torch is not None and not real_torch.cuda.is_available():
        assert real_torch.cuda.default_generators == ()


@pytest.mark.cuda
def test_cuda_default_generators_seed_their_device():
    g = torch.cuda.default_generators[0]
    assert str(g.device) == "cuda:0"
    g.manual_seed(1234)
    assert g.initial_seed() == 1234
    state = g.get_state()
    a = torch.rand(5, device="cuda:0")
    g.set_state(state)
    b = torch.rand(5, device="cuda:0")
    assert torch.equal(a, b)


def test_nllloss2d_is_deprecated_nllloss():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        loss = torch.nn.NLLLoss2d(ignore_index=1)
    assert any("NLLLoss2d` has been deprecated" in str(i.message) for i in w)
    assert isinstance(loss, torch.nn.NLLLoss) and loss.ignore_index == 1
    logp = torch.log_softmax(T(_rng.standard_normal((2, 3, 4, 4))), 1)
    tgt = torch.tensor(_rng.integers(0, 3, (2, 4, 4)))
    want = -np.take_along_axis(npy(logp), tgt.numpy()[:, None], 1)[:, 0]
    keep = tgt.numpy() != 1
    np.testing.assert_allclose(npy(loss(logp, tgt)), want[keep].mean(), rtol=1e-12)
