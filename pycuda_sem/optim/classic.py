"""torch.optim.Adadelta, Rprop and ASGD, with torch's single-tensor update
rules (one parameter at a time, on any device) and torch's state names:

    Adadelta: v = rho v + (1 - rho) g^2;  d = sqrt(u + eps) / sqrt(v + eps) g
              u = rho u + (1 - rho) d^2;  p -= lr d
    Rprop:    per entry, the step grows by etas[1] while the gradient keeps
              its sign, shrinks by etas[0] when it flips (and that entry's
              update is skipped), within step_sizes; p -= sign(g) step
    ASGD:     p = p (1 - lambd eta) - eta g;  ax averages p once step > t0;
              eta = lr / (1 + lambd lr t)^alpha, mu = 1 / max(1, t - t0)

The step counter is a 0-dim float32 CPU tensor, as torch's; ASGD's eta and
mu are 0-dim tensors too.
"""
import pycuda_sem as torch

from .optimizer import _OneTensorOptimizer, _step_tensor, _value

__all__ = ["Adadelta", "Rprop", "ASGD"]


class _OneTensor(_OneTensorOptimizer):
    def _grad(self, group, p):
        g = -p.grad if group["maximize"] else p.grad
        wd = group.get("weight_decay", 0)
        return g + p * wd if wd != 0 else g


class Adadelta(_OneTensor):
    """Adadelta (Zeiler), torch.optim.Adadelta."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        if not 0.0 <= _value(lr):
            raise ValueError("Invalid learning rate: {}".format(lr))
        if not 0.0 <= rho <= 1.0:
            raise ValueError("Invalid rho value: {}".format(rho))
        if not 0.0 <= eps:
            raise ValueError("Invalid epsilon value: {}".format(eps))
        if not 0.0 <= weight_decay:
            raise ValueError("Invalid weight_decay value: {}".format(weight_decay))
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, foreach=foreach,
                                      capturable=capturable, maximize=maximize, differentiable=differentiable))

    def _init_state(self, group, p, state):
        state["step"] = _step_tensor()
        state["square_avg"] = torch.zeros_like(p)
        state["acc_delta"] = torch.zeros_like(p)

    def _update(self, group, p, state):
        lr, rho, eps = float(_value(group["lr"])), group["rho"], group["eps"]
        g = self._grad(group, p)
        state["step"] += 1
        v, u = state["square_avg"], state["acc_delta"]
        v.mul_(rho).add_(g * g * (1 - rho))
        delta = (u + eps).sqrt() / (v + eps).sqrt() * g
        u.mul_(rho).add_(delta * delta * (1 - rho))
        p.sub_(delta * lr)


class Rprop(_OneTensor):
    """Resilient backpropagation, torch.optim.Rprop."""

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False,
                 foreach=None, maximize=False, differentiable=False):
        if not 0.0 <= _value(lr):
            raise ValueError("Invalid learning rate: {}".format(lr))
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError("Invalid eta values: {}, {}".format(etas[0], etas[1]))
        super().__init__(params, dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes), foreach=foreach,
                                      capturable=capturable, maximize=maximize, differentiable=differentiable))

    def _init_state(self, group, p, state):
        state["step"] = _step_tensor()
        state["prev"] = torch.zeros_like(p)
        state["step_size"] = torch.full_like(p, float(_value(group["lr"])))

    def _update(self, group, p, state):
        (eta_minus, eta_plus), (lo, hi) = group["etas"], group["step_sizes"]
        g = self._grad(group, p)
        state["step"] += 1
        agree = (g * state["prev"]).sign()
        factor = torch.where(agree > 0, torch.full_like(g, eta_plus),
                             torch.where(agree < 0, torch.full_like(g, eta_minus), torch.ones_like(g)))
        step_size = state["step_size"]
        step_size.copy_((step_size * factor).clamp(lo, hi))
        g = torch.where(agree < 0, torch.zeros_like(g), g)  # a flip skips this step
        p.sub_(g.sign() * step_size)
        state["prev"].copy_(g)


class ASGD(_OneTensor):
    """Averaged stochastic gradient descent, torch.optim.ASGD."""

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        if not 0.0 <= _value(lr):
            raise ValueError("Invalid learning rate: {}".format(lr))
        if not 0.0 <= weight_decay:
            raise ValueError("Invalid weight_decay value: {}".format(weight_decay))
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    def _init_state(self, group, p, state):
        state["step"] = _step_tensor()
        state["eta"] = torch.tensor(float(_value(group["lr"])), dtype=torch.float32)
        state["mu"] = torch.tensor(1.0, dtype=torch.float32)
        state["ax"] = torch.zeros_like(p)

    def _update(self, group, p, state):
        lr, lambd, alpha, t0 = float(_value(group["lr"])), group["lambd"], group["alpha"], group["t0"]
        g = self._grad(group, p)
        state["step"] += 1
        t = _value(state["step"])
        eta, mu = _value(state["eta"]), _value(state["mu"])
        p.mul_(1 - lambd * eta)
        p.sub_(g * eta)
        ax = state["ax"]
        if mu != 1:
            ax.add_((p - ax) * mu)
        else:
            ax.copy_(p)
        state["eta"].fill_(lr / ((1 + lambd * lr * t) ** alpha))
        state["mu"].fill_(1 / max(1, t - t0))
