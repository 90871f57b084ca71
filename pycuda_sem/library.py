"""pycuda_sem.library: torch.library's Python operator registration, eager.

An operator is a CustomOpDef: a qualified name ("ns::name"), kernels keyed
by device type ("cpu", "cuda", or None for every device), an optional
autograd formula and an optional fake (meta) function. Calling it picks the
kernel of the inputs' device. A device kernel is opaque to autograd (it runs
under no_grad, as torch's kernels run below the autograd key); gradients flow
only through register_autograd's formula (wired through autograd.Function),
through a "CompositeImplicitAutograd" kernel (which records the ops it calls)
or through an "Autograd" kernel. With none of these, backward through the
output raises, as torch's does.

There are no fake tensors or tracing here: register_fake stores its function
(scripts call it at import) but nothing calls it; opcheck, triton_op,
wrap_triton and get_ctx raise NotImplementedError.
"""
import threading as _threading

from . import _C
from ._ops_namespace import OpOverloadPacket, _lookup, _register
from .autograd.function import Function as _Function
from .autograd.grad_mode import no_grad as _no_grad

__all__ = ["Library", "impl", "define", "impl_abstract", "register_fake", "register_autograd",
           "register_kernel", "custom_op", "CustomOpDef", "triton_op", "wrap_triton", "opcheck",
           "get_ctx"]

_local = _threading.local()  # ops whose Autograd kernel is running (their nested calls go below it)

# Dispatch keys -> the device type a kernel serves (None: every device).
_DEVICE_KEYS = {"cpu": "cpu", "cuda": "cuda", "CPU": "cpu", "CUDA": "cuda",
                "CompositeExplicitAutograd": None, "default": None, "": None}
_COMPOSITE = ("CompositeImplicitAutograd",)
_AUTOGRAD_KEYS = ("Autograd", "AutogradCPU", "AutogradCUDA")


def _split(qualname):
    if not isinstance(qualname, str) or "::" not in qualname:
        raise ValueError("Expected there to be a namespace in %s, i.e. The operator name should look "
                         "something like ns::foo" % (qualname,))
    ns, name = qualname.split("::", 1)
    if not ns or not name or "." in name:
        raise ValueError("invalid operator name %r: expected 'ns::name'" % (qualname,))
    return ns, name


def _tensors(obj, out):
    if isinstance(obj, _C.Tensor):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _tensors(o, out)
    return out


def _device_types(device_types):
    if device_types is None:
        return [None]
    if isinstance(device_types, str):
        device_types = [device_types]
    out = []
    for d in device_types:
        d = str(d)
        if d not in ("cpu", "cuda"):
            raise ValueError("pycuda_sem.library: unsupported device type %r (expected 'cpu' or 'cuda')" % d)
        out.append(d)
    return out


def _no_autograd_backward(qualname, out):
    """A Function returning `out` (computed already) whose backward raises."""
    class _NoFormula(_Function):
        @staticmethod
        def forward(ctx, *args):
            return out

        @staticmethod
        def backward(ctx, *grads):
            raise RuntimeError("Trying to backward through %s.default but no autograd formula was "
                               "registered. Please use register_autograd to add one."
                               % qualname.replace("::", "."))
    return _NoFormula


class CustomOpDef:
    """An operator made by custom_op or define: call it like a function."""

    def __init__(self, namespace, name, schema=None, fn=None, device_types=None, mutates_args=()):
        self._namespace, self._name = namespace, name
        self._qualname = namespace + "::" + name
        self._schema = schema
        self._mutates_args = mutates_args
        self._kernels = {}          # device type (or None) -> fn, run under no_grad
        self._composite = None      # CompositeImplicitAutograd kernel: differentiable as composed
        self._autograd_kernel = None
        self._fake = None
        self._backward = None
        self._setup_context = None
        self._function = None
        self._init_fn = fn
        if fn is not None:
            for d in _device_types(device_types):
                self._kernels[d] = fn
        _register(self._qualname, self)

    def __repr__(self):
        return "<CustomOpDef(%s)>" % self._qualname

    # ---- registration -----------------------------------------------------------------
    def register_kernel(self, device_types, fn=None, /):
        """Use fn for inputs on these device types ('cpu', 'cuda'); as a
        decorator when fn is omitted."""
        def inner(f):
            for d in _device_types(device_types):
                self._kernels[d] = f
            return f
        return inner if fn is None else inner(fn)

    def register_fake(self, fn, /):
        """Store the fake (meta) function. pycuda_sem has no fake tensors, so
        it is never called; the real kernels run."""
        self._fake = fn
        return fn

    def register_autograd(self, backward, /, *, setup_context=None):
        """backward(ctx, *grads) -> one gradient per input (None for
        non-tensors); setup_context(ctx, inputs, output) saves what it needs."""
        if not callable(backward):
            raise TypeError("register_autograd: backward must be callable, got %s" % type(backward).__name__)
        self._backward = backward
        self._setup_context = setup_context
        self._function = None

    def _set_impl(self, key, fn):
        if key in _COMPOSITE:
            self._composite = fn
        elif key in _AUTOGRAD_KEYS:
            self._autograd_kernel = fn
        elif key in _DEVICE_KEYS:
            self._kernels[_DEVICE_KEYS[key]] = fn
        else:
            raise NotImplementedError("pycuda_sem.library: dispatch key %r is not supported (use 'CPU', "
                                      "'CUDA', 'CompositeImplicitAutograd', 'CompositeExplicitAutograd' or "
                                      "'Autograd')" % (key,))

    # ---- calling ----------------------------------------------------------------------
    def _kernel(self, args, kwargs):
        ts = _tensors(list(args) + list(kwargs.values()), [])
        dev = ts[0].device.type if ts else "cpu"
        fn = self._kernels.get(dev) or self._kernels.get(None)
        if fn is None:
            raise NotImplementedError("%s: no kernel registered for device type '%s' (registered: %s)"
                                      % (self._qualname, dev,
                                         sorted(str(k) if k else "any" for k in self._kernels) or "none"))
        return fn, ts

    def _make_function(self):
        op = self

        class _OpFunction(_Function):
            @staticmethod
            def forward(ctx, *args):
                fn, _ = op._kernel(args, {})
                return fn(*args)

            @staticmethod
            def backward(ctx, *grads):
                g = op._backward(ctx, *grads)
                return g if isinstance(g, tuple) else (tuple(g) if isinstance(g, list) else (g,))

        if self._setup_context is not None:
            user = self._setup_context

            def setup_context(ctx, inputs, output):
                user(ctx, inputs, output)
            _OpFunction.forward = staticmethod(lambda *args: op._kernel(args, {})[0](*args))
            _OpFunction.setup_context = staticmethod(setup_context)
        _OpFunction.__name__ = self._name
        return _OpFunction

    def _bind(self, args, kwargs):
        if not kwargs:
            return args
        import inspect
        fn = self._init_fn or next(iter(self._kernels.values()), None)
        if fn is None:
            raise TypeError("%s takes positional arguments only" % self._qualname)
        bound = inspect.signature(fn).bind(*args, **kwargs)
        bound.apply_defaults()
        return bound.args + tuple(bound.kwargs.values())

    def __call__(self, *args, **kwargs):
        grad_on = _C.is_grad_enabled()
        active = getattr(_local, "active", set())
        if self._autograd_kernel is not None and grad_on and self._qualname not in active:
            _local.active = active | {self._qualname}
            try:
                return self._autograd_kernel(*args, **kwargs)
            finally:
                _local.active = active
        if self._composite is not None and not self._kernels:
            return self._composite(*args, **kwargs)
        args = self._bind(args, kwargs)
        fn, ts = self._kernel(args, {})
        needs = grad_on and any(t.requires_grad for t in ts)
        if needs and self._backward is not None:
            if self._function is None:
                self._function = self._make_function()
            return self._function.apply(*args)
        with _no_grad():
            out = fn(*args)
        if needs:
            outs = _tensors(out, [])
            if any(o.is_floating_point() or o.is_complex() for o in outs):
                # outputs that raise on backward, as torch's op without a formula
                return _no_autograd_backward(self._qualname, out).apply(*args)
        return out


def _op_of(op):
    if isinstance(op, CustomOpDef):
        return op
    if isinstance(op, OpOverloadPacket):
        return op._op
    if isinstance(op, str):
        ns, name = _split(op)
        found = _lookup(op)
        if found is None:
            if ns == "aten":
                raise NotImplementedError("pycuda_sem.library cannot register kernels for built-in aten "
                                          "operators (%s): their kernels are C code, not dispatcher entries" % op)
            raise RuntimeError("operator %s does not exist: define it first (library.define or custom_op)" % op)
        return found
    raise TypeError("expected an operator name 'ns::name' or a custom op, got %s" % type(op).__name__)


def _parse_schema(schema):
    if not isinstance(schema, str) or "(" not in schema or ")" not in schema or "->" not in schema:
        raise RuntimeError("invalid operator schema %r: expected 'name(Type arg, ...) -> Type'" % (schema,))
    return schema


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None):
    """Make fn an operator ``name`` ("ns::name"), reachable as
    ``torch.ops.ns.name``; as a decorator when fn is omitted. mutates_args
    names the arguments fn writes ("unknown" or an iterable; recorded only)."""
    ns, opname = _split(name)
    if mutates_args != "unknown" and (isinstance(mutates_args, str) or not hasattr(mutates_args, "__iter__")):
        raise ValueError("mutates_args must be 'unknown' or an iterable of argument names, got %r" % (mutates_args,))
    if _lookup(name) is not None:
        raise RuntimeError("custom_op: an operator named %s is already registered" % name)
    if schema is not None:
        _parse_schema(opname + schema if schema.startswith("(") else schema)

    def inner(f):
        return CustomOpDef(ns, opname, schema=schema, fn=f, device_types=device_types,
                           mutates_args=mutates_args)
    return inner if fn is None else inner(fn)


def define(qualname, schema, *, lib=None, tags=()):
    """Declare operator ``qualname`` with schema "(Tensor x) -> Tensor";
    kernels come from library.impl / register_kernel."""
    ns, name = _split(qualname)
    _parse_schema(name + schema)
    if _lookup(qualname) is not None:
        raise RuntimeError("define: an operator named %s is already registered" % qualname)
    CustomOpDef(ns, name, schema=schema)


def impl(qualname, types, func=None, *, lib=None):
    """Register func as the kernel of ``qualname`` for the device types
    ('cpu', 'cuda', a list) or dispatch key ('CPU', 'CUDA',
    'CompositeImplicitAutograd', ...); as a decorator when func is omitted."""
    op = _op_of(qualname)
    keys = [types] if isinstance(types, str) else list(types)

    def inner(f):
        for k in keys:
            op._set_impl(k, f)
        return f
    return inner if func is None else inner(func)


def register_kernel(op, device_types, func=None, /, *, lib=None):
    """``op.register_kernel(device_types, func)`` for an op given by name."""
    return _op_of(op).register_kernel(device_types, func)


def register_fake(op, func=None, /, *, lib=None, _stacklevel=1):
    """Store the fake function of op (never called: no fake tensors here)."""
    o = _op_of(op)
    return o.register_fake if func is None else o.register_fake(func)


impl_abstract = register_fake  # the deprecated name of register_fake


def register_autograd(op, backward, /, *, setup_context=None, lib=None):
    """``op.register_autograd(backward, setup_context=...)`` for an op given by name."""
    _op_of(op).register_autograd(backward, setup_context=setup_context)


class Library:
    """``Library(ns, kind)``: define ("DEF", "FRAGMENT") and implement
    ("IMPL") operators of namespace ns."""

    def __init__(self, ns, kind, dispatch_key=""):
        if kind not in ("IMPL", "DEF", "FRAGMENT"):
            raise ValueError("Unsupported kind: " + str(kind))
        self.ns, self.kind, self.dispatch_key = ns, kind, dispatch_key

    def define(self, schema, alias_analysis="", *, tags=()):
        """Declare ``name(args) -> ret`` in this namespace; returns the name."""
        _parse_schema(schema)
        name = schema.split("(", 1)[0].strip()
        define(self.ns + "::" + name, schema[len(schema.split("(", 1)[0]):])
        return name

    def impl(self, op_name, fn, dispatch_key="", *, with_keyset=False):
        """Register fn for op_name (a name in this namespace or an op) under
        dispatch_key (the library's when empty; empty means
        CompositeImplicitAutograd, as torch's catch-all)."""
        if with_keyset:
            raise NotImplementedError("Library.impl(with_keyset=True) is not supported: pycuda_sem has no "
                                      "dispatch key sets")
        if isinstance(op_name, str):
            if self.ns == "aten":
                raise NotImplementedError("pycuda_sem.library cannot override built-in aten operator %s: its "
                                          "kernels are C code, not dispatcher entries" % op_name)
            op = _op_of(self.ns + "::" + op_name.split(".", 1)[0])
        else:
            op = _op_of(op_name)
        key = dispatch_key or self.dispatch_key or "CompositeImplicitAutograd"
        op._set_impl(key, fn)

    def fallback(self, fn, dispatch_key="", *, with_keyset=False):
        raise NotImplementedError("Library.fallback is not implemented in pycuda_sem: there is no dispatcher")

    def _destroy(self):
        pass


def _missing(name, why):
    return NotImplementedError("torch.library.%s is not implemented in pycuda_sem: %s" % (name, why))


def opcheck(op, args, kwargs=None, *, test_utils=None, raise_exception=True):
    raise _missing("opcheck", "it tests fake-tensor, schema and dispatcher behaviour that pycuda_sem does "
                   "not have; test the op's results directly")


def triton_op(name, fn=None, /, *, mutates_args):
    raise _missing("triton_op", "pycuda_sem does not run Triton kernels")


def wrap_triton(triton_kernel, /):
    raise _missing("wrap_triton", "pycuda_sem does not run Triton kernels")


def get_ctx():
    raise _missing("get_ctx", "there are no fake tensors, so no fake-implementation context")
