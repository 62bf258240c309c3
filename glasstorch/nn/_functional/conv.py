"""torch.nn.functional convolutions (torch's signatures) over ``glasstorch._ops.conv``."""

from __future__ import annotations

from ..._ops import conv as _C

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "conv_tbc"]

conv1d = _C.conv1d
conv2d = _C.conv2d
conv3d = _C.conv3d
conv_transpose1d = _C.conv_transpose1d
conv_transpose2d = _C.conv_transpose2d
conv_transpose3d = _C.conv_transpose3d


def conv_tbc(input, weight, bias, pad=0):
    """1-D convolution of time-batch-channel input ``(T, B, C)`` with weight ``(k, C, O)``."""
    x = input.permute(1, 2, 0)
    w = weight.permute(2, 1, 0)
    return _C.conv1d(x, w, bias, padding=pad).permute(2, 0, 1)
