"""Wishart distribution over positive-definite matrices."""

from __future__ import annotations

import math
from numbers import Number

import glasstorch as torch

from . import constraints
from .chi2 import Chi2
from .exp_family import ExponentialFamily
from .multivariate_normal import _precision_to_scale_tril
from .utils import _EMPTY_SIZE, lazy_property

__all__ = ["Wishart"]


def _mvdigamma(x, p):
    """Multivariate digamma: sum over i < p of digamma(x - i / 2)."""
    shifts = torch.arange(p, dtype=x.dtype) * -0.5
    return torch.digamma(x.unsqueeze(-1) + shifts).sum(-1)


class Wishart(ExponentialFamily):
    """Wishart(df, V) with V given by exactly one of ``covariance_matrix``,
    ``precision_matrix`` (V^-1) or ``scale_tril`` (Cholesky of V).

    ``rsample`` uses the Bartlett decomposition: L A A^T L^T with A lower triangular,
    sqrt(Chi2(df - i)) on the diagonal and standard normals below it.
    """

    arg_constraints = {"covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky,
                       "df": constraints.greater_than(0)}
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if ((covariance_matrix is not None) + (scale_tril is not None)
                + (precision_matrix is not None)) != 1:
            # torch asserts here (AssertionError), unlike MultivariateNormal's ValueError
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        param = next(p for p in (covariance_matrix, precision_matrix, scale_tril)
                     if p is not None)
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, "
                             "with optional leading batch dimensions")
        if isinstance(df, Number):
            batch_shape = torch.Size(param.shape[:-2])
            self.df = torch.tensor(df, dtype=param.dtype)
        else:
            batch_shape = torch.broadcast_shapes(param.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        p = event_shape[-1]
        if bool((self.df <= p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        if scale_tril is not None:
            self.scale_tril = param.expand(batch_shape + (-1, -1))
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(batch_shape + (-1, -1))
            self._unbroadcasted_scale_tril = torch.linalg.cholesky(covariance_matrix)
        else:
            self.precision_matrix = param.expand(batch_shape + (-1, -1))
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        # the df constraint depends on the dimension
        self.arg_constraints = dict(self.arg_constraints, df=constraints.greater_than(p - 1))
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        self._dist_chi2 = Chi2(df=self.df.unsqueeze(-1)
                               - torch.arange(p, dtype=self._unbroadcasted_scale_tril.dtype)
                               .expand(batch_shape + (-1,)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = torch.Size(batch_shape)
        cov_shape = batch_shape + self.event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        new.arg_constraints = self.arg_constraints
        new._dist_chi2 = Chi2(df=new.df.unsqueeze(-1) - torch.arange(
            self.event_shape[-1], dtype=new._unbroadcasted_scale_tril.dtype)
            .expand(batch_shape + (-1,)))
        super(Wishart, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        Id = torch.eye(self._event_shape[-1], dtype=self._unbroadcasted_scale_tril.dtype)
        return torch.cholesky_solve(Id, self._unbroadcasted_scale_tril).expand(
            self._batch_shape + self._event_shape)

    def _df_matrix(self):
        return self.df.view(self._batch_shape + (1, 1))

    @property
    def mean(self):
        return self._df_matrix() * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = torch.where(factor <= 0, math.nan, factor)
        return factor.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diag_V = V.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix() * (V.pow(2) + torch.einsum("...i,...j->...ij", diag_V, diag_V))

    def _bartlett_sampling(self, sample_shape=_EMPTY_SIZE):
        p = self._event_shape[-1]
        noise = self._dist_chi2.rsample(sample_shape).sqrt().diag_embed(dim1=-2, dim2=-1)
        below = torch.randn(self._extended_shape(sample_shape), dtype=noise.dtype).tril(-1)
        A = noise + below
        chol = self._unbroadcasted_scale_tril @ A
        return chol @ chol.mT if p else chol

    def rsample(self, sample_shape=_EMPTY_SIZE, max_try_correction=None):
        """Bartlett samples; rare numerically singular draws are redrawn up to
        ``max_try_correction`` times (default: 3)."""
        sample_shape = torch.Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        is_singular = ~self.support.check(sample)
        if self._batch_shape:
            is_singular = is_singular.amax(self._batch_dims)
        tries = 3 if max_try_correction is None else max_try_correction
        while bool(is_singular.any()) and tries > 0:
            tries -= 1
            redraw = self._bartlett_sampling(sample_shape)
            sample = torch.where(is_singular.view(is_singular.shape
                                                  + (1,) * (sample.dim() - is_singular.dim())),
                                 redraw, sample)
            is_singular = ~self.support.check(sample)
            if self._batch_shape:
                is_singular = is_singular.amax(self._batch_dims)
        if bool(is_singular.any()):
            import warnings
            warnings.warn("Singular samples occurred in Wishart.rsample", stacklevel=2)
        return sample

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        return (-nu * (p * math.log(2) / 2 + L.diagonal(dim1=-2, dim2=-1).log().sum(-1))
                - torch.mvlgamma(nu / 2, p)
                + (nu - (p + 1)) / 2 * torch.linalg.slogdet(value).logabsdet
                - torch.cholesky_solve(value, L).diagonal(dim1=-2, dim2=-1).sum(-1) / 2)

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        return ((p + 1) * (p * math.log(2) / 2 + L.diagonal(dim1=-2, dim2=-1).log().sum(-1))
                + torch.mvlgamma(nu / 2, p) - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p)
                + nu * p / 2)

    @property
    def _natural_params(self):
        p = self._event_shape[-1]
        return -0.5 * self.precision_matrix, 0.5 * (self.df - p - 1)

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        half_df = y + 0.5 * (p + 1)
        return (half_df * (-torch.linalg.slogdet(-2 * x).logabsdet + p * math.log(2))
                + torch.mvlgamma(half_df, p))
