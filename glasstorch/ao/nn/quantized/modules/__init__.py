"""Quantized modules: Quantize / DeQuantize at the float boundary, Linear, Conv2d."""

from __future__ import annotations

import glasstorch as torch
from glasstorch import nn

from .conv import Conv2d
from .functional_modules import FloatFunctional, QFunctional
from .linear import Linear, LinearPackedParams

__all__ = ["Quantize", "DeQuantize", "Linear", "LinearPackedParams", "Conv2d",
           "FloatFunctional", "QFunctional"]


class Quantize(nn.Module):
    """Quantizes float input per tensor with fixed ``scale``/``zero_point`` to ``dtype``."""

    def __init__(self, scale, zero_point, dtype, factory_kwargs=None):
        super().__init__()
        self.register_buffer("scale", torch.tensor([scale]))
        self.register_buffer("zero_point", torch.tensor([zero_point], dtype=torch.long))
        self.dtype = dtype

    def forward(self, X):
        """``X`` quantized."""
        return torch.quantize_per_tensor(X, float(self.scale), int(self.zero_point),
                                         self.dtype)

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant=False):
        """A Quantize with the qparams the module's observer computed (a QuantStub's)."""
        obs = mod.activation_post_process
        scale, zp = obs.calculate_qparams()
        return Quantize(scale.float().item(), zp.long().item(), obs.dtype)

    def extra_repr(self):
        return f"scale={self.scale}, zero_point={self.zero_point}, dtype={self.dtype}"


class DeQuantize(nn.Module):
    """Turns a quantized tensor back into float32."""

    def forward(self, Xq):
        """``Xq`` dequantized."""
        return Xq.dequantize()

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant=False):
        """A DeQuantize (replacing a DeQuantStub)."""
        return DeQuantize()
