"""GPU semantics of the ops: results live on their operands' device and are
computed on that device's current stream, devices do not mix (except a
0-dim CPU tensor or a number), the allocator returns to its baseline, and
values, dtypes, shapes and error types agree with PyTorch where it is
installed."""
import numpy as np
import pytest

import pycuda_sem as pcs

pytestmark = pytest.mark.cuda

from torch_oracle import HAVE_TORCH, _torch, needs_torch  # noqa: E402,F401


def test_result_on_operand_device_and_cpu_zero_dim_joins():
    x = pcs.tensor([1.0, 2.0], device="cuda")
    y = x + pcs.tensor(3.0)  # 0-dim CPU tensor joins
    assert y.device == x.device
    assert y.cpu().tolist() == [4.0, 5.0]
    assert (x * pcs.tensor(2)).dtype == pcs.float32
    assert (pcs.tensor(2.0) * x).tolist() == [2.0, 4.0]
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        x + pcs.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="cuda:0 and cpu|cpu and cuda:0"):
        pcs.add(pcs.tensor([1.0, 2.0]), x)
    with pytest.raises(RuntimeError, match="same device"):
        pcs.where(x > 0, x, pcs.tensor([1.0, 2.0]))


@pytest.mark.multigpu
def test_two_devices_do_not_mix():
    a = pcs.ones(2, device="cuda:0")
    b = pcs.ones(2, device="cuda:1")
    with pytest.raises(RuntimeError, match="cuda:0 and cuda:1"):
        a + b
    with pcs.cuda.device(1):
        c = b + b
    assert c.device == pcs.device("cuda:1")
    z = a + a  # still on its own device when cuda:1 is current
    with pcs.cuda.device(1):
        z2 = a * 2
    assert z.device == z2.device == pcs.device("cuda:0")
    assert (b.sum()).device == pcs.device("cuda:1")


def test_ops_run_on_the_current_stream():
    A = pcs.ones(1 << 20, device="cuda")
    pcs.cuda.synchronize()
    s = pcs.cuda.Stream()
    # Warm the allocator's cache for s first: a fresh cudaMalloc/cudaFree
    # while s sleeps could synchronize the device and hide which stream ran.
    with pcs.cuda.stream(s):
        warm = [pcs.sum(A), A + A, A.max()]
    del warm
    pcs.cuda.synchronize()
    with pcs.cuda.stream(s):
        pcs.cuda._sleep(200_000_000)  # keeps s busy well past the checks below
        total = pcs.sum(A)
        doubled = A + A
        m = A.max()
    # queued behind the sleep on s; the default stream is idle
    assert not s.query()
    assert pcs.cuda.default_stream().query()
    done = pcs.cuda.Event()
    done.record(s)
    assert not done.query()
    s.synchronize()
    assert total.item() == float(1 << 20)
    assert m.item() == 1.0
    assert doubled[7].item() == 2.0


def test_allocator_returns_to_baseline():
    pcs.cuda.synchronize()
    base = pcs.cuda.memory_allocated()
    a = pcs.ones(1000, 300, device="cuda")
    b = pcs.ones(300, device="cuda")
    r = ((a + b) * 2 - 1).exp().sum(1).amax()
    v, i = (a * b).max(0)
    s = a.sum()  # split-and-combine workspace
    c = a.t().cumsum(0)
    del r, v, i, s, c, a, b
    pcs.cuda.synchronize()
    assert pcs.cuda.memory_allocated() == base


def test_launch_blocking_env(tmp_path):
    import subprocess
    import sys
    code = ("import pycuda_sem as t; x = t.ones(1000, device='cuda'); "
            "print((x + x).sum().item(), (x * 3).max().item())")
    out = subprocess.run([sys.executable, "-c", code], env={**__import__("os").environ,
                         "CUDA_LAUNCH_BLOCKING": "1"}, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["2000.0", "3.0"]


# ---- against torch ---------------------------------------------------------------------

def both(np_array, dtype_name):
    a = pcs.tensor(np_array).to(getattr(pcs, dtype_name)).cuda()
    b = _torch.tensor(np_array).to(getattr(_torch, dtype_name)).cuda()
    return a, b


def same(ours, theirs, rtol=1e-5, atol=1e-5):
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    o = np.asarray(ours.cpu().to(pcs.float64).tolist()) if not ours.dtype.is_complex else \
        np.asarray(ours.cpu().tolist())
    t = theirs.cpu().to(_torch.float64 if not theirs.dtype.is_complex else _torch.complex128).numpy()
    np.testing.assert_allclose(o, t, rtol=rtol, atol=atol, equal_nan=True)


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64", "int32", "int64"])
def test_against_torch_binary_and_unary(dtype):
    rng = np.random.default_rng(5)
    an = rng.uniform(0.5, 3, (6, 1, 5)) * rng.choice([-1, 1], (6, 1, 5))
    bn = rng.uniform(0.5, 3, (4, 5)) * rng.choice([-1, 1], (4, 5))
    if "int" in dtype:
        an, bn = np.round(an * 3) + 7, np.round(bn * 3) + 11
    a, ta = both(an, dtype)
    b, tb = both(bn, dtype)
    tol = {"float16": 2e-3, "bfloat16": 1.6e-2}.get(dtype, 1e-5)
    for f in [lambda x, y: x + y, lambda x, y: x - y, lambda x, y: x * y, lambda x, y: x / y,
              lambda x, y: x // y, lambda x, y: x % y, lambda x, y: x < y, lambda x, y: x == y,
              lambda x, y: x + 2.5, lambda x, y: 3 - x, lambda x, y: x * 2,
              lambda x, y: (x > 0) & (y < 0), lambda x, y: x.maximum(y),
              lambda x, y: x.clamp(min=-1, max=2), lambda x, y: x.abs(), lambda x, y: -x,
              lambda x, y: x.exp() if "int" not in dtype else x.abs(),
              lambda x, y: x.sigmoid(), lambda x, y: x.sqrt() if "int" in dtype else x.abs().sqrt(),
              lambda x, y: x.sum(), lambda x, y: x.sum(0), lambda x, y: x.amax((0, 2)),
              lambda x, y: x.sum(dim=2, keepdim=True), lambda x, y: x.argmax(),
              lambda x, y: y.cumsum(1), lambda x, y: (x > 0).sum(), lambda x, y: (x > 0).all()]:
        same(f(a, b), f(ta, tb), rtol=tol, atol=tol * 10)


@needs_torch
def test_against_torch_floats_reductions():
    rng = np.random.default_rng(6)
    xn = rng.standard_normal((33, 65, 17))
    x, tx = both(xn, "float32")
    for f in [lambda t: t.mean(), lambda t: t.std(), lambda t: t.var(1), lambda t: t.norm(),
              lambda t: t.logsumexp(2), lambda t: t.max(1).values, lambda t: t.max(1).indices,
              lambda t: t.min(0)[1], lambda t: t.prod(0), lambda t: t.amin(),
              lambda t: t.norm(dim=(0, 2)), lambda t: t.transpose(0, 2).sum(0),
              lambda t: t[:, ::2].mean((0, 1)), lambda t: t.cumprod(2)]:
        same(f(x), f(tx), rtol=2e-4, atol=1e-4)


@needs_torch
def test_against_torch_errors():
    a, ta = both(np.array([1.0, 2.0]), "float32")
    i, ti = both(np.array([1, 2]), "int64")
    bb, tbb = both(np.array([True, False]), "bool")
    for f in [lambda x, y, z: x & x, lambda x, y, z: z - z, lambda x, y, z: -z,
              lambda x, y, z: y.mean(), lambda x, y, z: y.__iadd__(1.5),
              lambda x, y, z: x.clamp()]:
        try:
            f(ta, ti, tbb)
            theirs = None
        except Exception as e:  # noqa: BLE001
            theirs = type(e)
        try:
            f(a, i, bb)
            ours = None
        except Exception as e:  # noqa: BLE001
            ours = type(e)
        if theirs is None:
            continue
        assert ours is not None and issubclass(ours, theirs), (ours, theirs)


@pytest.mark.parametrize("shape,dim", [((40, 5000), 1), ((37, 16), 1), ((3, 20000), 1), ((64, 5000), 0),
                                       ((2, 3, 70000), 1), ((700, 33), 0), ((5, 40, 7), 1), ((4100, 3), 1)])
@pytest.mark.parametrize("dtype", ["float32", "float16", "int64"])
def test_cumsum_cumprod_every_scan_kernel(shape, dim, dtype):
    # rows a warp each, lines a thread each across columns, and a block a
    # line: cumsum and cumprod along dim against NumPy in float64
    g = np.random.default_rng(len(shape) * 100 + shape[0])
    if dtype == "int64":
        a = g.integers(-3, 4, shape)
    else:
        a = g.standard_normal(shape)
    x = pcs.tensor(a, dtype=getattr(pcs, dtype), device="cuda")
    ref = x.cpu().double().numpy()
    got = x.cumsum(dim).cpu().double().numpy()
    want = np.cumsum(ref, axis=dim)
    if dtype == "int64":
        np.testing.assert_array_equal(got, want)
    else:
        tol = 2e-2 if dtype == "float16" else 1e-4
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.sqrt(shape[dim]))
    # cumprod of values near 1, so that long lines stay finite
    y = pcs.tensor(1 + 0.001 * g.standard_normal(shape), dtype=pcs.float32, device="cuda")
    np.testing.assert_allclose(y.cumprod(dim).cpu().double().numpy(),
                               np.cumprod(y.cpu().double().numpy(), axis=dim), rtol=1e-3)
