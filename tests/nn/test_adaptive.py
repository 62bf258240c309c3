"""nn.AdaptiveLogSoftmaxWithLoss against torch: structure, forward (output, loss), gradients,
log_prob, predict and errors."""

import warnings

import numpy as np
import pytest

import glasstorch
import glasstorch.nn as gnn

from .util import assert_close, copy_weights, to_gt

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(5)


def pair(*args, **kwargs):
    g = gnn.AdaptiveLogSoftmaxWithLoss(*args, **kwargs)
    t = torch.nn.AdaptiveLogSoftmaxWithLoss(*args, **kwargs)
    with torch.no_grad():  # weights large enough that the head's best guess varies
        for p in t.parameters():
            p.normal_(0, 1.0, generator=torch.Generator().manual_seed(p.numel()))
    copy_weights(g, t)
    return g, t


def test_structure_matches_torch():
    g, t = pair(16, 30, [4, 10, 20], div_value=2.0, head_bias=True)
    assert repr(g) == repr(t)
    assert {k: tuple(v.shape) for k, v in g.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in t.state_dict().items()}
    for name in ("cutoffs", "shortlist_size", "n_clusters", "head_size", "in_features"):
        assert getattr(g, name) == getattr(t, name), name


@pytest.mark.parametrize("cutoffs, div_value, head_bias", [([4, 10, 20], 4.0, False),
                                                           ([15], 2.0, True)])
def test_forward_backward_log_prob_match_torch(cutoffs, div_value, head_bias):
    with warnings.catch_warnings():  # 16 // 4 ** 3 = 0: an empty projection, as in torch
        warnings.simplefilter("ignore")
        g, t = pair(16, 30, cutoffs, div_value=div_value, head_bias=head_bias)
    x = RNG.standard_normal((12, 16)).astype(np.float32)
    target = np.array([0, 3, 4, 9, 10, 19, 20, 29, 1, 25, 12, 2])
    gx, tx = glasstorch.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (g_out, g_loss), (t_out, t_loss) = g(gx, glasstorch.tensor(target)), t(tx, torch.tensor(target))
    assert g_out.shape == t_out.shape
    assert_close(g_out, t_out, 1e-5, 1e-5)
    assert_close(g_loss, t_loss, 1e-5, 1e-5)
    weights = RNG.standard_normal(12).astype(np.float32)
    (g_loss + (g_out * glasstorch.tensor(weights)).sum()).backward()
    (t_loss + (t_out * torch.tensor(weights)).sum()).backward()
    assert_close(gx.grad, tx.grad, 1e-4, 1e-5)
    for (name, gp), tp in zip(g.named_parameters(), t.parameters()):
        assert_close(gp.grad, tp.grad, 1e-4, 1e-5, name)
    assert_close(g.log_prob(gx), t.log_prob(tx), 1e-5, 1e-5)
    with pytest.raises(IndexError):  # log_prob takes rows only, as torch's
        t.log_prob(tx[0])
    with pytest.raises(IndexError):
        g.log_prob(gx[0])
    # the full distribution agrees with the per-target output
    np.testing.assert_allclose(g.log_prob(gx).exp().sum(1).detach().numpy(), 1, rtol=1e-5)


def test_predict_matches_torch_in_all_three_cases():
    # the head's argmax: all in the shortlist, all in clusters, and a mix of both
    g, t = pair(32, 20, [5, 12], head_bias=True)
    x = RNG.standard_normal((40, 32)).astype(np.float32)
    for slot_bias in (-100.0, 100.0, 0.0):
        with torch.no_grad():
            t.head.bias[5:] = slot_bias
        copy_weights(g, t)
        expected = t.predict(torch.tensor(x))
        ours = g.predict(glasstorch.tensor(x))
        assert str(ours.dtype) == str(expected.dtype)
        np.testing.assert_array_equal(ours.numpy(), expected.numpy())
    assert 0 < (expected >= 5).sum() < 40


def test_unbatched_target():
    g, t = pair(32, 20, [5, 12])
    x = RNG.standard_normal(32).astype(np.float32)
    for target in (3, 7, 15):
        (g_out, g_loss), (t_out, t_loss) = (g(glasstorch.tensor(x), glasstorch.tensor(target)),
                                            t(torch.tensor(x), torch.tensor(target)))
        assert g_out.shape == t_out.shape == ()
        assert_close(g_out, t_out, 1e-5, 1e-6)
        assert_close(g_loss, t_loss, 1e-5, 1e-6)


def test_batch_of_one_and_empty_clusters():
    g, t = pair(32, 20, [5, 12])
    x = RNG.standard_normal((1, 32)).astype(np.float32)
    for target in ([2], [18]):
        g_res, t_res = g(to_gt(torch.tensor(x)), glasstorch.tensor(target)), \
            t(torch.tensor(x), torch.tensor(target))
        for ours, theirs in zip(g_res, t_res):
            assert ours.shape == theirs.shape
            assert_close(ours, theirs, 1e-5, 1e-6)


def test_empty_batch():
    g, t = pair(32, 20, [5, 12])
    g_out, g_loss = g(glasstorch.zeros(0, 32), glasstorch.zeros(0, dtype=glasstorch.long))
    t_out, t_loss = t(torch.zeros(0, 32), torch.zeros(0, dtype=torch.long))
    assert g_out.shape == t_out.shape == (0,)
    assert np.isnan(g_loss.item()) and np.isnan(t_loss.item())


@pytest.mark.parametrize("cutoffs", [[], [5, 3], [0, 4], [4, 20], [4, 4], [2.5]])
def test_bad_cutoffs(cutoffs):
    with pytest.raises(ValueError) as theirs:
        torch.nn.AdaptiveLogSoftmaxWithLoss(8, 20, cutoffs)
    with pytest.raises(ValueError) as ours:
        gnn.AdaptiveLogSoftmaxWithLoss(8, 20, cutoffs)
    assert str(ours.value) == str(theirs.value)


def test_bad_inputs_raise_like_torch():
    g, t = pair(32, 20, [5, 12])
    cases = [((4, 32), [1, 2, 3]), ((4, 32), [[1], [2], [3], [4]]), ((4, 2, 32), [1, 2, 3, 4]),
             ((2, 32), 3), ((4, 32), [1, 2, 30, 4]), ((4, 32), [1, -1, 3, 4])]
    for shape, target in cases:
        x = np.zeros(shape, np.float32)
        with pytest.raises(RuntimeError) as theirs:
            t(torch.tensor(x), torch.tensor(target))
        with pytest.raises(RuntimeError) as ours:
            g(glasstorch.tensor(x), glasstorch.tensor(target))
        assert str(ours.value) == str(theirs.value), (shape, target)
