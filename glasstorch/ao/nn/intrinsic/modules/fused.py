"""Fused float modules (``torch.ao.nn.intrinsic``): containers marking layers that quantize
as one op (conv + bn + relu, linear + relu...). They run their parts in order."""

from __future__ import annotations

from glasstorch import nn

__all__ = ["_FusedModule", "ConvReLU1d", "ConvReLU2d", "ConvReLU3d", "LinearReLU", "ConvBn1d",
           "ConvBn2d", "ConvBn3d", "ConvBnReLU1d", "ConvBnReLU2d", "ConvBnReLU3d", "BNReLU2d",
           "BNReLU3d", "LinearBn1d"]


class _FusedModule(nn.Sequential):
    """Base of the fused modules (a Sequential of the fused layers)."""


def _fused(name, parts, doc):
    def __init__(self, *mods):
        if len(mods) != len(parts) or not all(type(m) is p for m, p in zip(mods, parts)):
            raise AssertionError(
                f"Incorrect types for input modules{tuple(type(m) for m in mods)}")
        _FusedModule.__init__(self, *mods)
    return type(name, (_FusedModule,), {"__init__": __init__, "__doc__": doc,
                                        "__module__": __name__})


ConvReLU1d = _fused("ConvReLU1d", (nn.Conv1d, nn.ReLU), "Conv1d followed by ReLU.")
ConvReLU2d = _fused("ConvReLU2d", (nn.Conv2d, nn.ReLU), "Conv2d followed by ReLU.")
ConvReLU3d = _fused("ConvReLU3d", (nn.Conv3d, nn.ReLU), "Conv3d followed by ReLU.")
LinearReLU = _fused("LinearReLU", (nn.Linear, nn.ReLU), "Linear followed by ReLU.")
ConvBn1d = _fused("ConvBn1d", (nn.Conv1d, nn.BatchNorm1d), "Conv1d followed by BatchNorm1d.")
ConvBn2d = _fused("ConvBn2d", (nn.Conv2d, nn.BatchNorm2d), "Conv2d followed by BatchNorm2d.")
ConvBn3d = _fused("ConvBn3d", (nn.Conv3d, nn.BatchNorm3d), "Conv3d followed by BatchNorm3d.")
ConvBnReLU1d = _fused("ConvBnReLU1d", (nn.Conv1d, nn.BatchNorm1d, nn.ReLU),
                      "Conv1d, BatchNorm1d and ReLU.")
ConvBnReLU2d = _fused("ConvBnReLU2d", (nn.Conv2d, nn.BatchNorm2d, nn.ReLU),
                      "Conv2d, BatchNorm2d and ReLU.")
ConvBnReLU3d = _fused("ConvBnReLU3d", (nn.Conv3d, nn.BatchNorm3d, nn.ReLU),
                      "Conv3d, BatchNorm3d and ReLU.")
BNReLU2d = _fused("BNReLU2d", (nn.BatchNorm2d, nn.ReLU), "BatchNorm2d followed by ReLU.")
BNReLU3d = _fused("BNReLU3d", (nn.BatchNorm3d, nn.ReLU), "BatchNorm3d followed by ReLU.")
LinearBn1d = _fused("LinearBn1d", (nn.Linear, nn.BatchNorm1d),
                    "Linear followed by BatchNorm1d.")
