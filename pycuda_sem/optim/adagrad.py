"""torch.optim.Adagrad, with torch's update rule:

    g = -grad if maximize else grad;  g += weight_decay * p
    clr = lr / (1 + (t - 1) lr_decay)
    sum += g^2;  p -= clr g / (sqrt(sum) + eps)

state per parameter, made at construction as torch does: "step" (a 0-dim
float32 CPU tensor) and "sum" (initial_accumulator_value everywhere).
"""
import pycuda_sem as torch
from pycuda_sem import _C

from .optimizer import (Optimizer, _check_fused, _pick, _split_for_multi_tensor,
                        _step_tensor, _use_grad, _value)

__all__ = ["Adagrad", "adagrad"]


class Adagrad(Optimizer):
    """Adagrad (Duchi et al.), torch.optim.Adagrad."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        if not 0.0 <= _value(lr):
            raise ValueError("Invalid learning rate: {}".format(lr))
        if not 0.0 <= lr_decay:
            raise ValueError("Invalid lr_decay value: {}".format(lr_decay))
        if not 0.0 <= weight_decay:
            raise ValueError("Invalid weight_decay value: {}".format(weight_decay))
        if not 0.0 <= initial_accumulator_value:
            raise ValueError("Invalid initial_accumulator_value value: {}".format(
                initial_accumulator_value))
        if not 0.0 <= eps:
            raise ValueError("Invalid epsilon value: {}".format(eps))
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        _check_fused(fused, foreach, differentiable)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(group, p)

    def _init_state(self, group, p):
        state = self.state[p]
        state["step"] = _step_tensor()
        state["sum"] = torch.full_like(p, group["initial_accumulator_value"])

    def __setstate__(self, state):
        super().__setstate__(state)
        self._fill_group_defaults(foreach=None, maximize=False, differentiable=False,
                                  fused=None)

    def _init_group(self, group, params, grads, state_sums, state_steps):
        for p in group["params"]:
            if p.grad is None:
                continue
            params.append(p)
            grads.append(p.grad)
            if "sum" not in self.state[p]:  # a group added after construction
                self._init_state(group, p)
            state_sums.append(self.state[p]["sum"])
            state_steps.append(self.state[p]["step"])

    @_use_grad
    def step(self, closure=None):
        """One Adagrad step over every parameter with a gradient; returns
        closure()'s loss when a closure is given."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            params, grads, state_sums, state_steps = [], [], [], []
            self._init_group(group, params, grads, state_sums, state_steps)
            adagrad(params, grads, state_sums, state_steps, lr=group["lr"],
                    weight_decay=group["weight_decay"], lr_decay=group["lr_decay"],
                    eps=group["eps"], maximize=group["maximize"], foreach=group["foreach"],
                    fused=group["fused"], differentiable=group["differentiable"])
        return loss


def adagrad(params, grads, state_sums, state_steps, *, lr, weight_decay, lr_decay, eps, maximize,
            foreach=None, fused=None, differentiable=False):
    """The functional form (torch.optim.adagrad.adagrad)."""
    lr = float(_value(lr))
    group = {"foreach": foreach, "fused": fused, "differentiable": differentiable}
    buckets, rest = _split_for_multi_tensor(group, params, grads, state_sums, steps=state_steps)
    for idx in buckets.values():
        _C._fused_adagrad_(_pick(params, idx), _pick(grads, idx), _pick(state_sums, idx),
                           _pick(state_steps, idx), lr=lr, lr_decay=lr_decay,
                           weight_decay=weight_decay, eps=eps, maximize=maximize)
    for i in rest:
        param, state_sum, step_t = params[i], state_sums[i], state_steps[i]
        step_t += 1
        step = _value(step_t)
        grad = grads[i] if not maximize else -grads[i]
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        clr = lr / (1 + (step - 1) * lr_decay)
        state_sum.add_(grad * grad)
        std = state_sum.sqrt().add_(eps)
        param.add_(grad / std, alpha=-clr)
