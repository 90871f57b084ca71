"""torch.optim.lr_scheduler.CyclicLR: the cyclical learning rate (Smith,
2017), lr between base_lr and max_lr and momentum the other way
(re-exported by lr_scheduler.py)."""
import math as _math
import types

from .lr_scheduler import LRScheduler, _cycle_momentum_setup, _format_param


class CyclicLR(LRScheduler):
    """lr climbs from base_lr to max_lr over step_size_up steps and back over
    step_size_down (the same by default), each cycle's height scaled by
    scale_fn: 'triangular' 1, 'triangular2' halved each cycle, 'exp_range'
    gamma ** step; or a scale_fn of the user's, of the cycle number
    (scale_mode='cycle') or the step ('iterations'). With cycle_momentum,
    momentum (or Adam's beta1) goes from max_momentum down and back."""

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None,
                 mode="triangular", gamma=1.0, scale_fn=None, scale_mode="cycle",
                 cycle_momentum=True, base_momentum=0.8, max_momentum=0.9, last_epoch=-1,
                 verbose="deprecated"):
        base_lrs = _format_param("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                if hasattr(group["lr"], "fill_"):
                    group["lr"].fill_(lr)
                else:
                    group["lr"] = lr
        self.max_lrs = _format_param("max_lr", optimizer, max_lr)
        step_size_up = float(step_size_up)
        step_size_down = float(step_size_down) if step_size_down is not None else step_size_up
        self.total_size = step_size_up + step_size_down
        self.step_ratio = step_size_up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1, self.base_momentums, self.max_momentums = _cycle_momentum_setup(
                optimizer, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch, verbose)
        self.base_lrs = base_lrs

    def _init_scale_fn(self):
        if self._scale_fn_custom is not None:
            self._scale_fn, self._mode_of_scale = self._scale_fn_custom, self.scale_mode
        elif self.mode == "triangular":
            self._scale_fn, self._mode_of_scale = (lambda x: 1.0), "cycle"
        elif self.mode == "triangular2":
            self._scale_fn, self._mode_of_scale = (lambda x: 1 / (2.0 ** (x - 1))), "cycle"
        else:
            gamma = self.gamma
            self._scale_fn, self._mode_of_scale = (lambda x: gamma ** x), "iterations"
        self.scale_mode = self._mode_of_scale

    def scale_fn(self, x):
        return self._scale_fn(x)

    def get_lr(self):
        cycle = _math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        scale = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
        arg = cycle if self.scale_mode == "cycle" else self.last_epoch
        lrs = [base_lr + (max_lr - base_lr) * scale * self.scale_fn(arg)
               for base_lr, max_lr in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, b, m in zip(self.optimizer.param_groups, self.base_momentums,
                                   self.max_momentums):
                momentum = m - (m - b) * scale * self.scale_fn(arg)
                if self.use_beta1:
                    group["betas"] = (momentum, *group["betas"][1:])
                else:
                    group["momentum"] = momentum
        return lrs

    def state_dict(self):
        """As the base's, without the scale functions; a custom scale_fn is
        saved only when it is a callable object (its __dict__), as torch."""
        sd = {k: v for k, v in self.__dict__.items()
              if k not in ("optimizer", "_scale_fn", "_scale_fn_custom")}
        fn = self._scale_fn_custom
        sd["_scale_fn_custom"] = (None if fn is None or isinstance(fn, types.FunctionType)
                                  else fn.__dict__.copy())
        return sd

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        custom = state_dict.pop("_scale_fn_custom", None)
        self.__dict__.update(state_dict)
        if custom is not None and self._scale_fn_custom is not None:
            self._scale_fn_custom.__dict__.update(custom)
        self._init_scale_fn()
