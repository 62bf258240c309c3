"""StudentT, FisherSnedecor, InverseGamma, Kumaraswamy, LogisticNormal, RelaxedBernoulli,
NegativeBinomial, Multinomial, VonMises, GeneralizedPareto, ContinuousBernoulli,
LowRankMultivariateNormal, Wishart and LKJCholesky against torch: values of every statistic
torch defines, log_prob gradients, sample shapes/support and sample moments."""

from __future__ import annotations

import numpy as np
import pytest

from .common import compare, dists_of, glasstorch, torch

rng = np.random.default_rng(5)
f64 = np.float64


def pos(*shape):
    return rng.uniform(0.4, 2.5, size=shape)


def real(*shape):
    return rng.normal(size=shape)


def unit(*shape):
    return rng.uniform(0.05, 0.95, size=shape)


def _spd(n, batch=()):
    a = rng.normal(size=batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def _corr_chol(n):
    c = np.linalg.cholesky(_spd(n))
    return c / np.linalg.norm(c, axis=-1, keepdims=True)


# (id, constructor(D, *params), params, values for log_prob/cdf, probabilities for icdf)
CASES = [
    ("student_t", lambda D, df, m, s: D.StudentT(df, m, s),
     (np.array([0.5, 1.5, 3.0, 6.0]), real(4), pos(4)), real(2, 4), None),
    ("student_t_num", lambda D: D.StudentT(4.0), (), real(3), None),
    ("fisher", lambda D, a, b: D.FisherSnedecor(a, b),
     (np.array([1.0, 3.0, 5.0]), np.array([1.5, 4.5, 9.0])), pos(2, 3), None),
    ("inverse_gamma", lambda D, c, r: D.InverseGamma(c, r),
     (np.array([0.5, 1.5, 3.0]), pos(3)), pos(2, 3), None),
    ("kumaraswamy", lambda D, a, b: D.Kumaraswamy(a, b),
     (np.array([0.5, 1.5, 3.0]), np.array([2.0, 0.7, 4.0])), unit(2, 3), None),
    ("logistic_normal", lambda D, m, s: D.LogisticNormal(m, s), (real(2, 3), pos(2, 3)),
     rng.dirichlet(np.ones(4), size=2), None),
    ("relaxed_bernoulli", lambda D, t, p: D.RelaxedBernoulli(t, probs=p),
     (np.array(0.7), unit(3)), unit(2, 3), None),
    ("relaxed_bernoulli_logits", lambda D, t, lg: D.RelaxedBernoulli(t, logits=lg),
     (np.array(1.3), real(3)), unit(3), None),
    ("negative_binomial", lambda D, n, p: D.NegativeBinomial(n, probs=p),
     (np.array([1.0, 2.5, 7.0]), unit(3)), np.array([[0.0, 3.0, 5.0], [2.0, 0.0, 11.0]]),
     None),
    ("negative_binomial_logits", lambda D, n, lg: D.NegativeBinomial(n, logits=lg),
     (np.array([0.0, 2.0]), real(2)), np.array([0.0, 4.0]), None),
    ("multinomial", lambda D, p: D.Multinomial(5, probs=p), (rng.dirichlet(np.ones(3), 2),),
     np.array([[1.0, 4.0, 0.0], [2.0, 2.0, 1.0]]), None),
    ("multinomial_logits", lambda D, lg: D.Multinomial(3, logits=lg), (real(4),),
     np.array([0.0, 1.0, 2.0, 0.0]), None),
    ("von_mises", lambda D, m, k: D.VonMises(m, k), (real(3), np.array([0.1, 1.0, 8.0])),
     rng.uniform(-3, 3, size=(2, 3)), None),
    # float32: torch's GeneralizedPareto.log_prob fails on float64 parameters
    ("generalized_pareto", lambda D, m, s, c: D.GeneralizedPareto(m, s, c),
     (real(4).astype(np.float32), pos(4).astype(np.float32),
      np.array([0.0, -0.3, 0.3, 0.8], np.float32)), None,
     np.array([0.1, 0.5, 0.9, 0.3], np.float32)),
    ("continuous_bernoulli", lambda D, p: D.ContinuousBernoulli(probs=p),
     (np.array([0.1, 0.4995, 0.5, 0.7, 0.95]),), unit(2, 5), unit(5)),
    ("continuous_bernoulli_logits", lambda D, lg: D.ContinuousBernoulli(logits=lg),
     (np.array([-3.0, 0.001, 2.0]),), unit(3), unit(3)),
    ("lowrank_mvn", lambda D, m, w, d: D.LowRankMultivariateNormal(m, w, d),
     (real(2, 3), real(2, 3, 2), pos(2, 3)), real(4, 2, 3), None),
    ("wishart_cov", lambda D, df, c: D.Wishart(df, covariance_matrix=c),
     (np.array([3.5, 6.0]), _spd(3, (2,))), _spd(3, (2,)), None),
    ("wishart_tril", lambda D, df, L: D.Wishart(df, scale_tril=L),
     (np.array(4.0), np.linalg.cholesky(_spd(2))), _spd(2), None),
    ("wishart_prec", lambda D, df, P: D.Wishart(df, precision_matrix=P),
     (np.array(2.5), _spd(2)), _spd(2, (3,)), None),
    ("lkj", lambda D, c: D.LKJCholesky(3, c), (np.array([0.5, 1.0, 3.0]),),
     np.stack([_corr_chol(3) for _ in range(3)]), None),
]
STATS = ("log_prob", "cdf", "icdf", "mean", "mode", "variance", "stddev", "entropy",
         "batch_shape", "event_shape", "support", "has_rsample")


def _make(lib, ctor, params, **kw):
    return ctor(dists_of(lib), *[lib.tensor(p) for p in params])


def _values(case):
    _, ctor, params, values, _ = case
    if values is not None:
        return values
    # GeneralizedPareto: points inside its (parameter dependent) support
    d = _make(torch, ctor, params)
    return d.icdf(torch.tensor(unit(2, 4))).numpy()


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_values_match_torch(case):
    name, ctor, params, _, probs = case
    values = _values(case)
    for what in STATS:
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
        if (name, what) == ("kumaraswamy", "mode"):
            continue  # torch 2.13 returns nan for every Kumaraswamy mode: checked below
        tol = 1e-5 if params and params[0].dtype == np.float32 else 1e-6
        compare(fn, rtol=tol, atol=tol / 100, what=f"{name}.{what}")


def test_kumaraswamy_mode():
    a = np.array([0.5, 1.5, 3.0, 2.0])
    b = np.array([2.0, 0.7, 4.0, 1.0])
    d = glasstorch.distributions.Kumaraswamy(glasstorch.tensor(a), glasstorch.tensor(b))
    want = np.where((a < 1) | (b < 1), np.nan, ((a - 1) / (a * b - 1)) ** (1 / a))
    np.testing.assert_allclose(d.mode.numpy(), want, rtol=1e-12)
    # the density is largest there
    x = glasstorch.tensor(np.linspace(0.01, 0.99, 99)[:, None])
    lp = d.log_prob(x).numpy()
    np.testing.assert_allclose(x.numpy()[lp.argmax(0), 0][2:], want[2:], atol=0.01)


@pytest.mark.parametrize("case", [c for c in CASES if c[2]], ids=[c[0] for c in CASES if c[2]])
def test_log_prob_gradients_match_torch(case):
    name, ctor, params, _, _ = case
    values = _values(case)
    grads = []
    for lib in (torch, glasstorch):
        ps = [lib.tensor(p, requires_grad=np.issubdtype(p.dtype, np.floating)) for p in params]
        d = ctor(dists_of(lib), *ps)
        out = d.log_prob(lib.tensor(values)).sum()
        try:
            out = out + d.entropy().sum()
        except NotImplementedError:
            pass
        wrt = [p for p in ps if p.requires_grad]
        grads.append([g.numpy() for g in lib.autograd.grad(out, wrt, allow_unused=True)])
    # torch's VonMises uses a polynomial fit of log I0, good to ~1e-7 relative
    tol = 1e-5 if name == "von_mises" or params[0].dtype == np.float32 else 1e-6
    for g, t in zip(grads[1], grads[0]):
        np.testing.assert_allclose(g, t, rtol=tol, atol=1e-9, err_msg=name)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_sample_shapes_support_and_expand(case):
    name, ctor, params, _, _ = case
    for lib in (torch, glasstorch):
        d = _make(lib, ctor, params)
        s = d.sample((5, 2))
        assert tuple(s.shape) == (5, 2) + tuple(d.batch_shape) + tuple(d.event_shape), name
        assert s.dtype == d.sample().dtype
        assert bool(d.support.check(s).all()), name
        e = d.expand((4,) + tuple(d.batch_shape))
        assert tuple(e.batch_shape) == (4,) + tuple(d.batch_shape)
        assert tuple(e.sample().shape) == (4,) + tuple(d.batch_shape) + tuple(d.event_shape)
    values = _values(case)
    compare(lambda lib: _make(lib, ctor, params).expand(
        (2,) + tuple(_make(lib, ctor, params).batch_shape)).log_prob(lib.tensor(values)),
        rtol=1e-6, atol=1e-8, what=f"{name}.expand.log_prob")


# (id, constructor, params): sample mean and variance must match the analytic ones
MOMENT_CASES = [
    ("student_t", lambda D, df, m, s: D.StudentT(df, m, s), (np.array([5.0, 9.0]),
                                                               np.array([0.5, -1.0]),
                                                               np.array([1.0, 2.0]))),
    ("fisher", lambda D, a, b: D.FisherSnedecor(a, b), (np.array([4.0, 8.0]),
                                                       np.array([12.0, 20.0]))),
    ("inverse_gamma", lambda D, c, r: D.InverseGamma(c, r), (np.array([5.0, 8.0]),
                                                            np.array([1.0, 3.0]))),
    ("kumaraswamy", lambda D, a, b: D.Kumaraswamy(a, b), (np.array([0.7, 2.0]),
                                                         np.array([1.5, 3.0]))),
    ("negative_binomial", lambda D, n, p: D.NegativeBinomial(n, probs=p),
     (np.array([3.0, 6.5]), np.array([0.3, 0.6]))),
    ("multinomial", lambda D, p: D.Multinomial(7, probs=p), (np.array([0.2, 0.5, 0.3]),)),
    ("generalized_pareto", lambda D, m, s, c: D.GeneralizedPareto(m, s, c),
     (np.array([0.0, 1.0]), np.array([1.0, 2.0]), np.array([-0.4, 0.1]))),
    ("continuous_bernoulli", lambda D, p: D.ContinuousBernoulli(probs=p),
     (np.array([0.2, 0.5, 0.8]),)),
    ("lowrank_mvn", lambda D, m, w, d: D.LowRankMultivariateNormal(m, w, d),
     (np.array([1.0, -1.0, 0.0]), np.array([[1.0], [0.5], [-1.0]]), np.array([0.5, 1.0, 2.0]))),
    ("wishart", lambda D, df, c: D.Wishart(df, covariance_matrix=c),
     (np.array(5.0), np.array([[1.0, 0.3], [0.3, 0.5]]))),
]


@pytest.mark.parametrize("case", MOMENT_CASES, ids=[c[0] for c in MOMENT_CASES])
def test_sample_moments(case):
    name, ctor, params = case
    glasstorch.manual_seed(0)
    d = _make(glasstorch, ctor, params)
    n = 20000
    s = d.sample((n,)).numpy()
    mean, var = d.mean.numpy(), d.variance.numpy()
    # 6 standard errors of the mean; the variance to 10%
    np.testing.assert_allclose(s.mean(0), mean, atol=6 * np.sqrt(var.max() / n) + 1e-12,
                               err_msg=name)
    np.testing.assert_allclose(s.var(0), var, rtol=0.1, atol=1e-3, err_msg=name)


def test_von_mises_and_lkj_samples():
    """VonMises: circular mean and mean resultant length; LKJ: E[L L^T] is the identity and
    the off-diagonal correlation variance is 1 / (2 c + d - 1)... for d = 2: 1 / (2 c + 1)."""
    glasstorch.manual_seed(1)
    D = glasstorch.distributions
    d = D.VonMises(glasstorch.tensor([0.5, -2.0]), glasstorch.tensor([2.0, 0.3]))
    s = d.sample((20000,)).numpy()
    assert s.min() >= -np.pi and s.max() < np.pi
    mean_dir = np.angle(np.exp(1j * s).mean(0))
    np.testing.assert_allclose(mean_dir, [0.5, -2.0], atol=0.05)
    resultant = np.abs(np.exp(1j * s).mean(0))
    np.testing.assert_allclose(resultant, 1 - d.variance.numpy(), atol=0.02)
    lkj = D.LKJCholesky(2, glasstorch.tensor([0.5, 2.0]))
    L = lkj.sample((20000,)).numpy()
    C = L @ np.swapaxes(L, -1, -2)
    np.testing.assert_allclose(np.diagonal(C, axis1=-2, axis2=-1), 1.0, atol=1e-6)
    np.testing.assert_allclose(C[..., 0, 1].mean(0), 0.0, atol=0.03)
    np.testing.assert_allclose(C[..., 0, 1].var(0), 1 / (2 * np.array([0.5, 2.0]) + 1),
                               rtol=0.06)


def test_rsample_gradients_flow():
    """rsample is differentiable in every parameter for the reparameterised families."""
    D = glasstorch.distributions
    ps = [glasstorch.tensor([3.0, 5.0], dtype=glasstorch.float64, requires_grad=True)
          for _ in range(3)]
    for d in (D.StudentT(*ps), D.FisherSnedecor(ps[0], ps[1]), D.InverseGamma(ps[0], ps[1]),
              D.Kumaraswamy(ps[0], ps[1]), D.GeneralizedPareto(ps[0], ps[1], ps[2] - 3.5),
              D.RelaxedBernoulli(ps[0], logits=ps[1]), D.LogisticNormal(ps[0], ps[1]),
              D.ContinuousBernoulli(logits=ps[0] - 3.5),
              D.LowRankMultivariateNormal(ps[0], ps[1].unsqueeze(-1), ps[2]),
              D.Wishart(ps[0][1], covariance_matrix=glasstorch.diag(ps[1]))):
        s = d.rsample((3,))
        used = [p for p in ps if s.grad_fn is not None]
        assert used, type(d).__name__
        weights = glasstorch.arange(s.numel(), dtype=s.dtype).reshape(s.shape)
        g = glasstorch.autograd.grad((s * weights).sum(), ps, allow_unused=True)
        assert any(x is not None and bool((x != 0).any()) for x in g), type(d).__name__


def test_constructor_errors_match_torch():
    for ctor in (lambda lib, D: D.Wishart(lib.tensor(0.5), covariance_matrix=lib.eye(3)),
                 lambda lib, D: D.Wishart(lib.tensor(4.0)),
                 lambda lib, D: D.LKJCholesky(1),
                 lambda lib, D: D.LowRankMultivariateNormal(lib.zeros(3), lib.zeros(2, 1),
                                                             lib.ones(3)),
                 lambda lib, D: D.LowRankMultivariateNormal(lib.zeros(3), lib.zeros(3, 1),
                                                             lib.ones(2)),
                 lambda lib, D: D.NegativeBinomial(2.0),
                 lambda lib, D: D.ContinuousBernoulli(probs=lib.tensor([1.5]),
                                                      validate_args=True),
                 lambda lib, D: D.StudentT(lib.tensor(-1.0), validate_args=True),
                 lambda lib, D: D.VonMises(lib.tensor(0.0), lib.tensor(-1.0),
                                           validate_args=True)):
        compare(lambda lib, ctor=ctor: ctor(lib, dists_of(lib)).batch_shape, what="ctor")


KL_PAIRS = [
    ("cb_cb", lambda D, t: (D.ContinuousBernoulli(t.tensor([0.2, 0.5, 0.9])),
                            D.ContinuousBernoulli(t.tensor([0.6, 0.3, 0.4])))),
    ("beta_cb", lambda D, t: (D.Beta(t.tensor([2.0, 0.5]), t.tensor([1.0, 3.0])),
                              D.ContinuousBernoulli(t.tensor([0.3, 0.8])))),
    ("cb_exp", lambda D, t: (D.ContinuousBernoulli(t.tensor([0.3, 0.8])),
                             D.Exponential(t.tensor([2.0, 0.5])))),
    ("cb_normal", lambda D, t: (D.ContinuousBernoulli(t.tensor([0.3, 0.8])),
                                D.Normal(t.tensor([0.1, 1.0]), t.tensor([2.0, 0.5])))),
    ("cb_pareto", lambda D, t: (D.ContinuousBernoulli(t.tensor([0.3])),
                                D.Pareto(t.tensor([1.0]), t.tensor([2.0])))),
    ("cb_uniform", lambda D, t: (D.ContinuousBernoulli(t.tensor([0.3, 0.7])),
                                 D.Uniform(t.tensor([-1.0, 0.2]), t.tensor([2.0, 3.0])))),
    ("exp_cb", lambda D, t: (D.Exponential(t.tensor([2.0])),
                             D.ContinuousBernoulli(t.tensor([0.3])))),
    ("gamma_cb", lambda D, t: (D.Gamma(t.tensor([2.0]), t.tensor([1.0])),
                               D.ContinuousBernoulli(t.tensor([0.3])))),
    ("gumbel_cb", lambda D, t: (D.Gumbel(t.tensor([2.0]), t.tensor([1.0])),
                                D.ContinuousBernoulli(t.tensor([0.3])))),
    ("laplace_cb", lambda D, t: (D.Laplace(t.tensor([2.0]), t.tensor([1.0])),
                                 D.ContinuousBernoulli(t.tensor([0.3])))),
    ("normal_cb", lambda D, t: (D.Normal(t.tensor([2.0]), t.tensor([1.0])),
                                D.ContinuousBernoulli(t.tensor([0.3])))),
    ("pareto_cb", lambda D, t: (D.Pareto(t.tensor([2.0]), t.tensor([1.0])),
                                D.ContinuousBernoulli(t.tensor([0.3])))),
    ("uniform_cb", lambda D, t: (D.Uniform(t.tensor([0.1, -1.0]), t.tensor([0.7, 0.5])),
                                 D.ContinuousBernoulli(t.tensor([0.3, 0.6])))),
]


@pytest.mark.parametrize("pair", KL_PAIRS, ids=[p[0] for p in KL_PAIRS])
def test_kl_matches_torch(pair):
    name, make = pair

    def fn(lib):
        D = dists_of(lib)
        return D.kl_divergence(*make(D, lib))
    compare(fn, rtol=1e-5, atol=1e-6, what=name)


def test_new_transforms_match_torch():
    x = real(2, 6)

    def run(lib, t_of):
        D = dists_of(lib)
        t = t_of(D, lib)
        xt = lib.tensor(x)
        y = t(xt)
        return lib.cat([y.reshape(-1), t.inv(y).reshape(-1),
                        t.log_abs_det_jacobian(xt, y).reshape(-1)])
    for t_of in (lambda D, lib: D.SoftplusTransform(),
                 lambda D, lib: D.ReshapeTransform((6,), (2, 3)),
                 lambda D, lib: D.CumulativeDistributionTransform(
                     D.Normal(lib.tensor(0.5), lib.tensor(2.0)))):
        compare(lambda lib, t_of=t_of: run(lib, t_of), rtol=1e-6, atol=1e-9, what="transform")
    for shape in ((6,), (3, 6), (5,)):
        compare(lambda lib, shape=shape: lib.tensor(dists_of(lib).ReshapeTransform(
            (6,), (2, 3)).forward_shape(shape)), what="reshape shape")
    compare(lambda lib: dists_of(lib).ReshapeTransform((6,), (4,)), what="reshape numel")
