"""Seeded samples of the distributions are torch's, value for value (they draw through the
torch-exact random ops: _standard_gamma, binomial, poisson, exponential_, ...)."""

import numpy as np
import pytest

import glasstorch as gt

torch = pytest.importorskip("torch")

CASES = [("Gamma", (2.5, 1.5)), ("Gamma", (0.3, 2.0)), ("Chi2", (3.0,)), ("StudentT", (4.0,)),
         ("Binomial", (10.0, 0.3)), ("Exponential", (2.0,)), ("Poisson", (3.5,)),
         ("Beta", (2.0, 3.0)), ("Dirichlet", ([1.0, 2.0, 3.0],)), ("Normal", (0.0, 1.0)),
         ("Uniform", (0.0, 1.0))]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,args", CASES)
def test_samples_equal_torch(name, args, dtype):
    out = []
    for lib in (torch, gt):
        lib.manual_seed(3)
        params = [lib.tensor(a, dtype=getattr(lib, dtype)) for a in args]
        out.append(getattr(lib.distributions, name)(*params).sample((40,)).numpy())
    np.testing.assert_array_equal(out[1], out[0])


def test_legacy_new_constructor():
    for lib in (torch, gt):
        x = lib.zeros(2, dtype=lib.float64)
        assert tuple(x.new(3).shape) == (3,) and tuple(x.new(lib.Size([2, 4])).shape) == (2, 4)
        assert x.new((2, 3)).tolist() == [2.0, 3.0] and tuple(x.new().shape) == (0,)
        t = lib.ones(2, dtype=lib.float64, requires_grad=True)
        alias = x.new(t)
        assert type(alias.grad_fn).__name__ == "AliasBackward0"
        with pytest.raises(TypeError):
            x.new(lib.ones(2))
        with pytest.raises(TypeError, match="data must be a sequence"):
            x.new(2.5)
        assert tuple(x.new(size=(2, 3)).shape) == (2, 3) and x.new(data=(2, 3)).tolist() == [2, 3]
        s = lib.arange(4.0, dtype=lib.float64).untyped_storage()
        assert x.new(storage=s).tolist() == [0.0, 1.0, 2.0, 3.0] == x.new(s).tolist()
