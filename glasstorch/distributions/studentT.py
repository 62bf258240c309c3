"""Student's t distribution."""

from __future__ import annotations

import math

import glasstorch as torch

from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import _EMPTY_SIZE, _standard_normal, broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t with ``df`` degrees of freedom, location ``loc`` and scale ``scale``.

    ``rsample`` draws loc + scale * N / sqrt(Chi2(df) / df), differentiable in all three.
    """

    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    @property
    def mean(self):
        m = self.loc.clone()
        m[self.df <= 1] = math.nan
        return m

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        m = self.df.clone()
        m[self.df > 2] = (self.scale[self.df > 2].pow(2) * self.df[self.df > 2]
                          / (self.df[self.df > 2] - 2))
        m[(self.df <= 2) & (self.df > 1)] = math.inf
        m[self.df <= 1] = math.nan
        return m

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = torch.Size(batch_shape)
        new.df = self.df.expand(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new._chi2 = self._chi2.expand(batch_shape)
        super(StudentT, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=_EMPTY_SIZE):
        shape = self._extended_shape(sample_shape)
        x = _standard_normal(shape, self.df.dtype)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * x * torch.rsqrt(z / self.df)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        log_norm = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
                    + torch.lgamma(0.5 * self.df) - torch.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * torch.log1p(y.pow(2) / self.df) - log_norm

    def entropy(self):
        half_df = 0.5 * self.df
        log_beta = torch.lgamma(half_df) + math.lgamma(0.5) - torch.lgamma(half_df + 0.5)
        return (self.scale.log()
                + (half_df + 0.5) * (torch.digamma(half_df + 0.5) - torch.digamma(half_df))
                + 0.5 * self.df.log() + log_beta)
