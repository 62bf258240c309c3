"""The fused recurrent layer (glasstorch._ops.rnn): its graph node, its gradients in float64
(gradcheck, double backward against torch) and its agreement with the per-step composite
path that tracers see."""

import warnings

import numpy as np
import pytest

import glasstorch
from glasstorch._ops import rnn as _rnn
from tests.nn.util import assert_close, copy_weights

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)


def _pair(cls, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return getattr(glasstorch.nn, cls)(*args, **kw), getattr(torch.nn, cls)(*args, **kw)


@pytest.mark.parametrize("kw", [{}, {"num_layers": 2, "bidirectional": True},
                                {"batch_first": True}])
def test_one_node_per_layer_and_direction_like_torch(kw):
    g, t = _pair("LSTM", 3, 4, **kw)
    x = RNG.standard_normal((2, 5, 3) if kw.get("batch_first") else (5, 2, 3), np.float32)
    outs = {}
    for lib, m in (("gt", g), ("torch", t)):
        L = glasstorch if lib == "gt" else torch
        out, (h, c) = m(L.tensor(x))
        outs[lib] = out, h, c

    def names(fn):
        return [type(n).__name__ if n is not None else None for n, _ in fn.next_functions]

    for a, b in zip(outs["gt"], outs["torch"]):
        assert a.grad_fn.name() == b.grad_fn.name()
        assert names(a.grad_fn) == names(b.grad_fn)
        assert [nr for _, nr in a.grad_fn.next_functions] == \
            [nr for _, nr in b.grad_fn.next_functions]
    layer = [n for n, _ in outs["gt"][1].grad_fn.next_functions][0]
    assert layer.name() == "MkldnnRnnLayerBackward0"
    tlayer = [n for n, _ in outs["torch"][1].grad_fn.next_functions][0]
    assert names(layer) == names(tlayer)


def _params(gates, i, h, layers, dirs, bias, proj):
    r = proj or h
    ps = []
    for layer in range(layers):
        for _ in range(dirs):
            width = i if layer == 0 else r * dirs
            ps += [(gates * h, width), (gates * h, r)]
            if bias:
                ps += [(gates * h,), (gates * h,)]
            if proj:
                ps.append((r, h))
    return [glasstorch.tensor(RNG.standard_normal(s) * 0.5, requires_grad=True) for s in ps]


GRADCHECK = [  # mode, bias, layers, bidirectional, proj, packed
    ("LSTM", True, 1, True, 0, True),
    ("LSTM", False, 2, False, 2, False),
    ("LSTM", True, 1, True, 2, True),
    ("GRU", True, 1, True, 0, True),
    ("GRU", False, 2, False, 0, False),
    ("RNN_TANH", True, 1, True, 0, True),
    ("RNN_RELU", True, 2, False, 0, False),
]


@pytest.mark.parametrize("mode,bias,layers,bidir,proj,packed", GRADCHECK)
def test_float64_gradcheck_every_input(mode, bias, layers, bidir, proj, packed):
    gates = {"LSTM": 4, "GRU": 3}.get(mode, 1)
    i, h, dirs = 2, 3, 2 if bidir else 1
    r = proj or h
    params = _params(gates, i, h, layers, dirs, bias, proj)
    h0 = glasstorch.tensor(RNG.standard_normal((layers * dirs, 3, r)), requires_grad=True)
    c0 = glasstorch.tensor(RNG.standard_normal((layers * dirs, 3, h)), requires_grad=True)
    fn = getattr(glasstorch, mode.lower())
    if packed:  # lengths 3, 2, 1: states leave (forward) and join (reverse) mid-sequence
        x = glasstorch.tensor(RNG.standard_normal((6, i)), requires_grad=True)
        sizes = glasstorch.tensor([3, 2, 1])

        def f(x, h0, c0, *ps):
            hx = (h0, c0) if mode == "LSTM" else h0
            return fn(x, sizes, hx, list(ps), bias, layers, 0.0, False, bidir)
    else:
        x = glasstorch.tensor(RNG.standard_normal((3, 3, i)), requires_grad=True)

        def f(x, h0, c0, *ps):
            hx = (h0, c0) if mode == "LSTM" else h0
            return fn(x, hx, list(ps), bias, layers, 0.0, False, bidir, False)
    inputs = (x, h0, c0) if mode == "LSTM" else (x, h0)
    if mode != "LSTM":
        g = f

        def f(x, h0, *ps):  # noqa: F811 - the same call without a cell state
            return g(x, h0, None, *ps)
    assert glasstorch.autograd.gradcheck(f, inputs + tuple(params))


@pytest.mark.filterwarnings("ignore:LSTM with projections")
@pytest.mark.parametrize("cls,kw", [("LSTM", {}), ("GRU", {"bidirectional": True}),
                                    ("RNN", {"nonlinearity": "relu"}),
                                    ("LSTM", {"proj_size": 2, "num_layers": 2})])
def test_double_backward_matches_torch(cls, kw):
    g, t = _pair(cls, 3, 4, **kw)
    g.double()
    t.double()
    copy_weights(g, t)
    xa = RNG.standard_normal((5, 2, 3))
    res = []
    for L, m in ((glasstorch, g), (torch, t)):
        x = L.tensor(xa, requires_grad=True)
        o = m(x)[0]
        gx, = L.autograd.grad((o * o).sum(), x, create_graph=True)
        gw, = L.autograd.grad(gx.pow(2).sum(), m.weight_hh_l0)
        res.append((o, gx, gw))
    for a, b in zip(*res):
        assert_close(a, b, 1e-9, 1e-11)


@pytest.mark.parametrize("cls,kw", [("LSTM", {"bidirectional": True, "proj_size": 2}),
                                    ("GRU", {"num_layers": 2}), ("RNN", {"bias": False})])
def test_fused_and_composite_paths_agree(cls, kw, monkeypatch):
    g, _ = _pair(cls, 3, 4, **kw)
    lengths = [4, 3, 1]
    seqs = [glasstorch.tensor(RNG.standard_normal((n, 3)).astype(np.float32))
            for n in lengths]
    runs = []
    for traced in (False, True):
        monkeypatch.setattr(_rnn, "_traced", lambda *a, traced=traced: traced)
        g.zero_grad()
        xs = [s.clone().requires_grad_() for s in seqs]
        packed = glasstorch.nn.utils.rnn.pack_sequence(xs)
        out, hx = g(packed)
        states = hx if isinstance(hx, tuple) else (hx,)
        (out.data.square().sum() + sum(s.sin().sum() for s in states)).backward()
        runs.append([out.data, *states, *(x.grad for x in xs),
                     *(p.grad for p in g.parameters())])
    for a, b in zip(*runs):
        assert_close(a, b, 1e-5, 1e-6)
