"""Scaled dot-product attention (the recurrent kernels are in ``rnn.py``).

Attention is batched matmuls over whole (batch, head) stacks.

Like torch on the CPU, 4-D inputs without dropout and without broadcast batch dims run a
fused kernel (grad_fn ``ScaledDotProductFlashAttentionForCpuBackward0``, whose backward
recomputes the probabilities from the saved log-sum-exp); everything else takes torch's
"math" path, built from recorded primitives (matmul, safe softmax, dropout), so its
graph has torch's nodes.
"""

from __future__ import annotations

import math

from .._core import dtype as _dt
from ._common import Node, Tensor, broadcast_error, needs_grad, record, wrap, xp

# torch has no ``torch.scaled_dot_product_attention``: exported from nn.functional only
__all__ = []

_NEG_INF = float("-inf")
_F32 = _dt.float32

# Set by glasstorch.nn.attention.sdpa_kernel while it disables the flash or the math kernel:
# ``_backend_choice(fused, query, key, value, attn_mask, dropout_p, enable_gqa, mask_grad)``
# says whether to run the fused kernel, or raises when no enabled kernel can. None: both on.
_backend_choice = None


def _compute_np(dt):
    # float16/bfloat16 attention is accumulated in float32, rounded once at the end
    return xp.dtype(xp.float32) if dt is _dt.float16 or dt is _dt.bfloat16 else dt.np


def _check(query, key, value, attn_mask, dropout_p, enable_gqa):
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor):
            raise TypeError(f"scaled_dot_product_attention(): argument '{name}' must be "
                            f"Tensor, not {type(t).__name__}")
    dq, dk, dv = query.dtype, key.dtype, value.dtype
    if not (dq is dk is dv):
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got "
                           f"query.dtype: {_name(dq)} key.dtype: {_name(dk)} and value.dtype: "
                           f"{_name(dv)} instead.")
    if not dq.is_floating_point:
        raise RuntimeError(f"expected scalar type Float but found {_short(dq)}")
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError(f"scaled_dot_product_attention: expected query, key and value to "
                           f"be at least 2-D, got {query.dim()}-D, {key.dim()}-D and "
                           f"{value.dim()}-D")
    if attn_mask is not None:
        md = attn_mask.dtype
        if md is not _dt.bool_ and md is not dq:
            raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query "
                               f"dtype, but got attn_mask.dtype: {_name(md)} and  query.dtype: "
                               f"{_name(dq)} instead.")
    if not 0.0 <= dropout_p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    if query.shape[-1] != key.shape[-1]:
        n = math.prod(query.shape[:-2])
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{n}, {query.shape[-1]}] but got: [{n}, {key.shape[-1]}].")
    groups = 1
    if enable_gqa and query.dim() >= 3 and key.dim() >= 3:
        hq, hk, hv = query.shape[-3], key.shape[-3], value.shape[-3]
        if hk != hv or hq % hk:
            raise RuntimeError(f"Number of heads in key and value must divide the number of "
                               f"heads in query, got query heads {hq}, key heads {hk} and "
                               f"value heads {hv}")
        groups = hq // hk
    qb = tuple(query.shape[:-2])
    if groups > 1:
        qb = qb[:-1] + (qb[-1] // groups,)
    for other in (key, value):
        ob = tuple(other.shape[:-2])
        try:
            xp.broadcast_shapes(qb, ob)
        except ValueError:
            raise broadcast_error(xp.broadcast_to(0, qb), xp.broadcast_to(0, ob)) from None
    return groups


def _name(dt):
    s = str(dt)[6:]
    return {"int64": "long int", "int32": "int", "float32": "float", "float64": "double",
            "float16": "c10::Half", "bfloat16": "c10::BFloat16", "int16": "short int",
            "int8": "signed char", "uint8": "unsigned char", "bool": "bool"}.get(s, s)


def _short(dt):
    from ._common import _SHORT
    return _SHORT[dt]


def _bias(attn_mask, is_causal, L, S, cnp):
    """The additive mask (``-inf`` where masked) as an array in the compute dtype, or None."""
    bias = None
    if attn_mask is not None:
        m = attn_mask._data
        if m.dtype == xp.bool_:
            bias = xp.where(m, cnp.type(0), cnp.type(_NEG_INF))
        else:
            bias = m.astype(cnp)
    if is_causal:
        causal = xp.where(xp.tri(L, S, dtype=bool), cnp.type(0), cnp.type(_NEG_INF))
        bias = causal if bias is None else bias + causal
    return bias


def _softmax_rows(s):
    """Softmax over the last axis; rows masked entirely give zeros (torch's safe softmax).
    Returns the probabilities and the log-sum-exp (``+inf`` on masked rows)."""
    m = s.max(axis=-1, keepdims=True)
    full = m == _NEG_INF
    if full.any():
        m = xp.where(full, 0, m)
    p = xp.exp(s - m)
    total = p.sum(axis=-1, keepdims=True)
    empty = total == 0
    if empty.any():
        total = xp.where(empty, 1, total)
    p /= total
    with xp.errstate(divide="ignore"):
        lse = xp.log(total) + m
    if empty.any():
        lse = xp.where(empty, xp.inf, lse)
    return p, lse


def _scale_of(scale, e):
    return 1.0 / math.sqrt(e) if scale is None else float(scale)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, *, scale=None, enable_gqa=False):
    """softmax(Q K^T * scale + mask) V, with optional dropout on the probabilities."""
    groups = _check(query, key, value, attn_mask, dropout_p, enable_gqa)
    L, S = query.shape[-2], key.shape[-2]
    dt = query.dtype
    cnp = _compute_np(dt)
    sc = _scale_of(scale, query.shape[-1])
    mask_grad = attn_mask is not None and attn_mask.dtype is not _dt.bool_ and needs_grad(
        attn_mask)
    fused = (not mask_grad and query.dim() == 4 and key.dim() == 4 and value.dim() == 4
             and dropout_p == 0.0
             and query.shape[-1] == value.shape[-1]
             and query.shape[0] == key.shape[0] == value.shape[0]
             and key.shape[1] == value.shape[1]
             and (query.shape[1] == key.shape[1] or groups > 1))
    if _backend_choice is not None:
        fused = _backend_choice(fused, query, key, value, attn_mask, dropout_p, enable_gqa,
                                mask_grad)
    if attn_mask is not None and is_causal and not fused:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    bias = _bias(attn_mask, is_causal, L, S, cnp)
    if not fused and (mask_grad or needs_grad(query, key, value)):
        # a float mask that requires grad is added as a recorded op (it gets a gradient)
        return _math_graph(query, key, value, attn_mask if mask_grad else bias, dropout_p, sc,
                           groups)
    q = query._data.astype(cnp, copy=False)
    k = key._data.astype(cnp, copy=False)
    v = value._data.astype(cnp, copy=False)
    if groups > 1:
        k = xp.repeat(k, groups, axis=-3)
        v = xp.repeat(v, groups, axis=-3)
    s = xp.matmul(q, xp.swapaxes(k, -1, -2))
    s *= cnp.type(sc)
    if bias is not None:
        s = s + bias
    p, lse = _softmax_rows(s)
    if dropout_p > 0.0:
        p = p * _keep_mask(p.shape, dropout_p, cnp)
    out = wrap(xp.matmul(p, v).astype(dt.np, copy=False))
    if needs_grad(query, key, value):
        record(out, ScaledDotProductFlashAttentionForCpuBackward0, (query, key, value),
               query=query, key=key, value=value, logsumexp=wrap(lse),
               bias=None if bias is None else wrap(bias),
               scale=sc, groups=groups)
    return out


def _keep_mask(shape, p, cnp):
    """Kept elements scaled by 1/(1-p), dropped ones 0, from glasstorch's generator."""
    from .random import _bernoulli_mask
    if p >= 1.0:
        return xp.zeros(shape, cnp)
    keep = _bernoulli_mask(shape, 1 - p)  # torch's dropout: noise.bernoulli_(1 - p)
    return keep.astype(cnp) * cnp.type(1.0 / (1.0 - p))


def _math_graph(query, key, value, bias, dropout_p, sc, groups):
    # torch's math path: both factors scaled by sqrt(scale), matmul, + mask, safe softmax,
    # dropout, matmul - each a recorded op
    from .linalg import matmul
    root = math.sqrt(sc)
    if groups > 1:
        key = key.repeat_interleave(groups, -3)
        value = value.repeat_interleave(groups, -3)
    attn = matmul(_dense(query * root), _dense(key.transpose(-2, -1) * root))
    if isinstance(bias, Tensor):
        attn = attn + bias
    elif bias is not None:
        attn = attn + wrap(bias.astype(attn._data.dtype, copy=False))
    attn = _safe_softmax(attn)
    if dropout_p > 0.0:
        attn = _native_dropout(attn, dropout_p)
    return matmul(attn, value)


def _dense(t):
    # a product of a permuted view keeps that layout; the views matmul takes of it are only
    # right for dense row-major data at present, so make it so (values are unchanged)
    return t if t.is_contiguous() else t.contiguous()


def _safe_softmax(x):
    a = x._data
    cnp = _compute_np(x.dtype)
    p, _ = _softmax_rows(a.astype(cnp, copy=False))
    out = wrap(p.astype(a.dtype, copy=False))
    if needs_grad(x):
        record(out, SafeSoftmaxBackward0, (x,), result=out)
    return out


def _native_dropout(x, p):
    a = x._data
    keep = _keep_mask(a.shape, p, _compute_np(x.dtype))
    out = wrap((a * keep).astype(a.dtype, copy=False))
    if needs_grad(x):
        record(out, NativeDropoutBackward0, (x,), mask=wrap(keep.astype(a.dtype, copy=False)))
    return out


class SafeSoftmaxBackward0(Node):
    def backward(self, grad):
        r = self._saved_result
        return (r * (grad - (grad * r).sum(-1, keepdim=True)),)


class NativeDropoutBackward0(Node):
    def backward(self, grad):
        return (grad * self._saved_mask,)


class ScaledDotProductFlashAttentionForCpuBackward0(Node):
    def backward(self, grad):
        # Probabilities are recomputed from q and k with recorded ops (not taken from the
        # saved log-sum-exp, a constant), so that this backward is itself differentiable.
        q, k, v = self._saved_query, self._saved_key, self._saved_value
        lse, bias = self._saved_logsumexp, self._saved_bias
        sc, groups = self._saved_scale, self._saved_groups
        dt = q.dtype
        low = dt is _dt.float16 or dt is _dt.bfloat16
        if low:  # backward in float32 too, rounded at the end
            q, k, v, grad = (t.to(_F32) for t in (q, k, v, grad))
        if groups > 1:
            k = k.repeat_interleave(groups, -3)
            v = v.repeat_interleave(groups, -3)
        s = q.matmul(k.mT) * sc
        if bias is not None:
            s = s + bias
        masked_rows = lse._data == xp.inf
        if masked_rows.any():  # rows with every key masked: probabilities 0
            s = s.masked_fill(wrap(masked_rows), 0.0)
            p = (s - s.logsumexp(-1, keepdim=True)).exp().masked_fill(wrap(masked_rows), 0.0)
        else:
            p = (s - s.logsumexp(-1, keepdim=True)).exp()
        gv = p.mT.matmul(grad)
        dp = grad.matmul(v.mT)
        ds = p * (dp - (p * dp).sum(-1, keepdim=True))
        gq = ds.matmul(k) * sc
        gk = ds.mT.matmul(q) * sc
        if groups > 1:
            b, h, n, e = gk.shape
            gk = gk.view(b, h // groups, groups, n, e).sum(2)
            gv = gv.view(b, h // groups, groups, n, gv.shape[-1]).sum(2)
        if low:
            gq, gk, gv = gq.to(dt), gk.to(dt), gv.to(dt)
        return gq, gk, gv
