"""torch.nn.utils.spectral_norm / remove_spectral_norm: a weight divided by
its largest singular value sigma, estimated by power iteration (vectors u
and v kept as buffers and refined n_power_iterations times before each
forward in training mode; in eval mode the stored ones are used).

State dict keys are torch's: `<name>_orig` (the parameter), `<name>_u` and
`<name>_v` (buffers).
"""
from ... import _C
from ...autograd.grad_mode import no_grad
from ..parameter import Parameter
from .weight_norm import _hook_key, _remove

__all__ = ["spectral_norm", "remove_spectral_norm"]


def _normalize(x, eps):
    return x / x.norm().clamp(min=eps)


class SpectralNorm:
    def __init__(self, name, n_power_iterations, dim, eps):
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got n_power_iterations=%d"
                             % n_power_iterations)
        self.name, self.n_power_iterations, self.dim, self.eps = name, n_power_iterations, dim, eps

    def _matrix(self, w):
        if self.dim != 0:
            w = w.movedim(self.dim, 0)
        return w.reshape(w.size(0), -1)

    def compute_weight(self, module, do_power_iteration):
        w = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        mat = self._matrix(w)
        if do_power_iteration:
            with no_grad():
                m = mat.detach()
                for _ in range(self.n_power_iterations):
                    v.copy_(_normalize(m.t().mv(u), self.eps))
                    u.copy_(_normalize(m.mv(v), self.eps))
                u2, v2 = u.clone(), v.clone()
        else:
            u2, v2 = u, v
        sigma = u2.dot(mat.mv(v2))
        return w / sigma

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        if _hook_key(module, SpectralNorm, name) is not None:
            raise RuntimeError("Cannot register two spectral_norm hooks on the same parameter %s" % name)
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        with no_grad():
            mat = fn._matrix(weight.detach())
            h, w = mat.shape
            u = _normalize(_C.randn(h, dtype=weight.dtype, device=weight.device), eps)
            v = _normalize(_C.randn(w, dtype=weight.dtype, device=weight.device), eps)
        del module._parameters[name]
        module.register_parameter(name + "_orig", weight)
        object.__setattr__(module, name, weight.detach())
        module.register_buffer(name + "_u", u)
        module.register_buffer(name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False).detach()
        if self.name in module.__dict__:
            object.__delattr__(module, self.name)
        del module._buffers[self.name + "_u"]
        del module._buffers[self.name + "_v"]
        del module._parameters[self.name + "_orig"]
        module.register_parameter(self.name, Parameter(weight))

    def __call__(self, module, inputs):
        object.__setattr__(module, self.name, self.compute_weight(module, do_power_iteration=module.training))


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Normalise module.<name> by its spectral norm before each forward; returns module.
    dim defaults to 1 for transposed convolutions (their output channels), else 0."""
    if dim is None:
        dim = 1 if type(module).__name__.startswith("ConvTranspose") else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name="weight"):
    """Fold the normalised weight back into one parameter <name>; returns module."""
    return _remove(module, SpectralNorm, name, "spectral_norm")
