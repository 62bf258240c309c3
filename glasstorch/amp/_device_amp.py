"""The deprecated per-device spellings ``torch.cuda.amp`` / ``torch.cpu.amp``: autocast,
GradScaler, custom_fwd/custom_bwd fixed to one device type, each warning (FutureWarning)
like torch that ``torch.amp.*(device, ...)`` replaces it. ``cuda_amp`` and ``cpu_amp``
are the two module objects (``glasstorch.cuda.amp`` and ``glasstorch.cpu.amp``)."""

from __future__ import annotations

import functools
import importlib.machinery
import types
import warnings

from .._core import dtype as _dt
from . import autocast_mode as _am
from .grad_scaler import GradScaler as _GradScaler


def _deprecated(what, device):
    warnings.warn(f"`torch.{device}.amp.{what}(args...)` is deprecated. Please use "
                  f"`torch.amp.{what}('{device}', args...)` instead.", FutureWarning,
                  stacklevel=3)


def _make(device, default_dtype):
    class autocast(_am.autocast):
        __doc__ = f"``torch.{device}.amp.autocast``: ``torch.amp.autocast('{device}', ...)``."

        def __init__(self, enabled=True, dtype=default_dtype, cache_enabled=True):
            _deprecated("autocast", device)
            super().__init__(device, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    class GradScaler(_GradScaler):
        __doc__ = f"``torch.{device}.amp.GradScaler``: ``torch.amp.GradScaler('{device}')``."

        def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                     growth_interval=2000, enabled=True):
            _deprecated("GradScaler", device)
            super().__init__(device, init_scale=init_scale, growth_factor=growth_factor,
                             backoff_factor=backoff_factor, growth_interval=growth_interval,
                             enabled=enabled)

    mod = types.ModuleType(f"glasstorch.{device}.amp", f"torch.{device}.amp (deprecated).")
    # a spec, so ``import torch.cuda.amp`` resolves it when glasstorch serves torch
    mod.__spec__ = importlib.machinery.ModuleSpec(mod.__name__, None)
    mod.autocast = autocast
    mod.GradScaler = GradScaler
    names = ["autocast", "GradScaler"]
    if device == "cuda":
        def custom_fwd(fwd=None, *, cast_inputs=None):
            _deprecated("custom_fwd", device)
            return functools.partial(_am.custom_fwd, device_type="cuda")(
                fwd=fwd, cast_inputs=cast_inputs)

        def custom_bwd(bwd):
            _deprecated("custom_bwd", device)
            return functools.partial(_am.custom_bwd, device_type="cuda")(bwd)

        def amp_definitely_not_available():
            return False  # the CUDA policy runs on glasstorch's CPU tensors
        mod.custom_fwd, mod.custom_bwd = custom_fwd, custom_bwd
        mod.amp_definitely_not_available = amp_definitely_not_available
        names += ["custom_fwd", "custom_bwd", "amp_definitely_not_available"]
    mod.__all__ = names
    return mod


cuda_amp = _make("cuda", _dt.float16)
cpu_amp = _make("cpu", _dt.bfloat16)
