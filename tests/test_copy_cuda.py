"""Copies on the GPU: every direction and dtype pair, strided sides,
synchronisation (non_blocking ordering, pinned-block reuse), CUDA factories
and the allocator statistics returning to their baseline. NumPy is the
reference; PyTorch, where installed, checks the casts bit for bit."""

import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import cuda

pytestmark = [pytest.mark.cuda, pytest.mark.usefixtures("balanced")]  # balanced: conftest.py

rng = np.random.default_rng(11)
DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
          torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64,
          torch.complex128]


def src_tensor(dt, shape=(5, 7)):
    v = rng.uniform(-100, 100, size=shape)
    if dt.is_complex:
        v = v + 1j * rng.uniform(-100, 100, size=shape)
    elif dt is torch.uint8:
        v = np.abs(v)
    return torch.tensor(v.tolist()).to(dt) if not dt.is_complex else torch.tensor(v).to(dt)


@pytest.mark.parametrize("src", DTYPES, ids=str)
@pytest.mark.parametrize("dst", DTYPES, ids=str)
def test_cast_pairs_on_gpu_match_cpu(src, dst):
    s = src_tensor(src)
    ref = s.to(dst).tolist()  # the CPU table
    g = s.cuda()
    assert g.is_cuda and g.dtype is src and g.device == torch.device("cuda:0")
    assert g.to(dst).tolist() == ref  # kernel, contiguous
    assert g.t().to(dst).t().tolist() == ref  # kernel, strided
    d = torch.empty(7, 5, dtype=dst, device="cuda").t()
    d.copy_(g)
    assert d.tolist() == ref
    d2 = torch.empty(7, 5, dtype=dst, device="cuda").t()
    d2.copy_(s)  # H2D with cast, strided destination
    assert d2.tolist() == ref
    h = torch.empty(7, 5, dtype=dst).t()
    h.copy_(g)  # D2H with cast, strided destination
    assert h.tolist() == ref


def test_casts_match_torch_bit_for_bit():
    try:
        import torch as real
    except Exception:
        pytest.skip("PyTorch is not installed")
    names = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
             "float32", "float64"]
    # in range for every type (out-of-range float -> int casts are undefined
    # in C++ and differ between PyTorch's CPU and GPU builds)
    v = rng.uniform(-120, 120, size=1000)
    v[:4] = [0.5, -0.5, 2.5, -1.5]
    for a in names:
        ta = real.tensor(v, dtype=real.float64).to(getattr(real, a), copy=True)
        oa = torch.tensor(v, dtype=torch.float64).to(getattr(torch, a))
        assert oa.tolist() == ta.tolist(), a
        for b in names:
            want = ta.cuda().to(getattr(real, b)).cpu().tolist()
            assert oa.cuda().to(getattr(torch, b)).tolist() == want, (a, b)


@pytest.mark.parametrize("dt", [torch.float32, torch.float64, torch.int64, torch.complex64,
                                torch.float16, torch.bool])
def test_every_direction_and_layout(dt):
    s = src_tensor(dt, (6, 9))
    want = s.tolist()
    g = s.to("cuda")
    assert g.tolist() == want and g.cpu().tolist() == want
    assert g.clone().tolist() == want and g.contiguous() is g
    assert g.t().contiguous().t().tolist() == want
    assert g[::2, 1::3].tolist() == s[::2, 1::3].tolist()
    assert g[::2, 1::3].cpu().tolist() == s[::2, 1::3].tolist()
    d = torch.zeros(6, 9, dtype=dt, device="cuda")
    d[1:4, ::2] = s[1:4, ::2]  # H2D into a strided view
    e = torch.zeros(6, 9, dtype=dt)
    e[1:4, ::2] = s[1:4, ::2]
    assert d.tolist() == e.tolist()
    d[:, 0] = g[:, 1]  # D2D strided
    e[:, 0] = s[:, 1]
    assert d.tolist() == e.tolist()
    d[0] = 1  # fill a row
    e[0] = 1
    assert d.tolist() == e.tolist()
    d.copy_(g[0])  # broadcast on the device
    assert d.tolist() == [want[0]] * 6


def test_factories_on_cuda():
    assert torch.zeros(3, device="cuda").tolist() == [0.0] * 3
    assert torch.ones(2, 2, device="cuda", dtype=torch.int32).tolist() == [[1, 1], [1, 1]]
    assert torch.full((2,), 2.5, device="cuda").tolist() == [2.5, 2.5]
    assert torch.arange(5, device="cuda").tolist() == list(range(5))
    assert torch.eye(3, device="cuda").tolist() == np.eye(3).tolist()
    assert np.allclose(torch.linspace(0, 1, 11, device="cuda").tolist(), np.linspace(0, 1, 11))
    x = torch.tensor([1., 2.], device=torch.device("cuda:0"))
    assert x.device == torch.device("cuda", 0) and x.get_device() == 0
    y = torch.tensor([1., 2.]).cuda()
    assert y.device == torch.device("cuda:0")
    assert torch.tensor([1., 2.]).to(device=torch.device("cuda")).is_cuda
    assert torch.ones_like(x).is_cuda and torch.zeros_like(x).tolist() == [0.0, 0.0]
    assert x.new_full([3, 2], fill_value=-5).device == x.device
    assert x.new_tensor([1, 2]).is_cuda and x.new_empty(2).is_cuda
    assert torch.empty(2, device="cuda").dtype is torch.float32
    z = torch.empty_strided((2, 3), (1, 2), device="cuda")
    assert z.stride() == (1, 2)


# values whose byte patterns repeat every 1, 2 or 4 bytes (one driver
# memset) or not at all (the fill kernel)
FILL_VALUES = [(torch.bool, True), (torch.uint8, 7), (torch.int8, -3), (torch.int16, 257),
               (torch.int16, -2), (torch.int32, 123456), (torch.int64, -1), (torch.int64, 5),
               (torch.float16, 1.0), (torch.bfloat16, -2.0), (torch.float32, 2.5),
               (torch.float64, 0.5), (torch.float64, 0.0), (torch.complex64, 1 + 1j),
               (torch.complex64, 2 - 1j), (torch.complex128, 3 + 0j)]


@pytest.mark.parametrize("dt,value", FILL_VALUES, ids=str)
def test_fills_of_every_pattern(dt, value):
    """full, ones, fill_ of contiguous tensors (driver memsets where the
    element's bytes repeat every 1, 2 or 4 bytes) and of views, with odd
    lengths and offsets, leave exactly the value and nothing beside it."""
    for n in (1, 3, 1025, (1 << 20) + 1):
        want = np.full(n, value, dtype=torch.tensor([], dtype=dt).numpy().dtype) \
            if dt is not torch.bfloat16 else np.full(n, value, dtype=np.float32)
        got = torch.full((n,), value, dtype=dt, device="cuda")
        np.testing.assert_array_equal(host_np(got), want)
        base = torch.zeros(n + 3, dtype=dt, device="cuda")
        base[1:n + 1].fill_(value)  # an offset view, one element short of each end
        b = host_np(base)
        np.testing.assert_array_equal(b[1:n + 1], want)
        assert not b[0] and not b[n + 1:].any()
    grid = torch.zeros(6, 8, dtype=dt, device="cuda")
    grid[:, 1:7:2].fill_(value)  # strided: the kernel
    g = host_np(grid)
    assert (g[:, 1:7:2] == want[0]).all() and not g[:, 0].any() and not g[:, 2::2].any()
    np.testing.assert_array_equal(host_np(torch.ones(5, dtype=dt, device="cuda")),
                                  np.ones(5, dtype=g.dtype))


def test_fill_runs_on_the_current_stream():
    s = cuda.Stream()
    x = torch.zeros(1 << 22, device="cuda")
    cuda.synchronize()
    with cuda.stream(s):
        cuda._sleep(20_000_000)
        x.fill_(3.0)
        y = x.sum()
    # y is read on the default stream: it must wait for s first (a pool
    # stream does not synchronise with the legacy stream by itself)
    cuda.current_stream().wait_stream(s)
    assert y.item() == 3.0 * (1 << 22)


def host_np(t):
    return (t.float() if t.dtype == torch.bfloat16 else t).cpu().numpy()


def test_numpy_of_cuda_tensor_raises():
    g = torch.ones(2, device="cuda")
    with pytest.raises(TypeError, match=r"can't convert cuda:0 device type tensor to numpy. "
                                        r"Use Tensor.cpu\(\) to copy the tensor to host memory "
                                        r"first."):
        g.numpy()
    with pytest.raises(TypeError):
        np.asarray(g)
    assert g[0].item() == 1.0 and float(g[0]) == 1.0 and bool(g[1])
    with pytest.raises(RuntimeError, match="2 elements"):
        g.item()


def test_pinned_memory():
    t = torch.tensor(rng.standard_normal(1000).tolist())
    p = t.pin_memory()
    assert p.is_pinned() and not t.is_pinned() and p.tolist() == t.tolist()
    assert p.pin_memory() is p
    assert torch.empty(10, pin_memory=True).is_pinned()
    assert torch.tensor([1, 2], pin_memory=True).is_pinned()
    with pytest.raises(RuntimeError):
        torch.ones(2, device="cuda").pin_memory()


def test_non_blocking_copy_is_ordered_after_queued_work():
    n = 1 << 22
    src = torch.full((n,), 3.0, device="cuda")
    host = torch.empty(n, pin_memory=True)
    for _ in range(5):
        cuda._sleep(50_000_000)  # keep the stream busy
        src.fill_(7.0)  # queued behind the sleep
        host.copy_(src, non_blocking=True)  # queued behind the fill, returns at once
        cuda.current_stream().synchronize()
        assert host[0].item() == 7.0 and host[-1].item() == 7.0
        src.fill_(3.0)
    # blocking copies wait by themselves
    cuda._sleep(50_000_000)
    src.fill_(5.0)
    assert src.cpu()[-1].item() == 5.0
    # H2D non_blocking from pinned memory, then compute order on the stream
    host.fill_(9.0)
    dev = host.to("cuda", non_blocking=True)
    assert dev[n - 1].item() == 9.0


def test_pinned_block_not_reused_while_copy_pending():
    before = torch._C._host_cache_info()
    n = 1 << 20
    dev = torch.empty(n, device="cuda")
    p = torch.full((n,), 1.0, pin_memory=True)
    ptr = p.data_ptr()
    cuda._sleep(200_000_000)  # the copy below waits behind this
    dev.copy_(p, non_blocking=True)
    del p  # block back in the cache, but its copy has not run yet
    q = torch.empty(n, pin_memory=True)
    assert q.data_ptr() != ptr  # not handed out again while pending
    q.fill_(2.0)
    cuda.synchronize()
    assert dev[0].item() == 1.0 and dev[-1].item() == 1.0
    del q
    r = torch.empty(n, pin_memory=True)  # events done: the cache serves it
    assert r.data_ptr() in (ptr, r.data_ptr())
    del r, dev
    info = torch._C._host_cache_info()
    assert info["in_use"] == before["in_use"]


def test_copy_follows_current_stream():
    s = cuda.Stream()
    a = torch.full((1 << 20,), 1.0, device="cuda")
    cuda.synchronize()
    with cuda.stream(s):
        cuda._sleep(50_000_000)
        a.fill_(4.0)
        b = a.cpu()  # D2H waits for this stream's work
    assert b[-1].item() == 4.0
    s.synchronize()


def test_legacy_cuda_types():
    x = cuda.FloatTensor(1)
    assert x.get_device() == 0 and x.dtype is torch.float32 and x.shape == (1,)
    assert isinstance(x, cuda.FloatTensor) and not isinstance(x, torch.FloatTensor)
    y = torch.FloatTensor(1).cuda()
    assert y.get_device() == 0
    assert x.type() == "pycuda_sem.cuda.FloatTensor"
    assert x.new(x.size()).fill_(-5).tolist() == [-5.0]
    assert torch.ones_like(x).is_cuda and torch.zeros_like(x).is_cuda
    h = torch.FloatTensor([1, 2]).type(cuda.DoubleTensor)
    assert h.is_cuda and h.dtype is torch.float64
    assert h.type(torch.LongTensor).tolist() == [1, 2]
    assert h.type("torch.cuda.IntTensor").dtype is torch.int32
    assert cuda.LongTensor([[1, 2, 3]]).tolist() == [[1, 2, 3]]


@pytest.mark.multigpu
def test_two_devices():
    x = torch.tensor([1., 2.], device="cuda:0")
    with cuda.device(1):
        a = torch.tensor([1., 2.], device=torch.device("cuda"))
        b = torch.tensor([1., 2.]).cuda()
        b2 = torch.tensor([1., 2.]).to(device=torch.device("cuda"))
        c = cuda.FloatTensor(1)
        assert a.device == b.device == b2.device == torch.device("cuda:1")
        assert c.get_device() == 1
        e = torch.tensor([3., 4.]).to("cuda:0")
        assert e.device == torch.device("cuda:0")
    assert x.to("cuda:1").device == torch.device("cuda:1")
    v = src_tensor(torch.float32, (64, 33))
    g0 = v.cuda(0)
    g1 = g0.cuda(1)
    assert g1.get_device() == 1 and g1.tolist() == v.tolist()
    assert g1.to("cuda:0").tolist() == v.tolist()
    assert g0.t().to("cuda:1").tolist() == v.t().tolist()  # strided across devices
    assert g0.to("cuda:1", torch.float16).tolist() == v.half().tolist()
    d = torch.zeros(33, 64, device="cuda:1").t()
    d.copy_(g0)
    assert d.tolist() == v.tolist()
    # ordering: work queued on device 0 before the copy is seen by it
    big = torch.full((1 << 22,), 1.0, device="cuda:0")
    cuda._sleep(50_000_000)
    big.fill_(6.0)
    assert big.to("cuda:1")[-1].item() == 6.0
    assert cuda.memory_allocated(1) > 0
    print("peer 0->1:", torch._C._peer_copy_enabled(0, 1))


@pytest.mark.parametrize("dt", [torch.bool, torch.int8, torch.float16, torch.float32, torch.int64,
                                torch.complex64, torch.complex128], ids=str)
@pytest.mark.parametrize("shape,perm", [((16, 5000), (1, 0)), ((3, 1000), (1, 0)), ((9, 300), (1, 0)),
                                        ((5, 7, 600), (0, 2, 1)), ((2, 13, 4100), (0, 2, 1)),
                                        ((600, 5, 7), (1, 2, 0)),
                                        # one side 2 to 16 long and every access a 16-byte pack
                                        ((4, 8208), (1, 0)), ((8208, 4), (1, 0)), ((13, 4112), (1, 0)),
                                        ((4112, 13), (1, 0)), ((2, 6, 4128), (0, 2, 1)),
                                        ((2, 4128, 6), (0, 2, 1)), ((3, 16400), (1, 0)),
                                        ((16400, 16), (1, 0)), ((2, 4096), (1, 0))])
def test_transposing_copy_to_short_rows(dt, shape, perm):
    # destinations whose fastest dim is short (a few elements a row): the
    # short-tile transpose, partial tiles and batched (3-D) ones included
    x = src_tensor(dt, shape).cuda()
    want = np.ascontiguousarray(np.transpose(x.cpu().numpy(), perm))
    got = x.permute(*perm).contiguous()
    assert got.is_contiguous() and tuple(got.shape) == want.shape
    np.testing.assert_array_equal(got.cpu().numpy(), want)
    y = torch.empty(want.shape, dtype=dt, device="cuda")
    y.copy_(x.permute(*perm))
    np.testing.assert_array_equal(y.cpu().numpy(), want)


@pytest.mark.parametrize("dt", [torch.uint8, torch.float16, torch.float32, torch.int64], ids=str)
def test_short_transposes_of_expanded_and_offset_views(dt):
    # the packed short-side transpose with a broadcast batch, a view one
    # element in (no 16-byte packs: the element path) and a view one pack
    # in; each result copied back through a transposed destination (the
    # run side read, the rows side written)
    base = src_tensor(dt, (4, 8224)).cuda()
    h = base.cpu().numpy()
    cases = [
        (base[None].expand(3, 4, 8224).permute(0, 2, 1), np.broadcast_to(h[None], (3, 4, 8224)).transpose(0, 2, 1)),
        (base[:, 1:8209].t(), h[:, 1:8209].T),
        (base[:, 16:8208].t(), h[:, 16:8208].T),
    ]
    for x, want in cases:
        got = x.contiguous()
        assert got.is_contiguous()
        np.testing.assert_array_equal(got.cpu().numpy(), np.ascontiguousarray(want))
        if want.ndim == 2:
            back = torch.empty(want.shape[::-1], dtype=dt, device="cuda")
            back.t().copy_(got)
            np.testing.assert_array_equal(back.cpu().numpy(), np.ascontiguousarray(want.T))


# Views a fill takes by rows of aligned words (unit inner stride, rows from a
# few bytes up, at every offset into a word), by stepped warp tiles, by
# element, or as one range (dense in another memory order).
FILL_VIEWS = [
    ((64, 200), lambda x: x[:, 1:]), ((64, 200), lambda x: x[:, :-1]), ((64, 200), lambda x: x[3:, 5:-7]),
    ((300, 33), lambda x: x[:, 1:]), ((300, 17), lambda x: x[:, 1:-1]), ((500, 9), lambda x: x[:, 2:7]),
    ((257, 40), lambda x: x[::3, 1:]), ((6, 5, 40, 40), lambda x: x[..., 13:37, 3:29]),
    ((64, 200), lambda x: x[:, ::2]), ((64, 200), lambda x: x[1:, 1::3]), ((100, 70, 4), lambda x: x[:, :, 1]),
    ((64, 200), lambda x: x[:, 7]), ((64, 200), lambda x: x.swapaxes(1, 0)),
    ((4, 6, 5, 7), lambda x: x.swapaxes(0, 2).swapaxes(1, 3)),
    ((2, 70000), lambda x: x[:, 3:]), ((3, 4, 5), lambda x: x[:, 1:3]), ((1 << 20,), lambda x: x[5:-3]),
]


@pytest.mark.parametrize("dt,value", [(torch.uint8, 201), (torch.int16, -12345), (torch.float16, -1.5),
                                      (torch.float32, 3.25), (torch.int64, 0x0102030405060708),
                                      (torch.float64, -7.125), (torch.complex128, 1.5 - 2.5j)], ids=str)
@pytest.mark.parametrize("case", range(len(FILL_VIEWS)))
def test_strided_fills_match_numpy(dt, value, case):
    """Each view is filled with a value whose bytes do not repeat within the
    element (so a word written with the wrong phase shows), over random
    contents: the view holds the value and every element outside it is as
    it was."""
    shape, view = FILL_VIEWS[case]
    np_dt = torch.tensor([], dtype=dt).numpy().dtype
    base = rng.integers(1, 100, size=shape)
    ref = (base + 1j * base if dt.is_complex else base).astype(np_dt)
    x = torch.from_numpy(ref.copy()).cuda()
    view(x).fill_(value)
    view(ref)[...] = value
    got = x.cpu().numpy()
    np.testing.assert_array_equal(got, ref)
    # a zero goes the same way when the view is not dense (no memset)
    view(x).fill_(0)
    view(ref)[...] = 0
    np.testing.assert_array_equal(x.cpu().numpy(), ref)


# torch's preserve_format on the GPU: clone(), to(dtype), half(), cpu() and
# cuda() of dense and non-dense views give torch's strides (torch itself is
# the oracle where installed) and the values NumPy gives.
LAYOUT_VIEWS = [
    ((64, 80), lambda x: x.t()), ((8, 64, 80), lambda x: x.permute(0, 2, 1)[:, 1:]),
    ((60, 80), lambda x: x[::2, 1::3]), ((60, 80), lambda x: x[::2, 1::3].t()),
    ((30, 1), lambda x: x.expand(30, 40)), ((2, 3, 20, 24), lambda x: x.permute(0, 2, 3, 1)[:, :, 1:]),
    ((64, 80), lambda x: x[:, 1:].t()),
]


@pytest.mark.parametrize("case", range(len(LAYOUT_VIEWS)))
def test_preserve_format_layouts_match_torch(case):
    shape, view = LAYOUT_VIEWS[case]
    a = rng.standard_normal(shape).astype(np.float32)
    try:
        import torch as real
        want = view(real.from_numpy(a).cuda()).clone().stride()
    except Exception:
        want = None
    g = view(torch.from_numpy(a).cuda())
    h = view(torch.from_numpy(a))
    ref = h.numpy()
    results = [g.clone(), g.to(torch.float64), g.half(), g.bfloat16(), g.to(torch.int32), g.cpu(), h.cuda(),
               g.to("cpu", torch.float64)]
    for got in results:
        if want is not None:
            assert got.stride() == want, (got.stride(), want)
        else:
            assert got.stride() == results[0].stride()
        np.testing.assert_allclose(got.cpu().float().numpy(), ref, rtol=1e-2 if got.dtype in (
            torch.float16, torch.bfloat16) else 0, atol=1 if got.dtype is torch.int32 else 0)
