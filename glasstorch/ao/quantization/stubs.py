"""Markers of where a model's tensors enter and leave the quantized region."""

from __future__ import annotations

from glasstorch import nn

__all__ = ["QuantStub", "DeQuantStub", "QuantWrapper"]


class QuantStub(nn.Module):
    """Identity before calibration; ``convert`` turns it into a Quantize with the qparams
    its observer collected."""

    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig:
            self.qconfig = qconfig

    def forward(self, x):
        """Return ``x``."""
        return x


class DeQuantStub(nn.Module):
    """Identity before conversion; ``convert`` turns it into a DeQuantize."""

    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig:
            self.qconfig = qconfig

    def forward(self, x):
        """Return ``x``."""
        return x


class QuantWrapper(nn.Module):
    """``module`` with a QuantStub before it and a DeQuantStub after it."""

    def __init__(self, module):
        super().__init__()
        qconfig = getattr(module, "qconfig", None)
        self.add_module("quant", QuantStub(qconfig))
        self.add_module("dequant", DeQuantStub(qconfig))
        self.add_module("module", module)
        self.train(module.training)

    def forward(self, X):
        """dequant(module(quant(X)))."""
        return self.dequant(self.module(self.quant(X)))
