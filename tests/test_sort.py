"""Sorting, selection and scans against NumPy references, on the CPU and (where a GPU
is present, marked ``cuda``) on CUDA: sort, argsort, msort, topk, kthvalue, median,
nanmedian, mode, unique, unique_consecutive, searchsorted, bucketize, bincount, histc,
count_nonzero, cummax, cummin, logcumsumexp. Inputs are random with many ties, and
the floating ones hold NaN, -0.0 and +0.0; every non-complex dtype, every dim.

The references are written independently of pycuda_sem/_ops.py: sorts through
np.lexsort on (NaN flag, value, position) keys, scans by a Python loop over torch's
rule, medians from the sorted rows."""
import math

import numpy as np
import pytest

import pycuda_sem as pcs

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
INT_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64"]
FLOAT_DTYPES = ["float16", "bfloat16", "float32", "float64"]
DTYPES = INT_DTYPES + FLOAT_DTYPES
SHAPES = [(7,), (3, 5), (2, 3, 4), (4, 1, 6), (1,)]


def make(shape, dtype, rng, special=True):
    """Random values with many ties; floats include NaN, -0.0 and +0.0."""
    if dtype == "bool":
        a = rng.integers(0, 2, shape).astype(bool)
    elif dtype in INT_DTYPES:
        lo = 0 if dtype == "uint8" else -6
        a = rng.integers(lo, 7, shape).astype(dtype)
    else:
        a = (rng.integers(-12, 13, shape) / 4).astype(np.float32)
        if special and a.size >= 3:
            flat = a.reshape(-1)
            idx = rng.permutation(flat.size)
            flat[idx[0]] = np.nan
            flat[idx[1]] = -0.0
            flat[idx[2]] = 0.0
        if dtype != "bfloat16":
            a = a.astype(dtype)
    return a


def tensor(a, dtype, device):
    t = pcs.tensor(a)
    if dtype == "bfloat16":
        t = t.to(pcs.bfloat16)
    return t.to(device)


def npy(t):
    t = t.cpu()
    if t.dtype == pcs.bfloat16:
        t = t.float()
    return t.numpy()


def ref_order(a, desc):
    """Stable order of a 1-D array in torch's order (NaN largest, -0.0 == +0.0)."""
    v = a.astype(np.float64)
    nan = np.isnan(v)
    v = np.where(nan, 0.0, v) + 0.0  # -0.0 -> 0.0
    pos = np.arange(a.shape[0])
    if desc:
        return np.lexsort((pos, -v, ~nan))
    return np.lexsort((pos, v, nan))


def ref_sort(a, dim, desc):
    m = np.moveaxis(a, dim, -1)
    flat = m.reshape(-1, m.shape[-1]) if m.ndim else m.reshape(1, 1)
    idx = np.stack([ref_order(r, desc) for r in flat]) if flat.shape[0] else np.zeros(flat.shape, np.int64)
    vals = np.take_along_axis(flat, idx, 1)
    back = lambda x: np.moveaxis(x.reshape(m.shape), -1, dim) if m.ndim else x.reshape(())
    return back(vals), back(idx)


def same(got, want):
    """Equal values, NaN where NaN (and dtype kinds agree)."""
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert np.array_equal(got, want, equal_nan=True), (got, want)


# ---- sort, argsort, msort -------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_sort_every_dtype_every_dim(device, dtype):
    rng = np.random.default_rng(1)
    for shape in SHAPES:
        a = make(shape, dtype, rng)
        x = tensor(a, dtype, device)
        an = npy(x)
        for dim in range(-len(shape), len(shape)):
            for desc in (False, True):
                r = pcs.sort(x, dim=dim, descending=desc)
                assert type(r).__name__ == "sort" and r.values.dtype == x.dtype
                assert r.indices.dtype == pcs.int64 and r.values.device == x.device
                v, i = ref_sort(an, dim, desc)
                same(npy(r.values), v)
                assert np.array_equal(npy(r.indices), i)
                assert r.values.is_contiguous() and r.indices.is_contiguous()
                # method form and argsort agree
                r2 = x.sort(dim, desc)
                assert np.array_equal(npy(r2.indices), i)
                assert np.array_equal(npy(pcs.argsort(x, dim=dim, descending=desc)), i)
                assert np.array_equal(npy(x.argsort(dim, desc, stable=True)), i)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_msort(device, dtype):
    rng = np.random.default_rng(2)
    a = make((9, 4), dtype, rng)
    x = tensor(a, dtype, device)
    v, _ = ref_sort(npy(x), 0, False)
    same(npy(pcs.msort(x)), v)
    same(npy(x.msort()), v)


@pytest.mark.parametrize("device", DEVICES)
def test_sort_nan_and_signed_zero_order(device):
    x = pcs.tensor([0.0, float("nan"), -0.0, 1.0, -float("inf"), float("nan"), -0.0, float("inf")],
                   device=device)
    r = x.sort()
    assert r.indices.tolist() == [4, 0, 2, 6, 3, 7, 1, 5]
    vals = r.values.cpu().numpy()
    assert np.signbit(vals[1:4]).tolist() == [False, True, True]  # stable: +0.0, -0.0, -0.0
    r = x.sort(descending=True)
    assert r.indices.tolist() == [1, 5, 7, 3, 0, 2, 6, 4]
    # a NaN with the sign bit set (x86's 0/0) still sorts last
    neg_nan = pcs.tensor(np.array([1.0, -np.nan, 0.5], np.float32), device=device)
    assert neg_nan.argsort().tolist() == [2, 0, 1]


@pytest.mark.parametrize("device", DEVICES)
def test_sort_stable_ties_long_rows(device):
    rng = np.random.default_rng(3)
    a = rng.integers(0, 4, (3, 3000)).astype(np.int32)
    x = pcs.tensor(a, device=device)
    for desc in (False, True):
        _, i = ref_sort(a, 1, desc)
        assert np.array_equal(npy(x.sort(descending=desc).indices), i)


@pytest.mark.parametrize("device", DEVICES)
def test_sort_empty_zero_dim_and_views(device):
    e = pcs.empty(0, 3, device=device)
    r = e.sort(dim=0)
    assert r.values.shape == (0, 3) and r.indices.shape == (0, 3)
    s = pcs.tensor(2.5, device=device).sort()
    assert s.values.shape == () and s.values.item() == 2.5 and s.indices.item() == 0
    rng = np.random.default_rng(4)
    a = rng.standard_normal((6, 8)).astype(np.float32)
    x = pcs.tensor(a, device=device).t()[::2]  # a strided view
    v, i = ref_sort(a.T[::2], 1, False)
    same(npy(x.sort().values), v)
    assert np.array_equal(npy(x.sort().indices), i)


@pytest.mark.parametrize("device", DEVICES)
def test_sort_out_and_errors(device):
    x = pcs.tensor([[3.0, 1.0, 2.0]], device=device)
    v = pcs.empty(1, 3, device=device)
    i = pcs.empty(1, 3, dtype=pcs.int64, device=device)
    r = pcs.sort(x, out=(v, i))
    assert r[0] is v and r[1] is i
    assert v.tolist() == [[1.0, 2.0, 3.0]] and i.tolist() == [[1, 2, 0]]
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"):
        x.sort(dim=2)
    with pytest.raises(IndexError, match=r"expected to be in range of \[-1, 0\], but got 2"):
        pcs.tensor(1.0, device=device).sort(2)
    with pytest.raises(RuntimeError, match="not implemented for 'ComplexFloat'"):
        pcs.sort(pcs.tensor([1j], device=device))
    with pytest.raises(TypeError):
        pcs.sort([1, 2])
    with pytest.raises(TypeError):
        x.sort(bogus=1)


# ---- topk, kthvalue, median, nanmedian, mode ---------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_topk(device, dtype):
    rng = np.random.default_rng(5)
    a = make((4, 9), dtype, rng)
    x = tensor(a, dtype, device)
    an = npy(x)
    for dim in (0, 1, -1):
        n = an.shape[dim]
        for k in (0, 1, n // 2, n):
            for largest in (True, False):
                r = pcs.topk(x, k, dim=dim, largest=largest)
                v, i = ref_sort(an, dim, largest)
                sl = [slice(None)] * 2
                sl[dim] = slice(0, k)
                same(npy(r.values), v[tuple(sl)])
                # ties may pick any of the equal elements: check through the input
                got_i = npy(r.indices)
                same(np.take_along_axis(an, got_i, dim), v[tuple(sl)])
                assert r.indices.dtype == pcs.int64
    assert x.topk(2).values.shape == (4, 2)
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        x.topk(10)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_kthvalue(device, dtype):
    rng = np.random.default_rng(6)
    a = make((5, 7), dtype, rng)
    x = tensor(a, dtype, device)
    an = npy(x)
    for dim in (0, 1):
        v, _ = ref_sort(an, dim, False)
        for k in range(1, an.shape[dim] + 1):
            for keepdim in (False, True):
                r = pcs.kthvalue(x, k, dim, keepdim)
                want = np.take(v, [k - 1], axis=dim)
                if not keepdim:
                    want = want.squeeze(dim)
                same(npy(r.values), want)
                gi = npy(r.indices)
                same(np.take_along_axis(an, gi if keepdim else np.expand_dims(gi, dim), dim),
                     np.take(v, [k - 1], axis=dim))
    with pytest.raises(IndexError, match="kthvalue"):
        x.kthvalue(8, 1)
    with pytest.raises(IndexError, match="kthvalue"):
        x.kthvalue(0)


def ref_median(row, ignore_nan):
    f = row.astype(np.float64)
    nan = np.isnan(f)
    if nan.any() and not ignore_nan:
        return math.nan
    f = np.sort(f[~nan])
    return f[(f.size - 1) // 2] if f.size else math.nan


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_median_nanmedian(device, dtype):
    rng = np.random.default_rng(7)
    for shape in [(5, 6), (3, 4, 5), (8,)]:
        a = make(shape, dtype, rng)
        x = tensor(a, dtype, device)
        an = npy(x)
        for name, ign in (("median", False), ("nanmedian", True)):
            f = getattr(pcs, name)
            whole = f(x)
            assert whole.shape == () and whole.dtype == x.dtype
            same(npy(whole), ref_median(an.reshape(-1), ign))
            for dim in range(len(shape)):
                r = f(x, dim)
                assert type(r).__name__ == name
                m = np.moveaxis(an, dim, -1)
                want = np.array([ref_median(row, ign) for row in m.reshape(-1, m.shape[-1])])
                same(npy(r.values).reshape(-1), want)
                # the index points at an element equal to the median
                got = np.take_along_axis(an, np.expand_dims(npy(r.indices), dim), dim).squeeze(dim)
                same(got.reshape(-1), want)
                assert getattr(x, name)(dim, keepdim=True).values.shape[dim] == 1


@pytest.mark.parametrize("device", DEVICES)
def test_median_all_nan_rows_and_empty(device):
    x = pcs.tensor([[float("nan"), float("nan")], [1.0, float("nan")]], device=device)
    assert np.isnan(npy(x.nanmedian(1).values)[0]) and npy(x.nanmedian(1).values)[1] == 1.0
    assert x.median(1).indices.tolist() == [0, 1]  # the first NaN
    assert math.isnan(pcs.median(pcs.empty(0, device=device)).item())
    with pytest.raises(IndexError, match="non-zero size"):
        pcs.median(pcs.empty(0, 3, device=device), 0)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [d for d in DTYPES])
def test_mode(device, dtype):
    rng = np.random.default_rng(8)
    a = make((6, 11), dtype, rng, special=False)
    x = tensor(a, dtype, device)
    an = npy(x).astype(np.float64)
    for dim in (0, 1):
        r = pcs.mode(x, dim)
        m = np.moveaxis(an, dim, -1)
        want = []
        for row in m.reshape(-1, m.shape[-1]):
            vals, counts = np.unique(row, return_counts=True)
            want.append(vals[np.argmax(counts)])  # the smallest among the most frequent
        same(npy(r.values).reshape(-1), want)
        got = np.take_along_axis(an, np.expand_dims(npy(r.indices), dim), dim).squeeze(dim)
        same(got.reshape(-1), want)
    r = pcs.tensor([[1, 2, 2, 3, 3, 3, 2]], device=device).mode()
    assert r.values.tolist() == [2] and r.indices.tolist() == [6]  # tie 2 vs 3: smaller; last index


# ---- scans --------------------------------------------------------------------------------

def ref_cumext(row, is_max):
    vals, idx = [], []
    best, bi = None, 0
    for j, v in enumerate(row.astype(np.float64)):
        if best is None or math.isnan(v) or (not math.isnan(best) and (v >= best if is_max else v <= best)):
            best, bi = v, j
        vals.append(best)
        idx.append(bi)
    return vals, idx


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_cummax_cummin(device, dtype):
    rng = np.random.default_rng(9)
    for shape in [(9,), (4, 6), (2, 3, 5)]:
        a = make(shape, dtype, rng)
        x = tensor(a, dtype, device)
        an = npy(x)
        for dim in range(-len(shape), len(shape)):
            for name in ("cummax", "cummin"):
                r = getattr(pcs, name)(x, dim)
                assert type(r).__name__ == name and r.values.dtype == x.dtype
                assert r.indices.dtype == pcs.int64
                m = np.moveaxis(an, dim, -1).reshape(-1, an.shape[dim])
                wv, wi = zip(*[ref_cumext(row, name == "cummax") for row in m])
                gv = np.moveaxis(npy(r.values), dim, -1).reshape(m.shape)
                gi = np.moveaxis(npy(r.indices), dim, -1).reshape(m.shape)
                same(gv, np.array(wv))
                assert np.array_equal(gi, np.array(wi)), (gi, wi)
                r2 = getattr(x, name)(dim=dim)
                assert np.array_equal(npy(r2.indices), npy(r.indices))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_logcumsumexp(device, dtype):
    rng = np.random.default_rng(10)
    a = (rng.standard_normal((3, 50)) * 5).astype(np.float32)
    a[0, 7] = -np.inf
    a[1, :3] = -np.inf
    a[2, 10] = np.inf
    x = tensor(a if dtype == "bfloat16" else a.astype(dtype), dtype, device)
    an = npy(x).astype(np.float64)
    for dim in (0, 1, -1):
        with np.errstate(all="ignore"):
            want = np.logaddexp.accumulate(an, axis=dim)
        got = npy(pcs.logcumsumexp(x, dim)).astype(np.float64)
        tol = {"float16": 1e-2, "bfloat16": 5e-2, "float32": 1e-5, "float64": 1e-12}[dtype]
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
        assert x.logcumsumexp(dim).dtype == x.dtype
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        pcs.logcumsumexp(pcs.tensor([1, 2], device=device), 0)
    with pytest.raises(TypeError, match="dim"):
        pcs.logcumsumexp(x)


# ---- unique -------------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_unique(device, dtype):
    rng = np.random.default_rng(11)
    a = make((5, 8), dtype, rng)
    x = tensor(a, dtype, device)
    an = npy(x)
    flat = an.reshape(-1)
    want, winv, wcnt = np.unique(flat, return_inverse=True, return_counts=True, equal_nan=False)
    u = pcs.unique(x)
    assert u.dtype == x.dtype and u.device == x.device
    same(npy(u), want)
    u, inv, cnt = pcs.unique(x, return_inverse=True, return_counts=True)
    same(npy(u), want)
    assert inv.shape == x.shape and inv.dtype == pcs.int64 and cnt.dtype == pcs.int64
    same(npy(u)[npy(inv)], an)
    assert np.array_equal(npy(cnt), wcnt)
    u2, inv2 = x.unique(sorted=True, return_inverse=True)
    assert np.array_equal(npy(inv2), npy(inv))
    u3, c3 = x.unique(return_counts=True)
    assert np.array_equal(npy(c3), wcnt)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_unique_consecutive(device, dtype):
    rng = np.random.default_rng(12)
    a = make((40,), dtype, rng, special=False)
    x = tensor(a, dtype, device)
    an = npy(x)
    heads = np.concatenate(([True], an[1:] != an[:-1]))
    want = an[heads]
    counts = np.diff(np.append(np.flatnonzero(heads), an.size))
    u, inv, cnt = pcs.unique_consecutive(x, return_inverse=True, return_counts=True)
    same(npy(u), want)
    assert np.array_equal(npy(cnt), counts)
    same(npy(u)[npy(inv)], an)
    same(npy(x.unique_consecutive()), want)


@pytest.mark.parametrize("device", DEVICES)
def test_unique_nan_each_distinct_and_empty(device):
    x = pcs.tensor([float("nan"), 1.0, float("nan"), 1.0], device=device)
    u, c = x.unique(return_counts=True)
    assert u.shape == (3,) and c.tolist() == [2, 1, 1]
    e = pcs.unique(pcs.empty(0, device=device), return_inverse=True, return_counts=True)
    assert [t.shape for t in e] == [(0,), (0,), (0,)]


@pytest.mark.parametrize("device", DEVICES)
def test_unique_dim(device):
    rng = np.random.default_rng(13)
    a = rng.integers(0, 2, (6, 3))
    x = pcs.tensor(a, device=device)
    want, winv, wcnt = np.unique(a, axis=0, return_inverse=True, return_counts=True)
    u, inv, cnt = pcs.unique(x, dim=0, return_inverse=True, return_counts=True)
    assert u.device == x.device
    assert np.array_equal(npy(u), want)
    assert np.array_equal(npy(inv), winv.reshape(-1))
    assert np.array_equal(npy(cnt), wcnt)
    want1 = np.unique(a, axis=1)
    assert np.array_equal(npy(pcs.unique(x, dim=1)), want1)
    uc = pcs.unique_consecutive(pcs.tensor([[1, 1], [1, 1], [2, 3], [1, 1]], device=device), dim=0)
    assert uc.tolist() == [[1, 1], [2, 3], [1, 1]]
    # 3-D, a middle dim, floats with ties across several columns
    b = rng.integers(-2, 3, (3, 7, 4)).astype(np.float32)
    b[:, 5] = b[:, 1]
    y = pcs.tensor(b, device=device)
    u, inv, cnt = y.unique(dim=1, return_inverse=True, return_counts=True)
    w, winv, wcnt = np.unique(b, axis=1, return_inverse=True, return_counts=True)
    assert np.array_equal(npy(u), w)
    assert np.array_equal(npy(inv), winv.reshape(-1))
    assert np.array_equal(npy(cnt), wcnt)
    u, inv, cnt = pcs.unique_consecutive(y, dim=2, return_inverse=True, return_counts=True)
    m = np.moveaxis(b, 2, 0).reshape(4, -1)
    heads = np.concatenate(([True], np.any(m[1:] != m[:-1], axis=1)))
    assert np.array_equal(npy(u), np.moveaxis(np.moveaxis(b, 2, 0)[heads], 0, 2))
    assert npy(cnt).sum() == 4 and np.array_equal(npy(inv), np.cumsum(heads) - 1)


# ---- searchsorted, bucketize ---------------------------------------------------------------

def ref_search(seq, v, right):
    """torch's loop: first position whose element is not < v (<= for right)."""
    lo, hi = 0, len(seq)
    while lo < hi:
        mid = (lo + hi) // 2
        go = not (seq[mid] > v) if right else not (seq[mid] >= v)
        lo, hi = (mid + 1, hi) if go else (lo, mid)
    return lo


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["uint8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"])
def test_searchsorted(device, dtype):
    rng = np.random.default_rng(14)
    seq1 = np.sort(make((12,), dtype, rng, special=False))
    vals = make((3, 5), dtype, rng, special=False)
    s = tensor(seq1, dtype, device)
    v = tensor(vals, dtype, device)
    sn, vn = npy(s).astype(np.float64), npy(v).astype(np.float64)
    for right in (False, True):
        got = pcs.searchsorted(s, v, right=right)
        assert got.dtype == pcs.int64 and got.shape == v.shape
        want = [[ref_search(sn, e, right) for e in row] for row in vn]
        assert got.tolist() == want
        side = pcs.searchsorted(s, v, side="right" if right else "left", out_int32=True)
        assert side.dtype == pcs.int32 and side.tolist() == want
        b = pcs.bucketize(v, s, right=right)
        assert b.tolist() == want
    # N-D: one sorted row per leading index
    seqn = np.sort(make((3, 6), dtype, rng, special=False), axis=1)
    sN = tensor(seqn, dtype, device)
    sNn = npy(sN).astype(np.float64)
    got = pcs.searchsorted(sN, v)
    assert got.tolist() == [[ref_search(sNn[r], e, False) for e in vn[r]] for r in range(3)]


@pytest.mark.parametrize("device", DEVICES)
def test_searchsorted_sorter_scalar_nan_promotion(device):
    seq = pcs.tensor([3.0, 1.0, 2.0, float("nan")], device=device)
    sorter = pcs.tensor([1, 2, 0, 3], device=device)
    v = pcs.tensor([0.5, 1.0, 2.5, 3.0, float("nan"), 9.0], device=device)
    seq_sorted = [1.0, 2.0, 3.0, math.nan]
    for right in (False, True):
        got = pcs.searchsorted(seq, v, sorter=sorter, right=right).tolist()
        assert got == [ref_search(seq_sorted, e, right) for e in v.tolist()]
    assert pcs.searchsorted(pcs.tensor([1, 3, 5], device=device), 4).item() == 2
    assert pcs.searchsorted(pcs.tensor([1, 3, 5], device=device), pcs.tensor([2.5], device=device)).tolist() == [1]
    with pytest.raises(RuntimeError, match="side and right can't be set to opposites"):
        pcs.searchsorted(seq, v, right=True, side="left")
    with pytest.raises(RuntimeError, match="sorter index out of range"):
        pcs.searchsorted(seq, v, sorter=pcs.tensor([0, 1, 2, 9], device=device))
    with pytest.raises(RuntimeError, match="boundaries tensor should be 1 dimension or the first N-1"):
        pcs.searchsorted(pcs.zeros(2, 3, device=device), pcs.zeros(3, 2, device=device))
    with pytest.raises(RuntimeError, match="boundaries tensor must be 1 dimension"):
        pcs.bucketize(v, pcs.zeros(2, 2, device=device))
    with pytest.raises(RuntimeError, match="long dtype"):
        pcs.searchsorted(seq, v, sorter=sorter.int())


# ---- bincount, histc, count_nonzero -------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64"])
def test_bincount(device, dtype):
    rng = np.random.default_rng(15)
    a = rng.integers(0, 20, 500).astype(dtype)
    x = pcs.tensor(a, device=device)
    got = pcs.bincount(x)
    assert got.dtype == pcs.int64 and got.tolist() == np.bincount(a).tolist()
    assert x.bincount(minlength=40).tolist() == np.bincount(a, minlength=40).tolist()
    w = rng.standard_normal(500).astype(np.float32)
    gw = pcs.bincount(x, weights=pcs.tensor(w, device=device))
    assert gw.dtype == pcs.float32
    np.testing.assert_allclose(npy(gw), np.bincount(a, weights=w), rtol=1e-5, atol=1e-5)
    gd = pcs.bincount(x, pcs.tensor(w.astype(np.float16), device=device), 3)
    assert gd.dtype == pcs.float64
    assert pcs.bincount(pcs.tensor([], dtype=pcs.int64, device=device), minlength=3).tolist() == [0, 0, 0]


@pytest.mark.parametrize("device", DEVICES)
def test_bincount_errors(device):
    with pytest.raises(RuntimeError, match="non-negative integral"):
        pcs.bincount(pcs.tensor([1, -1], device=device))
    with pytest.raises(RuntimeError, match="non-negative integral"):
        pcs.bincount(pcs.tensor([1.0], device=device))
    with pytest.raises(RuntimeError, match="non-negative integral"):
        pcs.bincount(pcs.tensor([[1]], device=device))
    with pytest.raises(RuntimeError, match="same length"):
        pcs.bincount(pcs.tensor([1, 2], device=device), pcs.tensor([1.0], device=device))


def ref_histc(a, bins, lo, hi):
    acc = np.float64 if a.dtype == np.float64 else np.float32
    v = a.reshape(-1).astype(acc)
    out = np.zeros(bins)
    for e in v:
        if not (e >= acc(lo) and e <= acc(hi)):
            continue
        b = int((e - acc(lo)) * acc(bins) / (acc(hi) - acc(lo)))
        out[min(b, bins - 1)] += 1
    return out


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_histc(device, dtype):
    rng = np.random.default_rng(16)
    a = make((200,), dtype, rng)
    x = tensor(a, dtype, device)
    if device == "cuda" and dtype in ("float16", "bfloat16"):  # as torch's _histc_cuda
        with pytest.raises(RuntimeError, match="HalfTensor is not supported|not implemented for 'BFloat16'"):
            pcs.histc(x, bins=10, min=-2, max=2)
        return
    an = npy(x)
    for bins, lo, hi in [(10, -2.0, 2.0), (1, -1, 1), (30, -3.0, 3.0)]:
        got = pcs.histc(x, bins=bins, min=lo, max=hi)
        assert got.dtype == x.dtype and got.shape == (bins,)
        same(npy(got), ref_histc(an, bins, lo, hi))
    # min == max: the data's range (a NaN in the data makes it not finite, as torch)
    with pytest.raises(RuntimeError, match=r"range of \[nan, nan\] is not finite"):
        pcs.histc(x, bins=7)
    f = an[~np.isnan(an)]
    got = pcs.histc(tensor(f, dtype, device), bins=7)
    same(npy(got), ref_histc(f, 7, float(f.min()), float(f.max())))
    assert x.histc(4, -1, 1).shape == (4,)
    with pytest.raises(RuntimeError, match="bins must be > 0"):
        pcs.histc(x, bins=0)
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        pcs.histc(pcs.tensor([1, 2], device=device))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_count_nonzero(device, dtype):
    rng = np.random.default_rng(17)
    a = make((3, 4, 5), dtype, rng)
    x = tensor(a, dtype, device)
    an = npy(x)
    got = pcs.count_nonzero(x)
    assert got.dtype == pcs.int64 and got.item() == np.count_nonzero(an)
    assert x.count_nonzero(1).tolist() == np.count_nonzero(an, axis=1).tolist()
    assert pcs.count_nonzero(x, dim=(0, 2)).tolist() == np.count_nonzero(an, axis=(0, 2)).tolist()


# ---- the namespace ------------------------------------------------------------------------

NAMES = ["sort", "argsort", "msort", "topk", "kthvalue", "median", "nanmedian", "mode", "unique",
         "unique_consecutive", "searchsorted", "bucketize", "bincount", "histc", "count_nonzero",
         "cummax", "cummin", "logcumsumexp"]
METHODS = [n for n in NAMES if n not in ("searchsorted", "bucketize")]


def test_functions_and_methods_exist():
    for n in NAMES:
        assert callable(getattr(pcs, n)), n
    for n in METHODS:
        assert callable(getattr(pcs.Tensor, n)), n


def test_return_types_are_named_tuples():
    r = pcs.tensor([2.0, 1.0]).sort()
    v, i = r
    assert r[0] is r.values and v is r.values and i is r.indices
    assert type(pcs.tensor([1.0]).cummax(0)).__name__ == "cummax"


def test_return_types_print_as_torch():
    # torch's structseq repr: one field a line (found by test_printing_ops on the GPU machine)
    r = pcs.tensor([2.0, 1.0]).sort()
    assert repr(r) == ("pycuda_sem.return_types.sort(\nvalues=tensor([1., 2.]),\n"
                       "indices=tensor([1, 0]))")
    assert str(pcs.tensor([[3, 1]]).max(1)) == ("pycuda_sem.return_types.max(\nvalues=tensor([3]),\n"
                                                 "indices=tensor([0]))")
