"""biject_to / transform_to and the transforms they build, against torch."""

from __future__ import annotations

import numpy as np
import pytest

from .common import compare, dists_of, glasstorch, torch

rng = np.random.default_rng(3)


def _constraints(lib):
    C = dists_of(lib).constraints
    return {
        "real": C.real, "real_vector": C.real_vector, "positive": C.positive,
        "nonnegative": C.nonnegative, "greater_than": C.greater_than(2.0),
        "greater_than_eq": C.greater_than_eq(-1.0), "less_than": C.less_than(3.0),
        "unit_interval": C.unit_interval, "interval": C.interval(1.0, 3.0),
        "half_open_interval": C.half_open_interval(-2.0, 0.5),
        "interval_tensor": C.interval(lib.tensor([0.0, 1.0]), lib.tensor([2.0, 5.0])),
        "greater_than_tensor": C.greater_than(lib.tensor([1.0, 2.0])),
        "simplex": C.simplex, "lower_cholesky": C.lower_cholesky,
        "corr_cholesky": C.corr_cholesky, "positive_definite": C.positive_definite,
        "positive_semidefinite": C.positive_semidefinite,
        "independent": C.independent(C.positive, 1),
        "independent_interval": C.independent(C.interval(0.0, 2.0), 2),
        "independent_pd": C.independent(C.positive_definite, 1),
        "cat": C.cat([C.positive, C.real], dim=0, lengths=[2, 3]),
        "stack": C.stack([C.positive, C.unit_interval], dim=1),
        # no transform in either registry
        "lower_triangular": C.lower_triangular, "square": C.square, "symmetric": C.symmetric,
        "boolean": C.boolean, "one_hot": C.one_hot,
        "nonnegative_integer": C.nonnegative_integer, "integer_interval": C.integer_interval(0, 3),
        "dependent": C.dependent, "multinomial": C.multinomial(3),
    }


NAMES = list(_constraints(torch))


def _describe(t, lib):
    """A transform as nested (class name, parameters) so both libraries' can be compared."""
    T = dists_of(lib).transforms
    name = type(t).__name__
    if isinstance(t, T.ComposeTransform):
        return name, [_describe(p, lib) for p in t.parts]
    if isinstance(t, T.IndependentTransform):
        return name, _describe(t.base_transform, lib), t.reinterpreted_batch_ndims
    if isinstance(t, T.AffineTransform):
        val = [np.asarray(v.tolist() if hasattr(v, "tolist") else v).tolist()
               for v in (t.loc, t.scale)]
        return name, val, t.event_dim
    if isinstance(t, T.CatTransform):
        return name, [_describe(p, lib) for p in t.transforms], t.dim, t.lengths
    if isinstance(t, T.StackTransform):
        return name, [_describe(p, lib) for p in t.transforms], t.dim
    return name, t._cache_size


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("name", NAMES)
def test_registry_builds_torchs_transform(registry, name):
    def build(lib):
        return _describe(getattr(dists_of(lib), registry)(_constraints(lib)[name]), lib)

    compare(build, what=f"{registry}({name})")


def _samples(name):
    """An unconstrained input of the right shape for the transform of constraint ``name``."""
    shapes = {"simplex": (2, 3), "lower_cholesky": (2, 3, 3), "positive_definite": (2, 3, 3),
              "positive_semidefinite": (2, 3, 3), "corr_cholesky": (2, 6), "cat": (5, 2),
              "stack": (4, 2), "independent_interval": (2, 3, 2), "independent_pd": (2, 3, 3),
              "interval_tensor": (3, 2), "greater_than_tensor": (3, 2)}
    return rng.normal(size=shapes.get(name, (3, 4))).astype(np.float64)


MAPPED = [n for n in NAMES if n not in (
    "lower_triangular", "square", "symmetric", "boolean", "one_hot", "nonnegative_integer",
    "integer_interval", "dependent", "multinomial")]


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("name", MAPPED)
def test_transforms_map_like_torch(registry, name):
    x = _samples(name)

    def make(lib):
        return getattr(dists_of(lib), registry)(_constraints(lib)[name])

    compare(lambda lib: make(lib)(lib.tensor(x)), what="forward", rtol=1e-6, atol=1e-8)
    compare(lambda lib: bool(make(lib).codomain.check(make(lib)(lib.tensor(x))).all()),
            what="lands in the constraint")
    compare(lambda lib: make(lib).inv(make(lib)(lib.tensor(x))), what="inverse",
            rtol=1e-5, atol=1e-6)

    def ladj(lib):
        t = make(lib)
        xt = lib.tensor(x)
        return t.log_abs_det_jacobian(xt, t(xt))

    compare(ladj, what="log_abs_det_jacobian", rtol=1e-6, atol=1e-8)
    for attr in ("bijective", "event_dim"):
        compare(lambda lib: getattr(make(lib), attr), what=attr)
    for attr in ("domain", "codomain"):
        compare(lambda lib: (type(getattr(make(lib), attr)).__name__,
                             getattr(make(lib), attr).event_dim), what=attr)
    compare(lambda lib: tuple(make(lib).forward_shape(x.shape)), what="forward_shape")


def test_gradients_flow_through_new_transforms():
    # parameters optimised in unconstrained space: the gradient reaches them as in torch
    def grads(lib, name, x0):
        c = _constraints(lib)[name]
        x = lib.tensor(x0, requires_grad=True)
        t = dists_of(lib).transform_to(c)
        y = t(x)
        loss = (y * y).sum()
        if t.bijective:
            loss = loss + t.log_abs_det_jacobian(x, y).sum()
        (g,) = lib.autograd.grad(loss, x)
        return g

    for name in ("corr_cholesky", "positive_definite", "lower_cholesky", "cat", "stack"):
        x0 = _samples(name)
        compare(lambda lib: grads(lib, name, x0), what=f"grad {name}", rtol=1e-6, atol=1e-8)


def test_corr_cholesky_shapes_and_errors():
    for shape in [(6,), (2, 10), (1,), (5,)]:
        compare(lambda lib: dists_of(lib).transforms.CorrCholeskyTransform()
                .forward_shape(shape), what=f"forward_shape {shape}")
    for shape in [(3, 3), (2, 4, 4), (2, 3)]:
        compare(lambda lib: dists_of(lib).transforms.CorrCholeskyTransform()
                .inverse_shape(shape), what=f"inverse_shape {shape}")


def test_register_custom_constraint_and_errors():
    D = glasstorch.distributions
    C, T = D.constraints, D.transforms

    class _Even(C.Constraint):
        def check(self, value):
            return value % 2 == 0

    even = _Even()
    with pytest.raises(NotImplementedError, match="Cannot transform _Even constraints"):
        D.biject_to(even)
    reg = D.constraint_registry.ConstraintRegistry()

    @reg.register(_Even)
    def _factory(constraint):
        return T.AffineTransform(0.0, 2.0)

    assert isinstance(reg(even), T.AffineTransform) and reg(even).scale == 2.0
    reg.register(even, lambda c: T.ExpTransform())  # an instance stands for its class
    assert isinstance(reg(even), T.ExpTransform)
    for bad in (3, int):
        with pytest.raises(TypeError):
            reg.register(bad, lambda c: T.ExpTransform())
        with pytest.raises(TypeError):
            torch.distributions.constraint_registry.ConstraintRegistry().register(
                bad, lambda c: None)
    assert D.biject_to is not D.transform_to
    with pytest.raises(NotImplementedError):
        D.biject_to(C.lower_cholesky)  # only transform_to has one, as in torch


def test_cat_and_stack_transform_checks():
    T = glasstorch.distributions.transforms
    cat = T.CatTransform([T.ExpTransform(), T.identity_transform], dim=0, lengths=[1, 2])
    with pytest.raises(ValueError):
        cat(glasstorch.zeros(4))  # the blocks cover 3 entries
    stack = T.StackTransform([T.ExpTransform(), T.SigmoidTransform()], dim=0)
    with pytest.raises(ValueError):
        stack(glasstorch.zeros(3))
    assert cat.length == 3 and cat.with_cache(1).transforms[0]._cache_size == 1
    x = glasstorch.randn(3)
    y = cat.with_cache(1)(x)
    assert glasstorch.allclose(cat.inv(y), x, atol=1e-6)
