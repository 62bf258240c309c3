"""Gamma distribution."""

from __future__ import annotations

from numbers import Number

import glasstorch as torch

from . import constraints
from .exp_family import ExponentialFamily
from .utils import _EMPTY_SIZE, _digamma, _gammainc, _lgamma, broadcast_all

__all__ = ["Gamma"]


class Gamma(ExponentialFamily):
    """Gamma distribution with shape ``concentration`` and inverse scale ``rate``.

    ``rsample`` is reparameterised: the gradient w.r.t. the concentration is the implicit
    one, -(dCDF/dalpha) / pdf, at the drawn sample.
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        if isinstance(concentration, Number) and isinstance(rate, Number):
            batch_shape = torch.Size()
        else:
            batch_shape = self.concentration.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gamma, _instance)
        batch_shape = torch.Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        super(Gamma, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=_EMPTY_SIZE):
        shape = self._extended_shape(sample_shape)
        value = torch._standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        # keep samples strictly positive (underflow would give log_prob = -inf)
        value.detach().clamp_(min=torch.finfo(value.dtype).tiny)
        return value

    def log_prob(self, value):
        value = torch.as_tensor(value, dtype=self.rate.dtype)
        if self._validate_args:
            self._validate_sample(value)
        return (torch.xlogy(self.concentration, self.rate)
                + torch.xlogy(self.concentration - 1, value)
                - self.rate * value - _lgamma(self.concentration))

    def entropy(self):
        return (self.concentration - torch.log(self.rate) + _lgamma(self.concentration)
                + (1.0 - self.concentration) * _digamma(self.concentration))

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return _lgamma(x + 1) + (x + 1) * torch.log(-y.reciprocal())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return _gammainc(self.concentration, self.rate * value)
