"""GPU semantics of sorting, selection and scans (CUB): results agree with torch on
CUDA where it is installed (else with NumPy), for every dtype, several dims, sizes
that take each CUB path (one long row: DeviceRadixSort; many rows, short and long:
DeviceSegmentedSort), ties, NaN and signed zeros; the ops run on the current stream;
the allocator's figures come back to their baseline after each test (the `balanced`
fixture of conftest.py) and after ops that take CUB workspaces.

Run on the GPU machine: `python3 -m pytest -q tests/test_sort.py tests/test_sort_cuda.py`
(test_sort.py holds the NumPy-reference tests of both devices)."""
import math

import numpy as np
import pytest

import pycuda_sem as pcs

pytestmark = [pytest.mark.cuda, pytest.mark.usefixtures("balanced")]

from torch_oracle import HAVE_TORCH, _torch, needs_torch  # noqa: E402,F401

SORT_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
               "float32", "float64"]


def rand(shape, dtype, seed, ties=True):
    """Random values (never all zeros): ties, NaN, 0.0 and infinities in floats."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        a = rng.integers(0, 2, shape).astype(bool)
    elif dtype in ("uint8", "int8", "int16", "int32", "int64"):
        lo, hi = (0, 200) if dtype == "uint8" else (-100, 100)
        if not ties and dtype in ("int32", "int64"):
            lo, hi = -(1 << 30), 1 << 30
        a = rng.integers(lo, hi, shape).astype(dtype)
    else:
        a = (rng.integers(-64, 64, shape) / 8).astype(np.float32) if ties else \
            rng.standard_normal(shape).astype(np.float32)
        flat = a.reshape(-1)
        if flat.size >= 8:
            idx = rng.choice(flat.size, size=min(flat.size, 6 + flat.size // 50), replace=False)
            # (-0.0 and NaNs with the sign bit set have tests of their own: torch's
            # CUDA sort orders them by its CUB version)
            specials = np.array([np.nan, 0.0, np.inf, -np.inf, np.nan, 1.0], np.float32)
            flat[idx] = specials[np.arange(idx.size) % specials.size]
        if dtype not in ("bfloat16",):
            a = a.astype(dtype)
    return a


def ours(a, dtype):
    t = pcs.tensor(a)
    if dtype == "bfloat16":
        t = t.to(pcs.bfloat16)
    return t.cuda()


def theirs(a, dtype):
    if dtype == "bfloat16":
        # the very bits of ours: torch's vectorised CPU float32 -> bfloat16 turns NaN
        # into 0xffff, a NaN with the sign bit set, which its CUDA sort puts first
        bits = ours(a, dtype).cpu().view(pcs.int16).numpy()
        return _torch.from_numpy(bits).view(_torch.bfloat16).cuda()
    return _torch.tensor(a).cuda()


def np_of(t):
    t = t.cpu()
    if t.dtype in (pcs.bfloat16,) or (_torch is not None and t.dtype == getattr(_torch, "bfloat16", None)):
        t = t.float()
    return t.numpy()


def eq(a, b):
    a = np.asarray(np_of(a) if not isinstance(a, np.ndarray) else a, np.float64)
    b = np.asarray(np_of(b) if not isinstance(b, np.ndarray) else b, np.float64)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert np.array_equal(a, b, equal_nan=True)


# ---- sort against torch ------------------------------------------------------------------

@needs_torch
@pytest.mark.parametrize("dtype", SORT_DTYPES)
@pytest.mark.parametrize("shape,dim", [((1000,), 0), ((37, 129), 1), ((37, 129), 0), ((5, 3, 40), 1),
                                       ((4, 70000), -1), ((20000, 5), 1), ((3, 1, 2), 2),
                                       ((6, 20001), 1), ((30000, 3), 0)])
def test_sort_matches_torch(dtype, shape, dim):
    a = rand(shape, dtype, 1)
    x, tx = ours(a, dtype), theirs(a, dtype)
    for desc in (False, True):
        r = pcs.sort(x, dim=dim, descending=desc, stable=True)
        t = _torch.sort(tx, dim=dim, descending=desc, stable=True)
        eq(r.values, t.values)
        eq(r.indices, t.indices)
        assert r.values.device == x.device and r.indices.dtype == pcs.int64
        eq(pcs.argsort(x, dim=dim, descending=desc, stable=True), t.indices)


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "int64", "float16", "int8"])
def test_sort_one_long_row_matches_torch(dtype):
    a = rand((1 << 20,), dtype, 2)
    x, tx = ours(a, dtype), theirs(a, dtype)
    r = x.sort()
    t = tx.sort(stable=True)
    eq(r.values, t.values)
    eq(r.indices, t.indices)
    eq(pcs.msort(x), _torch.msort(tx))  # the keys-only path
    eq(x.sort(descending=True).indices, tx.sort(descending=True, stable=True).indices)


def test_sort_signed_zero_and_negative_nan_on_cuda():
    a = np.array([0.0, -0.0, np.nan, -np.nan, 1.0, -np.inf, -0.0], np.float32)
    x = pcs.tensor(a, device="cuda")
    r = x.sort()
    assert r.indices.tolist() == [5, 0, 1, 6, 4, 2, 3]
    assert np.signbit(r.values.cpu().numpy()[1:4]).tolist() == [False, True, True]
    assert x.sort(descending=True).indices.tolist() == [2, 3, 4, 0, 1, 6, 5]
    ms = pcs.msort(x).cpu().numpy()  # keys only: equal values, NaN last
    assert np.array_equal(ms[:5], np.array([-np.inf, 0, 0, 0, 1], np.float32)) and np.isnan(ms[5:]).all()


# ---- selection against torch -------------------------------------------------------------

@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int32", "int64", "uint8"])
def test_topk_matches_torch(dtype):
    for shape, dim, k in [((1 << 16,), 0, 10), ((64, 1024), 1, 10), ((64, 1024), 0, 5),
                          ((3, 5, 7), 1, 5)]:
        a = rand(shape, dtype, 3, ties=False)
        x, tx = ours(a, dtype), theirs(a, dtype)
        for largest in (True, False):
            r = pcs.topk(x, k, dim=dim, largest=largest)
            t = _torch.topk(tx, k, dim=dim, largest=largest)
            eq(r.values, t.values)
            # equal values may come with other indices: compare through the input
            eq(_torch.gather(tx, dim, _torch.tensor(np_of(r.indices)).cuda()), t.values)


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int16"])
def test_kthvalue_median_mode_match_torch(dtype):
    a = rand((33, 65), dtype, 4)
    x, tx = ours(a, dtype), theirs(a, dtype)
    for dim in (0, 1):
        for k in (1, 7, a.shape[dim]):
            r, t = pcs.kthvalue(x, k, dim), _torch.kthvalue(tx, k, dim)
            eq(r.values, t.values)
            eq(_torch.gather(tx, dim, _torch.tensor(np_of(r.indices)).cuda().unsqueeze(dim)).squeeze(dim),
               t.values)
        for name in ("median", "nanmedian"):
            r, t = getattr(pcs, name)(x, dim), getattr(_torch, name)(tx, dim)
            eq(r.values, t.values)
            got = _torch.gather(tx, dim, _torch.tensor(np_of(r.indices)).cuda().unsqueeze(dim)).squeeze(dim)
            eq(got, t.values)
            eq(getattr(pcs, name)(x), getattr(_torch, name)(tx))
    # one clear mode a row (ties between modes are ordered differently by torch's kernels)
    rng = np.random.default_rng(5)
    b = rng.integers(0, 10, (40, 50))
    b[:, :20] = (np.arange(40) % 7)[:, None]
    b = rng.permuted(b, axis=1).astype(dtype)
    x, tx = ours(b, dtype), theirs(b, dtype)
    r, t = pcs.mode(x, 1), _torch.mode(tx, 1)
    eq(r.values, t.values)
    eq(np.take_along_axis(b, np_of(r.indices)[:, None], 1)[:, 0], np_of(t.values))


@needs_torch
@pytest.mark.parametrize("dtype", SORT_DTYPES)
def test_unique_matches_torch(dtype):
    a = rand((300, 7), dtype, 6)
    if a.dtype.kind == "f":  # NaNs are each unique: which one maps where depends on the sort
        a[np.isnan(a)] = 0.25
    x, tx = ours(a, dtype), theirs(a, dtype)
    u, inv, cnt = pcs.unique(x, return_inverse=True, return_counts=True)
    tu, tinv, tcnt = _torch.unique(tx, return_inverse=True, return_counts=True)
    eq(u, tu)
    eq(inv, tinv)
    eq(cnt, tcnt)
    # the values alone (one select pass) and each of the two extras alone
    eq(pcs.unique(x), tu)
    eq(pcs.unique(x, return_inverse=True)[1], tinv)
    eq(pcs.unique(x, return_counts=True)[1], tcnt)
    eq(pcs.unique_consecutive(x.reshape(-1)), _torch.unique_consecutive(tx.reshape(-1)))
    u, inv, cnt = pcs.unique_consecutive(x.reshape(-1), return_inverse=True, return_counts=True)
    tu, tinv, tcnt = _torch.unique_consecutive(tx.reshape(-1), return_inverse=True, return_counts=True)
    eq(u, tu)
    eq(inv, tinv)
    eq(cnt, tcnt)


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "int64", "uint8", "float16"])
def test_unique_dim_matches_torch(dtype):
    rng = np.random.default_rng(22)
    a = rng.integers(0, 3, (40, 3, 5)).astype(dtype)
    a[7] = a[3]
    x, tx = ours(a, dtype), theirs(a, dtype)
    for dim in (0, 1, 2, -1):
        r = pcs.unique(x, dim=dim, return_inverse=True, return_counts=True)
        t = _torch.unique(tx, dim=dim, return_inverse=True, return_counts=True)
        for got, want in zip(r, t):
            eq(got, want)
        r = pcs.unique_consecutive(x, dim=dim, return_inverse=True, return_counts=True)
        t = _torch.unique_consecutive(tx, dim=dim, return_inverse=True, return_counts=True)
        for got, want in zip(r, t):
            eq(got, want)


@needs_torch
def test_unique_large_int64_matches_torch():
    a = np.random.default_rng(7).integers(0, 1 << 18, 1 << 20)
    x, tx = pcs.tensor(a, device="cuda"), _torch.tensor(a, device="cuda")
    u, c = x.unique(return_counts=True)
    tu, tc = tx.unique(return_counts=True)
    eq(u, tu)
    eq(c, tc)
    eq(x.unique(), tu)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("lo, hi", [(0, 1 << 20), (-50, 50), (7, 8), (-(1 << 30), -(1 << 30) + 999)])
def test_long_integer_sort_of_a_narrow_range_numpy_oracle(dtype, lo, hi):
    # unique of 2^20 or more integers sorts only the bits on which its keys
    # differ (kernels/sort.cu: make_keys' span); mixed signs, one value and
    # negatives only each give a different bit count. sort() itself keeps
    # every bit (it does not wait for the device): checked on the same data
    a = np.random.default_rng(hi & 0xFFFF).integers(lo, hi, (1 << 20) + 5).astype(dtype)
    x = pcs.tensor(a, device="cuda")
    v, i = x.sort()
    want_i = np.argsort(a, kind="stable")
    assert np.array_equal(np_of(v), a[want_i]) and np.array_equal(np_of(i), want_i)
    v, i = x.sort(descending=True, stable=True)
    want_i = np.argsort(-a.astype(np.int64), kind="stable")
    assert np.array_equal(np_of(v), a[want_i]) and np.array_equal(np_of(i), want_i)
    assert np.array_equal(np_of(pcs.msort(x)), np.sort(a))
    u, inv, c = x.unique(return_inverse=True, return_counts=True)
    wu, winv, wc = np.unique(a, return_inverse=True, return_counts=True)
    assert np.array_equal(np_of(u), wu) and np.array_equal(np_of(c), wc)
    assert np.array_equal(np_of(inv), winv.reshape(-1))


@pytest.mark.parametrize("dtype", ["float32", "int64"])
@pytest.mark.parametrize("length", [1, 4096, 5000])
def test_searchsorted_one_sequence_numpy_oracle(dtype, length):
    # up to 16 KiB of sequence is searched from shared memory, longer from
    # global memory: both against numpy.searchsorted, ties and ends included
    rng = np.random.default_rng(length)
    seq = np.sort(rng.integers(-300, 300, length)).astype(dtype)
    vals = np.concatenate([rng.integers(-310, 310, 3000), seq[:5]]).astype(dtype)
    s, v = pcs.tensor(seq, device="cuda"), pcs.tensor(vals, device="cuda")
    for side in ("left", "right"):
        want = np.searchsorted(seq, vals, side=side)
        assert np.array_equal(np_of(pcs.searchsorted(s, v, side=side)), want)
        got32 = pcs.searchsorted(s, v, side=side, out_int32=True)
        assert got32.dtype == pcs.int32 and np.array_equal(np_of(got32), want)


@needs_torch
def test_unique_values_keep_each_nan():
    a = np.array([1.0, np.nan, 2.0, np.nan, 1.0, -0.0, 0.0], dtype=np.float32)
    x, tx = pcs.tensor(a, device="cuda"), _torch.tensor(a, device="cuda")
    u, tu = np_of(x.unique()), np_of(tx.unique())
    assert u.shape == tu.shape and np.isnan(u).sum() == np.isnan(tu).sum() == 2
    assert np.array_equal(u[~np.isnan(u)], tu[~np.isnan(tu)])


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "int64"])
def test_searchsorted_bucketize_match_torch(dtype):
    seq = np.sort(rand((1000,), dtype, 8).astype(np.float64), kind="stable").astype(
        np.float32 if dtype == "float16" else dtype)
    seq = seq.astype(dtype)
    vals = rand((50, 40), dtype, 9)
    s, ts = ours(seq, dtype), theirs(seq, dtype)
    v, tv = ours(vals, dtype), theirs(vals, dtype)
    for right in (False, True):
        eq(pcs.searchsorted(s, v, right=right), _torch.searchsorted(ts, tv, right=right))
        eq(pcs.bucketize(v, s, right=right, out_int32=True), _torch.bucketize(tv, ts, right=right, out_int32=True))
    seq2 = np.sort(rand((50, 30), dtype, 10).astype(np.float64), axis=1).astype(dtype)
    s2, ts2 = ours(seq2, dtype), theirs(seq2, dtype)
    eq(pcs.searchsorted(s2, v, side="right"), _torch.searchsorted(ts2, tv, side="right"))
    rng = np.random.default_rng(10)
    srt = np.stack([rng.permutation(30) for _ in range(50)])
    shuffled = np.empty_like(seq2)
    np.put_along_axis(shuffled, srt, seq2, 1)  # shuffled[srt] is seq2, sorted
    eq(pcs.searchsorted(ours(shuffled, dtype), v, sorter=pcs.tensor(srt, device="cuda")),
       _torch.searchsorted(theirs(shuffled, dtype), tv, sorter=_torch.tensor(srt, device="cuda")))


@needs_torch
def test_bincount_histc_count_nonzero_match_torch():
    rng = np.random.default_rng(11)
    a = rng.integers(0, 1000, 100000)
    w = rng.standard_normal(100000)
    x, tx = pcs.tensor(a, device="cuda"), _torch.tensor(a, device="cuda")
    eq(x.bincount(), tx.bincount())
    eq(x.bincount(minlength=2000), tx.bincount(minlength=2000))
    r = x.bincount(pcs.tensor(w, device="cuda"))
    t = tx.bincount(_torch.tensor(w, device="cuda"))
    assert r.dtype == pcs.float64
    np.testing.assert_allclose(np_of(r), np_of(t), rtol=1e-9, atol=1e-9)
    r = x.bincount(pcs.tensor(w.astype(np.float32), device="cuda"))
    assert r.dtype == pcs.float32
    for dtype in ("float16", "bfloat16"):  # torch's CUDA histc refuses both (found on the GPU machine)
        with pytest.raises(RuntimeError, match="HalfTensor is not supported" if dtype == "float16" else "BFloat16"):
            pcs.histc(pcs.ones(4, dtype=getattr(pcs, dtype), device="cuda"))
    for dtype in ("float32", "float64"):
        f = rand((5000,), dtype, 12, ties=False)
        f = np.where(np.isnan(f.astype(np.float64)), 0.5, f).astype(f.dtype)
        xf, tf = ours(f, dtype), theirs(f, dtype)
        eq(pcs.histc(xf, bins=37, min=-2, max=2), _torch.histc(tf, bins=37, min=-2, max=2))
        fin = f[np.isfinite(f.astype(np.float64))]
        eq(pcs.histc(ours(fin, dtype), bins=10), _torch.histc(theirs(fin, dtype), bins=10))
    g = rand((20, 30, 4), "float32", 13)
    eq(pcs.count_nonzero(ours(g, "float32"), dim=(0, 2)), _torch.count_nonzero(theirs(g, "float32"), dim=(0, 2)))


@needs_torch
@pytest.mark.parametrize("dtype", SORT_DTYPES)
def test_cummax_cummin_match_torch(dtype):
    for shape, dim in [((5000,), 0), ((30, 77), 1), ((30, 77), 0), ((4, 5, 6), 1)]:
        a = rand(shape, dtype, 14)
        _cumext_like_torch(ours(a, dtype), theirs(a, dtype), dim)


def _cumext_like_torch(x, tx, dim):
    for name in ("cummax", "cummin"):
        try:
            t = getattr(_torch, name)(tx, dim)
        except RuntimeError:  # a dtype torch's kernel does not take
            continue
        r = getattr(pcs, name)(x, dim)
        eq(r.values, t.values)
        eq(r.indices, t.indices)


@needs_torch
@pytest.mark.parametrize("dtype", SORT_DTYPES)
def test_short_row_scans_match_torch(dtype):
    """Small inputs scan a block a row (cub::BlockScan, 1, 4 or 8 elements a
    thread): rows of one element, of each items-a-thread class and their
    edges, the longest such row (2048) and one past it (the device-wide
    scan), more rows than the grid has blocks, a dim that is not the last;
    ties and NaN as torch decides them."""
    for shape, dim in [((1,), 0), ((31,), 0), ((256,), 0), ((257,), 0), ((1024,), 0), ((1025,), 0),
                       ((2048,), 0), ((2049,), 0), ((10000, 6), 1), ((64, 1000), 1), ((7, 300), 0),
                       ((3, 40, 5), 1)]:
        a = rand(shape, dtype, 16 + len(shape))
        x, tx = ours(a, dtype), theirs(a, dtype)
        _cumext_like_torch(x, tx, dim)
        if dtype in ("float32", "float64", "float16", "bfloat16"):
            tol = {"float32": 1e-4, "float64": 1e-10, "float16": 2e-2, "bfloat16": 1e-1}[dtype]
            np.testing.assert_allclose(np_of(pcs.logcumsumexp(x, dim)).astype(np.float64),
                                       np_of(_torch.logcumsumexp(tx, dim)).astype(np.float64),
                                       rtol=tol, atol=tol)


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_logcumsumexp_matches_torch(dtype):
    a = (np.random.default_rng(15).standard_normal((40, 3000)) * 4).astype(np.float32)
    a[3, 100] = -np.inf
    a[4, :10] = -np.inf
    a[5, 50] = np.inf
    x, tx = ours(a if dtype == "bfloat16" else a.astype(dtype), dtype), theirs(a if dtype == "bfloat16" else a.astype(dtype), dtype)
    tol = {"float32": 1e-4, "float64": 1e-10, "float16": 2e-2, "bfloat16": 1e-1}[dtype]
    for dim in (0, 1):
        np.testing.assert_allclose(np_of(pcs.logcumsumexp(x, dim)).astype(np.float64),
                                   np_of(_torch.logcumsumexp(tx, dim)).astype(np.float64), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float32", "int64", "float16", "uint8"])
def test_few_long_rows_sort_one_at_a_time_or_together_numpy_oracle(dtype):
    # rows of >= 2^16 keys, too few to fill the GPU together, sort one at a
    # time (sort_keys.cuh): keys only (msort along dim 0, a copy to rows
    # first) and with indices, descending, and rows of different content
    a = rand((70001, 5), dtype, 19)
    x = ours(a, dtype)
    want = np.sort(a, axis=0, kind="stable")
    eq(pcs.msort(x), want)
    r = x.t().sort(dim=1, descending=True, stable=True)
    # descending and stable: NaN first, then the rest largest first, ties in
    # index order (np.lexsort is stable; its last key is the primary one)
    f = a.T.astype(np.float64)
    nan = np.isnan(f)
    i = np.stack([np.lexsort((np.where(n, 0.0, -v), ~n)) for v, n in zip(f, nan)])
    eq(r.indices, i)
    eq(r.values, np.take_along_axis(a.T, i, 1))
    # 6 rows of 20001: one sort of all rows under composite keys (the row
    # number above the key's bits; 64-bit keys: a sort of all keys, then a
    # stable one by row)
    b = rand((20001, 6), dtype, 20)
    eq(pcs.msort(ours(b, dtype)), np.sort(b, axis=0, kind="stable"))


@pytest.mark.parametrize("dtype", ["int64", "float64", "float32", "int32"])
@pytest.mark.parametrize("rows", [65, 256, 300])
def test_many_long_rows_sorted_together_numpy_oracle(dtype, rows):
    # rows of more than 16384 keys sorted together: 32-bit keys under
    # composite keys of up to 256 rows (the segmented sort beyond), 64-bit
    # keys as one sort of all keys then a stable sort by row number (a byte
    # up to 256 rows, two beyond); ties in a narrow range keep index order
    k = 16385
    if dtype.startswith("int"):
        a = np.random.default_rng(rows).integers(-50, 50, (rows, k)).astype(dtype)
    else:
        a = rand((rows, k), dtype, rows)
    x = ours(a, dtype)
    r = x.sort(dim=1, stable=True)
    i = np.argsort(a, axis=1, kind="stable")
    eq(r.indices, i)
    eq(r.values, np.take_along_axis(a, i, 1))
    d = x.sort(dim=1, descending=True, stable=True)
    f = a.astype(np.float64)
    nan = np.isnan(f)
    j = np.stack([np.lexsort((np.where(n, 0.0, -v), ~n)) for v, n in zip(f, nan)])
    eq(d.indices, j)
    eq(pcs.sort(x, dim=1).values, np.sort(a, axis=1))


# ---- without torch: NumPy oracles, streams, memory ------------------------------------------

def test_sort_large_rows_numpy_oracle():
    a = np.random.default_rng(16).standard_normal((3, 300001)).astype(np.float32)
    x = pcs.tensor(a, device="cuda")
    r = x.sort(dim=1)
    i = np.argsort(a, axis=1, kind="stable")
    assert np.array_equal(r.indices.cpu().numpy(), i)
    assert np.array_equal(r.values.cpu().numpy(), np.take_along_axis(a, i, 1))
    b = np.random.default_rng(17).integers(-5, 5, (50000, 3)).astype(np.int16)
    y = pcs.tensor(b, device="cuda")
    assert np.array_equal(y.sort(1).indices.cpu().numpy(), np.argsort(b, axis=1, kind="stable"))
    assert np.array_equal(y.sort(0).indices.cpu().numpy(), np.argsort(b, axis=0, kind="stable"))


def test_ops_run_on_the_current_stream():
    a = np.random.default_rng(18).standard_normal(1 << 18).astype(np.float32)
    x = pcs.tensor(a, device="cuda")
    pcs.cuda.synchronize()
    s = pcs.cuda.Stream()
    with pcs.cuda.stream(s):  # warm the allocator's cache for s
        warm = [x.sort(), x.topk(5), x.cummax(0), x.unique(), x.logcumsumexp(0), x.median()]
    del warm
    pcs.cuda.synchronize()
    with pcs.cuda.stream(s):
        pcs.cuda._sleep(200_000_000)
        srt = x.sort()
        cm = x.cummax(0)
        lse = x.logcumsumexp(0)
        med = x.median(0)
    assert not s.query()  # queued behind the sleep
    assert pcs.cuda.default_stream().query()
    s.synchronize()
    assert np.array_equal(srt.values.cpu().numpy(), np.sort(a, kind="stable"))
    assert np.array_equal(cm.values.cpu().numpy(), np.maximum.accumulate(a))
    assert math.isclose(lse[-1].item(), float(np.logaddexp.reduce(a.astype(np.float64))), rel_tol=1e-4)
    assert med.values.item() == np.sort(a)[(a.size - 1) // 2]


def test_workspaces_return_to_the_allocator():
    pcs.cuda.synchronize()
    base = pcs.cuda.memory_allocated()
    x = pcs.randn(1 << 16, device="cuda")
    ints = pcs.randint(0, 100, (1 << 16,), device="cuda")
    outs = [x.sort(), x.topk(3), x.kthvalue(5), x.median(0), x.mode(), x.unique(return_inverse=True,
            return_counts=True), x.cummin(0), x.logcumsumexp(0), ints.bincount(), x.histc(),
            pcs.searchsorted(x.sort().values, x), x.count_nonzero(), pcs.msort(x)]
    del outs, x, ints
    pcs.cuda.synchronize()
    assert pcs.cuda.memory_allocated() == base


def test_errors_on_cuda_leave_the_device_usable():
    x = pcs.tensor([[1.0, 2.0]], device="cuda")
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"):
        x.sort(2)
    with pytest.raises(RuntimeError, match="same device"):
        pcs.searchsorted(pcs.tensor([1.0, 2.0]), x)
    with pytest.raises(RuntimeError, match="sorter index out of range"):
        pcs.searchsorted(x, x, sorter=pcs.tensor([[0, 5]], device="cuda"))
    with pytest.raises(RuntimeError, match="non-negative"):
        pcs.bincount(pcs.tensor([1, -2], device="cuda"))
    assert x.sort(descending=True).values.tolist() == [[2.0, 1.0]]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "uint8", "int8", "int64", "bool"])
def test_topk_block_path_numpy_oracle(dtype):
    """topk with k <= 256 sorts tiles in shared memory: one tile (rows up to 1024),
    several tiles of 4096 with a partial last one, keys equal to the padding's (NaN for
    smallest, the minimum integer for largest), and k past the block path (a full sort)."""
    for shape, dim in [((7, 1000), 1), ((3, 10001), 1), ((9000,), 0), ((4097, 3), 0), ((2, 5, 300), 2)]:
        a = rand(shape, dtype, 20)
        if dtype == "uint8":
            a[..., :50] = 0  # to_key's largest padding key, for largest=True
        x = ours(a, dtype)
        an = np_of(x).astype(np.float64)
        n = an.shape[dim]
        for k in (1, 10, 256, min(257, n)):
            for largest in (True, False):
                r = x.topk(k, dim=dim, largest=largest)
                m = np.moveaxis(an, dim, -1)
                nan = np.isnan(m)
                v = np.where(nan, 0.0, m)
                flat_v, flat_nan = v.reshape(-1, n), nan.reshape(-1, n)
                order = np.stack([np.lexsort((-fv, ~fn)) if largest else np.lexsort((fv, fn))
                                  for fv, fn in zip(flat_v, flat_nan)]).reshape(m.shape)
                want = np.moveaxis(np.take_along_axis(m, order[..., :k], -1), -1, dim)
                got = np_of(r.values).astype(np.float64)
                assert np.array_equal(got, want, equal_nan=True), (shape, k, largest)
                gi = np_of(r.indices)
                assert gi.min() >= 0 and gi.max() < n
                assert np.array_equal(np.take_along_axis(an, gi, dim), want, equal_nan=True)
                if k <= n:
                    # no index twice in a row
                    srt = np.sort(np.moveaxis(gi, dim, -1), axis=-1)
                    assert (np.diff(srt, axis=-1) > 0).all()


def _oracle_order(row, desc):
    """torch's stable order of one row: NaN largest, -0.0 == +0.0."""
    v = row.astype(np.float64)
    nan = np.isnan(v)
    v = np.where(nan, 0.0, v) + 0.0
    pos = np.arange(row.shape[0])
    return np.lexsort((pos, -v, ~nan)) if desc else np.lexsort((pos, v, nan))


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64", "int8", "int64", "bool", "uint8"])
def test_sort_path_boundaries_numpy_oracle(dtype):
    """Row lengths around the one-block paths (1024: 128 x 8, 4096: 256 x 16) and past
    them (the device-wide sorts), several rows and one, with ties, NaN and signed zeros."""
    for rows, n in [(3, 1), (3, 2), (5, 1023), (5, 1024), (5, 1025), (2, 4095), (2, 4096), (2, 4097),
                    (1, 4097), (1, 5000)]:
        a = rand((rows, n), dtype, 21 + n)
        if a.dtype.kind == "f" and n > 4:
            a[:, 1] = -0.0
            a[:, 3] = 0.0
        x = ours(a, dtype)
        an = np_of(x)
        for desc in (False, True):
            r = x.sort(dim=1, descending=desc)
            want_i = np.stack([_oracle_order(row, desc) for row in an])
            assert np.array_equal(np_of(r.indices), want_i), (rows, n, desc)
            want_v = np.take_along_axis(an, want_i, 1)
            got_v = np_of(r.values)
            assert np.array_equal(got_v.astype(np.float64), want_v.astype(np.float64), equal_nan=True)
            if a.dtype.kind == "f":  # exact bits: -0.0 stays -0.0
                assert np.array_equal(np.signbit(got_v), np.signbit(want_v))
            assert np.array_equal(np_of(x.argsort(dim=1, descending=desc)), want_i)
        # msort: the keys-only forms, values only
        got = np_of(pcs.msort(x.t()))
        want = np.stack([row[_oracle_order(row, False)] for row in an]).T
        assert np.array_equal(got.astype(np.float64), want.astype(np.float64), equal_nan=True)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int32", "int64", "uint8"])
def test_cumsum_cumprod_long_rows_through_cub(dtype):
    """A few long lines (at most 32 of at least 4096) take CUB's device-wide scan, the
    innermost dim in place, another through a transposed copy. (The GPU accumulates
    float16/bfloat16 in float, as torch: the tolerance is the output's rounding.)"""
    rng = np.random.default_rng(23)
    for shape, dim in [((1 << 20,), 0), ((3, 50000), 1), ((32, 4096), 1), ((5000, 3), 0),
                       ((2, 4100, 3), 1)]:
        if dtype in ("int32", "int64", "uint8"):
            a = rng.integers(0, 5, shape).astype(dtype)
        else:
            a = rng.integers(-8, 9, shape).astype(np.float32) / 8
            if dtype != "bfloat16":
                a = a.astype(dtype)
        x = ours(a, dtype)
        an = np_of(x).astype(np.float64)
        got = x.cumsum(dim)
        assert got.dtype == (pcs.int64 if dtype in ("int32", "uint8") else x.dtype)
        want = np.cumsum(an, axis=dim)
        if dtype in ("int32", "int64", "uint8"):
            assert np.array_equal(np_of(got), want.astype(np.int64))
        else:
            scale = np.maximum(np.abs(want), 1.0)
            tol = {"float32": 1e-4, "float64": 1e-10, "float16": 3e-2, "bfloat16": 3e-2}[dtype]
            assert (np.abs(np_of(got).astype(np.float64) - want) <= tol * scale * 50).all()
        if dim != len(shape) - 1:
            continue
        p = np.full(shape[:-1] + (5000,), 1.0005 if dtype not in ("int32", "int64", "uint8") else 1)
        px = ours(p.astype(np.float32 if dtype in ("bfloat16",) else
                           (dtype if dtype not in ("uint8",) else "int64")), dtype if dtype != "uint8" else "int64")
        gp = np_of(px.cumprod(-1)).astype(np.float64)
        wp = np.cumprod(np_of(px).astype(np.float64), axis=-1)
        assert np.allclose(gp, wp, rtol=5e-2 if dtype in ("float16", "bfloat16") else 1e-4)


@pytest.mark.parametrize("dtype", ["int64", "int16", "float32", "float16", "uint8"])
def test_mode_long_rows_numpy_oracle(dtype):
    """Rows of 65536 or more, at most 8 of them, take CUB's run-length encoding."""
    rng = np.random.default_rng(24)
    for shape, dim in [((200000,), 0), ((3, 70000), 1), ((70000, 2), 0)]:
        a = rng.integers(0, 60, shape).astype(dtype)
        x = ours(a, dtype)
        r = x.mode(dim)
        an = np_of(x).astype(np.float64)
        m = np.moveaxis(an, dim, -1).reshape(-1, an.shape[dim])
        want_v, want_i = [], []
        for row in m:
            vals, counts = np.unique(row, return_counts=True)
            v = vals[np.argmax(counts)]  # the smallest among the most frequent
            want_v.append(v)
            want_i.append(np.flatnonzero(row == v)[-1])  # its last occurrence
        assert np.array_equal(np_of(r.values).reshape(-1).astype(np.float64), want_v)
        assert np.array_equal(np_of(r.indices).reshape(-1), want_i)
    # every value once: the smallest wins
    p = np.random.default_rng(25).permutation(100000).astype(np.float32)
    r = pcs.tensor(p, device="cuda").mode()
    assert r.values.item() == 0.0 and r.indices.item() == int(np.flatnonzero(p == 0)[0])
