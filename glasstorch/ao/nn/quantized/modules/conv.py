"""Quantized convolutions (``torch.ao.nn.quantized.Conv1d/2d/3d``): quint8 N-C-spatial in and
out, qint8 weight (per tensor or per output channel), float bias; kernel ``_kernels.conv``."""

from __future__ import annotations

import numpy as np

import glasstorch as torch
from glasstorch import nn
from glasstorch._ops import quantized as _q

from .. import _kernels
from .utils import _quantize_weight, _unwrap_fused, _zeros_qweight

__all__ = ["Conv1d", "Conv2d", "Conv3d"]

# np.pad's name for the one other padding mode torch's quantized convolutions take
_PAD_MODES = {"reflect": "reflect"}
_LAYOUTS = {1: "(N, C, L)", 2: "(N, C, H, W)", 3: "(N, C, D, H, W)"}


def _ntuple(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


class _ConvNd(nn.Module):
    """A convolution on quantized tensors over ``_NDIM`` spatial dims (zero padding contributes
    the input's zero point; reflect padding copies input values), output requantized with
    ``scale`` and ``zero_point``."""

    _version = 3
    _NDIM = 2
    _FLOAT_MODULE = ()
    _RELU = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None):
        super().__init__()
        n = self._NDIM
        if padding_mode != "zeros" and padding_mode not in _PAD_MODES:
            raise ValueError(f"'padding_mode' {padding_mode} is not supported by quantized "
                             f"convolution")
        if in_channels % groups or out_channels % groups:
            raise ValueError("in_channels and out_channels must be divisible by groups")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride = _ntuple(kernel_size, n), _ntuple(stride, n)
        self.padding, self.dilation = _ntuple(padding, n), _ntuple(dilation, n)
        self.transposed = False
        self.output_padding = (0,) * n
        self.groups = groups
        self.padding_mode = padding_mode
        w = _zeros_qweight((out_channels, in_channels // groups) + self.kernel_size)
        self.set_weight_bias(w, torch.zeros(out_channels) if bias else None)
        self.scale = 1.0
        self.zero_point = 0

    def _get_name(self):
        return f"QuantizedConv{self._NDIM}d"

    def extra_repr(self):
        zeros = (0,) * self._NDIM
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}, scale={self.scale}, zero_point={self.zero_point}")
        if self.padding != zeros:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * self._NDIM:
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
        """The quantized convolution of quint8 ``input`` (N, C, *spatial)."""
        if input.ndim != self._NDIM + 2:
            raise ValueError(f"Input shape must be `{_LAYOUTS[self._NDIM]}`!")
        padding = self.padding
        if self.padding_mode != "zeros":
            input = _pad_quantized(input, padding, _PAD_MODES[self.padding_mode])
            padding = (0,) * self._NDIM
        return _kernels.conv(input, self._weight, self._bias, self.stride, padding,
                             self.dilation, self.groups, self.scale, self.zero_point,
                             relu=self._RELU, nd=self._NDIM)

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
        """The quantized counterpart of an observed float convolution (or fused ConvReLU)."""
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


def _pad_quantized(x, padding, mode):
    """``x`` padded on every spatial dim by copying its own stored values (the integers keep
    their meaning, so the qparams stay)."""
    widths = [(0, 0), (0, 0)] + [(p, p) for p in padding]
    return _q._like(x, np.pad(x._data, widths, mode=mode))


class Conv1d(_ConvNd):
    """A 1-d convolution on quantized tensors."""

    _NDIM = 1
    _FLOAT_MODULE = (nn.Conv1d,)


class Conv2d(_ConvNd):
    """A 2-d convolution on quantized tensors."""

    _NDIM = 2
    _FLOAT_MODULE = (nn.Conv2d,)


class Conv3d(_ConvNd):
    """A 3-d convolution on quantized tensors."""

    _NDIM = 3
    _FLOAT_MODULE = (nn.Conv3d,)
