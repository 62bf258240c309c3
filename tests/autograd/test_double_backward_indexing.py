"""Second derivatives through indexing, gather/scatter and rearranging ops: gradgradcheck in
glasstorch, and create_graph second derivatives compared with torch's."""

import numpy as np
import pytest
import torch

import glasstorch

RNG = np.random.default_rng(7)
X = RNG.standard_normal((3, 4))
W = RNG.standard_normal((3, 4))
IDX = np.array([[0, 2, 1, 0], [2, 2, 0, 1]])
MASK = RNG.standard_normal((3, 4)) > 0


def _cases(lib):
    idx = lib.tensor(IDX)
    mask = lib.tensor(MASK)
    return {
        "getitem_basic": lambda x: x[1:, None, 2] * x[0, 1:3].sum(),
        "getitem_advanced": lambda x: x[[0, 2, 2]] ** 2,
        "getitem_mask": lambda x: x[mask] ** 3,
        "index_select": lambda x: x.index_select(1, lib.tensor([3, 0, 3])) ** 2,
        "gather": lambda x: x.gather(0, idx) ** 2,
        "scatter_add": lambda x: x.scatter_add(0, idx[:, :3], x[:2, :3] ** 2) ** 2,
        "scatter": lambda x: x.scatter(1, lib.tensor([[1], [0], [3]]), x[:, 2:3] ** 2) ** 2,
        "masked_fill": lambda x: x.masked_fill(mask, 0.5) ** 3,
        "masked_select": lambda x: x.masked_select(mask) ** 3,
        "take": lambda x: x.take(lib.tensor([0, 5, 5, 11])) ** 2,
        "index_add": lambda x: x.index_add(0, lib.tensor([2, 2]), x[:2] ** 2) ** 2,
        "cat": lambda x: lib.cat([x ** 2, x[:1]], 0) ** 2,
        "stack": lambda x: lib.stack([x, x ** 2], 1) ** 2,
        "flip_roll": lambda x: x.flip(1).roll(1, 0) ** 3,
        "repeat": lambda x: x.repeat(2, 1) ** 3,
        "tril_diag": lambda x: x.tril(-1) ** 2 + x.diag().sum(),
        "setitem_index_put": lambda x: _setitem(lib, x),
    }


def _setitem(lib, x):
    z = x * 1
    z[[0, 2]] = x[1:] ** 2
    z[1, 1:3] = x[0, :2] ** 3
    return z ** 2


NAMES = list(_cases(torch))


@pytest.mark.parametrize("name", NAMES)
def test_gradgradcheck(name):
    fn = _cases(glasstorch)[name]
    x = glasstorch.tensor(X, requires_grad=True)
    assert glasstorch.autograd.gradgradcheck(fn, (x,))


@pytest.mark.parametrize("name", NAMES)
def test_second_derivative_matches_torch(name):
    out = []
    for lib in (torch, glasstorch):
        x = lib.tensor(X, requires_grad=True)
        y = _cases(lib)[name](x)
        (g,) = lib.autograd.grad((y * lib.tensor(np.resize(W, tuple(y.shape)))).sum(), x,
                                 create_graph=True)
        (gg,) = lib.autograd.grad((g * lib.tensor(W)).sum(), x)
        out.append((g.detach().numpy() if lib is torch else g.detach()._data,
                    gg.numpy() if lib is torch else gg._data))
    (tg, tgg), (gg1, ggg) = out
    np.testing.assert_allclose(gg1, tg, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ggg, tgg, rtol=1e-10, atol=1e-12)
