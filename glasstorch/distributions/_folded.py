"""The shared part of the half distributions: |X| for X centred at 0 with a scale."""

from __future__ import annotations

import math

import glasstorch as torch

from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform


class FoldedAtZero(TransformedDistribution):
    """|X| with X ~ ``base(0, scale)`` (``_base``: the symmetric distribution folded)."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _base = None
    _cast_value = False  # whether log_prob first converts value to the scale's dtype

    def __init__(self, scale, validate_args=None):
        base_dist = self._base(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(type(self), _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def scale(self):
        """The scale of the distribution that is folded."""
        return self.base_dist.scale

    @property
    def mode(self):
        return torch.zeros_like(self.scale)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        if self._cast_value:
            value = torch.as_tensor(value, dtype=self.base_dist.scale.dtype)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return torch.where(value >= 0, log_prob, -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)
