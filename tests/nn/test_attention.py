"""F.scaled_dot_product_attention, F.multi_head_attention_forward and MultiheadAttention
against torch (weights copied across)."""

import numpy as np
import pytest

import glasstorch
import glasstorch.nn as gnn
import glasstorch.nn.functional as GF
from tests.nn.util import assert_close, compare_module, copy_weights

torch = pytest.importorskip("torch")
TF = torch.nn.functional

RNG = np.random.default_rng(7)


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


# ----------------------------------------------------------------------------- SDPA

@pytest.mark.parametrize("kw", [{}, {"is_causal": True}, {"scale": 0.1}, {"mask": "bool"},
                                {"mask": "float"}, {"mask": "float_grad"}, {"gqa": True},
                                {"mask": "bool", "is_causal": True}])
def test_sdpa_grad_fn_and_gradients(kw):
    kw = dict(kw)
    mask = kw.pop("mask", None)
    gqa = kw.pop("gqa", False)
    hk = 2 if gqa else 4
    arrs = [rand(2, 4, 5, 8), rand(2, hk, 6, 8), rand(2, hk, 6, 8)]
    tin = [torch.tensor(a, requires_grad=True) for a in arrs]
    gin = [glasstorch.tensor(a, requires_grad=True) for a in arrs]
    tm = gm = None
    if mask == "bool":
        m = RNG.random((2, 1, 5, 6)) > 0.3
        tm, gm = torch.tensor(m), glasstorch.tensor(m)
    elif mask in ("float", "float_grad"):
        m = rand(5, 6)
        grad = mask == "float_grad"  # torch then takes the math path; the mask gets a grad
        tm = torch.tensor(m, requires_grad=grad)
        gm = glasstorch.tensor(m, requires_grad=grad)
        if grad:
            tin.append(tm)
            gin.append(gm)
    to = TF.scaled_dot_product_attention(*tin[:3], attn_mask=tm, enable_gqa=gqa, **kw)
    go = GF.scaled_dot_product_attention(*gin[:3], attn_mask=gm, enable_gqa=gqa, **kw)
    assert type(go.grad_fn).__name__ == type(to.grad_fn).__name__
    assert_close(go, to)
    w = rand(*to.shape)
    to.backward(torch.tensor(w))
    go.backward(glasstorch.tensor(w))
    for a, b in zip(gin, tin):
        assert_close(a.grad, b.grad, 1e-5, 1e-5)


def test_sdpa_gradcheck_and_double_backward():
    q = glasstorch.tensor(rand(1, 1, 3, 3, dtype=np.float64), requires_grad=True)
    k = glasstorch.tensor(rand(1, 1, 4, 3, dtype=np.float64), requires_grad=True)
    v = glasstorch.tensor(rand(1, 1, 4, 3, dtype=np.float64), requires_grad=True)
    m = glasstorch.tensor(RNG.random((3, 4)) > 0.3)
    f = lambda a, b, c: GF.scaled_dot_product_attention(a, b, c, attn_mask=m)  # noqa: E731
    assert f(q, k, v).grad_fn.name() == "ScaledDotProductFlashAttentionForCpuBackward0"
    assert glasstorch.autograd.gradcheck(f, (q, k, v))
    # the fused node's backward is built from recorded ops: second derivatives too
    assert glasstorch.autograd.gradgradcheck(f, (q, k, v))


def test_sdpa_dropout_statistics_and_seed():
    q, k = glasstorch.tensor(rand(4, 8, 16, 8)), glasstorch.tensor(rand(4, 8, 32, 8))
    v = glasstorch.ones(4, 8, 32, 8)
    glasstorch.manual_seed(3)
    a = GF.scaled_dot_product_attention(q, k, v, dropout_p=0.3)
    glasstorch.manual_seed(3)
    b = GF.scaled_dot_product_attention(q, k, v, dropout_p=0.3)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    # each output is sum(kept probs) / 0.7: expectation 1
    assert abs(a.numpy().mean() - 1.0) < 0.03
    assert a.numpy().std() > 0.05
    c = GF.scaled_dot_product_attention(q, k, v, dropout_p=0.0)
    np.testing.assert_allclose(c.numpy(), 1.0, rtol=1e-5)
    # dropout takes the math path: grad_fn as torch's
    qq = glasstorch.tensor(rand(1, 1, 2, 4), requires_grad=True)
    tq = torch.tensor(qq.detach().numpy(), requires_grad=True)
    kv = rand(1, 1, 3, 4)
    go = GF.scaled_dot_product_attention(qq, glasstorch.tensor(kv), glasstorch.tensor(kv),
                                         dropout_p=0.5)
    to = TF.scaled_dot_product_attention(tq, torch.tensor(kv), torch.tensor(kv), dropout_p=0.5)
    assert type(go.grad_fn).__name__ == type(to.grad_fn).__name__


def test_sdpa_half_precision():
    arrs = [rand(1, 2, 3, 8), rand(1, 2, 5, 8), rand(1, 2, 5, 8)]
    for tdt, gdt in ((torch.float16, glasstorch.float16), (torch.bfloat16, glasstorch.bfloat16)):
        tin = [torch.tensor(a).to(tdt).requires_grad_() for a in arrs]
        gin = [glasstorch.tensor(a).to(gdt).requires_grad_() for a in arrs]
        to = TF.scaled_dot_product_attention(*tin, is_causal=True)
        go = GF.scaled_dot_product_attention(*gin, is_causal=True)
        assert go.dtype == gdt
        assert_close(go, to, 2e-2, 2e-2)
        to.float().sum().backward()
        go.float().sum().backward()
        for a, b in zip(gin, tin):
            assert a.grad.dtype == gdt
            assert_close(a.grad, b.grad, 5e-2, 5e-2)


# ----------------------------------------------------------------------------- MHA

def mha_pair(*args, **kwargs):
    return gnn.MultiheadAttention(*args, **kwargs), torch.nn.MultiheadAttention(*args, **kwargs)


@pytest.mark.parametrize("kw", [{}, {"add_bias_kv": True}, {"add_zero_attn": True},
                                {"add_bias_kv": True, "add_zero_attn": True},
                                {"kdim": 3, "vdim": 5}, {"bias": False},
                                {"batch_first": True}, {"kdim": 6, "batch_first": True}])
def test_mha_configs(kw):
    g, t = mha_pair(8, 2, **kw)
    assert repr(g) == repr(t)
    assert [(n, tuple(p.shape)) for n, p in g.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in t.named_parameters()]
    bf = kw.get("batch_first", False)
    lq = (2, 4) if bf else (4, 2)
    lk = (2, 5) if bf else (5, 2)
    q = rand(*lq, 8)
    k, v = rand(*lk, kw.get("kdim", 8)), rand(*lk, kw.get("vdim", 8))
    compare_module(g, t, q, k, v)
    # need_weights=False (the SDPA route) and per-head weights
    compare_module(g, t, q, k, v, None, False, copy=False)
    compare_module(g, t, q, k, v, None, True, None, False, copy=False)


@pytest.mark.parametrize("batch_first", [False, True])
def test_mha_masks(batch_first):
    g, t = mha_pair(8, 4, batch_first=batch_first)
    copy_weights(g, t)
    n, L, S = 3, 4, 5
    shape_q = (n, L, 8) if batch_first else (L, n, 8)
    shape_k = (n, S, 8) if batch_first else (S, n, 8)
    q, k, v = rand(*shape_q), rand(*shape_k), rand(*shape_k)
    kpm = np.zeros((n, S), dtype=bool)
    kpm[0, 3:] = True
    kpm[2, 1:] = True
    am = RNG.random((L, S)) > 0.7
    am[:, 0] = False
    am3 = np.broadcast_to(am, (n * 4, L, S)).copy()
    for need in (True, False):
        compare_module(g, t, q, k, v, kpm, need, copy=False)
        compare_module(g, t, q, k, v, None, need, am, copy=False)
        compare_module(g, t, q, k, v, kpm, need, am, copy=False)
        compare_module(g, t, q, k, v, kpm, need, am3, copy=False)
        # float masks (not differentiated here)
        fam = np.where(am, -np.inf, rand(L, S)).astype(np.float32)
        fkpm = np.where(kpm, -np.inf, 0).astype(np.float32)
        compare_module(g, t, q, k, v, fkpm, need, fam, copy=False, grad_inputs=False)


def test_mha_self_attention_causal_and_unbatched():
    g, t = mha_pair(6, 3)
    copy_weights(g, t)
    x = rand(5, 2, 6)
    tx, gx = torch.tensor(x, requires_grad=True), glasstorch.tensor(x, requires_grad=True)
    tm = torch.nn.Transformer.generate_square_subsequent_mask(5)
    gm = gnn.Transformer.generate_square_subsequent_mask(5)
    for need in (True, False):
        to = t(tx, tx, tx, attn_mask=tm, is_causal=True, need_weights=need)[0]
        go = g(gx, gx, gx, attn_mask=gm, is_causal=True, need_weights=need)[0]
        assert_close(go, to)
        to.sum().backward()
        go.sum().backward()
        assert_close(gx.grad, tx.grad, 1e-5, 1e-5)
    # unbatched (L, E) input, 1-D key padding mask
    kpm = np.array([False, False, True, False, True])
    compare_module(g, t, x[:, 0], x[:, 1], x[:, 1], kpm, copy=False)
    compare_module(g, t, x[:, 0], x[:, 1], x[:, 1], kpm, False, copy=False)
    with pytest.raises(RuntimeError):
        g(gx, gx, gx, is_causal=True)


def test_mha_init_statistics():
    glasstorch.manual_seed(0)
    g = gnn.MultiheadAttention(256, 4, add_bias_kv=True)
    w = g.in_proj_weight.detach().numpy()
    bound = np.sqrt(6.0 / (256 + 3 * 256))
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert abs(w.std() - bound / np.sqrt(3)) < 2e-3
    assert (g.in_proj_bias.detach().numpy() == 0).all()
    assert (g.out_proj.bias.detach().numpy() == 0).all()
    ob = g.out_proj.weight.detach().numpy()
    assert np.abs(ob).max() <= 1 / np.sqrt(256)
    assert g.bias_k.shape == (1, 1, 256) and g.bias_k.detach().numpy().std() > 0
    assert type(g.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
    assert isinstance(g.out_proj, gnn.Linear)
    s = gnn.MultiheadAttention(8, 2, kdim=4)
    assert s.in_proj_weight is None and s.q_proj_weight.shape == (8, 8)
    assert s.k_proj_weight.shape == (8, 4) and not s._qkv_same_embed_dim


def test_mha_dropout_train_eval():
    g = gnn.MultiheadAttention(8, 2, dropout=0.5)
    x = glasstorch.tensor(rand(4, 2, 8))
    glasstorch.manual_seed(1)
    a = g(x, x, x)[0]
    glasstorch.manual_seed(2)
    b = g(x, x, x)[0]
    assert not np.allclose(a.detach().numpy(), b.detach().numpy())
    g.eval()
    t = torch.nn.MultiheadAttention(8, 2, dropout=0.5).eval()
    copy_weights(g, t)
    tx = torch.tensor(x.numpy())
    for need in (True, False):
        assert_close(g(x, x, x, need_weights=need)[0], t(tx, tx, tx, need_weights=need)[0])


def test_mha_errors():
    with pytest.raises(AssertionError):
        gnn.MultiheadAttention(10, 3)
    with pytest.raises(ValueError):
        gnn.MultiheadAttention(0, 3)
    g, t = mha_pair(8, 2)
    x = rand(4, 2, 8)
    bad = np.zeros((3, 3), dtype=bool)
    with pytest.raises(RuntimeError):
        t(*(torch.tensor(x),) * 3, attn_mask=torch.tensor(bad))
    with pytest.raises(RuntimeError):
        g(*(glasstorch.tensor(x),) * 3, attn_mask=glasstorch.tensor(bad))


def test_functional_multi_head_attention_forward():
    e, h = 6, 2
    q, k = rand(3, 2, e), rand(4, 2, e)
    w, b = rand(3 * e, e), rand(3 * e)
    ow, ob = rand(e, e), rand(e)
    bk, bv = rand(1, 1, e), rand(1, 1, e)
    args = lambda L, *a: [L.tensor(x) if isinstance(x, np.ndarray) else x  # noqa: E731
                          for x in a]
    for zero, kv in ((False, None), (True, (bk, bv))):
        bias_k, bias_v = kv if kv else (None, None)
        ta = args(torch, q, k, k, e, h, w, b, bias_k, bias_v, zero, 0.0, ow, ob)
        ga = args(glasstorch, q, k, k, e, h, w, b, bias_k, bias_v, zero, 0.0, ow, ob)
        to, tw = TF.multi_head_attention_forward(*ta, training=False)
        go, gw = GF.multi_head_attention_forward(*ga, training=False)
        assert_close(go, to)
        assert_close(gw, tw)
