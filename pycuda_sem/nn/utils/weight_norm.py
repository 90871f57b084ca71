"""torch.nn.utils.weight_norm / remove_weight_norm: a parameter w split into
a magnitude g and a direction v, w = g * v / ||v|| (the norm over every dim
but `dim`; over the whole tensor for dim None or -1), recomputed before each
forward by a pre-hook, so that the optimizer trains g and v.

State dict keys are torch's: `<name>_g` and `<name>_v`.
"""
from ...autograd.grad_mode import no_grad
from ..parameter import Parameter

__all__ = ["weight_norm", "remove_weight_norm"]


def _norm_except_dim(v, dim):
    if dim is None or dim == -1:
        return v.norm()
    d = dim % v.dim()
    other = [i for i in range(v.dim()) if i != d]
    shape = [v.size(i) if i == d else 1 for i in range(v.dim())]
    return v.pow(2).sum(other, keepdim=True).sqrt().reshape(shape) if other else v.abs().reshape(shape)


class WeightNorm:
    """The pre-hook object (kept in the module's hooks, as torch's)."""

    def __init__(self, name, dim):
        self.name, self.dim = name, dim

    def compute_weight(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return v * (g / _norm_except_dim(v, self.dim))

    @staticmethod
    def apply(module, name, dim):
        if _hook_key(module, WeightNorm, name) is not None:
            raise RuntimeError("Cannot register two weight_norm hooks on the same parameter %s" % name)
        if dim is None:
            dim = -1
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if not isinstance(weight, Parameter):
            raise TypeError("weight_norm: module.%s is not a Parameter" % name)
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(_norm_except_dim(weight, dim).detach().clone()))
        module.register_parameter(name + "_v", Parameter(weight.detach().clone()))
        object.__setattr__(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        with no_grad():
            weight = self.compute_weight(module).detach()
        if self.name in module.__dict__:
            object.__delattr__(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        module.register_parameter(self.name, Parameter(weight))

    def __call__(self, module, inputs):
        object.__setattr__(module, self.name, self.compute_weight(module))


def _hook_key(module, kind, name):
    """The key of module's pre-hook of class kind for parameter name, or None."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, kind) and hook.name == name:
            return key
    return None


def _remove(module, kind, name, what):
    """Undo the reparameterisation of module.<name> made by a hook of class kind."""
    key = _hook_key(module, kind, name)
    if key is None:
        raise ValueError("%s of '%s' not found in %s" % (what, name, module))
    module._forward_pre_hooks[key].remove(module)
    del module._forward_pre_hooks[key]
    return module


def weight_norm(module, name="weight", dim=0):
    """Reparameterise module.<name> as <name>_g * <name>_v / ||<name>_v||; returns module."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    """Fold the current g and v back into one parameter <name>; returns module."""
    return _remove(module, WeightNorm, name, "weight_norm")
