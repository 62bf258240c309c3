"""RNN, LSTM, GRU, their cells and nn.utils.rnn against torch (weights copied across)."""

import warnings

import numpy as np
import pytest

import glasstorch
import glasstorch.nn as gnn
from glasstorch.nn.utils import rnn as grnn
from tests.nn.util import assert_close, compare_module, copy_weights

torch = pytest.importorskip("torch")
from torch.nn.utils import rnn as trnn  # noqa: E402

RNG = np.random.default_rng(1234)


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def pair(cls, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = getattr(torch.nn, cls)(*args, **kwargs)
        g = getattr(gnn, cls)(*args, **kwargs)
    return g, t


CONFIGS = [
    ("RNN", {}),
    ("RNN", {"nonlinearity": "relu", "num_layers": 2}),
    ("RNN", {"bidirectional": True, "bias": False, "batch_first": True}),
    ("LSTM", {}),
    ("LSTM", {"num_layers": 2, "bidirectional": True}),
    ("LSTM", {"proj_size": 3, "num_layers": 2, "bidirectional": True, "batch_first": True}),
    ("LSTM", {"bias": False, "proj_size": 2}),
    ("GRU", {}),
    ("GRU", {"num_layers": 2, "bidirectional": True}),
    ("GRU", {"bias": False, "batch_first": True, "num_layers": 2}),
]


@pytest.mark.filterwarnings("ignore:LSTM with projections")
@pytest.mark.parametrize("cls,kw", CONFIGS)
def test_forward_backward_matches_torch(cls, kw):
    g, t = pair(cls, 4, 6, **kw)
    assert repr(g) == repr(t)
    assert [(n, tuple(p.shape)) for n, p in g.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in t.named_parameters()]
    compare_module(g, t, rand(5, 3, 4), rtol=1e-4, atol=1e-5)


@pytest.mark.filterwarnings("ignore:LSTM with projections")
@pytest.mark.parametrize("cls,kw", [c for i, c in enumerate(CONFIGS) if i in (0, 2, 3, 5, 7, 9)])
def test_initial_state_and_unbatched(cls, kw):
    g, t = pair(cls, 4, 6, **kw)
    d = 2 if kw.get("bidirectional") else 1
    n = kw.get("num_layers", 1) * d
    hsize = kw.get("proj_size") or 6
    if cls == "LSTM":
        h0, c0 = rand(n, 3, hsize), rand(n, 3, 6)

        gm = lambda x, h, c: g(x, (h, c))  # noqa: E731
        tm = lambda x, h, c: t(x, (h, c))  # noqa: E731
        copy_weights(g, t)
        x = rand(3, 3, 4)
        tx, th, tc = (torch.tensor(a, requires_grad=True) for a in (x, h0, c0))
        gx, gh, gc = (glasstorch.tensor(a, requires_grad=True) for a in (x, h0, c0))
        to, (thn, tcn) = tm(tx, th, tc)
        go, (ghn, gcn) = gm(gx, gh, gc)
        for a, b in ((go, to), (ghn, thn), (gcn, tcn)):
            assert_close(a, b, 1e-4, 1e-5)
        w = [rand(*o.shape) for o in (to, thn, tcn)]
        sum((o * torch.tensor(x_)).sum() for o, x_ in zip((to, thn, tcn), w)).backward()
        sum((o * glasstorch.tensor(x_)).sum() for o, x_ in zip((go, ghn, gcn), w)).backward()
        for a, b in ((gx, tx), (gh, th), (gc, tc)):
            assert_close(a.grad, b.grad, 1e-4, 1e-5)
        # unbatched: (L, H_in) input with 2-D states
        compare_module(g, t, rand(5, 4), copy=False)
    else:
        compare_module(g, t, rand(3, 3, 4), rand(n, 3, hsize), rtol=1e-4, atol=1e-5)
        compare_module(g, t, rand(5, 4), rand(n, hsize), rtol=1e-4, atol=1e-5, copy=False)


def _packed_pair(lengths, enforce_sorted, feat=4, batch_first=False):
    T = max(lengths)
    x = rand(T, len(lengths), feat)
    if batch_first:
        x = np.ascontiguousarray(x.transpose(1, 0, 2))
    tx = torch.tensor(x, requires_grad=True)
    gx = glasstorch.tensor(x, requires_grad=True)
    tp = trnn.pack_padded_sequence(tx, lengths, batch_first=batch_first,
                                   enforce_sorted=enforce_sorted)
    gp = grnn.pack_padded_sequence(gx, lengths, batch_first=batch_first,
                                   enforce_sorted=enforce_sorted)
    return tx, gx, tp, gp


PACKED = [(c, kw, i % 3 == 0) for i, (c, kw) in enumerate(CONFIGS) if i in (1, 2, 3, 5, 6, 8, 9)]


@pytest.mark.filterwarnings("ignore:LSTM with projections")
@pytest.mark.parametrize("cls,kw,enforce_sorted", PACKED)
def test_packed_sequence_input(cls, kw, enforce_sorted):
    g, t = pair(cls, 4, 6, **kw)
    copy_weights(g, t)
    lengths = [5, 4, 4, 2, 1] if enforce_sorted else [2, 5, 1, 4, 4]
    tx, gx, tp, gp = _packed_pair(lengths, enforce_sorted)
    d = 2 if kw.get("bidirectional") else 1
    n = kw.get("num_layers", 1) * d
    hsize = kw.get("proj_size") or 6
    h0 = rand(n, 5, hsize)
    th, gh = torch.tensor(h0, requires_grad=True), glasstorch.tensor(h0, requires_grad=True)
    if cls == "LSTM":
        c0 = rand(n, 5, 6)
        tc, gc = torch.tensor(c0), glasstorch.tensor(c0)
        to, (thn, tcn) = t(tp, (th, tc))
        go, (ghn, gcn) = g(gp, (gh, gc))
        outs = ((go.data, to.data), (ghn, thn), (gcn, tcn))
    else:
        to, thn = t(tp, th)
        go, ghn = g(gp, gh)
        outs = ((go.data, to.data), (ghn, thn))
    assert isinstance(go, grnn.PackedSequence)
    assert (go.batch_sizes.numpy() == to.batch_sizes.numpy()).all()
    for a, b in outs:
        assert_close(a, b, 1e-4, 1e-5)
    tpad, tl = trnn.pad_packed_sequence(to, batch_first=True)
    gpad, gl = grnn.pad_packed_sequence(go, batch_first=True)
    assert_close(gpad, tpad, 1e-4, 1e-5)
    assert gl.tolist() == tl.tolist()
    w = [rand(*b.shape) for _, b in outs]
    sum((b * torch.tensor(x)).sum() for (_, b), x in zip(outs, w)).backward()
    sum((a * glasstorch.tensor(x)).sum() for (a, _), x in zip(outs, w)).backward()
    assert_close(gx.grad, tx.grad, 1e-4, 1e-5)
    assert_close(gh.grad, th.grad, 1e-4, 1e-5)
    gp_ = dict(g.named_parameters())
    for name, p in t.named_parameters():
        assert_close(gp_[name].grad, p.grad, 1e-4, 1e-5, name)


def test_packed_sequence_without_initial_state_batch_first():
    g, t = pair("GRU", 4, 3, batch_first=True, bidirectional=True)
    copy_weights(g, t)
    tx, gx, tp, gp = _packed_pair([3, 1, 2], False, batch_first=True)
    to, th = t(tp)
    go, gh = g(gp)
    assert_close(go.data, to.data, 1e-4, 1e-5)
    assert_close(gh, th, 1e-4, 1e-5)
    assert go.sorted_indices.tolist() == to.sorted_indices.tolist()
    assert go.unsorted_indices.tolist() == to.unsorted_indices.tolist()


@pytest.mark.parametrize("cls", ["RNNCell", "LSTMCell", "GRUCell"])
@pytest.mark.parametrize("bias", [True, False])
def test_cells(cls, bias):
    g, t = pair(cls, 4, 5, bias=bias)
    assert repr(g) == repr(t)
    assert [n for n, _ in g.named_parameters()] == [n for n, _ in t.named_parameters()]
    compare_module(g, t, rand(3, 4))
    compare_module(g, t, rand(4), copy=False)
    if cls == "LSTMCell":
        g2 = lambda x, h, c: g(x, (h, c))  # noqa: E731
        t2 = lambda x, h, c: t(x, (h, c))  # noqa: E731
        x, h, c = rand(3, 4), rand(3, 5), rand(3, 5)
        for a, b in zip(g2(*map(glasstorch.tensor, (x, h, c))), t2(*map(torch.tensor, (x, h, c)))):
            assert_close(a, b)
    else:
        compare_module(g, t, rand(3, 4), rand(3, 5), copy=False)


def test_rnn_cell_relu_repr_and_values():
    g, t = pair("RNNCell", 4, 5, nonlinearity="relu")
    assert repr(g) == repr(t) == "RNNCell(4, 5, nonlinearity=relu)"
    compare_module(g, t, rand(3, 4))


def test_reprs():
    for args, kw in [((3, 4), {"nonlinearity": "relu", "num_layers": 2, "bias": False,
                                "batch_first": True, "dropout": 0.5, "bidirectional": True}),
                     ((3, 4, 2), {})]:
        g, t = pair("RNN", *args, **kw)
        assert repr(g) == repr(t)
    g, t = pair("LSTM", 3, 4, proj_size=2)
    assert repr(g) == repr(t) == "LSTM(3, 4, proj_size=2)"


def test_positional_nonlinearity_and_layers():
    g, t = pair("RNN", 4, 6, 2, "relu")
    assert repr(g) == repr(t)
    assert g.nonlinearity == "relu" and g.num_layers == 2
    compare_module(g, t, rand(3, 2, 4))


def test_default_init_statistics():
    g = gnn.LSTM(64, 100, num_layers=2, bidirectional=True)
    bound = 1 / np.sqrt(100)
    allv = np.concatenate([p.detach().numpy().ravel() for p in g.parameters()])
    assert np.abs(allv).max() <= bound
    assert abs(allv.mean()) < 2e-3
    # uniform(-b, b) has std b / sqrt(3)
    assert abs(allv.std() - bound / np.sqrt(3)) < 2e-3
    glasstorch.manual_seed(0)
    a = gnn.GRU(3, 4).weight_ih_l0.detach().numpy().copy()
    glasstorch.manual_seed(0)
    b = gnn.GRU(3, 4).weight_ih_l0.detach().numpy()
    assert (a == b).all()


def test_all_weights_flat_weights_and_flatten_parameters():
    g, t = pair("LSTM", 3, 4, num_layers=2, bidirectional=True, proj_size=2)
    assert g._flat_weights_names == t._flat_weights_names
    assert [[tuple(p.shape) for p in ws] for ws in g.all_weights] == \
        [[tuple(p.shape) for p in ws] for ws in t.all_weights]
    assert g.flatten_parameters() is None


def test_dropout_between_layers_train_and_eval():
    g = gnn.LSTM(4, 8, num_layers=3, dropout=0.5)
    x = glasstorch.tensor(rand(6, 2, 4))
    g.train()
    glasstorch.manual_seed(0)
    a = g(x)[0]
    glasstorch.manual_seed(1)
    b = g(x)[0]
    assert not np.allclose(a.detach().numpy(), b.detach().numpy())
    glasstorch.manual_seed(0)
    a2 = g(x)[0]
    np.testing.assert_array_equal(a.detach().numpy(), a2.detach().numpy())
    g.eval()
    e1, e2 = g(x)[0], g(x)[0]
    np.testing.assert_array_equal(e1.detach().numpy(), e2.detach().numpy())
    # in eval mode it equals torch's eval output with the same weights
    t = torch.nn.LSTM(4, 8, num_layers=3, dropout=0.5).eval()
    copy_weights(g, t)
    assert_close(g(x)[0], t(torch.tensor(x.numpy()))[0], 1e-4, 1e-5)


def test_float64_gradcheck():
    glasstorch.manual_seed(0)
    g = gnn.GRU(2, 3, bidirectional=True).double()
    tx, gx, tp, gp = _packed_pair([3, 1], True, feat=2)
    x = glasstorch.tensor(rand(3, 2, 2, dtype=np.float64), requires_grad=True)
    assert glasstorch.autograd.gradcheck(lambda a: g(a)[0], (x,))
    c = gnn.LSTMCell(2, 3).double()
    assert glasstorch.autograd.gradcheck(lambda a: c(a)[1], (x[0],))


def test_float64_values():
    t = torch.nn.LSTM(3, 4, num_layers=2, dtype=torch.float64)
    g = gnn.LSTM(3, 4, num_layers=2, dtype=glasstorch.float64)
    compare_module(g, t, rand(4, 2, 3, dtype=np.float64), rtol=1e-10, atol=1e-12)
    out = g(glasstorch.tensor(rand(4, 2, 3, dtype=np.float64)))[0]
    assert out.dtype == glasstorch.float64


def _raises_like(fn_g, fn_t):
    with pytest.raises(Exception) as et:
        fn_t()
    with pytest.raises(type(et.value)):
        fn_g()


def test_errors_match_torch():
    g, t = pair("LSTM", 3, 4)
    gr, tr = pair("RNN", 3, 4)
    gg, tg = pair("GRUCell", 3, 4)
    for mods, shape in (((g, t), (5,)), ((gr, tr), (2, 2, 2, 3)), ((g, t), (5, 2, 2))):
        _raises_like(lambda: mods[0](glasstorch.zeros(shape)), lambda: mods[1](torch.zeros(shape)))
    _raises_like(lambda: g(glasstorch.zeros(5, 2, 3), (glasstorch.zeros(1, 3, 4),) * 2),
                 lambda: t(torch.zeros(5, 2, 3), (torch.zeros(1, 3, 4),) * 2))
    _raises_like(lambda: gr(glasstorch.zeros(5, 2, 3), glasstorch.zeros(2, 2, 4)),
                 lambda: tr(torch.zeros(5, 2, 3), torch.zeros(2, 2, 4)))
    _raises_like(lambda: gr(glasstorch.zeros(5, 3), glasstorch.zeros(1, 2, 4)),
                 lambda: tr(torch.zeros(5, 3), torch.zeros(1, 2, 4)))
    _raises_like(lambda: gr(glasstorch.zeros(5, 2, 3, dtype=glasstorch.float64)),
                 lambda: tr(torch.zeros(5, 2, 3, dtype=torch.float64)))
    _raises_like(lambda: gg(glasstorch.zeros(2, 2, 3)), lambda: tg(torch.zeros(2, 2, 3)))
    _raises_like(lambda: gg(glasstorch.zeros(2, 4)), lambda: tg(torch.zeros(2, 4)))
    _raises_like(lambda: gg(glasstorch.zeros(2, 3), glasstorch.zeros(3, 4)),
                 lambda: tg(torch.zeros(2, 3), torch.zeros(3, 4)))
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size"):
        g(glasstorch.zeros(5, 2, 2))


@pytest.mark.parametrize("cls,kw", [
    ("RNN", {"dropout": 2}), ("RNN", {"nonlinearity": "x"}), ("GRU", {"proj_size": 2}),
    ("LSTM", {"proj_size": 4}), ("LSTM", {"proj_size": -1}), ("RNN", {"num_layers": 0}),
])
def test_constructor_errors(cls, kw):
    with pytest.raises(Exception) as et:
        getattr(torch.nn, cls)(3, 4, **kw)
    with pytest.raises(type(et.value)):
        getattr(gnn, cls)(3, 4, **kw)
    for hidden in (0, 4.0):
        with pytest.raises(Exception) as et:
            torch.nn.LSTM(3, hidden)
        with pytest.raises(type(et.value)):
            gnn.LSTM(3, hidden)


def test_dropout_warning_for_single_layer():
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        gnn.GRU(3, 4, dropout=0.3)


# ----------------------------------------------------------------------------- nn.utils.rnn

@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("lengths,enforce_sorted", [([5, 3, 3, 1], True), ([2, 5, 1, 3], False),
                                                    ([4], True)])
def test_pack_pad_roundtrip_and_grads(batch_first, lengths, enforce_sorted):
    tx, gx, tp, gp = _packed_pair(lengths, enforce_sorted, feat=3, batch_first=batch_first)
    assert_close(gp.data, tp.data)
    assert gp.batch_sizes.tolist() == tp.batch_sizes.tolist()
    assert gp.batch_sizes.dtype == glasstorch.int64
    for a, b in ((gp.sorted_indices, tp.sorted_indices),
                 (gp.unsorted_indices, tp.unsorted_indices)):
        assert (a is None) == (b is None)
        if a is not None:
            assert a.tolist() == b.tolist()
    for total in (None, max(lengths) + 2):
        tpad, tl = trnn.pad_packed_sequence(tp, batch_first=batch_first, padding_value=-2.5,
                                            total_length=total)
        gpad, gl = grnn.pad_packed_sequence(gp, batch_first=batch_first, padding_value=-2.5,
                                            total_length=total)
        assert tuple(gpad.shape) == tuple(tpad.shape)
        assert_close(gpad, tpad)
        assert gl.tolist() == tl.tolist() and gl.dtype == glasstorch.int64
    w = rand(*tpad.shape)
    (tpad * torch.tensor(w)).sum().backward()
    (gpad * glasstorch.tensor(w)).sum().backward()
    assert_close(gx.grad, tx.grad)


def test_pack_errors():
    x = rand(4, 3, 2)
    for lengths, kw in (([1, 3, 2], {}), ([3, 2, 0], {}), ([3, 2], {})):
        with pytest.raises(Exception) as et:
            trnn.pack_padded_sequence(torch.tensor(x), lengths, **kw)
        with pytest.raises(type(et.value)):
            grnn.pack_padded_sequence(glasstorch.tensor(x), lengths, **kw)
    tp = trnn.pack_padded_sequence(torch.tensor(x), [4, 2, 1])
    gp = grnn.pack_padded_sequence(glasstorch.tensor(x), [4, 2, 1])
    with pytest.raises(ValueError):
        trnn.pad_packed_sequence(tp, total_length=2)
    with pytest.raises(ValueError):
        grnn.pad_packed_sequence(gp, total_length=2)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
def test_pad_sequence(batch_first, side):
    seqs = [rand(n, 2) for n in (2, 4, 1)]
    tl = [torch.tensor(s, requires_grad=True) for s in seqs]
    gl = [glasstorch.tensor(s, requires_grad=True) for s in seqs]
    a = trnn.pad_sequence(tl, batch_first=batch_first, padding_value=3.0, padding_side=side)
    b = grnn.pad_sequence(gl, batch_first=batch_first, padding_value=3.0, padding_side=side)
    assert_close(b, a)
    w = rand(*a.shape)
    (a * torch.tensor(w)).sum().backward()
    (b * glasstorch.tensor(w)).sum().backward()
    for x, y in zip(gl, tl):
        assert_close(x.grad, y.grad)
    with pytest.raises(ValueError):
        grnn.pad_sequence(gl, padding_side="middle")


def test_pack_sequence_unpack_unpad():
    seqs = [rand(n, 3) for n in (2, 4, 1)]
    for es in (False,):
        tp = trnn.pack_sequence([torch.tensor(s) for s in seqs], enforce_sorted=es)
        gp = grnn.pack_sequence([glasstorch.tensor(s) for s in seqs], enforce_sorted=es)
        assert_close(gp.data, tp.data)
        for a, s in zip(grnn.unpack_sequence(gp), seqs):
            np.testing.assert_array_equal(a.numpy(), s)
    with pytest.raises(RuntimeError):
        grnn.pack_sequence([glasstorch.tensor(s) for s in seqs], enforce_sorted=True)
    pad = grnn.pad_sequence([glasstorch.tensor(s) for s in seqs], batch_first=True)
    back = grnn.unpad_sequence(pad, glasstorch.tensor([2, 4, 1]), batch_first=True)
    for a, s in zip(back, seqs):
        np.testing.assert_array_equal(a.numpy(), s)


def test_packed_sequence_object():
    gp = grnn.pack_sequence([glasstorch.tensor(rand(n, 3)) for n in (3, 1)])
    assert isinstance(gp, tuple) and gp._fields == ("data", "batch_sizes", "sorted_indices",
                                                    "unsorted_indices")
    d = gp.to(glasstorch.float64)
    assert d.data.dtype == glasstorch.float64 and d.batch_sizes is gp.batch_sizes
    assert gp.to(glasstorch.float32) is gp
    assert gp.double().data.dtype == glasstorch.float64
    assert not gp.is_cuda
    p2 = grnn.PackedSequence(gp.data, gp.batch_sizes, glasstorch.tensor([1, 0]))
    assert p2.unsorted_indices.tolist() == [1, 0]
    p3 = grnn.PackedSequence((gp.data, gp.batch_sizes))
    assert p3.batch_sizes is gp.batch_sizes and p3.sorted_indices is None


@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN"])
def test_half_precision(cls):
    x = rand(4, 2, 3)
    for tdt, gdt in ((torch.bfloat16, glasstorch.bfloat16), (torch.float16, glasstorch.float16)):
        g, t = pair(cls, 3, 5)
        copy_weights(g, t)
        t.to(tdt)
        g.to(gdt)
        to = t(torch.tensor(x).to(tdt))[0]
        go = g(glasstorch.tensor(x).to(gdt))[0]
        assert go.dtype == gdt
        assert_close(go, to, 2e-2, 2e-2)


def test_public_helper_methods():
    g, t = pair("LSTM", 3, 4, num_layers=2, proj_size=2, batch_first=True)
    gx, tx = glasstorch.zeros(5, 7, 3), torch.zeros(5, 7, 3)
    assert g.get_expected_hidden_size(gx, None) == t.get_expected_hidden_size(tx, None)
    assert g.get_expected_cell_size(gx, None) == t.get_expected_cell_size(tx, None)
    g.check_forward_args(gx, (glasstorch.zeros(2, 5, 2), glasstorch.zeros(2, 5, 4)), None)
    with pytest.raises(RuntimeError, match="Expected hidden\\[1\\] size"):
        g.check_forward_args(gx, (glasstorch.zeros(2, 5, 2), glasstorch.zeros(2, 5, 2)), None)
    perm = glasstorch.tensor([1, 0])
    h = glasstorch.arange(4.0).view(1, 2, 2)
    assert g.permute_hidden((h, h), perm)[0].tolist() == [[[2.0, 3.0], [0.0, 1.0]]]
    r = gnn.GRU(3, 4)
    assert r.permute_hidden(h, None) is h
    with pytest.raises(RuntimeError):
        r.check_forward_args(glasstorch.zeros(5, 2, 3), glasstorch.zeros(1, 3, 4), None)


def _tagger(L):
    nn = L.nn

    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(20, 6, padding_idx=0)
            self.rnn = nn.LSTM(6, 5, num_layers=2, bidirectional=True, batch_first=True)
            self.out = nn.Linear(10, 3)

        def forward(self, tokens, lengths):
            packed = nn.utils.rnn.pack_padded_sequence(self.emb(tokens), lengths,
                                                       batch_first=True, enforce_sorted=False)
            out, (h, c) = self.rnn(packed)
            padded, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True)
            return self.out(padded).log_softmax(-1), h

    return Tagger()


def test_pasted_model_with_packed_lstm():
    g, t = _tagger(glasstorch), _tagger(torch)
    assert repr(g) == repr(t)
    tokens = RNG.integers(1, 20, (3, 6))
    lengths = [4, 6, 2]
    for i, n in enumerate(lengths):
        tokens[i, n:] = 0
    copy_weights(g, t)
    go, gh = g(glasstorch.tensor(tokens), glasstorch.tensor(lengths))
    to, th = t(torch.tensor(tokens), torch.tensor(lengths))
    assert_close(go, to, 1e-4, 1e-5)
    assert_close(gh, th, 1e-4, 1e-5)
    w = rand(*to.shape)
    (to * torch.tensor(w)).sum().backward()
    (go * glasstorch.tensor(w)).sum().backward()
    gp = dict(g.named_parameters())
    for name, p in t.named_parameters():
        assert_close(gp[name].grad, p.grad, 1e-4, 1e-5, name)
