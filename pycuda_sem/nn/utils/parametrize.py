"""torch.nn.utils.parametrize: a module's parameter or buffer replaced by a
function of "original" tensors. As in torch, the first registration swaps
the module's class for a generated subclass Parametrized<Name> that holds
one property per parametrized tensor (reading it runs the parametrizations,
assigning to it runs their right_inverse), and the originals live in
module.parametrizations[name] (a ParametrizationList), so state_dict keys
are `parametrizations.<name>.original` (or `original0, original1, ...`
when right_inverse returns several tensors) and
`parametrizations.<name>.<i>.<...>` for the parametrizations' own state."""
import collections.abc
import contextlib
import copy
import copyreg

from ... import _C
from ...autograd.grad_mode import no_grad
from ..modules.container import ModuleDict, ModuleList
from ..parameter import Parameter

__all__ = ["cached", "ParametrizationList", "register_parametrization", "is_parametrized",
           "remove_parametrizations", "type_before_parametrizations",
           "transfer_parametrizations_and_params"]

_cache_enabled = 0
_cache = {}


@contextlib.contextmanager
def cached():
    """Inside it, every parametrized tensor is computed once (on first read)
    and reused until the outermost cached() exits."""
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


def _register_parameter_or_buffer(module, name, value):
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _maybe_set(dest, src):
    # torch's set_: dest (the very Parameter object an optimizer may hold) takes
    # src's data, shape and dtype; here the .data setter does the swap
    dest.data = src


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, with the
    unparametrized tensor(s) as `original` (or `original0, original1, ...`)."""

    def __init__(self, modules, original, unsafe=False):
        modules = list(modules)
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape, original_dtype = original.shape, original.dtype
        with no_grad():
            new = original
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass  # right_inverse that cannot be computed: the identity
        if not isinstance(new, (_C.Tensor, collections.abc.Sequence)):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors "
                             "(list, tuple...). Got %s" % type(new).__name__)
        self.is_tensor = isinstance(new, _C.Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change the "
                                 "dtype.\noriginal.dtype: %s\nright_inverse(original).dtype: %s"
                                 % (original.dtype, new.dtype))
            if original.device != new.device:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change the "
                                 "device.\noriginal.device: %s\nright_inverse(original).device: %s"
                                 % (original.device, new.device))
            # keep the same tensor object, so an optimizer built before still trains it
            with no_grad():
                if new is not original:
                    _maybe_set(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, originali in enumerate(new):
                if not isinstance(originali, _C.Tensor):
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of "
                                     "tensors (list, tuple...). Got element %d of the sequence "
                                     "with type %s." % (i, type(originali).__name__))
                if isinstance(original, Parameter):
                    originali = Parameter(originali.detach(), original.requires_grad)
                else:
                    originali = originali.detach().requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, "original%d" % i, originali)
        if not self.unsafe:
            z = self()
            if not isinstance(z, _C.Tensor):
                raise ValueError("A parametrization must return a tensor. Got %s."
                                 % type(z).__name__)
            if z.dtype != original_dtype:
                raise ValueError("Registering a parametrization may not change the dtype of the "
                                 "tensor, unless `unsafe` flag is enabled.\nunparametrized dtype: "
                                 "%s\nparametrized dtype: %s" % (original_dtype, z.dtype))
            if z.shape != original_shape:
                raise ValueError("Registering a parametrization may not change the shape of the "
                                 "tensor, unless `unsafe` flag is enabled.\nunparametrized shape: "
                                 "%s\nparametrized shape: %s" % (original_shape, z.shape))

    def right_inverse(self, value):
        """Sets the originals so that the parametrized tensor becomes value
        (runs every parametrization's right_inverse, last first)."""
        with no_grad():
            for module in reversed(self):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError("parametrization %s does not implement right_inverse."
                                       % type(module).__name__)
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, _C.Tensor):
                    raise ValueError("`right_inverse` should return a tensor. Got %s"
                                     % type(value).__name__)
                if value.dtype != self.original.dtype:
                    raise ValueError("The tensor returned by `right_inverse` has dtype %s while "
                                     "`original` has dtype %s" % (value.dtype,
                                                                  self.original.dtype))
                _maybe_set(self.original, value)
            else:
                if not isinstance(value, collections.abc.Sequence):
                    raise ValueError("'right_inverse' must return a sequence of tensors. Got %s."
                                     % type(value).__name__)
                if len(value) != self.ntensors:
                    raise ValueError("'right_inverse' must return a sequence of tensors of length "
                                     "%d. Got a sequence of length %d." % (self.ntensors,
                                                                          len(value)))
                for i, tensor in enumerate(value):
                    original_i = getattr(self, "original%d" % i)
                    if not isinstance(tensor, _C.Tensor):
                        raise ValueError("'right_inverse' must return a sequence of tensors. Got "
                                         "element %d of type %s." % (i, type(tensor).__name__))
                    if original_i.dtype != tensor.dtype:
                        raise ValueError("Tensor %d returned by `right_inverse` has dtype %s "
                                         "while `original%d` has dtype %s"
                                         % (i, tensor.dtype, i, original_i.dtype))
                    _maybe_set(original_i, tensor)

    def forward(self):
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, "original%d" % i) for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _inject_new_class(module):
    cls = module.__class__

    def default_deepcopy(self, memo):
        # what deepcopy does without __deepcopy__ (the class refuses __getstate__)
        obj = memo.get(id(self), None)
        if obj is not None:
            return obj
        replica = self.__new__(self.__class__)
        memo[id(self)] = replica
        replica.__dict__ = copy.deepcopy(self.__dict__, memo)
        for slot in copyreg._slotnames(self.__class__):
            if hasattr(self, slot):
                setattr(replica, slot, copy.deepcopy(getattr(self, slot), memo))
        return replica

    def getstate(self):
        raise RuntimeError("Serialization of parametrized modules is only supported through "
                           "state_dict(). See:\nhttps://pytorch.org/tutorials/beginner/"
                           "saving_loading_models.html#saving-loading-a-general-checkpoint-for-"
                           "inference-and-or-resuming-training")

    dct = {"__getstate__": getstate}
    if not hasattr(cls, "__deepcopy__"):
        dct["__deepcopy__"] = default_deepcopy
    module.__class__ = type("Parametrized%s" % cls.__name__, (cls,), dct)


def _inject_property(module, tensor_name):
    if hasattr(module, tensor_name):
        raise AssertionError("Module already has an attribute named '%s'" % tensor_name)

    def get_parametrized(self):
        parametrization = self.parametrizations[tensor_name]
        if not _cache_enabled:
            return parametrization()
        key = (id(self), tensor_name)
        tensor = _cache.get(key)
        if tensor is None:
            tensor = _cache[key] = parametrization()
        return tensor

    def set_original(self, value):
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Makes module.<tensor_name> = parametrization(original); registering
    again on the same name stacks another parametrization after the first.
    unsafe=True skips the checks that the shape and dtype are kept."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            if not isinstance(x, _C.Tensor):
                raise ValueError("A parametrization must return a tensor. Got %s."
                                 % type(x).__name__)
            if x.dtype != y.dtype:
                raise ValueError("Registering a parametrization may not change the dtype of the "
                                 "tensor, unless the `unsafe` flag is enabled.\nmodule.%s.dtype: "
                                 "%s\nparametrization(module.%s).dtype: %s"
                                 % (tensor_name, y.dtype, tensor_name, x.dtype))
            if x.shape != y.shape:
                raise ValueError("Registering a parametrization may not change the shape of the "
                                 "tensor, unless the `unsafe` flag is enabled.\nmodule.%s.shape: "
                                 "%s\nparametrization(module.%s).shape: %s"
                                 % (tensor_name, y.shape, tensor_name, x.shape))
            if hasattr(parametrization, "right_inverse"):
                try:
                    z = parametrization.right_inverse(x)
                except NotImplementedError:
                    z = None
                if z is not None:
                    if not isinstance(z, _C.Tensor):
                        raise ValueError("parametrization.right_inverse must return a tensor. "
                                         "Got: %s" % type(z).__name__)
                    if z.dtype != y.dtype or z.shape != y.shape:
                        what, a, b = (("dtype", y.dtype, z.dtype) if z.dtype != y.dtype
                                      else ("shape", y.shape, z.shape))
                        raise ValueError(
                            "The tensor returned by parametrization.right_inverse must have the "
                            "same %s as module.%s, unless the `unsafe` flag is enabled.\n"
                            "module.%s.%s: %s\nreturned %s: %s"
                            % (what, tensor_name, tensor_name, what, a, what, b))
        plist = module.parametrizations[tensor_name]
        plist.append(parametrization)
        plist.unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        plist = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = plist
    else:
        raise ValueError("Module '%s' does not have a parameter, a buffer, or a parametrized "
                         "element with name '%s'" % (module, tensor_name))
    return module


def is_parametrized(module, tensor_name=None):
    """Whether module has any parametrization (or one on tensor_name)."""
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Undoes register_parametrization on tensor_name: the tensor becomes a
    plain parameter/buffer again holding its current parametrized value
    (leave_parametrized=True) or the original (False); the module gets its
    class back once nothing is parametrized."""
    if not is_parametrized(module, tensor_name):
        raise ValueError("Module %s does not have a parametrization on %s"
                         % (module, tensor_name))
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with no_grad():
                t = getattr(module, tensor_name)
                _maybe_set(original, t)
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                             "that is parametrized in terms of a sequence of tensors.")
        t = getattr(module, tensor_name)
        original = Parameter(t.detach(), True) if t.requires_grad else t.detach()
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module):
    """The module's class before parametrization (its own type otherwise)."""
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(from_module, to_module, tensor_name=None):
    """Registers from_module's parametrizations (all, or tensor_name's) on
    to_module, creating the tensor there if missing, and makes to_module's
    originals the same tensors as from_module's."""
    if is_parametrized(from_module):
        names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
        for name in names:
            if not hasattr(to_module, name):
                setattr(to_module, name, Parameter(getattr(from_module, name).detach()))
            for fn in from_module.parametrizations[name]:
                register_parametrization(to_module, name, fn)
            src, dst = from_module.parametrizations[name], to_module.parametrizations[name]
            if hasattr(src, "original"):
                dst.original = src.original
            else:
                i = 0
                while hasattr(src, "original%d" % i):
                    setattr(dst, "original%d" % i, getattr(src, "original%d" % i))
                    i += 1
    return to_module
