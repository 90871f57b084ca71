"""Joining, splitting and rearranging on CUDA, and the math compositions
that run on it: values against NumPy (and torch on the same data where it
is installed), views sharing storage exactly where torch's do, torch's
errors (devices, sizes), several dtypes, transposed and stepped inputs,
results on the current stream, allocator statistics back to baseline."""
import math

import numpy as np
import pytest

import pycuda_sem as pcs
import pycuda_sem.nn.functional as F

pytestmark = [pytest.mark.cuda, pytest.mark.usefixtures("balanced")]

from torch_oracle import HAVE_TORCH, _torch, needs_torch  # noqa: E402,F401

DTYPES = [pcs.float32, pcs.float64, pcs.float16, pcs.bfloat16, pcs.int64, pcs.int32, pcs.int8,
          pcs.uint8, pcs.bool, pcs.complex64, pcs.complex128]


@pytest.fixture
def balanced_warmup():
    """Overrides conftest.py's: einsum and cdist run cuBLAS, whose handle and
    workspace (made by the first product, held for the handle's life) must
    not count as a leak; nor the pinned staging a first copy may create."""
    pcs.ones(2, 2, device="cuda") @ pcs.ones(2, 2, device="cuda")
    pcs.bmm(pcs.ones(1, 2, 2, device="cuda"), pcs.ones(1, 2, 2, device="cuda"))


def np_values(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape) * 10 + 0.5
    if dtype == pcs.bool:
        return a > 0
    if dtype.is_complex:
        return (a + 1j * rng.standard_normal(shape)).astype(np.complex128)
    if not dtype.is_floating_point:
        return (np.abs(a).astype(np.int64) % 100 + 1)
    return a.astype(np.float32)


def make(shape, dtype=pcs.float32, seed=0):
    return pcs.tensor(np_values(shape, dtype, seed), device="cuda").to(dtype)


def host(t):
    t = t.cpu()
    return (t.float() if t.dtype == pcs.bfloat16 else t).numpy()


def layouts(shape, dtype=pcs.float32, seed=0):
    yield "contiguous", make(shape, dtype, seed)
    if len(shape) >= 2:
        yield "transposed", make(shape[:-2] + (shape[-1], shape[-2]), dtype, seed).transpose(-1, -2)
    yield "stepped", make(shape[:-1] + (2 * shape[-1],), dtype, seed)[..., ::2]


def same_storage(a, b):
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def to_torch(t):
    if t.dtype == pcs.bfloat16:
        return _torch.from_numpy(host(t)).cuda().bfloat16()
    return _torch.from_numpy(t.cpu().numpy().copy()).cuda()


# ---- cat, stack -------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_cat_matches_numpy(dtype, dim):
    shapes = [[3, 4, 5], [3, 4, 5], [3, 4, 5]]
    shapes[1][dim] = 2
    ts = [make(tuple(s), dtype, i) for i, s in enumerate(shapes)]
    r = pcs.cat(ts, dim)
    assert r.device == ts[0].device and r.dtype == dtype
    np.testing.assert_array_equal(host(r), np.concatenate([host(t) for t in ts], dim))


@pytest.mark.parametrize("dim", [0, 1])
def test_cat_of_strided_inputs_and_out(dim):
    for name, t in layouts((16, 24), pcs.float32, 1):
        u = make((16, 24), pcs.float32, 2)
        r = pcs.cat([t, u, t], dim)
        np.testing.assert_array_equal(host(r), np.concatenate([host(t), host(u), host(t)], dim),
                                      err_msg=name)
    a, b = make((4, 6), seed=3), make((4, 2), seed=4)
    out = pcs.empty(8, 4, device="cuda").t()  # a transposed out=
    assert pcs.cat([a, b], 1, out=out) is out
    np.testing.assert_array_equal(host(out), np.concatenate([host(a), host(b)], 1))
    out64 = pcs.empty(4, 8, dtype=pcs.float64, device="cuda")
    pcs.cat([a, b], 1, out=out64)
    np.testing.assert_array_equal(host(out64), np.concatenate([host(a), host(b)], 1))


@pytest.mark.parametrize("dim", [0, 1])
def test_cat_of_large_inputs_copies_each(dim):
    # 2.4 MB a piece: above the fused launch's limit, one copy per input
    # (cudaMemcpyAsync along dim 0, the strided copy kernel along dim 1)
    a, b = make((600, 1000), seed=30), make((600, 1000), seed=31)
    np.testing.assert_array_equal(host(pcs.cat([a, b], dim)),
                                  np.concatenate([host(a), host(b)], dim))
    np.testing.assert_array_equal(host(pcs.stack([a, b], dim)),
                                  np.stack([host(a), host(b)], dim))


def test_cat_promotes_and_skips_legacy_empty():
    a = make((2, 3), pcs.int32, 5)
    b = make((1, 3), pcs.float16, 6)
    r = pcs.cat([a, b])
    assert r.dtype == pcs.float16
    np.testing.assert_array_equal(host(r), np.concatenate([host(a), host(b)]).astype(np.float16))
    e = pcs.empty(0, dtype=pcs.float64, device="cuda")
    r = pcs.cat([e, a, e], 1)
    assert r.dtype == pcs.float64 and r.shape == (2, 3)


def test_cat_many_small_inputs():
    ts = [make((1, 3), pcs.float32, i) for i in range(300)]
    np.testing.assert_array_equal(host(pcs.cat(ts)), np.concatenate([host(t) for t in ts]))
    np.testing.assert_array_equal(host(pcs.stack(ts, 1)), np.stack([host(t) for t in ts], 1))


@pytest.mark.parametrize("dtype", [pcs.int8, pcs.float16, pcs.float32, pcs.int64, pcs.complex128])
@pytest.mark.parametrize("dim", [0, 1, 2])
def test_cat_fused_launch_for_many_small_inputs(dtype, dim):
    # more than one batch of inputs (64 a launch), sizes along dim from 0 to 4,
    # and legacy 1-D empty tensors in between
    rng = np.random.default_rng(dim)
    ts = []
    for i in range(150):
        shape = [3, 2, 5]
        shape[dim] = int(rng.integers(0, 5))
        ts.append(make(tuple(shape), dtype, i))
        if i % 40 == 0:
            ts.append(pcs.empty(0, dtype=dtype, device="cuda"))
    r = pcs.cat(ts, dim)
    ref = np.concatenate([host(t) for t in ts if t.dim() == 3], dim)
    np.testing.assert_array_equal(host(r), ref)
    other = pcs.complex128 if dtype.is_complex else pcs.float64
    mixed = ts[:5] + [ts[5].to(other)]  # a second dtype: the per-input copies
    np.testing.assert_array_equal(host(pcs.cat(mixed, dim)),
                                  np.concatenate([host(t) for t in mixed if t.dim() == 3], dim))


def test_cat_errors_name_devices_and_sizes():
    g = make((2, 3))
    with pytest.raises(RuntimeError, match=r"Expected all tensors to be on the same device, but "
                       r"found at least two devices, cuda:0 and cpu!"):
        pcs.cat([g, pcs.ones(2, 3)])
    with pytest.raises(RuntimeError, match="cpu and cuda:0"):
        pcs.cat([pcs.ones(2, 3), g])
    with pytest.raises(RuntimeError, match="same device"):
        pcs.cat([g, g], out=pcs.empty(4, 3))
    with pytest.raises(RuntimeError, match=r"Sizes of tensors must match except in dimension 1\. "
                       r"Expected size 3 but got size 4 for tensor number 1 in the list\."):
        pcs.cat([make((3, 2)), make((4, 2))], dim=1)
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        pcs.stack([make((3, 2)), make((2, 3))])


@needs_torch
def test_cat_and_stack_against_torch():
    xs = [make((5, 7), pcs.float32, 7), make((5, 7), pcs.float32, 8).t().contiguous().t()]
    for dim in (0, 1):
        np.testing.assert_array_equal(
            host(pcs.cat(xs, dim)), _torch.cat([to_torch(x) for x in xs], dim).cpu().numpy())
        np.testing.assert_array_equal(
            host(pcs.stack(xs, dim)), _torch.stack([to_torch(x) for x in xs], dim).cpu().numpy())
    with pytest.raises(RuntimeError) as ours:
        pcs.cat([make((3, 2)), make((4, 2))], dim=1)
    with pytest.raises(RuntimeError) as theirs:
        _torch.cat([_torch.ones(3, 2, device="cuda"), _torch.ones(4, 2, device="cuda")], dim=1)
    assert str(ours.value) == str(theirs.value)


# ---- views --------------------------------------------------------------------------

def test_split_family_are_views_on_the_device():
    t = make((7, 6), seed=9)
    for parts in (t.split(3), t.split([2, 5]), t.chunk(3, 1), pcs.tensor_split(t, [1, 4], 1),
                  t.tensor_split(3), pcs.unbind(t, 1)):
        for p in parts:
            assert p.device == t.device and same_storage(p, t)
    np.testing.assert_array_equal(host(t.split([2, 5])[1]), host(t)[2:])
    np.testing.assert_array_equal(host(pcs.narrow(t, 1, 2, 3)), host(t)[:, 2:5])
    assert same_storage(pcs.movedim(t, 0, 1), t) and same_storage(t.diagonal(1), t)
    assert same_storage(pcs.broadcast_to(t[:1], (3, 7, 6)), t)
    np.testing.assert_array_equal(host(t.diagonal(-2)), np.diagonal(host(t), -2))
    sections = t.tensor_split(pcs.tensor([1, 4], device="cuda"))
    assert [p.shape[0] for p in sections] == [1, 3, 3]


# ---- flip, roll, repeat, tile, repeat_interleave, tril/triu ------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_flip_matches_numpy(dtype):
    for name, t in layouts((6, 33, 40), dtype, 10):
        a = host(t)
        for dims in ([0], [2], [1, 2], [0, 1, 2]):
            r = pcs.flip(t, dims)
            assert not same_storage(r, t)
            np.testing.assert_array_equal(host(r), np.flip(a, dims), err_msg=name)
        np.testing.assert_array_equal(host(t.fliplr()), np.fliplr(a))
        np.testing.assert_array_equal(host(t.flipud()), np.flipud(a))


@pytest.mark.parametrize("dtype", [pcs.uint8, pcs.bool, pcs.int16, pcs.float16, pcs.bfloat16, pcs.float32,
                                   pcs.int64, pcs.float64, pcs.complex64, pcs.complex128])
def test_flip_last_dim_as_reversed_words(dtype):
    """flip of the last dim moves 16-, 8- or 4-byte words and reverses the
    elements inside each (copy.cu's widen) when the row width, the row
    stride and the first word's address allow; the widths and column
    offsets here land on each word size and on the element path."""
    for width in (64, 60, 62, 63, 2048):
        for off in (0, 1, 2, 3, 4):
            t = make((5, width + off), dtype, width + off)[:, off:]
            a = host(t)
            for dims in ([1], [-1], [0, 1]):
                np.testing.assert_array_equal(host(pcs.flip(t, dims)), np.flip(a, dims),
                                              err_msg="width %d offset %d dims %s" % (width, off, dims))
    t = make((2, 3, 8, 16), dtype, 5)
    a = host(t)
    for dims in ([3], [1, 3], [0, 2, 3]):
        np.testing.assert_array_equal(host(t.flip(dims)), np.flip(a, dims), err_msg=str(dims))
    out = pcs.empty((8, 16), dtype=dtype, device="cuda")
    out.copy_(t[1, 2].flip(-1))  # into an existing tensor
    np.testing.assert_array_equal(host(out), np.flip(a[1, 2], -1))


@pytest.mark.parametrize("dtype", [pcs.uint8, pcs.int16, pcs.bfloat16, pcs.float32, pcs.int64, pcs.complex128])
def test_long_row_copies_match_numpy(dtype):
    """Copies whose innermost dim is a warp long or more (copy.cu's
    copy_rows): misaligned slices, odd-width flips, stepped rows, permuted
    outer dims and strided destinations, with row widths on both sides of
    each tile size (32 lanes times 1 to 16 elements)."""
    for width in (32, 33, 63, 100, 224, 255, 256, 257, 511, 600, 1030, 2049, 4100, 8191):
        t = make((3, width + 5), dtype, width)
        a = host(t)
        cases = [("[:, 1:]", lambda x: x[:, 1:], None), ("[:, :-1]", lambda x: x[:, :-1], None),
                 ("[1:, 3:-2]", lambda x: x[1:, 3:-2], None),
                 ("flip", lambda x: x[:, 1:].flip(-1), lambda x: x[:, 1:][:, ::-1]),
                 ("flip all", lambda x: x[:, 2:].flip((0, 1)), lambda x: x[::-1, 2:][:, ::-1]),
                 ("[:, 1::2]", lambda x: x[:, 1::2], None),
                 ("flip [:, ::3]", lambda x: x.flip(-1)[:, ::3], lambda x: x[:, ::-1][:, ::3])]
        for name, f, g in cases:
            np.testing.assert_array_equal(host(f(t).contiguous()), (g or f)(a),
                                          err_msg="%s width %d" % (name, width))
        out = pcs.zeros((3, width + 5), dtype=dtype, device="cuda")
        out[:, 2:].copy_(t[:, :-2].flip(-1))  # a misaligned destination
        ref = np.zeros_like(a)
        ref[:, 2:] = a[:, :-2][:, ::-1]
        np.testing.assert_array_equal(host(out), ref, err_msg="into a slice, width %d" % width)
    t = make((4, 3, 1030), dtype, 3)  # outer dims permuted: row offsets from both outer strides
    a = host(t)
    np.testing.assert_array_equal(host(t.permute(1, 0, 2)[:, :, 1:].contiguous()),
                                  np.ascontiguousarray(a.transpose(1, 0, 2)[:, :, 1:]))
    np.testing.assert_array_equal(host(t.flatten()[3:].clone()), a.flatten()[3:])
    big = pcs.arange(600000 * 41, device="cuda").reshape(600000, 41).to(dtype)  # more tiles than warps
    np.testing.assert_array_equal(host(big[:, 1:].flip(-1).contiguous()), host(big)[:, 1:][:, ::-1])


@pytest.mark.parametrize("dtype", [pcs.float32, pcs.int64, pcs.bool, pcs.complex128, pcs.float16])
def test_roll_matches_numpy(dtype):
    for name, t in layouts((9, 40, 3), dtype, 11):
        a = host(t)
        for shifts, dims in ((1, 0), (-7, 1), ((2, 5), (0, 1)), ((1, -1, 2), (0, 1, 2))):
            np.testing.assert_array_equal(host(t.roll(shifts, dims)), np.roll(a, shifts, dims),
                                          err_msg=name)
        np.testing.assert_array_equal(host(pcs.roll(t, 100)), np.roll(a, 100))


@pytest.mark.parametrize("dtype", [pcs.float32, pcs.int16, pcs.bool, pcs.complex64, pcs.bfloat16])
def test_repeat_tile_interleave_match_numpy(dtype):
    for name, t in layouts((5, 8), dtype, 12):
        a = host(t)
        for reps in ((2, 3), (1, 1), (3, 1, 2), (2, 2, 2, 2)):
            np.testing.assert_array_equal(host(t.repeat(*reps)), np.tile(a, reps), err_msg=name)
        np.testing.assert_array_equal(host(pcs.tile(t, (3,))), np.tile(a, (3,)))
        np.testing.assert_array_equal(host(t.repeat_interleave(3, dim=1)), np.repeat(a, 3, 1))
        np.testing.assert_array_equal(host(t.repeat_interleave(2)), np.repeat(a, 2))
        counts = [3, 0, 1, 1, 2]
        r = t.repeat_interleave(pcs.tensor(counts, device="cuda"), dim=0)
        np.testing.assert_array_equal(host(r), np.repeat(a, counts, 0), err_msg=name)
    assert pcs.repeat_interleave(pcs.tensor([2, 1], device="cuda")).tolist() == [0, 0, 1]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", [0, 1, -3, 50])
def test_tril_triu_match_numpy(dtype, k):
    for name, t in layouts((3, 37, 45), dtype, 13):
        a = host(t)
        np.testing.assert_array_equal(host(pcs.tril(t, k)), np.tril(a, k), err_msg=name)
        np.testing.assert_array_equal(host(t.triu(k)), np.triu(a, k), err_msg=name)
        c = t.clone()
        c.tril_(k)  # contiguous: the kernel runs in place
        np.testing.assert_array_equal(host(c), np.tril(a, k))
        s = t.clone().transpose(1, 2)
        s.triu_(k)  # strided: computed, then copied back
        np.testing.assert_array_equal(host(s), np.triu(np.swapaxes(a, 1, 2), k))


def test_diag_diag_embed_movedim_meshgrid():
    v = make((6,), pcs.float64, 14)
    for k in (0, 2, -1):
        np.testing.assert_array_equal(host(pcs.diag(v, k)), np.diag(host(v), k))
    m = make((5, 7), pcs.int64, 15)
    np.testing.assert_array_equal(host(m.diag(1)), np.diag(host(m), 1))
    x = make((2, 4), pcs.float32, 16)
    e = pcs.diag_embed(x, 1)
    ref = np.stack([np.diag(r, 1) for r in host(x)])
    np.testing.assert_array_equal(host(e), ref)
    t = make((2, 3, 4, 5), seed=17)
    np.testing.assert_array_equal(host(pcs.movedim(t, (0, 1), (3, 0))),
                                  np.moveaxis(host(t), (0, 1), (3, 0)))
    a, b = make((3,), seed=18), make((4,), seed=19)
    for indexing in ("ij", "xy"):
        for r, ref in zip(pcs.meshgrid(a, b, indexing=indexing),
                          np.meshgrid(host(a), host(b), indexing=indexing)):
            assert r.device == a.device
            np.testing.assert_array_equal(host(r), ref)


def test_rearranging_runs_on_the_current_stream():
    x = make((1024, 1024), seed=20)
    s = pcs.cuda.Stream()
    with pcs.cuda.stream(s):  # warm the cache for s
        warm = [pcs.cat([x, x]), x.flip(0), x.roll(3, 1), x.repeat(2, 1), x.tril()]
    del warm
    pcs.cuda.synchronize()
    with pcs.cuda.stream(s):
        pcs.cuda._sleep(100_000_000)
        rs = [pcs.cat([x, x]), x.flip(0), x.roll(3, 1), x.repeat(2, 1), x.tril()]
    assert not s.query()
    s.synchronize()
    a = host(x)
    for r, ref in zip(rs, [np.concatenate([a, a]), np.flip(a, 0), np.roll(a, 3, 1),
                           np.tile(a, (2, 1)), np.tril(a)]):
        np.testing.assert_array_equal(host(r), ref)


@needs_torch
def test_rearranging_against_torch():
    x = make((6, 9, 4), pcs.float32, 21)
    tx = to_torch(x)
    pairs = [
        (pcs.flip(x, [0, 2]), _torch.flip(tx, [0, 2])),
        (x.roll((2, -3), (0, 1)), tx.roll((2, -3), (0, 1))),
        (x.repeat(2, 1, 3, 1), tx.repeat(2, 1, 3, 1)),
        (pcs.tile(x, (2,)), _torch.tile(tx, (2,))),
        (x.repeat_interleave(2, 1), tx.repeat_interleave(2, 1)),
        (pcs.tril(x, 1), _torch.tril(tx, 1)),
        (x.triu(-1), tx.triu(-1)),
        (pcs.diag_embed(x, -1, 0, 2), _torch.diag_embed(tx, -1, 0, 2)),
        (x.diagonal(1, 0, 2), tx.diagonal(1, 0, 2)),
        (pcs.movedim(x, 2, 0), _torch.movedim(tx, 2, 0)),
    ]
    for ours, theirs in pairs:
        assert tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_array_equal(host(ours), theirs.cpu().numpy())


# ---- math on the device ---------------------------------------------------------------------

def test_math_compositions_on_cuda():
    a, b = make((4, 5), pcs.float32, 22), make((5, 3), pcs.float32, 23)
    tf32 = pcs.backends.cuda.matmul.allow_tf32
    pcs.backends.cuda.matmul.allow_tf32 = False  # float32 products in float32
    try:
        r = pcs.einsum("ij,jk->ik", a, b)
        assert r.device == a.device
        np.testing.assert_allclose(host(r), host(a).astype(np.float64) @ host(b), rtol=1e-5,
                                   atol=1e-3)
        bt = make((2, 3, 4), pcs.float32, 24)
        np.testing.assert_allclose(host(pcs.einsum("bij,bkj->bik", bt, bt)),
                                   np.einsum("bij,bkj->bik", host(bt).astype(np.float64), host(bt)),
                                   rtol=1e-5, atol=1e-3)
    finally:
        pcs.backends.cuda.matmul.allow_tf32 = tf32
    x, y = make((40, 3), pcs.float64, 25), make((30, 3), pcs.float64, 26)
    ref = np.sqrt(((host(x)[:, None] - host(y)[None]) ** 2).sum(-1))
    np.testing.assert_allclose(host(pcs.cdist(x, y)), ref, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(host(pcs.cdist(x, y, 1.0)),
                               np.abs(host(x)[:, None] - host(y)[None]).sum(-1), rtol=1e-12)
    np.testing.assert_allclose(host(pcs.cross(x[:5], y[:5], dim=1)),
                               np.cross(host(x)[:5], host(y)[:5]), rtol=1e-12)
    assert math.isclose(pcs.trace(x[:3]).item(), np.trace(host(x)[:3]), rel_tol=1e-12)
    np.testing.assert_allclose(host(pcs.linalg.vector_norm(x, 3, 1)),
                               np.linalg.norm(host(x), 3, axis=1), rtol=1e-12)
    np.testing.assert_allclose(host(pcs.linalg.matrix_norm(x, 1)), np.linalg.norm(host(x), 1),
                               rtol=1e-12)
    labels = pcs.tensor([0, 3, 1], device="cuda")
    oh = F.one_hot(labels, 5)
    assert oh.device == labels.device
    np.testing.assert_array_equal(host(oh), np.eye(5, dtype=np.int64)[[0, 3, 1]])
    n = F.normalize(x, dim=1)
    np.testing.assert_allclose(host(n), host(x) / np.linalg.norm(host(x), axis=1, keepdims=True),
                               rtol=1e-12)
    assert pcs.allclose(x, x + 1e-12) and not pcs.equal(x, x + 1)
    assert pcs.isclose(x, x).all().item()
    pcs.testing.assert_close(x, x.clone())
    with pytest.raises(AssertionError, match="Tensor-likes are not close!"):
        pcs.testing.assert_close(x, x + 1)
    with pytest.raises(AssertionError, match="attribute 'device'"):
        pcs.testing.assert_close(x, x.cpu())
