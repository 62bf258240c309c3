"""Generalized Pareto distribution."""

from __future__ import annotations

import math

import glasstorch as torch

from . import constraints
from .distribution import Distribution
from .utils import _EMPTY_SIZE, broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """Tail distribution with location ``loc``, scale ``scale`` and shape ``concentration`` xi:
    cdf 1 - (1 + xi z)^(-1/xi) with z = (x - loc) / scale (1 - exp(-z) at xi = 0).

    Support is [loc, inf) for xi >= 0 and [loc, loc - scale / xi] for xi < 0.
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        super().__init__(self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(GeneralizedPareto, _instance)
        batch_shape = torch.Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        super(GeneralizedPareto, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _split(self):
        """(xi == 0 mask, xi with zeros replaced by 1) so 1/xi stays finite on both branches."""
        zero = self.concentration == 0
        return zero, torch.where(zero, torch.ones_like(self.concentration), self.concentration)

    def rsample(self, sample_shape=_EMPTY_SIZE):
        shape = self._extended_shape(sample_shape)
        u = torch.rand(shape, dtype=self.loc.dtype)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        zero, xi = self._split()
        log_density = torch.where(zero, -z, -(1 / xi + 1) * torch.log1p(xi * z))
        return log_density - self.scale.log()

    def log_survival_function(self, value):
        """log(1 - cdf(value))."""
        z = (value - self.loc) / self.scale
        zero, xi = self._split()
        return torch.where(zero, -z, -torch.log1p(xi * z) / xi)

    def log_cdf(self, value):
        """log(cdf(value))."""
        return torch.log1p(-torch.exp(self.log_survival_function(value)))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return torch.exp(self.log_cdf(value))

    def icdf(self, value):
        zero, xi = self._split()
        # -log1p(-p) is the xi -> 0 limit of ((1 - p)^-xi - 1) / xi
        z = torch.where(zero, -torch.log1p(-value), torch.expm1(-xi * torch.log1p(-value)) / xi)
        return self.loc + self.scale * z

    @property
    def mean(self):
        xi = self.concentration
        return torch.where(xi < 1, self.loc + self.scale / (1 - xi), math.nan)

    @property
    def variance(self):
        xi = self.concentration
        return torch.where(xi < 0.5, self.scale.pow(2) / ((1 - xi).pow(2) * (1 - 2 * xi)),
                           math.nan)

    def entropy(self):
        return torch.log(self.scale) + self.concentration + 1

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = torch.where(self.concentration < 0, lower - self.scale / self.concentration,
                            math.inf)
        return constraints.interval(lower, upper)
