"""``torch.ao.nn.quantized``: modules computing on quantized tensors with int8 kernels."""

from . import dynamic  # noqa: F401
from .modules import (
    Conv2d,
    DeQuantize,
    FloatFunctional,
    Linear,
    LinearPackedParams,
    QFunctional,
    Quantize,
)

__all__ = ["Quantize", "DeQuantize", "Linear", "LinearPackedParams", "Conv2d",
           "FloatFunctional", "QFunctional", "dynamic"]
