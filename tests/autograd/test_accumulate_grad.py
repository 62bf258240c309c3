"""Leaf gradients (layout, stealing without a copy, create_graph) and the engine's fast paths,
checked against torch: the same scenario runs in both libraries."""

import numpy as np
import pytest

import glasstorch

torch = pytest.importorskip("torch")

_RNG = np.random.default_rng(0)
_W, _B, _X = (_RNG.standard_normal(s) for s in ((4, 6), (4,), (3, 6)))


def _array(lib, a, dtype="float32"):
    return lib.from_numpy(np.ascontiguousarray(a, dtype=dtype))


def _linear(lib):
    """Linear(6, 4) with the same weights in both libraries."""
    layer = lib.nn.Linear(6, 4)
    with lib.no_grad():
        layer.weight.copy_(_array(lib, _W))
        layer.bias.copy_(_array(lib, _B))
    return layer


def _linear_weight_grad(lib, create_graph=False):
    layer = _linear(lib)
    (layer(_array(lib, _X)) ** 2).sum().backward(create_graph=create_graph)
    return layer.weight.grad


def test_linear_weight_grad_is_contiguous_like_torch():
    g, t = _linear_weight_grad(glasstorch), _linear_weight_grad(torch)
    assert g.stride() == t.stride() == (6, 1)


@pytest.mark.parametrize("make", [
    lambda lib: lib.ones(6, 4).t(),             # transposed: the leaf's strides are kept
    lambda lib: lib.ones(4, 12)[:, ::2],        # not dense: the gradient is contiguous
    lambda lib: lib.ones(2, 3, 4).permute(2, 0, 1),
])
def test_leaf_grad_follows_torchs_layout_contract(make):
    def strides(lib):
        w = make(lib).detach().requires_grad_()
        x = lib.ones(3, w.shape[-1]) if w.dim() == 2 else lib.ones(w.shape)
        (x @ w.t() if w.dim() == 2 else x * w).pow(2).sum().backward()
        return w.grad.stride()
    assert strides(glasstorch) == strides(torch)


def test_create_graph_leaf_grad_is_a_recorded_copy():
    g = _linear_weight_grad(glasstorch, create_graph=True)
    t = _linear_weight_grad(torch, create_graph=True)
    assert type(g.grad_fn).__name__ == type(t.grad_fn).__name__ == "CopyBackwards"
    np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("transposed", [False, True])
def test_mm_gradient_of_a_column_major_operand_keeps_its_layout(transposed):
    a_np, b_np = _RNG.standard_normal((5, 3)), _RNG.standard_normal((4, 3))

    def grads(lib):
        a = _array(lib, a_np, "float64").requires_grad_()
        b = _array(lib, b_np, "float64")
        b = (b.t() if transposed else b.t().contiguous()).requires_grad_()
        out = lib.addmm(lib.zeros(4, dtype=lib.float64), a, b, alpha=2.0)
        ga, gb = lib.autograd.grad(out.sin().sum(), (a, b))
        return ga, gb
    (ga, gb), (ta, tb) = grads(glasstorch), grads(torch)
    for g, t in ((ga, ta), (gb, tb)):
        assert g.stride() == t.stride()
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-12)


def test_column_major_mm_double_backward_matches_torch():
    x_np, w_np = _RNG.standard_normal((5, 3)), _RNG.standard_normal((4, 3))

    def hvp(lib):
        x = _array(lib, x_np, "float64").requires_grad_()
        w = _array(lib, w_np, "float64").requires_grad_()
        (gw,) = lib.autograd.grad((x @ w.t()).tanh().sum(), (w,), create_graph=True)
        (hx,) = lib.autograd.grad((gw ** 2).sum(), (x,))
        return hx
    np.testing.assert_allclose(hvp(glasstorch).numpy(), hvp(torch).numpy(), rtol=1e-10)


def test_stolen_gradient_is_not_shared_with_a_hooked_tensor():
    # the hook keeps the incoming gradient: .grad must be a copy, not the same memory
    seen = []
    layer = glasstorch.nn.Linear(6, 4)
    layer.weight.register_hook(lambda g: seen.append(g))
    layer(glasstorch.ones(3, 6)).sum().backward()
    assert not np.shares_memory(layer.weight.grad.numpy(), seen[0].numpy())
    np.testing.assert_array_equal(layer.weight.grad.numpy(), seen[0].numpy())


def test_stolen_gradients_accumulate_over_steps():
    def two_steps(lib):
        layer = _linear(lib)
        x = _array(lib, _X)
        for _ in range(2):
            layer(x).pow(2).sum().backward()
        return layer.weight.grad, layer.bias.grad
    for g, t in zip(two_steps(glasstorch), two_steps(torch)):
        assert g.stride() == t.stride()
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-5, atol=1e-5)


def test_gradients_summed_from_several_uses():
    def scenario(lib):
        x = lib.arange(4.0, requires_grad=True)
        y = x * 2
        (y * y + y.sin() + y).sum().backward()
        h = lib.arange(3.0, dtype=lib.float16, requires_grad=True)
        (h * h + h).sum().backward()
        return x.grad, h.grad
    for g, t in zip(scenario(glasstorch), scenario(torch)):
        assert str(g.dtype) == str(t.dtype)
        np.testing.assert_allclose(g.double().numpy(), t.double().numpy(), rtol=1e-3)


def test_saved_values_read_like_torchs_attributes():
    a = glasstorch.ones(2, requires_grad=True)
    mul = (a * glasstorch.full((2,), 3.0)).grad_fn
    add = (a + 1).grad_fn
    assert add._saved_alpha == 1
    assert mul._saved_self is None and mul._saved_other.tolist() == [3.0, 3.0]
    with pytest.raises(AttributeError):
        _ = add._saved_self  # never saved by this node class: same as torch
    out = a * a
    out.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        _ = out.grad_fn._saved_self


@pytest.mark.skipif(not glasstorch.autograd.engine._CAN_STEAL,
                    reason="stealing relies on CPython reference counts")
def test_linear_gradients_are_stolen_not_copied(monkeypatch):
    from glasstorch.autograd import engine
    copies = []
    copy = engine._copy_in_leaf_layout
    monkeypatch.setattr(engine, "_copy_in_leaf_layout",
                        lambda grad, leaf: copies.append(leaf) or copy(grad, leaf))
    model = glasstorch.nn.Sequential(_linear(glasstorch), glasstorch.nn.ReLU(),
                                     glasstorch.nn.Linear(4, 2))
    model(_array(glasstorch, _X)).sum().backward()
    assert copies == [] and all(p.grad is not None for p in model.parameters())
