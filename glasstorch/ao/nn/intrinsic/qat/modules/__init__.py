"""Fused QAT modules: a QAT layer followed by ReLU."""

from __future__ import annotations

from glasstorch.ao.nn.qat.modules import Conv2d as _QATConv2d
from glasstorch.ao.nn.qat.modules import Linear as _QATLinear
from glasstorch.nn import functional as F

from ...modules.fused import ConvReLU2d as _FConvReLU2d
from ...modules.fused import LinearReLU as _FLinearReLU

__all__ = ["LinearReLU", "ConvReLU2d"]


class LinearReLU(_QATLinear):
    """QAT Linear followed by ReLU (from a fused ``nni.LinearReLU``)."""

    _FLOAT_MODULE = (_FLinearReLU,)

    def forward(self, input):
        """``relu(linear(input, fake_quant(weight), bias))``."""
        return F.relu(super().forward(input))


class ConvReLU2d(_QATConv2d):
    """QAT Conv2d followed by ReLU (from a fused ``nni.ConvReLU2d``)."""

    _FLOAT_MODULE = (_FConvReLU2d,)

    def forward(self, input):
        """``relu(conv(input, fake_quant(weight)))``."""
        return F.relu(super().forward(input))
