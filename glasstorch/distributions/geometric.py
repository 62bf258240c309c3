"""Geometric distribution: the number of failures before the first success."""

from __future__ import annotations

import glasstorch as torch

from . import constraints
from .distribution import Distribution
from .utils import (
    _EMPTY_SIZE,
    _expand_probs_or_logits,
    _set_probs_or_logits,
    broadcast_all,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)

__all__ = ["Geometric"]


class Geometric(Distribution):
    """Geometric distribution on {0, 1, 2, ...} with success probability ``probs`` (or
    ``logits``; exactly one)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        _, param, scalar = _set_probs_or_logits(self, probs, logits)
        batch_shape = torch.Size() if scalar else param.size()
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            # a success probability of 0 would never stop
            value = self.probs
            valid = value > 0
            if not bool(valid.all()):
                invalid = value.data[~valid]
                raise ValueError(
                    f"Expected parameter probs ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {repr(self)} to be positive but "
                    f"found invalid values:\n{invalid}")

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Geometric, _instance)
        batch_shape = torch.Size(batch_shape)
        _expand_probs_or_logits(new, self, batch_shape)
        super(Geometric, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return torch.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    @lazy_property
    def logits(self):
        """Log-odds of success."""
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        """Probability of success."""
        return logits_to_probs(self.logits, is_binary=True)

    def sample(self, sample_shape=_EMPTY_SIZE):
        shape = self._extended_shape(sample_shape)
        tiny = torch.finfo(self.probs.dtype).tiny
        with torch.no_grad():
            u = torch.rand(shape, dtype=self.probs.dtype).clamp(min=tiny)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = probs.clone()
        # p = 1 at value 0: log(1 - p) * 0 would be nan; the probability is 1
        probs[(probs == 1) & (value == 0)] = 0
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        from glasstorch.nn.functional import binary_cross_entropy_with_logits
        # the fused loss: its logit derivative sigmoid(l) - p has no kink at l = 0
        return binary_cross_entropy_with_logits(self.logits, self.probs,
                                                reduction="none") / self.probs
