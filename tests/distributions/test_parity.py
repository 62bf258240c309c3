"""Distributions vs torch: log_prob, entropy, moments, cdf/icdf, shapes, expand, repr."""

from __future__ import annotations

import numpy as np
import pytest

from .common import as_lib, compare, dists_of, glasstorch, torch

f32 = np.float32
rng = np.random.default_rng(0)


def a(*v, dtype=f32):
    return np.array(v, dtype=dtype)


def pos(*shape, dtype=f32, low=0.2, high=3.0):
    return rng.uniform(low, high, size=shape).astype(dtype)


def real(*shape, dtype=f32):
    return rng.normal(size=shape).astype(dtype)


def simplex(*shape, dtype=f32):
    p = rng.uniform(0.05, 1, size=shape)
    return (p / p.sum(-1, keepdims=True)).astype(dtype)


def spd(n, batch=(), dtype=f32):
    m = rng.normal(size=batch + (n, n))
    return (m @ np.swapaxes(m, -1, -2) + n * np.eye(n)).astype(dtype)


def tril(n, batch=(), dtype=f32):
    return np.linalg.cholesky(spd(n, batch, np.float64)).astype(dtype)


# (id, constructor(D, *params), params, log_prob values, icdf values or None)
CASES = [
    ("normal", lambda D, m, s: D.Normal(m, s), (real(3), pos(3)), real(4, 3), a(.1, .5, .9)),
    ("normal_0d", lambda D, m, s: D.Normal(m, s), (a(0.5)[0:1].reshape(()), a(2.0).reshape(())),
     real(5), a(.3)),
    ("normal_f64", lambda D, m, s: D.Normal(m, s), (real(2, 1, dtype=np.float64),
                                                     pos(3, dtype=np.float64)),
     real(2, 3, dtype=np.float64), a(.2, .4, .99, dtype=np.float64)),
    ("normal_num", lambda D: D.Normal(0.0, 2.0), (), real(3), a(.25)),
    ("lognormal", lambda D, m, s: D.LogNormal(m, s), (real(3), pos(3)), pos(2, 3), a(.1, .5, .9)),
    ("uniform", lambda D, lo, hi: D.Uniform(lo, hi), (a(-1., 0., 2.), a(1., .5, 4.)),
     a(0., .25, 3.), a(.1, .5, .9)),
    ("exponential", lambda D, r: D.Exponential(r), (pos(4),), pos(3, 4), a(.1, .5, .9, .99)),
    ("laplace", lambda D, m, s: D.Laplace(m, s), (real(3), pos(3)), real(2, 3), a(.1, .5, .9)),
    ("gamma", lambda D, c, r: D.Gamma(c, r), (a(.5, 1., 2.5, 40.), pos(4)), pos(2, 4), None),
    ("beta", lambda D, c1, c0: D.Beta(c1, c0), (a(.5, 1., 2.5, 9.), a(.7, 3., 1., 9.)),
     a(.1, .5, .7, .99), None),
    ("beta_num", lambda D: D.Beta(2.0, 3.0), (), a(.1, .5), None),
    ("dirichlet", lambda D, c: D.Dirichlet(c), (pos(2, 3),), simplex(4, 2, 3), None),
    ("dirichlet_small", lambda D, c: D.Dirichlet(c), (a(.3, .5, .2),), simplex(3), None),
    ("bernoulli_p", lambda D, p: D.Bernoulli(probs=p), (a(.1, .5, .9, 0., 1.),),
     a(0., 1., 1., 0., 1.), None),
    ("bernoulli_l", lambda D, l: D.Bernoulli(logits=l), (real(2, 3),), a(0., 1., 1.), None),
    ("categorical_p", lambda D, p: D.Categorical(probs=p), (simplex(2, 4),),
     np.array([[0, 3], [1, 2], [3, 3]]), None),
    ("categorical_l", lambda D, l: D.Categorical(logits=l), (real(3, 5),), np.array([0, 4, 2]),
     None),
    ("categorical_unnorm", lambda D, p: D.Categorical(probs=p), (a(1., 2., 0.),),
     np.array([0, 1, 2]), None),
    ("onehot", lambda D, p: D.OneHotCategorical(probs=p), (simplex(2, 3),),
     np.eye(3, dtype=f32)[[0, 2]], None),
    ("binomial", lambda D, n, p: D.Binomial(n, probs=p), (a(10., 10., 10.), a(.2, .5, .9)),
     a(0., 5., 10.), None),
    ("binomial_l", lambda D, p: D.Binomial(5, logits=p), (real(3),), a(0., 2., 5.), None),
    ("poisson", lambda D, r: D.Poisson(r), (a(.5, 3., 20.),), a(0., 2., 25.), None),
    ("mvn_cov", lambda D, m, c: D.MultivariateNormal(m, covariance_matrix=c),
     (real(3), spd(3)), real(4, 3), None),
    ("mvn_tril_batch", lambda D, m, L: D.MultivariateNormal(m, scale_tril=L),
     (real(2, 3), tril(3)), real(5, 2, 3), None),
    ("mvn_prec", lambda D, m, p: D.MultivariateNormal(m, precision_matrix=p),
     (real(2), spd(2, (3,))), real(3, 2), None),
    ("relaxed", lambda D, t, p: D.RelaxedOneHotCategorical(t, probs=p),
     (a(.5).reshape(()), simplex(2, 3)), simplex(2, 3), None),
    ("independent", lambda D, m, s: D.Independent(D.Normal(m, s), 1), (real(2, 3), pos(2, 3)),
     real(4, 2, 3), None),
    ("mixture", lambda D, w, m, s: D.MixtureSameFamily(D.Categorical(probs=w), D.Normal(m, s)),
     (simplex(2, 3), real(2, 3), pos(2, 3)), real(4, 2), None),
    ("mixture_mvn", lambda D, w, m, s: D.MixtureSameFamily(
        D.Categorical(probs=w), D.Independent(D.Normal(m, s), 1)),
     (simplex(3), real(3, 2), pos(3, 2)), real(4, 2), None),
    ("transformed", lambda D, m, s: D.TransformedDistribution(
        D.Normal(m, s), [D.transforms.AffineTransform(1.0, -2.0), D.transforms.ExpTransform()]),
     (real(3), pos(3)), pos(3), a(.1, .5, .9)),
    ("transformed_stick", lambda D, m, s: D.TransformedDistribution(
        D.Normal(m, s), D.transforms.StickBreakingTransform()),
     (real(2), pos(2)), simplex(4, 3), None),
    ("transformed_tanh", lambda D, m, s: D.TransformedDistribution(
        D.Normal(m, s), [D.transforms.TanhTransform(), D.transforms.AffineTransform(0., 3.)]),
     (real(3), pos(3)), a(-2., 0., 2.5), a(.1, .5, .9)),
    ("transformed_sigmoid", lambda D, m, s: D.TransformedDistribution(
        D.Normal(m, s), [D.transforms.SigmoidTransform(), D.transforms.PowerTransform(2.0)]),
     (real(3), pos(3)), a(.1, .5, .9), None),
]


def build(case, lib):
    _, ctor, params, _, _ = case
    return ctor(dists_of(lib), *as_lib(lib, params))


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_values_match_torch(case):
    name, _, _, values, icdf_values = case
    tol = dict(rtol=2e-5, atol=2e-5)
    compare(lambda lib: build(case, lib).batch_shape, what="batch_shape")
    compare(lambda lib: build(case, lib).event_shape, what="event_shape")
    compare(lambda lib: build(case, lib).log_prob(as_lib(lib, values)), what="log_prob", **tol)
    compare(lambda lib: build(case, lib).entropy(), what="entropy", **tol)
    for attr in ("mean", "variance", "stddev", "mode"):
        compare(lambda lib: getattr(build(case, lib), attr), what=attr, **tol)
    compare(lambda lib: repr(build(case, lib).support), what="support")
    compare(lambda lib: build(case, lib).cdf(as_lib(lib, values)), what="cdf", **tol)
    if icdf_values is not None:
        compare(lambda lib: build(case, lib).icdf(as_lib(lib, icdf_values)), what="icdf", **tol)
    compare(lambda lib: repr(build(case, lib)).replace("torch.", "").replace("glasstorch.", ""),
            what="repr")
    compare(lambda lib: build(case, lib).has_rsample, what="has_rsample")
    compare(lambda lib: build(case, lib).has_enumerate_support, what="has_enumerate_support")


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_sample_and_expand_shapes(case):
    for sample_shape in ((), (5,), (2, 3)):
        compare(lambda lib: build(case, lib).sample(sample_shape).shape, what="sample shape")
        compare(lambda lib: build(case, lib).sample(sample_shape).dtype, what="sample dtype")
        compare(lambda lib: build(case, lib).rsample(sample_shape).shape, what="rsample shape")

    def expanded(lib):
        d = build(case, lib)
        return d.expand((4,) + tuple(d.batch_shape))

    compare(lambda lib: expanded(lib).batch_shape, what="expand batch_shape")
    compare(lambda lib: expanded(lib).sample((2,)).shape, what="expanded sample")
    values = case[3]
    compare(lambda lib: expanded(lib).log_prob(as_lib(lib, values)), what="expanded log_prob",
            rtol=2e-5, atol=2e-5)
    compare(lambda lib: expanded(lib).mean, what="expanded mean", rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("name", ["bernoulli_p", "categorical_p", "onehot", "binomial"])
def test_enumerate_support(name):
    case = next(c for c in CASES if c[0] == name)
    for expand in (True, False):
        compare(lambda lib: build(case, lib).enumerate_support(expand), what="enumerate")


# edge parameters: log_prob and entropy at extreme but valid values
EDGES = [
    ("normal_tiny_scale", lambda D: D.Normal(torch_or(D).tensor([0., 1e3]),
                                             torch_or(D).tensor([1e-6, 1e4])), a(0., 2.)),
    ("gamma_small_conc", lambda D: D.Gamma(torch_or(D).tensor([1e-3, 1e3]),
                                           torch_or(D).tensor([1e-2, 1e2])), a(1e-4, 10.)),
    ("beta_extreme", lambda D: D.Beta(torch_or(D).tensor([1e-2, 200.]),
                                      torch_or(D).tensor([50., 1e-2])), a(1e-5, .99999)),
    ("dirichlet_big", lambda D: D.Dirichlet(torch_or(D).tensor([500., 0.01, 3.])),
     a(.97, .01, .02)),
    ("poisson_zero_rate", lambda D: D.Poisson(torch_or(D).tensor([0., 1e4])), a(0., 1e4)),
    ("categorical_zero_prob", lambda D: D.Categorical(torch_or(D).tensor([0., .5, .5])),
     np.array([1, 2])),
    ("exponential_big", lambda D: D.Exponential(torch_or(D).tensor([1e-4, 1e4])), a(0., 1e-3)),
]


def torch_or(D):
    return glasstorch if D.__name__.startswith("glasstorch") else torch


@pytest.mark.parametrize("case", EDGES, ids=[c[0] for c in EDGES])
def test_edge_parameters(case):
    _, ctor, values = case
    tol = dict(rtol=1e-4, atol=1e-4)
    compare(lambda lib: ctor(dists_of(lib)).log_prob(as_lib(lib, values)), what="log_prob",
            **tol)
    compare(lambda lib: ctor(dists_of(lib)).entropy(), what="entropy", **tol)
    compare(lambda lib: ctor(dists_of(lib)).mean, what="mean", **tol)
    compare(lambda lib: ctor(dists_of(lib)).variance, what="variance", **tol)


def test_gamma_cdf():
    c, r, x = a(.5, 1., 2.5, 40.), a(1., 2., .5, 1.), a(.3, 1., 4., 38.)
    compare(lambda lib: dists_of(lib).Gamma(*as_lib(lib, (c, r))).cdf(lib.tensor(x)),
            rtol=1e-5, atol=1e-6)


def test_lognormal_and_transformed_expand_keep_types():
    d = glasstorch.distributions.LogNormal(glasstorch.zeros(2), glasstorch.ones(2)).expand((3, 2))
    assert type(d).__name__ == "LogNormal" and d.batch_shape == (3, 2)
    assert d.loc.shape == (3, 2)


def test_sample_shape_accepts_size_and_list():
    D = glasstorch.distributions
    n = D.Normal(glasstorch.zeros(2), glasstorch.ones(2))
    assert n.sample(glasstorch.Size([3])).shape == (3, 2)
    assert n.sample([4, 1]).shape == (4, 1, 2)
    with pytest.warns(UserWarning, match="sample_n"):
        assert n.sample_n(2).shape == (2, 2)


@pytest.mark.parametrize("make", [
    lambda D, t: D.Normal(t.tensor([0., 1.]), t.tensor([.5, 2.])),
    lambda D, t: D.Exponential(t.tensor([.5, 3.])),
    lambda D, t: D.Gamma(t.tensor([.5, 3.]), t.tensor([2., 1.])),
    lambda D, t: D.Bernoulli(t.tensor([.2, .7])),
], ids=["normal", "exponential", "gamma", "bernoulli"])
def test_exponential_family_bregman_entropy(make):
    # the generic entropy (autograd through the log normaliser) equals the closed form
    D = glasstorch.distributions
    d = make(D, glasstorch)
    generic = D.ExponentialFamily.entropy(d)
    np.testing.assert_allclose(generic.detach().numpy(), d.entropy().numpy(), rtol=1e-5,
                               atol=1e-6)


GRAD_CASES = [
    ("gamma", lambda D, c, r: D.Gamma(c, r), (a(.5, 2., 30.), a(1., .3, 2.)), a(.2, 1., 25.)),
    ("beta", lambda D, c1, c0: D.Beta(c1, c0), (a(.5, 2., 30.), a(1., .3, 2.)), a(.2, .6, .9)),
    ("dirichlet", lambda D, c: D.Dirichlet(c), (a(.5, 2., 30.),), a(.2, .3, .5)),
    ("binomial", lambda D, p: D.Binomial(a(4., 6., 9.)[0], logits=p), (a(.5, -2., 3.),),
     a(0., 2., 4.)),
    ("normal", lambda D, m, s: D.Normal(m, s), (a(.5, 2., -1.), a(1., .3, 2.)), a(.2, 1., 2.)),
    ("mvn", lambda D, m, c: D.MultivariateNormal(m, c), (a(.5, 2.), spd(2)), a(.2, 1.)),
    ("categorical", lambda D, lg: D.Categorical(logits=lg), (a(.5, 2., -1.),), np.array(1)),
]


@pytest.mark.parametrize("case", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_log_prob_and_entropy_gradients_match_torch(case):
    _, make, params, value = case

    def grads(lib):
        ps = [lib.tensor(p, requires_grad=True) for p in params]
        d = make(dists_of(lib), *ps)
        total = d.log_prob(lib.tensor(value)).sum() + d.entropy().sum()
        return lib.cat([g.reshape(-1) for g in lib.autograd.grad(total, ps)])

    compare(grads, rtol=2e-5, atol=2e-5)
