"""Fake quantization modules for quantization-aware training: observe like an observer,
then quantize-dequantize in float so training sees the rounding (straight-through
gradient)."""

from __future__ import annotations

import glasstorch as torch
from glasstorch import nn

from .observer import (
    MovingAverageMinMaxObserver,
    MovingAveragePerChannelMinMaxObserver,
    _is_per_channel,
    _is_per_tensor,
    _with_args,
    _with_callable_args,
)

__all__ = ["FakeQuantizeBase", "FakeQuantize", "FusedMovingAvgObsFakeQuantize",
           "default_fake_quant", "default_fused_act_fake_quant", "default_fused_wt_fake_quant",
           "default_fused_per_channel_wt_fake_quant",
           "default_weight_fake_quant", "default_per_channel_weight_fake_quant",
           "disable_fake_quant", "enable_fake_quant", "disable_observer", "enable_observer"]


class FakeQuantizeBase(nn.Module):
    """Base of the fake quantize modules: the ``fake_quant_enabled`` and ``observer_enabled``
    switches (uint8 buffers, as torch keeps them)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("fake_quant_enabled", torch.tensor([1], dtype=torch.uint8))
        self.register_buffer("observer_enabled", torch.tensor([1], dtype=torch.uint8))

    def forward(self, x):
        """Observe and/or fake-quantize ``x``."""
        raise NotImplementedError(f"{type(self).__name__} must define forward")

    def calculate_qparams(self, **kwargs):
        """The current (scale, zero_point)."""
        raise NotImplementedError(f"{type(self).__name__} must define calculate_qparams")

    def enable_fake_quant(self, enabled: bool = True):
        """Switch fake quantization on (or off)."""
        self.fake_quant_enabled[0] = 1 if enabled else 0

    def disable_fake_quant(self):
        """Switch fake quantization off."""
        self.enable_fake_quant(False)

    def enable_observer(self, enabled: bool = True):
        """Switch the statistics update on (or off)."""
        self.observer_enabled[0] = 1 if enabled else 0

    def disable_observer(self):
        """Freeze the statistics."""
        self.enable_observer(False)

    with_args = classmethod(_with_args)
    with_callable_args = classmethod(_with_callable_args)


class FakeQuantize(FakeQuantizeBase):
    """Observer (``observer(**observer_kwargs)``) plus fake quantization with the qparams it
    computes at every step."""

    def __init__(self, observer=MovingAverageMinMaxObserver, quant_min=None, quant_max=None,
                 is_dynamic=False, **observer_kwargs):
        super().__init__()
        if quant_min is not None and quant_max is not None:
            if quant_min > quant_max:
                raise AssertionError("quant_min must be less than or equal to quant_max")
            dtype = observer_kwargs.get("dtype", torch.quint8)
            p = getattr(observer, "p", None)
            if p is not None:
                dtype = p.keywords.get("dtype", dtype)
            if torch.iinfo(dtype).min > quant_min:
                raise AssertionError("quant_min out of bound")
            if quant_max > torch.iinfo(dtype).max:
                raise AssertionError("quant_max out of bound")
            observer_kwargs.update({"quant_min": quant_min, "quant_max": quant_max})
        observer_kwargs["is_dynamic"] = is_dynamic
        self.activation_post_process = observer(**observer_kwargs)
        obs = self.activation_post_process
        self.quant_min, self.quant_max, self.is_dynamic = obs.quant_min, obs.quant_max, \
            obs.is_dynamic
        zp_dtype = torch.float if obs.qscheme is torch.per_channel_affine_float_qparams \
            else torch.int
        self.register_buffer("scale", torch.tensor([1.0], dtype=torch.float))
        self.register_buffer("zero_point", torch.tensor([0], dtype=zp_dtype))
        self.dtype = obs.dtype
        self.qscheme = obs.qscheme
        self.ch_axis = getattr(obs, "ch_axis", -1)
        if not (_is_per_channel(self.qscheme) or _is_per_tensor(self.qscheme)):
            raise AssertionError("Only per channel and per tensor quantization are supported "
                                 f"in fake quantize got qscheme: {self.qscheme}")
        self.is_per_channel = _is_per_channel(self.qscheme)

    def calculate_qparams(self):
        """The observer's (scale, zero_point)."""
        return self.activation_post_process.calculate_qparams()

    def forward(self, X):
        """Update the statistics and qparams (if observing), then fake-quantize ``X`` (if
        enabled)."""
        if int(self.observer_enabled[0]) == 1:
            self.activation_post_process(X.detach())
            scale, zp = self.calculate_qparams()
            self.scale = scale.clone()
            self.zero_point = zp.to(self.zero_point.dtype)
        if int(self.fake_quant_enabled[0]) == 1:
            obs = self.activation_post_process
            if self.is_per_channel:
                X = torch.fake_quantize_per_channel_affine(X, self.scale, self.zero_point,
                                                           self.ch_axis, obs.quant_min,
                                                           obs.quant_max)
            else:
                X = torch.fake_quantize_per_tensor_affine(X, self.scale, self.zero_point,
                                                          obs.quant_min, obs.quant_max)
        return X

    def extra_repr(self):
        obs = self.activation_post_process
        return (f"fake_quant_enabled={self.fake_quant_enabled}, "
                f"observer_enabled={self.observer_enabled}, quant_min={obs.quant_min}, "
                f"quant_max={obs.quant_max}, dtype={self.dtype}, qscheme={self.qscheme}, "
                f"ch_axis={self.ch_axis}, scale={self.scale}, zero_point={self.zero_point}")

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        # the stored qparams decide the buffers' shapes (per channel: one per channel)
        for name in ("scale", "zero_point"):
            key = prefix + name
            if key in state_dict:
                setattr(self, name, torch.empty(state_dict[key].shape,
                                                dtype=getattr(self, name).dtype))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                      missing_keys, unexpected_keys, error_msgs)


class FusedMovingAvgObsFakeQuantize(FakeQuantize):
    """FakeQuantize over a moving-average observer, updated as torch's fused kernel does:
    the running min/max move towards each batch's, and the qparams come from them directly
    (torch's ``ChooseQuantizationParams``; symmetric schemes keep 0 in the middle)."""

    def __init__(self, observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255,
                 **observer_kwargs):
        super().__init__(observer, quant_min, quant_max, **observer_kwargs)
        if not isinstance(self.activation_post_process,
                          (MovingAverageMinMaxObserver, MovingAveragePerChannelMinMaxObserver)):
            raise AssertionError("Fused observer+fake_quant module only works with "
                                 "MovingAverageMinMaxObserver")
        self.register_buffer("fake_quant_enabled", torch.tensor([1], dtype=torch.long))
        self.register_buffer("observer_enabled", torch.tensor([1], dtype=torch.long))
        self.is_symmetric_quant = self.activation_post_process.qscheme in (
            torch.per_tensor_symmetric, torch.per_channel_symmetric)

    def extra_repr(self):
        obs = self.activation_post_process
        return (f"fake_quant_enabled={self.fake_quant_enabled}, "
                f"observer_enabled={self.observer_enabled}, scale={self.scale}, "
                f"zero_point={self.zero_point}, dtype={self.dtype}, quant_min={obs.quant_min}, "
                f"quant_max={obs.quant_max}, qscheme={self.qscheme}, "
                f"reduce_range={obs.reduce_range}")

    def _observe(self, X):
        import math

        from glasstorch._ops.quantized import choose_qparams
        obs = self.activation_post_process
        x = X.detach()
        if self.is_per_channel:
            axes = list(range(x.dim()))
            axes[self.ch_axis], axes[0] = 0, self.ch_axis
            cur_min, cur_max = torch.aminmax(torch.flatten(x.permute(axes), start_dim=1), dim=1)
            first = obs.min_val.numel() == 0
        else:
            cur_min, cur_max = torch.aminmax(x)
            first = math.isinf(obs.min_val.item()) and math.isinf(obs.max_val.item())
        if first:
            new_min, new_max = cur_min, cur_max
        else:
            c = obs.averaging_constant
            new_min = obs.min_val + c * (cur_min - obs.min_val)
            new_max = obs.max_val + c * (cur_max - obs.max_val)
        obs.min_val = new_min.clone()
        obs.max_val = new_max.clone()
        pairs = [choose_qparams(lo, hi, obs.quant_min, obs.quant_max, self.is_symmetric_quant)
                 for lo, hi in zip(new_min.reshape(-1).tolist(), new_max.reshape(-1).tolist())]
        self.scale = torch.tensor([p[0] for p in pairs], dtype=torch.float)
        self.zero_point = torch.tensor([p[1] for p in pairs], dtype=torch.int)

    def forward(self, X):
        """Update the running range and qparams (if observing), then fake-quantize ``X``."""
        if int(self.observer_enabled[0]) == 1:
            self._observe(X)
        if int(self.fake_quant_enabled[0]) == 1:
            obs = self.activation_post_process
            if self.is_per_channel:
                return torch.fake_quantize_per_channel_affine(
                    X, self.scale, self.zero_point, self.ch_axis, obs.quant_min, obs.quant_max)
            return torch.fake_quantize_per_tensor_affine(X, self.scale, self.zero_point,
                                                         obs.quant_min, obs.quant_max)
        return X


default_fake_quant = FakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255, dtype=torch.quint8,
    qscheme=torch.per_tensor_affine, reduce_range=True)
default_weight_fake_quant = FakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=-128, quant_max=127, dtype=torch.qint8,
    qscheme=torch.per_tensor_symmetric, reduce_range=False)
default_per_channel_weight_fake_quant = FakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver, quant_min=-128, quant_max=127,
    dtype=torch.qint8, qscheme=torch.per_channel_symmetric, reduce_range=False, ch_axis=0)


default_fused_act_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255, dtype=torch.quint8)
default_fused_wt_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=-128, quant_max=127, dtype=torch.qint8,
    qscheme=torch.per_tensor_symmetric)
default_fused_per_channel_wt_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver, quant_min=-128, quant_max=127,
    dtype=torch.qint8, qscheme=torch.per_channel_symmetric)


def _apply(name):
    def fn(mod):
        if isinstance(mod, FakeQuantizeBase):
            getattr(mod, name)()
    fn.__name__ = name
    fn.__doc__ = f"``model.apply({name})``: call ``{name}()`` on every fake quantize module."
    return fn


disable_fake_quant = _apply("disable_fake_quant")
enable_fake_quant = _apply("enable_fake_quant")
disable_observer = _apply("disable_observer")
enable_observer = _apply("enable_observer")
