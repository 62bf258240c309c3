"""``torch.ao.nn.intrinsic.quantized``: quantized fused modules."""

from . import dynamic  # noqa: F401
from .modules import ConvReLU2d, LinearReLU

__all__ = ["LinearReLU", "ConvReLU2d", "dynamic"]
