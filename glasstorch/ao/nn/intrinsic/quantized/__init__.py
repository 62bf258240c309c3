"""``torch.ao.nn.intrinsic.quantized``: quantized fused modules."""

from . import dynamic  # noqa: F401
from .modules import BNReLU2d, BNReLU3d, ConvReLU1d, ConvReLU2d, ConvReLU3d, LinearReLU

__all__ = ["LinearReLU", "ConvReLU1d", "ConvReLU2d", "ConvReLU3d", "BNReLU2d", "BNReLU3d",
           "dynamic"]
