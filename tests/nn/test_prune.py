"""glasstorch.nn.utils.prune against torch.nn.utils.prune on the same weights: masks of the
deterministic methods (ties included), iterative pruning, global pruning, state_dict keys,
a training step's gradients, remove(), errors."""

import numpy as np
import pytest

import glasstorch
import glasstorch.nn.utils.prune as gp

torch = pytest.importorskip("torch")
tp = pytest.importorskip("torch.nn.utils.prune")

RNG = np.random.default_rng(3)


def _linear_pair(w, b=None):
    out_f, in_f = w.shape
    mt, mg = torch.nn.Linear(in_f, out_f), glasstorch.nn.Linear(in_f, out_f)
    b = RNG.standard_normal(out_f).astype(np.float32) if b is None else b
    with torch.no_grad():
        mt.weight.copy_(torch.from_numpy(w))
        mt.bias.copy_(torch.from_numpy(b))
    with glasstorch.no_grad():
        mg.weight.copy_(glasstorch.from_numpy(w))
        mg.bias.copy_(glasstorch.from_numpy(b))
    return mt, mg


def _same(a, b):
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def _weights(kind, shape):
    if kind == "normal":
        return RNG.standard_normal(shape).astype(np.float32)
    return RNG.integers(-2, 3, shape).astype(np.float32)  # many equal magnitudes


@pytest.mark.parametrize("kind", ["normal", "ties"])
@pytest.mark.parametrize("amount", [0.3, 7, 0.0, 1.0, 0.55])
def test_l1_unstructured_mask_and_iteration(kind, amount):
    mt, mg = _linear_pair(_weights(kind, (6, 8)))
    tp.l1_unstructured(mt, "weight", amount)
    gp.l1_unstructured(mg, "weight", amount)
    _same(mt.weight_mask, mg.weight_mask)
    _same(mt.weight, mg.weight)
    tp.l1_unstructured(mt, "weight", 0.25)  # acts on what is still unpruned
    gp.l1_unstructured(mg, "weight", 0.25)
    _same(mt.weight_mask, mg.weight_mask)
    hook_t, = mt._forward_pre_hooks.values()
    hook_g, = mg._forward_pre_hooks.values()
    assert type(hook_g).__name__ == type(hook_t).__name__ == "PruningContainer"
    assert [type(m).__name__ for m in hook_g] == [type(m).__name__ for m in hook_t]


@pytest.mark.parametrize("kind", ["normal", "ties"])
@pytest.mark.parametrize("n, dim", [(1, 0), (2, -1), (float("inf"), 1), ("fro", 0),
                                    (-float("inf"), 0)])
def test_ln_structured_mask(kind, n, dim):
    mt, mg = _linear_pair(_weights(kind, (6, 8)))
    tp.ln_structured(mt, "weight", 0.34, n, dim)
    gp.ln_structured(mg, "weight", 0.34, n, dim)
    _same(mt.weight_mask, mg.weight_mask)
    tp.ln_structured(mt, "weight", 2, n, 1 - dim % 2)  # then along the other dim
    gp.ln_structured(mg, "weight", 2, n, 1 - dim % 2)
    _same(mt.weight_mask, mg.weight_mask)


def test_ln_structured_conv_with_ties():
    w = _weights("ties", (8, 3, 3, 3))
    mt, mg = torch.nn.Conv2d(3, 8, 3), glasstorch.nn.Conv2d(3, 8, 3)
    mt.weight.data.copy_(torch.from_numpy(w))
    mg.weight.data.copy_(glasstorch.from_numpy(w))
    tp.ln_structured(mt, "weight", 3, 2, 0)
    gp.ln_structured(mg, "weight", 3, 2, 0)
    _same(mt.weight_mask, mg.weight_mask)


@pytest.mark.parametrize("size, amount", [(300, 0.4), (300, 3), (1000, 10), (50, 49)])
def test_l1_equal_values_choose_as_torch(size, amount):
    # all-equal values: which ones torch's topk prunes depends on its sort algorithm
    # (partial sort for small k, nth_element otherwise); glasstorch replays it
    mt, mg = torch.nn.Linear(4, size), glasstorch.nn.Linear(4, size)
    mt.bias.data.zero_()
    mg.bias.data.zero_()
    tp.l1_unstructured(mt, "bias", amount)
    gp.l1_unstructured(mg, "bias", amount)
    _same(mt.bias_mask, mg.bias_mask)


def test_importance_scores_and_custom_mask():
    w = _weights("normal", (4, 5))
    scores = RNG.standard_normal((4, 5)).astype(np.float32)
    mt, mg = _linear_pair(w)
    tp.l1_unstructured(mt, "weight", 6, importance_scores=torch.from_numpy(scores))
    gp.l1_unstructured(mg, "weight", 6, importance_scores=glasstorch.from_numpy(scores))
    _same(mt.weight_mask, mg.weight_mask)
    mask = (RNG.random((4,)) > 0.5).astype(np.float32)
    tp.custom_from_mask(mt, "bias", torch.from_numpy(mask))
    gp.custom_from_mask(mg, "bias", glasstorch.from_numpy(mask))
    _same(mt.bias, mg.bias)
    _same(mt.bias_mask, mg.bias_mask)


def test_global_unstructured_over_pruned_and_fresh_tensors():
    t1, g1 = _linear_pair(_weights("normal", (4, 5)))
    t2, g2 = _linear_pair(_weights("ties", (3, 4)))
    tp.l1_unstructured(t1, "weight", 0.2)
    gp.l1_unstructured(g1, "weight", 0.2)
    tp.global_unstructured([(t1, "weight"), (t2, "weight"), (t2, "bias")],
                           tp.L1Unstructured, amount=12)
    gp.global_unstructured([(g1, "weight"), (g2, "weight"), (g2, "bias")],
                           gp.L1Unstructured, amount=12)
    for a, b in ((t1.weight_mask, g1.weight_mask), (t2.weight_mask, g2.weight_mask),
                 (t2.bias_mask, g2.bias_mask)):
        _same(a, b)
    hook, = g1._forward_pre_hooks.values()
    assert [type(m).__name__ for m in hook] == ["L1Unstructured", "CustomFromMask"]


def test_state_dict_training_step_and_remove():
    mt, mg = _linear_pair(_weights("normal", (4, 5)))
    tp.l1_unstructured(mt, "weight", 0.5)
    gp.l1_unstructured(mg, "weight", 0.5)
    assert list(mg.state_dict()) == list(mt.state_dict()) == ["bias", "weight_orig",
                                                              "weight_mask"]
    assert [n for n, _ in mg.named_parameters()] == [n for n, _ in mt.named_parameters()]
    assert isinstance(mg.weight_orig, glasstorch.nn.Parameter)
    assert not isinstance(mg.weight, glasstorch.nn.Parameter)
    assert mg.weight.grad_fn.name() == mt.weight.grad_fn.name()
    x = RNG.standard_normal((3, 5)).astype(np.float32)
    opt_t = torch.optim.SGD(mt.parameters(), lr=0.1)
    opt_g = glasstorch.optim.SGD(mg.parameters(), lr=0.1)
    for _ in range(2):  # the pre-hook recomputes weight from the updated weight_orig
        opt_t.zero_grad()
        opt_g.zero_grad()
        mt(torch.from_numpy(x)).pow(2).sum().backward()
        mg(glasstorch.from_numpy(x)).pow(2).sum().backward()
        np.testing.assert_allclose(mg.weight_orig.grad.numpy(), mt.weight_orig.grad.numpy(),
                                   rtol=1e-5, atol=1e-6)
        assert bool((mg.weight_orig.grad[mg.weight_mask == 0] == 0).all())
        opt_t.step()
        opt_g.step()
    np.testing.assert_allclose(mg.weight_orig.detach().numpy(),
                               mt.weight_orig.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert gp.is_pruned(mg) and gp.is_pruned(glasstorch.nn.Sequential(mg))
    tp.remove(mt, "weight")
    gp.remove(mg, "weight")
    assert list(mg.state_dict()) == list(mt.state_dict()) == ["bias", "weight"]
    assert isinstance(mg.weight, glasstorch.nn.Parameter)
    np.testing.assert_allclose(mg.weight.detach().numpy(), mt.weight.detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    assert not gp.is_pruned(mg) and not mg._forward_pre_hooks


def test_random_methods_counts_and_generator():
    m = glasstorch.nn.Linear(10, 8)
    glasstorch.manual_seed(0)
    gp.random_unstructured(m, "weight", 0.25)
    assert int((m.weight_mask == 0).sum()) == 20
    first = m.weight_mask.clone()
    gp.random_structured(m, "weight", 3, dim=0)
    rows_off = (m.weight_mask.sum(1) == 0).nonzero().flatten()
    assert len(rows_off) >= 3
    assert bool((m.weight_mask <= first).all())  # pruned entries stay pruned
    m2 = glasstorch.nn.Linear(10, 8)
    glasstorch.manual_seed(0)
    gp.random_unstructured(m2, "weight", 0.25)
    _same(first, m2.weight_mask)  # drawn from glasstorch's seeded generator


def test_prune_method_on_bare_tensor():
    w = _weights("normal", (3, 4))
    a = tp.L1Unstructured(amount=5).prune(torch.from_numpy(w))
    b = gp.L1Unstructured(amount=5).prune(glasstorch.from_numpy(w))
    _same(a, b)
    a = tp.LnStructured(amount=1, n=2, dim=0).prune(torch.from_numpy(w))
    b = gp.LnStructured(amount=1, n=2, dim=0).prune(glasstorch.from_numpy(w))
    _same(a, b)


def _error(fn):
    try:
        fn()
    except Exception as e:
        return type(e).__name__, str(e).replace("glasstorch.", "torch.")
    return None


@pytest.mark.parametrize("case", [
    lambda P, nn, T: P.l1_unstructured(nn.Linear(2, 2), "weight", -1),
    lambda P, nn, T: P.l1_unstructured(nn.Linear(2, 2), "weight", 1.5),
    lambda P, nn, T: P.l1_unstructured(nn.Linear(2, 2), "weight", "a"),
    lambda P, nn, T: P.l1_unstructured(nn.Linear(2, 2), "weight", 5),
    lambda P, nn, T: P.ln_structured(nn.Linear(2, 2), "bias", 1, 2, 0),
    lambda P, nn, T: P.ln_structured(nn.Linear(2, 2), "weight", 1, 2, 3),
    lambda P, nn, T: P.remove(nn.Linear(2, 2), "weight"),
    lambda P, nn, T: P.l1_unstructured(nn.Linear(2, 2), "weight", 1,
                                       importance_scores=T.ones(3)),
    lambda P, nn, T: P.global_unstructured([(nn.Linear(2, 2), "weight")], P.LnStructured,
                                           amount=1, n=2, dim=0),
    lambda P, nn, T: P.global_unstructured(3, P.L1Unstructured, amount=1),
    lambda P, nn, T: P.global_unstructured([], P.L1Unstructured, importance_scores=[1],
                                           amount=1),
    lambda P, nn, T: P.l1_unstructured(nn.Linear(2, 2), "foo", 1),
    lambda P, nn, T: P.L1Unstructured(1).apply_mask(nn.Linear(2, 2)),
    lambda P, nn, T: P.custom_from_mask(nn.Linear(2, 2), "weight", T.ones(3)),
    lambda P, nn, T: P.PruningContainer(P.Identity(), P.Identity()),
])
def test_errors_match_torch(case):
    expected = _error(lambda: case(tp, torch.nn, torch))
    assert expected is not None
    assert _error(lambda: case(gp, glasstorch.nn, glasstorch)) == expected


def test_failed_prune_leaves_module_unchanged():
    m, mt = glasstorch.nn.Linear(2, 2), torch.nn.Linear(2, 2)
    with pytest.raises(ValueError):
        gp.l1_unstructured(m, "weight", 5)
    with pytest.raises(ValueError):
        tp.l1_unstructured(mt, "weight", 5)
    # the parameter is registered again (so it moves last, in torch too)
    assert list(m.state_dict()) == list(mt.state_dict()) == ["bias", "weight"]
    assert isinstance(m.weight, glasstorch.nn.Parameter) and not m._forward_pre_hooks


def test_importable_as_attribute():
    assert glasstorch.nn.utils.prune is gp
