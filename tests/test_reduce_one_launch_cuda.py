"""Reductions split over blocks combine their splits in the launch that
computed them (issue 13), for inputs up to 16 MiB: the last block of a
column tile (outer) or of a row (inner, whole-tensor) to finish reads every
split's partial, counting in counters the stream lends
(runtime/stream_semaphores.c) and leaving them zero. Streams that lend none
(an ExternalStream around another library's stream) and bigger inputs take
two launches.

Checked here, against NumPy in float64: every reduction kind through the
split path on the default stream, on a pool stream and on an external
stream; aligned, misaligned and odd widths; results bit-identical from run
to run; and many different split reductions queued back to back without a
wait, each of which would read a wrong result if the one before had left a
counter that was not zero."""
import numpy as np
import pytest

import pycuda_sem as torch

pytestmark = [pytest.mark.cuda, pytest.mark.usefixtures("balanced")]

TOL = {"float32": 1e-4, "float16": 2e-2, "bfloat16": 5e-2}

# [A, K, B] views whose outer reduction is split over blocks (few column
# tiles, many rows): square-ish, tall, a middle dim, B of 37 (no vector
# loads, a tile part empty) and of 4 (one thread a column group).
# The last three are 16 to 64 MiB: two launches, the splits walking
# interleaved chunks of K (more than 16 splits) and the second pass giving
# each output one warp (66 splits) or four (512 and 528 splits).
CASES = [((8192, 512), 0), ((16384, 256), 0), ((1024, 4096), 0), ((3, 700, 520), 1),
         ((20000, 37), 0), ((50000, 4), 0), ((8192, 1024), 0), ((1 << 19, 16), 0), ((1 << 18, 64), 0)]
# Rows long enough to be split over blocks (few rows): whole tensors and a few rows.
INNER = [((1 << 20,), 0), ((256, 1000), (0, 1)), ((64, 65536), 1), ((8, 1 << 20), 1), ((3, 1 << 21), 1)]


def host(t):
    if t.dtype == torch.bfloat16:
        t = t.float()
    return t.cpu().numpy().astype(np.float64)


def make(rng, shape, dtype):
    xn = rng.standard_normal(shape).astype(np.float32)
    x = torch.from_numpy(xn).to("cuda").to(getattr(torch, dtype))
    return x, host(x)


def run_ops(x, dim):
    """Every kind of the split path, launched without a wait in between."""
    vals, idx = x.max(dim)
    return {
        "sum": x.sum(dim), "mean": x.mean(dim), "amax": x.amax(dim), "amin": x.amin(dim),
        "var": x.var(dim), "norm": x.norm(dim=dim), "logsumexp": x.float().logsumexp(dim),
        "argmax": x.argmax(dim), "max": vals, "max_idx": idx,
    }


def check(res, xn, dim, dtype):
    tol = TOL[dtype]
    want = {
        "sum": xn.sum(dim), "mean": xn.mean(dim), "amax": xn.max(dim), "amin": xn.min(dim),
        "var": xn.var(dim, ddof=1), "norm": np.sqrt((xn * xn).sum(dim)),
        "logsumexp": np.log(np.exp(xn).sum(dim)),
    }
    scale = np.sqrt(xn.shape[dim])  # a sum of K unit normals is about sqrt(K)
    for k, w in want.items():
        np.testing.assert_allclose(host(res[k]), w, rtol=tol, atol=tol * scale, err_msg=k)
    np.testing.assert_array_equal(res["argmax"].cpu().numpy(), xn.argmax(dim))
    np.testing.assert_array_equal(res["max_idx"].cpu().numpy(), xn.argmax(dim))
    np.testing.assert_array_equal(host(res["max"]), xn.max(dim))


def external_stream():
    real = pytest.importorskip("torch")
    if not real.cuda.is_available():
        pytest.skip("torch without CUDA: no stream outside the pool to wrap")
    return real, real.cuda.Stream()


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("shape,dim", CASES)
def test_split_outer_reductions_default_and_pool_stream(shape, dim, dtype):
    rng = np.random.default_rng(CASES.index((shape, dim)) * 3 + list(TOL).index(dtype))
    x, xn = make(rng, shape, dtype)
    first = run_ops(x, dim)
    check(first, xn, dim, dtype)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        again = run_ops(x, dim)
    torch.cuda.current_stream().wait_stream(s)
    for k in first:  # the same plan on both streams: the same bits
        np.testing.assert_array_equal(host(again[k]), host(first[k]), err_msg=k)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_split_outer_reductions_external_stream(dtype):
    real, ts = external_stream()
    rng = np.random.default_rng(7)
    for shape, dim in CASES[:4]:
        x, xn = make(rng, shape, dtype)
        torch.cuda.synchronize()
        ext = torch.cuda.ExternalStream(ts.cuda_stream)
        with torch.cuda.stream(ext):
            res = run_ops(x, dim)
            ext.synchronize()
        check(res, xn, dim, dtype)
        # the two-launch path there, one launch here: both within tolerance of NumPy
        check(run_ops(x, dim), xn, dim, dtype)


def test_split_outer_misaligned_start():
    """A 2-byte input that starts 2 bytes past a 16-byte line keeps the vector
    plan's split count with single loads; its tiles differ from the aligned
    plan's, and so does its counter use."""
    rng = np.random.default_rng(5)
    base = rng.standard_normal(8192 * 512 + 1).astype(np.float32)
    xb = torch.from_numpy(base).to("cuda").half()
    x = xb[1:].view(8192, 512)
    xn = host(x)
    check(run_ops(x, 0), xn, 0, "float16")


def test_counters_left_zero_back_to_back():
    """Many split reductions of different plans queued with no wait: a launch
    that left a tile's counter above zero would make the next launch's tile
    finish early, before all its splits, and read wrong sums."""
    rng = np.random.default_rng(9)
    inputs = [make(rng, shape, "float32") + (dim,) for shape, dim in CASES]
    queued = []
    for rep in range(4):
        for x, xn, dim in inputs:
            queued.append((x.sum(dim), xn.sum(dim), xn.shape[dim]))
            queued.append((x.argmax(dim), xn.argmax(dim), None))
    for got, want, k in queued:
        if k is None:
            np.testing.assert_array_equal(got.cpu().numpy(), want)
        else:
            np.testing.assert_allclose(host(got), want, rtol=1e-4, atol=1e-4 * np.sqrt(k))


@pytest.mark.parametrize("shape,dim", CASES[:3])
def test_split_outer_bit_identical_runs(shape, dim):
    rng = np.random.default_rng(1)
    x, _ = make(rng, shape, "float16")
    first = host(x.sum(dim))
    for _ in range(5):
        np.testing.assert_array_equal(host(x.sum(dim)), first)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_split_inner_reductions(dtype):
    rng = np.random.default_rng(21 + list(TOL).index(dtype))
    tol = TOL[dtype]
    queued = []
    for shape, dim in INNER:
        x, xn = make(rng, shape, dtype)
        k = xn.size if isinstance(dim, tuple) else xn.shape[dim]
        queued.append((x, xn, dim, k, x.sum(dim), x.mean(dim), x.amax(dim), x.var(dim), x.norm(dim=dim)))
    for x, xn, dim, k, sm, mn, mx, vr, nm in queued:  # launched back to back, read after
        ax = dim
        np.testing.assert_allclose(host(sm), xn.sum(ax), rtol=tol, atol=tol * np.sqrt(k))
        np.testing.assert_allclose(host(mn), xn.mean(ax), rtol=tol, atol=tol)
        np.testing.assert_array_equal(host(mx), xn.max(ax))
        np.testing.assert_allclose(host(vr), xn.var(ax, ddof=1), rtol=tol, atol=tol)
        np.testing.assert_allclose(host(nm), np.sqrt((xn * xn).sum(ax)), rtol=tol, atol=tol)
        first = host(x.sum(dim))
        for _ in range(3):  # one plan, one order: the same bits every run
            np.testing.assert_array_equal(host(x.sum(dim)), first)
    x, xn = make(rng, (1 << 20,), dtype)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        on_pool = x.sum()
    torch.cuda.current_stream().wait_stream(s)
    np.testing.assert_array_equal(host(on_pool), host(x.sum()))
    np.testing.assert_array_equal(x.argmax().cpu().numpy(), xn.argmax())
