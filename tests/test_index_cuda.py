"""Advanced indexing and the gather/scatter/mask ops on CUDA: every op
against the CPU result (itself checked against NumPy in test_index.py) and
against torch on the same data where torch with CUDA is installed; random
index expressions read and written, negative indices, CPU index tensors for
CUDA tensors; deterministic accumulation; out-of-range indices raise
IndexError at the next call that waits for the device, without a
device-side assert, and the process goes on computing correctly afterwards; allocator statistics back to baseline."""
import numpy as np
import pytest

import pycuda_sem as pcs

from test_index import np_get, random_expression, to_torch_items

pytestmark = [pytest.mark.cuda, pytest.mark.usefixtures("balanced")]

try:
    import torch as _torch
    HAVE_TORCH = _torch.cuda.is_available()
except Exception:  # noqa: BLE001 - any import failure means "no torch"
    _torch = None
    HAVE_TORCH = False


def C(a, dtype=None):
    return pcs.tensor(np.asarray(a), dtype=dtype, device="cuda")


def items_on(items, device):
    return tuple(it.to(device) if isinstance(it, pcs.Tensor) else it for it in items)


def torch_items(items):
    out = []
    for it in items:
        if isinstance(it, pcs.Tensor):
            out.append(_torch.from_numpy(it.cpu().numpy()).cuda())
        else:
            out.append(it)
    return tuple(out)


@pytest.mark.parametrize("seed", range(40))
def test_random_getitem_setitem(seed):
    rng = np.random.default_rng(1000 + seed)
    shape = tuple(int(s) for s in rng.integers(1, 5, size=rng.integers(1, 5)))
    a = rng.standard_normal(shape).astype(np.float32)
    items = random_expression(rng, shape)
    try:
        want = np_get(a, items)
    except IndexError:
        pytest.skip("expression not valid for this shape")
    titems = to_torch_items(items, rng)
    x = C(a)
    for dev in ("cuda", "cpu"):  # index tensors on the GPU, and on the host
        got = x[items_on(titems, dev)]
        assert got.device.type == "cuda"
        np.testing.assert_array_equal(got.cpu().numpy(), want)
    if HAVE_TORCH:
        ref = _torch.from_numpy(a).cuda()[torch_items(titems)]
        np.testing.assert_array_equal(x[titems].cpu().numpy(), ref.cpu().numpy())
    val = rng.standard_normal(want.shape).astype(np.float32)
    y_cpu = pcs.tensor(a)
    y_cpu[items_on(titems, "cpu")] = pcs.tensor(val)
    y = C(a)
    y[items_on(titems, "cuda")] = C(val)
    np.testing.assert_array_equal(y.cpu().numpy(), y_cpu.numpy())  # duplicates: same winner
    y[titems] = -3.0
    y_cpu[items_on(titems, "cpu")] = -3.0
    np.testing.assert_array_equal(y.cpu().numpy(), y_cpu.numpy())


DTYPES = [pcs.float32, pcs.float64, pcs.float16, pcs.bfloat16, pcs.int64, pcs.int32, pcs.int8,
          pcs.uint8, pcs.bool, pcs.complex64]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_gather_scatter_like_cpu(dtype):
    rng = np.random.default_rng(7)
    x = pcs.tensor(rng.integers(0, 5, size=(6, 5)).astype(np.float64)).to(dtype)
    idx = pcs.tensor(rng.integers(-6, 6, size=(4, 5)))
    src = pcs.tensor(rng.integers(0, 3, size=(4, 5)).astype(np.float64)).to(dtype)
    xc, ic, sc = x.cuda(), idx.cuda(), src.cuda()

    def same(a, b):
        np.testing.assert_array_equal(a.cpu().to(pcs.float64 if not dtype.is_complex else dtype).numpy(),
                                      b.to(pcs.float64 if not dtype.is_complex else dtype).numpy())

    same(xc.gather(0, ic % 6), x.gather(0, idx % 6))
    same(xc[ic], x[idx])
    same(xc.index_select(1, ic[0] % 5), x.index_select(1, idx[0] % 5))
    same(xc.take(ic), x.take(idx))
    same(xc.scatter(0, ic % 6, sc), x.scatter(0, idx % 6, src))
    same(pcs.take_along_dim(xc, ic % 6, 0), pcs.take_along_dim(x, idx % 6, 0))
    if dtype not in (pcs.bool, pcs.complex64):
        same(xc.scatter_add(0, ic % 6, sc), x.scatter_add(0, idx % 6, src))
        for red in ("sum", "prod", "mean", "amax", "amin"):
            for inc in (True, False):
                a = xc.scatter_reduce(0, ic % 6, sc, red, include_self=inc)
                b = x.scatter_reduce(0, idx % 6, src, red, include_self=inc)
                if dtype in (pcs.float16, pcs.bfloat16):
                    np.testing.assert_allclose(a.cpu().float().numpy(), b.float().numpy(), rtol=1e-2)
                else:
                    same(a, b)
        same(xc.index_add(0, ic[:, 0] % 6, sc, alpha=2), x.index_add(0, idx[:, 0] % 6, src, alpha=2))
    m = pcs.tensor(rng.random((6, 5)) < 0.5)
    same(xc.masked_fill(m.cuda(), 1), x.masked_fill(m, 1))
    same(xc.masked_select(m.cuda()), x.masked_select(m))
    same(xc[m.cuda()], x[m])
    same(xc.nonzero(), x.nonzero())
    y, yc = x.clone(), xc.clone()
    y[m] = src.flatten()[:1]
    yc[m.cuda()] = sc.flatten()[:1]
    same(yc, y)
    y.masked_scatter_(m, src.flatten().repeat(3))
    yc.masked_scatter_(m.cuda(), sc.flatten().repeat(3))
    same(yc, y)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64", "float16",
                                   "bfloat16", "float32", "float64", "complex64", "complex128"])
def test_nonzero_reads_every_dtype(dtype):
    """nonzero on CUDA tests the elements' bits in CUB's flag iterator (no
    bool copy): -0.0 is zero, NaN and infinities are not, a complex is
    non-zero when either part is; 1-D results are the positions themselves,
    and where/argwhere/x[x] agree with the CPU."""
    def same(a, b):
        np.testing.assert_array_equal(a.cpu().numpy(), b.numpy())

    rng = np.random.default_rng(len(dtype))
    dt = getattr(pcs, dtype)
    for shape in [(1,), (37,), (5000,), (6, 7), (3, 4, 5)]:
        v = rng.integers(-2, 3, size=shape).astype(np.float64)
        if dtype in ("float16", "bfloat16", "float32", "float64"):
            flat = v.reshape(-1)
            flat[::7] = -0.0
            flat[1::11] = np.nan
            flat[2::13] = -np.inf
        cpu = pcs.tensor(v.tolist(), dtype=pcs.float64).to(dt)
        if dtype.startswith("complex"):
            im = pcs.tensor(rng.integers(-1, 2, size=shape).astype(np.float64).tolist(),
                            dtype=pcs.float64)
            cpu = cpu + 1j * im.to(dt)  # some elements zero in one part only
        gpu = cpu.cuda()
        same(gpu.nonzero(), cpu.nonzero())
        for a, b in zip(pcs.where(gpu), pcs.where(cpu)):
            same(a, b)
        same(pcs.argwhere(gpu), pcs.argwhere(cpu))
        if dtype == "bool":
            same(gpu[gpu], cpu[cpu])


def test_against_torch_ops():
    if not HAVE_TORCH:
        pytest.skip("torch with CUDA not installed")
    rng = np.random.default_rng(3)
    a = rng.standard_normal((50, 7)).astype(np.float32)
    i = rng.integers(-50, 50, size=(30,))
    g = rng.integers(0, 50, size=(40, 7))
    x, tx = C(a), _torch.from_numpy(a).cuda()
    ti, tg = _torch.from_numpy(i).cuda(), _torch.from_numpy(g).cuda()
    pi, pg = C(i), C(g)
    np.testing.assert_array_equal(x[pi].cpu().numpy(), tx[ti].cpu().numpy())
    np.testing.assert_array_equal(x.gather(0, pg).cpu().numpy(), tx.gather(0, tg).cpu().numpy())
    src = rng.standard_normal((40, 7)).astype(np.float32)
    got = pcs.zeros(50, 7, device="cuda").scatter_add_(0, pg, C(src))
    ref = _torch.zeros(50, 7, device="cuda").scatter_add_(0, tg, _torch.from_numpy(src).cuda())
    np.testing.assert_allclose(got.cpu().numpy(), ref.cpu().numpy(), rtol=1e-5, atol=1e-5)
    m = a > 0
    np.testing.assert_array_equal(x[C(m)].cpu().numpy(), tx[_torch.from_numpy(m).cuda()].cpu().numpy())
    np.testing.assert_array_equal(x.nonzero().cpu().numpy(), tx.nonzero().cpu().numpy())
    for p, t in zip(pcs.where(x > 0), _torch.where(tx > 0)):
        np.testing.assert_array_equal(p.cpu().numpy(), t.cpu().numpy())


@pytest.fixture
def deterministic():
    pcs.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        pcs.use_deterministic_algorithms(False)


def test_accumulate_is_deterministic(deterministic):
    rng = np.random.default_rng(11)
    n = 1 << 18
    idx = C(rng.integers(0, 64, size=n))
    v = C(rng.standard_normal(n).astype(np.float32))
    r1 = pcs.zeros(64, device="cuda").index_put_((idx,), v, accumulate=True)
    r2 = pcs.zeros(64, device="cuda").index_put_((idx,), v, accumulate=True)
    assert np.array_equal(r1.cpu().numpy(), r2.cpu().numpy())  # bitwise, run to run
    want = np.zeros(64)
    np.add.at(want, idx.cpu().numpy(), v.cpu().numpy().astype(np.float64))
    np.testing.assert_allclose(r1.cpu().numpy(), want, rtol=1e-4, atol=1e-3)
    s1 = pcs.zeros(64, device="cuda").scatter_add_(0, idx, v)
    s2 = pcs.zeros(64, device="cuda").scatter_add_(0, idx, v)
    assert np.array_equal(s1.cpu().numpy(), s2.cpu().numpy())
    # SET with duplicates: the last value in index order wins, as on the CPU
    y = pcs.zeros(64, device="cuda")
    y[idx] = v
    yc = pcs.zeros(64)
    yc[idx.cpu()] = v.cpu()
    np.testing.assert_array_equal(y.cpu().numpy(), yc.numpy())


def test_out_of_range_leaves_the_context_usable():
    """A bad CUDA index is reported by the next call that waits for the
    device (here synchronize()); the ops skip it (gathers read element 0,
    scatters leave its element out), so nothing outside the tensor is read
    or written, and the context stays usable."""
    x = pcs.arange(4.0, device="cuda")
    for bad, call in (
            (10, lambda: x[C([0, 10])]),
            (-5, lambda: x[C([-5])]),
            (10, lambda: x.__setitem__(C([10]), 1.0)),
            (10, lambda: x.__setitem__(C([10]), C([5.0], pcs.float32))),  # sorted SET
            (10, lambda: x.index_select(0, C([10]))),
            (10, lambda: x.gather(0, C([10]))),
            (10, lambda: x.scatter_add_(0, C([10]), x[:1])),
            (10, lambda: x.index_put_((C([10]),), C([2.0], pcs.float32), accumulate=True)),
            (10, lambda: x.take(C([10]))),
            (10, lambda: x[[10]]),                       # a list: checked on the host
            (10, lambda: x[pcs.tensor([1, 10])])):       # a CPU index tensor: on the host
        with pytest.raises(IndexError, match="index %d is out of bounds for dimension 0 with size 4" % bad):
            call()
            pcs.cuda.synchronize()
        pcs.cuda.synchronize()  # reported once, no sticky error: the context is fine
    assert x.cpu().tolist() == [0.0, 1.0, 2.0, 3.0]  # nothing was written
    # and the process goes on computing correctly
    y = pcs.arange(1 << 16, device="cuda", dtype=pcs.float32)
    assert (y * 2)[C([3, -1])].cpu().tolist() == [6.0, 2.0 * ((1 << 16) - 1)]
    assert y.sum().item() == float(sum(range(1 << 16)))
    z = pcs.zeros(4, device="cuda").index_put_((C([0, 0, 3]),), C([1.0, 2.0, 3.0], pcs.float32), accumulate=True)
    assert z.cpu().tolist() == [3.0, 0.0, 0.0, 3.0]


def test_dim_wise_ops_want_the_index_on_the_tensors_device():
    """As torch: x[idx] and index_put_ take a CPU index for a CUDA tensor,
    gather, scatter, take and the index_* ops raise RuntimeError."""
    x = pcs.arange(4.0, device="cuda")
    ci, one = pcs.tensor([1]), pcs.ones(1, device="cuda")
    for call in (lambda: x.gather(0, ci), lambda: x.clone().scatter_(0, ci, one),
                 lambda: x.clone().scatter_add_(0, ci, one), lambda: x.index_select(0, ci),
                 lambda: x.clone().index_add_(0, ci, one), lambda: x.clone().index_copy_(0, ci, one),
                 lambda: x.clone().index_fill_(0, ci, 2.0), lambda: x.take(ci),
                 lambda: x.take_along_dim(ci, 0)):
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device, but got "
                                               "index is on cpu"):
            call()
    assert x[ci].tolist() == [1.0]
    assert x.clone().index_put_((ci,), one).tolist() == [0.0, 1.0, 2.0, 3.0]


@pytest.mark.parametrize("deterministic", [False, True])
def test_a_scatter_with_a_bad_index_applies_the_good_ones(deterministic):
    """The atomic and the sorted scatter skip exactly the bad elements."""
    pcs.use_deterministic_algorithms(deterministic)
    try:
        x = pcs.zeros(4, device="cuda")
        x.index_put_((C([1, 10, 1, -9, 3]),), C([1.0, 2.0, 4.0, 8.0, 16.0], pcs.float32), accumulate=True)
        with pytest.raises(IndexError, match="out of bounds for dimension 0 with size 4"):
            x.cpu()
        assert x.cpu().tolist() == [0.0, 5.0, 0.0, 16.0]
        y = pcs.zeros(2, 3, device="cuda")
        y[C([0, 7, 1]), C([2, 0, -1])] = C([1.0, 2.0, 3.0], pcs.float32)  # sorted SET, two index tensors
        with pytest.raises(IndexError, match="index 7 is out of bounds for dimension 0 with size 2"):
            y.tolist()
        assert y.cpu().tolist() == [[0.0, 0.0, 1.0], [0.0, 0.0, 3.0]]
    finally:
        pcs.use_deterministic_algorithms(False)


def _event_wait():
    e = pcs.cuda.Event()
    e.record()
    e.synchronize()


def test_bad_index_reported_at_the_next_waiting_call():
    """Deferred, as CUDA's own asynchronous errors: the op returns, every
    call that waits for the device afterwards (docs/api.md lists them)
    raises it once, in launch order when there are several."""
    x = pcs.arange(4.0, device="cuda")
    waits = (lambda: pcs.cuda.synchronize(), lambda: x.sum().item(), lambda: x.cpu(),
             lambda: x.tolist(), lambda: pcs.cuda.current_stream().synchronize(),
             lambda: repr(x), lambda: bool(x[0] > -1), _event_wait)
    for wait in waits:
        y = x[C([1, 12])]  # returns: nothing waited
        assert y.shape == (2,)
        with pytest.raises(IndexError, match="index 12 is out of bounds"):
            wait()
        wait()  # once only
    a, b = x[C([20])], x.gather(0, C([-30]))
    with pytest.raises(IndexError, match="index 20 is out"):
        pcs.cuda.synchronize()
    with pytest.raises(IndexError, match="index -30 is out"):
        pcs.cuda.synchronize()
    pcs.cuda.synchronize()
    # a long loop that never waits keeps a bounded queue, and good results
    idx = C([3, 0])
    for _ in range(3000):
        r = x[idx]
    assert r.cpu().tolist() == [3.0, 0.0]


def test_range_records_of_many_block_launches_are_reused():
    """A launch's last block to finish marks its range record final and puts
    the record's block counter back to 0, so the record serves the next
    launch, of another grid size: gathers (fused and by rows), atomic and
    claimed scatters of sizes from one block to thousands, every third with
    a bad index, each raised at its wait and only there, with the good
    elements' results exact (against NumPy)."""
    rng = np.random.default_rng(11)
    n = 1 << 20
    x = pcs.arange(float(n), device="cuda")
    base = np.arange(n, dtype=np.float32)
    for rep in range(48):
        size = (1 << 20, 3, 1 << 14, 5000)[rep % 4]
        kind = rep // 4 % 3
        idx = rng.integers(-n if kind == 0 else 0, n, size)  # x[idx] wraps negative indices
        bad = rep % 3 == 0
        if bad:
            idx[rng.integers(size)] = n + 7
        ci = C(idx)
        if kind == 0:
            got = x[ci]
        elif kind == 1:
            got = x.view(-1, 1).expand(n, 2).gather(0, ci.view(-1, 1).expand(size, 2))[:, 1]
        else:
            got = pcs.zeros(n, device="cuda").index_add_(0, ci, pcs.ones(size, device="cuda"))
        if bad:
            with pytest.raises(IndexError, match="index %d is out of bounds for dimension 0 with size %d" % (n + 7, n)):
                pcs.cuda.synchronize()
        pcs.cuda.synchronize()  # raised once only
        ok = (idx >= -n) & (idx < n)
        if kind < 2:
            want = base[np.where(ok, idx, 0)]
            np.testing.assert_array_equal(got.cpu().numpy()[ok], want[ok])
        else:
            want = np.bincount(np.where(idx[ok] < 0, idx[ok] + n, idx[ok]), minlength=n).astype(np.float32)
            np.testing.assert_array_equal(got.cpu().numpy(), want)


def test_bad_index_on_a_side_stream():
    """A record from a launch on another stream is read by a wait that
    covers that stream."""
    x = pcs.arange(4.0, device="cuda")
    s = pcs.cuda.Stream()
    s.wait_stream(pcs.cuda.current_stream())
    with pcs.cuda.stream(s):
        y = x[C([2, 40])]
    with pytest.raises(IndexError, match="index 40 is out of bounds"):
        s.synchronize()
    assert y.cpu().tolist()[0] == 2.0


@pytest.mark.skipif(pcs.cuda.device_count() < 2, reason="needs two GPUs")
def test_range_records_on_two_devices():
    """Each device has its own records (their block counters live on it):
    bad indices on either device are raised at the next wait, the queue
    that spans both drains past 1024 unread records, and the results on
    both devices stay right."""
    xs = [pcs.arange(4.0, device="cuda:%d" % d) for d in (0, 1)]
    ids = [pcs.tensor([3, 0], device="cuda:%d" % d) for d in (0, 1)]
    for d in (1, 0):
        with pcs.cuda.device(d):
            y = xs[d][pcs.tensor([1, 9], device="cuda:%d" % d)]
        with pytest.raises(IndexError, match="index 9 is out of bounds for dimension 0 with size 4"):
            with pcs.cuda.device(d):
                pcs.cuda.synchronize()
        assert y.cpu().tolist()[0] == 1.0
    for k in range(2200):  # past the queue's bound, alternating devices
        d = k % 2
        with pcs.cuda.device(d):
            r = xs[d][ids[d]]
    with pcs.cuda.device(1):
        bad = xs[1].gather(0, pcs.tensor([5], device="cuda:1"))
    with pytest.raises(IndexError, match="index 5 is out of bounds"):
        for d in (0, 1):
            with pcs.cuda.device(d):
                pcs.cuda.synchronize()
    assert r.cpu().tolist() == [3.0, 0.0] and bad.shape == (1,)
    assert xs[0][ids[0]].cpu().tolist() == [3.0, 0.0]


def test_launch_blocking_reports_in_the_call():
    """CUDA_LAUNCH_BLOCKING=1: the op itself waits and raises."""
    import subprocess
    import sys
    code = ("import pycuda_sem as t\n"
            "x = t.arange(4.0, device='cuda')\n"
            "try:\n"
            "    x[t.tensor([9], device='cuda')]\n"
            "except IndexError as e:\n"
            "    print('raised', e)\n")
    import os
    env = dict(os.environ, CUDA_LAUNCH_BLOCKING="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert "raised index 9 is out of bounds for dimension 0 with size 4" in out.stdout, out.stderr


def test_errors():
    x = pcs.zeros(4, device="cuda")
    with pytest.raises(IndexError, match="tensors used as indices must be long, int, byte or bool tensors"):
        x[C([1.0])]
    with pytest.raises(IndexError, match=r"The shape of the mask \[3\] at index 0 does not match"):
        x[C([True, False, True])]
    with pytest.raises(RuntimeError, match="indices should be either on cpu or on the same device"):
        pcs.zeros(4)[C([0])]


def test_big_and_strided():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((300, 200)).astype(np.float32)
    x = C(a).t()  # a transposed view: offsets follow its strides
    i = rng.integers(-200, 200, size=(1000,))
    np.testing.assert_array_equal(x[C(i)].cpu().numpy(), a.T[i])
    np.testing.assert_array_equal(x[C(i), 5:100:3].cpu().numpy(), a.T[i, 5:100:3])
    m = rng.random((200, 300)) < 0.3
    np.testing.assert_array_equal(x[C(m)].cpu().numpy(), a.T[m])
    y = C(a).t()
    y[C(m)] = 0.0
    np.testing.assert_array_equal(y.cpu().numpy(), np.where(m, 0, a.T))


def test_accumulate_default_uses_atomics_like_torch():
    """Default (no deterministic algorithms): float sums by atomicAdd, close to
    the float64 sum; integer sums exact; the sort path for the other dtypes."""
    assert not pcs.are_deterministic_algorithms_enabled()
    rng = np.random.default_rng(12)
    n = 1 << 16
    i = rng.integers(-64, 64, size=n)
    idx = C(i)
    for dt, npdt in ((pcs.float32, np.float32), (pcs.float64, np.float64)):
        v = rng.standard_normal(n).astype(npdt)
        want = np.zeros(64)
        np.add.at(want, i % 64, v.astype(np.float64))
        r = pcs.zeros(64, device="cuda", dtype=dt).index_put_((idx,), C(v), accumulate=True)
        np.testing.assert_allclose(r.cpu().numpy(), want, rtol=1e-4, atol=1e-3)
        s = pcs.zeros(64, device="cuda", dtype=dt).scatter_add_(0, idx % 64, C(v))
        np.testing.assert_allclose(s.cpu().numpy(), want, rtol=1e-4, atol=1e-3)
        a = pcs.zeros(64, device="cuda", dtype=dt).index_add_(0, idx % 64, C(v), alpha=2)
        np.testing.assert_allclose(a.cpu().numpy(), 2 * want, rtol=1e-4, atol=2e-3)
    for dt, npdt in ((pcs.int64, np.int64), (pcs.int32, np.int32), (pcs.int16, np.int16)):
        v = rng.integers(-100, 100, size=n).astype(npdt)
        want = np.zeros(64, dtype=np.int64)
        np.add.at(want, i % 64, v.astype(np.int64))
        r = pcs.zeros(64, device="cuda", dtype=dt).index_put_((idx,), C(v), accumulate=True)
        assert r.cpu().numpy().astype(np.int64).tolist() == want.astype(npdt).astype(np.int64).tolist()
    if HAVE_TORCH:
        v = rng.standard_normal(n).astype(np.float32)
        ref = _torch.zeros(64, device="cuda").index_put_(
            (_torch.from_numpy(i).cuda(),), _torch.from_numpy(v).cuda(), accumulate=True)
        got = pcs.zeros(64, device="cuda").index_put_((idx,), C(v), accumulate=True)
        np.testing.assert_allclose(got.cpu().numpy(), ref.cpu().numpy(), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("dtype", [pcs.bool, pcs.uint8, pcs.float16, pcs.float32, pcs.int64, pcs.complex128])
@pytest.mark.parametrize("target", [64, 1 << 22])
@pytest.mark.parametrize("n", [5000, 20000])
def test_set_with_duplicates_last_wins_every_size(dtype, target, n):
    """x[idx] = values, scatter_ and index_copy_ with duplicate targets: the
    last value in index order wins, as on the CPU. A small target takes the
    claims (one block up to 8192 values, two passes beyond), one far larger
    than the values the sort; all agree."""
    rng = np.random.default_rng(int(target) + 7 + n)
    hot = rng.integers(0, 64, size=n)  # every target hit many times
    vals_np = rng.integers(0, 100, size=n)
    v = pcs.tensor(vals_np).to(dtype).cuda()
    idx = C(hot)
    y = pcs.zeros(target, dtype=dtype, device="cuda")
    y[idx] = v
    yc = pcs.zeros(target, dtype=dtype)
    yc[idx.cpu()] = v.cpu()
    np.testing.assert_array_equal(y.cpu().numpy(), yc.numpy())
    z = pcs.zeros(target, dtype=dtype, device="cuda").scatter_(0, idx, v)
    np.testing.assert_array_equal(z.cpu().numpy(), yc.numpy())
    w = pcs.zeros(target, dtype=dtype, device="cuda").index_copy_(0, idx, v)
    np.testing.assert_array_equal(w.cpu().numpy(), yc.numpy())
    # two index tensors into a 2-D view with an offset (storage offsets)
    base = pcs.zeros(3, 70, dtype=dtype, device="cuda")
    view = base[1:, 3:]
    view[C(hot % 2), C(hot)] = v
    bc = pcs.zeros(3, 70, dtype=dtype)
    bc[1:, 3:][pcs.tensor(hot % 2), pcs.tensor(hot)] = v.cpu()
    np.testing.assert_array_equal(base.cpu().numpy(), bc.numpy())


def test_big_set_with_duplicates():
    """From 65536 values, x[idx] = v is one pass of plain stores (as torch):
    each target holds one of its values; deterministic algorithms keep the
    last one in index order."""
    rng = np.random.default_rng(5)
    n = 1 << 17
    hot = rng.integers(0, 1000, size=n)
    vals = rng.permutation(n).astype(np.float32)  # distinct: which one landed is visible
    idx, v = C(hot), C(vals)
    y = pcs.full((1000,), -1.0, device="cuda")
    y[idx] = v
    got = y.cpu().numpy()
    for t in range(1000):
        assert got[t] in vals[hot == t]
    last = np.full(1000, -1.0, np.float32)
    last[hot] = vals  # NumPy assigns in order: the last one wins
    pcs.use_deterministic_algorithms(True)
    try:
        y = pcs.full((1000,), -1.0, device="cuda")
        y[idx] = v
        np.testing.assert_array_equal(y.cpu().numpy(), last)
        z = pcs.full((1 << 24,), -1.0, device="cuda")  # a large target: the sort
        z[idx] = v
        np.testing.assert_array_equal(z[:1000].cpu().numpy(), last)
    finally:
        pcs.use_deterministic_algorithms(False)


def test_setitem_number_with_duplicates():
    """x[idx] = number: one plain-store pass; every duplicate writes the same."""
    rng = np.random.default_rng(13)
    for dt in (pcs.float32, pcs.float64, pcs.int32, pcs.int64, pcs.float16, pcs.int8):
        a = rng.integers(0, 9, size=(50, 3)).astype(np.float64)
        i = rng.integers(-50, 50, size=200)
        x, xc = C(a).to(dt), pcs.tensor(a).to(dt)
        x[C(i)] = 7
        xc[pcs.tensor(i)] = 7
        np.testing.assert_array_equal(x.cpu().to(pcs.float64).numpy(), xc.to(pcs.float64).numpy())
        x.index_fill_(1, C([0, 2, 0]), -1)
        xc.index_fill_(1, pcs.tensor([0, 2, 0]), -1)
        np.testing.assert_array_equal(x.cpu().to(pcs.float64).numpy(), xc.to(pcs.float64).numpy())


@pytest.mark.parametrize("dtype", [pcs.float32, pcs.float16, pcs.int8, pcs.float64, pcs.complex64],
                         ids=str)
def test_row_gather_fast_path(dtype):
    """One contiguous index tensor picking contiguous rows (x[idx],
    index_select(0), take, embedding-like): 16/8/4/2/1-byte accesses as the
    alignment allows, against the CPU."""
    rng = np.random.default_rng(14)
    for shape in ((1000,), (257, 1), (300, 3), (300, 4), (100, 5, 7), (64, 16), (33, 8, 2)):
        a = (rng.standard_normal(shape) * 10).astype(np.float64)
        xc = pcs.tensor(a).to(dtype)
        x = xc.cuda()
        i = rng.integers(-shape[0], shape[0], size=(37,))
        i2 = rng.integers(-shape[0], shape[0], size=(5, 6))
        for got, want in ((x[C(i)], xc[pcs.tensor(i)]),
                          (x[C(i2)], xc[pcs.tensor(i2)]),
                          (x.index_select(0, C(i % shape[0])), xc.index_select(0, pcs.tensor(i % shape[0]))),
                          (x.take(C(i2)), xc.take(pcs.tensor(i2))),
                          (x[1:][C(i % (shape[0] - 1))], xc[1:][pcs.tensor(i % (shape[0] - 1))]),
                          (x[C(i), ...], xc[pcs.tensor(i), ...])):
            assert got.shape == want.shape
            np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())
        if len(shape) > 1:  # rows not contiguous: the general kernel
            got, want = x[:, :1][C(i)], xc[:, :1][pcs.tensor(i)]
            np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())
            got, want = x.t()[:, C(i)] if len(shape) == 2 else x[:, C([0, -1])], \
                xc.t()[:, pcs.tensor(i)] if len(shape) == 2 else xc[:, pcs.tensor([0, -1])]
            np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())
    if dtype == pcs.float32:
        x = C(np.arange(12.0, dtype=np.float32).reshape(4, 3))
        for call in (lambda: x[C([0, 4])], lambda: x.index_select(0, C([-5])),
                     lambda: x[C([[1, 2], [3, 9]])]):
            with pytest.raises(IndexError, match="out of bounds for dimension 0 with size 4"):
                call()
                pcs.cuda.synchronize()
        assert x[C([3, -4])].cpu().tolist() == [[9.0, 10.0, 11.0], [0.0, 1.0, 2.0]]


@pytest.mark.parametrize("dtype", ["bool", "int16", "float32", "float64", "complex128"])
def test_compaction_one_block_and_cub_sizes(dtype):
    """nonzero and masked_select select in one block up to 8192 elements and
    through CUB above: both sides of that edge, all-false and all-true
    inputs, against NumPy, in order."""
    rng = np.random.default_rng(23)
    dt = getattr(pcs, dtype)
    for n in (1, 31, 8191, 8192, 8193, 20000):
        for kind in ("random", "none", "all"):
            m = rng.random(n) < 0.3 if kind == "random" else np.full(n, kind == "all")
            v = np.where(m, rng.integers(1, 9, size=n), 0)
            x = C(v.astype(np.float64)).to(dt)
            np.testing.assert_array_equal(x.nonzero().cpu().numpy(), np.nonzero(v)[0][:, None])
            np.testing.assert_array_equal(x.view(-1, 1).nonzero().cpu().numpy()[:, 0], np.nonzero(v)[0])
            vals = C(rng.standard_normal(n).astype(np.float32))
            got = vals.masked_select(C(m)).cpu().numpy()
            np.testing.assert_array_equal(got, vals.cpu().numpy()[m])
            np.testing.assert_array_equal(x[C(m)].cpu().numpy(), x.cpu().numpy()[m])


def test_small_compaction_count_through_host_signal():
    """Up to 8192 elements the selecting kernel hands its count to the host
    through host-mapped memory (runtime/host_signal.c): right behind a long
    queue on the stream (the wait gives up spinning and blocks), on a side
    stream, and from several threads at once (the wait releases the GIL)."""
    import threading
    rng = np.random.default_rng(31)
    v = rng.integers(0, 3, size=5000)
    x = C(v.astype(np.float32))
    want = np.nonzero(v)[0]
    pcs.cuda._sleep(50_000_000)  # tens of milliseconds of work ahead on the stream
    np.testing.assert_array_equal(x.nonzero().cpu().numpy()[:, 0], want)
    s = pcs.cuda.Stream()
    with pcs.cuda.stream(s):
        pcs.cuda._sleep(5_000_000)
        got = x[x > 0]
        np.testing.assert_array_equal(got.cpu().numpy(), v[v > 0].astype(np.float32))
    errors = []

    def work(k):
        try:
            for _ in range(50):
                y = x + k  # every element non-zero for k > 0
                assert y.nonzero().shape == (5000, 1)
                assert y[x > 0].shape == (len(want),)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in (1, 2, 3, 4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_mask_fast_paths():
    """x[mask] with a whole-shape mask is masked_select; x[mask] = number is
    masked_fill_ (no synchronisation), same results as the general path."""
    rng = np.random.default_rng(15)
    for shape in ((1000,), (30, 7), (4, 5, 6)):
        a = rng.standard_normal(shape).astype(np.float32)
        m = rng.random(shape) < 0.4
        x, mc = C(a), C(m)
        np.testing.assert_array_equal(x[mc].cpu().numpy(), a[m])
        np.testing.assert_array_equal(x[(mc,)].cpu().numpy(), a[m])
        rev = tuple(range(len(shape)))[::-1]  # a transposed (non-contiguous) view and mask
        np.testing.assert_array_equal(x.permute(rev)[mc.permute(rev)].cpu().numpy(), a.T[m.T])
        y = x.clone()
        y[mc] = 2.5
        np.testing.assert_array_equal(y.cpu().numpy(), np.where(m, np.float32(2.5), a))
        z = C(a).to(pcs.int32)
        z[mc] = -4
        np.testing.assert_array_equal(z.cpu().numpy(), np.where(m, -4, a.astype(np.int32)))
    assert C(np.zeros((0, 3), np.float32))[C(np.zeros((0, 3), bool))].shape == (0,)
