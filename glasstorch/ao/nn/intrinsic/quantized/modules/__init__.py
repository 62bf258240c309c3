"""Quantized fused modules: the quantized layer with its ReLU applied by the output clamp
(fbgemm's fused ReLU: the lower bound becomes the output zero point)."""

from __future__ import annotations

from glasstorch.ao.nn.quantized.modules import batchnorm as _qbn
from glasstorch.ao.nn.quantized.modules import conv as _qconv
from glasstorch.ao.nn.quantized.modules.linear import Linear as _QLinear

from ...modules import fused as _fused

__all__ = ["LinearReLU", "ConvReLU1d", "ConvReLU2d", "ConvReLU3d", "BNReLU2d", "BNReLU3d"]


class LinearReLU(_QLinear):
    """Quantized Linear followed by ReLU, as one kernel."""

    _FLOAT_MODULE = (_fused.LinearReLU,)
    _RELU = True

    def _get_name(self):
        return "QuantizedLinearReLU"


def _with_relu(base, float_fused, name):
    """The quantized ``base`` layer with a fused ReLU, replacing float ``float_fused``."""
    def _get_name(self):
        return name
    return type(name.removeprefix("Quantized"), (base,),
                {"_FLOAT_MODULE": (float_fused,), "_RELU": True, "_get_name": _get_name,
                 "__module__": __name__, "__doc__": f"{name}: {base.__doc__}, then ReLU."})


ConvReLU1d = _with_relu(_qconv.Conv1d, _fused.ConvReLU1d, "QuantizedConvReLU1d")
ConvReLU2d = _with_relu(_qconv.Conv2d, _fused.ConvReLU2d, "QuantizedConvReLU2d")
ConvReLU3d = _with_relu(_qconv.Conv3d, _fused.ConvReLU3d, "QuantizedConvReLU3d")
BNReLU2d = _with_relu(_qbn.BatchNorm2d, _fused.BNReLU2d, "QuantizedBNReLU2d")
BNReLU3d = _with_relu(_qbn.BatchNorm3d, _fused.BNReLU3d, "QuantizedBNReLU3d")
