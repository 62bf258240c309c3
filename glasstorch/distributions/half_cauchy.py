"""Half-Cauchy distribution: |X| for X ~ Cauchy(0, scale)."""

from __future__ import annotations

import math

import glasstorch as torch

from ._folded import FoldedAtZero
from .cauchy import Cauchy

__all__ = ["HalfCauchy"]


class HalfCauchy(FoldedAtZero):
    """|X| with X ~ Cauchy(0, scale)."""

    _base = Cauchy
    _cast_value = True

    @property
    def mean(self):
        return torch.full(self._extended_shape(), math.inf, dtype=self.scale.dtype)

    @property
    def variance(self):
        return self.base_dist.variance
