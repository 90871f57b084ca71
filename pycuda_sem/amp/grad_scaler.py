"""torch.amp.GradScaler: loss scaling for mixed-precision training.

scale(loss) multiplies by the scale (2**16 at first), so that small float16
gradients do not flush to zero; unscale_(optimizer) divides the gradients
back and notes whether any is inf or NaN; step(optimizer) skips the
optimizer's step when one was; update() halves the scale after such a step
and doubles it after growth_interval clean ones. The scale and the growth
counter are tensors on the gradients' device, as torch's; the check of
found-inf before a step reads one number back (a synchronization, where
torch also reads it)."""
import warnings
from collections import defaultdict

from .. import _C
from ..autograd.grad_mode import no_grad

__all__ = ["GradScaler"]

_READY, _UNSCALED, _STEPPED = 0, 1, 2


def _fresh_state():
    return {"stage": _READY, "found_inf_per_device": {}}


class GradScaler:
    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled and not _C.is_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.")
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise ValueError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise ValueError("The backoff factor must be < 1.0.")
        self._init_scale = init_scale
        self._growth_factor = growth_factor
        self._backoff_factor = backoff_factor
        self._growth_interval = growth_interval
        self._init_growth_tracker = 0
        self._scale = None
        self._growth_tracker = None
        self._per_optimizer_states = defaultdict(_fresh_state)

    def _lazy_init(self, device):
        self._scale = _C.full((), float(self._init_scale), dtype=_C.float32, device=device)
        self._growth_tracker = _C.full((), self._init_growth_tracker, dtype=_C.int32,
                                       device=device)

    def scale(self, outputs):
        """outputs (a tensor, or lists/tuples of them) times the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, _C.Tensor):
            if self._scale is None:
                self._lazy_init(outputs.device)
            return outputs * self._scale.to(outputs.device)
        if isinstance(outputs, (list, tuple)):
            scaled = [self.scale(o) for o in outputs]
            return type(outputs)(scaled) if isinstance(outputs, tuple) else scaled
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _grads(self, optimizer):
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    yield p.grad

    def unscale_(self, optimizer):
        """Divides optimizer's gradients by the scale, in place (once per
        step), noting infs/NaNs; then e.g. clip_grad_norm_ sees true values."""
        if not self._enabled:
            return
        if self._scale is None:
            raise RuntimeError("Attempted unscale_ but _scale is None.  This may indicate your "
                               "script did not use scaler.scale(loss or outputs) earlier in the "
                               "iteration.")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update().")
        if state["stage"] is _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv = 1.0 / float(self._scale)  # the reciprocal in double, then float32, as torch
        found = {}
        with no_grad():
            for g in self._grads(optimizer):
                if g.dtype == _C.float16 and not getattr(self, "_allow_fp16", False):
                    raise ValueError("Attempting to unscale FP16 gradients.")
                g.mul_(inv)
                key = str(g.device)
                bad = (~g.isfinite()).any()
                found[key] = bad if key not in found else (found[key] | bad)
        state["found_inf_per_device"] = found
        state["stage"] = _UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """optimizer.step(*args, **kwargs) unless the gradients held an inf
        or NaN (then None and no step); unscales first if needed."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is _READY:
            self.unscale_(optimizer)
        if not state["found_inf_per_device"] and self._scale is None:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = None
        if not any(bool(v) for v in state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = _STEPPED
        return retval

    def update(self, new_scale=None):
        """The next iteration's scale: new_scale if given, else backed off
        after a skipped step or grown after growth_interval clean ones."""
        if not self._enabled:
            return
        if self._scale is None:
            return
        if new_scale is not None:
            value = float(new_scale)
            self._scale.fill_(value)
        else:
            found = [bool(v) for st in self._per_optimizer_states.values()
                     for v in st["found_inf_per_device"].values()]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(found):
                self._scale.mul_(self._backoff_factor)
                self._growth_tracker.fill_(0)
            else:
                tracker = int(self._growth_tracker) + 1
                if tracker == self._growth_interval:
                    self._scale.mul_(self._growth_factor)
                    tracker = 0
                self._growth_tracker.fill_(tracker)
        self._per_optimizer_states = defaultdict(_fresh_state)

    def get_scale(self):
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale)

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": (self._init_growth_tracker if self._growth_tracker is None
                                    else int(self._growth_tracker))}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

