"""LKJ distribution over Cholesky factors of correlation matrices."""

from __future__ import annotations

import math

import glasstorch as torch

from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import _EMPTY_SIZE, broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """Lower Cholesky factors L of correlation matrices with density proportional to
    det(L L^T)^(concentration - 1), for ``dim`` x ``dim`` matrices.

    Sampled by the onion method (Lewandowski, Kurowicka & Joe, 2009): row i is a random
    direction on the i-sphere scaled by sqrt of a Beta(i / 2, c + (dim - 2 - i) / 2) draw.
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        event_shape = torch.Size((dim, dim))
        self._beta = self._row_beta(self.concentration)
        super().__init__(batch_shape, event_shape, validate_args)

    def _row_beta(self, concentration):
        marginal = concentration + 0.5 * (self.dim - 2)
        offset = torch.cat([torch.zeros(1, dtype=concentration.dtype),
                            torch.arange(self.dim - 1, dtype=concentration.dtype)])
        return Beta(offset + 0.5, marginal.unsqueeze(-1) - 0.5 * offset)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = torch.Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        super(LKJCholesky, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=_EMPTY_SIZE):
        with torch.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u = torch.randn(self._extended_shape(sample_shape), dtype=y.dtype).tril(-1)
            u = u / u.norm(dim=-1, keepdim=True)
            u[..., 0, :] = 0.0  # the first row has no off-diagonal entries (0 / 0 above)
            w = torch.sqrt(y) * u
            tiny = torch.finfo(w.dtype).tiny
            diag = torch.clamp(1 - w.pow(2).sum(-1), min=tiny).sqrt()
            return w + torch.diag_embed(diag)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diag = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = torch.arange(2, self.dim + 1, dtype=diag.dtype)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (order * diag.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalize = (0.5 * dm1 * math.log(math.pi) + torch.mvlgamma(alpha - 0.5, dm1)
                     - torch.lgamma(alpha) * dm1)
        return unnormalized - normalize
