"""torch.nn.Parameter: a Tensor that a Module registers as a learnable weight.

A Parameter is a real Tensor subclass made by Tensor._make_subclass: it shares
the memory of the tensor it wraps, is a leaf, and requires grad by default.
Ops on it return plain Tensors, as in torch."""
import collections

from .. import _C, _tensor_pickle

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer"]


class Parameter(_C.Tensor):
    """Parameter(data=None, requires_grad=True): data's memory as a leaf
    that Module.__setattr__ registers in _parameters."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _C.empty(0)
        if not isinstance(data, _C.Tensor):
            raise TypeError("Parameter(): data must be a Tensor, not %s" % type(data).__name__)
        # detach first: a Parameter never hangs off someone else's graph
        return _C.Tensor._make_subclass(cls, data.detach(), requires_grad)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, proto):
        # pickles as "rebuild a Parameter from this tensor's data", with its
        # attributes when it has any, as torch's Parameter.__reduce_ex__
        state = _tensor_pickle._get_state(self)
        hooks = collections.OrderedDict()  # torch's (never saved) backward hooks
        if not state:
            return (_rebuild_parameter, (self.data, self.requires_grad, hooks))
        return (_rebuild_parameter_with_state, (self.data, self.requires_grad, hooks, state))


def _rebuild_parameter(data, requires_grad, backward_hooks=None):
    """torch._utils._rebuild_parameter."""
    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    """torch._utils._rebuild_parameter_with_state: the Parameter, then its
    attributes."""
    return _tensor_pickle._set_state(Parameter(data, requires_grad), state)


class _BufferMeta(type):
    # a Buffer is a plain Tensor marked as one: isinstance reads the mark
    def __instancecheck__(cls, obj):
        return isinstance(obj, _C.Tensor) and bool(getattr(obj, "_is_buffer", False))


class Buffer(metaclass=_BufferMeta):
    """Buffer(data=None, *, persistent=True): data (detached) marked so that
    assigning it as a Module attribute registers it as a buffer (persistent:
    in the state dict), as torch.nn.Buffer."""

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = _C.empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t


# ---- lazy modules' placeholders ------------------------------------------------------------------

# what may still be done with an uninitialized tensor (torch's _allowed_methods,
# plus the attributes Module and the autograd layer read): everything else raises
_UNINIT_ALLOWED = frozenset((
    "materialize", "cls_to_become", "data", "requires_grad", "requires_grad_", "grad", "is_leaf",
    "device", "dtype", "is_cuda", "size", "copy_", "is_complex", "is_floating_point", "half",
    "float", "double", "char", "short", "int", "long", "cuda", "cpu", "to", "get_device",
    "persistent", "_is_buffer", "__class__", "__dict__", "__repr__", "__hash__", "__eq__",
    "__reduce_ex__", "__deepcopy__", "__setstate__", "_backward_hooks", "grad_fn",
))


class _UninitializedMixin:
    """Shared by UninitializedParameter and UninitializedBuffer: an empty
    tensor that keeps the device and dtype its materialization will use.
    There is no __torch_function__ in pycuda_sem, so the refusal is on the
    methods: every Tensor method but the few torch allows raises torch's
    ValueError (C functions such as torch.add(p, 1) see an empty tensor)."""
    cls_to_become = None

    def __getattribute__(self, name):
        if name.startswith("__") or name in _UNINIT_ALLOWED:
            return object.__getattribute__(self, name)
        if name == "shape":
            raise RuntimeError(
                "Can't access the shape of an uninitialized parameter or buffer. This error "
                "usually happens in `load_state_dict` when trying to load an uninitialized "
                "parameter into an initialized one. Call `forward` to initialize the parameters "
                "before accessing their attributes.")
        if hasattr(_C.Tensor, name) or name.startswith("_"):
            raise ValueError(
                "Attempted to use an uninitialized parameter in %s. This error happens when you "
                "are using a `LazyModule` or explicitly manipulating "
                "`torch.nn.parameter.UninitializedParameter` objects. When using LazyModules Call "
                "`forward` with a dummy batch to initialize the parameters before calling torch "
                "functions" % name)
        return object.__getattribute__(self, name)

    def materialize(self, shape, device=None, dtype=None):
        """Gives the tensor memory of `shape` (uninitialized values; the
        module's reset_parameters fills them) on its device and dtype unless
        given, and turns it into cls_to_become, keeping its identity."""
        old = object.__getattribute__(self, "data")
        device = old.device if device is None else device
        dtype = old.dtype if dtype is None else dtype
        self.data = _C.empty(shape, device=device, dtype=dtype)
        self.__class__ = self.cls_to_become

    def __repr__(self):
        return "<%s>" % type(self).__name__

    def __reduce_ex__(self, proto):
        # as torch's: one pickles the placeholder itself (its requires_grad)
        return (type(self), (self.requires_grad,))


class UninitializedParameter(_UninitializedMixin, Parameter):
    """A Parameter whose shape is not known yet (a lazy module's, until its
    first forward); materialize(shape) makes it an ordinary Parameter."""
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        data = _C.empty(0, device=device, dtype=dtype)
        return _C.Tensor._make_subclass(cls, data, requires_grad)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.requires_grad, self.data.device, self.data.dtype)
        memo[id(self)] = result
        return result


class _MaterializedBuffer(_C.Tensor):
    """What an UninitializedBuffer becomes after materialize(): a Python
    class has to stay one (CPython cannot turn it into the C Tensor type), so
    it is a Tensor subclass with nothing of its own. Lazy modules replace
    their buffers by plain tensors instead."""


class UninitializedBuffer(_UninitializedMixin, _C.Tensor):
    """A buffer whose shape is not known yet; materialize(shape) gives it memory."""
    cls_to_become = _MaterializedBuffer

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        data = _C.empty(0, device=device, dtype=dtype)
        t = _C.Tensor._make_subclass(cls, data, requires_grad)
        t.persistent = persistent
        return t


def is_lazy(param):
    """Whether param is an UninitializedParameter or UninitializedBuffer."""
    return isinstance(param, _UninitializedMixin)
