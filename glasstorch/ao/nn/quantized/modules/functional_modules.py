"""FloatFunctional / QFunctional: modules standing for tensor arithmetic (residual adds,
concatenation) so that ``prepare`` can observe the result and ``convert`` can quantize it."""

from __future__ import annotations

import glasstorch as torch
from glasstorch import nn

from .. import _kernels

__all__ = ["FloatFunctional", "QFunctional"]


class FloatFunctional(nn.Module):
    """Float arithmetic with an ``activation_post_process`` applied to each result (an
    Identity until ``prepare`` puts an observer there). Use its methods instead of ``+``."""

    def __init__(self):
        super().__init__()
        self.activation_post_process = nn.Identity()

    def forward(self, x):
        """Not callable: use ``add``, ``cat``... instead."""
        raise RuntimeError("FloatFunctional is not intended to use the 'forward'. Please use "
                           "the underlying operation")

    def add(self, x, y):
        """``x + y``, observed."""
        return self.activation_post_process(torch.add(x, y))

    def add_scalar(self, x, y):
        """``x + y`` for a Python number ``y`` (not observed, as in torch)."""
        return torch.add(x, y)

    def mul(self, x, y):
        """``x * y``, observed."""
        return self.activation_post_process(torch.mul(x, y))

    def mul_scalar(self, x, y):
        """``x * y`` for a Python number ``y`` (not observed, as in torch)."""
        return torch.mul(x, y)

    def cat(self, x, dim=0):
        """``torch.cat(x, dim)``, observed."""
        return self.activation_post_process(torch.cat(x, dim=dim))

    def add_relu(self, x, y):
        """``relu(x + y)``, observed."""
        return self.activation_post_process(torch.nn.functional.relu(torch.add(x, y)))

    def matmul(self, x, y):
        """``x @ y``, observed."""
        return self.activation_post_process(torch.matmul(x, y))


class QFunctional(nn.Module):
    """The quantized counterpart of FloatFunctional: results requantized with ``scale`` /
    ``zero_point`` (from the observer, by ``convert``)."""

    def __init__(self):
        super().__init__()
        self.scale = 1.0
        self.zero_point = 0
        self.activation_post_process = nn.Identity()

    def _get_name(self):
        return "QFunctional"

    def extra_repr(self):
        return f"scale={self.scale}, zero_point={self.zero_point}"

    def forward(self, x):
        """Not callable: use ``add``, ``cat``... instead."""
        raise RuntimeError("Functional is not intended to use the 'forward'. Please use the "
                           "underlying operation")

    def add(self, x, y):
        """quantized::add of two quint8 tensors."""
        return self.activation_post_process(
            _kernels.add(x, y, self.scale, self.zero_point))

    def add_relu(self, x, y):
        """quantized::add_relu of two quint8 tensors."""
        return self.activation_post_process(
            _kernels.add(x, y, self.scale, self.zero_point, relu=True))

    def mul(self, x, y):
        """quantized::mul of two quint8 tensors."""
        return self.activation_post_process(_kernels.mul(x, y, self.scale, self.zero_point))

    def mul_scalar(self, x, y):
        """quantized::mul_scalar: the same integers with the scale multiplied by ``|y|``
        (a negative ``y`` mirrors the integers around the zero point range)."""
        return _kernels.mul_scalar(x, y)

    def add_scalar(self, x, y):
        """quantized::add_scalar: ``y`` rounded to a whole number of quanta and folded into
        the zero point (or, when the zero point would leave [0, 255], into a wider scale)."""
        return _kernels.add_scalar(x, y)

    def matmul(self, x, y):
        """quantized::matmul of two quint8 tensors, stored with this module's qparams."""
        return self.activation_post_process(
            _kernels.matmul(x, y, self.scale, self.zero_point))

    def cat(self, x, dim=0):
        """quantized::cat: the inputs requantized to this module's qparams."""
        return self.activation_post_process(
            _kernels.cat(x, dim, self.scale, self.zero_point))

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

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """A QFunctional with the qparams ``mod``'s observer computed."""
        if type(mod.activation_post_process) is nn.Identity:
            raise AssertionError("Float module must have observer attached")
        scale, zp = mod.activation_post_process.calculate_qparams()
        new = cls()
        new.scale = float(scale)
        new.zero_point = int(zp)
        return new
