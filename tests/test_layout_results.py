"""The layout of new results and the reductions over separated dims
(issue 13).

A new elementwise result takes its inputs' memory order, as torch's
TensorIterator does: a.t() + b.t() is transposed itself, so the op reads and
writes contiguously. Checked against the rule's known answers on both
devices, and stride for stride against torch where torch is installed.

Reductions whose reduced dims are two runs in memory (x.sum((0, 2)) of a
contiguous 3-D x) run in two passes over the input in place on CUDA; they
are compared here with NumPy in float64, for every op, and must be
bit-identical from run to run."""
import itertools

import numpy as np
import pytest

import pycuda_sem as torch

try:
    import torch as real_torch
except ImportError:  # the CPU test machines have no torch
    real_torch = None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]


def rand(shape, device, dtype="float32", seed=0):
    rng = np.random.default_rng(seed)
    return torch.tensor(rng.standard_normal(shape).tolist(), dtype=getattr(torch, dtype), device=device)


@pytest.mark.parametrize("device", DEVICES)
def test_result_follows_input_memory_order(device):
    a, b = rand((6, 5), device), rand((6, 5), device, seed=1)
    assert (a.t() + b.t()).stride() == (1, 5)
    bt = rand((5, 6), device, seed=2)
    assert (a.t() + bt).stride() == (1, 5)         # the first input decides
    assert (bt + a.t()).stride() == (6, 1)
    assert a.t().exp().stride() == (1, 5)
    assert (a.t() > 0).stride() == (1, 5)
    c = rand((4, 5, 6), device)
    p = c.permute(2, 0, 1)
    assert (p + p).stride() == p.stride()
    assert (p * 2).stride() == p.stride()
    row = rand((1, 6), device)
    assert (a.t() + row).stride() == (1, 5)        # broadcast inputs do not decide
    np.testing.assert_allclose((a.t() + b.t()).cpu().numpy(),
                               a.cpu().numpy().T + b.cpu().numpy().T, rtol=1e-6)
    # contiguous inputs keep a contiguous result, size-1 dims included
    d = rand((3, 1, 4), device)
    assert (d + d).is_contiguous() and (d + 1).is_contiguous()


@pytest.mark.skipif(real_torch is None, reason="needs torch as the oracle")
@pytest.mark.parametrize("device", DEVICES)
def test_result_strides_match_torch(device):
    rng = np.random.default_rng(5)
    for trial in range(200):
        nd = int(rng.integers(1, 5))
        shape = [int(rng.integers(1, 5)) for _ in range(nd)]
        views = []
        for _ in range(2):
            perm = [int(i) for i in rng.permutation(nd)]
            base_shape = [shape[i] for i in perm]
            inv = [int(i) for i in np.argsort(perm)]
            keep = [s if rng.random() < 0.8 else 1 for s in shape]
            vals = rng.standard_normal(base_shape).astype(np.float32)
            t = real_torch.tensor(vals).permute(*inv)
            o = torch.tensor(vals.tolist(), device=device).permute(*inv)
            idx = tuple(slice(0, k) for k in keep)
            views.append((t[idx], o[idx]))
        (ta, oa), (tb, ob) = views
        want = (ta + tb).stride()
        got = (oa + ob).stride()
        assert got == want, (shape, ta.stride(), tb.stride(), ta.shape, tb.shape)


REDUCTIONS = {
    "sum": (lambda x, d: x.sum(d), lambda x, d: x.sum(d)),
    "mean": (lambda x, d: x.mean(d), lambda x, d: x.mean(d)),
    "prod": (lambda x, d: x.prod(d), lambda x, d: x.prod(d)),
    "amax": (lambda x, d: x.amax(d), lambda x, d: x.max(d)),
    "amin": (lambda x, d: x.amin(d), lambda x, d: x.min(d)),
    "all": (lambda x, d: x.all(d), lambda x, d: (x != 0).all(d)),
    "any": (lambda x, d: x.any(d), lambda x, d: (x != 0).any(d)),
    "norm": (lambda x, d: x.norm(dim=d), lambda x, d: np.sqrt((x * x).sum(d))),
    "logsumexp": (lambda x, d: x.logsumexp(d), lambda x, d: np.log(np.exp(x).sum(d))),
    "var": (lambda x, d: x.var(d), lambda x, d: x.var(d, ddof=1)),
}
TOL = {"float32": 1e-4, "float64": 1e-10, "float16": 1e-2, "bfloat16": 4e-2, "int64": 0}


def host(t):
    return (t.float() if t.dtype == torch.bfloat16 else t).cpu().numpy().astype(np.float64)


@pytest.mark.cuda
@pytest.mark.usefixtures("balanced")
@pytest.mark.parametrize("op", sorted(REDUCTIONS))
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64"])
def test_reductions_over_two_runs(op, dtype):
    if dtype == "int64" and op in ("mean", "norm", "logsumexp", "var"):
        pytest.skip("floating-point only")
    if dtype == "bfloat16" and op == "prod":
        pytest.skip("bfloat16 products of many factors are not compared")
    rng = np.random.default_rng(3)
    cases = [((6, 5, 7), (0, 2)), ((3, 4, 5, 6), (1, 3)), ((3, 4, 5, 6), (0, 2)),
             ((3, 4, 5, 6), (0, 1, 3)), ((2, 3, 4, 5, 6), (1, 3)), ((40, 33, 130), (0, 2)),
             ((300, 3, 4, 2), (0, 2))]
    for shape, dims in cases:
        if dtype == "int64":
            xn = rng.integers(-3, 4, size=shape).astype(np.float64)
            if op == "prod":  # +-1: exact in int64 however many factors
                xn = rng.choice([-1.0, 1.0], size=shape)
        elif op == "prod":
            xn = 1 + 0.01 * rng.standard_normal(shape)
        else:
            xn = rng.standard_normal(shape)
        x = torch.tensor(xn.tolist(), dtype=getattr(torch, dtype), device="cuda")
        xn = host(x)
        mine, ref = REDUCTIONS[op]
        got = host(mine(x, dims))
        want = ref(xn, dims)
        tol = TOL[dtype] * (10 if op == "prod" else 1)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=str((op, shape, dims)))
        np.testing.assert_array_equal(host(mine(x, dims)), got)  # same bits on a second run


@pytest.mark.cuda
@pytest.mark.usefixtures("balanced")
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_two_run_sum_large(dtype):
    torch.manual_seed(1)
    x = torch.randn(256, 64, 1024, device="cuda").to(getattr(torch, dtype))
    xn = host(x)
    got = host(x.sum((0, 2)))
    want = xn.sum((0, 2))
    tol = 1e-4 if dtype == "float32" else 2e-3
    # float16 results are rounded once, from a float accumulator
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())
    for keep in (False, True):
        r = x.mean((0, 2), keepdim=keep)
        assert tuple(r.shape) == ((1, 64, 1) if keep else (64,))
    # reduced runs that are not two (three runs, a stepped input) still work
    y = x[:, :, ::2]
    np.testing.assert_allclose(host(y.sum((0, 2))), xn[:, :, ::2].sum((0, 2)),
                               rtol=tol, atol=tol * np.abs(want).max())
    z = x.reshape(4, 64, 64, 8, 128)
    np.testing.assert_allclose(host(z.sum((0, 2, 4))), xn.reshape(4, 64, 64, 8, 128).sum((0, 2, 4)),
                               rtol=tol, atol=tol * np.abs(want).max())


@pytest.mark.cuda
@pytest.mark.usefixtures("balanced")
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int64", "uint8"])
def test_broadcast_rows_and_columns(dtype):
    """The broadcast-row kernel: a + row, a + column, expanded operands,
    where(), with widths that are and are not whole 16-byte packs."""
    rng = np.random.default_rng(9)
    for rows, cols in itertools.product((1, 3, 64), (8, 16, 24, 7, 1000, 1024)):
        kind = "int" if dtype in ("int64", "uint8") else "float"
        gen = (lambda s: rng.integers(0, 9, size=s)) if kind == "int" else rng.standard_normal
        an, rn, cn = gen((rows, cols)), gen((1, cols)), gen((rows, 1))
        a = torch.tensor(an.tolist(), dtype=getattr(torch, dtype), device="cuda")
        r = torch.tensor(rn.tolist(), dtype=getattr(torch, dtype), device="cuda")
        c = torch.tensor(cn.tolist(), dtype=getattr(torch, dtype), device="cuda")
        an, rn, cn = host(a), host(r), host(c)
        tol = TOL.get(dtype, 0)
        np.testing.assert_allclose(host(a + r), an + rn, rtol=tol, atol=tol)
        np.testing.assert_allclose(host(a * c), an * cn, rtol=tol, atol=tol)
        np.testing.assert_allclose(host(r + c), rn + cn, rtol=tol, atol=tol)
        np.testing.assert_allclose(host(a * r.expand(rows, cols)), an * rn, rtol=tol, atol=tol)
        np.testing.assert_array_equal((a > r).cpu().numpy(), an > rn)
        w = torch.where(a > c, a, r)
        np.testing.assert_allclose(host(w), np.where(an > cn, an, rn), rtol=tol, atol=tol)
        out = torch.empty(rows, cols, dtype=a.dtype, device="cuda")
        torch.add(a, r, out=out)
        np.testing.assert_allclose(host(out), an + rn, rtol=tol, atol=tol)
