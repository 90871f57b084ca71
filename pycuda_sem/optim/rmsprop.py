"""torch.optim.RMSprop, with torch's update rule:

    g = -grad if maximize else grad;  g += weight_decay * p
    s = alpha s + (1 - alpha) g^2
    centered: a = lerp(a, g, 1 - alpha);  d = sqrt(s - a^2) + eps
    otherwise d = sqrt(s) + eps
    momentum > 0: b = momentum b + g / d;  p -= lr b
    otherwise p -= lr g / d

state per parameter: "step" (a 0-dim float32 CPU tensor), "square_avg",
"momentum_buffer" (momentum > 0), "grad_avg" (centered).
"""
import pycuda_sem as torch
from pycuda_sem import _C

from .optimizer import (Optimizer, _pick, _split_for_multi_tensor,
                        _step_tensor, _use_grad, _value)

__all__ = ["RMSprop", "rmsprop"]


class RMSprop(Optimizer):
    """RMSprop (Hinton), torch.optim.RMSprop."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        if not 0.0 <= _value(lr):
            raise ValueError("Invalid learning rate: {}".format(lr))
        if not 0.0 <= eps:
            raise ValueError("Invalid epsilon value: {}".format(eps))
        if not 0.0 <= momentum:
            raise ValueError("Invalid momentum value: {}".format(momentum))
        if not 0.0 <= weight_decay:
            raise ValueError("Invalid weight_decay value: {}".format(weight_decay))
        if not 0.0 <= alpha:
            raise ValueError("Invalid alpha value: {}".format(alpha))
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        self._fill_group_defaults(momentum=0, centered=False, foreach=None, maximize=False,
                                  differentiable=False, capturable=False)

    def _init_group(self, group, params, grads, square_avgs, momentum_buffers, grad_avgs, steps):
        for p in group["params"]:
            if p.grad is None:
                continue
            params.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _step_tensor()
                state["square_avg"] = torch.zeros_like(p)
                if group["momentum"] > 0:
                    state["momentum_buffer"] = torch.zeros_like(p)
                if group["centered"]:
                    state["grad_avg"] = torch.zeros_like(p)
            square_avgs.append(state["square_avg"])
            steps.append(state["step"])
            # momentum or centered switched on after the state was made: start them at zero
            if group["momentum"] > 0:
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = torch.zeros_like(p)
                momentum_buffers.append(state["momentum_buffer"])
            if group["centered"]:
                if "grad_avg" not in state:
                    state["grad_avg"] = torch.zeros_like(p)
                grad_avgs.append(state["grad_avg"])

    @_use_grad
    def step(self, closure=None):
        """One RMSprop step over every parameter with a gradient; returns
        closure()'s loss when a closure is given."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            params, grads, square_avgs, bufs, grad_avgs, steps = [], [], [], [], [], []
            self._init_group(group, params, grads, square_avgs, bufs, grad_avgs, steps)
            rmsprop(params, grads, square_avgs, grad_avgs, bufs, steps, lr=group["lr"],
                    alpha=group["alpha"], eps=group["eps"], weight_decay=group["weight_decay"],
                    momentum=group["momentum"], centered=group["centered"],
                    foreach=group["foreach"], maximize=group["maximize"],
                    differentiable=group["differentiable"])
        return loss


def rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps, *, lr, alpha,
            eps, weight_decay, momentum, centered, maximize, foreach=None, differentiable=False):
    """The functional form (torch.optim.rmsprop.rmsprop)."""
    lr = float(_value(lr))
    has_mom = momentum > 0
    group = {"foreach": foreach, "differentiable": differentiable}
    buckets, rest = _split_for_multi_tensor(group, params, grads, square_avgs,
                                            grad_avgs if centered else None,
                                            momentum_buffer_list if has_mom else None,
                                            steps=state_steps)
    for idx in buckets.values():
        _C._fused_rmsprop_(_pick(params, idx), _pick(grads, idx), _pick(square_avgs, idx),
                           _pick(grad_avgs, idx) if centered else None,
                           _pick(momentum_buffer_list, idx) if has_mom else None,
                           _pick(state_steps, idx), lr=lr, alpha=alpha, eps=eps,
                           weight_decay=weight_decay, momentum=momentum, centered=centered,
                           maximize=maximize)
    for i in rest:
        param, square_avg = params[i], square_avgs[i]
        grad = grads[i] if not maximize else -grads[i]
        state_steps[i] += 1
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        square_avg.mul_(alpha).add_(grad * grad, alpha=1 - alpha)
        if centered:
            grad_avg = grad_avgs[i]
            grad_avg.lerp_(grad, 1 - alpha)
            avg = square_avg.add(grad_avg * grad_avg, alpha=-1).sqrt_()
        else:
            avg = square_avg.sqrt()
        avg = avg.add_(eps)
        if has_mom:
            buf = momentum_buffer_list[i]
            buf.mul_(momentum).add_(grad / avg)
            param.add_(buf, alpha=-lr)
        else:
            param.add_(grad / avg, alpha=-lr)
