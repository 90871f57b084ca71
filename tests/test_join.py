"""Joining, splitting and rearranging on the CPU, against NumPy: cat, stack,
hstack/vstack/dstack, split, chunk, tensor_split, unbind, narrow, flip, roll,
repeat, tile, repeat_interleave, movedim, swapaxes, tril/triu, diag,
diagonal, diag_embed, meshgrid, broadcasting, atleast_*. Views where torch
gives views (shared storage), torch's errors, random inputs (never zeros),
several dtypes, transposed and stepped inputs."""
import numpy as np
import pytest

import pycuda_sem as pcs

DTYPES = [pcs.float32, pcs.float64, pcs.int64, pcs.int32, pcs.int16, pcs.uint8, pcs.bool,
          pcs.float16, pcs.complex64]


def rand(shape, dtype=pcs.float32, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape) * 10 + 0.5
    if dtype == pcs.bool:
        a = a > 0
    elif dtype.is_complex:
        a = a + 1j * rng.standard_normal(shape)
    elif not dtype.is_floating_point:
        a = np.abs(a).astype(np.int64) % 100 + 1
    t = pcs.tensor(a.tolist() if a.ndim else a.item(), dtype=dtype)
    return t


def npy(t):
    if t.dtype == pcs.bfloat16:
        t = t.float()
    return t.numpy()


def layouts(shape, dtype=pcs.float32, seed=0):
    """The same values as a contiguous tensor, a transposed view and a
    stepped view."""
    base = rand(shape, dtype, seed)
    yield "contiguous", base
    if len(shape) >= 2:
        t = rand(shape[:-2] + (shape[-1], shape[-2]), dtype, seed).transpose(-1, -2)
        yield "transposed", t
    big = rand(shape[:-1] + (shape[-1] * 2,), dtype, seed)
    yield "stepped", big[..., ::2]


def shares_storage(a, b):
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


# ---- cat, stack -----------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat_matches_numpy(dtype, dim):
    a, b, c = rand((3, 4), dtype, 1), rand((3, 4), dtype, 2), rand((3, 4), dtype, 3)
    if dim == 0:
        b = rand((5, 4), dtype, 2)
    else:
        b = rand((3, 2), dtype, 2)
    r = pcs.cat([a, b, c], dim)
    assert r.dtype == dtype
    np.testing.assert_array_equal(npy(r), np.concatenate([npy(a), npy(b), npy(c)], dim))
    assert pcs.concat((a, b, c), dim=dim).tolist() == r.tolist()
    assert pcs.concatenate([a, b, c], axis=dim).tolist() == r.tolist()


@pytest.mark.parametrize("name", ["contiguous", "transposed", "stepped"])
def test_cat_of_strided_inputs(name):
    for lname, t in layouts((4, 6), pcs.float32, 5):
        if lname != name:
            continue
        u = rand((4, 6), pcs.float32, 6)
        for dim in (0, 1):
            np.testing.assert_array_equal(npy(pcs.cat([t, u, t], dim)),
                                          np.concatenate([npy(t), npy(u), npy(t)], dim))


def test_cat_promotes_and_skips_legacy_empty():
    a = pcs.tensor([[1, 2], [3, 4]], dtype=pcs.int32)
    b = pcs.tensor([[0.5, 1.5]], dtype=pcs.float64)
    r = pcs.cat([a, b])
    assert r.dtype == pcs.float64
    assert r.tolist() == [[1, 2], [3, 4], [0.5, 1.5]]
    assert pcs.cat([a.half(), pcs.tensor([[1, 2]], dtype=pcs.int64)]).dtype == pcs.float16
    assert pcs.cat([pcs.tensor([True]), pcs.tensor([2], dtype=pcs.uint8)]).dtype == pcs.uint8
    # 1-D empty tensors are skipped whatever the other shapes, but still promote
    e = pcs.empty(0, dtype=pcs.float64)
    r = pcs.cat([a, e, a], dim=1)
    assert r.shape == (2, 4) and r.dtype == pcs.float64
    assert pcs.cat([e, e]).shape == (0,)
    # other empty tensors take part in the checks
    z = pcs.empty(0, 2, dtype=pcs.int32)
    assert pcs.cat([a, z]).shape == (2, 2)


def test_cat_out_and_its_checks():
    a, b = rand((2, 3)), rand((1, 3))
    out = pcs.empty(3, 3)
    r = pcs.cat([a, b], out=out)
    assert r is out
    np.testing.assert_array_equal(npy(out), np.concatenate([npy(a), npy(b)]))
    # out= of a wider dtype, and a strided out
    out64 = pcs.empty(3, 3, dtype=pcs.float64)
    pcs.cat([a, b], out=out64)
    np.testing.assert_allclose(npy(out64), np.concatenate([npy(a), npy(b)]), rtol=1e-7)
    outt = pcs.empty(3, 3).t()
    pcs.cat([a, b], out=outt)
    np.testing.assert_array_equal(npy(outt), np.concatenate([npy(a), npy(b)]))
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
        pcs.cat([a, b], out=pcs.empty(3, 3, dtype=pcs.int64))
    with pytest.raises(RuntimeError, match="shape"):
        pcs.cat([a, b], out=pcs.empty(4, 3))


def test_cat_errors():
    a = rand((2, 3))
    with pytest.raises(RuntimeError, match=r"Sizes of tensors must match except in dimension 1\. "
                       r"Expected size 2 but got size 4 for tensor number 1 in the list\."):
        pcs.cat([a, rand((4, 3))], dim=1)
    with pytest.raises(RuntimeError, match=r"Sizes of tensors must match except in dimension 0\. "
                       r"Expected size 3 but got size 4 for tensor number 2 in the list\."):
        pcs.cat([a, a, rand((2, 4))])
    with pytest.raises(RuntimeError, match="Tensors must have same number of dimensions: got 2 and 3"):
        pcs.cat([a, rand((2, 3, 1))])
    with pytest.raises(RuntimeError, match=r"zero-dimensional tensor \(at position 1\) cannot be "
                       "concatenated"):
        pcs.cat([a, pcs.tensor(1.0)])
    with pytest.raises(RuntimeError, match="expected a non-empty list of Tensors"):
        pcs.cat([])
    with pytest.raises(IndexError, match="Dimension out of range"):
        pcs.cat([a, a], dim=2)
    with pytest.raises(TypeError, match="expected Tensor as element 1 in argument 0, but got int"):
        pcs.cat([a, 1])
    with pytest.raises(TypeError, match="must be tuple of Tensors, not Tensor"):
        pcs.cat(a)


def test_cat_reads_a_snapshot_of_a_mutating_list():
    a = rand((2, 2))

    class Sneaky(list):
        def __iter__(self):
            items = list(list.__iter__(self))
            self.clear()  # the caller's list empties while it is read
            return iter(items)

    r = pcs.cat(Sneaky([a, a]))
    assert r.shape == (4, 2)


@pytest.mark.parametrize("dtype", [pcs.float32, pcs.int64, pcs.bool, pcs.float16])
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_stack_matches_numpy(dtype, dim):
    ts = [rand((3, 4), dtype, s) for s in range(3)]
    r = pcs.stack(ts, dim)
    np.testing.assert_array_equal(npy(r), np.stack([npy(t) for t in ts], dim))
    ts[1] = ts[1].t().contiguous().t()  # same values, other strides
    np.testing.assert_array_equal(npy(pcs.stack(ts, dim)), npy(r))


def test_stack_errors_and_out():
    with pytest.raises(RuntimeError, match=r"stack expects each tensor to be equal size, but got "
                       r"\[2, 3\] at entry 0 and \[2, 4\] at entry 1"):
        pcs.stack([rand((2, 3)), rand((2, 4))])
    with pytest.raises(RuntimeError, match="stack expects a non-empty TensorList"):
        pcs.stack([])
    out = pcs.empty(2, 2, 3)
    assert pcs.stack([rand((2, 3)), rand((2, 3), seed=1)], out=out) is out
    assert pcs.stack([pcs.tensor(1.0), pcs.tensor(2.0)]).tolist() == [1.0, 2.0]


def test_hstack_vstack_dstack():
    a, b = rand((2, 3), seed=1), rand((2, 3), seed=2)
    v1, v2 = rand((3,), seed=3), rand((3,), seed=4)
    for f, g in ((pcs.hstack, np.hstack), (pcs.vstack, np.vstack), (pcs.dstack, np.dstack)):
        np.testing.assert_array_equal(npy(f([a, b])), g([npy(a), npy(b)]))
        np.testing.assert_array_equal(npy(f((v1, v2))), g([npy(v1), npy(v2)]))
    s = [pcs.tensor(1.0), pcs.tensor(2.0)]
    assert pcs.hstack(s).tolist() == [1.0, 2.0]
    assert pcs.vstack(s).tolist() == [[1.0], [2.0]]


# ---- split family (views) -----------------------------------------------------------

def test_split_int_and_sizes_are_views():
    t = rand((7, 4))
    parts = pcs.split(t, 3)
    assert [p.shape[0] for p in parts] == [3, 3, 1]
    assert isinstance(parts, tuple)
    for p, q in zip(parts, np.split(npy(t), [3, 6])):
        np.testing.assert_array_equal(npy(p), q)
        assert shares_storage(p, t)
    parts = t.split([2, 0, 5])
    assert [p.shape[0] for p in parts] == [2, 0, 5]
    parts = t.split(3, dim=1)
    assert [p.shape[1] for p in parts] == [3, 1]
    np.testing.assert_array_equal(npy(parts[1]), npy(t)[:, 3:])
    parts = pcs.split(t, split_size_or_sections=(1, 3), dim=-1)
    assert [p.shape[1] for p in parts] == [1, 3]
    # writing through a piece writes the original
    t.split(2)[1].fill_(7.0)
    assert t[2:4].tolist() == [[7.0] * 4] * 2


def test_split_errors():
    t = rand((5,))
    with pytest.raises(RuntimeError, match=r"split_with_sizes expects split_sizes to sum exactly "
                       r"to 5 \(input tensor's size at dimension 0\), but got "
                       r"split_sizes=\[2, 2\]"):
        t.split([2, 2])
    with pytest.raises(RuntimeError, match="split_size can only be 0 if dimension size is 0"):
        t.split(0)
    with pytest.raises(RuntimeError, match="split expects split_size be non-negative"):
        t.split(-1)
    assert len(pcs.empty(0).split(0)) == 1


@pytest.mark.parametrize("n,chunks", [(7, 3), (6, 3), (5, 7), (0, 3), (1, 1)])
def test_chunk(n, chunks):
    t = pcs.arange(n)
    parts = t.chunk(chunks)
    sizes = [p.numel() for p in parts]
    step = -(-n // chunks) if n else 0
    if n == 0:
        assert sizes == [0] * chunks
    else:
        assert sizes == [min(step, n - i) for i in range(0, n, step)]
    assert pcs.cat(parts).tolist() == list(range(n)) if n else True
    with pytest.raises(RuntimeError, match="chunk expects `chunks` to be greater than 0, got: 0"):
        t.chunk(0)


@pytest.mark.parametrize("arg", [3, 4, 10, [1, 4], [2, -1], [-2, 100], [5, 2], (0,),
                                 [0, 0, 7]])
def test_tensor_split_matches_numpy_array_split(arg):
    t = rand((7, 2))
    parts = pcs.tensor_split(t, arg)
    ref = np.array_split(npy(t), arg)
    assert len(parts) == len(ref)
    for p, q in zip(parts, ref):
        np.testing.assert_array_equal(npy(p), q)
        assert shares_storage(p, t)
    # tensor forms: 0-dim sections, 1-D indices
    as_t = pcs.tensor(arg) if isinstance(arg, int) else pcs.tensor(list(arg))
    assert [p.shape for p in t.tensor_split(as_t)] == [p.shape for p in parts]
    parts = t.tensor_split(arg if isinstance(arg, int) else list(arg), dim=0)
    assert len(parts) == len(ref)


def test_tensor_split_dim_and_errors():
    t = rand((2, 5))
    parts = t.tensor_split(2, dim=1)
    assert [p.shape for p in parts] == [(2, 3), (2, 2)]
    with pytest.raises(RuntimeError, match="number of sections must be larger than 0, got 0"):
        t.tensor_split(0)
    with pytest.raises(RuntimeError, match="at least a 1-dimensional tensor"):
        pcs.tensor_split(pcs.tensor(1.0), 2)


def test_unbind_narrow_swapaxes_functions():
    t = rand((3, 4, 5))
    us = pcs.unbind(t, 1)
    assert len(us) == 4 and all(shares_storage(u, t) for u in us)
    np.testing.assert_array_equal(npy(us[2]), npy(t)[:, 2])
    n = pcs.narrow(t, 2, 1, 3)
    np.testing.assert_array_equal(npy(n), npy(t)[:, :, 1:4])
    assert shares_storage(n, t)
    s = pcs.swapaxes(t, 0, 2)
    np.testing.assert_array_equal(npy(s), np.swapaxes(npy(t), 0, 2))
    assert pcs.swapdims(t, 0, 1).shape == (4, 3, 5)


# ---- flip, roll, repeat, tile, repeat_interleave ------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_flip_matches_numpy(dtype):
    for name, t in layouts((3, 4, 5), dtype, 2):
        a = npy(t)
        for dims in ([0], [1], [2], [0, 2], [-1, 0, 1], []):
            r = pcs.flip(t, dims)
            np.testing.assert_array_equal(npy(r), np.flip(a, dims) if dims else a, err_msg=name)
            assert not shares_storage(r, t)
        np.testing.assert_array_equal(npy(t.flip(0, 1)), np.flip(a, (0, 1)))
        np.testing.assert_array_equal(npy(t.fliplr()), np.fliplr(a))
        np.testing.assert_array_equal(npy(pcs.flipud(t)), np.flipud(a))


def test_flip_errors_and_edges():
    t = rand((2, 3))
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times in the list of dims"):
        t.flip([0, 0])
    with pytest.raises(IndexError, match="Dimension out of range"):
        t.flip(2)
    with pytest.raises(RuntimeError, match="Input must be >= 2-d."):
        pcs.fliplr(rand((3,)))
    assert pcs.flip(pcs.empty(0, 3), [0, 1]).shape == (0, 3)
    assert pcs.flip(pcs.tensor(2.5), []).item() == 2.5


@pytest.mark.parametrize("dtype", [pcs.float32, pcs.int64, pcs.bool, pcs.complex64])
def test_roll_matches_numpy(dtype):
    for name, t in layouts((4, 5, 3), dtype, 3):
        a = npy(t)
        for shifts, dims in ((1, 0), (-2, 1), (7, -1), ((1, 2), (0, 1)), ((3, -1, 5), (0, 1, 2)),
                             ((1, 1), (0, 0)), (0, 1)):
            np.testing.assert_array_equal(npy(pcs.roll(t, shifts, dims)),
                                          np.roll(a, shifts, dims), err_msg=name)
        for shift in (3, -4, 0, 61):
            np.testing.assert_array_equal(npy(t.roll(shift)), np.roll(a, shift), err_msg=name)
            assert t.roll(shift).shape == t.shape


def test_roll_errors():
    with pytest.raises(RuntimeError, match="shifts and dimensions must align. shifts: 2, dims:1"):
        rand((3, 3)).roll((1, 2), 0)
    assert pcs.roll(pcs.empty(0, 2), 1, 0).shape == (0, 2)


@pytest.mark.parametrize("dtype", [pcs.float32, pcs.int16, pcs.bool, pcs.float64])
def test_repeat_and_tile_match_numpy(dtype):
    for name, t in layouts((2, 3), dtype, 4):
        a = npy(t)
        for reps in ((1, 1), (2, 3), (3, 1), (1, 4), (2, 1, 2), (2, 2, 2, 1), (0, 2)):
            np.testing.assert_array_equal(npy(t.repeat(*reps)), np.tile(a, reps), err_msg=name)
            np.testing.assert_array_equal(npy(t.repeat(reps)), np.tile(a, reps))
        for reps in ((2,), (2, 3), (1, 2, 2), ()):
            np.testing.assert_array_equal(npy(pcs.tile(t, reps)), np.tile(a, reps), err_msg=name)
            np.testing.assert_array_equal(npy(t.tile(reps)), np.tile(a, reps))


def test_repeat_many_dims_and_errors():
    t = rand((2,) * 10)
    reps = (2,) * 10  # 20 dims of geometry: taken one dim at a time
    np.testing.assert_array_equal(npy(t.repeat(*reps)), np.tile(npy(t), reps))
    with pytest.raises(RuntimeError, match="Number of dimensions of repeat dims can not be smaller"):
        rand((2, 3)).repeat(2)
    with pytest.raises(RuntimeError, match="negative dimension"):
        rand((2, 3)).repeat(-1, 2)
    assert pcs.tensor(3.0).repeat(2, 2).tolist() == [[3.0, 3.0], [3.0, 3.0]]


@pytest.mark.parametrize("dtype", [pcs.float32, pcs.int64, pcs.bool])
def test_repeat_interleave_matches_numpy(dtype):
    for name, t in layouts((3, 4), dtype, 5):
        a = npy(t)
        np.testing.assert_array_equal(npy(t.repeat_interleave(2)), np.repeat(a, 2))
        np.testing.assert_array_equal(npy(pcs.repeat_interleave(t, 3, dim=1)),
                                      np.repeat(a, 3, axis=1), err_msg=name)
        np.testing.assert_array_equal(npy(t.repeat_interleave(0, dim=0)), np.repeat(a, 0, 0))
        counts = [2, 0, 3]
        np.testing.assert_array_equal(npy(t.repeat_interleave(pcs.tensor(counts), dim=0)),
                                      np.repeat(a, counts, axis=0), err_msg=name)
        counts = [1, 1, 4, 4]
        np.testing.assert_array_equal(npy(t.repeat_interleave(pcs.tensor(counts), dim=-1)),
                                      np.repeat(a, counts, axis=1), err_msg=name)
        np.testing.assert_array_equal(npy(t.repeat_interleave(pcs.tensor([2]), dim=1)),
                                      np.repeat(a, 2, axis=1))


def test_repeat_interleave_repeats_only_and_errors():
    assert pcs.repeat_interleave(pcs.tensor([1, 0, 2])).tolist() == [0, 2, 2]
    t = rand((3,))
    with pytest.raises(RuntimeError, match="repeats must have the same size as input along dim"):
        t.repeat_interleave(pcs.tensor([1, 2]), dim=0)
    with pytest.raises(RuntimeError, match="repeats can not be negative"):
        t.repeat_interleave(-1)
    assert t.repeat_interleave(2, output_size=6).shape == (6,)
    assert pcs.tensor(5).repeat_interleave(3).tolist() == [5, 5, 5]


# ---- movedim, diagonal, diag, diag_embed, tril, triu ------------------------------------

def test_movedim_matches_numpy_and_is_a_view():
    t = rand((2, 3, 4, 5))
    a = npy(t)
    for s, d in ((0, 3), (-1, 0), ((0, 1), (2, 3)), ((3, 0), (0, 3)), ((), ()), ([1], [-1])):
        r = pcs.movedim(t, s, d)
        np.testing.assert_array_equal(npy(r), np.moveaxis(a, s, d))
        assert shares_storage(r, t)
        assert t.moveaxis(s, d).shape == r.shape
    with pytest.raises(RuntimeError, match="movedim: Invalid source or destination dims"):
        t.movedim((0, 1), (0,))
    with pytest.raises(RuntimeError, match="movedim: repeated dim in `source`"):
        t.movedim((0, 0), (1, 2))


@pytest.mark.parametrize("offset", [0, 1, -1, 3, -5, 7])
def test_diagonal_is_a_view_and_matches_numpy(offset):
    for name, t in layouts((4, 5), pcs.float64, 6):
        d = t.diagonal(offset)
        np.testing.assert_array_equal(npy(d), np.diagonal(npy(t), offset), err_msg=name)
        assert shares_storage(d, t)
    t = rand((2, 3, 4))
    for d1, d2 in ((0, 1), (1, 2), (2, 0), (-1, -2)):
        np.testing.assert_array_equal(npy(pcs.diagonal(t, offset, d1, d2)),
                                      np.diagonal(npy(t), offset, d1, d2))
    with pytest.raises(RuntimeError, match="diagonal dimensions cannot be identical 1, 1"):
        t.diagonal(0, 1, -2)


@pytest.mark.parametrize("k", [0, 2, -1])
def test_diag_and_diag_embed(k):
    v = rand((4,), pcs.float32, 7)
    np.testing.assert_array_equal(npy(pcs.diag(v, k)), np.diag(npy(v), k))
    m = rand((3, 5), pcs.int64, 8)
    d = m.diag(k)
    np.testing.assert_array_equal(npy(d), np.diag(npy(m), k))
    assert not shares_storage(d, m)
    with pytest.raises(RuntimeError, match=r"diag\(\): Supports 1D or 2D tensors. Got 3D"):
        pcs.diag(rand((2, 2, 2)))
    x = rand((2, 3), pcs.float32, 9)
    e = pcs.diag_embed(x, k)
    ref = np.zeros((2, 3 + abs(k), 3 + abs(k)), np.float32)
    for i in range(2):
        ref[i] = np.diag(npy(x)[i], k)
    np.testing.assert_array_equal(npy(e), ref)
    e2 = x.diag_embed(k, 0, 2)
    np.testing.assert_array_equal(npy(e2), np.moveaxis(ref, 0, 1))


@pytest.mark.parametrize("dtype", [pcs.float32, pcs.int64, pcs.bool, pcs.complex128, pcs.float16])
@pytest.mark.parametrize("k", [0, 1, -2, 10, -10])
def test_tril_triu_match_numpy(dtype, k):
    for name, t in layouts((2, 4, 5), dtype, 10):
        a = npy(t)
        np.testing.assert_array_equal(npy(pcs.tril(t, k)), np.tril(a, k), err_msg=name)
        np.testing.assert_array_equal(npy(t.triu(k)), np.triu(a, k), err_msg=name)
        c = t.clone()
        assert c.tril_(k) is c
        np.testing.assert_array_equal(npy(c), np.tril(a, k))
        s = t.clone().t() if t.dim() == 2 else t.clone().transpose(1, 2)
        s.triu_(k)
        np.testing.assert_array_equal(npy(s), np.triu(np.swapaxes(a, -1, -2), k))


def test_tril_out_and_errors():
    t = rand((3, 3))
    out = pcs.empty(3, 3)
    assert pcs.triu(t, diagonal=1, out=out) is out
    np.testing.assert_array_equal(npy(out), np.triu(npy(t), 1))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        pcs.tril(rand((3,)))
    assert pcs.tril(pcs.empty(0, 3)).shape == (0, 3)


# ---- meshgrid, broadcasting, atleast_* ------------------------------------------------

@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid_matches_numpy(indexing):
    a, b, c = rand((3,), seed=1), rand((4,), seed=2), rand((2,), seed=3)
    for ts in ((a,), (a, b), (a, b, c)):
        rs = pcs.meshgrid(*ts, indexing=indexing)
        refs = np.meshgrid(*[npy(t) for t in ts], indexing=indexing)
        for r, ref, t in zip(rs, refs, ts):
            np.testing.assert_array_equal(npy(r.contiguous()), ref)
            assert shares_storage(r, t)
    assert len(pcs.meshgrid([a, b], indexing="ij")) == 2
    with pytest.warns(UserWarning, match="indexing"):
        pcs.meshgrid(a, b)
    with pytest.raises(RuntimeError, match="Expected 0D or 1D tensor"):
        pcs.meshgrid(rand((2, 2)), indexing="ij")


def test_broadcast_tensors_to_shapes():
    a, b = rand((3, 1)), rand((1, 4))
    x, y = pcs.broadcast_tensors(a, b)
    assert x.shape == y.shape == (3, 4)
    assert shares_storage(x, a) and x.stride() == (1, 0)
    np.testing.assert_array_equal(npy(x.contiguous()), np.broadcast_to(npy(a), (3, 4)))
    assert pcs.broadcast_to(a, (2, 3, 5)).shape == (2, 3, 5)
    assert a.broadcast_to((3, 2)).shape == (3, 2)
    assert pcs.broadcast_shapes((3, 1), (4,), (2, 1, 1)) == (2, 3, 4)
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must match the size of "
                       r"tensor b \(4\) at non-singleton dimension 1"):
        pcs.broadcast_tensors(rand((2, 3)), rand((2, 4)))


def test_atleast():
    s, v, m, c = pcs.tensor(1.0), rand((3,)), rand((2, 3)), rand((2, 3, 4))
    assert pcs.atleast_1d(s).shape == (1,)
    assert pcs.atleast_1d(v) is v or pcs.atleast_1d(v).shape == (3,)
    assert [t.shape for t in pcs.atleast_2d(s, v, m)] == [(1, 1), (1, 3), (2, 3)]
    assert [t.shape for t in pcs.atleast_3d([s, v, m, c])] == [(1, 1, 1), (1, 3, 1), (2, 3, 1),
                                                              (2, 3, 4)]
    assert shares_storage(pcs.atleast_3d(v), v)
    for t in (s, v, m, c):
        for f, g in ((pcs.atleast_1d, np.atleast_1d), (pcs.atleast_2d, np.atleast_2d),
                     (pcs.atleast_3d, np.atleast_3d)):
            np.testing.assert_array_equal(npy(f(t).contiguous()), g(npy(t)))


def test_extreme_offsets_and_counts_do_not_overflow():
    x = rand((2, 3))
    assert pcs.tril(x, -2**63).tolist() == [[0.0] * 3] * 2
    np.testing.assert_array_equal(npy(x.tril(2**63 - 1)), npy(x))
    assert x.triu(2**63 - 1).tolist() == [[0.0] * 3] * 2
    assert x.diagonal(-2**63).shape == (0,) and x.diagonal(2**63 - 1).shape == (0,)
    for f in (lambda: pcs.diag(rand((2,)), -2**63), lambda: pcs.diag_embed(rand((2,)), 2**63 - 1),
              lambda: x.repeat(2**62, 4), lambda: x.repeat_interleave(2**62)):
        with pytest.raises(RuntimeError):
            f()
    np.testing.assert_array_equal(npy(x.roll(-2**63, 1)), np.roll(npy(x), -2**63 % 3, 1))
    assert len(pcs.tensor_split(x, [2**62, -2**62], 1)) == 3


def test_split_and_chunk_of_a_huge_empty_dim_do_not_overflow():
    """Found by the tensor-API fuzz run: a (2^63 - 1, 0) tensor split in pieces
    of 2 overflowed the piece count (SystemError; an unchecked array size)."""
    import pycuda_sem as torch
    v = torch.empty(2**63 - 1, 0, dtype=torch.bool)
    for f in (lambda: torch.chunk(v, 2**62, -2), lambda: v.split(2), lambda: torch.split(v, 3)):
        with pytest.raises(MemoryError):
            f()
    assert len(torch.chunk(torch.empty(7, 0), 2**62, 0)) == 7
