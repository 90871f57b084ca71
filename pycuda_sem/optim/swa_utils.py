"""torch.optim.swa_utils: weight averaging (stochastic weight averaging and
exponential moving averages of a model) and the SWA learning-rate schedule.

AveragedModel keeps a copy of a model whose parameters are an average of
the model's over the calls to update_parameters(): by default the running
mean (SWA); avg_fn (one tensor at a time) or multi_avg_fn (lists of
tensors) change the rule, e.g. get_ema_multi_avg_fn(0.999) for an EMA.
update_bn recomputes BatchNorm statistics for averaged weights; SWALR anneals
each group's lr to swa_lr.
"""
import copy
import itertools
import math

import pycuda_sem as torch

from ..nn.modules.batchnorm import _BatchNorm
from ..nn.modules.module import Module
from .lr_scheduler import LRScheduler

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn",
           "get_ema_avg_fn", "get_swa_avg_fn"]


def get_ema_multi_avg_fn(decay=0.999):
    """An EMA update over lists: ema = decay * ema + (1 - decay) * current."""
    def ema_update(ema_params, current_params, num_averaged):
        with torch.no_grad():
            for e, c in zip(ema_params, current_params):
                if e.is_floating_point() or e.is_complex():
                    e.lerp_(c.to(e.device, e.dtype), 1.0 - decay)
                else:
                    e.copy_(c)
    return ema_update


def get_swa_multi_avg_fn():
    """The running mean over lists: avg += (current - avg) / (n + 1)."""
    def swa_update(averaged_params, current_params, num_averaged):
        with torch.no_grad():
            n = int(num_averaged)
            for a, c in zip(averaged_params, current_params):
                if a.is_floating_point() or a.is_complex():
                    a.add_((c.to(a.device, a.dtype) - a) / (n + 1))
                else:
                    a.copy_(c)
    return swa_update


def get_ema_avg_fn(decay=0.999):
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A deep copy of model whose parameters (and buffers, with
    use_buffers=True) are averaged by update_parameters(); calling it runs
    the averaged copy."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", torch.tensor(0, dtype=torch.long, device=device))
        self.avg_fn, self.multi_avg_fn, self.use_buffers = avg_fn, multi_avg_fn, use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def _tensors(self, model):
        if self.use_buffers:
            return list(itertools.chain(model.parameters(), model.buffers()))
        return list(model.parameters())

    def update_parameters(self, model):
        """Fold model's current parameters into the average (the first call copies them)."""
        mine = self._tensors(self.module)
        theirs = [t.detach() for t in self._tensors(model)]
        if len(mine) != len(theirs):
            raise RuntimeError("AveragedModel.update_parameters: the model has %d tensors to average, "
                               "the averaged copy %d" % (len(theirs), len(mine)))
        n = int(self.n_averaged.item())
        with torch.no_grad():
            if n == 0:
                for a, c in zip(mine, theirs):
                    a.detach().copy_(c.to(a.device))
            elif self.multi_avg_fn is not None:
                self.multi_avg_fn([a.detach() for a in mine], [c.to(a.device) for a, c in zip(mine, theirs)],
                                  self.n_averaged.to(mine[0].device) if mine else n)
            else:
                fn = self.avg_fn or get_swa_avg_fn()
                for a, c in zip(mine, theirs):
                    if a.is_floating_point() or a.is_complex() or self.avg_fn is not None:
                        a.detach().copy_(fn(a.detach(), c.to(a.device), self.n_averaged.to(a.device)))
                    else:
                        a.detach().copy_(c)
            if not self.use_buffers:
                # buffers (BatchNorm statistics) follow the model's own
                for b, c in zip(self.module.buffers(), model.buffers()):
                    b.detach().copy_(c.detach().to(b.device))
        self.n_averaged += 1


def update_bn(loader, model, device=None):
    """One pass over loader in train mode to recompute every BatchNorm's
    running statistics as a plain average (momentum None), then restore the
    modules' momenta and the model's mode."""
    momenta = {}
    for m in model.modules():
        if isinstance(m, _BatchNorm):
            m.reset_running_stats()
            momenta[m] = m.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for m in momenta:
        m.momentum = None
    with torch.no_grad():
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
    for m, mom in momenta.items():
        m.momentum = mom
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's lr from its value to swa_lr over anneal_epochs
    steps ('cos' or 'linear'), then holds it."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        lrs = list(swa_lr) if isinstance(swa_lr, (list, tuple)) else [swa_lr] * len(optimizer.param_groups)
        if len(lrs) != len(optimizer.param_groups):
            raise ValueError("swa_lr must have the same length as optimizer.param_groups: swa_lr has "
                             "%d, optimizer.param_groups has %d" % (len(lrs), len(optimizer.param_groups)))
        for lr, group in zip(lrs, optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must by one of 'cos' or 'linear', instead got %s"
                             % anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError("anneal_epochs must be equal or greater than 0, got %s" % anneal_epochs)
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(self.optimizer.param_groups, prev_lrs)]
