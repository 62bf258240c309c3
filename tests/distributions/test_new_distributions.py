"""Cauchy, HalfNormal, HalfCauchy, Gumbel, Pareto, Weibull, Geometric and Chi2 against
torch: log_prob, cdf/icdf,
entropy, moments, shapes, and gradients through log_prob and rsample."""

from __future__ import annotations

import numpy as np
import pytest

from .common import compare, dists_of, glasstorch, torch

rng = np.random.default_rng(11)
f32 = np.float32


def pos(*shape, dtype=f32):
    return rng.uniform(0.3, 2.5, size=shape).astype(dtype)


def real(*shape, dtype=f32):
    return rng.normal(size=shape).astype(dtype)


# (id, constructor(D, *params), params, values for log_prob/cdf, probabilities for icdf)
CASES = [
    ("cauchy", lambda D, m, s: D.Cauchy(m, s), (real(3), pos(3)), real(2, 3),
     np.array([0.1, 0.5, 0.9], f32)),
    ("cauchy_num", lambda D: D.Cauchy(0.5, 2.0), (), real(4), np.array([0.2, 0.7], f32)),
    ("half_normal", lambda D, s: D.HalfNormal(s), (pos(3),), np.abs(real(2, 3)),
     np.array([0.1, 0.5, 0.9], f32)),
    ("half_cauchy", lambda D, s: D.HalfCauchy(s), (pos(3),), np.abs(real(2, 3)),
     np.array([0.1, 0.5, 0.9], f32)),
    ("gumbel", lambda D, m, s: D.Gumbel(m, s), (real(3), pos(3)), real(2, 3),
     np.array([0.1, 0.5, 0.9], f32)),
    ("gumbel_num", lambda D: D.Gumbel(1.0, 2.0), (), real(4), np.array([0.3], f32)),
    ("pareto", lambda D, s, a: D.Pareto(s, a), (pos(3), pos(3) + 1.5), pos(3) + 2.5,
     np.array([0.1, 0.5, 0.9], f32)),
    ("pareto_heavy", lambda D, s, a: D.Pareto(s, a), (pos(3), np.array([0.5, 1.5, 2.5], f32)),
     pos(3) + 2.5, None),
    ("weibull", lambda D, s, c: D.Weibull(s, c), (pos(3), pos(3) + 0.5), pos(2, 3),
     np.array([0.1, 0.5, 0.9], f32)),
    ("geometric_p", lambda D, p: D.Geometric(probs=p), (np.array([0.2, 0.5, 1.0], f32),),
     np.array([[0.0, 3.0, 0.0], [2.0, 0.0, 0.0]], f32), None),
    ("geometric_l", lambda D, lg: D.Geometric(logits=lg), (real(4),),
     np.array([0.0, 1.0, 5.0, 2.0], f32), None),
    ("chi2", lambda D, df: D.Chi2(df), (pos(4),), pos(2, 4), None),
    ("chi2_f64", lambda D, df: D.Chi2(df), (pos(3, dtype=np.float64),),
     pos(3, dtype=np.float64), None),
]


def _make(lib, ctor, params):
    return ctor(dists_of(lib), *[lib.tensor(p) for p in params])


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_values_match_torch(case):
    _, ctor, params, values, probs = case
    for what in ("log_prob", "cdf", "mean", "mode", "variance", "stddev", "entropy",
                 "batch_shape", "event_shape", "support", "icdf"):
        def fn(lib, what=what):
            d = _make(lib, ctor, params)
            if what in ("log_prob", "cdf"):
                return getattr(d, what)(lib.tensor(values))
            if what == "icdf":
                return d.icdf(lib.tensor(probs)) if probs is not None else lib.zeros(1)
            if what == "entropy":
                return d.entropy()
            if what == "support":
                return lib.tensor(bool(d.support.check(lib.tensor(values)).all()))
            v = getattr(d, what)
            return lib.tensor(list(v)) if what.endswith("shape") else v
        compare(fn, rtol=2e-5, atol=2e-5, what=f"{case[0]}.{what}")


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_sample_shapes_and_expand(case):
    _, ctor, params, _, _ = case
    for lib in (torch, glasstorch):
        d = _make(lib, ctor, params)
        s = d.sample((5, 2))
        assert tuple(s.shape) == (5, 2) + tuple(d.batch_shape) + tuple(d.event_shape)
        assert bool(d.support.check(s).all())
        e = d.expand((4,) + tuple(d.batch_shape))
        assert tuple(e.batch_shape) == (4,) + tuple(d.batch_shape)
    compare(lambda lib: _make(lib, ctor, params).expand(
        (2,) + tuple(_make(lib, ctor, params).batch_shape)).log_prob(lib.tensor(case[3])),
        rtol=2e-5, atol=2e-5, what=f"{case[0]}.expand.log_prob")


@pytest.mark.parametrize("case", [c for c in CASES if c[2]], ids=[c[0] for c in CASES if c[2]])
def test_log_prob_gradients_match_torch(case):
    _, ctor, params, values, _ = case
    grads = []
    for lib in (torch, glasstorch):
        ps = [lib.tensor(p.astype(np.float64), requires_grad=True) for p in params]
        d = ctor(dists_of(lib), *ps)
        lp = d.log_prob(lib.tensor(values.astype(np.float64))).sum() + d.entropy().sum()
        grads.append([g.numpy() for g in lib.autograd.grad(lp, ps)])
    for g, t in zip(*reversed(grads)):
        np.testing.assert_allclose(g, t, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("name", ["cauchy", "half_normal", "half_cauchy"])
def test_rsample_is_differentiable(name):
    """rsample is a reparameterisation: the sample's gradient w.r.t. scale is sample/scale."""
    _, ctor, params, _, _ = next(c for c in CASES if c[0] == name)
    ps = [glasstorch.tensor(p.astype(np.float64), requires_grad=True) for p in params]
    d = ctor(glasstorch.distributions, *ps)
    s = d.rsample((7,))
    scale = ps[-1]
    g, = glasstorch.autograd.grad(s.sum(), scale)
    loc = ps[0].detach() if len(ps) == 2 else 0
    expect = ((s.detach() - loc) / scale.detach()).sum(0)
    np.testing.assert_allclose(g.numpy(), expect.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_has_rsample_matches_torch(case):
    _, ctor, params, _, _ = case
    assert _make(glasstorch, ctor, params).has_rsample == _make(torch, ctor, params).has_rsample


def test_validation_errors_match_torch():
    for ctor in (lambda D: D.Cauchy(0.0, -1.0, validate_args=True),
                 lambda D: D.HalfNormal(-1.0, validate_args=True),
                 lambda D: D.Gumbel(0.0, 0.0, validate_args=True),
                 lambda D: D.Chi2(-1.0, validate_args=True),
                 lambda D: D.Geometric(probs=0.0, validate_args=True),
                 lambda D: D.Geometric(validate_args=True),
                 lambda D: D.Pareto(1.0, -2.0, validate_args=True),
                 lambda D: D.Weibull(-1.0, 2.0, validate_args=True)):
        compare(lambda lib, ctor=ctor: ctor(dists_of(lib)).mean, what="validation")
    compare(lambda lib: dists_of(lib).HalfNormal(1.0, validate_args=True).log_prob(
        lib.tensor([-1.0])), what="half_normal support")
    compare(lambda lib: dists_of(lib).HalfCauchy(1.0, validate_args=False).log_prob(
        lib.tensor([-1.0, 2.0])), what="half_cauchy outside the support")


def test_bernoulli_and_geometric_entropy_gradient_at_even_odds():
    """At p = 1/2 (logit 0) the entropy is flat: a max(l, 0) composite once gave 2, not 0."""
    for name in ("Bernoulli", "Geometric"):
        grads = []
        for lib in (torch, glasstorch):
            p = lib.tensor([0.5, 0.2], dtype=lib.float64, requires_grad=True)
            grads.append(lib.autograd.grad(getattr(dists_of(lib), name)(probs=p).entropy().sum(),
                                           p)[0].numpy())
        np.testing.assert_allclose(grads[1], grads[0], rtol=1e-10, atol=1e-12)
