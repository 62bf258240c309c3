"""kl_divergence vs torch for every registered pair; register_kl dispatch."""

from __future__ import annotations

import numpy as np
import pytest

from .common import as_lib, compare, dists_of, glasstorch

f32 = np.float32


def a(*v):
    return np.array(v, dtype=f32)


# makers: name -> (constructor(D, *params), params)
P = {
    "Normal": (lambda D, m, s: D.Normal(m, s), (a(0., 1., -2.), a(1., .5, 3.))),
    "Laplace": (lambda D, m, s: D.Laplace(m, s), (a(.5, 0., 1.), a(2., 1., .3))),
    "Exponential": (lambda D, r: D.Exponential(r), (a(.5, 1., 4.),)),
    "Gamma": (lambda D, c, r: D.Gamma(c, r), (a(.5, 2., 7.), a(1., 3., .5))),
    "Beta": (lambda D, c1, c0: D.Beta(c1, c0), (a(.5, 2., 7.), a(1., 3., .5))),
    "Uniform": (lambda D, lo, hi: D.Uniform(lo, hi), (a(.1, 0., .2), a(.5, 1., .9))),
    "Uniform_wide": (lambda D, lo, hi: D.Uniform(lo, hi), (a(-1., 0., -3.), a(2., 1., 3.))),
    "Bernoulli": (lambda D, p: D.Bernoulli(p), (a(.3, 0., 1.),)),
    "Poisson": (lambda D, r: D.Poisson(r), (a(.5, 2., 10.),)),
    "Binomial": (lambda D, p: D.Binomial(4, p), (a(.3, .5, .9),)),
    "Categorical": (lambda D, p: D.Categorical(p), (np.array([[.2, .3, .5], [0., .5, .5],
                                                              [.9, .05, .05]], f32),)),
    "OneHotCategorical": (lambda D, p: D.OneHotCategorical(p),
                          (np.array([[.2, .3, .5], [.1, .1, .8], [.3, .3, .4]], f32),)),
    "Dirichlet": (lambda D, c: D.Dirichlet(c), (np.array([[.5, 1., 2.], [3., 3., 3.],
                                                          [.1, 5., 1.]], f32),)),
    "MultivariateNormal": (lambda D, m, c: D.MultivariateNormal(m, covariance_matrix=c),
                           (np.array([[0., 1.], [1., 2.], [-1., 0.]], f32),
                            np.array([[[2., .5], [.5, 1.]]] * 3, f32))),
    "Independent": (lambda D, m, s: D.Independent(D.Normal(m, s), 1),
                    (np.array([[0., 1.], [2., 3.], [1., 1.]], f32), np.full((3, 2), 1.5, f32))),
    "LogNormal": (lambda D, m, s: D.LogNormal(m, s), (a(0., 1., -2.), a(1., .5, 3.))),
}

SAME = [(k, k) for k in P if k != "Uniform_wide"] + [("Uniform", "Uniform_wide"),
                                                       ("Uniform_wide", "Uniform")]
CROSS = [(p, q) for p in ("Bernoulli", "Beta", "Exponential", "Gamma", "Laplace", "Normal",
                          "Uniform", "Uniform_wide", "Poisson")
         for q in ("Bernoulli", "Beta", "Binomial", "Exponential", "Gamma", "Laplace",
                   "Normal", "Uniform", "Poisson") if p.split("_")[0] != q]


def _q_params(params):
    # different values for q so KL(p || q) is not zero
    return tuple(np.flip(x, 0).copy() if x.ndim else x for x in params)


@pytest.mark.parametrize("pair", SAME + CROSS, ids=[f"{p}-{q}" for p, q in SAME + CROSS])
def test_kl_matches_torch(pair):
    pn, qn = pair
    (pc, pp), (qc, qp) = P[pn], P[qn]
    if pn == qn:
        qp = _q_params(qp)

    def kl(lib):
        D = dists_of(lib)
        return D.kl_divergence(pc(D, *as_lib(lib, pp)), qc(D, *as_lib(lib, qp)))

    compare(kl, rtol=1e-5, atol=1e-5, what=f"KL({pn} || {qn})")


def test_kl_gradients_match_torch():
    def grads(lib):
        D = dists_of(lib)
        m = lib.tensor([0.5, -1.0], requires_grad=True)
        s = lib.tensor([1.5, 0.3], requires_grad=True)
        c = lib.tensor([2.0, 0.7], requires_grad=True)
        kl = (D.kl_divergence(D.Normal(m, s), D.Normal(lib.zeros(2), lib.ones(2))).sum()
              + D.kl_divergence(D.Gamma(c, s), D.Gamma(lib.ones(2), lib.ones(2))).sum())
        return lib.cat(lib.autograd.grad(kl, (m, s, c)))

    compare(grads, rtol=1e-5, atol=1e-5)


def test_register_kl_dispatch_and_errors():
    D = glasstorch.distributions

    class MyNormal(D.Normal):
        pass

    n = MyNormal(glasstorch.zeros(1), glasstorch.ones(1))
    # a subclass falls back to the parent's rule
    assert float(D.kl_divergence(n, D.Normal(glasstorch.ones(1), glasstorch.ones(1)))) == 0.5

    @D.register_kl(MyNormal, D.Normal)
    def _mine(p, q):
        return glasstorch.full(p.batch_shape, 7.0)

    assert float(D.kl_divergence(n, n)) == 7.0
    with pytest.raises(NotImplementedError, match="No KL"):
        D.kl_divergence(D.Poisson(glasstorch.ones(1)), D.Normal(0.0, 1.0))
    # as in torch, any class is taken (pyro registers its own Distribution base); a non-class
    # is refused
    assert callable(D.register_kl(int, D.Normal))
    with pytest.raises(TypeError):
        D.register_kl(3, D.Normal)
