"""Negative binomial distribution."""

from __future__ import annotations

import glasstorch as torch
import glasstorch.nn.functional as F

from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import (
    _EMPTY_SIZE,
    _expand_probs_or_logits,
    _set_probs_or_logits,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)

__all__ = ["NegativeBinomial"]


class NegativeBinomial(Distribution):
    """Number of successes (each of probability ``probs``) before ``total_count`` failures.

    Sampled as a Poisson whose rate is Gamma(total_count, (1 - p) / p) distributed.
    """

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        (total_count,), param, _ = _set_probs_or_logits(self, probs, logits, total_count)
        self.total_count = total_count.type_as(param)
        super().__init__(param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(NegativeBinomial, _instance)
        batch_shape = torch.Size(batch_shape)
        new.total_count = self.total_count.expand(batch_shape)
        _expand_probs_or_logits(new, self, batch_shape)
        super(NegativeBinomial, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @property
    def mean(self):
        return self.total_count * torch.exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / torch.sigmoid(-self.logits)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        """The shape of the parameter (``probs`` or ``logits``) it was built from."""
        return self._param.size()

    @lazy_property
    def _gamma(self):
        return Gamma(concentration=self.total_count, rate=torch.exp(-self.logits),
                     validate_args=False)

    def sample(self, sample_shape=_EMPTY_SIZE):
        with torch.no_grad():
            return torch.poisson(self._gamma.sample(sample_shape=sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized = (self.total_count * F.logsigmoid(-self.logits)
                            + value * F.logsigmoid(self.logits))
        log_normalization = (-torch.lgamma(self.total_count + value) + torch.lgamma(1.0 + value)
                             + torch.lgamma(self.total_count))
        # C(n + k - 1, k) is 1 when n + k = 0 (lgamma(0) would make it nan)
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return log_unnormalized - log_normalization
