"""Advanced indexing and the gather/scatter/mask ops on the CPU, against
NumPy: random index expressions (integer tensors and lists, negative
indices, boolean masks, ints, slices, None, Ellipsis) read and written, with
torch's rule for where the advanced dims land; index_put_ (accumulate),
index_select, index_add_/copy_/fill_, masked_*, nonzero, where(cond), take,
take_along_dim, gather, scatter*, and torch's errors."""
import numpy as np
import pytest

import pycuda_sem as torch


def T(a, dtype=None):
    return torch.tensor(np.asarray(a), dtype=dtype)


# ---- the oracle: torch's algorithm, in NumPy ---------------------------------
# torch applies ints, slices, None and Ellipsis first (a view), then the
# advanced items over that view; NumPy's own placement rule then agrees with
# torch's (it differs only where an int separates two advanced indices).

def split_index(items, ndim):
    # an Ellipsis spanning no dims separates nothing in torch (NumPy counts
    # it as a separator): the second step spells its dims out
    consumed = sum(it.ndim if isinstance(it, np.ndarray) and it.dtype == np.bool_ else 1
                   for it in items if it is not None and it is not Ellipsis)
    basic, second = [], []
    for it in items:
        if isinstance(it, np.ndarray) and it.dtype == np.bool_:
            basic += [slice(None)] * it.ndim
            second.append(it)
        elif isinstance(it, np.ndarray):
            basic.append(slice(None))
            second.append(it)
        elif isinstance(it, int):
            basic.append(it)
        elif it is None:
            basic.append(None)
            second.append(slice(None))
        elif it is Ellipsis:
            basic.append(Ellipsis)
            second += [slice(None)] * (ndim - consumed)
        else:
            basic.append(it)
            second.append(slice(None))
    return tuple(basic), tuple(second)


def np_get(a, items):
    basic, second = split_index(items, a.ndim)
    return a[basic][second]


def np_set(a, items, value):
    a = a.copy()
    basic, second = split_index(items, a.ndim)
    v = a[basic]
    v[second] = value
    return a


def to_torch_items(items, rng):
    out = []
    for it in items:
        if isinstance(it, np.ndarray):
            r = rng.integers(3)
            if it.dtype != np.bool_ and r == 0 and it.ndim == 1:
                out.append(it.tolist())  # a list
            elif it.dtype != np.bool_ and r == 1:
                out.append(T(it, torch.int32))
            else:
                out.append(T(it))
        else:
            out.append(it)
    return tuple(out)


def random_expression(rng, shape):
    """A random index for an array of `shape`: each dim gets an int, a slice,
    an index array (shared broadcastable shapes) or is part of a mask; None and
    one Ellipsis are sprinkled in; at least one advanced item."""
    items, d, nd = [], 0, len(shape)
    bshape = [(3,), (2, 1), (1, 3), (2, 3), ()][rng.integers(5)] or (2,)
    has_adv = False
    used_ellipsis = False
    while d < nd:
        r = rng.integers(7)
        if r == 0:
            items.append(int(rng.integers(-shape[d], shape[d])))
            d += 1
        elif r == 1:
            start = int(rng.integers(-shape[d] - 1, shape[d] + 1))
            step = int(rng.integers(1, 3))
            items.append(slice(start if rng.integers(2) else None, None, step))
            d += 1
        elif r in (2, 3):
            items.append(rng.integers(-shape[d], shape[d], size=bshape))
            has_adv = True
            d += 1
        elif r == 4:
            k = min(int(rng.integers(1, 3)), nd - d)
            items.append(rng.random(shape[d:d + k]) < 0.5)
            has_adv = True
            d += k
        elif r == 5:
            items.append(None)
        elif not used_ellipsis and rng.integers(2):
            items.append(Ellipsis)
            used_ellipsis = True
            d = nd - int(rng.integers(0, nd - d + 1))
        else:
            items.append(slice(None))
            d += 1
    if not has_adv:
        pos = int(rng.integers(len(items) + 1))
        items.insert(pos, np.array([0]))
        # the inserted index consumes a dim: only valid if one is free
        if sum(1 for it in items if not (it is None or it is Ellipsis)
               and not (isinstance(it, np.ndarray) and it.dtype == np.bool_)) > nd:
            items.pop(pos)
            items.insert(0, None)
            items.insert(0, np.array([0, -1, 0]))
            items[1:] = items[2:]
    return items


@pytest.mark.parametrize("seed", range(150))
def test_random_getitem_setitem(seed):
    rng = np.random.default_rng(seed)
    shape = tuple(int(s) for s in rng.integers(1, 5, size=rng.integers(1, 5)))
    a = rng.standard_normal(shape).astype(np.float32)
    items = random_expression(rng, shape)
    try:
        want = np_get(a, items)
    except IndexError:
        pytest.skip("expression not valid for this shape")
    x = T(a)
    titems = to_torch_items(items, rng)
    got = x[titems]
    assert tuple(got.shape) == want.shape, (items, got.shape, want.shape)
    np.testing.assert_array_equal(got.numpy(), want)
    # setitem with a tensor of the result's shape, a broadcast row and a scalar
    val = rng.standard_normal(want.shape).astype(np.float32)
    for value, tval in [(val, T(val)), (np.float32(2.5), 2.5)] + (
            [(val[..., :1], T(val[..., :1]))] if want.ndim else []):
        # duplicates: the last write in index order wins, as NumPy's
        exp = np_set(a, items, value)
        y = T(a)
        y[titems] = tval
        np.testing.assert_array_equal(y.numpy(), exp)


def test_placement_rule():
    x = torch.arange(5 * 6 * 7).reshape(5, 6, 7)
    i = torch.tensor([0, 2])
    assert x[:, i, i].shape == (5, 2)          # adjacent: in place
    assert x[i, :, i].shape == (2, 6)          # separated by a slice: front
    assert x[i, None, i].shape == (2, 1, 7)      # separated by None: front
    assert x[1, :, i].shape == (6, 2)          # an int is basic, as in torch
    assert x[..., i].shape == (5, 6, 2)
    assert x[None, i].shape == (1, 2, 6, 7)


def test_bools_and_masks():
    a = np.arange(12.0).reshape(3, 4)
    x = T(a)
    assert x[True].shape == (1, 3, 4)
    assert x[False].shape == (0, 3, 4)
    assert x[torch.tensor(True)].shape == (1, 3, 4)
    m = a > 4
    np.testing.assert_array_equal(x[T(m)].numpy(), a[m])
    np.testing.assert_array_equal(x[:, T(m[0])].numpy(), a[:, m[0]])
    np.testing.assert_array_equal(x[[True, False, True]].numpy(), a[[True, False, True]])
    y = T(a)
    y[T(m)] = 0
    np.testing.assert_array_equal(y.numpy(), np.where(m, 0, a))
    assert x[[]].shape == (0, 4)
    assert x[x > 100].shape == (0,)


def test_result_dtypes_and_copies():
    x = torch.arange(6, dtype=torch.int16)
    r = x[[1, 2]]
    assert r.dtype == torch.int16
    r[0] = 100                          # a copy, not a view
    assert x[1].item() == 1
    b = torch.tensor([True, False, True])
    assert b[torch.tensor([0, 2])].dtype == torch.bool


def test_index_errors():
    x = torch.zeros(4)
    with pytest.raises(IndexError, match="tensors used as indices must be long, int, byte or bool tensors"):
        x[torch.tensor([1.0])]
    with pytest.raises(IndexError, match=r"The shape of the mask \[3\] at index 0 does not match the shape "
                                         r"of the indexed tensor \[4\] at index 0"):
        x[torch.tensor([True, False, True])]
    with pytest.raises(IndexError, match="index 10 is out of bounds for dimension 0 with size 4"):
        x[torch.tensor([0, 10])]
    with pytest.raises(IndexError, match="index -5 is out of bounds for dimension 0 with size 4"):
        x[[-5]]
    with pytest.raises(IndexError, match="index 10 is out of bounds for dimension 0 with size 4"):
        x[torch.tensor([10])] = 1.0
    with pytest.raises(IndexError, match="shape mismatch: indexing tensors could not be broadcast"):
        torch.zeros(4, 4)[torch.tensor([0, 1]), torch.tensor([0, 1, 2])]
    with pytest.raises(RuntimeError, match="shape mismatch: value tensor of shape"):
        x[torch.tensor([0, 1])] = torch.ones(3)
    with pytest.raises(IndexError, match="too many indices"):
        x[[0], [0]]
    assert x.sum().item() == 0  # nothing was written by the failed calls


def test_index_put():
    a = np.zeros(5, np.float32)
    x = T(a)
    idx = torch.tensor([0, 1, 1, 4, 1])
    v = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0])
    r = x.index_put((idx,), v, accumulate=True)
    np.testing.assert_array_equal(r.numpy(), [1, 10, 0, 0, 4])
    assert x.sum().item() == 0
    x.index_put_((idx,), v)
    np.testing.assert_array_equal(x.numpy(), [1, 5, 0, 0, 4])  # the last write wins
    torch.index_put_(x, (idx,), v, accumulate=True)
    np.testing.assert_array_equal(x.numpy(), [2, 15, 0, 0, 8])
    y = torch.zeros(3, 4, dtype=torch.int64)
    y.index_put_((torch.tensor([0, 0, 2]), None), torch.tensor([1, 2, 3, 4]), accumulate=True)
    np.testing.assert_array_equal(y.numpy(), [[2, 4, 6, 8], [0] * 4, [1, 2, 3, 4]])
    with pytest.raises(RuntimeError, match="Index put requires the source and destination dtypes match"):
        x.index_put_((idx,), torch.ones(5, dtype=torch.float64))


# ---- dim-wise ops -------------------------------------------------------------

def np_gather(a, dim, idx):
    out = np.empty(idx.shape, a.dtype)
    for pos in np.ndindex(*idx.shape):
        src = list(pos)
        src[dim] = idx[pos]
        out[pos] = a[tuple(src)]
    return out


def np_scatter(a, dim, idx, src, mode=None, include_self=True):
    a = a.copy()
    groups = {}
    for pos in np.ndindex(*idx.shape):
        dst = list(pos)
        dst[dim] = idx[pos]
        groups.setdefault(tuple(dst), []).append(src[pos] if isinstance(src, np.ndarray) else src)
    for dst, vals in groups.items():
        if mode is None:
            a[dst] = vals[-1]
            continue
        vs = ([a[dst]] if include_self else []) + vals
        if mode in ("add", "sum"):
            a[dst] = np.sum(vs, dtype=a.dtype)
        elif mode in ("multiply", "prod"):
            a[dst] = np.prod(vs, dtype=a.dtype)
        elif mode == "amax":
            a[dst] = np.max(vs)
        elif mode == "amin":
            a[dst] = np.min(vs)
        elif mode == "mean":
            s = np.sum(vs, dtype=a.dtype)
            a[dst] = s // len(vs) if a.dtype.kind in "iu" else s / len(vs)
    return a


@pytest.mark.parametrize("seed", range(8))
def test_gather_scatter(seed):
    rng = np.random.default_rng(seed)
    shape = tuple(int(s) for s in rng.integers(1, 5, size=3))
    dim = int(rng.integers(-3, 3))
    a = rng.integers(-9, 9, size=shape).astype(np.float64)
    ishape = tuple(int(rng.integers(1, s + 1)) for s in shape)
    d = dim % 3
    ishape = ishape[:d] + (int(rng.integers(1, 6)),) + ishape[d + 1:]
    idx = rng.integers(0, shape[d], size=ishape)  # torch's gather and scatter take no negative index
    nidx = idx
    x, ti = T(a), T(idx)
    np.testing.assert_array_equal(torch.gather(x, dim, ti).numpy(), np_gather(a, d, nidx))
    np.testing.assert_array_equal(x.gather(dim, ti).numpy(), np_gather(a, d, nidx))
    src = rng.integers(1, 4, size=ishape).astype(np.float64)
    ts = T(src)
    np.testing.assert_array_equal(x.scatter(dim, ti, ts).numpy(), np_scatter(a, d, nidx, src))
    np.testing.assert_array_equal(x.scatter(dim, ti, 7.0).numpy(), np_scatter(a, d, nidx, 7.0))
    np.testing.assert_array_equal(torch.scatter(x, dim, ti, ts, reduce="add").numpy(),
                                  np_scatter(a, d, nidx, src, "add"))
    np.testing.assert_array_equal(x.scatter(dim, ti, ts, reduce="multiply").numpy(),
                                  np_scatter(a, d, nidx, src, "multiply"))
    np.testing.assert_array_equal(torch.scatter_add(x, dim, ti, ts).numpy(),
                                  np_scatter(a, d, nidx, src, "add"))
    for red in ["sum", "prod", "mean", "amax", "amin"]:
        for inc in [True, False]:
            got = x.scatter_reduce(dim, ti, ts, red, include_self=inc)
            np.testing.assert_allclose(got.numpy(), np_scatter(a, d, nidx, src, red, inc), rtol=1e-12)
    y = x.clone()
    assert y.scatter_add_(dim, ti, ts) is y
    np.testing.assert_array_equal(y.numpy(), np_scatter(a, d, nidx, src, "add"))
    y = x.clone()
    y.scatter_(dim, ti, ts)
    np.testing.assert_array_equal(y.numpy(), np_scatter(a, d, nidx, src))
    yi = T(a.astype(np.int64))
    got = yi.scatter_reduce(dim, ti, T(src.astype(np.int64)), "mean", include_self=True)
    np.testing.assert_array_equal(got.numpy(), np_scatter(a.astype(np.int64), d, nidx,
                                                          src.astype(np.int64), "mean"))


def test_index_select_add_copy_fill():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 5, 3))
    x = T(a)
    for dim in range(3):
        idx = rng.integers(0, a.shape[dim], size=6)  # negative: out of range, as in torch
        nidx = idx
        np.testing.assert_array_equal(torch.index_select(x, dim, T(idx)).numpy(), np.take(a, nidx, axis=dim))
        np.testing.assert_array_equal(x.index_select(dim, T(idx, torch.int32)).numpy(),
                                      np.take(a, nidx, axis=dim))
        src = rng.standard_normal(np.take(a, nidx, axis=dim).shape)
        exp = a.copy()
        for k, j in enumerate(nidx):
            sl = [slice(None)] * 3
            sl[dim] = j
            ssl = [slice(None)] * 3
            ssl[dim] = k
            exp[tuple(sl)] += 2.0 * src[tuple(ssl)]
        np.testing.assert_allclose(x.index_add(dim, T(idx), T(src), alpha=2).numpy(), exp, rtol=1e-12)
        y = x.clone()
        y.index_add_(dim, T(idx), T(src), alpha=2)
        np.testing.assert_allclose(y.numpy(), exp, rtol=1e-12)
        uidx = rng.permutation(a.shape[dim])[:2]
        src2 = np.take(src, [0, 1], axis=dim)
        exp = a.copy()
        exp2 = a.copy()
        for k, j in enumerate(uidx):
            sl = [slice(None)] * 3
            sl[dim] = j
            ssl = [slice(None)] * 3
            ssl[dim] = k
            exp[tuple(sl)] = src2[tuple(ssl)]
            exp2[tuple(sl)] = -1.5
        np.testing.assert_array_equal(x.index_copy(dim, T(uidx), T(src2)).numpy(), exp)
        y = x.clone()
        y.index_fill_(dim, T(uidx), -1.5)
        np.testing.assert_array_equal(y.numpy(), exp2)
        y = x.clone()
        y.index_fill_(dim, T(uidx - a.shape[dim]), -1.5)  # index_fill_ counts negatives from the end
        np.testing.assert_array_equal(y.numpy(), exp2)
        np.testing.assert_array_equal(torch.index_fill(x, dim, T(uidx), torch.tensor(-1.5)).numpy(), exp2)
    np.testing.assert_array_equal(x.numpy(), a)  # out-of-place forms left x alone


def test_negative_indices_as_torch():
    """torch's dim-wise ops (gather, scatter*, take_along_dim, index_select,
    index_add_, index_copy_) refuse a negative index; take, index_fill_,
    index_put_ and x[idx] count it from the end."""
    x = T(np.arange(4.0))
    neg = T(np.array([-1]))
    one = T(np.array([1.0]))
    refuse = [lambda: x.gather(0, neg), lambda: x.clone().scatter_(0, neg, one),
              lambda: x.clone().scatter_add_(0, neg, one),
              lambda: x.clone().scatter_reduce_(0, neg, one, "amax"),
              lambda: x.take_along_dim(neg), lambda: x.index_select(0, neg),
              lambda: x.clone().index_add_(0, neg, one), lambda: x.clone().index_copy_(0, neg, one)]
    for call in refuse:
        with pytest.raises(IndexError, match="index -1 is out of bounds for dimension 0 with size 4"):
            call()
    assert x.take(neg).tolist() == [3.0]
    assert x.clone().index_fill_(0, neg, 9.0).tolist() == [0.0, 1.0, 2.0, 9.0]
    assert x.clone().index_put_((neg,), one).tolist() == [0.0, 1.0, 2.0, 1.0]
    assert x[neg].tolist() == [3.0]


def test_masked_ops():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((3, 4)).astype(np.float32)
    m = rng.random((3, 4)) < 0.5
    row = rng.random(4) < 0.5
    x, tm = T(a), T(m)
    np.testing.assert_array_equal(x.masked_fill(tm, 9).numpy(), np.where(m, 9, a))
    np.testing.assert_array_equal(torch.masked_fill(x, T(row), torch.tensor(1.5)).numpy(), np.where(row, 1.5, a))
    xi = torch.arange(12).reshape(3, 4)
    assert xi.masked_fill(tm, 2.7).dtype == torch.int64
    y = x.clone()
    assert y.masked_fill_(tm, -1.0) is y
    np.testing.assert_array_equal(y.numpy(), np.where(m, -1, a))
    np.testing.assert_array_equal(torch.masked_select(x, tm).numpy(), a[m])
    np.testing.assert_array_equal(x.masked_select(T(row)).numpy(), a[np.broadcast_to(row, a.shape)])
    src = rng.standard_normal(20).astype(np.float32)
    exp = a.copy()
    exp[m] = src[:m.sum()]
    y = x.clone()
    y.masked_scatter_(tm, T(src))
    np.testing.assert_array_equal(y.numpy(), exp)
    np.testing.assert_array_equal(x.masked_scatter(tm, T(src)).numpy(), exp)
    with pytest.raises(RuntimeError, match="masked_fill_ only supports boolean masks"):
        x.masked_fill_(T(m.astype(np.int64)), 1.0)
    with pytest.raises(RuntimeError, match="0-dimensional value tensor"):
        x.masked_fill(tm, torch.ones(2))


def test_nonzero_where_take():
    rng = np.random.default_rng(5)
    a = (rng.random((3, 4, 2)) < 0.4).astype(np.float32) * 3
    x = T(a)
    nz = torch.nonzero(x)
    assert nz.dtype == torch.int64
    np.testing.assert_array_equal(nz.numpy(), np.argwhere(a))
    tup = x.nonzero(as_tuple=True)
    assert isinstance(tup, tuple) and len(tup) == 3
    for t, w in zip(tup, np.nonzero(a)):
        np.testing.assert_array_equal(t.numpy(), w)
    for t, w in zip(torch.where(x > 0), np.nonzero(a > 0)):
        np.testing.assert_array_equal(t.numpy(), w)
    np.testing.assert_array_equal(torch.argwhere(x).numpy(), np.argwhere(a))
    assert torch.nonzero(torch.tensor(5)).shape == (1, 0)
    idx = rng.integers(-24, 24, size=(2, 5))
    np.testing.assert_array_equal(torch.take(x, T(idx)).numpy(), np.take(a, idx))
    np.testing.assert_array_equal(x.transpose(0, 1).take(T(idx)).numpy(), np.take(np.swapaxes(a, 0, 1), idx))
    b = rng.standard_normal((3, 4))
    ai = np.argsort(b, axis=1)
    np.testing.assert_array_equal(torch.take_along_dim(T(b), T(ai), dim=1).numpy(),
                                  np.take_along_axis(b, ai, axis=1))
    np.testing.assert_array_equal(T(b).take_along_dim(T(ai[:1]), 1).numpy(),
                                  np.take_along_axis(b, np.broadcast_to(ai[:1], (3, 4)), axis=1))
    np.testing.assert_array_equal(torch.take_along_dim(T(b), T(np.array([0, 5]))).numpy(), b.reshape(-1)[[0, 5]])
    with pytest.raises(IndexError, match="index 24 is out of bounds for dimension 0 with size 24"):
        torch.take(x, torch.tensor([24]))


def test_dim_op_errors():
    x = torch.zeros(4, 3)
    with pytest.raises(IndexError, match="index 4 is out of bounds for dimension 0 with size 4"):
        x.index_select(0, torch.tensor([4]))
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 1 with size 3"):
        x.gather(1, torch.tensor([[3]]))
    with pytest.raises(IndexError, match="index -5 is out of bounds for dimension 0 with size 4"):
        x.scatter_add_(0, torch.tensor([[-5]]), torch.ones(1, 1))
    with pytest.raises(RuntimeError, match="Expected dtype int64 for index"):
        x.gather(0, torch.tensor([[0]], dtype=torch.int32))
    with pytest.raises(RuntimeError, match="Expected self.dtype to be equal to src.dtype"):
        x.scatter_(0, torch.tensor([[0]]), torch.ones(1, 1, dtype=torch.float64))
    with pytest.raises(RuntimeError, match="reduce argument must be either sum, prod, mean, amax or amin"):
        x.scatter_reduce(0, torch.tensor([[0]]), torch.ones(1, 1), "max")
    with pytest.raises(RuntimeError, match="Index tensor must have the same number of dimensions"):
        x.gather(0, torch.tensor([0]))
    assert x.sum().item() == 0


def test_out_arguments():
    x = torch.arange(10.0)
    out = torch.empty(3)
    r = torch.index_select(x, 0, torch.tensor([1, 2, 3]), out=out)
    assert r is out and out.tolist() == [1.0, 2.0, 3.0]
    out = torch.empty(2, dtype=torch.int64)
    torch.nonzero(torch.tensor([0, 1, 0, 2]), out=out.view(2, 1))
    assert out.tolist() == [1, 3]
    o = torch.empty(2)
    torch.masked_select(x[:2], torch.tensor([True, True]), out=o)
    assert o.tolist() == [0.0, 1.0]
    o = torch.empty(1, 2)
    torch.gather(x.view(2, 5), 1, torch.tensor([[4, 0]]), out=o)
    assert o.tolist() == [[4.0, 0.0]]


@pytest.mark.parametrize("dtype", [torch.bool, torch.uint8, torch.int32, torch.float16, torch.bfloat16,
                                   torch.float64, torch.complex64])
def test_dtypes(dtype):
    x = torch.arange(12).reshape(3, 4).to(dtype)
    idx = torch.tensor([2, 0])
    assert x[idx].dtype == dtype
    assert x[idx].float().tolist() == x.float()[idx].tolist() if not dtype.is_complex else True
    y = x.clone()
    y[idx] = x[:2]
    assert y[2].tolist() == x[0].tolist()
    if dtype not in (torch.bool, torch.complex64):
        z = torch.zeros(3, dtype=dtype)
        z.index_put_((torch.tensor([0, 0, 2]),), torch.ones(3, dtype=dtype), accumulate=True)
        assert z.float().tolist() == [2.0, 0.0, 1.0]


def test_layouts_and_corners():
    rng = np.random.default_rng(9)
    a = rng.standard_normal((6, 5, 4))
    x = T(a)
    xt = x.transpose(0, 2)  # a permuted view
    at = a.transpose(2, 1, 0)
    i = rng.integers(-4, 4, size=(3, 2))
    it = T(i.T.copy()).t()  # a transposed index tensor
    np.testing.assert_array_equal(xt[it].numpy(), at[i])
    np.testing.assert_array_equal(x[::2, T(np.array([4, 0])), 1:].numpy(), a[::2][:, [4, 0], 1:])
    np.testing.assert_array_equal(x[torch.tensor(1), [0, 2]].numpy(), a[1, [0, 2]])
    np.testing.assert_array_equal(x[np.array([1, 1])].numpy(), a[[1, 1]])
    # a value with more leading size-1 dims than the result
    y = T(a)
    y[[0, 1]] = torch.ones(1, 1, 5, 4)
    assert y[:2].sum().item() == 40
    # scatter from a src larger than index, through a transposed self
    s = rng.standard_normal((6, 5))
    base = np.zeros((5, 6))
    z = T(base).t()
    idx = np.array([[0, 1], [2, 3]])
    z.scatter_(0, T(idx), T(s))
    exp = np.zeros((6, 5))
    for p in np.ndindex(2, 2):
        exp[idx[p], p[1]] = s[p]
    np.testing.assert_array_equal(z.numpy(), exp)
    # index_put_ with a mask
    w = T(a.copy())
    m = a[:, :, 0] > 0
    w.index_put_((T(m),), torch.zeros(4, dtype=torch.float64))
    exp = a.copy()
    exp[m] = 0
    np.testing.assert_array_equal(w.numpy(), exp)
    with pytest.raises(RuntimeError, match="same number of dimensions as src"):
        torch.zeros(3).scatter_(0, torch.tensor([0]), torch.tensor(1.0))


def test_lists_are_read_once():
    # a list index is snapshotted into a tensor before anything else runs
    class Evil(int):
        def __index__(self):
            lst.clear()
            return 1
    lst = [0, 1, 2]
    x = torch.arange(5)
    assert x[lst].tolist() == [0, 1, 2]
    assert x[[Evil(1), 0]].tolist() == [1, 0]


def test_scatter_reduce_bad_reduce_and_raising_include_self():
    """Found by the tensor-API fuzz run: a bad `reduce` left its error set
    while include_self's __bool__ ran (SystemError)."""
    class BadBool:
        def __bool__(self):
            raise ValueError("no truth")

    x = torch.zeros(2, 3)
    idx = torch.zeros(2, 3, dtype=torch.int64)
    with pytest.raises(RuntimeError, match="reduce"):
        torch.scatter_reduce(x, 0, idx, x, "x", include_self=BadBool())
    with pytest.raises(ValueError, match="no truth"):
        torch.scatter_reduce(x, 0, idx, x, "sum", include_self=BadBool())


def test_use_deterministic_algorithms_flag():
    assert torch.are_deterministic_algorithms_enabled() is False
    assert torch.is_deterministic_algorithms_warn_only_enabled() is False
    try:
        torch.use_deterministic_algorithms(True, warn_only=True)
        assert torch.are_deterministic_algorithms_enabled() is True
        assert torch.is_deterministic_algorithms_warn_only_enabled() is True
        # the CPU results do not depend on it
        y = torch.zeros(4).index_put_((T([0, 0, 3]),), T([1.0, 2.0, 3.0], torch.float32), accumulate=True)
        assert y.tolist() == [3.0, 0.0, 0.0, 3.0]
    finally:
        torch.use_deterministic_algorithms(False)
    assert torch.are_deterministic_algorithms_enabled() is False
    assert torch.is_deterministic_algorithms_warn_only_enabled() is False
    with pytest.raises(RuntimeError, match="expects a bool"):
        torch.use_deterministic_algorithms(1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.int32,
                                   torch.uint8, torch.bool, torch.float16], ids=str)
def test_setitem_whole_mask_number(dtype):
    """x[mask] = number with a mask of x's shape (the masked_fill_ path), and
    the cases that keep the general path (a float into an integer tensor, an
    int into bool, a mask of fewer dims), against NumPy."""
    rng = np.random.default_rng(21)
    a = rng.integers(0, 3, size=(5, 4)).astype(np.float64)
    m = rng.random((5, 4)) < 0.5
    npdt = np.bool_ if dtype == torch.bool else {torch.float32: np.float32, torch.float64: np.float64,
                                                  torch.int64: np.int64, torch.int32: np.int32,
                                                  torch.uint8: np.uint8, torch.float16: np.float16}[dtype]
    for value in (1, True, 0, 2.5) if dtype != torch.bool else (True, False, 1):
        x = T(a).to(dtype)
        want = a.astype(npdt)
        x[T(m)] = value
        want[m] = value
        np.testing.assert_array_equal(x.numpy(), want)
        v = T(a).to(dtype)  # a non-contiguous view is written through
        wv = a.astype(npdt)
        v.t()[T(m.T)] = value
        wv.T[m.T] = value
        np.testing.assert_array_equal(v.numpy(), wv)
        r = T(a).to(dtype)  # a row mask: the general path
        wr = a.astype(npdt)
        r[T(m[:, 0])] = value
        wr[m[:, 0]] = value
        np.testing.assert_array_equal(r.numpy(), wr)
    x = T(a)
    with pytest.raises(IndexError, match="The shape of the mask"):
        x[T(m[:4])] = 1.0
