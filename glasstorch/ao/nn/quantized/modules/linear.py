"""Quantized Linear (``torch.ao.nn.quantized.Linear``): quint8 in, quint8 out, qint8 weight,
float bias; the int8 kernel is ``_kernels.linear`` (fbgemm's arithmetic)."""

from __future__ import annotations

import glasstorch as torch
from glasstorch import nn

from .. import _kernels
from .utils import _quantize_weight, _unwrap_fused, _zeros_qweight

__all__ = ["LinearPackedParams", "Linear"]


class LinearPackedParams(nn.Module):
    """Holds a quantized linear layer's (weight, bias); saved in the state dict as
    ``dtype`` and ``_packed_params`` = (weight, bias), as torch writes them."""

    _version = 3

    def __init__(self, dtype=torch.qint8):
        super().__init__()
        self.dtype = dtype
        self.set_weight_bias(_zeros_qweight((1, 1)) if dtype is torch.qint8 else
                             torch.zeros(1, 1), None)

    def set_weight_bias(self, weight, bias):
        """Store a qint8 ``weight`` (float16 packing: a float weight, kept as its float16
        values saturated to float16's range, in float32 as torch unpacks them) and a float
        ``bias`` (or None)."""
        if self.dtype is torch.float16:
            weight = _fp16_weight(weight)
        elif self.dtype is not torch.qint8:
            raise RuntimeError("glasstorch: only qint8 and float16 packed linear weights are "
                               "supported")
        # one plain attribute, so a bias Parameter is held, not registered (torch keeps
        # both inside its packed object)
        self._pair = (weight, bias)

    def _weight_bias(self):
        return self._pair

    def forward(self, x):
        """Return ``x`` (a parameter holder)."""
        return x

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "dtype"] = self.dtype
        destination[prefix + "_packed_params"] = self._weight_bias()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        self.dtype = state_dict.pop(prefix + "dtype", torch.qint8)
        weight, bias = state_dict.pop(prefix + "_packed_params")
        self.set_weight_bias(weight, bias)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys,
                                      unexpected_keys, error_msgs)

    def __repr__(self):
        return repr(self._weight_bias())


def _fp16_weight(weight):
    # fbgemm's fp16 packing saturates out-of-range weights to +-65504 instead of inf
    w = weight.detach().float().clamp(-65504.0, 65504.0)
    return w.half().float()


class Linear(nn.Module):
    """A linear layer on quantized tensors: ``y_q = requant(x_q @ w_q.T + bias)`` with output
    ``scale`` and ``zero_point``."""

    _version = 3
    _FLOAT_MODULE = (nn.Linear, nn.modules.linear.NonDynamicallyQuantizableLinear) \
        if hasattr(nn.modules.linear, "NonDynamicallyQuantizableLinear") else (nn.Linear,)
    _RELU = False

    def __init__(self, in_features, out_features, bias_=True, dtype=torch.qint8):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        bias = torch.zeros(out_features) if bias_ else None
        self._packed_params = LinearPackedParams(dtype)
        shape = (out_features, in_features)
        self._packed_params.set_weight_bias(
            _zeros_qweight(shape) if dtype is torch.qint8 else torch.zeros(shape), bias)
        self.scale = 1.0
        self.zero_point = 0

    def _get_name(self):
        return "QuantizedLinear"

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"scale={self.scale}, zero_point={self.zero_point}, "
                f"qscheme={self.weight().qscheme()}")

    def __repr__(self):
        # torch hides the packed-params holder: one line unless other children were added
        lines = [f"({name}): " + repr(m).replace("\n", "\n  ")
                 for name, m in self._modules.items()
                 if m is not None and not isinstance(m, LinearPackedParams)]
        if not lines:
            return f"{self._get_name()}({self.extra_repr()})"
        body = "\n  ".join([self.extra_repr()] + lines)
        return f"{self._get_name()}(\n  {body}\n)"

    def forward(self, x):
        """The quantized output for quint8 input ``x``."""
        return _kernels.linear(x, self.weight(), self.bias(), self.scale, self.zero_point,
                               relu=self._RELU)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "scale"] = torch.tensor(self.scale)
        destination[prefix + "zero_point"] = torch.tensor(self.zero_point)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        self.scale = float(state_dict.pop(prefix + "scale"))
        self.zero_point = int(state_dict.pop(prefix + "zero_point"))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys,
                                      unexpected_keys, error_msgs)

    def _weight_bias(self):
        return self._packed_params._weight_bias()

    def weight(self):
        """The qint8 weight."""
        return self._weight_bias()[0]

    def bias(self):
        """The float bias (or None)."""
        return self._weight_bias()[1]

    def set_weight_bias(self, w, b):
        """Set the qint8 weight and float bias."""
        self._packed_params.set_weight_bias(w, b)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """The quantized counterpart of an observed float ``mod`` (its qconfig's weight
        observer quantizes the weight, its activation observer gives the output qparams)."""
        if not hasattr(mod, "qconfig") or mod.qconfig is None:
            raise AssertionError("Input float module must have qconfig defined")
        act = getattr(mod, "activation_post_process", None)
        if act is None:
            raise AssertionError("Input float module must have activation_post_process "
                                 "(run prepare and calibrate first)")
        lin = _unwrap_fused(mod)
        # a QAT module's own weight fake-quantize is the weight observer (seeing the weight
        # once more, as torch does)
        wobs = getattr(mod, "weight_fake_quant", None) or mod.qconfig.weight()
        wobs(lin.weight)
        if wobs.dtype is not torch.qint8:
            raise AssertionError("Weight observer must have dtype torch.qint8")
        act_scale, act_zp = act.calculate_qparams()
        q = cls(lin.in_features, lin.out_features, dtype=wobs.dtype)
        q.set_weight_bias(_quantize_weight(lin.weight.float(), wobs),
                          None if lin.bias is None else lin.bias.detach().clone())
        q.scale = float(act_scale)
        q.zero_point = int(act_zp)
        return q
