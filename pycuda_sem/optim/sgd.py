"""torch.optim.SGD, with torch's update rule:

    g = -grad if maximize else grad;  g += weight_decay * p
    momentum: b = g on the first step, else b = momentum b + (1 - dampening) g
              g = g + momentum b (nesterov) or b
    p -= lr g

state per parameter: "momentum_buffer" (only when momentum != 0).
"""
import pycuda_sem as torch
from pycuda_sem import _C

from .optimizer import (Optimizer, _check_fused, _pick, _split_for_multi_tensor, _use_grad,
                        _value)

__all__ = ["SGD", "sgd"]


class SGD(Optimizer):
    """Stochastic gradient descent with optional momentum (torch.optim.SGD)."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False,
                 *, maximize=False, foreach=None, differentiable=False, fused=None):
        if _value(lr) < 0.0:
            raise ValueError("Invalid learning rate: {}".format(lr))
        if momentum < 0.0:
            raise ValueError("Invalid momentum value: {}".format(momentum))
        if weight_decay < 0.0:
            raise ValueError("Invalid weight_decay value: {}".format(weight_decay))
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach,
                        differentiable=differentiable, fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        _check_fused(fused, foreach, differentiable)

    def __setstate__(self, state):
        super().__setstate__(state)
        self._fill_group_defaults(nesterov=False, maximize=False, foreach=None,
                                  differentiable=False, fused=False)

    def _init_group(self, group, params, grads, momentum_buffer_list):
        for p in group["params"]:
            if p.grad is None:
                continue
            params.append(p)
            grads.append(p.grad)
            if group["momentum"] != 0:
                momentum_buffer_list.append(self.state[p].get("momentum_buffer"))

    @_use_grad
    def step(self, closure=None):
        """One SGD step over every parameter with a gradient; returns
        closure()'s loss when a closure is given."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            params, grads, bufs = [], [], []
            self._init_group(group, params, grads, bufs)
            sgd(params, grads, bufs, weight_decay=group["weight_decay"],
                momentum=group["momentum"], lr=group["lr"], dampening=group["dampening"],
                nesterov=group["nesterov"], maximize=group["maximize"],
                foreach=group["foreach"], fused=group["fused"],
                differentiable=group["differentiable"])
            if group["momentum"] != 0:
                for p, buf in zip(params, bufs):
                    self.state[p]["momentum_buffer"] = buf
        return loss


def sgd(params, d_p_list, momentum_buffer_list, *, weight_decay, momentum, lr, dampening,
        nesterov, maximize, foreach=None, fused=None, differentiable=False):
    """The functional form (torch.optim.sgd.sgd). momentum_buffer_list is
    updated in place: a None entry becomes the new buffer."""
    lr = float(_value(lr))
    has_mom = momentum != 0
    if has_mom and len(momentum_buffer_list) != len(params):
        raise ValueError("sgd(): momentum_buffer_list must have one entry a parameter")
    group = {"foreach": foreach, "fused": fused, "differentiable": differentiable}
    buckets, rest = _split_for_multi_tensor(group, params, d_p_list,
                                            momentum_buffer_list if has_mom else None)
    for idx in buckets.values():
        # a missing buffer starts as the gradient: those tensors go in a call of their own
        first = [i for i in idx if has_mom and momentum_buffer_list[i] is None]
        later = [i for i in idx if not (has_mom and momentum_buffer_list[i] is None)]
        for i in first:
            momentum_buffer_list[i] = torch.empty_like(params[i])
        for part, is_first in ((later, False), (first, True)):
            if not part:
                continue
            _C._fused_sgd_(_pick(params, part), _pick(d_p_list, part),
                           _pick(momentum_buffer_list, part) if has_mom else None, lr=lr,
                           momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                           nesterov=nesterov, maximize=maximize, is_first_step=is_first)
    for i in rest:
        param = params[i]
        grad = d_p_list[i] if not maximize else -d_p_list[i]
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        if has_mom:
            buf = momentum_buffer_list[i]
            if buf is None:
                buf = grad.clone().detach()
                momentum_buffer_list[i] = buf
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - dampening)
            grad = grad.add(buf, alpha=momentum) if nesterov else buf
        param.add_(grad, alpha=-lr)
