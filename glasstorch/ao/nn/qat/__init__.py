"""``torch.ao.nn.qat``: quantization-aware training modules."""

from .modules import Conv2d, Linear

__all__ = ["Linear", "Conv2d"]
