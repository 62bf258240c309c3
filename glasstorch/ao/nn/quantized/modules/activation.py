"""Quantized activations (``torch.ao.nn.quantized.ReLU6``, ``Hardswish``, ``LeakyReLU``,
``Sigmoid``, ``ELU``, ``Softmax``): quint8 in and out, computed by ``_kernels.pointwise`` as
torch's kernels do (dequantize by FMA, the float32 formula, requantize)."""

from __future__ import annotations

import numpy as np

import glasstorch as torch
from glasstorch import nn

from .. import _kernels

__all__ = ["ReLU6", "Hardswish", "LeakyReLU", "Sigmoid", "ELU", "Softmax"]

_F32 = np.float32


def _observed_qparams(mod):
    """(scale, zero point) of an observed float module's output observer."""
    scale, zp = mod.activation_post_process.calculate_qparams()
    return float(scale), int(zp)


class _QParamsBuffers:
    """Output qparams kept as ``scale`` / ``zero_point`` buffers (in the state_dict, as
    torch's Hardswish and LeakyReLU keep them)."""

    def _set_qparams(self, scale, zero_point):
        self.register_buffer("scale", torch.tensor(scale))
        self.register_buffer("zero_point", torch.tensor(zero_point))

    def _qparams(self):
        return float(self.scale), int(self.zero_point)


class ReLU6(nn.ReLU):
    """``min(max(x, 0), 6)`` on a quantized tensor, keeping its qparams."""

    def __init__(self, inplace=False):
        super().__init__(inplace)
        self.inplace = inplace

    def _get_name(self):
        return "QuantizedReLU6"

    def forward(self, input):
        """``input`` clamped to [0, 6] in its own quantization."""
        return _kernels.pointwise(input, lambda v: np.clip(v, _F32(0), _F32(6)),
                                  input._scale, input._zero_point, "relu6")

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant=False):
        """A quantized ReLU6 for a float one."""
        return ReLU6(mod.inplace)


def _hardswish(v):
    return (v * np.clip(v + _F32(3), _F32(0), _F32(6)) / _F32(6)).astype(_F32)


class Hardswish(_QParamsBuffers, nn.Hardswish):
    """``x * relu6(x + 3) / 6`` on a quantized tensor, stored with ``scale``/``zero_point``."""

    def __init__(self, scale, zero_point, device=None, dtype=None):
        super().__init__()
        self._set_qparams(scale, zero_point)

    def _get_name(self):
        return "QuantizedHardswish"

    def forward(self, input):
        """The quantized hardswish of ``input``."""
        return _kernels.pointwise(input, _hardswish, *self._qparams(), "hardswish")

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant=False):
        """A quantized Hardswish with the observed output qparams."""
        return Hardswish(*_observed_qparams(mod))


class LeakyReLU(_QParamsBuffers, nn.LeakyReLU):
    """``x`` where positive, ``negative_slope * x`` elsewhere, on a quantized tensor."""

    def __init__(self, scale, zero_point, negative_slope=0.01, inplace=False, device=None,
                 dtype=None):
        super().__init__(negative_slope, inplace)
        self._set_qparams(scale, zero_point)

    def _get_name(self):
        return "QuantizedLeakyReLU"

    def forward(self, input):
        """The quantized leaky ReLU of ``input``."""
        slope = _F32(self.negative_slope)
        return _kernels.pointwise(input, lambda v: np.where(v > 0, v, v * slope),
                                  *self._qparams(), "leaky_relu")

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """A quantized LeakyReLU with the observed output qparams."""
        return cls(*_observed_qparams(mod), mod.negative_slope, mod.inplace)


class Sigmoid(nn.Sigmoid):
    """The logistic function on a quantized tensor, stored with the output qparams."""

    def __init__(self, output_scale, output_zero_point):
        super().__init__()
        self.output_scale = output_scale
        self.output_zero_point = output_zero_point

    def forward(self, input):
        """The quantized sigmoid of ``input``."""
        def sigmoid(v):
            return (_F32(1) / (_F32(1) + np.exp(-v))).astype(_F32)
        return _kernels.pointwise(input, sigmoid, self.output_scale, self.output_zero_point,
                                  "sigmoid")

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """A quantized Sigmoid with the observed output qparams."""
        return cls(*_observed_qparams(mod))


class ELU(nn.ELU):
    """``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere, on a quantized tensor."""

    def __init__(self, scale, zero_point, alpha=1.0):
        super().__init__(alpha)
        self.scale = scale
        self.zero_point = zero_point

    def _get_name(self):
        return "QuantizedELU"

    def forward(self, input):
        """The quantized ELU of ``input``."""
        alpha = _F32(self.alpha)
        return _kernels.pointwise(
            input, lambda v: np.where(v > 0, v, alpha * np.expm1(v)).astype(_F32),
            self.scale, self.zero_point, "elu")

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant=False):
        """A quantized ELU with the observed output qparams."""
        return ELU(*_observed_qparams(mod), mod.alpha)


class Softmax(nn.Softmax):
    """Softmax over ``dim`` of a quantized tensor, stored with ``scale``/``zero_point``."""

    def __init__(self, dim=None, scale=1.0, zero_point=0):
        super().__init__(dim)
        self.scale = scale
        self.zero_point = zero_point

    def _get_name(self):
        return "QuantizedSoftmax"

    def forward(self, input):
        """The quantized softmax of ``input``."""
        dim = self.dim
        if dim is None:
            # torch's legacy choice of dim for an unspecified softmax
            dim = 0 if input.ndim in (0, 1, 3) else 1
        return _kernels.float_kernel(input, lambda x: torch.softmax(x, dim), self.scale,
                                     self.zero_point, "softmax")

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant=False):
        """A quantized Softmax with the observed output qparams."""
        return Softmax(mod.dim, *_observed_qparams(mod))
