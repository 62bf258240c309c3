"""Bernoulli distribution."""

from __future__ import annotations

import glasstorch as torch

from . import constraints
from .exp_family import ExponentialFamily
from .utils import (
    _EMPTY_SIZE,
    _expand_probs_or_logits,
    _set_probs_or_logits,
    broadcast_all,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)

__all__ = ["Bernoulli"]


def _bce_with_logits(logits, target):
    # the fused loss, stable for any logit; its logit derivative sigmoid(l) - t has no kink at
    # l = 0 (a max(l, 0) - l t + log1p(exp(-|l|)) composite would differentiate wrongly there)
    from glasstorch.nn.functional import binary_cross_entropy_with_logits
    return binary_cross_entropy_with_logits(logits, target, reduction="none")


class Bernoulli(ExponentialFamily):
    """Bernoulli distribution given by ``probs`` or ``logits`` (exactly one)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        _, param, is_scalar = _set_probs_or_logits(self, probs, logits)
        batch_shape = torch.Size() if is_scalar else param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Bernoulli, _instance)
        batch_shape = torch.Size(batch_shape)
        _expand_probs_or_logits(new, self, batch_shape)
        super(Bernoulli, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return torch.where(self.probs == 0.5, torch.full_like(mode, float("nan")), mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        """The shape of the parameter tensor (``probs`` or ``logits``) the distribution was built
        from."""
        return self._param.size()

    def sample(self, sample_shape=_EMPTY_SIZE):
        shape = self._extended_shape(sample_shape)
        with torch.no_grad():
            return torch.bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -_bce_with_logits(logits, value)

    def entropy(self):
        return _bce_with_logits(self.logits, self.probs)

    def enumerate_support(self, expand=True):
        values = torch.arange(2, dtype=self._param.dtype)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + self._batch_shape)
        return values

    @property
    def _natural_params(self):
        return (torch.logit(self.probs),)

    def _log_normalizer(self, x):
        return torch.log1p(torch.exp(x))
