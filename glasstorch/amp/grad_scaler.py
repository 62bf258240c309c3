"""GradScaler: dynamic loss scaling for mixed-precision training (torch.amp.GradScaler)."""

from __future__ import annotations

from collections import defaultdict
from enum import Enum

import glasstorch as _gt

from .._core.backend import xp
from ..autograd.grad_mode import no_grad

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    """Scales the loss so low-precision gradients do not underflow, unscales the gradients
    before the optimizer step, skips steps whose gradients hold infs/NaNs and adapts the
    scale: times ``backoff_factor`` after such a step, times ``growth_factor`` after
    ``growth_interval`` clean steps in a row.
    """

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled=True):
        self._device = str(device)
        self._enabled = bool(enabled)
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None  # created lazily by the first scale(), like torch
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _check_scale_growth_tracker(self, funcname):
        fix = ("This may indicate your script did not use scaler.scale(loss or outputs) "
               "earlier in the iteration.")
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  {fix}")
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  {fix}")
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self):
        self._scale = _gt.full((), self._init_scale, dtype=_gt.float32)
        self._growth_tracker = _gt.full((), self._init_growth_tracker, dtype=_gt.int32)

    def scale(self, outputs):
        """``outputs`` (a tensor or nested list/tuple/iterable of them) times the scale."""
        if not self._enabled:
            return outputs
        if self._scale is None:
            self._lazy_init_scale_growth_tracker()
        scale = self._scale

        def apply(val):
            if isinstance(val, _gt.Tensor):
                return val * scale
            if isinstance(val, (list, tuple)):
                return type(val)(apply(v) for v in val)
            if hasattr(val, "__iter__"):
                return map(apply, val)
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")
        return apply(outputs)

    def _unscale_grads_(self, optimizer, inv_scale, found_inf, allow_fp16):
        # multiply every gradient by inv_scale in its own dtype (float32 math, one rounding)
        # and note whether any is not finite
        inv = float(inv_scale)
        bad = False
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    if not allow_fp16 and g.dtype is _gt.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    if inv != 1.0:
                        g.mul_(inv_scale)
                    if not bad:
                        bad = not bool(xp.isfinite(g._data).all())
        if bad:
            found_inf.fill_(1.0)
        return {self._device: found_inf}

    def unscale_(self, optimizer):
        """Divide ``optimizer``'s gradients by the scale (once per optimizer per step)."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since "
                               "the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        # 1/scale computed in double, then rounded to float32, as torch does
        inv_scale = _gt.full((), 1.0 / float(self._scale.item()), dtype=_gt.float32)
        found_inf = _gt.full((), 0.0, dtype=_gt.float32)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf,
                                                             False)
        state["stage"] = OptState.UNSCALED

    def _maybe_opt_step(self, optimizer, state, *args, **kwargs):
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            return optimizer.step(*args, **kwargs)
        return None

    def step(self, optimizer, *args, **kwargs):
        """Unscale (unless done) and run ``optimizer.step`` unless the gradients hold
        infs/NaNs; returns the step's return value, or None when skipped."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        # glasstorch's fused optimizers take no grad_scale/found_inf, so every optimizer
        # goes through unscale_ (same parameters; the grads are left unscaled)
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = self._maybe_opt_step(optimizer, state, *args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None):
        """Adapt the scale for the next iteration (or set it to ``new_scale``)."""
        if not self._enabled:
            return
        scale, tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                scale.fill_(new_scale)
            else:
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor "
                          "or torch.FloatTensor with requires_grad=False.")
                if not isinstance(new_scale, _gt.Tensor):
                    raise AssertionError(reason)
                if new_scale.numel() != 1 or new_scale.requires_grad:
                    raise AssertionError(reason)
                scale.copy_(new_scale)
        else:
            found = [f for st in self._per_optimizer_states.values()
                     for f in st["found_inf_per_device"].values()]
            if len(found) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            self._update_scale(scale, tracker, any(float(f.item()) for f in found))
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _update_scale(self, scale, tracker, found_inf):
        # torch's _amp_update_scale_: float32 scale arithmetic, growth only if finite
        s = xp.float32(scale.item())
        if found_inf:
            scale.fill_(float(s * xp.float32(self._backoff_factor)))
            tracker.fill_(0)
            return
        successful = int(tracker.item()) + 1
        if successful == self._growth_interval:
            grown = s * xp.float32(self._growth_factor)
            if xp.isfinite(grown):
                scale.fill_(float(grown))
            tracker.fill_(0)
        else:
            tracker.fill_(successful)

    def _get_scale_async(self):
        return self._scale

    def get_scale(self):
        """The current scale as a Python float (1.0 when disabled)."""
        if self._enabled:
            return self._init_scale if self._scale is None else self._scale.item()
        return 1.0

    def get_growth_factor(self):
        """The factor the scale is multiplied by after ``growth_interval`` steps without inf/NaN."""
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        """Set the growth factor."""
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        """The factor the scale is multiplied by after a step with inf/NaN gradients."""
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        """Set the backoff factor."""
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        """How many consecutive finite steps grow the scale once."""
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        """Set the growth interval."""
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if self._enabled:
            if self._growth_tracker is None:
                return self._init_growth_tracker
            return int(self._growth_tracker.item())
        return 0

    def is_enabled(self):
        """Whether this scaler scales at all (``enabled=False`` makes every method a
        pass-through)."""
        return self._enabled

    def state_dict(self):
        """scale, growth/backoff factors, growth interval and growth tracker ({} if off)."""
        if self._enabled:
            return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                    "backoff_factor": self._backoff_factor,
                    "growth_interval": self._growth_interval,
                    "_growth_tracker": self._get_growth_tracker()}
        return {}

    def load_state_dict(self, state_dict):
        """Restore the scale, growth settings and growth tracker saved by ``state_dict()``; a no-op
        when the scaler is disabled."""
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

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the "
                                     "beginning of an iteration, or at the end after "
                                     "scaler.update().")
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)

    def _check_inf_per_device(self, optimizer):
        self._check_scale_growth_tracker("_check_inf_per_device")
        dummy = _gt.full((), 1.0, dtype=_gt.float32)
        found_inf = _gt.full((), 0.0, dtype=_gt.float32)
        state = self._per_optimizer_states[id(optimizer)]
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, dummy, found_inf, True)
        return state["found_inf_per_device"]

    def _found_inf_per_device(self, optimizer):
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]
