"""Dynamically quantized Linear (``torch.ao.nn.quantized.dynamic.Linear``)."""

from __future__ import annotations

import glasstorch as torch

from ... import _kernels
from ...modules import linear as _qlinear
from ...modules.utils import _quantize_weight, _unwrap_fused

__all__ = ["Linear"]


class Linear(_qlinear.Linear):
    """``y = x @ dequant(w_q).T + b`` computed as fbgemm does: ``x`` quantized to quint8 with
    7-bit qparams from its own range, int32 accumulation, float32 output."""

    _version = 4

    def __init__(self, in_features, out_features, bias_=True, dtype=torch.qint8):
        super().__init__(in_features, out_features, bias_, dtype=dtype)
        self.version = 4

    def _get_name(self):
        return "DynamicQuantizedLinear"

    def extra_repr(self):
        dtype = self._packed_params.dtype
        text = f"in_features={self.in_features}, out_features={self.out_features}, dtype={dtype}"
        return text if dtype is torch.float16 else f"{text}, qscheme={self.weight().qscheme()}"

    def forward(self, x):
        """The float output for float input ``x``."""
        if self._packed_params.dtype is torch.float16:
            return _kernels.linear_dynamic_fp16(x, self.weight(), self.bias(), relu=self._RELU)
        return _kernels.linear_dynamic(x, self.weight(), self.bias(), reduce_range=True,
                                       relu=self._RELU)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """The dynamically quantized counterpart of float Linear ``mod`` (weights observed by
        its qconfig's weight observer, or the default dynamic one)."""
        from glasstorch.ao.quantization.qconfig import default_dynamic_qconfig
        lin = _unwrap_fused(mod)
        qconfig = getattr(mod, "qconfig", None) or default_dynamic_qconfig
        wobs = qconfig.weight()
        if wobs.dtype not in (torch.qint8, torch.float16):
            raise RuntimeError(f"Unsupported dtype specified for dynamic quantized Linear! "
                               f"{wobs.dtype}")
        wobs(lin.weight)
        q = cls(lin.in_features, lin.out_features, dtype=wobs.dtype)
        if wobs.dtype is torch.float16:
            # torch's float16 packing keeps the float module's bias parameter itself, so the
            # output's bias add is differentiable
            q.set_weight_bias(lin.weight.float(), lin.bias)
        else:
            q.set_weight_bias(_quantize_weight(lin.weight.float(), wobs),
                              None if lin.bias is None else lin.bias.detach().clone())
        return q

