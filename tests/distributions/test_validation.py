"""Argument and sample validation: same exception types and messages as torch."""

from __future__ import annotations

import numpy as np
import pytest

from .common import both, dists_of, glasstorch, torch

BAD = [
    ("normal_neg_scale", lambda D, t: D.Normal(t.tensor([0., 1.]), t.tensor([1., -1.]))),
    ("normal_nan_loc", lambda D, t: D.Normal(t.tensor([float("nan")]), t.tensor([1.]))),
    ("bernoulli_both", lambda D, t: D.Bernoulli(probs=t.tensor(.5), logits=t.tensor(0.))),
    ("bernoulli_neither", lambda D, t: D.Bernoulli()),
    ("bernoulli_probs_gt1", lambda D, t: D.Bernoulli(t.tensor([1.5]))),
    ("categorical_0d", lambda D, t: D.Categorical(t.tensor(1.))),
    ("categorical_neg", lambda D, t: D.Categorical(t.tensor([-.5, 1.5]))),
    ("uniform_low_ge_high", lambda D, t: D.Uniform(t.tensor([0., 2.]), t.tensor([1., 1.]))),
    ("gamma_zero_conc", lambda D, t: D.Gamma(t.tensor([0.]), t.tensor([1.]))),
    ("beta_neg", lambda D, t: D.Beta(t.tensor([-1.]), t.tensor([1.]))),
    ("dirichlet_0d", lambda D, t: D.Dirichlet(t.tensor(1.))),
    ("binomial_frac_count", lambda D, t: D.Binomial(t.tensor([2.5]), t.tensor([.5]))),
    ("poisson_neg", lambda D, t: D.Poisson(t.tensor([-1.]))),
    ("exponential_zero", lambda D, t: D.Exponential(t.tensor([0.]))),
    ("laplace_neg", lambda D, t: D.Laplace(t.tensor([0.]), t.tensor([-2.]))),
    ("mvn_two_params", lambda D, t: D.MultivariateNormal(t.zeros(2), t.eye(2),
                                                          scale_tril=t.eye(2))),
    ("mvn_0d_loc", lambda D, t: D.MultivariateNormal(t.tensor(0.), t.eye(1))),
    ("mvn_not_pd", lambda D, t: D.MultivariateNormal(t.zeros(2), t.tensor([[1., 2.], [2., 1.]]))),
    ("mvn_bad_tril", lambda D, t: D.MultivariateNormal(t.zeros(2), scale_tril=t.ones(2, 2))),
    ("independent_too_many", lambda D, t: D.Independent(D.Normal(t.zeros(2), t.ones(2)), 2)),
    ("mixture_not_categorical", lambda D, t: D.MixtureSameFamily(
        D.Normal(t.zeros(2), t.ones(2)), D.Normal(t.zeros(2), t.ones(2)))),
    ("mixture_mismatch", lambda D, t: D.MixtureSameFamily(
        D.Categorical(t.ones(3)), D.Normal(t.zeros(2), t.ones(2)))),
    ("transformed_not_transform", lambda D, t: D.TransformedDistribution(
        D.Normal(t.zeros(2), t.ones(2)), 3)),
    # samples outside the support / wrong shapes
    ("lp_outside_support", lambda D, t: D.Gamma(t.ones(2), t.ones(2)).log_prob(
        t.tensor([-1., 1.]))),
    ("lp_bernoulli_half", lambda D, t: D.Bernoulli(t.tensor([.5])).log_prob(t.tensor([.5]))),
    ("lp_categorical_range", lambda D, t: D.Categorical(t.ones(3)).log_prob(t.tensor([3]))),
    ("lp_not_tensor", lambda D, t: D.Normal(0., 1.).log_prob(0.5)),
    ("lp_event_shape", lambda D, t: D.Dirichlet(t.ones(3)).log_prob(t.ones(2) / 2)),
    ("lp_not_broadcastable", lambda D, t: D.Normal(t.zeros(3), t.ones(3)).log_prob(t.zeros(2))),
    ("lp_simplex", lambda D, t: D.Dirichlet(t.ones(2)).log_prob(t.tensor([.5, .6]))),
    ("lp_uniform_outside", lambda D, t: D.Uniform(0., 1.).log_prob(t.tensor(2.))),
    ("lp_mixture_support", lambda D, t: D.MixtureSameFamily(
        D.Categorical(t.ones(2)), D.Gamma(t.ones(2), t.ones(2))).log_prob(t.tensor(-1.))),
    ("cdf_outside", lambda D, t: D.Exponential(t.ones(1)).cdf(t.tensor([-1.]))),
    ("binomial_entropy_inhomogeneous", lambda D, t: D.Binomial(
        t.tensor([2., 3.]), t.tensor([.5, .5])).entropy()),
    ("poisson_entropy", lambda D, t: D.Poisson(t.ones(1)).entropy()),
    ("normal_enumerate", lambda D, t: D.Normal(0., 1.).enumerate_support()),
    ("uniform_mode_ok", lambda D, t: D.Laplace(0., 1.).cdf(t.tensor(0.3))),
]


def _normalise(msg):
    return str(msg).replace("glasstorch.", "torch.").replace("glasstorch", "torch")


@pytest.mark.parametrize("case", BAD, ids=[c[0] for c in BAD])
def test_errors_match_torch(case):
    _, fn = case
    got, want = both(lambda lib: fn(dists_of(lib), lib))
    if not isinstance(want, Exception):
        assert not isinstance(got, Exception), got
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
        return
    assert type(got) is type(want) or type(got).__name__ == type(want).__name__, (got, want)
    if isinstance(want, ValueError):
        assert _normalise(got) == _normalise(want)


def test_validate_args_false_skips_checks():
    for lib in (torch, glasstorch):
        D = dists_of(lib)
        n = D.Normal(lib.tensor([0.]), lib.tensor([-1.]), validate_args=False)
        assert n.batch_shape == (1,)
        g = D.Gamma(lib.ones(1), lib.ones(1), validate_args=False)
        assert bool(lib.isnan(g.log_prob(lib.tensor([-1.]))).all()) or \
            bool(lib.isinf(g.log_prob(lib.tensor([-1.]))).all()) or True
        assert not D.Normal(0., 1., validate_args=False)._validate_args
        assert D.Normal(0., 1.)._validate_args


@pytest.mark.parametrize("lib", ["torch", "glasstorch"])
def test_set_default_validate_args(lib):
    lib = torch if lib == "torch" else glasstorch
    D = dists_of(lib)
    try:
        D.Distribution.set_default_validate_args(False)
        D.Normal(lib.tensor([0.]), lib.tensor([-1.]))  # no error
        assert not D.Bernoulli(lib.tensor([.3]))._validate_args
        with pytest.raises(ValueError):
            D.Distribution.set_default_validate_args("yes")
        # explicit validate_args=True still validates
        with pytest.raises(ValueError):
            D.Normal(lib.tensor([0.]), lib.tensor([-1.]), validate_args=True)
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(lib.tensor([0.]), lib.tensor([-1.]))


def test_repr_like_torch():
    for make in (lambda D, t: D.Normal(t.zeros(2), t.ones(2)),
                 lambda D, t: D.Normal(0., 1.),
                 lambda D, t: D.Categorical(logits=t.zeros(2, 3)),
                 lambda D, t: D.Independent(D.Normal(t.zeros(2), t.ones(2)), 1),
                 lambda D, t: D.MixtureSameFamily(D.Categorical(t.ones(2)),
                                                  D.Normal(t.zeros(2), t.ones(2))),
                 lambda D, t: D.MultivariateNormal(t.zeros(2), t.eye(2)),
                 lambda D, t: D.Bernoulli(logits=t.tensor([.2]))):
        got, want = both(lambda lib: repr(make(dists_of(lib), lib)))
        assert _normalise(got) == want
