"""Quantized fused modules: the quantized layer with its ReLU applied by the output clamp
(fbgemm's fused ReLU: the lower bound becomes the output zero point)."""

from __future__ import annotations

from glasstorch.ao.nn.quantized.modules.conv import Conv2d as _QConv2d
from glasstorch.ao.nn.quantized.modules.linear import Linear as _QLinear

from ...modules.fused import ConvReLU2d as _FConvReLU2d
from ...modules.fused import LinearReLU as _FLinearReLU

__all__ = ["LinearReLU", "ConvReLU2d"]


class LinearReLU(_QLinear):
    """Quantized Linear followed by ReLU, as one kernel."""

    _FLOAT_MODULE = (_FLinearReLU,)
    _RELU = True

    def _get_name(self):
        return "QuantizedLinearReLU"


class ConvReLU2d(_QConv2d):
    """Quantized Conv2d followed by ReLU, as one kernel."""

    _FLOAT_MODULE = (_FConvReLU2d,)
    _RELU = True

    def _get_name(self):
        return "QuantizedConvReLU2d"
