"""Von Mises distribution: the circular analogue of the normal."""

from __future__ import annotations

import math

import glasstorch as torch

from . import constraints
from .distribution import Distribution
from .utils import _EMPTY_SIZE, broadcast_all, lazy_property

__all__ = ["VonMises"]


def _log_i0(x):
    """log I0(x) for x >= 0, through the exponentially scaled i0e (no overflow)."""
    return torch.special.i0e(x).log() + x


def _rejection_sample(loc, concentration, proposal_r, x):
    """Best & Fisher's wrapped-Cauchy envelope: fills ``x`` (float64) with accepted angles."""
    done = torch.zeros(x.shape, dtype=torch.bool)
    while not done.all():
        u = torch.rand((3,) + tuple(x.shape), dtype=loc.dtype)
        u1, u2, u3 = u.unbind()
        z = torch.cos(math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        if accept.any():
            x = torch.where(accept, (u3 - 0.5).sign() * f.acos(), x)
            done = done | accept
    return (x + math.pi + loc).remainder(2 * math.pi) - math.pi


class VonMises(Distribution):
    """pdf exp(k cos(x - loc)) / (2 pi I0(k)) on [-pi, pi); ``concentration`` k > 0.

    ``sample`` uses rejection sampling (no reparameterisation, as torch)."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * torch.cos(value - self.loc)
        return log_prob - math.log(2 * math.pi) - _log_i0(self.concentration)

    @lazy_property
    def _proposal_r(self):
        kappa = self.concentration.double()
        tau = 1 + (1 + 4 * kappa**2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        r = (1 + rho**2) / (2 * rho)
        # for tiny kappa the expression above cancels badly; its series is 1/kappa + kappa
        r_small = 1 / kappa + kappa
        return torch.where(kappa < 1e-5, r_small, r)

    @torch.no_grad()
    def sample(self, sample_shape=_EMPTY_SIZE):
        shape = self._extended_shape(sample_shape)
        x = torch.empty(shape, dtype=torch.float64)
        out = _rejection_sample(self.loc.double(), self.concentration.double(),
                                self._proposal_r, x)
        return out.to(self.loc.dtype)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(VonMises, _instance)
        batch_shape = torch.Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        super(VonMises, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        k = self.concentration
        return 1 - torch.special.i1e(k) / torch.special.i0e(k)
