"""torch.library / torch.ops, torch.overrides, torch.types and torch.export
in pycuda_sem: custom ops dispatch by device and differentiate through
register_autograd (gradients checked against float64 NumPy formulas), the
__torch_function__ helpers follow torch's protocol, and the export names
raise. Where torch is installed the same scenarios run on it too and must
agree."""
import itertools

import numpy as np
import pytest

import pycuda_sem as torch
from pycuda_sem import library, overrides

from torch_oracle import _torch as real_torch  # torch where it imports, else None

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
LIBS = [torch] + ([real_torch] if real_torch is not None else [])
_ids = itertools.count()


def _name(ns="tlib"):
    return "%s::op%d" % (ns, next(_ids))


def npy(t):
    return t.detach().cpu().double().numpy()


def _rand(lib, shape, device="cpu", requires_grad=False):
    a = np.random.default_rng(7).standard_normal(shape) + 0.5
    return lib.tensor(a, dtype=lib.float64, device=device, requires_grad=requires_grad)


# ---- custom_op ----------------------------------------------------------------------------

def _make_sin(lib, name):
    @lib.library.custom_op(name, mutates_args=())
    def mysin(x: lib.Tensor) -> lib.Tensor:
        return lib.sin(x)

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * lib.cos(x)

    mysin.register_autograd(backward, setup_context=setup_context)
    return mysin


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_custom_op_forward_and_autograd(lib, device):
    name = _name()
    op = _make_sin(lib, name)
    x = _rand(lib, (3, 4), device, requires_grad=True)
    ns, short = name.split("::")
    y = getattr(getattr(lib.ops, ns), short)(x)      # reachable as torch.ops.ns.name
    np.testing.assert_allclose(npy(y), np.sin(npy(x)), rtol=1e-12)
    (y * y).sum().backward()
    np.testing.assert_allclose(npy(x.grad), 2 * np.sin(npy(x)) * np.cos(npy(x)), rtol=1e-12)
    assert getattr(getattr(lib.ops, ns), short).default is not None
    assert op(x.detach()).requires_grad is False


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_custom_op_non_tensor_argument_and_keyword(lib):
    @lib.library.custom_op(_name(), mutates_args=())
    def scale(x: lib.Tensor, a: float) -> lib.Tensor:
        return x * a

    def setup_context(ctx, inputs, output):
        ctx.a = inputs[1]

    scale.register_autograd(lambda ctx, g: (g * ctx.a, None), setup_context=setup_context)
    x = _rand(lib, (5,), requires_grad=True)
    scale(x, 3.0).sum().backward()
    np.testing.assert_allclose(npy(x.grad), np.full(5, 3.0))
    x.grad = None
    scale(x, a=-2.0).sum().backward()
    np.testing.assert_allclose(npy(x.grad), np.full(5, -2.0))


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_custom_op_without_formula_raises_on_backward(lib):
    @lib.library.custom_op(_name(), mutates_args=())
    def twice(x: lib.Tensor) -> lib.Tensor:
        return x * 2

    x = _rand(lib, (3,), requires_grad=True)
    y = twice(x)
    np.testing.assert_allclose(npy(y), 2 * npy(x))
    with pytest.raises(RuntimeError, match="no autograd formula was registered"):
        y.sum().backward()


def test_custom_op_register_kernel_dispatches_by_device():
    @library.custom_op(_name(), mutates_args=(), device_types="cpu")
    def f(x: torch.Tensor) -> torch.Tensor:
        return x + 1

    x = torch.zeros(2, dtype=torch.float64)
    np.testing.assert_array_equal(npy(f(x)), [1.0, 1.0])
    f.register_kernel("cpu", lambda x: x + 10)       # replaces the cpu kernel
    np.testing.assert_array_equal(npy(f(x)), [10.0, 10.0])

    @f.register_kernel("cuda")
    def _(x):
        return x + 100
    assert f._kernels["cuda"] is _


@pytest.mark.cuda
def test_custom_op_cuda_kernel_chosen_for_cuda_inputs():
    @library.custom_op(_name(), mutates_args=(), device_types="cpu")
    def f(x: torch.Tensor) -> torch.Tensor:
        return x + 1

    with pytest.raises(NotImplementedError, match="no kernel registered for device type 'cuda'"):
        f(torch.zeros(2, device="cuda"))
    f.register_kernel("cuda", lambda x: x + 100)
    np.testing.assert_array_equal(npy(f(torch.zeros(2, device="cuda"))), [100.0, 100.0])
    np.testing.assert_array_equal(npy(f(torch.zeros(2))), [1.0, 1.0])


def test_custom_op_register_fake_is_stored_not_called():
    op = _make_sin(torch, _name())
    calls = []

    @op.register_fake
    def _(x):
        calls.append(1)
        return torch.empty_like(x)
    np.testing.assert_allclose(npy(op(_rand(torch, (2,)))), np.sin(npy(_rand(torch, (2,)))))
    assert calls == []


def test_custom_op_argument_errors():
    with pytest.raises(ValueError, match="namespace"):
        library.custom_op("nonamespace", mutates_args=())(lambda x: x)
    with pytest.raises(TypeError):
        library.custom_op(_name())(lambda x: x)          # mutates_args is required
    name = _name()
    library.custom_op(name, mutates_args=())(lambda x: x)
    with pytest.raises(RuntimeError, match="already registered"):
        library.custom_op(name, mutates_args=())(lambda x: x)
    with pytest.raises(ValueError, match="device type"):
        library.custom_op(_name(), mutates_args=(), device_types="tpu")(lambda x: x)


# ---- define / impl / Library --------------------------------------------------------------

@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_library_define_and_impl(lib):
    ns = "tlibdef%d" % next(_ids)
    L = lib.library.Library(ns, "FRAGMENT")
    L.define("twice(Tensor x) -> Tensor")
    L.impl("twice", lambda x: x * 2, "CPU")
    x = _rand(lib, (3,))
    np.testing.assert_allclose(npy(getattr(lib.ops, ns).twice(x)), 2 * npy(x))

    lib.library.define(ns + "::thrice", "(Tensor x) -> Tensor")

    @lib.library.impl(ns + "::thrice", "cpu")
    def _thrice(x):
        return x * 3
    np.testing.assert_allclose(npy(getattr(lib.ops, ns).thrice(x)), 3 * npy(x))

    lib.library.define(ns + "::sq", "(Tensor x) -> Tensor")
    lib.library.impl(ns + "::sq", "CompositeImplicitAutograd", lambda x: x * x)
    xg = _rand(lib, (4,), requires_grad=True)
    getattr(lib.ops, ns).sq(xg).sum().backward()         # differentiable through its ops
    np.testing.assert_allclose(npy(xg.grad), 2 * npy(xg), rtol=1e-12)


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_library_register_autograd_by_name(lib):
    ns = "tlibreg%d" % next(_ids)
    lib.library.define(ns + "::cube", "(Tensor x) -> Tensor")
    lib.library.impl(ns + "::cube", "CPU", lambda x: x * x * x)

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * 3 * x * x
    lib.library.register_autograd(ns + "::cube", backward, setup_context=setup_context)
    x = _rand(lib, (4,), requires_grad=True)
    getattr(lib.ops, ns).cube(x).sum().backward()
    np.testing.assert_allclose(npy(x.grad), 3 * npy(x) ** 2, rtol=1e-12)


def test_library_autograd_key_kernel():
    ns = "tlibag%d" % next(_ids)
    L = library.Library(ns, "DEF")
    L.define("relu2(Tensor x) -> Tensor")
    L.impl("relu2", lambda x: torch.relu(x) * 2, "CPU")
    op = getattr(torch.ops, ns).relu2

    class Fn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return op(x)            # grad is off inside forward: reaches the CPU kernel

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * 2 * (x > 0)
    L.impl("relu2", Fn.apply, "Autograd")
    x = torch.tensor([-1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    y = op(x)
    np.testing.assert_array_equal(npy(y), [0.0, 4.0, 6.0])
    y.sum().backward()
    np.testing.assert_array_equal(npy(x.grad), [0.0, 2.0, 2.0])


def test_library_errors():
    with pytest.raises(ValueError, match="Unsupported kind: BAD"):
        library.Library("x", "BAD")
    with pytest.raises(RuntimeError, match="schema"):
        library.define("tlibbad::f", "Tensor x")
    with pytest.raises(NotImplementedError, match="aten"):
        library.Library("aten", "IMPL").impl("add.Tensor", lambda a, b: a, "CPU")
    with pytest.raises(NotImplementedError, match="dispatch key"):
        library.define("tlibbad::g", "(Tensor x) -> Tensor")
        library.impl("tlibbad::g", "XLA", lambda x: x)
    for fn in (lambda: library.opcheck(None, ()), lambda: library.triton_op("a::b", mutates_args=()),
               lambda: library.wrap_triton(None), library.get_ctx):
        with pytest.raises(NotImplementedError, match="not implemented in pycuda_sem"):
            fn()


def test_ops_namespace():
    with pytest.raises(AttributeError, match="'_OpNamespace' 'tlibnone' object has no attribute 'foo'"):
        torch.ops.tlibnone.foo
    assert torch.ops.aten.add(torch.ones(2), torch.ones(2)).tolist() == [2.0, 2.0]
    assert torch.ops.aten.add.Tensor(torch.ones(2), 3).tolist() == [4.0, 4.0]
    out, mean, rstd = torch.ops.aten.native_layer_norm.default(torch.randn(2, 3), [3], None, None, 1e-5)
    assert tuple(mean.shape) == (2, 1)
    with pytest.raises(AttributeError, match="no attribute 'not_an_op_xyz'"):
        torch.ops.aten.not_an_op_xyz
    with pytest.raises(NotImplementedError, match="load_library"):
        torch.ops.load_library("libfoo.so")


# ---- overrides ----------------------------------------------------------------------------

def _protocol_classes(lib):
    class Logged:
        calls = []

        def __init__(self, v):
            self.v = v

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            cls.calls.append((cls.__name__, func.__name__, tuple(t.__name__ for t in types)))
            return "Logged:" + func.__name__

    class LoggedChild(Logged):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            Logged.calls.append((cls.__name__, func.__name__, tuple(t.__name__ for t in types)))
            return NotImplemented

    class Declines:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    def public_api(a, b=None):
        rel = (a, b)
        if lib.overrides.has_torch_function(rel):
            return lib.overrides.handle_torch_function(public_api, rel, a, b=b)
        return "plain"
    return Logged, LoggedChild, Declines, public_api


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_has_torch_function(lib):
    O = lib.overrides
    Logged, LoggedChild, Declines, _ = _protocol_classes(lib)
    t = lib.ones(2)
    assert O.has_torch_function((t, 1, None)) is False
    assert O.has_torch_function_unary(t) is False
    assert O.has_torch_function_variadic(t, 2.0) is False
    assert O.has_torch_function((t, Logged(1))) is True
    assert O.has_torch_function_unary(LoggedChild(1)) is True
    assert O.has_torch_function_variadic(1, Declines()) is True
    assert O.is_tensor_like(t) and O.is_tensor_like(Logged(1)) and not O.is_tensor_like(3)
    for F in (lib.nn.functional,):
        assert F.has_torch_function((t,)) is False
        assert F.handle_torch_function is O.handle_torch_function


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_handle_torch_function_order(lib):
    Logged, LoggedChild, Declines, public_api = _protocol_classes(lib)
    assert public_api(lib.ones(1)) == "plain"
    Logged.calls.clear()
    # the subclass is asked first even though it comes second; it declines
    assert public_api(Logged(1), LoggedChild(2)) == "Logged:public_api"
    assert [c[0] for c in Logged.calls] == ["LoggedChild", "Logged"]
    assert Logged.calls[0][2] == ("LoggedChild", "Logged")
    with pytest.raises(TypeError, match="no implementation found for"):
        public_api(Declines())


def test_torch_function_mode_and_tables():
    class Mode(overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))
    with pytest.raises(NotImplementedError, match="do not dispatch through __torch_function__ modes"):
        with Mode():
            pass
    assert overrides.get_ignored_functions() == set()
    assert overrides.get_overridable_functions() == {}
    assert overrides.get_testing_overrides() == {}

    @overrides.wrap_torch_function(lambda a: (a,))
    def f(a):
        return "plain"
    Logged = _protocol_classes(torch)[0]
    assert f(torch.ones(1)) == "plain" and f(Logged(1)) == "Logged:f"


# ---- types, export ------------------------------------------------------------------------

def test_types_aliases():
    from pycuda_sem.types import Device, Number, _size, _TensorOrTensors, Storage, _dtype, _device  # noqa: F401
    import typing
    assert set(typing.get_args(Number)) == {int, float, bool}
    assert torch.device in typing.get_args(Device) and type(None) in typing.get_args(Device)
    assert _dtype is torch.dtype and _device is torch.device
    assert torch.UntypedStorage in typing.get_args(Storage)
    assert isinstance(1.5, torch.types._Number)
    if real_torch is not None:
        wanted = {"Number", "Device", "FileLike", "Storage", "_size", "_dtype", "_device", "_TensorOrTensors",
                  "_TensorOrOptionalTensors", "_int", "_float", "_bool", "_layout", "_Number", "SymInt"}
        assert wanted <= set(dir(real_torch.types)) and wanted <= set(dir(torch.types))


@pytest.mark.parametrize("name", ["export", "load", "save", "draft_export", "unflatten", "dims"])
def test_export_functions_raise(name):
    with pytest.raises(NotImplementedError, match="torch.export.%s is not implemented" % name):
        args = (object(), "model.pt2") if name == "save" else (object(),)
        getattr(torch.export, name)(*args)


@pytest.mark.parametrize("name", ["Dim", "ExportedProgram", "ExportGraphSignature", "ShapesCollection"])
def test_export_classes_raise(name):
    with pytest.raises(NotImplementedError, match="no graph tracer"):
        getattr(torch.export, name)("x")


def test_export_dynamic_shapes_raises():
    assert torch.export.Dim.AUTO == "AUTO"
    with pytest.raises(NotImplementedError, match="dynamic_shapes.Dim"):
        torch.export.dynamic_shapes.Dim("batch")
