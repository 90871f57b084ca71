"""torch.optim.Optimizer: parameter groups, per-parameter state, state_dict
in torch's format, zero_grad, step hooks.

The update rules live in the subclasses (sgd.py, adam.py, rmsprop.py,
adagrad.py). Each has two forms, as torch's have:

- the multi-tensor form, for contiguous CUDA tensors of a floating dtype:
  one C call (pycuda_sem._C._fused_adam_ ...) per (device, dtype) group of a
  parameter group, a few kernel launches for all its tensors;
- the composed form, one tensor at a time over tensor ops (the CPU, strided
  or complex tensors, ``foreach=False``, ``differentiable=True``).

``foreach=None, fused=None`` (the defaults) pick the multi-tensor form on
CUDA, as torch picks its foreach one; ``foreach=True`` and ``fused=True``
pick it as well (one implementation serves both names) and
``foreach=False`` (with fused not True) picks the composed form.
"""
import functools
import warnings
from collections import OrderedDict, defaultdict
from copy import deepcopy
from itertools import chain

import pycuda_sem as torch
from pycuda_sem.utils.hooks import RemovableHandle

__all__ = ["Optimizer", "required", "register_optimizer_step_pre_hook",
           "register_optimizer_step_post_hook"]


class _RequiredParameter:
    """Singleton for a hyperparameter that has no default (torch's `required`)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()

_global_step_pre_hooks = OrderedDict()
_global_step_post_hooks = OrderedDict()


def register_optimizer_step_pre_hook(hook):
    """hook(optimizer, args, kwargs) -> None or (args, kwargs), before every
    optimizer's step."""
    handle = RemovableHandle(_global_step_pre_hooks)
    _global_step_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook):
    """hook(optimizer, args, kwargs), after every optimizer's step."""
    handle = RemovableHandle(_global_step_post_hooks)
    _global_step_post_hooks[handle.id] = hook
    return handle


def _typename(obj):
    """torch.typename: 'torch.FloatTensor' for a tensor, the qualified type otherwise."""
    if isinstance(obj, torch.Tensor):
        return obj.type()
    t = type(obj)
    if t.__module__ in ("builtins", "__builtin__"):
        return t.__qualname__
    return t.__module__ + "." + t.__qualname__


def _get_scalar_dtype():
    """The dtype of step counters: the default dtype when it is float64, else
    float32 (torch's _get_scalar_dtype)."""
    d = torch.get_default_dtype()
    return d if d == torch.float64 else torch.float32


def _step_tensor():
    return torch.tensor(0.0, dtype=_get_scalar_dtype())


def _value(x):
    """A Python number from a number or a one-element tensor."""
    return x.item() if isinstance(x, torch.Tensor) else x


_FUSED_DTYPES = None


def _multi_tensor_ok(t):
    """Whether the multi-tensor C path takes this tensor."""
    global _FUSED_DTYPES
    if _FUSED_DTYPES is None:
        _FUSED_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
    return t.is_cuda and t.dtype in _FUSED_DTYPES and t.is_contiguous()


def _step_ok(s):
    return (isinstance(s, torch.Tensor) and not s.is_cuda and s.numel() == 1
            and s.dtype in (torch.float32, torch.float64))


def _split_for_multi_tensor(group, params, *lists, steps=None):
    """Indices of params into the multi-tensor path, grouped by (device,
    dtype), and the indices left to the composed path. A tensor goes the
    multi-tensor way when it and all of its state tensors qualify (and its
    step counter is a CPU float tensor, which the C call reads)."""
    use = group.get("fused") or group.get("foreach") is not False
    if group.get("differentiable") or not use:
        return {}, list(range(len(params)))
    buckets, rest = {}, []
    for i, p in enumerate(params):
        if _multi_tensor_ok(p) and (steps is None or _step_ok(steps[i])) and all(
                lst is None or lst[i] is None
                or (lst[i].device == p.device and lst[i].dtype == p.dtype and lst[i].is_contiguous()
                    and lst[i].shape == p.shape)
                for lst in lists):
            buckets.setdefault((p.device, p.dtype), []).append(i)
        else:
            rest.append(i)
    return buckets, rest


def _pick(lst, idx):
    return None if lst is None else [lst[i] for i in idx]


def _check_fused(fused, foreach, differentiable):
    """torch's refusals for fused=True."""
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def _use_grad(step):
    """Runs step with grad mode as the optimizer's `differentiable` default
    says (off unless differentiable=True), as torch's step does."""
    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        prev = torch.is_grad_enabled()
        try:
            torch.set_grad_enabled(bool(self.defaults.get("differentiable", False)))
            return step(self, *args, **kwargs)
        finally:
            torch.set_grad_enabled(prev)
    return wrapper


def _with_step_hooks(step):
    """Wraps a subclass's step with the global and per-optimizer step hooks."""
    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        for hook in chain(_global_step_pre_hooks.values(), self._optimizer_step_pre_hooks.values()):
            res = hook(self, args, kwargs)
            if res is not None:
                if isinstance(res, tuple) and len(res) == 2:
                    args, kwargs = res
                else:
                    raise RuntimeError(
                        "%s must return None or a tuple of (new_args, new_kwargs), but got %r."
                        % (hook, res))
        out = step(self, *args, **kwargs)
        self._opt_called = True
        for hook in chain(self._optimizer_step_post_hooks.values(),
                          _global_step_post_hooks.values()):
            hook(self, args, kwargs)
        return out
    wrapper._hooked = True
    return wrapper


class Optimizer:
    """Base class of all optimizers (torch.optim.Optimizer).

    params: an iterable of tensors, or of dicts (parameter groups, each with
    a "params" entry and hyperparameters that override `defaults`)."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_hooked", False):
            cls.step = _with_step_hooks(step)

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._optimizer_state_dict_pre_hooks = OrderedDict()
        self._optimizer_state_dict_post_hooks = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks = OrderedDict()
        self._optimizer_load_state_dict_post_hooks = OrderedDict()
        if isinstance(params, torch.Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + _typename(params))
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    # ---- pickling and printing --------------------------------------------------

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                     "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())

    def __repr__(self):
        s = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += "\nParameter Group %d\n" % i
            for key in sorted(group.keys()):
                if key != "params":
                    s += "    %s: %s\n" % (key, group[key])
        return s + ")"

    def _fill_group_defaults(self, **defaults):
        """After unpickling, or loading an older state_dict: group keys it
        lacks take these values, and number step counters become tensors."""
        for group in self.param_groups:
            for k, v in defaults.items():
                group.setdefault(k, v)
            for p in group["params"]:
                st = self.state.get(p, {})
                if "step" in st and not isinstance(st["step"], torch.Tensor):
                    st["step"] = torch.tensor(float(st["step"]), dtype=_get_scalar_dtype())

    # ---- groups ----------------------------------------------------------------------

    def add_param_group(self, param_group):
        """Adds a group (a dict with "params") to param_groups; missing
        hyperparameters take the optimizer's defaults."""
        if not isinstance(param_group, dict):
            raise TypeError("param_group must be a dict, but got %s" % type(param_group).__name__)
        params = param_group["params"]
        if isinstance(params, torch.Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            param_group["params"] = list(params)
        tensors, names = [], []
        for p in param_group["params"]:
            if isinstance(p, tuple):  # (name, tensor), as named_parameters() gives
                names.append(p[0])
                tensors.append(p[1])
            else:
                tensors.append(p)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some param "
                                 "names are missing")
            param_group["param_names"] = names
        for p in tensors:
            if not isinstance(p, torch.Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _typename(p))
            if not self.defaults.get("differentiable", None) and not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 "optimization parameter " + name)
            param_group.setdefault(name, default)
        if len(tensors) != len(set(tensors)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        seen = set()
        for group in self.param_groups:
            seen.update(group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                current = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 "cannot add param group %s to the optimizer" % current)
        if not seen.isdisjoint(tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # ---- state_dict -------------------------------------------------------------------

    def state_dict(self):
        """{"state": {index: per-parameter state}, "param_groups": [group
        with "params" as index lists]}: torch's format. Indices count the
        parameters across groups, in order."""
        for hook in self._optimizer_state_dict_pre_hooks.values():
            hook(self)
        mapping = {}
        start = 0

        def pack_group(group):
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            mapping.update({id(p): i for i, p in enumerate(group["params"], start)
                            if id(p) not in mapping})
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        groups = [pack_group(g) for g in self.param_groups]
        state = {(mapping[id(k)] if isinstance(k, torch.Tensor) else k): v
                 for k, v in self.state.items()}
        sd = {"state": state, "param_groups": groups}
        for hook in self._optimizer_state_dict_post_hooks.values():
            res = hook(self, sd)
            if res is not None:
                sd = res
        return sd

    @staticmethod
    def _cast_state_value(param, value, key=None):
        """A loaded state tensor put where the parameter is: step counters
        stay 0-dim CPU tensors (the multi-tensor path reads them on the
        host), floating state takes the parameter's device and dtype."""
        if key == "step":
            if value.is_cuda or value.dtype not in (torch.float32, torch.float64):
                return value.to(device="cpu", dtype=torch.float32)
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)

    def load_state_dict(self, state_dict):
        """Loads a state_dict() (ours or torch's): groups must match in number
        and sizes; state tensors move to their parameter's device and dtype."""
        for hook in self._optimizer_load_state_dict_pre_hooks.values():
            res = hook(self, state_dict)
            if res is not None:
                state_dict = res
        state_dict = state_dict.copy()
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))

        def cast(param, value, key=None):
            if isinstance(value, torch.Tensor):
                return Optimizer._cast_state_value(param, value, key)
            if isinstance(value, dict):
                return {k: cast(param, v, key=k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(cast(param, v) for v in value)
            return value

        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = cast(param, v)
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})
        for hook in self._optimizer_load_state_dict_post_hooks.values():
            hook(self)

    # ---- gradients and steps ------------------------------------------------------------

    def zero_grad(self, set_to_none=True):
        """Resets every parameter's .grad: to None (the default), or to zeros."""
        for group in self.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    g.zero_()

    def step(self, closure=None):
        """One update of every parameter that has a gradient (subclasses)."""
        raise NotImplementedError

    @staticmethod
    def _closure_loss(closure):
        if closure is None:
            return None
        with torch.enable_grad():
            return closure()

    # ---- hooks ---------------------------------------------------------------------------

    def register_step_pre_hook(self, hook):
        """hook(optimizer, args, kwargs) -> None or (args, kwargs), before step."""
        handle = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook):
        """hook(optimizer, args, kwargs), after step."""
        handle = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """hook(optimizer), before state_dict()."""
        return self._add_hook(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """hook(optimizer, state_dict) -> None or a new state_dict."""
        return self._add_hook(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """hook(optimizer, state_dict) -> None or a state_dict to load instead."""
        return self._add_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """hook(optimizer), after load_state_dict()."""
        return self._add_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    @staticmethod
    def _add_hook(hooks, hook, prepend):
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle


class _OneTensorOptimizer(Optimizer):
    """The single-tensor form shared by the optimizers without a multi-tensor
    kernel (Adamax, NAdam, RAdam, Adadelta, Rprop, ASGD): step() visits each
    parameter with a gradient, makes its state on first sight with
    _init_state(group, p, state) and applies _update(group, p, state)."""

    def _init_state(self, group, p, state):
        raise NotImplementedError

    def _update(self, group, p, state):
        raise NotImplementedError

    @_use_grad
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    self._init_state(group, p, state)
                self._update(group, p, state)
        return loss
