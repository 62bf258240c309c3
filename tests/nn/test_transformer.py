"""Transformer encoder/decoder layers, stacks and nn.Transformer against torch."""

import inspect
import warnings

import numpy as np
import pytest

import glasstorch
import glasstorch.nn as gnn
import glasstorch.nn.functional as GF
from tests.nn.util import assert_close, compare_module, copy_weights

torch = pytest.importorskip("torch")
TF = torch.nn.functional

RNG = np.random.default_rng(11)
# torch warns about float src_mask with bool padding masks; so do we (checked elsewhere)
pytestmark = [pytest.mark.filterwarnings("ignore:Support for mismatched"),
              pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors")]


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def build(lib, cls, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return getattr(lib.nn, cls)(*args, **kwargs)


def pair(cls, *args, **kwargs):
    act = kwargs.pop("activation", None)
    gkw, tkw = dict(kwargs), dict(kwargs)
    if act is not None:
        gkw["activation"], tkw["activation"] = act(glasstorch) if callable(act) else act, \
            act(torch) if callable(act) else act
    return build(glasstorch, cls, *args, **gkw), build(torch, cls, *args, **tkw)


ACTS = [None, "gelu", lambda L: L.nn.functional.gelu, lambda L: L.nn.GELU(approximate="tanh"),
        lambda L: (lambda x: L.tanh(x))]


@pytest.mark.parametrize("act", range(len(ACTS)))
@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer(act, norm_first):
    bf = act % 2 == 1
    g, t = pair("TransformerEncoderLayer", 8, 2, 16, dropout=0.0, activation=ACTS[act],
                norm_first=norm_first, batch_first=bf)
    assert repr(g) == repr(t)
    assert [(n, tuple(p.shape)) for n, p in g.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in t.named_parameters()]
    assert g.activation_relu_or_gelu == t.activation_relu_or_gelu
    x = rand(3, 5, 8)
    compare_module(g, t, x, rtol=1e-4, atol=1e-5)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(5 if bf else 3).numpy()
    kpm = np.zeros((5, 3) if not bf else (3, 5), dtype=bool)
    kpm[1, -1] = True
    compare_module(g, t, x, mask, kpm, copy=False, rtol=1e-4, atol=1e-5)
    compare_module(g, t, x[:, 0], copy=False, rtol=1e-4, atol=1e-5)  # unbatched


def test_encoder_layer_causal_hint_and_bad_activation():
    g, t = pair("TransformerEncoderLayer", 8, 4, 16, dropout=0.0)
    copy_weights(g, t)
    x = rand(4, 2, 8)
    tm = torch.nn.Transformer.generate_square_subsequent_mask(4)
    gm = gnn.Transformer.generate_square_subsequent_mask(4)
    assert_close(g(glasstorch.tensor(x), gm, is_causal=True), t(torch.tensor(x), tm,
                                                                 is_causal=True), 1e-4, 1e-5)
    with pytest.raises(RuntimeError):
        torch.nn.TransformerEncoderLayer(8, 2, activation="tanh")
    with pytest.raises(RuntimeError):
        gnn.TransformerEncoderLayer(8, 2, activation="tanh")


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer(norm_first):
    g, t = pair("TransformerDecoderLayer", 8, 2, 16, dropout=0.0, norm_first=norm_first,
                activation="gelu")
    assert repr(g) == repr(t)
    tgt, mem = rand(4, 2, 8), rand(6, 2, 8)
    compare_module(g, t, tgt, mem, rtol=1e-4, atol=1e-5)
    tmask = torch.nn.Transformer.generate_square_subsequent_mask(4).numpy()
    mkpm = np.zeros((2, 6), dtype=bool)
    mkpm[0, 4:] = True
    mmask = RNG.random((4, 6)) > 0.8
    compare_module(g, t, tgt, mem, tmask, mmask, None, mkpm, copy=False, rtol=1e-4, atol=1e-5)


def test_encoder_and_decoder_stacks():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gl = gnn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
        tl = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
        g = gnn.TransformerEncoder(gl, 2, norm=gnn.LayerNorm(8))
        t = torch.nn.TransformerEncoder(tl, 2, norm=torch.nn.LayerNorm(8))
    assert repr(g) == repr(t)
    assert g.layers[0] is not g.layers[1] and g.layers[0] is not gl
    x = rand(5, 2, 8)
    compare_module(g, t, x, rtol=1e-4, atol=1e-5)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(5).numpy()
    kpm = np.zeros((2, 5), dtype=bool)
    kpm[1, 3:] = True
    compare_module(g, t, x, mask, kpm, copy=False, rtol=1e-4, atol=1e-5)
    gd = gnn.TransformerDecoder(gnn.TransformerDecoderLayer(8, 2, 16, dropout=0.0), 2,
                                norm=gnn.LayerNorm(8))
    td = torch.nn.TransformerDecoder(torch.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0), 2,
                                     norm=torch.nn.LayerNorm(8))
    assert repr(gd) == repr(td)
    compare_module(gd, td, rand(3, 2, 8), x, mask[:3, :3], rtol=1e-4, atol=1e-5)


def test_nested_tensor_warning_matches_torch():
    for kw in ({}, {"batch_first": True, "norm_first": True}, {"batch_first": True}):
        with warnings.catch_warnings(record=True) as tw:
            warnings.simplefilter("always")
            t = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(8, 2, **kw), 1)
        with warnings.catch_warnings(record=True) as gw:
            warnings.simplefilter("always")
            g = gnn.TransformerEncoder(gnn.TransformerEncoderLayer(8, 2, **kw), 1)
        assert [str(w.message) for w in gw] == [str(w.message) for w in tw]
        assert g.use_nested_tensor == t.use_nested_tensor


@pytest.mark.parametrize("left_aligned", [True, False])
def test_encoder_inference_with_padding_mask_matches_torch(left_aligned):
    # torch's inference route (eval, no grad, batch_first) returns zeros at padded positions
    g, t = (L.nn.TransformerEncoder(L.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True),
                                    2) for L in (glasstorch, torch))
    copy_weights(g, t)
    g.eval()
    t.eval()
    x = rand(3, 5, 8)
    kpm = np.zeros((3, 5), dtype=bool)
    kpm[0, 3:] = True
    kpm[2, 1:] = True
    if not left_aligned:
        kpm[1, 0] = True
    with torch.no_grad():
        to = t(torch.tensor(x), src_key_padding_mask=torch.tensor(kpm))
    with glasstorch.no_grad():
        go = g(glasstorch.tensor(x), src_key_padding_mask=glasstorch.tensor(kpm))
    assert_close(go, to, 1e-4, 1e-5)
    # with grad enabled torch takes the reference path (no zeroing)
    assert_close(g(glasstorch.tensor(x), src_key_padding_mask=glasstorch.tensor(kpm)),
                 t(torch.tensor(x), src_key_padding_mask=torch.tensor(kpm)), 1e-4, 1e-5)


@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer(batch_first):
    g, t = pair("Transformer", 8, 2, 2, 1, 16, dropout=0.0, batch_first=batch_first)
    assert repr(g) == repr(t)
    assert [(n, tuple(p.shape)) for n, p in g.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in t.named_parameters()]
    src, tgt = (rand(2, 5, 8), rand(2, 3, 8)) if batch_first else (rand(5, 2, 8), rand(3, 2, 8))
    tmask = torch.nn.Transformer.generate_square_subsequent_mask(3).numpy()
    compare_module(g, t, src, tgt, None, tmask, rtol=1e-4, atol=1e-4)
    with pytest.raises(RuntimeError):
        g(glasstorch.tensor(src), glasstorch.tensor(rand(3, 3, 8)))
    with pytest.raises(RuntimeError):
        g(glasstorch.tensor(src), glasstorch.tensor(rand(3, 2, 6)))


def test_generate_square_subsequent_mask():
    for dt in (None, "float64"):
        gm = gnn.Transformer.generate_square_subsequent_mask(
            4, dtype=None if dt is None else getattr(glasstorch, dt))
        tm = torch.nn.Transformer.generate_square_subsequent_mask(
            4, dtype=None if dt is None else getattr(torch, dt))
        assert str(gm.dtype) == str(tm.dtype)
        np.testing.assert_array_equal(gm.numpy(), tm.numpy())


def test_transformer_init_statistics_and_dropout():
    glasstorch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = gnn.Transformer(64, 4, 1, 1, 128)
    w = g.encoder.layers[0].linear1.weight.detach().numpy()
    bound = np.sqrt(6.0 / (64 + 128))  # xavier_uniform_ on every matrix
    assert np.abs(w).max() <= bound and abs(w.std() - bound / np.sqrt(3)) < 3e-3
    ip = g.decoder.layers[0].self_attn.in_proj_weight.detach().numpy()
    b2 = np.sqrt(6.0 / (64 + 192))
    assert np.abs(ip).max() <= b2 and np.abs(ip).max() > 0.9 * b2
    assert (g.encoder.layers[0].self_attn.in_proj_bias.detach().numpy() == 0).all()
    src, tgt = glasstorch.tensor(rand(5, 2, 64)), glasstorch.tensor(rand(3, 2, 64))
    g.train()
    glasstorch.manual_seed(1)
    a = g(src, tgt)
    glasstorch.manual_seed(2)
    b = g(src, tgt)
    assert not np.allclose(a.detach().numpy(), b.detach().numpy())
    g.eval()
    np.testing.assert_array_equal(g(src, tgt).detach().numpy(), g(src, tgt).detach().numpy())
    assert GF.relu is gnn.TransformerEncoderLayer(8, 2).activation


def _mismatched_mask_warning_file(lib):
    """For each call mixing a float attn mask with a bool padding mask: the file the warning
    points at, and the file defining the forward that torch's warning points at."""
    nn = lib.nn
    q = lib.zeros(3, 2, 4)
    float_mask, pad = lib.zeros(3, 3), lib.zeros(2, 3, dtype=lib.bool)
    mha = nn.MultiheadAttention(4, 1)
    enc_layer = build(lib, "TransformerEncoderLayer", 4, 1, 8)
    enc = build(lib, "TransformerEncoder", enc_layer, 1, enable_nested_tensor=False)
    calls = [(nn.MultiheadAttention, lambda: mha(q, q, q, key_padding_mask=pad,
                                                   attn_mask=float_mask)),
             (nn.TransformerEncoder, lambda: enc(q, mask=float_mask, src_key_padding_mask=pad)),
             (nn.TransformerEncoderLayer,
              lambda: enc_layer(q, src_mask=float_mask, src_key_padding_mask=pad))]
    found = []
    for cls, call in calls:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call()
        (w,) = [w for w in caught if "Support for mismatched" in str(w.message)]
        found.append((w.filename, inspect.getsourcefile(cls.forward)))
    return found


def test_mismatched_mask_warning_points_at_the_forward_that_got_the_masks():
    # torch's warning names the module forward that received the masks, not Module.__call__
    for lib in (torch, glasstorch):
        for where, expected in _mismatched_mask_warning_file(lib):
            assert where == expected, lib.__name__
