"""Every layout on the GPU (issue 13): random shapes up to 5 dims, permuted,
stepped, offset, broadcast and expanded operands through the iteration core
(elementwise ops, copies) and every reduction kind over every dim set, with
keepdim, compared against NumPy in float64; reductions bit-identical from run
to run; one >2^31-element test for the 64-bit path."""
import itertools

import numpy as np
import pytest

import pycuda_sem as torch

pytestmark = [pytest.mark.cuda, pytest.mark.usefixtures("balanced")]

DTYPES = ["float32", "float64", "float16", "bfloat16", "int32", "int64", "uint8"]
TOL = {"float16": 2e-2, "bfloat16": 5e-2, "float32": 1e-4, "float64": 1e-10}


def host(t):
    if t.dtype == torch.bfloat16:
        t = t.float()
    return t.cpu().numpy().astype(np.float64)


def random_view(rng, shape, dtype, device="cuda"):
    """A tensor of `shape` seen through a random layout: a bigger base,
    permuted, stepped and offset; returns (view, NumPy float64 copy)."""
    nd = len(shape)
    perm = rng.permutation(nd)
    steps = [int(rng.integers(1, 3)) for _ in range(nd)]
    offs = [int(rng.integers(0, 2)) for _ in range(nd)]
    base_shape = [shape[perm[i]] * steps[perm[i]] + offs[perm[i]] for i in range(nd)]
    vals = rng.integers(0, 7, size=base_shape) if dtype in ("int32", "int64", "uint8") \
        else rng.standard_normal(base_shape)
    base = torch.tensor(np.asarray(vals).tolist(), dtype=getattr(torch, dtype), device=device)
    inv = np.argsort(perm)
    v = base.permute(*[int(i) for i in inv]) if nd else base
    idx = tuple(slice(offs[d], offs[d] + shape[d] * steps[d], steps[d]) for d in range(nd))
    v = v[idx] if nd else v
    assert tuple(v.shape) == tuple(shape)
    return v, host(v)


def random_shape(rng, nd, big=6):
    return [int(rng.integers(1, big)) for _ in range(nd)]


def close(got, want, dtype):
    if dtype in TOL:
        np.testing.assert_allclose(got, want, rtol=TOL[dtype], atol=TOL[dtype])
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", DTYPES)
def test_random_layouts_elementwise_and_copy(dtype):
    rng = np.random.default_rng(13 + DTYPES.index(dtype))
    for trial in range(25):
        nd = int(rng.integers(0, 6))
        shape = random_shape(rng, nd)
        a, an = random_view(rng, shape, dtype)
        # b broadcasts: some dims 1, some missing, sometimes an expanded view
        bshape = [s if rng.random() < 0.6 else 1 for s in shape][int(rng.integers(0, nd + 1)) if nd else 0:]
        b, bn = random_view(rng, bshape, dtype)
        if rng.random() < 0.3 and nd:
            b = b.expand(*shape)
        close(host(a + b), an + bn, dtype)
        close(host(a * b), an * bn, dtype)
        # copy into a random destination layout, and contiguous()
        d, _ = random_view(rng, shape, dtype)
        d.copy_(a)
        close(host(d), an, dtype)
        close(host(a.contiguous()), an, dtype)
        if nd >= 2:
            p = [int(i) for i in rng.permutation(nd)]
            close(host(a.permute(*p).contiguous()), np.transpose(an, p), dtype)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "int64", "float64"])
def test_dense_rows_at_any_alignment(dtype):
    """Operands whose rows are contiguous but start anywhere (sliced views,
    a contiguous run that starts mid-pack), rows long enough for the
    row-by-row kernel, with broadcast along and across the rows."""
    rng = np.random.default_rng(3 + len(dtype))
    rows, cols = 37, 1100
    ints = dtype == "int64"

    def make(shape):
        v = rng.integers(-5, 6, size=shape) if ints else rng.standard_normal(shape)
        return torch.tensor(np.asarray(v).tolist(), dtype=getattr(torch, dtype), device="cuda")

    a, b = make((rows, cols + 3)), make((rows + 1, cols + 2))
    col, row = make((rows, 1)), make((1, cols + 1))
    av, bv = a[:, 1:1 + cols], b[1:, 2:]
    an, bn = host(av), host(bv)
    close(host(av + bv), an + bn, dtype)
    close(host(-av), -an, dtype)
    close(host(av * col), an * host(col), dtype)            # stride 0 along the rows
    close(host(av - row[:, 1:]), an - host(row)[:, 1:], dtype)  # a misaligned row for every row
    if not ints:
        close(host(torch.where(av > 0, av, bv)), np.where(an > 0, an, bn), dtype)
        w = col.abs()  # a ternary op with one operand broadcast along the rows
        close(host(torch.lerp(av, bv, w)), an + host(w) * (bn - an), dtype)
    flat = make((5001,))
    close(host(flat[1:] + flat[:-1]), host(flat)[1:] + host(flat)[:-1], dtype)  # 1-D, mid-pack
    out = torch.empty(rows, cols + 1, dtype=av.dtype, device="cuda")[:, 1:]  # a misaligned output
    torch.add(av, bv, out=out)
    close(host(out), an + bn, dtype)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "int64", "uint8", "float64"])
def test_image_broadcasts_by_rows(dtype):
    """Broadcasts whose plan keeps two to four dims with every operand's
    rows contiguous or stride 0 (a per-channel bias of an image batch, a
    mask shared by the channels, a row shared by a dim in the middle), at
    row lengths that are and are not whole 16-byte packs, with offset
    operands, in binary, ternary and comparison ops."""
    rng = np.random.default_rng(29 + len(dtype))
    ints = dtype in ("int64", "uint8")

    def make(shape):
        v = rng.integers(0, 9, size=shape) if ints else rng.standard_normal(shape)
        return torch.tensor(np.asarray(v).tolist(), dtype=getattr(torch, dtype), device="cuda")

    for n, c, h, w in [(3, 5, 4, 16), (2, 7, 8, 8), (2, 3, 5, 7), (4, 6, 1, 32), (2, 3, 4, 48)]:
        x = make((n, c, h, w))
        xn = host(x)
        for other in [(1, c, 1, 1), (n, 1, h, w), (n, c, 1, w), (1, c, h, 1), (n, 1, 1, w), (1, 1, h, w)]:
            b = make(other)
            close(host(x + b), xn + host(b), dtype)
            close(host(b * x), host(b) * xn, dtype)
            np.testing.assert_array_equal(host(x > b), (xn > host(b)).astype(np.float64))
        bias, scale = make((1, c, 1, 1)), make((1, c, 1, 1))
        if not ints:
            close(host(torch.addcmul(bias, x, scale)), host(bias) + xn * host(scale), dtype)
            m = make((n, 1, h, w))
            close(host(torch.where(m > 0, x, bias)), np.where(host(m) > 0, xn, host(bias)), dtype)
        big = make((n, c, h, w + 8))
        off = big[..., 8:]  # rows that start one pack in: still whole packs for narrow types
        close(host(off + bias), host(big)[..., 8:] + host(bias), dtype)
        odd = big[..., 1:w + 1]  # rows that start mid-pack: the element-wise path
        close(host(odd * scale), host(big)[..., 1:w + 1] * host(scale), dtype)
    x5, b5 = make((2, 3, 2, 3, 16)), make((1, 3, 1, 3, 1))  # four dims of rows, the most it takes
    close(host(x5 + b5), host(x5) + host(b5), dtype)
    x6, b6 = make((2, 3, 2, 3, 2, 16)), make((1, 3, 1, 3, 1, 16))  # five: element by element
    close(host(x6 + b6), host(x6) + host(b6), dtype)


def _np(t):
    """NumPy has no bfloat16: its values exactly, as float32."""
    return (t.float() if t.dtype == torch.bfloat16 else t).cpu().numpy()


@pytest.mark.parametrize("dtype", ["int64", "float32", "float16"])
def test_mixed_layouts_restaged(dtype):
    """Big mixed layouts: a binary op with one input in another order
    (a + b.t()) tiles it in the same pass; a ternary op copies that input
    into the result (the tiled transpose) and runs in place: 2-D and 3-D
    results, a broadcast third operand, alpha, and out= that is not
    contiguous."""
    rng = np.random.default_rng(7)
    dt = getattr(torch, dtype)

    def make(shape):
        v = rng.integers(-50, 50, size=shape)
        return torch.tensor(v.tolist(), dtype=dt, device="cuda"), v

    rows = {"int64": 4100, "float32": 8195, "float16": 16390}[dtype]
    a, an = make((rows, 1024))
    b, bn = make((1024, rows))
    np.testing.assert_array_equal(_np(a + b.t()), (an + bn.T).astype(_np(a).dtype))
    np.testing.assert_array_equal(_np(torch.add(a, b.t(), alpha=2)), (an + 2 * bn.T).astype(_np(a).dtype))
    c, cn = make((1, 1024))
    np.testing.assert_array_equal(_np(torch.where(c > 0, a, b.t())), np.where(cn > 0, an, bn.T))
    x, xn = make((6, 700, 1000))
    y, yn = make((6, 1000, 700))
    np.testing.assert_array_equal(_np(x - y.transpose(1, 2)), xn - yn.transpose(0, 2, 1))
    out = torch.zeros(1024, rows, dtype=dt, device="cuda").t()  # not contiguous
    torch.add(a, b.t(), out=out)
    np.testing.assert_array_equal(_np(out), (an + bn.T).astype(_np(a).dtype))


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int16", "int32", "int64", "float16", "bfloat16",
                                   "float32", "float64", "complex64", "complex128"])
def test_binary_one_transposed_input(dtype):
    """A binary op whose one input is transposed against the result runs as
    one tiled pass (kernels/ew_tiled.cuh): either input transposed, whole and
    edge tiles, a broadcast or scalar other operand, comparisons (bool out),
    3-D batches, reversed and stepped transposed inputs; exact against
    NumPy on integer values."""
    rng = np.random.default_rng(17)
    dt = getattr(torch, dtype)
    cplx = dtype.startswith("complex")

    def make(shape):
        v = rng.integers(0, 2, size=shape) if dtype == "bool" else rng.integers(1, 9, size=shape)
        v = v.astype(bool) if dtype == "bool" else v
        if cplx:
            v = v + 1j * rng.integers(-4, 4, size=shape)
        return torch.tensor(v.tolist(), dtype=dt, device="cuda"), v

    def check(got, want):
        np.testing.assert_array_equal(_np(got), np.asarray(want).astype(_np(got).dtype))

    arith = dtype != "bool"
    for rows, cols in ((17, 33), (64, 64), (100, 130), (257, 70)):
        a, an = make((rows, cols))
        b, bn = make((cols, rows))
        if arith:
            check(a + b.t(), an + bn.T)
            check(b.t() - a, bn.T - an)                       # the first input transposed
            check(torch.mul(a, b.t()), an * bn.T)
            c, cn = make((rows, 1))                           # broadcast along the result's rows
            check(c + b.t(), cn + bn.T)
            r, rn = make((1, cols))
            check(b.t() * r, bn.T * rn)
            out = torch.empty(rows, cols, dtype=dt, device="cuda")
            torch.add(b.t(), 3, out=out)                      # a scalar other operand
            check(out, bn.T + 3)
            check(b.flip(0).t() + a, bn[::-1].T + an)          # reversed transposed input
        if not cplx:
            check(a < b.t(), an < bn.T)
            check(torch.eq(b.t(), a), bn.T == an)
            if dtype not in ("float16", "bfloat16", "float32", "float64"):
                check(a & b.t() if dtype == "bool" else a ^ b.t(),
                      an & bn.T if dtype == "bool" else an ^ bn.T)
    x, xn = make((3, 70, 90))
    y, yn = make((3, 90, 70))
    if arith:
        check(x - y.transpose(1, 2), xn - yn.transpose(0, 2, 1))
        z, zn = make((180, 70))
        check(x[0] + z[::2].t(), xn[0] + zn[::2].T)           # stepped transposed input
    else:
        check(x | y.transpose(1, 2), xn | yn.transpose(0, 2, 1))


@pytest.mark.parametrize("dtype", ["uint8", "float16", "float32", "int64", "complex64"])
def test_stepped_long_rows(dtype):
    """Inputs stepped along rows long enough for the division-free row
    kernel (ew_dense_rows takes any input stride up to 64 along the row;
    larger steps go through ew_strided): unary, binary and ternary ops, 1-D
    and 2-D, mixed with broadcast and contiguous operands; exact against
    NumPy on integer values."""
    rng = np.random.default_rng(29)
    dt = getattr(torch, dtype)

    def make(shape):
        v = rng.integers(1, 9, size=shape)
        return torch.tensor(v.tolist(), dtype=dt, device="cuda"), v

    def check(got, want):
        np.testing.assert_array_equal(_np(got), np.asarray(want).astype(_np(got).dtype))

    for step in (2, 3, 64, 65):
        cols = 700
        a, an = make((5, cols * step + 1))
        b, bn = make((5, cols))
        r, rn = make((1, cols))
        check(a[:, 1::step][:, :cols] + b, an[:, 1::step][:, :cols] + bn)
        check(a[:, ::step][:, :cols] * r, an[:, ::step][:, :cols] * rn)
        check(-a[:, ::step][:, :cols], -an[:, ::step][:, :cols])
        m = torch.tensor((bn > 4).tolist(), device="cuda")
        check(torch.where(m, a[:, ::step][:, :cols], b), np.where(bn > 4, an[:, ::step][:, :cols], bn))
        x, xn = make((cols * step,))
        check(x[::step] - b[0], xn[::step] - bn[0])


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int32", "int16", "uint8", "int64"])
def test_stepped_by_two_rows(dtype):
    """Inputs stepped by 2 along rows (the common a[:, ::2]), mixed with
    contiguous, broadcast and scalar operands, in rows of even and odd
    lengths, at offsets that do and do not start on a 16-byte boundary, in
    one row (a plan that coalesced to one dim) and many; exact against
    NumPy on integer values."""
    rng = np.random.default_rng(31)
    dt = getattr(torch, dtype)

    def make(shape):
        v = rng.integers(1, 9, size=shape)
        return torch.tensor(v.tolist(), dtype=dt, device="cuda"), v

    def check(got, want):
        np.testing.assert_array_equal(_np(got), np.asarray(want).astype(_np(got).dtype))

    for rows, cols in [(7, 1024), (3, 1000), (1, 4096), (5, 1030), (2, 8192)]:
        a, an = make((rows, 2 * cols + 8))
        b, bn = make((rows, 2 * cols + 8))
        c, cn = make((rows, cols))
        r, rn = make((1, cols))
        k, kn = make((rows, 1))
        sa, sb = a[:, :2 * cols:2], b[:, :2 * cols:2]
        na, nb = an[:, :2 * cols:2], bn[:, :2 * cols:2]
        check(sa + sb, na + nb)
        check(sa * c, na * cn)
        check(c - sa if dtype != "uint8" else c + sa, cn - na if dtype != "uint8" else cn + na)
        check(sa + r, na + rn)
        check(k * sa, kn * na)
        check(sa * 3, na * 3)
        check(sa > sb, na > nb)
        check(torch.where(sb > 4, sa, c), np.where(nb > 4, na, cn))
        for off in (1, 2, 4, 8):  # starts on a pack or not, depending on the dtype
            check(a[:, off:off + 2 * cols:2] + sb, an[:, off:off + 2 * cols:2] + nb)
        flat, fn = make((2 * rows * cols,))
        check(flat[::2] + c.reshape(-1), fn[::2] + cn.reshape(-1))


@pytest.mark.parametrize("dtype", ["uint8", "float16", "float32", "int64", "complex128"])
def test_row_copies_move_as_wide_words(dtype):
    """Same-dtype copies whose fastest dim is contiguous on both sides move as
    16-, 8- or 4-byte words when the row length, the other strides and both
    addresses allow (cat and stack along a later dim, sliced rows), else
    element by element: every combination of column offset and row length
    lands exactly."""
    vals = np.arange(6 * 7 * 72).reshape(6, 7, 72) % 253
    src = torch.tensor(vals.tolist(), dtype=getattr(torch, dtype), device="cuda")
    # (destination column, source column, row length)
    for off, so, n in [(0, 0, 64), (0, 8, 32), (8, 0, 48), (2, 2, 32), (1, 1, 64), (4, 0, 60),
                       (0, 2, 70), (3, 5, 5), (16, 4, 56)]:
        dst = torch.zeros(6, 7, 80, dtype=src.dtype, device="cuda")
        dst[:, :, off:off + n] = src[:, :, so:so + n]
        want = np.zeros((6, 7, 80))
        want[:, :, off:off + n] = vals[:, :, so:so + n]
        np.testing.assert_array_equal(_np(dst), want.astype(_np(dst).dtype))
        dst = torch.zeros(6, 7, 80, dtype=src.dtype, device="cuda")
        dst[:, ::2, off:off + n] = src[:, 3:, :n]  # strided outer dims
        want = np.zeros((6, 7, 80))
        want[:, ::2, off:off + n] = vals[:, 3:, :n]
        np.testing.assert_array_equal(_np(dst), want.astype(_np(dst).dtype))
    a, b = src[:, :, :64], src[:, :, 8:72]
    for dim in (1, 2):
        np.testing.assert_array_equal(_np(torch.cat([a, b], dim)),
                                      np.concatenate([vals[:, :, :64], vals[:, :, 8:72]], dim))
        np.testing.assert_array_equal(_np(torch.stack([a, b], dim)),
                                      np.stack([vals[:, :, :64], vals[:, :, 8:72]], dim))


@pytest.mark.parametrize("shape", [(64, 48), (1000, 3), (3, 1000), (33, 65), (5, 40, 37), (17, 1, 130),
                                   (128, 192), (2, 64, 128)])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int64", "uint8", "complex64"])
def test_transposed_copies(shape, dtype):
    vals = np.arange(int(np.prod(shape))).reshape(shape) % 251
    x = torch.tensor(vals.tolist(), dtype=getattr(torch, dtype), device="cuda")
    for p in itertools.permutations(range(len(shape))):
        got = _np(x.permute(*p).contiguous())
        np.testing.assert_array_equal(got, np.transpose(vals, p).astype(got.dtype))
    y = torch.empty(*shape[::-1], dtype=x.dtype, device="cuda")
    y.copy_(x.permute(*range(len(shape) - 1, -1, -1)))
    np.testing.assert_array_equal(_np(y), np.transpose(vals).astype(got.dtype))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "int16", "float32", "int32"])
def test_pair_transposes_misaligned_and_offset(dtype):
    """2- and 4-byte transposes of whole 64-tiles move pairs of elements; a
    view that starts at an odd element, or an odd row stride, takes the
    element path."""
    vals = np.arange(130 * 256).reshape(130, 256) % 241
    x = torch.tensor(vals.tolist(), dtype=getattr(torch, dtype), device="cuda")
    for view, ref in ((x[1:129, 1:129], vals[1:129, 1:129]),    # odd start
                      (x[2:130, :128], vals[2:130, :128]),      # even start, rows of 256
                      (x[:128, :192].t(), vals[:128, :192].T)):   # a transposed source
        got = _np(view.t().contiguous())
        np.testing.assert_array_equal(got, ref.T.astype(got.dtype))
    big = np.arange(2 * 256 * 384).reshape(2, 256, 384) % 239  # whole tiles for both sizes
    xb = torch.tensor(big.tolist(), dtype=getattr(torch, dtype), device="cuda")
    for p in ((0, 2, 1), (2, 1, 0), (1, 2, 0)):
        got = _np(xb.permute(*p).contiguous())
        np.testing.assert_array_equal(got, np.transpose(big, p).astype(got.dtype))
    y = torch.tensor((vals[:, :255] % 7).tolist(), dtype=getattr(torch, dtype), device="cuda")[:128]
    got = _np(y[:, :192].t().contiguous())  # odd row stride (255)
    np.testing.assert_array_equal(got, (vals[:128, :192] % 7).T.astype(got.dtype))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "int16", "float32", "int32"])
def test_quad_transposes(dtype):
    """2- and 4-byte transposes of whole tiles (128 and 64 source rows) move
    words of four elements when both sides are aligned to a word (8 and 16 bytes)
    and every stride is a multiple of 4; starts and strides that are only
    even take the pairs path; both agree with NumPy, in 2-D, in 3-D permutes
    and into a preallocated strided destination."""
    dt = getattr(torch, dtype)
    vals = np.arange(260 * 392).reshape(260, 392) % 251
    x = torch.tensor(vals.tolist(), dtype=dt, device="cuda")
    for r0, c0, r1, c1 in ((0, 0, 256, 384),    # aligned: quads
                           (0, 4, 256, 388),    # start 4 elements in: quads
                           (0, 2, 256, 386),    # start 2 elements in: pairs
                           (2, 8, 130, 264),    # 128 x 256 whole tiles, row stride 392
                           (0, 0, 192, 384)):   # 192 rows: quads for 4 bytes, not for 2
        got = _np(x[r0:r1, c0:c1].t().contiguous())
        np.testing.assert_array_equal(got, vals[r0:r1, c0:c1].T.astype(got.dtype))
    y = torch.tensor((vals[:256, :386] % 13).tolist(), dtype=dt, device="cuda")
    got = _np(y[:, :384].t().contiguous())     # row stride 386: even, not a multiple of 4
    np.testing.assert_array_equal(got, (vals[:256, :384] % 13).T.astype(got.dtype))
    big = np.arange(3 * 256 * 384).reshape(3, 256, 384) % 239
    xb = torch.tensor(big.tolist(), dtype=dt, device="cuda")
    for p in ((0, 2, 1), (2, 1, 0)):
        got = _np(xb.permute(*p).contiguous())
        np.testing.assert_array_equal(got, np.transpose(big, p).astype(got.dtype))
    out = torch.zeros(384, 260, dtype=dt, device="cuda")[:, :256]  # destination rows of 260
    out.copy_(x[:256, :384].t())
    np.testing.assert_array_equal(_np(out), vals[:256, :384].T.astype(_np(out).dtype))


REDUCTIONS = {
    "sum": lambda x, d, k: x.sum(d, keepdim=k),
    "mean": lambda x, d, k: x.mean(d, keepdim=k),
    "prod": lambda x, d, k: x.prod(d, keepdim=k),
    "amax": lambda x, d, k: x.amax(d, keepdim=k),
    "amin": lambda x, d, k: x.amin(d, keepdim=k),
    "all": lambda x, d, k: x.all(d, keepdim=k),
    "any": lambda x, d, k: x.any(d, keepdim=k),
    "var": lambda x, d, k: x.var(d, keepdim=k),
    "std": lambda x, d, k: x.std(d, keepdim=k),
    "norm": lambda x, d, k: x.norm(dim=d, keepdim=k),
    "logsumexp": lambda x, d, k: x.logsumexp(d, keepdim=k),
}
NP_REDUCTIONS = {
    "sum": lambda x, d, k: x.sum(d, keepdims=k),
    "mean": lambda x, d, k: x.mean(d, keepdims=k),
    "prod": lambda x, d, k: x.prod(d, keepdims=k),
    "amax": lambda x, d, k: x.max(d, keepdims=k),
    "amin": lambda x, d, k: x.min(d, keepdims=k),
    "all": lambda x, d, k: (x != 0).all(d, keepdims=k),
    "any": lambda x, d, k: (x != 0).any(d, keepdims=k),
    "var": lambda x, d, k: x.var(d, ddof=1, keepdims=k),
    "std": lambda x, d, k: x.std(d, ddof=1, keepdims=k),
    "norm": lambda x, d, k: np.sqrt((x * x).sum(d, keepdims=k)),
    "logsumexp": lambda x, d, k: np.log(np.exp(x).sum(d, keepdims=k)),
}


@pytest.mark.parametrize("op", sorted(REDUCTIONS))
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64"])
def test_reductions_every_dim_set(op, dtype):
    if op in ("mean", "var", "std", "norm", "logsumexp") and dtype == "int64":
        pytest.skip("floating-point only")
    rng = np.random.default_rng(7)
    for nd in (1, 2, 3, 4):
        shape = random_shape(rng, nd, big=7 if nd < 4 else 5)
        x, xn = random_view(rng, shape, dtype)
        if op == "prod" and dtype != "int64":
            x, xn = x * 0.5 + 1, xn * 0.5 + 1  # keep products of order 1
            xn = host(x)
        for r in range(1, nd + 1):
            for dims in itertools.combinations(range(nd), r):
                keep = bool(rng.integers(0, 2))
                if op in ("var", "std") and np.prod([shape[d] for d in dims]) < 2:
                    continue
                got = host(REDUCTIONS[op](x, dims, keep))
                want = NP_REDUCTIONS[op](xn, dims, keep)
                assert got.shape == want.shape, (op, shape, dims, keep)
                tol = max(TOL.get(dtype, 0), 1e-5) * (10 if op in ("var", "std", "prod") else 1)
                np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=str((op, shape, dims)))


@pytest.mark.parametrize("dtype", ["float32", "float16", "int64"])
def test_max_min_argmax_every_dim(dtype):
    rng = np.random.default_rng(11)
    for shape in ([7, 300], [300, 7], [5, 64, 9], [3, 4, 5, 6]):
        x, xn = random_view(rng, shape, dtype)
        for d in range(len(shape)):
            for keep in (False, True):
                v, i = x.max(d, keepdim=keep)
                np.testing.assert_array_equal(host(v), xn.max(d, keepdims=keep))
                ii = i.cpu().numpy()
                taken = np.take_along_axis(xn, ii if keep else np.expand_dims(ii, d), d)
                np.testing.assert_array_equal(taken.squeeze(d) if not keep else taken,
                                              xn.max(d, keepdims=keep))
                np.testing.assert_array_equal(x.argmin(d, keepdim=keep).cpu().numpy(),
                                              xn.argmin(d) if not keep else np.expand_dims(xn.argmin(d), d))


@pytest.mark.parametrize("shape,dim", [((8192, 4096), 0), ((64, 20000, 33), 1), ((4, 1 << 20), 1),
                                       ((1 << 20, 3), 0), ((1 << 19, 64), 0), ((2000, 2000), (0, 1))])
def test_reductions_bit_identical_runs(shape, dim):
    torch.manual_seed(0)
    x = torch.randn(*shape, device="cuda")
    for op in ("sum", "mean", "var", "norm", "logsumexp", "amax"):
        f = REDUCTIONS[op]
        first = f(x, dim, False).cpu().numpy()
        for _ in range(3):
            np.testing.assert_array_equal(f(x, dim, False).cpu().numpy(), first)
    i0 = x.argmax(0).cpu().numpy()
    np.testing.assert_array_equal(x.argmax(0).cpu().numpy(), i0)


def test_outer_reduction_matches_numpy_large():
    rng = np.random.default_rng(3)
    xn = rng.standard_normal((4096, 1000)).astype(np.float32)
    x = torch.tensor(xn.tolist(), device="cuda")
    np.testing.assert_allclose(x.sum(0).cpu().numpy(), xn.astype(np.float64).sum(0), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(x.t().sum(1).cpu().numpy(), xn.astype(np.float64).sum(0), rtol=1e-4, atol=1e-3)
    np.testing.assert_array_equal(x.argmax(0).cpu().numpy(), xn.argmax(0))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "int16", "uint8"])
def test_outer_reductions_every_width(dtype):
    """Outer reductions of narrow types load 4 columns a thread when B is a
    multiple of 4, else one; a misaligned start takes single loads with the
    same plan. Every case, against NumPy. (8 columns of 2-byte types were
    measured: 13 % slower on the H100.)"""
    rng = np.random.default_rng(11)
    dt = getattr(torch, dtype)
    for cols in (64, 1000, 36, 70, 37):  # multiples of 8 and of 4, of 2, odd
        # distinct integers down each column (exact in every dtype here; no ties)
        vals = np.stack([rng.permutation(200) for _ in range(cols + 1)], axis=1)
        vals = vals - (0 if dtype == "uint8" else 100)
        base = torch.tensor(vals.tolist(), dtype=dt, device="cuda")
        for x, xn in ((base[:, :cols].contiguous(), vals[:, :cols]),  # aligned
                      (base.flatten()[1:1 + 200 * cols].view(200, cols),  # misaligned start
                       vals.flatten()[1:1 + 200 * cols].reshape(200, cols))):
            np.testing.assert_allclose(host(x.sum(0)), xn.sum(0), rtol=1e-2, atol=1e-6)
            np.testing.assert_array_equal(host(x.amax(0)), xn.max(0))
            np.testing.assert_array_equal(x.argmax(0).cpu().numpy(), xn.argmax(0))
            if dtype in ("float16", "bfloat16"):
                np.testing.assert_allclose(host(x.mean(0)), xn.mean(0), rtol=1e-2, atol=1e-2)
                np.testing.assert_allclose(host(x.var(0)), xn.var(0, ddof=1), rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "uint8"])
def test_inner_reductions_narrow_groups(dtype):
    """Rows of 2048 or more, with rows enough to fill the GPU, are reduced by
    a group narrowed from 512 threads until each thread has four 16-byte
    packs (128 at the least); row lengths that give exactly four packs, two
    and a tail, and no whole packs (a misaligned start) all agree with
    NumPy in float64, and repeat bit for bit."""
    rng = np.random.default_rng(5)
    dt = getattr(torch, dtype)
    rows = 4096
    for cols in (4096, 2056, 3001, 8192):
        # small integers: exact in every dtype, sums exact in float32
        lo = 0 if dtype == "uint8" else -8
        vals = rng.integers(lo, lo + 16, size=(rows, cols + 1))
        base = torch.tensor(vals, dtype=dt, device="cuda")
        for x, xn in ((base[:, :cols].contiguous(), vals[:, :cols]),
                      (base.flatten()[1:1 + rows * cols].view(rows, cols),
                       vals.flatten()[1:1 + rows * cols].reshape(rows, cols))):
            got = x.sum(1)
            # float32 accumulation is exact here; a 16-bit result rounds once
            rtol = {"float16": 1e-3, "bfloat16": 8e-3}.get(dtype, 1e-7)
            np.testing.assert_allclose(host(got), xn.sum(1), rtol=rtol)
            np.testing.assert_array_equal(host(x.sum(1)), host(got))  # the same bits again
            np.testing.assert_array_equal(host(x.amax(1)), xn.max(1))
            if dtype != "uint8":
                np.testing.assert_allclose(host(x.mean(1)), xn.mean(1), rtol=1e-2, atol=1e-3)


def test_64bit_path_over_2_31_elements():
    free, _ = torch.cuda.mem_get_info()
    if free < 10 * (1 << 30):
        pytest.skip("needs ~10 GB of free GPU memory")
    n = (1 << 31) + 4096
    x = torch.ones(2, n // 2, dtype=torch.uint8, device="cuda")
    y = x[:, ::1].t()  # [n/2, 2], transposed
    c = y.contiguous()  # a copy over > 2^31 elements, transposed
    assert int(c.sum().item()) == n
    # y + y runs in y's own memory order (contiguous, 64-bit counts); y + c
    # mixes two orders (c is staged through the result by the transposing
    # copy); a broadcast column takes the strided path with 64-bit offsets
    z = y + y
    assert z.stride() == y.stride()
    assert int(z[-1, 1].item()) == 2 and int(z[0, 0].item()) == 2
    del z
    z = y.add(c, alpha=2)
    assert int(z[-1, 1].item()) == 3 and int(z[0, 0].item()) == 3
    del z, c
    z = y + x[:1].t()  # [n/2, 2] + [n/2, 1]
    assert z.shape == (n // 2, 2)
    assert int(z[-1, 1].item()) == 2 and int(z[0, 0].item()) == 2
    del z
    x[1, -1] = 5
    assert int(x.sum().item()) == n + 4
    assert int(x.amax().item()) == 5
    assert int(x.sum(0)[-1].item()) == 6  # outer reduction, 2^30 outputs
