"""LinearCrossEntropyLoss: a Linear layer and cross entropy in one module."""

from __future__ import annotations

import math

from .. import functional as F
from .linear import Linear
from .module import Module

__all__ = ["LinearCrossEntropyLoss"]


class LinearCrossEntropyLoss(Module):
    """``F.linear_cross_entropy`` with its own projection: ``in_features`` inputs to
    ``num_classes`` (times ``out_features`` for a K-dimensional loss) logits."""

    def __init__(self, in_features, num_classes, *, out_features=(), bias=False, device=None,
                 dtype=None, reduction="mean", weight=None, ignore_index=None,
                 label_smoothing=0.0, options=None):
        super().__init__()
        self.in_features = in_features
        self.num_classes = num_classes
        self.out_features = tuple(out_features)
        self.reduction = reduction
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        self.options = options
        self.linear = Linear(in_features, num_classes * math.prod(self.out_features), bias=bias,
                             device=device, dtype=dtype)
        self.register_buffer("weight", weight)

    def forward(self, input, target):
        shape = (self.num_classes,) + self.out_features
        w = self.linear.weight.reshape(shape + (self.in_features,))
        b = None if self.linear.bias is None else self.linear.bias.reshape(shape)
        return F.linear_cross_entropy(input, w, target, linear_bias=b, weight=self.weight,
                                      reduction=self.reduction, ignore_index=self.ignore_index,
                                      label_smoothing=self.label_smoothing, options=self.options)

    def extra_repr(self):
        return (f"in_features={self.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
                f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
                f"label_smoothing={self.label_smoothing}, options={self.options}")
