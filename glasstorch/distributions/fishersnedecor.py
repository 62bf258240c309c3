"""Fisher-Snedecor (F) distribution."""

from __future__ import annotations

import math

import glasstorch as torch

from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import _EMPTY_SIZE, broadcast_all

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """F(df1, df2): the ratio of two scaled chi-squared variables, (X1 / df1) / (X2 / df2)."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        # Gamma(df/2, df/2) is Chi2(df) / df
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1 * 0.5)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2 * 0.5)
        super().__init__(self.df1.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(FisherSnedecor, _instance)
        batch_shape = torch.Size(batch_shape)
        new.df1 = self.df1.expand(batch_shape)
        new.df2 = self.df2.expand(batch_shape)
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        super(FisherSnedecor, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        df2 = self.df2.clone()
        df2[df2 <= 2] = math.nan
        return df2 / (df2 - 2)

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        mode[self.df1 <= 2] = math.nan
        return mode

    @property
    def variance(self):
        df2 = self.df2.clone()
        df2[df2 <= 4] = math.nan
        return (2 * df2.pow(2) * (self.df1 + df2 - 2)
                / (self.df1 * (df2 - 2).pow(2) * (df2 - 4)))

    def rsample(self, sample_shape=_EMPTY_SIZE):
        x1 = self._gamma1.rsample(sample_shape)
        x2 = self._gamma2.rsample(sample_shape)
        tiny = torch.finfo(x2.dtype).tiny
        x2 = x2.clamp(min=tiny)
        y = x1 / x2
        y.detach().clamp_(min=tiny)
        return y

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a = self.df1 * 0.5
        b = self.df2 * 0.5
        ratio = self.df1 / self.df2
        return (torch.lgamma(a + b) - torch.lgamma(a) - torch.lgamma(b)
                + a * ratio.log() + (a - 1) * torch.log(value)
                - (a + b) * torch.log1p(ratio * value))
