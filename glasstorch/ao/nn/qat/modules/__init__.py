"""Quantization-aware training modules: float layers whose weight passes through a fake
quantize (``weight_fake_quant``) on every forward."""

from __future__ import annotations

from glasstorch import nn
from glasstorch.nn import functional as F

__all__ = ["Linear", "Conv2d"]


def _qat_from_float(cls, mod, float_types):
    from glasstorch.ao.nn.intrinsic.modules.fused import _FusedModule
    if type(mod) not in float_types:
        raise AssertionError(f"qat.{cls.__name__}.from_float only works for "
                             f"{[t.__name__ for t in float_types]}")
    if getattr(mod, "qconfig", None) is None:
        raise AssertionError("Input float module must have a valid qconfig")
    inner = mod[0] if isinstance(mod, _FusedModule) else mod
    return inner, mod.qconfig


class Linear(nn.Linear):
    """A Linear whose weight is fake-quantized (``qconfig.weight()``) in forward."""

    _FLOAT_MODULE = (nn.Linear,)

    def __init__(self, in_features, out_features, bias=True, qconfig=None, device=None,
                 dtype=None):
        super().__init__(in_features, out_features, bias)
        if qconfig is None:
            raise AssertionError("qconfig must be provided for QAT module")
        self.qconfig = qconfig
        self.weight_fake_quant = qconfig.weight()

    def forward(self, input):
        """``linear(input, fake_quant(weight), bias)``."""
        return F.linear(input, self.weight_fake_quant(self.weight), self.bias)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """The QAT module sharing float ``mod``'s weight and bias."""
        lin, qconfig = _qat_from_float(cls, mod, cls._FLOAT_MODULE)
        q = cls(lin.in_features, lin.out_features, bias=lin.bias is not None, qconfig=qconfig)
        q.weight = lin.weight
        q.bias = lin.bias
        return q


class Conv2d(nn.Conv2d):
    """A Conv2d whose weight is fake-quantized (``qconfig.weight()``) in forward."""

    _FLOAT_MODULE = (nn.Conv2d,)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", qconfig=None,
                 device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride=stride,
                         padding=padding, dilation=dilation, groups=groups, bias=bias,
                         padding_mode=padding_mode)
        if qconfig is None:
            raise AssertionError("qconfig must be provided for QAT module")
        self.qconfig = qconfig
        self.weight_fake_quant = qconfig.weight()

    def forward(self, input):
        """The convolution with the fake-quantized weight."""
        return self._conv_forward(input, self.weight_fake_quant(self.weight), self.bias)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """The QAT module sharing float ``mod``'s weight and bias."""
        conv, qconfig = _qat_from_float(cls, mod, cls._FLOAT_MODULE)
        q = cls(conv.in_channels, conv.out_channels, conv.kernel_size, stride=conv.stride,
                padding=conv.padding, dilation=conv.dilation, groups=conv.groups,
                bias=conv.bias is not None, padding_mode=conv.padding_mode, qconfig=qconfig)
        q.weight = conv.weight
        q.bias = conv.bias
        return q
