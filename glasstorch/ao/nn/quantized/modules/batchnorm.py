"""Quantized batch normalization (``torch.ao.nn.quantized.BatchNorm2d/3d``): eval-mode
normalization with the running statistics, folded to ``x * alpha + beta`` per channel in
float32 as torch's kernel does, output stored with ``scale``/``zero_point``."""

from __future__ import annotations

import numpy as np

import glasstorch as torch
from glasstorch import nn

from .. import _kernels

__all__ = ["BatchNorm2d", "BatchNorm3d"]

_F32 = np.float32


class _BatchNorm(nn.modules.batchnorm._BatchNorm):
    _NDIM = 4
    _FLOAT_MODULE = ()
    _RELU = False

    def __init__(self, num_features, eps=1e-5, momentum=0.1, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, True, True)
        self.register_buffer("scale", torch.tensor(1.0))
        self.register_buffer("zero_point", torch.tensor(0))

    def _get_name(self):
        return f"QuantizedBatchNorm{self._NDIM - 2}d"

    def forward(self, input):
        """The quantized, normalized ``input`` (N, C, *spatial)."""
        if input.ndim != self._NDIM:
            raise ValueError(f"Input shape must be `{_SHAPES[self._NDIM]}`!")
        _kernels._check_input(input, f"batch_norm{self._NDIM - 2}d")
        w = self.weight.detach()._data.astype(_F32)
        b = self.bias.detach()._data.astype(_F32)
        mean = self.running_mean._data.astype(_F32)
        var = self.running_var._data.astype(_F32)
        alpha = (w / np.sqrt(var + _F32(self.eps))).astype(_F32)
        beta = (b - mean * alpha).astype(_F32)
        shape = (1, -1) + (1,) * (self._NDIM - 2)
        x = _kernels.dequantize(input)
        y = (x * alpha.reshape(shape) + beta.reshape(shape)).astype(_F32)
        return _kernels.quantize_out(y, float(self.scale), int(self.zero_point), self._RELU)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """The quantized counterpart of an observed float BatchNorm (or fused BNReLU)."""
        act = mod.activation_post_process
        bn = mod[0] if isinstance(mod, nn.Sequential) else mod
        q = cls(bn.num_features, bn.eps)
        q.weight, q.bias = bn.weight, bn.bias
        q.running_mean, q.running_var = bn.running_mean, bn.running_var
        scale, zp = act.calculate_qparams()
        q.scale, q.zero_point = scale.reshape(()).float(), zp.reshape(()).long()
        return q


_SHAPES = {4: "(N, C, H, W)", 5: "(N, C, D, H, W)"}


class BatchNorm2d(_BatchNorm):
    """Batch normalization of a quantized (N, C, H, W) tensor."""

    _NDIM = 4
    _FLOAT_MODULE = (nn.BatchNorm2d,)


class BatchNorm3d(_BatchNorm):
    """Batch normalization of a quantized (N, C, D, H, W) tensor."""

    _NDIM = 5
    _FLOAT_MODULE = (nn.BatchNorm3d,)
