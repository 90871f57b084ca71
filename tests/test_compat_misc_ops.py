"""torch compatibility odds and ends, part 2: the *_copy view ops, range,
empty_permuted, as_strided_, to_dlpack, segment_reduce, svd_lowrank and
pca_lowrank. Values against NumPy float64 (the view taken in NumPy, the
segment reductions written out, the SVD of the matrix), and against torch
where it is installed, on the CPU and on CUDA."""
import math
import warnings

import numpy as np
import pytest

import pycuda_sem as torch

from torch_oracle import _torch as real_torch  # torch where it imports, else None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
pytestmark = pytest.mark.usefixtures("no_tf32")
needs_oracle = pytest.mark.skipif(real_torch is None, reason="torch not installed")

_rng = np.random.default_rng(7)
A34 = _rng.standard_normal((3, 4))
A234 = _rng.standard_normal((2, 3, 4))


def T(a, device="cpu", dtype=torch.float64, requires_grad=False):
    t = torch.tensor(np.asarray(a), dtype=dtype, device=device)
    return t.requires_grad_() if requires_grad else t


def npy(t):
    return t.detach().cpu().numpy()


# (name, positional args, the same view in NumPy)
COPIES = [
    ("alias_copy", (), lambda a: a),
    ("detach_copy", (), lambda a: a),
    ("t_copy", (), lambda a: a.T),
    ("transpose_copy", (0, 1), lambda a: a.swapaxes(0, 1)),
    ("permute_copy", ((1, 0),), lambda a: a.transpose(1, 0)),
    ("diagonal_copy", (1,), lambda a: np.diagonal(a, 1)),
    ("expand_copy", ((2, 3, 4),), lambda a: np.broadcast_to(a, (2, 3, 4))),
    ("select_copy", (1, 2), lambda a: a[:, 2]),
    ("slice_copy", (1, 1, 4, 2), lambda a: a[:, 1:4:2]),
    ("unsqueeze_copy", (1,), lambda a: a[:, None]),
    ("unfold_copy", (1, 2, 1), lambda a: np.stack([a[:, i:i + 2] for i in range(3)], 1)),
    ("view_copy", ((4, 3),), lambda a: a.reshape(4, 3)),
    ("as_strided_copy", ((2, 2), (1, 4), 1), lambda a: np.lib.stride_tricks.as_strided(
        a.reshape(-1)[1:], (2, 2), (8, 32))),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,args,ref", COPIES, ids=[c[0] for c in COPIES])
def test_view_copies(name, args, ref, device):
    x = T(A34, device, requires_grad=True)
    y = getattr(torch, name)(x, *args)
    np.testing.assert_array_equal(npy(y), ref(A34))
    assert y.is_contiguous() and y.device == x.device
    # new memory: a write into the copy leaves the input alone
    with torch.no_grad():
        y.view(-1)[0] = 1e9 if y.numel() else 0
    np.testing.assert_array_equal(npy(x), A34)
    if name != "detach_copy":  # differentiable as the view is
        g = _rng.standard_normal(tuple(y.shape))
        (y * T(g, device)).sum().backward()
        want = np.zeros_like(A34)
        np.add.at(want.reshape(-1), _view_flat_index(ref), g.reshape(-1))
        np.testing.assert_allclose(npy(x.grad), want, rtol=1e-15)
    else:
        assert not y.requires_grad
    if real_torch is not None:
        theirs = getattr(real_torch, name)(real_torch.from_numpy(A34.copy()), *args)
        np.testing.assert_array_equal(ref(A34), theirs.numpy())
        assert theirs.stride() == y.stride()


def _view_flat_index(ref):
    """Which input element each element of the NumPy view reads."""
    idx = np.arange(A34.size, dtype=np.float64).reshape(A34.shape)
    return ref(idx).reshape(-1).astype(np.int64)


@pytest.mark.parametrize("device", DEVICES)
def test_squeeze_and_complex_copies(device):
    z = T(_rng.standard_normal((1, 3, 1)), device)
    assert torch.squeeze_copy(z).shape == (3,)
    assert torch.squeeze_copy(z, 0).shape == (3, 1)
    assert torch.squeeze_copy(z, (0, 2)).shape == (3,)
    c = torch.view_as_complex_copy(T(A34.reshape(6, 2), device))
    np.testing.assert_array_equal(npy(c), A34.reshape(6, 2) @ np.array([1, 1j]))
    r = torch.view_as_real_copy(c)
    np.testing.assert_array_equal(npy(r), A34.reshape(6, 2))
    v = torch.view_copy(T(A34, device, torch.float32), torch.int32)
    np.testing.assert_array_equal(npy(v), A34.astype(np.float32).view(np.int32))


@pytest.mark.parametrize("device", DEVICES)
def test_list_copies_and_out(device):
    x = T(np.arange(7.0), device)
    parts = torch.split_copy(x, 3)
    assert [npy(p).tolist() for p in parts] == [[0, 1, 2], [3, 4, 5], [6]]
    parts = torch.split_with_sizes_copy(x, [2, 5])
    assert [p.numel() for p in parts] == [2, 5] and all(p.is_contiguous() for p in parts)
    rows = torch.unbind_copy(T(A34, device), 1)
    assert len(rows) == 4 and np.array_equal(npy(rows[2]), A34[:, 2])
    outs = [torch.empty(0, dtype=torch.float64, device=device) for _ in range(3)]
    assert torch.split_copy(x, 3, out=outs) is None
    np.testing.assert_array_equal(npy(outs[2]), [6.0])
    o = torch.empty(0, dtype=torch.float64, device=device)
    assert torch.t_copy(T(A34, device), out=o) is o
    np.testing.assert_array_equal(npy(o), A34.T)
    with pytest.warns(UserWarning, match="resized"):
        torch.t_copy(T(A34, device), out=torch.empty(2, dtype=torch.float64, device=device))
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype double"):
        torch.t_copy(T(A34, device), out=torch.empty(0, device=device))
    with pytest.raises(TypeError, match="must be Tensor"):
        torch.t_copy([1, 2])


# ---- range, empty_permuted, as_strided_, to_dlpack ------------------------------------------

RANGES = [(1, 4, 1), (0, 1, 0.3), (4, 1, -1), (-2.5, 3.1, 0.7), (5, 5, 2), (0, 10, 3)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("start,end,step", RANGES)
def test_range_is_inclusive(start, end, step, device):
    with pytest.warns(UserWarning, match="torch.range is deprecated"):
        r = torch.range(start, end, step, device=device, dtype=torch.float64)
    n = math.floor((end - start) / step) + 1
    np.testing.assert_allclose(npy(r), start + step * np.arange(n), rtol=0, atol=1e-15)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        d = torch.range(start, end, step, device=device)
        assert d.dtype == torch.get_default_dtype()  # even for integer arguments
        if real_torch is not None:
            theirs = real_torch.range(start, end, step)
            np.testing.assert_array_equal(npy(d), theirs.numpy())


def test_range_errors_and_integers():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        big = torch.range(2 ** 60, 2 ** 60 + 4, 2, dtype=torch.int64)
        assert big.tolist() == [2 ** 60, 2 ** 60 + 2, 2 ** 60 + 4]
        with pytest.raises(RuntimeError, match="step must be nonzero"):
            torch.range(1, 4, 0)
        with pytest.raises(RuntimeError, match="inconsistent with step sign"):
            torch.range(1, 4, -1)
        o = torch.empty(0)
        assert torch.range(0, 2, out=o) is o and o.tolist() == [0.0, 1.0, 2.0]
        assert torch.range(0, 1, 0.5, requires_grad=True).requires_grad


@pytest.mark.parametrize("device", DEVICES)
def test_empty_permuted_layout(device):
    e = torch.empty_permuted((2, 3, 4, 5), (0, 2, 3, 1), device=device)
    assert e.shape == (2, 3, 4, 5) and e.stride() == (60, 1, 15, 3)
    assert e.is_contiguous(memory_format=torch.channels_last)
    f = torch.empty_permuted((2, 3, 4), (2, 0, 1), dtype=torch.float64, device=device,
                             requires_grad=True)
    assert f.stride() == (3, 1, 6) and f.requires_grad and f.dtype == torch.float64
    if real_torch is not None:
        assert real_torch.empty_permuted((2, 3, 4), (2, 0, 1)).stride() == f.stride()
    with pytest.raises(RuntimeError, match="Duplicate dim"):
        torch.empty_permuted((2, 3), (0, 0))
    with pytest.raises(RuntimeError, match="does not match the length"):
        torch.empty_permuted((2, 3), (0,))


def test_as_strided_and_to_dlpack():
    x = torch.arange(6.0)
    y = torch.as_strided_(x, (2, 2), (1, 2), 1)
    assert y is x and x.tolist() == [[1.0, 3.0], [2.0, 4.0]]
    cap = torch.to_dlpack(torch.arange(3.0))
    np.testing.assert_array_equal(torch.from_dlpack(cap).numpy(), [0.0, 1.0, 2.0])


# ---- segment_reduce ------------------------------------------------------------------------

def _segments_ref(data, lengths, reduce, initial=None):
    """Segment reductions of a 1-D array written out."""
    out, pos = [], 0
    for n in lengths:
        seg = data[pos:pos + n]
        pos += n
        extra = [] if initial is None else [initial]
        vals = np.concatenate([seg, extra])
        if reduce == "sum":
            out.append(vals.sum())
        elif reduce == "prod":
            out.append(vals.prod())
        elif reduce == "max":
            out.append(vals.max() if vals.size else -np.inf)
        elif reduce == "min":
            out.append(vals.min() if vals.size else np.inf)
        else:  # mean: (initial + sum) / length; an empty one keeps initial (nan without)
            if n == 0:
                out.append(np.nan if initial is None else initial)
            else:
                out.append(vals.sum() / n)
    return np.array(out)


LENGTHS = [2, 0, 3, 1, 4]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "max", "min"])
@pytest.mark.parametrize("initial", [None, 0.5])
def test_segment_reduce_1d(reduce, initial, device):
    data = _rng.standard_normal(10)
    lengths = T(LENGTHS, device, torch.int64)
    got = torch.segment_reduce(T(data, device), reduce, lengths=lengths, initial=initial)
    np.testing.assert_allclose(npy(got), _segments_ref(data, LENGTHS, reduce, initial),
                               rtol=1e-14)
    offsets = T(np.concatenate([[0], np.cumsum(LENGTHS)]), device, torch.int64)
    by_offsets = torch.segment_reduce(T(data, device), reduce, offsets=offsets, initial=initial)
    np.testing.assert_array_equal(npy(by_offsets), npy(got))
    if real_torch is not None:
        theirs = real_torch.segment_reduce(real_torch.from_numpy(data), reduce,
                                           lengths=real_torch.tensor(LENGTHS), initial=initial)
        np.testing.assert_allclose(npy(got), theirs.numpy(), rtol=1e-14)


@pytest.mark.parametrize("device", DEVICES)
def test_segment_reduce_batched_axis_and_grad(device):
    data = _rng.standard_normal((2, 6, 3))
    lengths = np.array([[2, 4], [3, 3]])
    got = torch.segment_reduce(T(data, device), "sum", lengths=T(lengths, device, torch.int64),
                               axis=1)
    want = np.stack([np.stack([_segments_ref(data[b, :, c], lengths[b], "sum")
                               for c in range(3)], -1) for b in range(2)])
    np.testing.assert_allclose(npy(got), want, rtol=1e-14)
    x = T(_rng.standard_normal(10), device, requires_grad=True)
    for reduce in ("mean", "max"):
        x.grad = None
        y = torch.segment_reduce(x, reduce, lengths=T([2, 3, 5], device, torch.int64))
        y.sum().backward()
        xv, want = npy(x), np.zeros(10)
        for lo, hi in ((0, 2), (2, 5), (5, 10)):
            if reduce == "mean":
                want[lo:hi] = 1.0 / (hi - lo)
            else:
                want[lo + np.argmax(xv[lo:hi])] = 1.0
        np.testing.assert_allclose(npy(x.grad), want, rtol=1e-14)


def test_segment_reduce_errors():
    d = torch.arange(6.0)
    with pytest.raises(RuntimeError, match="sum to data.size"):
        torch.segment_reduce(d, "sum", lengths=torch.tensor([2, 2]))
    np.testing.assert_array_equal(
        npy(torch.segment_reduce(d, "sum", lengths=torch.tensor([2, 2]), unsafe=True)), [1, 5])
    with pytest.raises(RuntimeError, match="indices based reduction"):
        torch.segment_reduce(d, "sum", indices=torch.tensor([0, 0, 1, 1, 1, 1]))
    with pytest.raises(RuntimeError, match="Either lengths or offsets"):
        torch.segment_reduce(d, "sum")
    with pytest.raises(RuntimeError, match="reduce argument"):
        torch.segment_reduce(d, "foo", lengths=torch.tensor([6]))
    with pytest.raises(RuntimeError, match="negative"):
        torch.segment_reduce(d, "sum", lengths=torch.tensor([7, -1]))
    with pytest.raises(RuntimeError, match="last dimension of lengths"):
        torch.segment_reduce(d.reshape(2, 3), "sum", lengths=torch.tensor([3, 3]), axis=1)


# ---- svd_lowrank, pca_lowrank --------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", [(20, 8), (8, 20), (3, 15, 9)])
def test_svd_lowrank_recovers_a_low_rank_matrix(shape, device):
    *batch, m, n = shape
    k = 3
    a = _rng.standard_normal(tuple(batch) + (m, k)) @ _rng.standard_normal(tuple(batch) + (k, n))
    torch.manual_seed(0)
    U, S, V = torch.svd_lowrank(T(a, device), q=5)
    assert U.shape == tuple(batch) + (m, 5) and V.shape == tuple(batch) + (n, 5)
    s_ref = np.linalg.svd(a, compute_uv=False)
    np.testing.assert_allclose(npy(S)[..., :k], s_ref[..., :k], rtol=1e-10)
    recon = (npy(U)[..., :k] * npy(S)[..., None, :k]) @ np.swapaxes(npy(V)[..., :k], -1, -2)
    np.testing.assert_allclose(recon, a, atol=1e-10)
    np.testing.assert_allclose(np.swapaxes(npy(U), -1, -2) @ npy(U),
                               np.broadcast_to(np.eye(5), tuple(batch) + (5, 5)), atol=1e-10)


@pytest.mark.parametrize("device", DEVICES)
def test_svd_lowrank_with_M_and_pca(device):
    k = 2
    base = _rng.standard_normal((30, k)) @ _rng.standard_normal((k, 6))
    mean = _rng.standard_normal((1, 6))
    a = base + mean
    torch.manual_seed(1)
    _, S, _ = torch.svd_lowrank(T(a, device), q=4, M=T(np.broadcast_to(mean, a.shape), device))
    np.testing.assert_allclose(npy(S)[:k], np.linalg.svd(base, compute_uv=False)[:k], rtol=1e-10)
    U, S, V = torch.pca_lowrank(T(a, device), q=3)
    centred = a - a.mean(0, keepdims=True)
    np.testing.assert_allclose(npy(S)[:k], np.linalg.svd(centred, compute_uv=False)[:k],
                               rtol=1e-10)
    # the principal directions span the data's (centred) row space
    proj = centred @ npy(V)[:, :k] @ npy(V)[:, :k].T
    np.testing.assert_allclose(proj, centred, atol=1e-10)
    _, S4, _ = torch.pca_lowrank(T(a, device), center=False)
    assert S4.shape == (6,)


def test_lowrank_argument_checks():
    a = torch.randn(5, 4)
    with pytest.raises(ValueError, match="must be non-negative integer"):
        torch.pca_lowrank(a, q=7)
    with pytest.raises(ValueError, match="niter"):
        torch.pca_lowrank(a, niter=-1)
    with pytest.raises(TypeError):
        torch.svd_lowrank(a, q=2.5)
    with pytest.raises(RuntimeError):
        torch.svd_lowrank(a, q=-1)
    if real_torch is not None:
        with pytest.raises(ValueError, match="must be non-negative integer"):
            real_torch.pca_lowrank(real_torch.randn(5, 4), q=7)


@needs_oracle
def test_lowrank_singular_values_match_torch():
    a = _rng.standard_normal((12, 3)) @ _rng.standard_normal((3, 9))
    ours = npy(torch.svd_lowrank(T(a), q=4)[1])[:3]
    theirs = real_torch.svd_lowrank(real_torch.from_numpy(a), q=4)[1].numpy()[:3]
    np.testing.assert_allclose(ours, theirs, rtol=1e-10)


# ---- round(decimals=), load(mmap=True) ----------------------------------------------------------

@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)])
def test_round_decimals(device):
    x = torch.tensor([1.2345, -2.5551, 1234.5678, 0.125, 1e-3], dtype=torch.float64, device=device)
    for d in (2, 1, -1, -2, 3):
        want = np.round(x.cpu().numpy() * 10.0 ** d) / 10.0 ** d if d > 0 else \
            np.round(x.cpu().numpy() / 10.0 ** -d) * 10.0 ** -d
        np.testing.assert_array_equal(torch.round(x, decimals=d).cpu().numpy(), want)
        np.testing.assert_array_equal(x.round(decimals=d).cpu().numpy(), want)
        if real_torch is not None:
            np.testing.assert_array_equal(
                want, real_torch.round(real_torch.tensor(x.cpu().numpy()), decimals=d).numpy())
    y = x.clone()
    y.round_(decimals=2)
    out = torch.empty_like(x)
    torch.round(x, decimals=2, out=out)
    np.testing.assert_array_equal(y.cpu().numpy(), out.cpu().numpy())
    f = torch.tensor([1.2345], device=device)
    assert f.round(decimals=2).dtype == torch.float32
    with pytest.raises(RuntimeError, match="floating point"):
        torch.round(torch.tensor([1, 2], device=device), decimals=1)
    g = torch.tensor([1.26], requires_grad=True, device=device)
    g.round(decimals=1).sum().backward()
    assert g.grad.tolist() == [0.0]


def test_load_with_mmap(tmp_path):
    import io
    p = tmp_path / "m.pt"
    torch.save({"w": torch.arange(6.0).reshape(2, 3)}, str(p))
    assert torch.load(str(p), mmap=True)["w"].tolist() == [[0, 1, 2], [3, 4, 5]]
    with pytest.raises(ValueError, match="file path"):
        torch.load(io.BytesIO(p.read_bytes()), mmap=True)
