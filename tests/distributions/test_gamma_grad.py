"""The standard gamma sample's derivative in alpha (StandardGammaBackward0): the exact
implicit-reparameterisation gradient, against torch's approximation and a finite difference."""

from __future__ import annotations

import numpy as np

from glasstorch.distributions.utils import _lgamma_np, _pgamma_np, _standard_gamma_grad_np

from .common import glasstorch, torch


def _samples(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    alpha = np.exp(rng.uniform(np.log(1e-3), np.log(3e3), n))
    torch.manual_seed(seed)
    x = torch._standard_gamma(torch.tensor(alpha)).numpy()
    keep = x > 1e-30
    return alpha[keep], x[keep]


def _quantile_shift(alpha, x, h):
    """x' with P(alpha + h, x') = P(alpha, x), by Newton's method."""
    p0, xs = _pgamma_np(alpha, x), x.copy()
    for _ in range(60):
        pdf = np.exp((alpha + h - 1) * np.log(xs) - xs - _lgamma_np(alpha + h))
        xs = xs - (_pgamma_np(alpha + h, xs) - p0) / pdf
    return xs


def test_gradient_is_the_exact_implicit_derivative():
    alpha, x = _samples(600, seed=1)
    h = 1e-6 * alpha
    fd = (_quantile_shift(alpha, x, h) - x) / h
    g = _standard_gamma_grad_np(x, alpha)
    rel = np.abs(g - fd) / np.abs(fd)
    assert np.median(rel) < 1e-6 and np.quantile(rel, 0.99) < 1e-4


def test_gradient_agrees_with_torchs_approximation():
    alpha, x = _samples()
    want = torch._standard_gamma_grad(torch.tensor(alpha), torch.tensor(x)).numpy()
    got = _standard_gamma_grad_np(x, alpha)
    rel = np.abs(got - want) / np.abs(want)
    # torch's series / saddle-point / rational approximations are good to a few 1e-3
    assert rel.max() < 5e-3 and np.median(rel) < 1e-5


def test_rsample_backward_node_and_dtype():
    for dt in ("float32", "float64"):
        a = glasstorch.tensor(np.array([0.2, 1.5, 40.0], dtype=dt), requires_grad=True)
        glasstorch.manual_seed(0)
        x = glasstorch._standard_gamma(a)
        assert type(x.grad_fn).__name__ == "StandardGammaBackward0"
        (g,) = glasstorch.autograd.grad(x.sum(), a)
        assert str(g.dtype) == f"glasstorch.{dt}" or str(g.dtype).endswith(dt)
        want = torch._standard_gamma_grad(torch.tensor(a.detach().numpy()),
                                          torch.tensor(x.detach().numpy())).numpy()
        np.testing.assert_allclose(g.numpy(), want, rtol=5e-3)
