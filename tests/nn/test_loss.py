"""Losses vs torch: functional values, dtypes, shapes, gradients of every input and grad_fn
names; gradcheck/gradgradcheck in float64; modules (repr, buffers, forward); errors and
warnings."""

import warnings

import numpy as np
import pytest

import glasstorch
import glasstorch.nn as gnn
import glasstorch.nn.functional as GF

torch = pytest.importorskip("torch")
import torch.nn as tnn  # noqa: E402
import torch.nn.functional as TF  # noqa: E402

from .util import to_np  # noqa: E402

REDUCTIONS = ("mean", "sum", "none")


def _lib_args(lib, arrays, grads):
    out = []
    for a, g in zip(arrays, grads):
        if isinstance(a, np.ndarray):
            t = lib.from_numpy(a.copy())
            if g:
                t.requires_grad_()
            out.append(t)
        else:
            out.append(a)
    return out


def _kw(lib, kwargs):
    return {k: lib.from_numpy(v.copy()) if isinstance(v, np.ndarray) else v
            for k, v in kwargs.items()}


def check(fname, arrays, grads, rtol=1e-5, atol=1e-6, seed=0, **kwargs):
    """Run F.<fname> in both libraries; compare output, grad_fn name and input gradients."""
    t_args = _lib_args(torch, arrays, grads)
    g_args = _lib_args(glasstorch, arrays, grads)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = getattr(TF, fname)(*t_args, **_kw(torch, kwargs))
        g = getattr(GF, fname)(*g_args, **_kw(glasstorch, kwargs))
    assert str(g.dtype) == str(t.dtype)
    assert tuple(g.shape) == tuple(t.shape)
    np.testing.assert_allclose(to_np(g), to_np(t), rtol=rtol, atol=atol, err_msg=fname)
    if not any(grads):
        return g
    assert type(g.grad_fn).__name__ == type(t.grad_fn).__name__, (g.grad_fn, t.grad_fn)
    w = np.random.default_rng(seed).standard_normal(tuple(t.shape)).astype(arrays[0].dtype)
    (t * torch.from_numpy(w)).sum().backward()
    (g * glasstorch.from_numpy(w)).sum().backward()
    for i, (ga, ta) in enumerate(zip(g_args, t_args)):
        if grads[i]:
            np.testing.assert_allclose(to_np(ga.grad), to_np(ta.grad), rtol=rtol * 10,
                                       atol=atol * 10, err_msg=f"{fname} grad {i}")
    return g


def rand(rng, *shape, low=-2.0, high=2.0, dtype=np.float32):
    return rng.uniform(low, high, shape).astype(dtype)


# ----------------------------------------------------------------------------- functional

@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_regression_losses(reduction, dtype):
    rng = np.random.default_rng(1)
    x, y = rand(rng, 4, 5, dtype=dtype), rand(rng, 4, 5, dtype=dtype)
    for f in ("mse_loss", "l1_loss"):
        check(f, [x, y], [1, 1], reduction=reduction)
    for beta in (0.0, 0.5, 1.0):
        check("smooth_l1_loss", [x, y], [1, 1], reduction=reduction, beta=beta)
    for delta in (0.3, 1.0, 5.0):
        check("huber_loss", [x, y], [1, 1], reduction=reduction, delta=delta)
    # broadcast target (warns) and 0-d / empty inputs
    check("mse_loss", [x, y[0]], [1, 1], reduction=reduction)
    check("mse_loss", [np.asarray(x[0, 0]), np.asarray(y[0, 0])], [1, 1], reduction=reduction)
    check("smooth_l1_loss", [x[:0], y[:0]], [1, 1], reduction=reduction)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_weighted_regression(reduction):
    rng = np.random.default_rng(2)
    x, y, w = rand(rng, 3, 4), rand(rng, 3, 4), rand(rng, 3, 4, low=0.1)
    for f in ("mse_loss", "l1_loss", "huber_loss"):
        tw, gw = torch.from_numpy(w), glasstorch.from_numpy(w)
        tx, ty = torch.tensor(x, requires_grad=True), torch.tensor(y)
        gx, gy = glasstorch.tensor(x, requires_grad=True), glasstorch.tensor(y)
        t = getattr(TF, f)(tx, ty, reduction=reduction, weight=tw)
        g = getattr(GF, f)(gx, gy, reduction=reduction, weight=gw)
        np.testing.assert_allclose(to_np(g), to_np(t), rtol=1e-5, atol=1e-6)
        t.sum().backward()
        g.sum().backward()
        np.testing.assert_allclose(to_np(gx.grad), to_np(tx.grad), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_losses(reduction):
    rng = np.random.default_rng(3)
    p, t = rand(rng, 4, 5, low=0.01, high=0.99), rand(rng, 4, 5, low=0, high=1)
    x = rand(rng, 4, 5, low=-30, high=30)
    w = rand(rng, 5, low=0.1, high=2)
    check("binary_cross_entropy", [p, t], [1, 1], reduction=reduction)
    check("binary_cross_entropy", [p, t, w], [1, 1, 0], reduction=reduction)
    # probabilities at exactly 0 and 1: logs are clamped at -100
    check("binary_cross_entropy", [np.array([0.0, 1.0, 0.5], np.float32),
                                   np.array([1.0, 0.0, 0.5], np.float32)], [0, 0],
          reduction=reduction)
    check("binary_cross_entropy_with_logits", [x, t], [1, 1], reduction=reduction)
    check("binary_cross_entropy_with_logits", [x, t, w], [1, 1, 0], reduction=reduction)
    check("binary_cross_entropy_with_logits", [x, t], [1, 1], reduction=reduction,
          pos_weight=w)
    check("binary_cross_entropy_with_logits", [x, t, w], [1, 1, 0], reduction=reduction,
          pos_weight=w[::-1].copy())
    big = np.array([1000.0, -1000.0, 0.0], np.float32)
    out = check("binary_cross_entropy_with_logits", [big, np.array([0.0, 1.0, 1.0], np.float32)],
                [1, 0], reduction=reduction)
    assert np.isfinite(to_np(out)).all()


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss(reduction):
    rng = np.random.default_rng(4)
    logp = np.log(rng.dirichlet(np.ones(5), size=6)).astype(np.float32)
    tgt = rng.integers(0, 5, 6)
    w = rand(rng, 5, low=0.1, high=2)
    check("nll_loss", [logp, tgt], [1, 0], reduction=reduction)
    check("nll_loss", [logp, tgt, w], [1, 0, 0], reduction=reduction)
    tgt2 = tgt.copy()
    tgt2[[1, 3]] = -100
    check("nll_loss", [logp, tgt2, w], [1, 0, 0], reduction=reduction)
    tgt3 = tgt.copy()
    tgt3[0] = 2
    check("nll_loss", [logp, tgt3], [1, 0], reduction=reduction, ignore_index=2)
    check("nll_loss", [logp[0], np.asarray(tgt[0])], [1, 0], reduction=reduction)
    for shape in [(2, 3, 4), (2, 3, 4, 5), (2, 3, 2, 2, 3)]:
        x = rand(rng, *shape)
        t = rng.integers(0, 3, (shape[0],) + shape[2:])
        check("nll_loss", [x, t], [1, 0], reduction=reduction)
        check("nll_loss", [x, t, w[:3]], [1, 0, 0], reduction=reduction, ignore_index=1)
    check("nll_loss", [logp[:0], tgt[:0]], [1, 0], reduction=reduction)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy(reduction):
    rng = np.random.default_rng(5)
    x = rand(rng, 6, 5, low=-4, high=4)
    tgt = rng.integers(0, 5, 6)
    tgt_ign = tgt.copy()
    tgt_ign[2] = -100
    w = rand(rng, 5, low=0.1, high=2)
    probs = rng.dirichlet(np.ones(5), size=6).astype(np.float32)
    for ls in (0.0, 0.2):
        check("cross_entropy", [x, tgt], [1, 0], reduction=reduction, label_smoothing=ls)
        check("cross_entropy", [x, tgt_ign, w], [1, 0, 0], reduction=reduction,
              label_smoothing=ls)
        check("cross_entropy", [x, probs], [1, 1], reduction=reduction, label_smoothing=ls)
        check("cross_entropy", [x, probs, w], [1, 1, 0], reduction=reduction,
              label_smoothing=ls)
        check("cross_entropy", [x[0], np.asarray(tgt[0])], [1, 0], reduction=reduction,
              label_smoothing=ls)
        for shape in [(2, 5, 3), (2, 5, 3, 4)]:
            xs = rand(rng, *shape)
            ts = rng.integers(0, 5, (shape[0],) + shape[2:])
            check("cross_entropy", [xs, ts], [1, 0], reduction=reduction, label_smoothing=ls)
            ps = rng.dirichlet(np.ones(5), size=(shape[0],) + shape[2:])
            ps = np.moveaxis(ps, -1, 1).astype(np.float32)
            check("cross_entropy", [xs, ps], [1, 1], reduction=reduction, label_smoothing=ls)
    # numerically stable for huge logits
    big = np.array([[1000.0, -1000.0], [-1000.0, 1000.0]], np.float32)
    out = check("cross_entropy", [big, np.array([1, 1])], [1, 0], reduction=reduction)
    assert np.isfinite(to_np(out)).all()


def test_cross_entropy_float64_and_legacy_args():
    rng = np.random.default_rng(6)
    x = rand(rng, 4, 3, dtype=np.float64)
    tgt = rng.integers(0, 3, 4)
    check("cross_entropy", [x, tgt], [1, 0])
    with pytest.warns(UserWarning, match="size_average and reduce"):
        g = GF.cross_entropy(glasstorch.from_numpy(x), glasstorch.from_numpy(tgt),
                             size_average=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = TF.cross_entropy(torch.from_numpy(x), torch.from_numpy(tgt), size_average=False)
    np.testing.assert_allclose(to_np(g), to_np(t))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_divergence_and_likelihood_losses(reduction):
    rng = np.random.default_rng(7)
    x, y = rand(rng, 4, 5), rand(rng, 4, 5, low=0.0, high=3.0)
    logp = np.log(rng.dirichlet(np.ones(5), size=4)).astype(np.float32)
    q = rng.dirichlet(np.ones(5), size=4).astype(np.float32)
    for red in (reduction, "batchmean"):
        check("kl_div", [logp, q], [1, 1], reduction=red)
        check("kl_div", [logp, np.log(q)], [1, 1], reduction=red, log_target=True)
    check("poisson_nll_loss", [x, y], [1, 1], reduction=reduction)
    check("poisson_nll_loss", [x, y], [1, 1], reduction=reduction, full=True)
    check("poisson_nll_loss", [np.abs(x) + 0.1, y], [1, 1], reduction=reduction,
          log_input=False)
    var = rand(rng, 4, 5, low=0.1, high=2.0)
    check("gaussian_nll_loss", [x, y, var], [1, 1, 1], reduction=reduction)
    check("gaussian_nll_loss", [x, y, var[:, 0].copy()], [1, 1, 1], reduction=reduction,
          full=True)
    check("gaussian_nll_loss", [x, y, var[:, :1].copy()], [1, 1, 1], reduction=reduction)
    check("gaussian_nll_loss", [x, y, 0.5], [1, 1, 0], reduction=reduction)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_margin_losses(reduction):
    rng = np.random.default_rng(8)
    x1, x2, x3 = rand(rng, 4, 5), rand(rng, 4, 5), rand(rng, 4, 5)
    sign = np.where(rng.random((4, 5)) > 0.5, 1.0, -1.0).astype(np.float32)
    ysign = np.array([1.0, -1.0, 1.0, -1.0], np.float32)
    check("cosine_embedding_loss", [x1, x2, ysign], [1, 1, 0], reduction=reduction,
          margin=0.2)
    check("cosine_embedding_loss", [x1[0], x2[0], np.asarray(-1.0, np.float32)], [1, 1, 0],
          reduction=reduction)
    check("margin_ranking_loss", [x1, x2, sign], [1, 1, 0], reduction=reduction, margin=0.3)
    check("hinge_embedding_loss", [x1, sign], [1, 0], reduction=reduction, margin=0.5)
    check("soft_margin_loss", [x1, sign], [1, 0], reduction=reduction)
    for p, swap in ((2, False), (1, True), (3, False)):
        check("triplet_margin_loss", [x1, x2, x3], [1, 1, 1], reduction=reduction, p=p,
              swap=swap, margin=0.7)
    check("triplet_margin_with_distance_loss", [x1, x2, x3], [1, 1, 1], reduction=reduction,
          swap=True)
    tgt = rng.integers(0, 5, 4)
    w = rand(rng, 5, low=0.1, high=2)
    for p in (1, 2):
        check("multi_margin_loss", [x1, tgt], [1, 0], reduction=reduction, p=p, margin=0.8)
        check("multi_margin_loss", [x1, tgt], [1, 0], reduction=reduction, p=p, weight=w)
    check("multi_margin_loss", [x1[0], np.asarray(tgt[:1])], [1, 0], reduction=reduction)
    ml = np.array([[3, 0, -1, 1, 1], [0, 1, 2, 4, 3], [-1, 1, 1, 1, 1], [4, -1, 0, 0, 0]])
    check("multilabel_margin_loss", [x1, ml], [1, 0], reduction=reduction)
    check("multilabel_margin_loss", [x1[1], ml[0]], [1, 0], reduction=reduction)
    multi_hot = (rng.random((4, 5)) > 0.5).astype(np.float32)
    check("multilabel_soft_margin_loss", [x1, multi_hot], [1, 1], reduction=reduction)
    check("multilabel_soft_margin_loss", [x1, multi_hot, w], [1, 1, 0], reduction=reduction)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_ctc_loss(reduction):
    rng = np.random.default_rng(9)
    T, N, C = 12, 4, 6
    lp = np.log(rng.dirichlet(np.ones(C), size=(T, N))).astype(np.float32)
    targets = rng.integers(1, C, (N, 5))
    targets[1, 1] = targets[1, 0]  # a repeated label needs a blank in between
    il = [12, 10, 7, 12]
    tl = [5, 3, 0, 4]
    check("ctc_loss", [lp, targets, il, tl], [1, 0, 0, 0], reduction=reduction, rtol=1e-4,
          atol=1e-5)
    flat = np.concatenate([targets[i, :n] for i, n in enumerate(tl)])
    check("ctc_loss", [lp, flat, np.array(il), np.array(tl)], [1, 0, 0, 0],
          reduction=reduction, rtol=1e-4, atol=1e-5)
    check("ctc_loss", [lp.astype(np.float64), targets, il, tl], [1, 0, 0, 0],
          reduction=reduction, blank=0)
    # unbatched input; another blank index
    check("ctc_loss", [lp[:, 0], targets[0, :4] - 1, [12], [4]], [1, 0, 0, 0],
          reduction=reduction, blank=C - 1, rtol=1e-4, atol=1e-5)
    # an impossible alignment (target longer than input) is inf, or 0 with zero_infinity
    check("ctc_loss", [lp[:3], targets, [3, 3, 3, 3], tl], [0, 0, 0, 0], reduction=reduction)
    check("ctc_loss", [lp[:4], targets, [4, 4, 4, 4], tl], [1, 0, 0, 0], reduction=reduction,
          zero_infinity=True)


# ----------------------------------------------------------------------------- gradcheck

def _leaf(a):
    return glasstorch.from_numpy(a).requires_grad_()


def test_gradcheck_and_gradgradcheck():
    rng = np.random.default_rng(10)
    x, y = _leaf(rand(rng, 3, 4, dtype=np.float64)), _leaf(rand(rng, 3, 4, dtype=np.float64))
    p = _leaf(rand(rng, 3, 4, low=0.05, high=0.95, dtype=np.float64))
    q = glasstorch.from_numpy(rand(rng, 3, 4, low=0, high=1, dtype=np.float64))
    tgt = glasstorch.from_numpy(rng.integers(0, 4, 3))
    ga, gga = glasstorch.autograd.gradcheck, glasstorch.autograd.gradgradcheck
    cases = [
        (lambda a, b: GF.mse_loss(a, b), (x, y), True),
        (lambda a, b: GF.smooth_l1_loss(a, b, beta=0.5), (x, y), True),
        (lambda a, b: GF.huber_loss(a, b, delta=0.5, reduction="none"), (x, y), True),
        (lambda a: GF.binary_cross_entropy(a, q), (p,), True),
        (lambda a: GF.binary_cross_entropy_with_logits(a, q), (x,), True),
        (lambda a: GF.binary_cross_entropy_with_logits(a, q, pos_weight=q[0]), (x,), True),
        (lambda a: GF.cross_entropy(a, tgt, label_smoothing=0.1), (x,), True),
        (lambda a: GF.nll_loss(a, tgt, reduction="none"), (x,), True),
        (lambda a: GF.soft_margin_loss(a, q.sign()), (x,), True),
        (lambda a: GF.multi_margin_loss(a, tgt, p=2), (x,), False),
        (lambda a: GF.kl_div(a, q, reduction="batchmean"), (x,), True),
    ]
    for fn, inputs, double in cases:
        assert ga(fn, inputs)
        if double:
            assert gga(fn, inputs)


# ----------------------------------------------------------------------------- modules

MODULES = [
    ("L1Loss", {}), ("MSELoss", {"reduction": "sum"}), ("SmoothL1Loss", {"beta": 0.5}),
    ("HuberLoss", {"delta": 2.0}), ("BCELoss", {}), ("BCEWithLogitsLoss", {}),
    ("KLDivLoss", {"reduction": "batchmean", "log_target": True}),
    ("PoissonNLLLoss", {"full": True}), ("GaussianNLLLoss", {"eps": 1e-3}),
    ("CosineEmbeddingLoss", {"margin": 0.1}), ("MarginRankingLoss", {"margin": 0.2}),
    ("HingeEmbeddingLoss", {}), ("TripletMarginLoss", {"p": 1.0, "swap": True}),
    ("TripletMarginWithDistanceLoss", {"margin": 2.0}), ("MultiMarginLoss", {"p": 2}),
    ("MultiLabelMarginLoss", {}), ("MultiLabelSoftMarginLoss", {}), ("SoftMarginLoss", {}),
    ("CrossEntropyLoss", {"ignore_index": 1, "label_smoothing": 0.1}),
    ("NLLLoss", {"reduction": "none"}), ("CTCLoss", {"blank": 0, "zero_infinity": True}),
]


@pytest.mark.parametrize("name,kwargs", MODULES, ids=[m[0] for m in MODULES])
def test_loss_module_repr_and_attributes(name, kwargs):
    t = getattr(tnn, name)(**kwargs)
    g = getattr(gnn, name)(**kwargs)
    if name == "TripletMarginWithDistanceLoss" and not hasattr(gnn, "PairwiseDistance"):
        pytest.skip("nn.PairwiseDistance (the default distance module) is not there yet")
    assert repr(g) == repr(t)
    assert [n for n, _ in g.named_buffers()] == [n for n, _ in t.named_buffers()]
    assert list(g.state_dict()) == list(t.state_dict())
    assert g.reduction == t.reduction
    for k in kwargs:
        assert getattr(g, k) == getattr(t, k)


def test_weighted_loss_modules():
    rng = np.random.default_rng(11)
    w = rand(rng, 4, low=0.1, high=2)
    x = rand(rng, 5, 4)
    tgt = rng.integers(0, 4, 5)
    for name, kw in [("CrossEntropyLoss", {}), ("NLLLoss", {"ignore_index": 2}),
                     ("MultiMarginLoss", {})]:
        t = getattr(tnn, name)(weight=torch.from_numpy(w), **kw)
        g = getattr(gnn, name)(weight=glasstorch.from_numpy(w), **kw)
        assert [n for n, _ in g.named_buffers()] == ["weight"]
        assert list(g.state_dict()) == list(t.state_dict())
        tx, gx = torch.tensor(x, requires_grad=True), glasstorch.tensor(x, requires_grad=True)
        to, go = t(tx, torch.from_numpy(tgt)), g(gx, glasstorch.from_numpy(tgt))
        np.testing.assert_allclose(to_np(go), to_np(to), rtol=1e-5, atol=1e-6)
        to.backward()
        go.backward()
        np.testing.assert_allclose(to_np(gx.grad), to_np(tx.grad), rtol=1e-5, atol=1e-6)
    pw = rand(rng, 4, low=0.5, high=3)
    t = tnn.BCEWithLogitsLoss(pos_weight=torch.from_numpy(pw))
    g = gnn.BCEWithLogitsLoss(pos_weight=glasstorch.from_numpy(pw))
    assert list(g.state_dict()) == list(t.state_dict()) == ["pos_weight"]
    y = rand(rng, 5, 4, low=0, high=1)
    np.testing.assert_allclose(to_np(g(glasstorch.from_numpy(x), glasstorch.from_numpy(y))),
                               to_np(t(torch.from_numpy(x), torch.from_numpy(y))), rtol=1e-5)


def test_loss_module_forward_matches_functional():
    rng = np.random.default_rng(12)
    x, y = rand(rng, 3, 4), rand(rng, 3, 4)
    for name, fname in [("MSELoss", "mse_loss"), ("L1Loss", "l1_loss"),
                        ("SmoothL1Loss", "smooth_l1_loss"), ("HuberLoss", "huber_loss")]:
        t = getattr(tnn, name)()(torch.from_numpy(x), torch.from_numpy(y))
        g = getattr(gnn, name)()(glasstorch.from_numpy(x), glasstorch.from_numpy(y))
        np.testing.assert_allclose(to_np(g), to_np(t), rtol=1e-6)
        np.testing.assert_allclose(
            to_np(g), to_np(getattr(GF, fname)(glasstorch.from_numpy(x),
                                               glasstorch.from_numpy(y))))
    with pytest.warns(UserWarning, match="size_average and reduce"):
        m = gnn.MSELoss(size_average=False)
    assert m.reduction == "sum"
    with pytest.warns(FutureWarning):
        gnn.NLLLoss2d()


# ----------------------------------------------------------------------------- errors

def _both_raise(exc, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(exc):
            fn(torch, TF)
        with pytest.raises(exc):
            fn(glasstorch, GF)


def test_errors_match_torch():
    x = np.random.default_rng(13).standard_normal((3, 4)).astype(np.float32)
    cases = [
        (IndexError, lambda L, F: F.nll_loss(L.from_numpy(x), L.tensor([0, 5, 1]))),
        (IndexError, lambda L, F: F.cross_entropy(L.from_numpy(x), L.tensor([0, -1, 1]))),
        (RuntimeError, lambda L, F: F.nll_loss(L.from_numpy(x), L.tensor([0, 1, 1],
                                                                         dtype=L.int32))),
        (ValueError, lambda L, F: F.nll_loss(L.from_numpy(x), L.tensor([0, 1]))),
        (RuntimeError, lambda L, F: F.nll_loss(L.from_numpy(x), L.tensor([0, 1, 1]),
                                               weight=L.ones(3))),
        (RuntimeError, lambda L, F: F.nll_loss(L.from_numpy(x).double(), L.tensor([0, 1, 1]),
                                               weight=L.ones(4))),
        (RuntimeError, lambda L, F: F.nll_loss(L.randn(2, 3, 4, 5), L.zeros(2, 4, 4,
                                                                           dtype=L.long))),
        (RuntimeError, lambda L, F: F.cross_entropy(L.from_numpy(x), L.rand(3, 5))),
        (RuntimeError, lambda L, F: F.binary_cross_entropy(L.from_numpy(x), L.rand(3, 4))),
        (ValueError, lambda L, F: F.binary_cross_entropy(L.rand(3, 4), L.rand(3, 5))),
        (RuntimeError, lambda L, F: F.binary_cross_entropy(L.rand(3, 4), L.rand(3, 4).double())),
        (ValueError, lambda L, F: F.binary_cross_entropy_with_logits(L.rand(3, 4),
                                                                     L.rand(3, 5))),
        (RuntimeError, lambda L, F: F.mse_loss(L.rand(3, 4), L.rand(5))),
        (NotImplementedError, lambda L, F: F.mse_loss(L.ones(3, dtype=L.int32),
                                                      L.ones(3, dtype=L.int32))),
        (RuntimeError, lambda L, F: F.smooth_l1_loss(L.rand(3), L.rand(3), beta=-1.0)),
        (RuntimeError, lambda L, F: F.huber_loss(L.rand(3), L.rand(3), delta=0.0)),
        (ValueError, lambda L, F: F.mse_loss(L.rand(3), L.rand(3), reduction="avg")),
        (ValueError, lambda L, F: F.gaussian_nll_loss(L.rand(3, 2), L.rand(3, 2),
                                                      L.rand(4))),
        (ValueError, lambda L, F: F.gaussian_nll_loss(L.rand(3), L.rand(3), -1.0)),
        (ValueError, lambda L, F: F.triplet_margin_loss(L.rand(3), L.rand(3), L.rand(3),
                                                        margin=0.0)),
        (RuntimeError, lambda L, F: F.triplet_margin_loss(L.rand(3, 2), L.rand(3), L.rand(3))),
        (ValueError, lambda L, F: F.multi_margin_loss(L.rand(3, 2), L.tensor([0, 1, 1]), p=3)),
        (RuntimeError, lambda L, F: F.soft_margin_loss(L.rand(3), L.rand(3).requires_grad_())),
        (RuntimeError, lambda L, F: F.multi_margin_loss(L.from_numpy(x), L.tensor([0, 7, 1]))),
        (RuntimeError, lambda L, F: F.multi_margin_loss(L.from_numpy(x), L.tensor([0, 1]))),
        (RuntimeError, lambda L, F: F.multi_margin_loss(L.from_numpy(x), L.tensor(
            [0, 1, 1], dtype=L.int32))),
        (RuntimeError, lambda L, F: F.multilabel_margin_loss(L.from_numpy(x), L.tensor(
            [[0, 7, -1, 0]] * 3))),
        (RuntimeError, lambda L, F: F.multilabel_margin_loss(L.from_numpy(x), L.zeros(
            3, 3, dtype=L.long))),
        (RuntimeError, lambda L, F: F.ctc_loss(L.randn(5, 2, 4), L.ones(2, 3, dtype=L.long),
                                               [6, 5], [3, 3])),
        (RuntimeError, lambda L, F: F.ctc_loss(L.randn(5, 2, 4), L.ones(2, 3, dtype=L.long),
                                               [5, 5], [3, 4])),
        (RuntimeError, lambda L, F: F.binary_cross_entropy_with_logits(
            L.rand(3), L.rand(3), pos_weight=L.rand(3).requires_grad_())),
    ]
    for exc, fn in cases:
        _both_raise(exc, fn)


def test_warnings():
    with pytest.warns(UserWarning, match="different to the input size"):
        GF.mse_loss(glasstorch.rand(3, 4), glasstorch.rand(4))
    with pytest.warns(UserWarning, match="different to the input size"):
        GF.l1_loss(glasstorch.rand(3, 4), glasstorch.rand(1, 4))
    with pytest.warns(UserWarning, match="batchmean"):
        GF.kl_div(glasstorch.rand(3, 4), glasstorch.rand(3, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        GF.mse_loss(glasstorch.rand(3, 4), glasstorch.rand(3, 4))
        GF.kl_div(glasstorch.rand(3, 4), glasstorch.rand(3, 4), reduction="batchmean")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_low_precision_losses(dtype):
    """float16/bfloat16 inputs: same result dtype, values and gradients within a few ulps
    (computed in float32 and rounded, like torch's CPU kernels), same unsupported kernels."""
    rng = np.random.default_rng(14)
    x = rng.standard_normal((6, 5)).astype(np.float32)
    y = rng.uniform(0, 1, (6, 5)).astype(np.float32)
    t = rng.integers(0, 5, 6)
    tol = 2e-3 if dtype == "float16" else 1.6e-2
    cases = {
        "ce": lambda L, F, a, b, c: F.cross_entropy(a, c, label_smoothing=0.1),
        "ce_probs": lambda L, F, a, b, c: F.cross_entropy(a, b),
        "nll": lambda L, F, a, b, c: F.nll_loss(a, c),
        "mse": lambda L, F, a, b, c: F.mse_loss(a, b),
        "smooth_l1": lambda L, F, a, b, c: F.smooth_l1_loss(a, b, beta=0.5),
        "huber": lambda L, F, a, b, c: F.huber_loss(a, b),
        "bce": lambda L, F, a, b, c: F.binary_cross_entropy(a.sigmoid(), b),
        "bce_logits": lambda L, F, a, b, c: F.binary_cross_entropy_with_logits(a, b),
        "soft_margin": lambda L, F, a, b, c: F.soft_margin_loss(a, (b - 0.5).sign()),
        "multi_margin": lambda L, F, a, b, c: F.multi_margin_loss(a, c),
    }
    for name, fn in cases.items():
        outs = []
        for L, F in ((torch, TF), (glasstorch, GF)):
            a = L.from_numpy(x.copy()).to(getattr(L, dtype)).requires_grad_()
            b = L.from_numpy(y.copy()).to(getattr(L, dtype))
            try:
                o = fn(L, F, a, b, L.from_numpy(t.copy()))
            except NotImplementedError:
                outs.append(None)
                continue
            o.float().sum().backward()
            outs.append((str(o.dtype), to_np(o), to_np(a.grad)))
        if outs[0] is None:
            assert outs[1] is None, name
            continue
        assert outs[1] is not None and outs[0][0] == outs[1][0], name
        np.testing.assert_allclose(outs[1][1], outs[0][1], rtol=tol, atol=tol, err_msg=name)
        np.testing.assert_allclose(outs[1][2], outs[0][2], rtol=tol, atol=tol, err_msg=name)
