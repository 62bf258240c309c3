"""glasstorch.nn.attention (SDPBackend, sdpa_kernel and SDPA's backend choice) and
glasstorch.nn.attention.flex_attention against torch: block masks field by field, outputs
of causal / ALiBi / sliding-window / document / GQA attention, log-sum-exp, errors; and
gradients (torch's CPU flex_attention has no backward: they are checked against torch's
SDPA with the equivalent additive mask, and by gradcheck)."""

import warnings

import numpy as np
import pytest

import glasstorch
import glasstorch.nn.attention.flex_attention as gf
import glasstorch.nn.functional as GF
from glasstorch.nn.attention import SDPBackend, sdpa_kernel

torch = pytest.importorskip("torch")
tf = pytest.importorskip("torch.nn.attention.flex_attention")
TF = torch.nn.functional
TB = torch.nn.attention.SDPBackend

RNG = np.random.default_rng(11)


@pytest.fixture(autouse=True)
def _eager_torch_flex(monkeypatch):
    # torch's eager reference path: the same math as its compiled CPU kernel, without the
    # compilation time
    monkeypatch.setattr(tf, "_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG", True)
    monkeypatch.setattr(gf, "_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG", True)


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


# ------------------------------------------------------------------------ SDPBackend

def test_sdp_backend_members():
    assert [(m.name, int(m)) for m in SDPBackend.__members__.values()] == [
        (m.name, int(m)) for m in TB.__members__.values()]
    assert repr(SDPBackend.MATH) == repr(TB.MATH) and str(SDPBackend.MATH) == str(TB.MATH)
    assert SDPBackend.MATH != 0 and SDPBackend.MATH.value == 0
    assert SDPBackend.__module__ == "glasstorch.nn.attention"
    assert not glasstorch.nn.attention.WARN_FOR_UNFUSED_KERNELS


def _sdpa_outcome(lib, backends, shapes, **kw):
    T, F, B = lib
    q, k, v = (T.from_numpy(a) for a in shapes)
    q.requires_grad_(True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with sdpa_kernel_of(lib)([getattr(B, b) for b in backends]):
                out = F.scaled_dot_product_attention(q, k, v, **kw)
            result = (out.grad_fn.name(), tuple(out.shape))
        except RuntimeError as e:
            result = ("RuntimeError", str(e))
    # torch appends "(Triggered internally at <file>)" to its C++ warnings
    texts = [str(w.message).split(" (Triggered internally")[0] for w in caught]
    return result, texts


def sdpa_kernel_of(lib):
    return sdpa_kernel if lib[0] is glasstorch else torch.nn.attention.sdpa_kernel


LIBS = {"torch": (torch, TF, TB), "glasstorch": (glasstorch, GF, SDPBackend)}


@pytest.mark.parametrize("backends", [["MATH"], ["FLASH_ATTENTION"], ["EFFICIENT_ATTENTION"],
                                      ["CUDNN_ATTENTION"], ["OVERRIDEABLE"], [],
                                      ["EFFICIENT_ATTENTION", "MATH"],
                                      ["FLASH_ATTENTION", "CUDNN_ATTENTION"]])
@pytest.mark.parametrize("case", ["4d", "3d", "dropout", "value_dim", "batch", "heads",
                                  "mask3d", "mask4d", "stride", "float_mask_grad"])
def test_sdpa_kernel_choice_matches_torch(backends, case):
    q, k, v = rand(2, 3, 4, 8), rand(2, 3, 5, 8), rand(2, 3, 5, 8)
    kw = {}
    if case == "3d":
        q, k, v = q[0], k[0], v[0]
    elif case == "dropout":
        kw["dropout_p"] = 0.3
    elif case == "value_dim":
        v = rand(2, 3, 5, 6)
    elif case == "batch":
        k, v = k[:1], v[:1]
    elif case == "heads":
        k, v = k[:, :1], v[:, :1]
    elif case == "stride":
        v = np.ascontiguousarray(v.swapaxes(-1, -2)).swapaxes(-1, -2)
    results = {}
    for name, lib in LIBS.items():
        T = lib[0]
        if case == "mask3d":
            kw = {"attn_mask": T.ones(3, 4, 5, dtype=T.bool)}
        elif case == "mask4d":
            kw = {"attn_mask": T.ones(2, 1, 4, 5, dtype=T.bool)}
        elif case == "float_mask_grad":
            kw = {"attn_mask": T.zeros(4, 5, requires_grad=True)}
        results[name] = _sdpa_outcome(lib, backends, (q, k, v), **kw)
    assert results["glasstorch"] == results["torch"]


def test_sdpa_kernel_restores_and_validates():
    q = glasstorch.randn(1, 2, 3, 4, requires_grad=True)
    with sdpa_kernel(SDPBackend.MATH):
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH], set_priority=True) as c:
            assert c == {}
            assert GF.scaled_dot_product_attention(q, q, q).grad_fn.name() == \
                "ScaledDotProductFlashAttentionForCpuBackward0"
        assert GF.scaled_dot_product_attention(q, q, q).grad_fn.name() != \
            "ScaledDotProductFlashAttentionForCpuBackward0"
    assert GF.scaled_dot_product_attention(q, q, q).grad_fn.name() == \
        "ScaledDotProductFlashAttentionForCpuBackward0"
    for bad in ("math", (SDPBackend.MATH,)):
        with pytest.raises(AssertionError, match="Backend must be an instance of SDPBackend"):
            with sdpa_kernel(bad):
                pass
    # the math path gives the same values as the fused one
    x = glasstorch.randn(2, 2, 5, 4)
    with sdpa_kernel(SDPBackend.MATH):
        a = GF.scaled_dot_product_attention(x, x, x, is_causal=True)
    b = GF.scaled_dot_product_attention(x, x, x, is_causal=True)
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------------ block masks

def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def sliding(b, h, q_idx, kv_idx):
    return (q_idx - kv_idx).abs() <= 3


def _block_masks(F):
    T = torch if F is tf else glasstorch
    return {
        "causal": F.create_block_mask(causal, 2, 3, 16, 16, device="cpu", BLOCK_SIZE=4),
        "shared_uneven": F.create_block_mask(causal, None, None, 10, 13, device="cpu",
                                             BLOCK_SIZE=(4, 8)),
        "no_full_blocks": F.create_block_mask(causal, 1, 1, 16, 16, BLOCK_SIZE=4,
                                              separate_full_blocks=False),
        "and_or": F.create_block_mask(F.or_masks(F.and_masks(causal, sliding), sliding), 1, 2,
                                      20, 20, BLOCK_SIZE=8),
        "sliced": F.create_block_mask(causal, 2, 3, 16, 16, BLOCK_SIZE=4)[1, -1],
        "adjusted": F.create_block_mask(causal, None, None, 10, 13, BLOCK_SIZE=(4, 8))
                     ._adjust(6, 9),
        "from_kv_blocks": F.BlockMask.from_kv_blocks(
            T.tensor([[[1, 2]]], dtype=T.int32), T.tensor([[[[0, 1], [0, 1]]]], dtype=T.int32),
            BLOCK_SIZE=2),
    }


FIELDS = ["kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices",
          "q_num_blocks", "q_indices", "full_q_num_blocks", "full_q_indices"]


@pytest.mark.parametrize("name", sorted(_block_masks(gf)))
def test_block_mask_matches_torch(name):
    mt, mg = _block_masks(tf)[name], _block_masks(gf)[name]
    for field in FIELDS:
        a, b = getattr(mt, field), getattr(mg, field)
        if a is None:
            assert b is None, field
        else:
            assert str(a.dtype) == str(b.dtype), field
            np.testing.assert_array_equal(b.numpy(), a.numpy(), err_msg=field)
    assert mg.shape == mt.shape and mg.BLOCK_SIZE == mt.BLOCK_SIZE
    assert mg.sparsity() == pytest.approx(mt.sparsity()) and mg.numel() == mt.numel()
    assert repr(mg) == repr(mt)
    assert str(mg) == str(mt)
    assert mg.to_string(grid_size=2, limit=1) == mt.to_string(grid_size=2, limit=1)
    np.testing.assert_array_equal(mg.to_dense().numpy(), mt.to_dense().numpy())
    assert len(mg.as_tuple()) == len(mt.as_tuple())
    assert mg.to("cpu").shape == mt.shape


def test_create_mask_matches_torch():
    def score_causal(T):
        return lambda s, b, h, q, kv: T.where(q >= kv, s, -float("inf"))

    for mod_t, mod_g, sizes in [(causal, causal, (2, 1, 3, 4)),
                                (tf.noop_mask, gf.noop_mask, (2, 3, 3, 4)),
                                (score_causal(torch), score_causal(glasstorch), (1, 2, 4, 4)),
                                (sliding, sliding, (None, None, 6, 9))]:
        a, b = tf.create_mask(mod_t, *sizes), gf.create_mask(mod_g, *sizes)
        assert str(b.dtype) == str(a.dtype) and tuple(b.shape) == tuple(a.shape)
        np.testing.assert_array_equal(b.numpy(), a.numpy())


def test_mod_type_errors_match_torch():
    for F in (tf, gf):
        with pytest.raises(AssertionError, match="create-block_mask requires a mask_mod"):
            F.create_block_mask(lambda s, b, h, q, k: s, 1, 1, 4, 4)
        with pytest.raises(AssertionError, match="Expected 4 or 5 positional args, got 2"):
            F.create_block_mask(lambda b, h: b, 1, 1, 4, 4)
        with pytest.raises(RuntimeError, match="All inputs should be callable mask_mods"):
            F.and_masks(causal, 3)


# ------------------------------------------------------------------------ flex_attention

def _mods(T, F, name):
    if name == "plain":
        return {}
    if name == "causal":
        return {"block_mask": F.create_block_mask(causal, 2, 4, 16, 16, BLOCK_SIZE=4)}
    if name == "alibi":
        slopes = T.tensor([0.5, 0.25, 0.125, 0.0625])
        return {"score_mod": lambda s, b, h, q, kv: s + slopes[h] * (kv - q)}
    if name == "sliding_causal":
        return {"block_mask": F.create_block_mask(F.and_masks(causal, sliding), 1, 1, 16, 16,
                                                  BLOCK_SIZE=8)}
    if name == "document":
        doc = T.tensor([0, 0, 0, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 4, 4])
        mask = F.create_block_mask(lambda b, h, q, kv: (doc[q] == doc[kv]) & (q >= kv), None,
                                   None, 16, 16, BLOCK_SIZE=4)
        return {"block_mask": mask, "score_mod": lambda s, b, h, q, kv: T.tanh(s / 4) * 4}
    if name == "rows_masked":
        return {"block_mask": F.create_block_mask(lambda b, h, q, kv: (q < 8) & (kv >= 0), 1,
                                                  1, 16, 16, BLOCK_SIZE=4)}
    if name == "bias_table":
        table = T.from_numpy((np.arange(2 * 4 * 16 * 16, dtype=np.float32) % 7 / 7)
                             .reshape(2, 4, 16, 16))
        return {"score_mod": lambda s, b, h, q, kv: s + table[b, h, q, kv]}
    raise KeyError(name)


def _flex_both(q, k, v, name, **kw):
    out = []
    for T, F in ((torch, tf), (glasstorch, gf)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out.append(F.flex_attention(T.from_numpy(q), T.from_numpy(k), T.from_numpy(v),
                                        **_mods(T, F, name), **kw))
    return out


def _assert_same(a, b, tol):
    assert str(b.dtype) == str(a.dtype) and tuple(b.shape) == tuple(a.shape)
    np.testing.assert_allclose(b.detach().numpy().astype(np.float64),
                               a.detach().numpy().astype(np.float64), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["plain", "causal", "alibi", "sliding_causal", "document",
                                  "rows_masked", "bias_table"])
def test_flex_attention_matches_torch(name):
    q, k, v = rand(2, 4, 16, 8), rand(2, 4, 16, 8), rand(2, 4, 16, 8)
    a, b = _flex_both(q, k, v, name)
    _assert_same(a, b, 1e-6)


def test_flex_attention_gqa_scale_lse_and_float64():
    q, k, v = rand(2, 4, 16, 8), rand(2, 2, 16, 8), rand(2, 2, 16, 6)
    (a, lse_a), (b, lse_b) = _flex_both(q, k, v, "causal", enable_gqa=True, scale=0.3,
                                        return_lse=True)
    _assert_same(a, b, 1e-6)
    _assert_same(lse_a, lse_b, 1e-6)
    q64, k64, v64 = (x.astype(np.float64) for x in (q[:, :2], k, v))
    a, b = _flex_both(q64, k64, v64, "alibi")
    _assert_same(a, b, 1e-12)
    _, out_aux = gf.flex_attention(glasstorch.from_numpy(q), glasstorch.from_numpy(k),
                                   glasstorch.from_numpy(v), enable_gqa=True,
                                   return_aux=gf.AuxRequest(lse=True))
    _, lse_t = tf.flex_attention(torch.from_numpy(q), torch.from_numpy(k),
                                 torch.from_numpy(v), enable_gqa=True,
                                 return_aux=tf.AuxRequest(lse=True))
    _assert_same(lse_t.lse, out_aux.lse, 1e-6)
    assert out_aux.max_scores is None


def test_flex_attention_masked_rows_give_zeros_and_inf_lse():
    q, k, v = rand(1, 1, 16, 8), rand(1, 1, 16, 8), rand(1, 1, 16, 8)
    mask = gf.create_block_mask(lambda b, h, qi, ki: qi < 8, 1, 1, 16, 16, BLOCK_SIZE=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out, lse = gf.flex_attention(*(glasstorch.from_numpy(x) for x in (q, k, v)),
                                     block_mask=mask, return_lse=True)
    assert bool((out[0, 0, 8:] == 0).all()) and bool(glasstorch.isneginf(lse[0, 0, 8:]).all())


def test_flex_attention_gradients_against_sdpa():
    q, k, v = (RNG.standard_normal((2, 4, 6, 5)) for _ in range(3))
    k, v = k[:, :2], v[:, :2]
    slopes = np.array([0.5, 0.25, 0.1, 0.05])
    dist = np.arange(6)[None, :] - np.arange(6)[:, None]
    bias = np.where(dist <= 0, slopes[None, :, None, None] * dist, -np.inf)
    tq, tk, tv = (torch.tensor(a, requires_grad=True) for a in (q, k, v))
    ref = TF.scaled_dot_product_attention(tq, tk.repeat_interleave(2, 1),
                                          tv.repeat_interleave(2, 1),
                                          attn_mask=torch.tensor(bias))
    w = RNG.standard_normal(tuple(ref.shape))
    (ref * torch.tensor(w)).sum().backward()
    gq, gk, gv = (glasstorch.tensor(a, requires_grad=True) for a in (q, k, v))
    sl = glasstorch.tensor(slopes)
    mask = gf.create_block_mask(causal, 2, 4, 6, 6, BLOCK_SIZE=2)
    out = gf.flex_attention(gq, gk, gv, score_mod=lambda s, b, h, qi, ki: s + sl[h] * (ki - qi),
                            block_mask=mask, enable_gqa=True)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), atol=1e-12)
    (out * glasstorch.tensor(w)).sum().backward()
    for mine, theirs in ((gq, tq), (gk, tk), (gv, tv)):
        np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), atol=1e-12)


def test_flex_attention_gradcheck_with_learned_bias():
    q, k, v = (glasstorch.tensor(RNG.standard_normal((1, 2, 5, 3)), requires_grad=True)
               for _ in range(3))
    bias = glasstorch.tensor(RNG.standard_normal(2) * 0.3, requires_grad=True)
    mask = gf.create_block_mask(causal, 1, 2, 5, 5, BLOCK_SIZE=2)

    def f(q, k, v, bias):
        return gf.flex_attention(q, k, v, block_mask=mask,
                                 score_mod=lambda s, b, h, qi, ki: s + bias[h] * (qi - ki))

    assert glasstorch.autograd.gradcheck(f, (q, k, v, bias))


def _flex_error(T, F, case):
    r = T.randn
    mask = F.create_block_mask(causal, 1, 1, 16, 16, BLOCK_SIZE=4)
    calls = {
        "3d": lambda: F.flex_attention(r(2, 4, 8), r(2, 4, 8), r(2, 4, 8)),
        "1d": lambda: F.flex_attention(r(8), r(2, 4, 8), r(2, 4, 8)),
        "embed": lambda: F.flex_attention(r(1, 2, 4, 8), r(1, 2, 4, 6), r(1, 2, 4, 8)),
        "heads": lambda: F.flex_attention(r(1, 4, 4, 8), r(1, 2, 4, 8), r(1, 2, 4, 8)),
        "gqa": lambda: F.flex_attention(r(1, 4, 4, 8), r(1, 3, 4, 8), r(1, 3, 4, 8),
                                        enable_gqa=True),
        "batch": lambda: F.flex_attention(r(2, 2, 4, 8), r(1, 2, 4, 8), r(1, 2, 4, 8)),
        "batch_mask": lambda: F.flex_attention(r(2, 1, 16, 8), r(1, 1, 16, 8), r(1, 1, 16, 8),
                                               block_mask=mask),
        "mask_too_small": lambda: F.flex_attention(r(1, 1, 20, 8), r(1, 1, 20, 8),
                                                   r(1, 1, 20, 8), block_mask=mask),
        "mask_too_large": lambda: F.flex_attention(r(1, 1, 12, 8), r(1, 1, 12, 8),
                                                   r(1, 1, 12, 8), block_mask=mask),
        "sliced": lambda: F.flex_attention(r(1, 1, 16, 8), r(1, 1, 16, 8), r(1, 1, 16, 8),
                                           block_mask=mask[0]),
        "lse_and_aux": lambda: F.flex_attention(r(1, 1, 4, 8), r(1, 1, 4, 8), r(1, 1, 4, 8),
                                                return_lse=True,
                                                return_aux=F.AuxRequest(lse=True)),
        "backend": lambda: F.flex_attention(r(1, 1, 4, 8), r(1, 1, 4, 8), r(1, 1, 4, 8),
                                            kernel_options={"BACKEND": "X"}),
        "backend_force": lambda: F.flex_attention(
            r(1, 1, 4, 8), r(1, 1, 4, 8), r(1, 1, 4, 8),
            kernel_options={"BACKEND": "AUTO", "FORCE_USE_FLEX_ATTENTION": True}),
    }
    try:
        calls[case]()
    except Exception as e:
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("case", ["3d", "1d", "embed", "heads", "gqa", "batch", "batch_mask",
                                  "mask_too_small", "mask_too_large", "sliced", "lse_and_aux",
                                  "backend", "backend_force"])
def test_flex_attention_errors_match_torch(case):
    expected = _flex_error(torch, tf, case)
    assert expected is not None
    assert _flex_error(glasstorch, gf, case) == expected


def test_flex_attention_warns_once(monkeypatch):
    monkeypatch.setattr(gf, "_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG", False)
    monkeypatch.setattr(gf, "_WARNINGS_SHOWN", set())
    x = glasstorch.randn(1, 1, 4, 2)
    with pytest.warns(UserWarning, match="flex_attention called without torch.compile"):
        gf.flex_attention(x, x, x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gf.flex_attention(x, x, x)
    with pytest.warns(FutureWarning, match="return_lse is deprecated"):
        gf.flex_attention(x, x, x, return_lse=True)
