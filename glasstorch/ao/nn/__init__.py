"""``torch.ao.nn``: quantized and fused modules."""

from . import intrinsic, qat, quantized  # noqa: F401

__all__ = ["intrinsic", "qat", "quantized"]
