"""torch.optim.lr_scheduler.ReduceLROnPlateau: the lr scheduler driven by a
metric instead of the epoch count (re-exported by lr_scheduler.py)."""
import math as _math
import warnings as _warnings

import pycuda_sem as _torch

from .lr_scheduler import EPOCH_DEPRECATION_WARNING, LRScheduler
from .optimizer import Optimizer


class ReduceLROnPlateau(LRScheduler):
    """Multiplies every group's lr by `factor` (down to its min_lr) once the
    metric given to step(metrics) has not improved for more than `patience`
    steps, then waits `cooldown` steps before counting again. Improvement:
    below best * (1 - threshold) ('min', 'rel'), below best - threshold
    ('abs'); 'max' mirrors both. A change smaller than eps is not made."""

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4,
                 threshold_mode="rel", cooldown=0, min_lr=0, eps=1e-8, verbose="deprecated"):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        if not isinstance(optimizer, Optimizer):
            raise TypeError("%s is not an Optimizer" % type(optimizer).__name__)
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError("expected %d min_lrs, got %d"
                                 % (len(optimizer.param_groups), len(min_lr)))
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = [group["lr"] for group in optimizer.param_groups]
        self._init_is_better(mode=mode, threshold=threshold, threshold_mode=threshold_mode)
        self._reset()
        if verbose != "deprecated":
            _warnings.warn("The verbose parameter is deprecated. Please use get_last_lr() to "
                          "access the learning rate.", UserWarning)

    def _reset(self):
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics, epoch=None):
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            _warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning)
        self.last_epoch = epoch
        if self.is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs in cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def _reduce_lr(self):
        groups = self.optimizer.param_groups
        if len(self.min_lrs) != len(groups):  # groups added since
            if self.default_min_lr is None:
                raise RuntimeError("The number of param groups in the `optimizer` (%d) differs "
                                   "from when `ReduceLROnPlateau` was initialized (%d), usually "
                                   "due to a new param group being added to the optimizer. "
                                   "Please modify the `min_lrs` field to match the length of the "
                                   "`optimizer` param groups." % (len(groups), len(self.min_lrs)))
            self.min_lrs = [self.default_min_lr] * len(groups)
        for i, group in enumerate(groups):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, self.min_lrs[i])
            if old_lr - new_lr > self.eps:
                if isinstance(group["lr"], _torch.Tensor):
                    group["lr"].fill_(new_lr)
                else:
                    group["lr"] = new_lr

    @property
    def in_cooldown(self):
        return self.cooldown_counter > 0

    def is_better(self, a, best):
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min":
            return a < best - self.threshold
        if self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def _init_is_better(self, mode, threshold, threshold_mode):
        if mode not in ("min", "max"):
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = _math.inf if mode == "min" else -_math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._init_is_better(mode=self.mode, threshold=self.threshold,
                             threshold_mode=self.threshold_mode)
