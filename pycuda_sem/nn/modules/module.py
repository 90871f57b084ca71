"""torch.nn.Module: the base class of every layer and model.

A Module keeps its state in three ordered dicts, _parameters, _buffers and
_modules, that __setattr__ fills by the type of the value assigned; everything
else (iteration, conversion, state_dict, repr) walks those dicts. The rules,
the error texts and the printed form follow torch 2.x so that scripts and
their error handling behave the same."""
import warnings
from collections import OrderedDict

from ... import _C
from ...autograd.grad_mode import no_grad
from ...utils.hooks import RemovableHandle
from ..parameter import Buffer, Parameter
from ._module_state import _EXTRA_STATE_KEY_SUFFIX, _IncompatibleKeys, _StateDictMixin  # noqa: F401

__all__ = ["Module"]

def _typename(obj):
    """torch.typename: 'torch.FloatTensor'-style for tensors, else the
    qualified class name (builtins unqualified)."""
    if isinstance(obj, _C.Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    qualname = getattr(obj, "__qualname__", None) or type(obj).__qualname__
    if not isinstance(obj, type):
        module, qualname = type(obj).__module__, type(obj).__qualname__
    if module in ("", "builtins"):
        return qualname
    return module + "." + qualname


def _addindent(s_, num_spaces):
    s = s_.split("\n")
    if len(s) == 1:
        return s_
    first = s.pop(0)
    return first + "\n" + "\n".join(num_spaces * " " + line for line in s)


def _check_name(kind, name, module, container):
    """The checks register_parameter and register_buffer share."""
    if not isinstance(name, str):
        raise TypeError("%s name should be a string. Got %s" % (kind, _typename(name)))
    if "." in name:
        raise KeyError("%s name can't contain \".\"" % kind)
    if name == "":
        raise KeyError("%s name can't be empty string \"\"" % kind)
    if hasattr(module, name) and name not in container:
        raise KeyError("attribute '%s' already exists" % name)


class Module(_StateDictMixin):
    """Base class for all neural network modules; subclasses define forward()."""

    dump_patches = False
    _version = 1
    training: bool
    call_super_init = False

    def __init__(self, *args, **kwargs):
        if not self.call_super_init and (args or kwargs):
            raise TypeError("%s.__init__() got an unexpected argument" % type(self).__name__)
        # object.__setattr__: our own __setattr__ needs these dicts to exist
        setattr_ = super().__setattr__
        setattr_("training", True)
        setattr_("_parameters", OrderedDict())
        setattr_("_buffers", OrderedDict())
        setattr_("_non_persistent_buffers_set", set())
        setattr_("_backward_hooks", OrderedDict())
        setattr_("_backward_pre_hooks", OrderedDict())
        setattr_("_forward_hooks", OrderedDict())
        setattr_("_forward_hooks_with_kwargs", OrderedDict())
        setattr_("_forward_hooks_always_called", OrderedDict())
        setattr_("_forward_pre_hooks", OrderedDict())
        setattr_("_forward_pre_hooks_with_kwargs", OrderedDict())
        setattr_("_state_dict_hooks", OrderedDict())
        setattr_("_state_dict_pre_hooks", OrderedDict())
        setattr_("_load_state_dict_pre_hooks", OrderedDict())
        setattr_("_load_state_dict_post_hooks", OrderedDict())
        setattr_("_modules", OrderedDict())

    def forward(self, *input):
        raise NotImplementedError('Module [%s] is missing the required "forward" function'
                                  % type(self).__name__)

    # ---- registration ------------------------------------------------------------

    def register_buffer(self, name, tensor, persistent=True):
        """Adds a tensor that is state but not a parameter (running stats);
        persistent=False keeps it out of state_dict."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name("buffer", name, self, self._buffers)
        if tensor is not None and not isinstance(tensor, _C.Tensor):
            raise TypeError("cannot assign '%s' object to buffer '%s' (torch Tensor or None required)"
                            % (_typename(tensor), name))
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        """Adds a Parameter (or None, a declared slot) under name."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name("parameter", name, self, self._parameters)
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError("cannot assign '%s' object to parameter '%s' (torch.nn.Parameter or None "
                            "required)" % (_typename(param), name))
        elif param.grad_fn is not None:
            raise ValueError(
                "Cannot assign non-leaf Tensor to parameter '{0}'. Model parameters must be created "
                "explicitly. To express '{0}' as a function of another Tensor, compute the value in "
                "the forward() method.".format(name))
        else:
            self._parameters[name] = param

    def add_module(self, name, module):
        """Adds a child module (or None) under name."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError("%s is not a Module subclass" % _typename(module))
        if not isinstance(name, str):
            raise TypeError("module name should be a string. Got %s" % _typename(name))
        if hasattr(self, name) and name not in self._modules:
            raise KeyError("attribute '%s' already exists" % name)
        if "." in name:
            raise KeyError("module name can't contain \".\", got: %s" % name)
        if name == "":
            raise KeyError("module name can't be empty string \"\"")
        self._modules[name] = module

    def register_module(self, name, module):
        """Alias of add_module."""
        self.add_module(name, module)

    def get_submodule(self, target):
        """The module at dotted path target ('' is self)."""
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def get_parameter(self, target):
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return getattr(mod, name)

    # ---- attribute rules ---------------------------------------------------------

    def __getattr__(self, name):
        # only reached when normal lookup failed: look in the three dicts
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError("'%s' object has no attribute '%s'" % (type(self).__name__, name))

    def __setattr__(self, name, value):
        def remove_from(*dicts_or_sets):
            for d in dicts_or_sets:
                if name in d:
                    if isinstance(d, dict):
                        del d[name]
                    else:
                        d.discard(name)

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(self.__dict__, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError("cannot assign '%s' as parameter '%s' (torch.nn.Parameter or None "
                                "expected)" % (_typename(value), name))
            self.register_parameter(name, value)
        else:
            modules = self.__dict__.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                remove_from(self.__dict__, self._parameters, self._buffers,
                            self._non_persistent_buffers_set)
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError("cannot assign '%s' as child module '%s' (torch.nn.Module or "
                                    "None expected)" % (_typename(value), name))
                modules[name] = value
            elif isinstance(value, Buffer):
                if "_buffers" not in self.__dict__:
                    raise AttributeError("cannot assign buffer before Module.__init__() call")
                remove_from(self.__dict__, self._parameters, self._modules)
                self.register_buffer(name, value, persistent=value.persistent)
            else:
                buffers = self.__dict__.get("_buffers")
                if buffers is not None and name in buffers:
                    if value is not None and not isinstance(value, _C.Tensor):
                        raise TypeError("cannot assign '%s' as buffer '%s' (torch.nn.Buffer, "
                                        "torch.Tensor or None expected)" % (_typename(value), name))
                    buffers[name] = value
                else:
                    super().__setattr__(name, value)

    def __delattr__(self, name):
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            super().__delattr__(name)

    def __dir__(self):
        keys = (dir(self.__class__) + list(self.__dict__) + list(self._parameters)
                + list(self._modules) + list(self._buffers))
        # names like '0' (Sequential's children) are not attributes
        return sorted(k for k in keys if not k[0].isdigit())

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in ("_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_forward_hooks",
                     "_forward_hooks_with_kwargs", "_forward_hooks_always_called",
                     "_state_dict_hooks", "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
                     "_load_state_dict_post_hooks", "_backward_hooks", "_backward_pre_hooks"):
            if name not in self.__dict__:
                super().__setattr__(name, OrderedDict())
        if "_non_persistent_buffers_set" not in self.__dict__:
            super().__setattr__("_non_persistent_buffers_set", set())

    # ---- calling and hooks -------------------------------------------------------

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """hook(module, args) -> None or new args (with_kwargs: hook(module,
        args, kwargs) -> None or (args, kwargs)), run before forward."""
        handle = RemovableHandle(self._forward_pre_hooks,
                                 extra_dict=self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """hook(module, args, output) -> None or a new output (with_kwargs:
        hook(module, args, kwargs, output)), run after forward."""
        handle = RemovableHandle(self._forward_hooks, extra_dict=self._forward_hooks_with_kwargs)
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(self, hook, prepend=False):
        """hook(module, grad_input, grad_output) when the gradients of the
        call's tensor inputs are computed (grad_input all None when none
        needs one); a tuple it returns replaces grad_input."""
        return self._add_backward_hook(self._backward_hooks, hook, prepend)

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """hook(module, grad_output) when the gradients of the call's
        outputs are known, before the module's backward; a tuple it returns
        replaces grad_output."""
        return self._add_backward_hook(self._backward_pre_hooks, hook, prepend)

    def register_backward_hook(self, hook):
        """The old form: here the same as register_full_backward_hook
        (torch's gave the gradients of the module's last op instead)."""
        warnings.warn("Using a non-full backward hook is deprecated; this is "
                      "register_full_backward_hook's behaviour.", FutureWarning, stacklevel=2)
        return self._add_backward_hook(self._backward_hooks, hook, False)

    def _add_backward_hook(self, table, hook, prepend):
        handle = RemovableHandle(table)
        table[handle.id] = hook
        if prepend:
            table.move_to_end(handle.id, last=False)
        return handle

    def _call_impl(self, *args, **kwargs):
        forward_hooks = bool(self._forward_pre_hooks or self._forward_hooks)
        if self._backward_hooks or self._backward_pre_hooks:
            from ._backward_hooks import call_with_backward_hooks
            return call_with_backward_hooks(self, args, kwargs, self._run_forward_hooks
                                            if forward_hooks else self.forward)
        if not forward_hooks:
            return self.forward(*args, **kwargs)
        return self._run_forward_hooks(*args, **kwargs)

    def _run_forward_hooks(self, *args, **kwargs):
        result = None
        called_always = False
        try:
            for hook_id, hook in list(self._forward_pre_hooks.items()):
                if hook_id in self._forward_pre_hooks_with_kwargs:
                    r = hook(self, args, kwargs)
                    if r is not None:
                        if isinstance(r, tuple) and len(r) == 2:
                            args, kwargs = r
                        else:
                            raise RuntimeError("forward pre-hook must return None or a tuple of "
                                               "(new_args, new_kwargs), but got %s." % (r,))
                else:
                    r = hook(self, args)
                    if r is not None:
                        args = r if isinstance(r, tuple) else (r,)
            result = self.forward(*args, **kwargs)
            for hook_id, hook in list(self._forward_hooks.items()):
                if hook_id in self._forward_hooks_always_called:
                    called_always = True
                if hook_id in self._forward_hooks_with_kwargs:
                    r = hook(self, args, kwargs, result)
                else:
                    r = hook(self, args, result)
                if r is not None:
                    result = r
        except Exception:
            # always_call hooks still see the call when forward raised
            if not called_always:
                for hook_id, hook in self._forward_hooks.items():
                    if hook_id in self._forward_hooks_always_called:
                        try:
                            if hook_id in self._forward_hooks_with_kwargs:
                                hook(self, args, kwargs, result)
                            else:
                                hook(self, args, result)
                        except Exception as e:
                            warnings.warn("forward hook with ``always_call=True`` raised an "
                                          "exception that was silenced as another error was "
                                          "raised in forward: %s" % e)
            raise
        return result

    __call__ = _call_impl

    # ---- iteration ---------------------------------------------------------------

    def _named_members(self, get_members_fn, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        for module_prefix, module in modules:
            for k, v in get_members_fn(module):
                if v is None or id(v) in memo:
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield module_prefix + ("." if module_prefix else "") + k, v

    def parameters(self, recurse=True):
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._parameters.items(), prefix=prefix,
                                       recurse=recurse, remove_duplicate=remove_duplicate)

    def buffers(self, recurse=True):
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._buffers.items(), prefix=prefix,
                                       recurse=recurse, remove_duplicate=remove_duplicate)

    def children(self):
        for _, module in self.named_children():
            yield module

    def named_children(self):
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def modules(self):
        for _, module in self.named_modules():
            yield module

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub_prefix = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub_prefix, remove_duplicate)

    # ---- modes -------------------------------------------------------------------

    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Clears the gradients of all parameters (None by default, as torch 2)."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                g = p.grad
                if g.grad_fn is not None:
                    g.detach_()
                else:
                    g.requires_grad_(False)
                g.zero_()

    def compile(self, *args, **kwargs):
        """torch.compile on this module's forward, in place: here the
        eager compile (pycuda_sem.compile), so the module runs as before."""
        from ... import compile as _compile
        _compile(self._call_impl, *args, **kwargs)  # checks the arguments as torch's

    def apply(self, fn):
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # ---- conversion --------------------------------------------------------------

    def _apply(self, fn, recurse=True):
        """fn on every parameter, gradient and buffer. Parameters keep their
        identity (their memory is swapped through .data) so that an optimizer
        built before model.to(...) still holds the live tensors; with
        __future__.set_overwrite_module_params_on_conversion(True) they are
        replaced by new Parameters instead, as in torch."""
        from ... import __future__ as future  # not `from ...__future__ import`: a future statement
        if recurse:
            for module in self.children():
                module._apply(fn)
        overwrite = future.get_overwrite_module_params_on_conversion()
        for key, param in self._parameters.items():
            if param is None:
                continue
            with no_grad():
                applied = fn(param)
            grad = param.grad
            if overwrite:
                new = Parameter(applied, param.requires_grad)
                if grad is not None:
                    with no_grad():
                        new.grad = fn(grad).requires_grad_(grad.requires_grad)
                self._parameters[key] = new
                continue
            param.data = applied
            if grad is not None:
                with no_grad():
                    grad.data = fn(grad)
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def to(self, *args, **kwargs):
        """to(device=None, dtype=None, non_blocking=False, memory_format=None),
        to(dtype), to(tensor): moves and/or casts parameters and buffers in
        place; integer tensors keep their dtype. memory_format= (channels_last,
        channels_last_3d) lays out the 4-D (5-D) ones in it, as torch's."""
        device, dtype, non_blocking, fmt = _parse_to(*args, **kwargs)
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but got "
                            "desired dtype=%s" % dtype)

        def convert(t):
            cast = dtype if (t.is_floating_point() or t.is_complex()) else None
            if fmt is not None and t.dim() in (4, 5):
                return t.to(device, cast, non_blocking, memory_format=fmt)
            return t.to(device, cast, non_blocking)

        return self._apply(convert)

    def cuda(self, device=None):
        return self._apply(lambda t: t.cuda(device))

    def cpu(self):
        return self._apply(lambda t: t.cpu())

    def type(self, dst_type):
        return self._apply(lambda t: t.type(dst_type))

    def _cast(self, dtype):
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def float(self):
        return self._cast(_C.float32)

    def double(self):
        return self._cast(_C.float64)

    def half(self):
        return self._cast(_C.float16)

    def bfloat16(self):
        return self._cast(_C.bfloat16)

    def to_empty(self, *, device, recurse=True):
        """Every parameter and buffer replaced by uninitialised storage of
        the same shape and dtype on `device` (torch's way out of the meta
        device; here the values are simply not copied)."""
        return self._apply(lambda t: _C.empty_like(t, device=device), recurse=recurse)

    def share_memory(self):
        """Moves every parameter, gradient and buffer into shared memory in
        place (Tensor.share_memory_), so that processes it is sent to update
        the same tensors (Hogwild training)."""
        return self._apply(lambda t: t.share_memory_())

    # ---- printing ----------------------------------------------------------------

    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        """The module's own settings for repr; layers override it."""
        return ""

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = ["(" + key + "): " + _addindent(repr(module), 2)
                       for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

    def _replicate_for_data_parallel(self):
        replica = self.__new__(type(self))
        replica.__dict__ = self.__dict__.copy()
        # each replica gets its own dicts, filled by replicate()
        replica._parameters = OrderedDict()
        replica._buffers = replica._buffers.copy()
        replica._modules = replica._modules.copy()
        return replica


def _parse_to(*args, **kwargs):
    """(device, dtype, non_blocking, memory_format) from Module.to's argument forms."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    non_blocking = kwargs.pop("non_blocking", False)
    kwargs.pop("copy", None)
    fmt = kwargs.pop("memory_format", None)
    if fmt is not None and not isinstance(fmt, _C.memory_format):
        raise TypeError("to(): memory_format must be a memory_format, not %s" % type(fmt).__name__)
    if kwargs:
        raise TypeError("to() received an invalid combination of arguments: %s" % sorted(kwargs))
    rest = list(args)
    if rest and isinstance(rest[0], _C.Tensor):
        t = rest.pop(0)
        device, dtype = t.device, t.dtype
    elif rest and isinstance(rest[0], _C.dtype):
        dtype = rest.pop(0)
    elif rest and rest[0] is not None and not isinstance(rest[0], bool):
        device = rest.pop(0)
    elif rest and rest[0] is None:
        rest.pop(0)
    if rest and isinstance(rest[0], _C.dtype):
        dtype = rest.pop(0)
    if rest and isinstance(rest[0], bool):
        non_blocking = rest.pop(0)
    if rest:
        raise TypeError("to() received an invalid combination of arguments")
    if device is not None:
        device = _C.device(device)
    return device, dtype, non_blocking, fmt
