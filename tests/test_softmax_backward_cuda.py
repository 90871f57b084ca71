"""The gradient of softmax / log_softmax on CUDA: the one-kernel backward
(kernels/softmax_bwd.cu, _C._softmax_backward), against a float64 NumPy
reference of the formula for every floating dtype: over the last dim short
rows (a group of lanes a row for rows of whole 16-byte packs, else a warp a
row, several rows a warp), long rows (a block a row, with and
without 16-byte packs, with g kept in shared memory or read twice), views off
the 16-byte grid and an expanded incoming gradient; over other dims (32
neighbouring lines a block); autograd's composed path (create_graph) agrees
with it; torch's backward where torch is installed; bad arguments raise.
The allocator returns to its baseline after each test."""
import numpy as np
import pytest

import pycuda_sem as pcs

pytestmark = [pytest.mark.cuda, pytest.mark.usefixtures("balanced")]

from torch_oracle import _torch, needs_torch  # noqa: E402

DTYPES = [pcs.float32, pcs.float64, pcs.float16, pcs.bfloat16]
# rtol against the float64 reference of the stored values; atol grows with
# the row's length (the row's sum enters every element)
TOL = {pcs.float32: (1e-5, 1e-6), pcs.float64: (1e-12, 1e-14), pcs.float16: (2e-3, 1e-3),
       pcs.bfloat16: (1.6e-2, 8e-3)}
SHAPES = [(67, 1), (67, 7), (67, 32), (67, 50), (513, 77), (300, 197), (33, 1000), (33, 1024),
          (9, 1025), (9, 4099), (5, 50257), (4, 3, 100)]


def host(t):
    t = t.cpu()
    return (t.float() if t.dtype == pcs.bfloat16 else t).numpy().astype(np.float64)


def rand(shape, dtype, seed, scale=2.0):
    a = np.random.default_rng(seed).standard_normal(shape) * scale
    return pcs.tensor(a.astype(np.float32), device="cuda").to(dtype)


def reference(g, y, log, dim=-1):
    if log:
        return g - np.exp(y) * g.sum(dim, keepdims=True)
    return y * (g - (g * y).sum(dim, keepdims=True))


def check(gx, g, y, log):
    rtol, atol = TOL[y.dtype]
    K = y.shape[-1] if y.dim() else 1
    assert gx.dtype == y.dtype and gx.shape == y.shape and gx.device == y.device
    np.testing.assert_allclose(host(gx), reference(host(g), host(y), log), rtol=rtol,
                               atol=atol * max(1.0, np.sqrt(K)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("shape", SHAPES)
def test_one_kernel_matches_the_formula(dtype, log, shape):
    x = rand(shape, dtype, seed=shape[-1])
    y = (pcs.log_softmax if log else pcs.softmax)(x, -1)
    g = rand(shape, dtype, seed=shape[-1] + 1)
    check(pcs._C._softmax_backward(g, y, -1, log), g, y, log)


@pytest.mark.parametrize("dtype", [pcs.float32, pcs.float16])
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("K", [32, 77, 1025, 4100])
def test_views_off_the_16_byte_grid(dtype, log, K):
    # every row one element off a 16-byte boundary (the scalar block path for
    # long rows), and a transposed grad that is copied to contiguous first
    rows = 11
    base = rand((rows * K + 1,), dtype, seed=K)
    x = base[1:].view(rows, K)
    y = (pcs.log_softmax if log else pcs.softmax)(x, -1)
    ybase = pcs.empty(rows * K + 1, dtype=dtype, device="cuda")
    yv = ybase[1:].view(rows, K)
    yv.copy_(y)
    g = rand((K, rows), dtype, seed=K + 2).t()
    check(pcs._C._softmax_backward(g, yv, 1, log), g, yv, log)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("packs", [1, 2, 3, 8, 13, 32, 33])
def test_rows_of_whole_16_byte_packs(dtype, log, packs):
    # rows of whole 16-byte packs (a group of lanes a row, four groups a
    # warp in flight): every group width, 33 packs past the vector kernel,
    # and a row count that cuts the last warp's groups short
    K = packs * 16 // {pcs.float32: 4, pcs.float64: 8}.get(dtype, 2)
    shape = (4099, K)
    x = rand(shape, dtype, seed=packs)
    y = (pcs.log_softmax if log else pcs.softmax)(x, -1)
    g = rand(shape, dtype, seed=packs + 1)
    check(pcs._C._softmax_backward(g, y, -1, log), g, y, log)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("rows,K", [(300, 1025), (300, 1500), (300, 3000), (300, 6000), (300, 12000),
                                    (5000, 1500), (300, 16384)])
def test_rows_in_registers_by_block_size(dtype, log, rows, K):
    # rows held in registers, 4 packs of g and y a thread of the smallest
    # block of 64 to 512 threads that holds them (float64 past 4096 values,
    # float32 past 8192 and 16-bit past 16384 take the block kernel); 5000
    # rows loop over the grid; K = 1025 (and 1500 in 16 bits) start rows off
    # the 16-byte grid, so each has a scalar head and tail
    x = rand((rows, K), dtype, seed=K + rows)
    y = (pcs.log_softmax if log else pcs.softmax)(x, -1)
    g = rand((rows, K), dtype, seed=K + 1)
    check(pcs._C._softmax_backward(g, y, -1, log), g, y, log)


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("shape", [(70001, 50), (4099, 300), (130, 20000)])
def test_many_rows_over_the_grid(log, shape):
    # more rows than the grid holds (grid-stride loops) and a last warp's
    # group of rows cut short
    x = rand(shape, pcs.float32, seed=3)
    y = (pcs.log_softmax if log else pcs.softmax)(x, -1)
    g = rand(shape, pcs.float32, seed=4)
    check(pcs._C._softmax_backward(g, y, -1, log), g, y, log)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("shape", [(64, 77), (8, 3000)])
def test_autograd_one_kernel_and_composed_agree(dtype, log, shape):
    x = rand(shape, dtype, seed=5).requires_grad_(True)
    f = pcs.log_softmax if log else pcs.softmax
    g = rand(shape, dtype, seed=6)
    (a,) = pcs.autograd.grad(f(x, -1), x, g)  # the kernel
    (b,) = pcs.autograd.grad(f(x, -1), x, g, create_graph=True)  # composed
    assert not a.requires_grad and b.requires_grad
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(host(a), host(b.detach()), rtol=2 * rtol, atol=4 * atol * np.sqrt(shape[-1]))
    check(a, g, f(x.detach(), -1), log)


@pytest.mark.parametrize("log", [False, True])
def test_expanded_incoming_gradient(log):
    # y.sum().backward() hands the formula an expanded grad of ones
    x = rand((300, 197), pcs.float32, seed=7).requires_grad_(True)
    y = (pcs.log_softmax if log else pcs.softmax)(x, -1)
    y.sum().backward()
    ones = pcs.ones(300, 197, device="cuda")
    check(x.grad, ones, y.detach(), log)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("shape,dim", [((40, 6, 5), 1), ((4, 19, 3, 7), 1), ((4, 19, 3, 7), 2),
                                       ((1000, 33), 0), ((64, 21, 600), 1), ((2, 5000, 40), 1),
                                       ((16, 21, 64, 128), 1), ((8, 40, 34), 1), ((4, 130, 64), 1)])
def test_other_dims(dtype, log, shape, dim):
    # a dim that is not the last: K up to 32 in a few lanes' registers
    # ((40, 6, 5), (64, 21, 600), (16, 21, 64, 128)); longer, 32 threads
    # down K when the lines are few ((8, 40, 34)), values kept in registers
    # up to 4 a thread, read twice past that ((4, 130, 64), (2, 5000, 40));
    # through autograd too
    f = pcs.log_softmax if log else pcs.softmax
    x = rand(shape, dtype, seed=8).requires_grad_(True)
    g = rand(shape, dtype, seed=9)
    y = f(x.detach(), dim)
    rtol, atol = TOL[dtype]
    want = reference(host(g), host(y), log, dim)
    tol = dict(rtol=rtol, atol=atol * max(1.0, np.sqrt(shape[dim])))
    np.testing.assert_allclose(host(pcs._C._softmax_backward(g, y, dim, log)), want, **tol)
    (a,) = pcs.autograd.grad(f(x, dim), x, g)
    np.testing.assert_allclose(host(a), want, **tol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("shape,dim", [((3000, 5, 2), 1), ((70000, 3, 3), 1), ((9, 32, 7), 1), ((5, 31, 130), 1),
                                       ((2, 17, 1001), 1), ((300000, 2, 2), 1), ((1, 1, 50), 1), ((64, 9), 0),
                                       ((7, 3, 5), 0), ((3, 33, 40), 1), ((16, 64, 40), 1), ((5, 40, 7), 1)])
def test_lines_in_lanes(dtype, log, shape, dim):
    # a dim of up to 32 that is not the last: g and y of a line in 1 to 4
    # lanes of a warp (softmax_lines.cuh), lines numbered across a so that
    # a small or odd B fills the warp; 16-bit lines of 33 to 64 in 8 lanes
    # (two lines a lane, or one when B is odd), float32 and float64 ones in
    # the block kernels
    x = rand(shape, dtype, seed=12)
    g = rand(shape, dtype, seed=13)
    y = (pcs.log_softmax if log else pcs.softmax)(x, dim)
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(host(pcs._C._softmax_backward(g, y, dim, log)), reference(host(g), host(y), log, dim),
                               rtol=rtol, atol=atol * max(1.0, np.sqrt(shape[dim])))


@pytest.mark.parametrize("dtype", [pcs.float16, pcs.bfloat16])
@pytest.mark.parametrize("log", [False, True])
def test_other_dims_off_the_4_byte_grid(dtype, log):
    # a 16-bit grad 2 bytes off the 4-byte grid: one line a thread
    shape = (16, 21, 64)
    n = int(np.prod(shape))
    x = rand(shape, dtype, seed=10)
    y = (pcs.log_softmax if log else pcs.softmax)(x, 1)
    g = rand((n + 1,), dtype, seed=11)[1:].view(shape)
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(host(pcs._C._softmax_backward(g, y, 1, log)), reference(host(g), host(y), log, 1),
                               rtol=rtol, atol=atol * np.sqrt(21))


@pytest.mark.parametrize("log", [False, True])
def test_double_backward_composes(log):
    f = pcs.log_softmax if log else pcs.softmax
    x = rand((3, 2, 5), pcs.float64, seed=8).requires_grad_(True)
    assert pcs.autograd.gradgradcheck(lambda t: f(t, -1), (x,))
    assert pcs.autograd.gradgradcheck(lambda t: f(t, 1), (x,))


def test_bad_arguments_raise():
    y = pcs.softmax(rand((4, 8), pcs.float32, seed=1), -1)
    g = rand((4, 8), pcs.float32, seed=2)
    bw = pcs._C._softmax_backward
    with pytest.raises(RuntimeError, match="CUDA"):
        bw(g.cpu(), y.cpu(), -1, False)
    with pytest.raises(RuntimeError, match="floating dtype"):
        bw(g.double(), y, -1, False)
    with pytest.raises(RuntimeError, match="floating dtype"):
        bw(g.long(), y.long(), -1, False)
    with pytest.raises(RuntimeError, match="same shape"):
        bw(g[:3], y, -1, False)
    with pytest.raises(IndexError):
        bw(g, y, 2, True)
    with pytest.raises(TypeError):
        bw(g, None, -1, True)
    # the process goes on computing
    check(bw(g, y, -1, False), g, y, False)


@needs_torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4096, 77), (1024, 1000), (16, 32768)])
def test_against_torch(dtype, shape):
    a = np.random.default_rng(12).standard_normal(shape).astype(np.float32) * 3
    ga = np.random.default_rng(13).standard_normal(shape).astype(np.float32)
    tdt = {pcs.float32: _torch.float32, pcs.float64: _torch.float64,
           pcs.float16: _torch.float16, pcs.bfloat16: _torch.bfloat16}[dtype]
    rtol, atol = TOL[dtype]
    for ours, theirs in ((pcs.softmax, _torch.softmax), (pcs.log_softmax, _torch.log_softmax)):
        x = pcs.tensor(a, device="cuda").to(dtype).requires_grad_(True)
        ours(x, -1).backward(pcs.tensor(ga, device="cuda").to(dtype))
        tx = _torch.from_numpy(a).cuda().to(tdt).requires_grad_(True)
        theirs(tx, -1).backward(_torch.from_numpy(ga).cuda().to(tdt))
        np.testing.assert_allclose(host(x.grad), tx.grad.double().cpu().numpy(), rtol=2 * rtol,
                                   atol=4 * atol * np.sqrt(shape[-1]))
