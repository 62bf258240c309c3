"""FractionalMaxPool2d/3d against torch: the samples drawn by torch.rand under a seed, the
module's checks and buffer, and gradients through the chosen windows."""

import numpy as np
import pytest

import glasstorch

torch = pytest.importorskip("torch")


def _run(lib, nd, **kw):
    lib.manual_seed(7)
    shape = (2, 3, 9, 9) if nd == 2 else (2, 2, 7, 6, 8)
    x = lib.randn(*shape, requires_grad=True)
    cls = lib.nn.FractionalMaxPool2d if nd == 2 else lib.nn.FractionalMaxPool3d
    v, i = cls(3 if nd == 2 else 2, return_indices=True, **kw)(x)
    v.sum().backward()
    return v.detach().numpy(), i.numpy(), x.grad.numpy(), v.grad_fn.name()


@pytest.mark.parametrize("nd,kw", [(2, {"output_ratio": 0.5}), (2, {"output_size": (4, 3)}),
                                   (3, {"output_ratio": (0.5, 0.5, 0.4)}),
                                   (3, {"output_size": 3})])
def test_seeded_module_matches_torch(nd, kw):
    ours, theirs = _run(glasstorch, nd, **kw), _run(torch, nd, **kw)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)
    np.testing.assert_array_equal(ours[1], theirs[1])
    np.testing.assert_allclose(ours[2], theirs[2])
    assert ours[3] == theirs[3]


def test_fresh_samples_per_call():
    m = glasstorch.nn.FractionalMaxPool2d(2, output_size=4, return_indices=True)
    x = glasstorch.randn(1, 4, 9, 9)
    assert any((m(x)[1] != m(x)[1]).any().item() for _ in range(5))


def test_given_samples_are_a_buffer():
    s = glasstorch.rand(1, 1, 2)
    m = glasstorch.nn.FractionalMaxPool2d(2, output_size=3, _random_samples=s)
    assert list(dict(m.named_buffers())) == ["_random_samples"]
    x = glasstorch.randn(1, 1, 6, 6)
    assert (m(x) == m(x)).all().item()


@pytest.mark.parametrize("build", [
    lambda lib: lib.nn.FractionalMaxPool2d(2),
    lambda lib: lib.nn.FractionalMaxPool2d(2, 3, 0.5),
    lambda lib: lib.nn.FractionalMaxPool3d(2, output_ratio=(0.5, 1.0, 0.5)),
    lambda lib: lib.nn.functional.fractional_max_pool2d(lib.randn(1, 1, 6, 6), 2),
    lambda lib: lib.nn.functional.fractional_max_pool2d(lib.randn(1, 1, 6, 6), 2,
                                                         output_ratio=0.5),
    lambda lib: lib.nn.functional.fractional_max_pool2d(lib.ones(1, 1, 6, 6, dtype=lib.long),
                                                         2, output_size=2),
    lambda lib: lib.nn.functional.fractional_max_pool2d(
        lib.randn(1, 1, 6, 6), 2, output_size=2, _random_samples=lib.rand(1, 1, 2).double()),
])
def test_errors_match(build):
    with pytest.raises(Exception) as theirs:
        build(torch)
    with pytest.raises(type(theirs.value)) as ours:
        build(glasstorch)
    assert str(ours.value) == str(theirs.value)
