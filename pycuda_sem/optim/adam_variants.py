"""torch.optim.Adamax, NAdam and RAdam, with torch's single-tensor update
rules (one parameter at a time, on any device; there is no multi-tensor
kernel for them). The step counter is a 0-dim float32 CPU tensor, as
torch's, and every scalar of the update (powers of the betas, bias
corrections, NAdam's momentum schedule, RAdam's rectification) is computed
in Python doubles, as torch's Python does.

    Adamax: m = lerp(m, g, 1 - b1); u = max(b2 u, |g| + eps)
            p -= lr / (1 - b1^t) * m / u
    NAdam:  mu_t = b1 (1 - 0.5 * 0.96^(t psi)); m, v as Adam;
            p -= lr (1 - mu_t) / (1 - prod mu) * g / d
               + lr mu_{t+1} / (1 - prod mu * mu_{t+1}) * m / d,
            d = sqrt(v / (1 - b2^t)) + eps
    RAdam:  m, v as Adam; rho_t = rho_inf - 2 t b2^t / (1 - b2^t);
            p -= lr m_hat r_t sqrt(1 - b2^t) / (sqrt(v) + eps) when rho_t > 5,
            else p -= lr m_hat
"""
import math

import pycuda_sem as torch

from .adam import _check_hyper
from .optimizer import _OneTensorOptimizer, _step_tensor, _value

__all__ = ["Adamax", "NAdam", "RAdam"]


def _moments(state, g, b1, b2):
    """Adam's first and second moments, updated in place."""
    m, v = state["exp_avg"], state["exp_avg_sq"]
    m.lerp_(g, 1 - b1)
    v.mul_(b2).add_(g * g * (1 - b2))
    return m, v


class _AdamFamily(_OneTensorOptimizer):
    _buffers = ()

    @staticmethod
    def _grad_and_step(group, p, state, lr, wd):
        """The (maximize-signed, L2-decayed) gradient and the new step count;
        decoupled weight decay is applied to p here."""
        g = -p.grad if group["maximize"] else p.grad
        state["step"] += 1
        if wd != 0:
            if group["decoupled_weight_decay"]:
                p.mul_(1 - lr * wd)
            else:
                g = g + p * wd
        return g, _value(state["step"])

    def _init_state(self, group, p, state):
        state["step"] = _step_tensor()
        for name in self._buffers:
            state[name] = torch.zeros_like(p)
        if isinstance(self, NAdam):
            state["mu_product"] = torch.ones((), dtype=torch.float32)


class Adamax(_AdamFamily):
    """Adam with the infinity norm (torch.optim.Adamax)."""
    _buffers = ("exp_avg", "exp_inf")

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        _check_hyper(lr, betas, eps, weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, capturable=capturable))

    def _update(self, group, p, state):
        lr, (b1, b2) = float(_value(group["lr"])), group["betas"]
        g = -p.grad if group["maximize"] else p.grad
        if group["weight_decay"] != 0:
            g = g + p * group["weight_decay"]
        state["step"] += 1
        t = _value(state["step"])
        m, u = state["exp_avg"], state["exp_inf"]
        m.lerp_(g, 1 - b1)
        u.copy_(torch.maximum(u * b2, g.abs() + group["eps"]))
        p.sub_(m / u * (lr / (1 - b1 ** t)))


class NAdam(_AdamFamily):
    """Adam with Nesterov momentum (torch.optim.NAdam)."""
    _buffers = ("exp_avg", "exp_avg_sq")

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        _check_hyper(lr, betas, eps, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError("Invalid momentum_decay value: {}".format(momentum_decay))
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      foreach=foreach, maximize=maximize, capturable=capturable,
                                      differentiable=differentiable))

    def _update(self, group, p, state):
        lr, (b1, b2), eps = float(_value(group["lr"])), group["betas"], group["eps"]
        wd, psi = group["weight_decay"], group["momentum_decay"]
        g, t = self._grad_and_step(group, p, state, lr, wd)
        mu = b1 * (1.0 - 0.5 * 0.96 ** (t * psi))
        mu_next = b1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * psi))
        state["mu_product"] *= mu
        prod = _value(state["mu_product"])
        m, v = _moments(state, g, b1, b2)
        denom = (v / (1 - b2 ** t)).sqrt() + eps
        p.sub_(g / denom * (lr * (1.0 - mu) / (1.0 - prod)))
        p.sub_(m / denom * (lr * mu_next / (1.0 - prod * mu_next)))


class RAdam(_AdamFamily):
    """Adam with a rectified adaptive learning rate (torch.optim.RAdam)."""
    _buffers = ("exp_avg", "exp_avg_sq")

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        _check_hyper(lr, betas, eps, weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      foreach=foreach, maximize=maximize, capturable=capturable,
                                      differentiable=differentiable))

    def _update(self, group, p, state):
        lr, (b1, b2), eps, wd = float(_value(group["lr"])), group["betas"], group["eps"], \
            group["weight_decay"]
        g, t = self._grad_and_step(group, p, state, lr, wd)
        m, v = _moments(state, g, b1, b2)
        bc1, bc2 = 1 - b1 ** t, 1 - b2 ** t
        m_hat = m / bc1
        rho_inf = 2 / (1 - b2) - 1
        rho_t = rho_inf - 2 * t * (b2 ** t) / bc2
        if rho_t > 5.0:
            rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf
                             / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            p.sub_(m_hat * (lr * rect * math.sqrt(bc2)) / (v.sqrt() + eps))
        else:
            p.sub_(m_hat * lr)
