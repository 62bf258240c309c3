"""``torch.ao.nn.intrinsic.qat``: fused QAT modules."""

from .modules import ConvReLU2d, LinearReLU

__all__ = ["LinearReLU", "ConvReLU2d"]
