"""``torch.ao.nn.intrinsic.quantized.dynamic``: dynamically quantized fused modules."""

from glasstorch.ao.nn.quantized.dynamic.modules.linear import Linear as _DLinear

from ...modules.fused import LinearReLU as _FLinearReLU

__all__ = ["LinearReLU"]


class LinearReLU(_DLinear):
    """Dynamically quantized Linear followed by ReLU (float output clamped at 0)."""

    _FLOAT_MODULE = (_FLinearReLU,)
    _RELU = True

    def _get_name(self):
        return "DynamicQuantizedLinearReLU"
