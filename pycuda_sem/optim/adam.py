"""torch.optim.Adam and AdamW, with torch's update rule:

    g = -grad if maximize else grad
    AdamW (decoupled): p *= 1 - lr * weight_decay   Adam: g += weight_decay * p
    m = lerp(m, g, 1 - beta1);   v = beta2 v + (1 - beta2) g^2
    vmax = max(vmax, v) (amsgrad; then v := vmax below)
    p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)

state per parameter: "step" (a 0-dim float32 CPU tensor), "exp_avg",
"exp_avg_sq", "max_exp_avg_sq" (amsgrad), as torch keeps them.
"""
import pycuda_sem as torch
from pycuda_sem import _C

from .optimizer import (Optimizer, _check_fused, _pick, _split_for_multi_tensor,
                        _step_tensor, _use_grad, _value)

__all__ = ["Adam", "AdamW", "adam"]


def _check_hyper(lr, betas, eps, weight_decay):
    lr = _value(lr)
    if not 0.0 <= lr:
        raise ValueError("Invalid learning rate: {}".format(lr))
    if not 0.0 <= eps:
        raise ValueError("Invalid epsilon value: {}".format(eps))
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError("Invalid beta parameter at index 0: {}".format(betas[0]))
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError("Invalid beta parameter at index 1: {}".format(betas[1]))
    if not 0.0 <= weight_decay:
        raise ValueError("Invalid weight_decay value: {}".format(weight_decay))


class Adam(Optimizer):
    """Adam (Kingma and Ba), torch.optim.Adam; decoupled_weight_decay=True
    makes it AdamW."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        _check_hyper(lr, betas, eps, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)
        _check_fused(fused, foreach, differentiable)

    def __setstate__(self, state):
        super().__setstate__(state)
        self._fill_group_defaults(amsgrad=False, maximize=False, foreach=None, capturable=False,
                                  differentiable=False, fused=None,
                                  decoupled_weight_decay=isinstance(self, AdamW))

    def _init_group(self, group, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps):
        for p in group["params"]:
            if p.grad is None:
                continue
            params.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _step_tensor()
                state["exp_avg"] = torch.zeros_like(p)
                state["exp_avg_sq"] = torch.zeros_like(p)
                if group["amsgrad"]:
                    state["max_exp_avg_sq"] = torch.zeros_like(p)
            exp_avgs.append(state["exp_avg"])
            exp_avg_sqs.append(state["exp_avg_sq"])
            if group["amsgrad"]:
                if "max_exp_avg_sq" not in state:  # amsgrad switched on later
                    state["max_exp_avg_sq"] = torch.zeros_like(p)
                max_exp_avg_sqs.append(state["max_exp_avg_sq"])
            steps.append(state["step"])

    @_use_grad
    def step(self, closure=None):
        """One Adam step over every parameter with a gradient; returns
        closure()'s loss when a closure is given."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps = [], [], [], [], [], []
            self._init_group(group, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps)
            beta1, beta2 = group["betas"]
            adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps,
                 amsgrad=group["amsgrad"], beta1=beta1, beta2=beta2, lr=group["lr"],
                 weight_decay=group["weight_decay"], eps=group["eps"],
                 maximize=group["maximize"], foreach=group["foreach"], fused=group["fused"],
                 differentiable=group["differentiable"],
                 decoupled_weight_decay=group["decoupled_weight_decay"])
        return loss


class AdamW(Adam):
    """AdamW (Loshchilov and Hutter): Adam with decoupled weight decay,
    torch.optim.AdamW (weight_decay defaults to 1e-2)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused, decoupled_weight_decay=True)


def adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, amsgrad, beta1,
         beta2, lr, weight_decay, eps, maximize, foreach=None, fused=None, differentiable=False,
         decoupled_weight_decay=False):
    """The functional form (torch.optim.adam.adam): one step over the lists."""
    lr = float(_value(lr))
    group = {"foreach": foreach, "fused": fused, "differentiable": differentiable}
    buckets, rest = _split_for_multi_tensor(group, params, grads, exp_avgs, exp_avg_sqs,
                                            max_exp_avg_sqs if amsgrad else None,
                                            steps=state_steps)
    for idx in buckets.values():
        _C._fused_adam_(_pick(params, idx), _pick(grads, idx), _pick(exp_avgs, idx),
                        _pick(exp_avg_sqs, idx),
                        _pick(max_exp_avg_sqs, idx) if amsgrad else None,
                        _pick(state_steps, idx), lr=lr, beta1=beta1, beta2=beta2,
                        weight_decay=weight_decay, eps=eps, amsgrad=amsgrad, maximize=maximize,
                        adamw=decoupled_weight_decay)
    for i in rest:
        _single_tensor_adam(params[i], grads[i], exp_avgs[i], exp_avg_sqs[i],
                            max_exp_avg_sqs[i] if amsgrad else None, state_steps[i], amsgrad,
                            beta1, beta2, lr, weight_decay, eps, maximize, decoupled_weight_decay)


def _single_tensor_adam(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, step_t, amsgrad, beta1,
                        beta2, lr, weight_decay, eps, maximize, decoupled):
    """torch's _single_tensor_adam for one tensor, over tensor ops."""
    if maximize:
        grad = -grad
    step_t += 1
    if weight_decay != 0:
        if decoupled:
            param.mul_(1 - lr * weight_decay)
        else:
            grad = grad.add(param, alpha=weight_decay)
    exp_avg.lerp_(grad, 1 - beta1)
    exp_avg_sq.mul_(beta2).add_(grad * grad, alpha=1 - beta2)
    step = _value(step_t)
    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    step_size = lr / bias_correction1
    bias_correction2_sqrt = bias_correction2 ** 0.5
    if amsgrad:
        torch.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
        denom = (max_exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
    else:
        denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
    param.add_(exp_avg / denom, alpha=-step_size)
