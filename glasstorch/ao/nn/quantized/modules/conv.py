"""Quantized Conv2d (``torch.ao.nn.quantized.Conv2d``): quint8 NCHW in and out, qint8 weight
(per tensor or per output channel), float bias; kernel ``_kernels.conv``."""

from __future__ import annotations

import glasstorch as torch
from glasstorch import nn

from .. import _kernels
from .utils import _quantize_weight, _unwrap_fused, _zeros_qweight

__all__ = ["Conv2d"]


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


class Conv2d(nn.Module):
    """A 2-d convolution on quantized tensors (zero padding contributes the input's zero
    point), output requantized with ``scale`` and ``zero_point``."""

    _version = 3
    _FLOAT_MODULE = (nn.Conv2d,)
    _RELU = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None):
        super().__init__()
        if padding_mode != "zeros":
            raise NotImplementedError(f"glasstorch: quantized Conv2d supports padding_mode "
                                      f"'zeros' only, got '{padding_mode}'")
        if in_channels % groups or out_channels % groups:
            raise ValueError("in_channels and out_channels must be divisible by groups")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride = _pair(kernel_size), _pair(stride)
        self.padding, self.dilation = _pair(padding), _pair(dilation)
        self.transposed = False
        self.output_padding = (0, 0)
        self.groups = groups
        self.padding_mode = padding_mode
        w = _zeros_qweight((out_channels, in_channels // groups) + self.kernel_size)
        self.set_weight_bias(w, torch.zeros(out_channels) if bias else None)
        self.scale = 1.0
        self.zero_point = 0

    def _get_name(self):
        return "QuantizedConv2d"

    def extra_repr(self):
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}, scale={self.scale}, zero_point={self.zero_point}")
        if self.padding != (0, 0):
            s += f", padding={self.padding}"
        if self.dilation != (1, 1):
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias() is None:
            s += ", bias=False"
        return s

    def set_weight_bias(self, w, b):
        """Set the qint8 weight and float bias."""
        self._weight, self._bias = w, b

    def _weight_bias(self):
        return self._weight, self._bias

    def weight(self):
        """The qint8 weight."""
        return self._weight

    def bias(self):
        """The float bias (or None)."""
        return self._bias

    def forward(self, input):
        """The quantized convolution of quint8 ``input`` (N, C, H, W)."""
        if input.ndim != 4:
            raise ValueError("Input shape must be `(N, C, H, W)`!")
        return _kernels.conv(input, self._weight, self._bias, self.stride, self.padding,
                             self.dilation, self.groups, self.scale, self.zero_point,
                             relu=self._RELU)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "weight"] = self._weight
        destination[prefix + "bias"] = self._bias
        destination[prefix + "scale"] = torch.tensor(self.scale)
        destination[prefix + "zero_point"] = torch.tensor(self.zero_point)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        self.set_weight_bias(state_dict.pop(prefix + "weight"), state_dict.pop(prefix + "bias"))
        self.scale = float(state_dict.pop(prefix + "scale"))
        self.zero_point = int(state_dict.pop(prefix + "zero_point"))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys,
                                      unexpected_keys, error_msgs)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """The quantized counterpart of an observed float Conv2d (or fused ConvReLU2d)."""
        if not hasattr(mod, "qconfig") or mod.qconfig is None:
            raise AssertionError("Input float module must have qconfig defined.")
        act = getattr(mod, "activation_post_process", None)
        if act is None:
            raise AssertionError("Input float module must have activation_post_process "
                                 "(run prepare and calibrate first)")
        conv = _unwrap_fused(mod)
        # a QAT module's own weight fake-quantize is the weight observer (seeing the weight
        # once more, as torch does)
        wobs = getattr(mod, "weight_fake_quant", None) or mod.qconfig.weight()
        wobs(conv.weight)
        if wobs.dtype is not torch.qint8:
            raise AssertionError("Weight observer must have a dtype of qint8")
        act_scale, act_zp = act.calculate_qparams()
        q = cls(conv.in_channels, conv.out_channels, conv.kernel_size, conv.stride,
                conv.padding, conv.dilation, conv.groups, conv.bias is not None,
                conv.padding_mode)
        q.set_weight_bias(_quantize_weight(conv.weight.float(), wobs),
                          None if conv.bias is None else conv.bias.detach().clone())
        q.scale = float(act_scale)
        q.zero_point = int(act_zp)
        return q
