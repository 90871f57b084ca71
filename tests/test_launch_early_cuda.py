"""Kernels launched early (programmatic dependent launch, kernels/pdl.cuh):
the reductions, the elementwise kernels, the copies and the fills are
scheduled while the kernel ahead of them in the stream is still running,
and each waits on the device for that kernel before it reads or writes
memory (issue 13).

A kernel that read too early would see its input half updated, and one that
wrote too early would change what the kernel ahead was still reading. So
every test here queues a writer and then the early-launched kernel, with no
wait in between, many times over, and checks every result exactly: the
inputs hold small integers of both signs, negated by the writer each
round, so that float32 sums of them are exact whatever the order of the
additions."""
import numpy as np
import pytest

import pycuda_sem as torch

pytestmark = [pytest.mark.cuda, pytest.mark.usefixtures("balanced")]

ROUNDS = 6


def ints(rng, shape, dtype="float32"):
    xn = rng.integers(-8, 9, size=shape).astype(np.float64)
    return torch.from_numpy(xn.astype(np.float32)).to("cuda").to(getattr(torch, dtype)), xn


def host(t):
    if t.dtype in (torch.bfloat16, torch.float16):
        t = t.float()
    return t.cpu().numpy().astype(np.float64)


# (shape, reduction, path): one launch with the stream's counters, two
# launches, no split, inner rows, whole tensor, two runs in memory.
REDUCTIONS = [
    ((512, 768), lambda x: x.sum(0), "outer, one launch"),
    ((4096, 2048), lambda x: x.sum(0), "outer, two launches (32 MiB)"),
    ((64, 65536), lambda x: x.sum(0), "outer, no split"),
    ((2048, 4096), lambda x: x.amax(0), "outer amax, two launches"),
    ((4096, 2048), lambda x: x.sum(1), "inner rows"),
    ((1 << 23,), lambda x: x.sum(), "whole tensor, two launches"),
    ((1 << 18,), lambda x: x.sum(), "whole tensor, one launch"),
    ((64, 256, 64), lambda x: x.sum((0, 2)), "two runs"),
]


@pytest.mark.parametrize("shape,op,name", REDUCTIONS, ids=[r[2] for r in REDUCTIONS])
def test_reduction_reads_what_the_kernel_ahead_wrote(shape, op, name):
    rng = np.random.default_rng(len(shape) * 1000 + shape[-1])
    x, xn = ints(rng, shape)
    queued = []
    for i in range(ROUNDS):
        x.mul_(-1)  # the writer: every nonzero element changes
        queued.append(op(x))
    for i, got in enumerate(queued):
        want = op(torch.from_numpy(xn * (-1) ** (i + 1))).numpy()
        np.testing.assert_array_equal(host(got), want, err_msg="%s, round %d" % (name, i))


# Transposing copies, one case per kernel: 2-byte quads, 2- and 4-byte
# pairs, the element kernel (1 byte, and an odd shape), short destination
# rows, and a short side moved as 16-byte packs.
TRANSPOSES = [
    ((1024, 2048), "float16"), ((512, 768), "float32"), ((300, 500), "float32"),
    ((1024, 512), "int8"), ((8, 1 << 16), "float32"), ((1 << 16, 4), "float16"),
]


@pytest.mark.parametrize("shape,dtype", TRANSPOSES)
def test_transposed_copy_reads_what_the_kernel_ahead_wrote(shape, dtype):
    rng = np.random.default_rng(shape[0] + shape[1])
    x, xn = ints(rng, shape, "float32")
    x = x.to(getattr(torch, dtype))
    queued = []
    for i in range(ROUNDS):
        x.mul_(-1)
        queued.append(x.t().contiguous())
    for i, got in enumerate(queued):
        np.testing.assert_array_equal(host(got), (xn * (-1) ** (i + 1)).T, err_msg="round %d" % i)


def test_chain_of_early_launches():
    """Each kernel reads what the one before wrote, all launched early."""
    rng = np.random.default_rng(3)
    x, xn = ints(rng, (2048, 1024), "float16")
    queued = []
    for i in range(ROUNDS):
        x.mul_(-1)
        y = x.t().contiguous()        # transposing copy of the writer's output
        z = y.t().contiguous()        # and of the copy's
        queued.append((z.float().sum(0), y.float().sum(1), z))
    for i, (s0, s1, z) in enumerate(queued):
        want = xn * (-1) ** (i + 1)
        np.testing.assert_array_equal(host(z), want)
        np.testing.assert_array_equal(host(s0), want.sum(0))
        np.testing.assert_array_equal(host(s1), want.sum(0))


def test_early_writer_waits_for_the_reader_ahead():
    """The reduction writes its result into memory that the kernel ahead is
    still reading: it must wait for that kernel before its first write."""
    rng = np.random.default_rng(4)
    x, xn = ints(rng, (4096, 2048))
    b = torch.zeros(2048, device="cuda")
    seen = []
    for i in range(ROUNDS):
        big = b.expand(8192, 2048) * 1.0  # reads b 8192 times
        torch.sum(x, 0, out=b)             # then overwrites it
        x.mul_(-1)
        seen.append(big[-1])
    for i, row in enumerate(seen):
        want = np.zeros(2048) if i == 0 else (xn * (-1) ** (i - 1)).sum(0)
        np.testing.assert_array_equal(host(row), want, err_msg="round %d" % i)


# Elementwise kernels, one case per path of kernels/ew_ops.cuh and copy.cu:
# packed contiguous, row broadcast, stepped rows, a transposed operand (the
# tiled kernel), permuted 3-D and misaligned (the strided kernel), a unary
# and a ternary op on views, casting and same-dtype copies, and fills.
def _ew_cases():
    return [
        ("contiguous a + b", (1024, 1024), lambda x, y: x + y),
        ("row broadcast", (1024, 1024), lambda x, y: x + y[:1]),
        ("stepped", (1024, 2048), lambda x, y: x[:, ::2] + y[:, ::2]),
        ("transposed operand", (1024, 1024), lambda x, y: x + y.t()),
        ("permuted 3-D", (64, 128, 96), lambda x, y: x.permute(2, 0, 1) * y.permute(2, 0, 1)),
        ("misaligned", (1 << 20,), lambda x, y: x[1:] - y[1:]),
        ("unary on a view", (1024, 1024), lambda x, y: x.t().neg()),
        ("ternary", (1024, 1024), lambda x, y: torch.where(x > 0, x, y)),
        ("cast, contiguous", (1024, 1024), lambda x, y: x.to(torch.float16)),
        ("cast, transposed", (1024, 1024), lambda x, y: x.t().to(torch.int32)),
        ("copy of a stepped view", (1024, 2048), lambda x, y: x[:, ::2].contiguous()),
    ]


EW = _ew_cases()


@pytest.mark.parametrize("name,shape,op", EW, ids=[c[0] for c in EW])
def test_elementwise_reads_what_the_kernel_ahead_wrote(name, shape, op):
    """The writer negates both inputs; the op that follows must see them
    negated, and the next round's writer must not change them under it."""
    rng = np.random.default_rng(len(name))
    x, xn = ints(rng, shape)
    y, yn = ints(rng, shape)
    ref = op(torch.from_numpy(xn.astype(np.float32)), torch.from_numpy(yn.astype(np.float32)))
    want_dtype = ref.dtype
    queued = []
    for i in range(ROUNDS):
        x.mul_(-1)
        y.mul_(-1)
        queued.append(op(x, y))
    for i, got in enumerate(queued):
        sgn = (-1) ** (i + 1)
        want = op(torch.from_numpy((xn * sgn).astype(np.float32)), torch.from_numpy((yn * sgn).astype(np.float32)))
        assert got.dtype == want_dtype
        np.testing.assert_array_equal(host(got), host(want), err_msg="%s, round %d" % (name, i))


@pytest.mark.parametrize("view", ["contiguous", "stepped"])
def test_fill_waits_for_the_reader_ahead(view):
    """fill_ overwrites memory that the kernel ahead is still reading."""
    b = torch.zeros(4096, device="cuda")
    target = b if view == "contiguous" else b[::2]
    seen = []
    for i in range(ROUNDS):
        seen.append(b.expand(4096, 4096) * 1.0)  # reads b 4096 times
        target.fill_(i + 1)
    for i, big in enumerate(seen):
        want = np.zeros(4096)  # round i reads what round i - 1 filled in
        if view == "contiguous":
            want[:] = i
        else:
            want[::2] = i
        np.testing.assert_array_equal(host(big[-1]), want, err_msg="round %d" % i)
        np.testing.assert_array_equal(host(big[0]), want, err_msg="round %d" % i)


# The row kernels launched early too (softmax and its backward, the norms,
# the loss, the gathers and scatters, joins, scans, tril): each reads what
# the writer ahead of it negated. The reference is the same op on the CPU.
def _row_cases():
    F = torch.nn.functional

    def grad_of(f):
        def run(x):
            leaf = x.detach().requires_grad_()
            (g,) = torch.autograd.grad(f(leaf), leaf, grad_outputs=x * x * x + x * x)  # reads x again
            return g
        return run

    idx = torch.tensor([5, 0, 3, 3, 7, 1])
    return [
        ("softmax, warp rows", (4096, 32), lambda x: x.softmax(-1)),
        ("softmax, block rows", (256, 3000), lambda x: x.softmax(-1)),
        ("softmax, long rows", (4, 200000), lambda x: x.softmax(-1)),
        ("log_softmax over dim 0", (512, 256), lambda x: x.log_softmax(0)),
        ("softmax backward", (512, 1000), grad_of(lambda t: t.softmax(-1))),
        ("log_softmax backward, warp rows", (4096, 32), grad_of(lambda t: t.log_softmax(-1))),
        ("layer_norm", (512, 768), lambda x: F.layer_norm(x, (768,))),
        ("layer_norm backward", (512, 768), grad_of(lambda t: F.layer_norm(t, (768,)))),
        ("cross_entropy", (1024, 100), lambda x: F.cross_entropy(x, (x[:, 0] > 0).long() * 7, reduction="none")),
        ("index_select", (64, 4096), lambda x: x.index_select(0, idx.to(x.device))),
        ("gather", (64, 4096), lambda x: x.gather(1, (x > 0).long())),
        ("index_add", (64, 4096), lambda x: torch.zeros(8, 4096, device=x.device).index_add_(0, idx.to(x.device), x[:6])),
        ("cat", (512, 1024), lambda x: torch.cat([x, x[:, :7]], 1)),
        ("cumsum along rows", (512, 1024), lambda x: x.cumsum(1)),
        ("cumsum down columns", (1024, 512), lambda x: x.cumsum(0)),
        ("tril", (1024, 1024), lambda x: x.tril(3)),
    ]


ROWS = _row_cases()


@pytest.mark.parametrize("name,shape,op", ROWS, ids=[c[0] for c in ROWS])
def test_row_kernels_read_what_the_kernel_ahead_wrote(name, shape, op):
    rng = np.random.default_rng(len(name) * 7 + shape[0])
    x, xn = ints(rng, shape)
    queued = []
    for i in range(ROUNDS):
        x.mul_(-1)
        queued.append(op(x))
    for i, got in enumerate(queued):
        want = host(op(torch.from_numpy((xn * (-1) ** (i + 1)).astype(np.float32))))
        np.testing.assert_allclose(host(got), want, rtol=2e-5, atol=2e-5 * np.abs(want).max(),
                                   err_msg="%s, round %d" % (name, i))


FACTORIES = [
    ("arange", lambda n: torch.arange(n, dtype=torch.float32, device="cuda")),
    ("linspace", lambda n: torch.linspace(0, 1, n, device="cuda")),
    ("logspace", lambda n: torch.logspace(0, 1, n, device="cuda")),
    ("eye", lambda n: torch.eye(64, n // 64, device="cuda")),
    ("rand", lambda n: torch.rand(n, device="cuda")),
    ("randn", lambda n: torch.randn(n, device="cuda")),
]


@pytest.mark.parametrize("name,make", FACTORIES, ids=[f[0] for f in FACTORIES])
def test_factory_waits_for_the_reader_ahead(name, make):
    """A factory's result lands in a block the caching allocator just took
    back from a tensor that the kernel ahead is still reading."""
    n = 4096
    seen, keep, reused = [], [], 0
    for i in range(ROUNDS):
        b = torch.full((n,), float(i + 1), device="cuda")
        ptr = b.data_ptr()
        seen.append(b.expand(4096, n) * 1.0)  # reads b 4096 times
        del b                                  # its block is free on this stream at once
        r = make(n)
        reused += r.data_ptr() == ptr
        keep.append(r)
    assert reused > 0, "the allocator never handed the freed block to the factory"
    for i, big in enumerate(seen):
        np.testing.assert_array_equal(host(big[-1]), np.full(n, i + 1.0), err_msg="round %d" % i)
