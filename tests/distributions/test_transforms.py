"""Transforms vs torch: forward, inverse, log_abs_det_jacobian, shapes, constraints."""

from __future__ import annotations

import numpy as np
import pytest

from .common import compare, dists_of, glasstorch

rng = np.random.default_rng(1)
X = rng.normal(size=(2, 3)).astype(np.float32)
XP = np.abs(X) + 0.1

TRANSFORMS = [
    ("exp", lambda T, t: T.ExpTransform(), X),
    ("affine", lambda T, t: T.AffineTransform(1.5, -2.0), X),
    ("affine_tensor", lambda T, t: T.AffineTransform(t.tensor([1., 2., 3.]),
                                                     t.tensor([.5, -1., 2.])), X),
    ("affine_event", lambda T, t: T.AffineTransform(t.zeros(3), t.tensor([.5, -1., 2.]),
                                                    event_dim=1), X),
    ("sigmoid", lambda T, t: T.SigmoidTransform(), X * 5),
    ("tanh", lambda T, t: T.TanhTransform(), X),
    ("power", lambda T, t: T.PowerTransform(t.tensor(2.5)), XP),
    ("power_neg", lambda T, t: T.PowerTransform(t.tensor(-0.5)), XP),
    ("abs", lambda T, t: T.AbsTransform(), X),
    ("softmax", lambda T, t: T.SoftmaxTransform(), X),
    ("stickbreaking", lambda T, t: T.StickBreakingTransform(), X),
    ("compose", lambda T, t: T.ComposeTransform([T.AffineTransform(0.5, 2.0),
                                                 T.ExpTransform()]), X),
    ("compose_stick", lambda T, t: T.ComposeTransform([T.ExpTransform().inv.inv,
                                                       T.StickBreakingTransform()]), X),
    ("compose_empty", lambda T, t: T.ComposeTransform([]), X),
    ("inverse_exp", lambda T, t: T.ExpTransform().inv, XP),
    ("independent", lambda T, t: T.IndependentTransform(T.ExpTransform(), 1), X),
]


def _t(lib):
    return dists_of(lib).transforms


@pytest.mark.parametrize("case", TRANSFORMS, ids=[c[0] for c in TRANSFORMS])
def test_transform_matches_torch(case):
    _, make, x = case
    tol = dict(rtol=1e-5, atol=1e-5)
    compare(lambda lib: make(_t(lib), lib)(lib.tensor(x)), what="forward", **tol)
    compare(lambda lib: make(_t(lib), lib).inv(make(_t(lib), lib)(lib.tensor(x))),
            what="inverse", rtol=1e-4, atol=1e-4)

    def ladj(lib):
        t = make(_t(lib), lib)
        xt = lib.tensor(x)
        return t.log_abs_det_jacobian(xt, t(xt))

    compare(ladj, what="log_abs_det_jacobian", **tol)
    for attr in ("domain", "codomain"):
        compare(lambda lib: repr(getattr(make(_t(lib), lib), attr)), what=attr)
    compare(lambda lib: make(_t(lib), lib).bijective, what="bijective")
    compare(lambda lib: make(_t(lib), lib).forward_shape((2, 3)), what="forward_shape")
    compare(lambda lib: make(_t(lib), lib).inverse_shape((2, 3)), what="inverse_shape")
    compare(lambda lib: make(_t(lib), lib).sign, what="sign")
    compare(lambda lib: repr(make(_t(lib), lib)), what="repr")


def test_ladj_matches_autograd_jacobian():
    # log|dy/dx| from the formula equals the log of the autograd derivative (elementwise maps)
    T = glasstorch.distributions.transforms
    for t in (T.ExpTransform(), T.SigmoidTransform(), T.TanhTransform(),
              T.AffineTransform(2.0, -3.0), T.PowerTransform(glasstorch.tensor(3.0))):
        x = glasstorch.tensor(XP.ravel(), requires_grad=True)
        y = t(x)
        (g,) = glasstorch.autograd.grad(y.sum(), x)
        np.testing.assert_allclose(t.log_abs_det_jacobian(x, y).detach().numpy(),
                                   np.log(np.abs(g.numpy())), rtol=1e-5, atol=1e-5)


def test_cache_and_equality():
    T = glasstorch.distributions.transforms
    t = T.TanhTransform(cache_size=1)
    x = glasstorch.tensor([30.0])  # tanh rounds to 1; only the cache can invert it
    y = t(x)
    assert t.inv(y) is x
    assert T.ExpTransform() == T.ExpTransform()
    assert T.ExpTransform().inv.inv == T.ExpTransform()
    assert T.AffineTransform(1.0, 2.0) == T.AffineTransform(1.0, 2.0)
    assert T.AffineTransform(1.0, 2.0) != T.AffineTransform(1.0, 3.0)
    with pytest.raises(ValueError):
        T.ExpTransform(cache_size=2)
    comp = T.ComposeTransform([T.ExpTransform(), T.AffineTransform(0.0, 2.0)])
    assert comp.inv.inv is comp
    assert comp.event_dim == 0
