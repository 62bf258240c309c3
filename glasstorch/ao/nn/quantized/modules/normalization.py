"""Quantized normalizations (``torch.ao.nn.quantized.LayerNorm``, ``GroupNorm``,
``InstanceNorm1d/2d/3d``): the float normalization of the dequantized input, stored with the
module's ``scale``/``zero_point`` buffers."""

from __future__ import annotations

import glasstorch as torch
from glasstorch import nn
from glasstorch.nn import functional as F

from .. import _kernels

__all__ = ["LayerNorm", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]


class _QuantizedNorm:
    """The parts the quantized normalizations share: qparams buffers, the float kernel, and
    ``from_float`` copying the float module's affine parameters."""

    def _init_quant(self, weight, bias, scale, zero_point):
        self.weight, self.bias = weight, bias
        self.register_buffer("scale", torch.tensor(scale))
        self.register_buffer("zero_point", torch.tensor(zero_point))

    def _get_name(self):
        return "Quantized" + type(self).__name__

    def _run(self, input, fn, what):
        return _kernels.float_kernel(input, fn, float(self.scale), int(self.zero_point), what)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """The quantized counterpart of an observed float normalization."""
        scale, zp = mod.activation_post_process.calculate_qparams()
        return cls(*cls._float_args(mod), mod.weight, mod.bias, float(scale), int(zp),
                   mod.eps, **cls._float_kwargs(mod))

    @staticmethod
    def _float_kwargs(mod):
        return {}


class LayerNorm(_QuantizedNorm, nn.LayerNorm):
    """Layer normalization of a quantized tensor."""

    def __init__(self, normalized_shape, weight, bias, scale, zero_point, eps=1e-5,
                 elementwise_affine=True, device=None, dtype=None):
        nn.LayerNorm.__init__(self, normalized_shape, eps, elementwise_affine, bias=False)
        self._init_quant(weight, bias, scale, zero_point)

    def forward(self, input):
        """The quantized layer norm of ``input``."""
        return self._run(input, lambda x: F.layer_norm(
            x, self.normalized_shape, self.weight, self.bias, self.eps), "layer_norm")

    @staticmethod
    def _float_args(mod):
        return (mod.normalized_shape,)

    @staticmethod
    def _float_kwargs(mod):
        return {"elementwise_affine": mod.elementwise_affine}


class GroupNorm(_QuantizedNorm, nn.GroupNorm):
    """Group normalization of a quantized tensor."""

    def __init__(self, num_groups, num_channels, weight, bias, scale, zero_point, eps=1e-5,
                 affine=True, device=None, dtype=None):
        nn.GroupNorm.__init__(self, num_groups, num_channels, eps, affine)
        self._init_quant(weight, bias, scale, zero_point)

    def forward(self, input):
        """The quantized group norm of ``input``."""
        return self._run(input, lambda x: F.group_norm(
            x, self.num_groups, self.weight, self.bias, self.eps), "group_norm")

    @staticmethod
    def _float_args(mod):
        return (mod.num_groups, mod.num_channels)

    @staticmethod
    def _float_kwargs(mod):
        return {"affine": mod.affine}


class _InstanceNorm(_QuantizedNorm):
    def __init__(self, num_features, weight, bias, scale, zero_point, eps=1e-5, momentum=0.1,
                 affine=False, track_running_stats=False, device=None, dtype=None):
        self._FLOAT.__init__(self, num_features, eps, momentum, affine, track_running_stats)
        self._init_quant(weight, bias, scale, zero_point)

    def forward(self, input):
        """The quantized instance norm of ``input``."""
        return self._run(input, lambda x: F.instance_norm(
            x, weight=self.weight, bias=self.bias, eps=self.eps), "instance_norm")

    @staticmethod
    def _float_args(mod):
        return (mod.num_features,)

    @staticmethod
    def _float_kwargs(mod):
        return {"momentum": mod.momentum, "affine": mod.affine,
                "track_running_stats": mod.track_running_stats}


class InstanceNorm1d(_InstanceNorm, nn.InstanceNorm1d):
    """Instance normalization of a quantized (N, C, L) tensor."""
    _FLOAT = nn.InstanceNorm1d


class InstanceNorm2d(_InstanceNorm, nn.InstanceNorm2d):
    """Instance normalization of a quantized (N, C, H, W) tensor."""
    _FLOAT = nn.InstanceNorm2d


class InstanceNorm3d(_InstanceNorm, nn.InstanceNorm3d):
    """Instance normalization of a quantized (N, C, D, H, W) tensor."""
    _FLOAT = nn.InstanceNorm3d
