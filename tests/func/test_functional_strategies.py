"""autograd.functional.jacobian/hessian with ``vectorize=True`` and the forward-mode
strategies: results (values and container types) and errors as torch's."""

import numpy as np
import pytest

import glasstorch

torch = pytest.importorskip("torch")

X = np.array([0.3, -1.2, 0.7])

FUNCS = {
    "single": (lambda x: x.sin() * x, False),
    "tuple_out": (lambda x: (x.exp(), x.sum()), False),
    "tuple_in": (lambda x, z: x * z.cos(), True),
    "tuple_in_out": (lambda x, z: (x * z, x.sum()), True),
    "tuple_of_one": (lambda x: (x, x * 2), True),
}

KWARGS = [dict(), dict(vectorize=True), dict(vectorize=True, strategy="forward-mode")]


def _run(lib, name, kwargs):
    fn, tuple_in = FUNCS[name]
    x = lib.tensor(X)
    nargs = fn.__code__.co_argcount
    inputs = tuple(x * (k + 1) for k in range(nargs)) if tuple_in else x
    return lib.autograd.functional.jacobian(fn, inputs, **kwargs)


def _same(ours, theirs):
    if isinstance(theirs, torch.Tensor):
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-7,
                                   atol=1e-12)
        return
    assert type(ours) is type(theirs), (type(ours), type(theirs))
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        _same(a, b)


@pytest.mark.parametrize("kwargs", KWARGS, ids=["loop", "vectorize", "forward"])
@pytest.mark.parametrize("name", sorted(FUNCS))
def test_jacobian_strategies(name, kwargs):
    _same(_run(glasstorch, name, kwargs), _run(torch, name, kwargs))


@pytest.mark.parametrize("kwargs", [dict(vectorize=True),
                                    dict(vectorize=True, outer_jacobian_strategy="forward-mode")])
def test_hessian_strategies(kwargs):
    results = [lib.autograd.functional.hessian(lambda x, z: (x.sin() * z ** 2).sum(),
                                                 (lib.tensor(X), lib.tensor(X[::-1].copy())),
                                                 **kwargs) for lib in (glasstorch, torch)]
    _same(*results)


ERRORS = {
    "forward_needs_vectorize": dict(strategy="forward-mode"),
    "bad_strategy": dict(strategy="sideways", vectorize=True),
    "forward_create_graph": dict(strategy="forward-mode", vectorize=True, create_graph=True),
    "strict_vectorize": dict(strict=True, vectorize=True),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name):
    raised = []
    for lib in (glasstorch, torch):
        with pytest.raises(Exception) as info:
            lib.autograd.functional.jacobian(lambda x: x * 2, lib.tensor(X), **ERRORS[name])
        raised.append(info.value)
    assert type(raised[0]) is type(raised[1])
    assert str(raised[0]) == str(raised[1])
