"""Sampling statistics and reparameterised (rsample) gradients vs torch."""

from __future__ import annotations

import numpy as np
import pytest

from .common import as_lib, dists_of, glasstorch, torch

N = 20000
f64 = np.float64


def a(*v):
    return np.array(v, dtype=f64)


STATS = [
    ("normal", lambda D, m, s: D.Normal(m, s), (a(0., 3.), a(1., .5))),
    ("lognormal", lambda D, m, s: D.LogNormal(m, s), (a(0., .5), a(.3, .5))),
    ("uniform", lambda D, lo, hi: D.Uniform(lo, hi), (a(-1., 2.), a(1., 5.))),
    ("exponential", lambda D, r: D.Exponential(r), (a(.5, 4.),)),
    ("laplace", lambda D, m, s: D.Laplace(m, s), (a(1., -2.), a(.5, 2.))),
    ("gamma", lambda D, c, r: D.Gamma(c, r), (a(.3, 5.), a(1., 2.))),
    ("beta", lambda D, c1, c0: D.Beta(c1, c0), (a(.5, 4.), a(2., 3.))),
    ("dirichlet", lambda D, c: D.Dirichlet(c), (a(.5, 2., 4.),)),
    ("bernoulli", lambda D, p: D.Bernoulli(p), (a(.1, .7),)),
    ("binomial", lambda D, n, p: D.Binomial(n, p), (a(10., 3.), a(.3, .8))),
    ("poisson", lambda D, r: D.Poisson(r), (a(.5, 12.),)),
    ("categorical", lambda D, p: D.Categorical(p), (a(.2, .3, .5),)),
    ("onehot", lambda D, p: D.OneHotCategorical(p), (a(.2, .3, .5),)),
    ("mvn", lambda D, m, c: D.MultivariateNormal(m, c), (a(1., -1.), np.array([[2., .8],
                                                                               [.8, 1.]]))),
    ("relaxed", lambda D, t, p: D.RelaxedOneHotCategorical(t, p), (a(.7)[0], a(.2, .3, .5))),
    ("mixture", lambda D, w, m, s: D.MixtureSameFamily(D.Categorical(w), D.Normal(m, s)),
     (a(.3, .7), a(-2., 2.), a(.5, 1.))),
]


@pytest.mark.parametrize("case", STATS, ids=[c[0] for c in STATS])
def test_sample_moments_match_torch(case):
    _, make, params = case
    glasstorch.manual_seed(0)
    d = make(glasstorch.distributions, *as_lib(glasstorch, params))
    ref = make(dists_of(torch), *as_lib(torch, params))
    x = d.sample((N,)).double().numpy()
    assert x.shape == (N,) + tuple(ref.batch_shape) + tuple(ref.event_shape)
    if case[0] == "categorical":
        counts = np.bincount(x.astype(int), minlength=3) / N
        np.testing.assert_allclose(counts, ref.probs.numpy(), atol=0.015)
        return
    mean = ref.mean.numpy() if case[0] != "relaxed" else None
    if mean is None:  # no closed form: compare with torch's own samples
        torch.manual_seed(0)
        mean = ref.sample((N,)).mean(0).numpy()
        np.testing.assert_allclose(x.mean(0), mean, atol=0.02)
        return
    sd = np.sqrt(ref.variance.numpy())
    np.testing.assert_allclose(x.mean(0), mean, atol=float(6 * sd.max() / np.sqrt(N)) + 1e-9)
    np.testing.assert_allclose(x.std(0), sd, rtol=0.05)
    if case[0] in ("gamma", "beta", "dirichlet"):
        # rsample draws from the same law
        xr = d.rsample((N,)).double().numpy()
        np.testing.assert_allclose(xr.mean(0), mean, atol=float(6 * sd.max() / np.sqrt(N)))


def test_manual_seed_reproduces_samples():
    D = glasstorch.distributions
    out = []
    for _ in range(2):
        glasstorch.manual_seed(123)
        out.append(np.concatenate([
            D.Normal(glasstorch.zeros(3), glasstorch.ones(3)).sample().numpy(),
            D.Gamma(glasstorch.ones(3), glasstorch.ones(3)).sample().numpy(),
            D.Categorical(glasstorch.ones(4)).sample((3,)).numpy().astype(np.float32)]))
    np.testing.assert_array_equal(out[0], out[1])


def test_sample_has_no_grad_and_rsample_has():
    D = glasstorch.distributions
    m = glasstorch.zeros(2, requires_grad=True)
    d = D.Normal(m, glasstorch.ones(2))
    assert not d.sample().requires_grad
    assert d.rsample().requires_grad
    assert not D.Categorical(logits=m).sample().requires_grad


# ------------------------------------------------------------------ gradients with shared noise

EPS = np.random.default_rng(5).normal(size=(4, 2, 3))
UNI = np.random.default_rng(6).uniform(0.01, 0.99, size=(4, 2, 3))


def _grads_with_noise(lib, monkeypatch, make, params, module, fn="_standard_normal",
                      noise=EPS):
    D = dists_of(lib)
    mod = getattr(D, module)
    monkeypatch.setattr(mod, fn, lambda shape, dtype=None, device=None, **k:
                        lib.tensor(noise[:, :shape[-2], :shape[-1]], dtype=dtype)
                        .reshape(shape) if len(shape) == 3 else
                        lib.tensor(noise.reshape(-1)[:int(np.prod(shape))],
                                   dtype=dtype).reshape(shape))
    ps = [lib.tensor(p, requires_grad=True) for p in params]
    x = make(D, *ps).rsample((4,))
    loss = (x.sin() * x).sum()
    return [g.numpy() for g in lib.autograd.grad(loss, ps)] + [x.detach().numpy()]


RNG = np.random.default_rng(7)
GRAD_CASES = [
    ("normal", lambda D, m, s: D.Normal(m, s), (RNG.normal(size=(2, 3)),
                                                RNG.uniform(.5, 2, (2, 3))), "normal"),
    ("lognormal", lambda D, m, s: D.LogNormal(m, s), (RNG.normal(size=(2, 3)) * .3,
                                                      RNG.uniform(.2, .6, (2, 3))), "normal"),
    ("mvn", lambda D, m, L: D.MultivariateNormal(m, scale_tril=L),
     (RNG.normal(size=(2, 3)), np.tril(RNG.normal(size=(3, 3))) + 3 * np.eye(3)),
     "multivariate_normal"),
    ("mvn_cov", lambda D, m, c: D.MultivariateNormal(m, covariance_matrix=c),
     (RNG.normal(size=(2, 3)), np.eye(3) * 2 + .5), "multivariate_normal"),
]


@pytest.mark.parametrize("case", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_rsample_gradients_match_torch_with_same_noise(case, monkeypatch):
    _, make, params, module = case
    got = _grads_with_noise(glasstorch, monkeypatch, make, params, module)
    want = _grads_with_noise(torch, monkeypatch, make, params, module)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("kind", ["uniform", "relaxed"])
def test_rand_based_rsample_gradients_match_torch(kind, monkeypatch):
    def run(lib):
        monkeypatch.setattr(lib, "rand", lambda shape, dtype=None, device=None:
                            lib.tensor(UNI.reshape(-1)[:int(np.prod(shape))],
                                       dtype=dtype).reshape(shape))
        D = dists_of(lib)
        if kind == "uniform":
            ps = [lib.tensor([[-1., 0., 2.]] * 2, dtype=lib.float64, requires_grad=True),
                  lib.tensor([[1., .5, 4.]] * 2, dtype=lib.float64, requires_grad=True)]
            x = D.Uniform(*ps).rsample((4,))
        else:
            ps = [lib.tensor(0.6, dtype=lib.float64, requires_grad=True),
                  lib.tensor([[.2, .3, .5], [.6, .3, .1]], dtype=lib.float64,
                             requires_grad=True)]
            x = D.RelaxedOneHotCategorical(ps[0], logits=ps[1]).rsample((4,))
        loss = (x.sin() * x).sum()
        return [g.numpy() for g in lib.autograd.grad(loss, ps)] + [x.detach().numpy()]

    got, want = run(glasstorch), run(torch)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("kind", ["exponential", "laplace"])
def test_location_scale_rsample_gradients(kind):
    # x = loc + scale * e: dx/dloc = 1, dx/dscale = (x - loc) / scale (as in torch)
    D = glasstorch.distributions
    glasstorch.manual_seed(0)
    scale = glasstorch.tensor([.5, 2.], requires_grad=True)
    if kind == "exponential":
        x = D.Exponential(scale).rsample((1000,))
        (g,) = glasstorch.autograd.grad(x.sum(), scale)
        np.testing.assert_allclose(g.numpy(), (-x / scale ** 2).sum(0).detach().numpy()
                                   * scale.detach().numpy(), rtol=1e-5)
    else:
        loc = glasstorch.tensor([1., -1.], requires_grad=True)
        x = D.Laplace(loc, scale).rsample((1000,))
        gl, gs = glasstorch.autograd.grad(x.sum(), (loc, scale))
        np.testing.assert_allclose(gl.numpy(), [1000., 1000.])
        np.testing.assert_allclose(gs.numpy(), ((x - loc) / scale).sum(0).detach().numpy(),
                                   rtol=1e-4)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gamma_rsample_gradient_is_torchs_implicit_gradient(dtype):
    D = glasstorch.distributions
    glasstorch.manual_seed(1)
    conc = np.array([.05, .3, 1., 2.5, 8., 60., 700.], dtype=dtype)
    c = glasstorch.tensor(conc, requires_grad=True)
    rate = glasstorch.tensor(np.full(7, 2.0, dtype=dtype), requires_grad=True)
    x = D.Gamma(c, rate).rsample((50,))
    gc, gr = glasstorch.autograd.grad(x.sum(), (c, rate))
    xs = x.detach().numpy()
    want = torch._standard_gamma_grad(torch.tensor(np.broadcast_to(conc, xs.shape).copy()),
                                      torch.tensor(xs * 2.0)).numpy() / 2.0
    np.testing.assert_allclose(gc.numpy(), want.sum(0), rtol=2e-3)
    np.testing.assert_allclose(gr.numpy(), (-xs / 2.0).sum(0), rtol=1e-5)
    assert str(gc.dtype).endswith(dtype)


@pytest.mark.parametrize("kind", ["beta", "dirichlet", "gamma"])
def test_expected_rsample_gradient_matches_torch(kind):
    # E[d f(x) / d alpha] estimated from rsample equals torch's estimate (and d E[f] / d alpha)
    def estimate(lib):
        lib.manual_seed(0)
        D = dists_of(lib)
        c = lib.tensor([.7, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        if kind == "beta":
            x = D.Beta(c[:2], c[1:]).rsample((N,))
        elif kind == "dirichlet":
            x = D.Dirichlet(c).rsample((N,))
        else:
            x = D.Gamma(c, lib.ones(3, dtype=lib.float64)).rsample((N,))
        (g,) = lib.autograd.grad((x * x).mean(0).sum(), c)
        return g.numpy()

    np.testing.assert_allclose(estimate(glasstorch), estimate(torch), rtol=0.06, atol=0.01)
