"""Quantized modules: Quantize / DeQuantize at the float boundary, layers, activations and
normalizations on quantized tensors."""

from __future__ import annotations

import glasstorch as torch
from glasstorch import nn

from .activation import ELU, Hardswish, LeakyReLU, ReLU6, Sigmoid, Softmax
from .batchnorm import BatchNorm2d, BatchNorm3d
from .conv import Conv1d, Conv2d, Conv3d
from .functional_modules import FloatFunctional, QFunctional
from .linear import Linear, LinearPackedParams
from .normalization import GroupNorm, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, LayerNorm

__all__ = ["Quantize", "DeQuantize", "Linear", "LinearPackedParams", "Conv1d", "Conv2d",
           "Conv3d", "BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm", "InstanceNorm1d",
           "InstanceNorm2d", "InstanceNorm3d", "ReLU6", "Hardswish", "LeakyReLU", "Sigmoid",
           "ELU", "Softmax", "Dropout", "FloatFunctional", "QFunctional"]


class Dropout(nn.Dropout):
    """Dropout in a quantized model: an identity in eval mode, where quantized models run."""

    def _get_name(self):
        return "QuantizedDropout"

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """A quantized Dropout with the float module's settings."""
        return cls(mod.p, mod.inplace)


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
