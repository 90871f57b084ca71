"""torch compatibility odds and ends, part 1: random.fork_rng and
thread_safe_generator, testing.make_tensor and assert_allclose,
set_default_tensor_type, the serialization allow-list and location helpers,
torch.compiler, utils.checkpoint's helpers, utils.swap_tensors and
Tensor.as_subclass. Each against its definition, and against torch where
torch is installed (its CPU build is enough: nothing here compares CUDA
numbers with torch's)."""
import contextlib
import io
import pickle
import warnings
import weakref

import numpy as np
import pytest

import pycuda_sem as torch
import pycuda_sem.serialization as S
import pycuda_sem.utils.checkpoint as ckpt
from pycuda_sem.testing import make_tensor

from torch_oracle import _torch as real_torch  # torch where it imports, else None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
needs_oracle = pytest.mark.skipif(real_torch is None, reason="torch not installed")


# ---- random.fork_rng ------------------------------------------------------------------------

def test_fork_rng_restores_the_cpu_stream():
    torch.manual_seed(11)
    expected = torch.rand(5)
    torch.manual_seed(11)
    with torch.random.fork_rng():
        torch.rand(50)  # moves the stream inside the block
        moved = torch.rand(5)
    after = torch.rand(5)
    np.testing.assert_array_equal(after.numpy(), expected.numpy())
    assert not np.array_equal(moved.numpy(), expected.numpy())
    assert not hasattr(torch, "fork_rng")  # torch.random only, as torch


def test_fork_rng_restores_on_exception_and_can_be_disabled():
    torch.manual_seed(3)
    state = torch.get_rng_state()
    with pytest.raises(ValueError):
        with torch.random.fork_rng(devices=[]):
            torch.rand(7)
            raise ValueError("inside")
    np.testing.assert_array_equal(torch.get_rng_state().numpy(), state.numpy())
    with torch.random.fork_rng(enabled=False):
        torch.rand(3)
    assert not np.array_equal(torch.get_rng_state().numpy(), state.numpy())
    with torch.random.fork_rng(device_type="meta"):
        torch.rand(3)


def test_fork_rng_takes_a_generator_of_devices():
    devs = (d for d in [])  # a generator: read once, restored from the saved list
    with torch.random.fork_rng(devices=devs):
        torch.rand(2)


@pytest.mark.cuda
def test_fork_rng_restores_cuda_states():
    torch.manual_seed(5)
    want = torch.rand(4, device="cuda").cpu()
    torch.manual_seed(5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the several-devices warning, where there are several
        with torch.random.fork_rng():
            torch.rand(100, device="cuda")
    np.testing.assert_array_equal(torch.rand(4, device="cuda").cpu().numpy(), want.numpy())
    torch.manual_seed(5)
    with torch.random.fork_rng(devices=[0]):
        torch.randn(9, device="cuda:0")
    np.testing.assert_array_equal(torch.rand(4, device="cuda").cpu().numpy(), want.numpy())


def test_thread_safe_generator_is_none_outside_thread_workers():
    assert torch.random.thread_safe_generator() is None
    if real_torch is not None and hasattr(real_torch.random, "thread_safe_generator"):
        assert real_torch.random.thread_safe_generator() is None  # new in torch 2.10-ish


# ---- testing.make_tensor --------------------------------------------------------------------

RANGES = [(torch.bool, 0, 1), (torch.uint8, 0, 9), (torch.int8, -9, 9), (torch.int16, -9, 9),
          (torch.int32, -9, 9), (torch.int64, -9, 9)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype,lo,hi", RANGES)
def test_make_tensor_integer_defaults(dtype, lo, hi, device):
    t = make_tensor(4000, dtype=dtype, device=device)
    assert t.dtype == dtype and t.shape == (4000,) and t.device.type == device
    v = t.cpu().numpy().astype(np.int64)
    # the whole default range is drawn: every value of it appears in 4000 draws
    assert v.min() == lo and v.max() == hi and len(np.unique(v)) == hi - lo + 1


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_make_tensor_float_defaults_and_bounds(dtype, device):
    t = make_tensor((50, 40), dtype=dtype, device=device)
    v = t.float().cpu().numpy()
    assert v.min() >= -9 and v.max() <= 9 and v.std() > 4  # uniform on [-9, 9): std 5.2
    u = make_tensor(3000, dtype=dtype, device=device, low=2.5, high=3.0).float().cpu().numpy()
    assert u.min() >= 2.5 and u.max() <= 3.0
    g = make_tensor(3, 4, dtype=dtype, device=device, requires_grad=True)
    assert g.requires_grad and g.is_leaf


@pytest.mark.parametrize("device", DEVICES)
def test_make_tensor_complex_noncontiguous_exclude_zero(device):
    c = make_tensor(6, 5, dtype=torch.complex64, device=device, noncontiguous=True)
    assert c.shape == (6, 5) and not c.is_contiguous() and c.stride() == (10, 2)
    parts = torch.view_as_real(c.contiguous()).cpu().numpy()
    assert np.abs(parts).max() <= 9 and parts.std() > 3
    z = make_tensor(500, dtype=torch.int8, device=device, low=-1, high=2, exclude_zero=True)
    assert set(np.unique(z.cpu().numpy())) <= {-1, 1}
    f = make_tensor(1, dtype=torch.float32, device=device, low=0, high=1e-30, exclude_zero=True)
    assert f.item() != 0
    cl = make_tensor(2, 3, 4, 5, dtype=torch.float32, device=device,
                     memory_format=torch.channels_last)
    assert cl.is_contiguous(memory_format=torch.channels_last)
    one = make_tensor(1, 1, dtype=torch.float32, device=device, noncontiguous=True)
    assert one.shape == (1, 1)  # fewer than two elements: noncontiguous is ignored


def test_make_tensor_huge_span_and_clamping():
    big = make_tensor(1000, dtype=torch.float64, device="cpu", low=-1e309, high=1e309).numpy()
    assert np.isfinite(big).all() and np.abs(big).max() > 1e306
    u8 = make_tensor(500, dtype=torch.uint8, device="cpu", low=-100, high=1000).numpy()
    assert u8.min() >= 0 and u8.max() <= 255 and u8.max() > 200


def test_make_tensor_errors_match_torch():
    bad = [dict(low=3, high=2), dict(low=float("nan")), dict(low=300, high=400)]
    for kw in bad:
        with pytest.raises(ValueError) as ours:
            make_tensor(3, dtype=torch.uint8, device="cpu", **kw)
        if real_torch is not None:
            with pytest.raises(ValueError) as theirs:
                real_torch.testing.make_tensor(3, dtype=real_torch.uint8, device="cpu", **kw)
            assert str(ours.value).split(",")[0].split("[")[0] == \
                str(theirs.value).split(",")[0].split("[")[0]
    with pytest.raises(ValueError, match="requires_grad"):
        make_tensor(3, dtype=torch.int64, device="cpu", requires_grad=True)
    with pytest.raises(ValueError, match="mutually exclusive"):
        make_tensor(3, 3, dtype=torch.float32, device="cpu", noncontiguous=True,
                    memory_format=torch.contiguous_format)
    with pytest.warns(FutureWarning, match="low==high"):
        make_tensor(3, dtype=torch.float32, device="cpu", low=1.0, high=1.0)


# ---- testing.assert_allclose ----------------------------------------------------------------

def test_assert_allclose_legacy_tolerances():
    with pytest.warns(FutureWarning, match="assert_allclose"):
        torch.testing.assert_allclose(torch.tensor([1.0, 2.0]), [1.0, 2.0 + 1e-4])  # rtol 1e-4
    with pytest.warns(FutureWarning), pytest.raises(AssertionError, match="not close"):
        torch.testing.assert_allclose(torch.tensor([1.0, 2.0]), [1.0, 2.001])
    with pytest.warns(FutureWarning):  # NaNs equal and no dtype check, unlike assert_close
        torch.testing.assert_allclose(torch.tensor([float("nan"), 1.0], dtype=torch.float64),
                                      torch.tensor([float("nan"), 1.0]))
    with pytest.warns(FutureWarning), pytest.raises(AssertionError):
        torch.testing.assert_allclose(torch.tensor([1, 2]), torch.tensor([1, 3]))
    with pytest.warns(FutureWarning), pytest.raises(ValueError):
        torch.testing.assert_allclose(torch.tensor([1.0]), [1.0], rtol=1e-3)


@needs_oracle
def test_assert_allclose_agrees_with_torch():
    rng = np.random.default_rng(0)
    for dt in ("float16", "float32", "float64"):
        a = rng.standard_normal(20).astype(dt)
        for scale in (1e-6, 1e-4, 1e-2):
            b = (a * (1 + scale)).astype(dt)
            outcome = []
            for mod in (torch, real_torch):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    try:
                        mod.testing.assert_allclose(mod.from_numpy(a.copy()), mod.from_numpy(b))
                        outcome.append(True)
                    except AssertionError:
                        outcome.append(False)
            assert outcome[0] == outcome[1], (dt, scale)


# ---- set_default_tensor_type ----------------------------------------------------------------

@pytest.fixture
def default_dtype():
    prev = torch.get_default_dtype()
    yield
    torch.set_default_dtype(prev)


@pytest.mark.usefixtures("default_dtype")
def test_set_default_tensor_type_sets_the_dtype():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.set_default_tensor_type("torch.DoubleTensor")
        assert torch.get_default_dtype() == torch.float64 and torch.zeros(1).dtype == torch.float64
        torch.set_default_tensor_type(torch.HalfTensor)
        assert torch.get_default_dtype() == torch.float16
        torch.set_default_tensor_type(torch.FloatTensor)
        assert torch.get_default_dtype() == torch.float32


@pytest.mark.usefixtures("default_dtype")
def test_set_default_tensor_type_errors():
    cases = [("torch.LongTensor", TypeError, "only floating-point"),
             (torch.IntTensor, TypeError, "only floating-point"),
             (torch.float64, TypeError, "invalid type object"),
             (torch.Tensor, TypeError, "invalid type object"),
             ("foo", ModuleNotFoundError, "foo"), ("torch.Foo", AttributeError, "Foo")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for arg, exc, text in cases:
            with pytest.raises(exc, match=text):
                torch.set_default_tensor_type(arg)
            if real_torch is not None:
                theirs = arg
                if not isinstance(arg, str):
                    theirs = getattr(real_torch, arg.__name__ if isinstance(arg, type)
                                     else str(arg).split(".")[-1])
                with pytest.raises(exc, match=text):
                    real_torch.set_default_tensor_type(theirs)
    assert torch.get_default_dtype() == torch.float32


@pytest.mark.cuda
@pytest.mark.usefixtures("default_dtype")
def test_a_cuda_default_tensor_type_sets_the_default_device():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            torch.set_default_tensor_type("torch.cuda.DoubleTensor")
            t = torch.zeros(2)
            assert t.device.type == "cuda" and t.dtype == torch.float64
            assert torch.nn.Linear(2, 2).weight.is_cuda
            torch.set_default_tensor_type(torch.FloatTensor)
            t = torch.ones(1)
            assert t.device.type == "cpu" and t.dtype == torch.float32
        finally:
            torch.set_default_device(None)


# ---- serialization: the allow-list ----------------------------------------------------------

class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y


def _payload():
    buf = io.BytesIO()
    torch.save({"p": Point(2, torch.arange(3.0)), "w": torch.ones(2)}, buf)
    return buf.getvalue()


@pytest.fixture
def clean_allow_list():
    S.clear_safe_globals()
    yield
    S.clear_safe_globals()


@pytest.mark.usefixtures("clean_allow_list")
def test_safe_globals_let_an_allow_listed_class_load():
    data = _payload()
    name = "%s.Point" % __name__
    assert S.get_unsafe_globals_in_checkpoint(io.BytesIO(data)) == [name]
    with pytest.raises(pickle.UnpicklingError, match="add_safe_globals"):
        torch.load(io.BytesIO(data))
    with S.safe_globals([Point]):
        assert S.get_safe_globals() == [Point]
        assert S.get_unsafe_globals_in_checkpoint(io.BytesIO(data)) == []
        r = torch.load(io.BytesIO(data))
    assert type(r["p"]) is Point and r["p"].x == 2
    np.testing.assert_array_equal(r["p"].y.numpy(), [0.0, 1.0, 2.0])
    assert S.get_safe_globals() == []  # the context removed its entries
    with pytest.raises(pickle.UnpicklingError):
        torch.load(io.BytesIO(data))
    S.add_safe_globals([(Point, name)])
    assert torch.load(io.BytesIO(data))["p"].x == 2
    S.clear_safe_globals()
    assert S.get_safe_globals() == []


@pytest.mark.usefixtures("clean_allow_list")
def test_allow_list_checks_its_tuples_and_matches_torch_spelling(tmp_path):
    S.add_safe_globals([(Point, "a", "b")])
    with pytest.raises(ValueError, match="length"):
        torch.load(io.BytesIO(_payload()))
    S.clear_safe_globals()
    S.add_safe_globals([(Point, 3)])
    with pytest.raises(TypeError, match="str"):
        torch.load(io.BytesIO(_payload()))
    S.clear_safe_globals()
    # an object of this package is also found under torch's spelling of its name
    from pycuda_sem.nn.parameter import _BufferMeta
    S.add_safe_globals([_BufferMeta])
    keys = S._user_allowed_globals()
    assert keys["torch.nn.parameter._BufferMeta"] is _BufferMeta
    path = tmp_path / "ck.pt"
    path.write_bytes(_payload())
    assert S.get_unsafe_globals_in_checkpoint(str(path)) == ["%s.Point" % __name__]
    with pytest.raises(ValueError, match="checkpoint"):
        S.get_unsafe_globals_in_checkpoint(io.BytesIO(b"not a zip"))


@needs_oracle
@pytest.mark.usefixtures("clean_allow_list")
def test_torch_reads_the_same_unsafe_globals():
    data = _payload()
    theirs = real_torch.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(data))
    assert sorted(theirs) == sorted(S.get_unsafe_globals_in_checkpoint(io.BytesIO(data)))


def test_location_helpers():
    x = torch.arange(4.0)
    assert S.location_tag(x) == "cpu" and S.location_tag(x.untyped_storage()) == "cpu"
    loaded = S.LoadedStorage(x)
    assert S.default_restore_location(loaded, "cpu") is loaded
    with pytest.raises(RuntimeError, match="don't know how to restore"):
        S.default_restore_location(loaded, "tpu")
    with pytest.raises(AttributeError):
        S.location_tag(3)
    assert S.normalize_storage_type(torch.TypedStorage) is torch.TypedStorage
    with pytest.raises(AttributeError):
        S.storage_to_tensor_type(x.untyped_storage())
    with pytest.raises(NotImplementedError):
        S.skip_data()
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="CUDA"):
            S.default_restore_location(loaded, "cuda:0")


@pytest.mark.cuda
def test_location_helpers_cuda():
    y = torch.arange(4.0, device="cuda")
    assert S.location_tag(y) == "cuda:0"
    moved = S.default_restore_location(S.LoadedStorage(torch.arange(4.0)), "cuda:0")
    assert moved.device == torch.device("cuda", 0)
    back = S.default_restore_location(moved, "cpu")
    np.testing.assert_array_equal(back.tensor.numpy(), [0, 1, 2, 3])
    with pytest.raises(RuntimeError, match="device_count"):
        S.default_restore_location(moved, "cuda:%d" % torch.cuda.device_count())


# ---- torch.compiler -------------------------------------------------------------------------

def test_compiler_names_are_eager():
    c = torch.compiler
    model = torch.nn.Linear(2, 2)
    assert c.compile(model) is model and c.compile is torch.compile
    f = len
    assert c.disable(f) is f and c.disable()(f) is f and c.disable(f, reason="x") is f
    assert c.allow_in_graph(f) is f and c.assume_constant_result(f) is f
    with pytest.raises(TypeError):
        c.assume_constant_result(3)
    assert c.reset() is None and c.cudagraph_mark_step_begin() is None
    assert not c.is_compiling() and not c.is_dynamo_compiling() and not c.is_exporting()
    if real_torch is not None:
        assert not real_torch.compiler.is_compiling()
        for n in c.__all__:
            assert hasattr(real_torch.compiler, n), n


# ---- utils.checkpoint's helpers -------------------------------------------------------------

def test_checkpoint_context_fn_wraps_forward_and_recompute():
    log = []

    @contextlib.contextmanager
    def tag(name):
        log.append("enter " + name)
        yield
        log.append("exit " + name)

    x = torch.randn(4, dtype=torch.float64, requires_grad=True)
    y = ckpt.checkpoint(lambda a: (a * a).sum(), x, use_reentrant=False,
                        context_fn=lambda: (tag("fwd"), tag("rec")))
    assert log == ["enter fwd", "exit fwd"]
    y.backward()
    assert log == ["enter fwd", "exit fwd", "enter rec", "exit rec"]
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy(), rtol=1e-15)
    for kw in (dict(context_fn=lambda: (tag("a"), tag("b"))), dict(debug=True)):
        with pytest.raises(ValueError, match="use_reentrant=False"):
            ckpt.checkpoint(lambda a: a * 2, x, use_reentrant=True, **kw)


def test_checkpoint_helpers():
    x = torch.randn(3, requires_grad=True)
    d = ckpt.detach_variable((x, 3))
    assert d[1] == 3 and d[0].requires_grad and d[0].is_leaf and d[0] is not x
    with pytest.raises(RuntimeError, match="tuple"):
        ckpt.detach_variable([x])
    assert ckpt.get_device_states(x, [x]) == ([], [])
    a, b = ckpt.noop_context_fn()
    with a, b:
        pass
    assert issubclass(ckpt.CheckpointError, RuntimeError)
    assert ckpt.CheckpointFunction.apply(lambda t: t * 3, True, x).grad_fn is not None
    with ckpt.set_checkpoint_debug_enabled(True):
        assert ckpt._checkpoint_debug_enabled is True
    assert ckpt._checkpoint_debug_enabled is None
    with ckpt.set_checkpoint_early_stop(False):
        assert ckpt._enable_checkpoint_early_stop is False
    assert ckpt._enable_checkpoint_early_stop is None
    assert [p.value for p in ckpt.CheckpointPolicy] == list(range(6))
    with pytest.raises(NotImplementedError):
        ckpt.create_selective_checkpoint_contexts([])
    with pytest.warns(UserWarning, match="requires_grad"):
        ckpt.check_backward_validity([torch.ones(2)])
    assert ckpt.DefaultDeviceType.get_device_type() == "cuda"
    if real_torch is not None:  # older torch lacks the two CPU-offload members
        theirs = {p.name: p.value for p in real_torch.utils.checkpoint.CheckpointPolicy}
        assert theirs.items() <= {p.name: p.value for p in ckpt.CheckpointPolicy}.items()


@pytest.mark.cuda
def test_checkpoint_device_states_cuda():
    x = torch.randn(3, device="cuda")
    ids, states = ckpt.get_device_states(x, {"k": x})
    assert ids == [0, 0] and len(states) == 2
    torch.rand(5, device="cuda")
    ckpt.set_device_states(ids[:1], states[:1])
    np.testing.assert_array_equal(torch.cuda.get_rng_state(0).numpy(), states[0].numpy())


# ---- utils.swap_tensors ---------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_swap_tensors_exchanges_contents(device):
    a = torch.randn(2, 3, device=device, dtype=torch.float64)
    b = torch.arange(5.0, device=device, dtype=torch.float64).requires_grad_()
    b.grad = torch.ones(5, device=device, dtype=torch.float64)
    a.tag = "a"
    va, vb, ida, idb = a.cpu().numpy(), b.detach().cpu().numpy(), id(a), id(b)
    torch.utils.swap_tensors(a, b)
    assert id(a) == ida and id(b) == idb
    np.testing.assert_array_equal(a.detach().cpu().numpy(), vb)
    np.testing.assert_array_equal(b.cpu().numpy(), va)
    assert a.requires_grad and not b.requires_grad and a.grad is not None and b.grad is None
    assert b.tag == "a" and not hasattr(a, "tag")


def test_swap_tensors_refusals():
    x, y = torch.ones(2), torch.ones(2)
    r = weakref.ref(x)
    with pytest.raises(RuntimeError, match="weakref"):
        torch.utils.swap_tensors(x, y)
    del r
    with pytest.raises(NotImplementedError, match="dtype"):
        torch.utils.swap_tensors(torch.ones(2), torch.ones(2, dtype=torch.int64))
    leaf = torch.ones(2, requires_grad=True)
    with pytest.raises(NotImplementedError, match="leaf"):
        torch.utils.swap_tensors(leaf * 2, torch.ones(2))
    with pytest.raises(NotImplementedError, match="static"):
        torch.utils.swap_tensors(torch.nn.Parameter(torch.ones(2)), torch.zeros(2))


def test_swap_tensors_swaps_python_subclasses():
    class A(torch.Tensor):
        pass

    class B(torch.Tensor):
        pass
    a = torch.Tensor._make_subclass(A, torch.zeros(2), False)
    b = torch.Tensor._make_subclass(B, torch.ones(3), False)
    torch.utils.swap_tensors(a, b)
    assert type(a) is B and type(b) is A and a.shape == (3,) and b.shape == (2,)


# ---- Tensor.as_subclass ---------------------------------------------------------------------

class Tagged(torch.Tensor):
    pass


@pytest.mark.parametrize("device", DEVICES)
def test_as_subclass_shares_memory_and_graph(device):
    x = torch.randn(4, device=device, dtype=torch.float64, requires_grad=True)
    y = x.as_subclass(Tagged)
    assert type(y) is Tagged and y.requires_grad and not y.is_leaf
    (y * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.cpu().numpy(), [3.0] * 4)
    p = torch.zeros(3, device=device)
    q = p.as_subclass(Tagged)
    q.add_(2)  # same memory: the write shows through p
    np.testing.assert_array_equal(p.cpu().numpy(), [2.0] * 3)
    assert q.is_leaf and not q.requires_grad
    w = torch.nn.Parameter(torch.ones(2, device=device)).as_subclass(torch.Tensor)
    assert type(w) is torch.Tensor and w.requires_grad and not w.is_leaf
    with pytest.raises(TypeError, match="does not inherit from Tensor"):
        x.as_subclass(int)


@needs_oracle
def test_as_subclass_matches_torch_flags():
    class TT(real_torch.Tensor):
        pass
    for rg in (False, True):
        ours = torch.randn(2, requires_grad=rg).as_subclass(Tagged)
        theirs = real_torch.randn(2, requires_grad=rg).as_subclass(TT)
        assert (ours.requires_grad, ours.is_leaf) == (theirs.requires_grad, theirs.is_leaf)


def test_tensorboard_is_an_import_error_that_names_the_gap():
    # torch.utils.tensorboard needs the separate tensorboard package and
    # raises ImportError without it; pycuda_sem has no writer and raises the
    # same type, so `try: ... except ImportError:` guards fall back alike
    import importlib
    import sys
    sys.modules.pop("pycuda_sem.utils.tensorboard", None)
    with pytest.raises(ImportError, match="SummaryWriter is not implemented by pycuda_sem"):
        importlib.import_module("pycuda_sem.utils.tensorboard")
    with pytest.raises(ImportError):
        from pycuda_sem.utils.tensorboard import SummaryWriter  # noqa: F401
