"""Linear/Bilinear/Identity/LazyLinear, dropout, Embedding(Bag), Flatten/Unflatten and the
basic functionals vs torch."""

import math

import numpy as np
import pytest

import glasstorch
import glasstorch.nn as gnn
import glasstorch.nn.functional as GF

from .util import assert_close, compare_module, copy_weights, to_gt

torch = pytest.importorskip("torch")
tnn = torch.nn
TF = torch.nn.functional
RNG = np.random.default_rng(0)


def _x(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("shape", [(5, 4), (2, 3, 4), (4,), (0, 4)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_matches_torch(shape, bias):
    g, t = gnn.Linear(4, 3, bias=bias), tnn.Linear(4, 3, bias=bias)
    assert repr(g) == repr(t)
    assert [(n, tuple(p.shape)) for n, p in g.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in t.named_parameters()]
    go, to = compare_module(g, t, _x(*shape))
    assert type(go.grad_fn).__name__ == type(to.grad_fn).__name__


def test_linear_is_addmm_for_2d_and_views_for_nd():
    w = glasstorch.randn(3, 4, requires_grad=True)
    b = glasstorch.randn(3, requires_grad=True)
    y = GF.linear(glasstorch.randn(5, 4), w, b)
    assert type(y.grad_fn).__name__ == "AddmmBackward0"
    y = GF.linear(glasstorch.randn(2, 5, 4), w, b)
    assert type(y.grad_fn).__name__ == "ViewBackward0"
    assert type(y.grad_fn.next_functions[0][0]).__name__ == "AddmmBackward0"


def test_linear_errors_match_torch():
    for lib, F in ((glasstorch, GF), (torch, TF)):
        with pytest.raises(RuntimeError, match="shapes cannot be multiplied"):
            F.linear(lib.zeros(2, 3), lib.zeros(4, 5))


def _stats(t):
    a = t.detach().numpy().astype(np.float64)
    return a.min(), a.max(), a.mean(), a.std()


def test_default_init_statistics():
    glasstorch.manual_seed(0)
    torch.manual_seed(0)
    for g, t in ((gnn.Linear(400, 300), tnn.Linear(400, 300)),
                 (gnn.Bilinear(50, 40, 30), tnn.Bilinear(50, 40, 30)),
                 (gnn.Embedding(300, 200), tnn.Embedding(300, 200)),
                 (gnn.EmbeddingBag(300, 200), tnn.EmbeddingBag(300, 200))):
        for (name, gp), (_, tp) in zip(g.named_parameters(), t.named_parameters()):
            gs, ts = _stats(gp), _stats(tp)
            spread = ts[3]
            if gp.numel() >= 1000:  # small tensors: only the bounds are meaningful
                assert abs(gs[2] - ts[2]) < 0.1 * spread + 1e-3, (type(g).__name__, name)
                assert abs(gs[3] - ts[3]) < 0.1 * spread, (type(g).__name__, name)
            if not isinstance(g, (gnn.Embedding, gnn.EmbeddingBag)) and gp.numel() >= 1000:
                assert gs[0] >= ts[0] - 0.02 * spread and gs[1] <= ts[1] + 0.02 * spread
    lin = gnn.Linear(400, 300)
    bound = 1 / math.sqrt(400)
    assert abs(lin.weight).max().item() <= bound and abs(lin.bias).max().item() <= bound
    bil = gnn.Bilinear(50, 40, 30)
    bound = 1 / math.sqrt(50)
    assert abs(bil.weight).max().item() <= bound and abs(bil.bias).max().item() <= bound


@pytest.mark.parametrize("bias", [True, False])
def test_bilinear_matches_torch(bias):
    g, t = gnn.Bilinear(4, 3, 5, bias=bias), tnn.Bilinear(4, 3, 5, bias=bias)
    assert repr(g) == repr(t)
    go, to = compare_module(g, t, _x(2, 6, 4), _x(2, 6, 3), rtol=1e-4, atol=1e-5)
    assert type(go.grad_fn).__name__ == type(to.grad_fn).__name__


def test_identity_and_flatten_modules():
    assert repr(gnn.Identity(3, x=1)) == repr(tnn.Identity(3, x=1))
    x = _x(2, 3, 4, 5)
    for g, t in ((gnn.Flatten(), tnn.Flatten()), (gnn.Flatten(0, 2), tnn.Flatten(0, 2)),
                 (gnn.Unflatten(1, (3, 1)), tnn.Unflatten(1, (3, 1))),
                 (gnn.Unflatten(-1, [5, 1]), tnn.Unflatten(-1, [5, 1]))):
        assert repr(g) == repr(t)
        compare_module(g, t, x)
    with pytest.raises(TypeError, match="unflattened_size must be"):
        gnn.Unflatten(1, 3)


def test_lazy_linear_becomes_linear():
    g, t = gnn.LazyLinear(5), tnn.LazyLinear(5)
    assert repr(g) == repr(t)
    out = g(glasstorch.randn(2, 7))
    t(torch.randn(2, 7))
    assert type(g) is gnn.Linear and g.in_features == 7
    assert tuple(out.shape) == (2, 5) and repr(g) == repr(t)
    assert [(n, tuple(p.shape)) for n, p in g.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in t.named_parameters()]
    compare_module(g, t, _x(3, 7))


DROPOUTS = [("Dropout", (2, 3, 4)), ("Dropout1d", (2, 3, 4)), ("Dropout2d", (2, 3, 4, 5)),
            ("Dropout3d", (2, 3, 4, 5, 6)), ("AlphaDropout", (2, 3, 4)),
            ("FeatureAlphaDropout", (2, 3, 4, 5))]


@pytest.mark.parametrize("name,shape", DROPOUTS)
def test_dropout_modules_eval_is_identity_and_repr(name, shape):
    g, t = getattr(gnn, name)(0.3), getattr(tnn, name)(0.3)
    assert repr(g) == repr(t)
    g.eval()
    x = glasstorch.randn(*shape)
    assert g(x) is x
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        getattr(gnn, name)(1.5)


def test_dropout_statistics_and_gradient():
    glasstorch.manual_seed(1)
    x = glasstorch.ones(200, 500, requires_grad=True)
    y = GF.dropout(x, 0.3)
    a = y.detach().numpy()
    kept = a != 0
    assert abs(kept.mean() - 0.7) < 0.01
    assert np.allclose(a[kept], 1 / 0.7)
    assert type(y.grad_fn).__name__ == "MulBackward0"
    y.sum().backward()
    assert np.array_equal(x.grad.numpy(), a)  # gradient is the same mask and scale
    glasstorch.manual_seed(1)
    assert np.array_equal(GF.dropout(x, 0.3).detach().numpy(), a)  # reproducible


def test_feature_dropout_zeroes_whole_channels():
    glasstorch.manual_seed(2)
    for f, shape in ((GF.dropout1d, (8, 16, 10)), (GF.dropout2d, (8, 16, 5, 5)),
                     (GF.dropout3d, (8, 16, 3, 3, 3)), (GF.dropout1d, (16, 10))):
        y = f(glasstorch.ones(*shape), 0.5).numpy()
        per_channel = y.reshape(y.shape[0] * y.shape[1] if len(shape) > 2 else y.shape[0], -1)
        assert ((per_channel == 0).all(1) | (per_channel == 2).all(1)).all()
        assert 0.3 < (per_channel == 0).all(1).mean() < 0.7
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input"):
        GF.dropout1d(glasstorch.ones(2, 3, 4, 5))
    with pytest.warns(UserWarning, match="dropout2d: Received a 3D input"):
        GF.dropout2d(glasstorch.ones(2, 3, 4))


def test_alpha_dropout_keeps_mean_and_variance():
    glasstorch.manual_seed(3)
    x = glasstorch.randn(400, 500)
    y = GF.alpha_dropout(x, 0.2, training=True).numpy()
    assert abs(y.mean()) < 0.02 and abs(y.std() - 1) < 0.02
    assert GF.alpha_dropout(x, 0.2) is x  # training=False by default
    t = tnn.AlphaDropout(0.2)(torch.from_numpy(x.numpy()))
    assert abs(t.std().item() - y.std()) < 0.02


def test_dropout_inplace():
    glasstorch.manual_seed(4)
    x = glasstorch.ones(50, 50)
    y = GF.dropout(x, 0.5, inplace=True)
    assert y is x and set(np.unique(x.numpy())) <= {0.0, 2.0}


@pytest.mark.parametrize("kwargs", [{}, {"padding_idx": 1}, {"padding_idx": -2},
                                    {"scale_grad_by_freq": True},
                                    {"max_norm": 1.0}, {"max_norm": 0.5, "norm_type": 1.0}])
def test_embedding_module(kwargs):
    g, t = gnn.Embedding(7, 4, **kwargs), tnn.Embedding(7, 4, **kwargs)
    assert repr(g) == repr(t)
    idx = np.array([[0, 1, 3], [3, 5, 1]])
    go, to = compare_module(g, t, idx)
    assert type(go.grad_fn).__name__ == type(to.grad_fn).__name__ == "EmbeddingBackward0"
    assert_close(g.weight, t.weight)  # max_norm renormalised the same rows in place
    if "padding_idx" in kwargs:
        pad = kwargs["padding_idx"] % 7
        assert not gnn.Embedding(7, 4, **kwargs).weight[pad].any().item()


def test_embedding_from_pretrained_and_errors():
    w = glasstorch.randn(4, 3)
    e = gnn.Embedding.from_pretrained(w)
    assert not e.weight.requires_grad and repr(e) == "Embedding(4, 3)"
    assert gnn.Embedding.from_pretrained(w, freeze=False).weight.requires_grad
    with pytest.raises(IndexError):
        e(glasstorch.tensor([4]))
    with pytest.raises(RuntimeError, match="Expected tensor for argument #1 'indices'"):
        e(glasstorch.tensor([1.0]))
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        gnn.Embedding(3, 2, padding_idx=3)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_module(mode):
    g, t = gnn.EmbeddingBag(8, 3, mode=mode), tnn.EmbeddingBag(8, 3, mode=mode)
    assert repr(g) == repr(t)
    idx, off = np.array([1, 2, 4, 5, 4, 3, 2, 7]), np.array([0, 3, 3, 6])
    go, to = compare_module(g, t, idx, off)
    assert type(go.grad_fn).__name__ == "EmbeddingBagBackward0"
    compare_module(g, t, idx.reshape(2, 4))


def test_embedding_bag_per_sample_weights_and_padding():
    g = gnn.EmbeddingBag(8, 3, mode="sum", padding_idx=2)
    t = tnn.EmbeddingBag(8, 3, mode="sum", padding_idx=2)
    assert repr(g) == repr(t)
    copy_weights(g, t)
    idx, off, w = np.array([1, 2, 4, 5, 4, 3]), np.array([0, 2]), _x(6)
    gw, tw = glasstorch.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    go = g(glasstorch.tensor(idx), glasstorch.tensor(off), gw)
    to = t(torch.tensor(idx), torch.tensor(off), tw)
    assert_close(go, to)
    go.pow(2).sum().backward()
    to.pow(2).sum().backward()
    assert_close(gw.grad, tw.grad, 1e-5, 1e-5)
    assert_close(g.weight.grad, t.weight.grad, 1e-5, 1e-5)
    with pytest.raises(NotImplementedError, match="per_sample_weights"):
        GF.embedding_bag(glasstorch.tensor(idx), g.weight, glasstorch.tensor(off), mode="mean",
                         per_sample_weights=gw)


def test_one_hot_normalize_distances():
    a = glasstorch.tensor([0, 3, 1])
    assert np.array_equal(GF.one_hot(a).numpy(), TF.one_hot(torch.tensor([0, 3, 1])).numpy())
    assert GF.one_hot(a, 5).dtype is glasstorch.int64
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes"):
        GF.one_hot(a, 2)
    x, y = _x(4, 5), _x(4, 5)
    assert_close(GF.normalize(to_gt(torch.from_numpy(x)), p=1, dim=0),
                 TF.normalize(torch.from_numpy(x), p=1, dim=0))
    out = glasstorch.empty(4, 5)
    GF.normalize(glasstorch.from_numpy(x), out=out)
    assert_close(out, TF.normalize(torch.from_numpy(x)))
    gx, gy = glasstorch.from_numpy(x), glasstorch.from_numpy(y)
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)
    assert_close(GF.cosine_similarity(gx, gy, dim=0), TF.cosine_similarity(tx, ty, dim=0))
    assert_close(GF.pairwise_distance(gx, gy, keepdim=True),
                 TF.pairwise_distance(tx, ty, keepdim=True))
    assert_close(GF.pdist(gx, 1.5), TF.pdist(tx, 1.5), 1e-5, 1e-5)


def test_gumbel_softmax():
    glasstorch.manual_seed(5)
    logits = glasstorch.tensor([[2.0, 0.0, -1.0]] * 4000, requires_grad=True)
    y = GF.gumbel_softmax(logits, tau=0.5)
    assert np.allclose(y.detach().numpy().sum(1), 1)
    h = GF.gumbel_softmax(logits, hard=True)
    hn = h.detach().numpy()
    assert set(np.unique(hn)) == {0.0, 1.0} and np.allclose(hn.sum(1), 1)
    # Gumbel-max samples the softmax distribution
    freq = hn.mean(0)
    p = np.exp([2.0, 0.0, -1.0]) / np.exp([2.0, 0.0, -1.0]).sum()
    assert np.abs(freq - p).max() < 0.03
    (h[:, 0].sum()).backward()  # straight-through: the soft sample's gradient
    assert logits.grad is not None and np.abs(logits.grad.numpy()).sum() > 0
