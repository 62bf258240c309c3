"""Second derivatives of the common reductions, scans and sorts: gradgradcheck, and
torch.autograd.grad(..., create_graph=True) compared with torch's; plus the ops torch
does not differentiate."""

import numpy as np
import pytest
import torch

import glasstorch

CASES = {
    "sum_dim": (lambda lib, a: (a * a).sum(1), [(3, 4)]),
    "mean": (lambda lib, a: (a * a).mean(), [(3, 4)]),
    "prod": (lambda lib, a: a.prod(), [(2, 3)]),
    "prod_dim": (lambda lib, a: a.prod(1, keepdim=True), [(3, 4)]),
    "prod_zero": (lambda lib, a: (a * lib.tensor([1.0, 0.0, 1.0, 1.0], dtype=a.dtype))
                  .prod(1), [(3, 4)]),
    "var": (lambda lib, a: a.var(1), [(3, 4)]),
    "std": (lambda lib, a: a.std(), [(3, 4)]),
    "std_correction": (lambda lib, a: a.std((0, 1), correction=0, keepdim=True), [(3, 4)]),
    "var_mean": (lambda lib, a: lib.var_mean(a, 0), [(3, 4)]),
    "std_mean": (lambda lib, a: lib.std_mean(a, 1), [(3, 4)]),
    "logsumexp": (lambda lib, a: a.logsumexp(1), [(3, 4)]),
    "nansum": (lambda lib, a: (a * a).nansum(0), [(3, 4)]),
    "cumsum": (lambda lib, a: (a * a).cumsum(1), [(3, 4)]),
    "cumprod": (lambda lib, a: a.cumprod(0), [(3, 4)]),
    "max_dim": (lambda lib, a: (a * a).max(1).values, [(3, 4)]),
    "amax": (lambda lib, a: (a * a).amax(0), [(3, 4)]),
    "max_all": (lambda lib, a: (a * a).max(), [(3, 4)]),
    "sort": (lambda lib, a: (a * a).sort(1).values, [(3, 4)]),
    "topk": (lambda lib, a: (a * a).topk(2).values, [(3, 4)]),
    "median_dim": (lambda lib, a: (a * a).median(1).values, [(3, 5)]),
    "cummax": (lambda lib, a: (a * a).cummax(1).values, [(3, 4)]),
}


def _inputs(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(0.5, 2, size=s) * rng.choice([-1, 1], size=s) for s in shapes]


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradgradcheck(name):
    fn, shapes = CASES[name]
    leaves = [glasstorch.tensor(a, requires_grad=True) for a in _inputs(shapes)]
    assert glasstorch.autograd.gradgradcheck(lambda *xs: fn(glasstorch, *xs), tuple(leaves))


def _outputs(out):
    return out if isinstance(out, tuple) else (out,)


@pytest.mark.parametrize("name", sorted(CASES))
def test_second_derivative_matches_torch(name):
    fn, shapes = CASES[name]
    arrays = _inputs(shapes, seed=1)
    results = []
    for lib in (torch, glasstorch):
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        outs = _outputs(fn(lib, *xs))
        loss = sum((o * lib.tensor(np.linspace(-1, 1, o.numel()).reshape(tuple(o.shape))))
                   .sum() for o in outs)
        grads = lib.autograd.grad(loss, xs, create_graph=True)
        total = sum((g * g).sum() for g in grads)
        second = lib.autograd.grad(total, xs, allow_unused=True)
        results.append([np.zeros(a.shape) if g is None else g.detach().numpy()
                        for g, a in zip(second, arrays)])
    for t, g in zip(*results):
        np.testing.assert_allclose(g, t, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("call,node,op", [
    (lambda x: x.unique(), "Unique2Backward0", "_unique2"),
    (lambda x: x.unique(dim=0), "UniqueDimBackward0", "unique_dim"),
    (lambda x: x.unique_consecutive(), "UniqueConsecutiveBackward0", "unique_consecutive"),
])
def test_unique_has_no_derivative(call, node, op):
    for lib in (torch, glasstorch):
        x = lib.tensor([[1.0, 2.0], [1.0, 2.0]], requires_grad=True)
        out = call(x)
        assert type(out.grad_fn).__name__ == node
        with pytest.raises(NotImplementedError, match=op):
            out.sum().backward()


@pytest.mark.parametrize("call", [lambda x: x.argmax(), lambda x: x.argsort(),
                                  lambda x: x.all(), lambda x: x.count_nonzero(),
                                  lambda x: x.histc(4), lambda x: (x > 0).any(1),
                                  lambda x: x.max(1).indices])
def test_not_differentiable(call):
    for lib in (torch, glasstorch):
        out = call(lib.tensor([[1.0, -2.0], [3.0, 0.5]], requires_grad=True))
        assert out.grad_fn is None and not out.requires_grad


def test_saved_input_modified_in_place_is_detected():
    for lib in (torch, glasstorch):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 1
        p = y.prod()
        y.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            p.backward()
