"""torch.nn.functional attention: scaled_dot_product_attention, multi_head_attention_forward."""

from __future__ import annotations

import math
import warnings

import glasstorch as _gt
from glasstorch._ops.attention import scaled_dot_product_attention

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]


def _linear(x, w, b=None):
    # looked up on each call so autocast's wrapper of F.linear applies
    return _gt.nn.functional.linear(x, w, b)


def _softmax(x, dim):
    return _gt.softmax(x, dim)


def _dropout(x, p, training):
    if p == 0.0 or not training:
        return x
    from .. import functional as F
    return F.dropout(x, p, training)


def _dense(t):
    # torch's cat returns a contiguous tensor; make sure ours is before viewing it
    return t if t.is_contiguous() else t.contiguous()


def _pad_last(t):
    """Append one zero column (the slot of an added bias/zero key) to a mask."""
    return _gt.cat([t, t.new_zeros(tuple(t.shape[:-1]) + (1,))], -1)


def _canonical_mask(mask, name, other_type, other_name, target_dtype, check_other=True,
                    stacklevel=2):
    """Bool masks (True = masked out) become float masks of -inf; float masks pass. A warning
    points ``stacklevel`` frames up: by default at the caller, as torch's does."""
    if mask is None:
        return None
    if mask.dtype is not _gt.bool and not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {name} are supported")
    if check_other and other_type is not None and mask.dtype is not other_type:
        warnings.warn(f"Support for mismatched {name} and {other_name} is deprecated. Use "
                      f"same type for both instead.", stacklevel=stacklevel)
    if mask.dtype is _gt.bool:
        return _gt.zeros_like(mask, dtype=target_dtype).masked_fill(mask, float("-inf"))
    return mask


def _in_projection(query, key, value, e, in_proj_weight, in_proj_bias, separate,
                   q_w, k_w, v_w):
    if not separate:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        if query is key and key is value:  # self-attention: one GEMM for q, k and v
            proj = _linear(query, in_proj_weight, in_proj_bias)
            proj = proj.unflatten(-1, (3, e)).unsqueeze(0).transpose(0, -2).squeeze(-2)
            proj = proj.contiguous()
            return proj[0], proj[1], proj[2]
        ws = in_proj_weight.chunk(3)
        bs = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        return (_linear(query, ws[0], bs[0]), _linear(key, ws[1], bs[1]),
                _linear(value, ws[2], bs[2]))
    for name, w in (("q_proj_weight", q_w), ("k_proj_weight", k_w), ("v_proj_weight", v_w)):
        if w is None:
            raise AssertionError(f"use_separate_proj_weight is True but {name} is None")
    bs = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
    return _linear(query, q_w, bs[0]), _linear(key, k_w, bs[1]), _linear(value, v_w, bs[2])


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """Multi-head attention over ``(L, N, E)`` (or unbatched ``(L, E)``) inputs; returns the
    output and the attention weights (averaged over heads unless told otherwise) or None."""
    batched = query.dim() == 3
    if query.dim() not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received "
                             f"{query.dim()}-D query tensor")
    if key.dim() != query.dim() or value.dim() != query.dim():
        raise AssertionError(f"For {'batched (3-D)' if batched else 'unbatched (2-D)'} "
                             f"`query`, expected `key` and `value` to be "
                             f"{query.dim()}-D but found {key.dim()}-D and {value.dim()}-D "
                             f"tensors respectively")
    if key_padding_mask is not None:
        want = 2 if batched else 1
        if key_padding_mask.dim() != want:
            raise AssertionError(f"For {'batched (3-D)' if batched else 'unbatched (2-D)'} "
                                 f"`query`, expected `key_padding_mask` to be `None` or "
                                 f"{want}-D but found {key_padding_mask.dim()}-D tensor instead")
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       None if attn_mask is None else attn_mask.dtype,
                                       "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the hint replaces the mask in the SDPA call below
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {tuple(key.shape[:2])} do not "
                                 f"match value's {tuple(value.shape[:2])}")
    elif key.shape != value.shape:
        raise AssertionError(f"key shape {tuple(key.shape)} does not match value shape "
                             f"{tuple(value.shape)}")
    q, k, v = _in_projection(query, key, value, embed_dim, in_proj_weight, in_proj_bias,
                             use_separate_proj_weight, q_proj_weight, k_proj_weight,
                             v_proj_weight)
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is "
                                   f"{_size(attn_mask.shape)}, but should be "
                                   f"{(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is "
                                   f"{_size(attn_mask.shape)}, but should be "
                                   f"{(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")
    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key/value.")
        k = _gt.cat([k, bias_k.repeat(1, bsz, 1)])
        v = _gt.cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)
    elif (bias_k is None) != (bias_v is None):
        raise AssertionError("bias_k and bias_v should both be given or both be None")
    q = q.view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    if static_k is None:
        k = k.view(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        if tuple(static_k.shape[::2]) != (bsz * num_heads, head_dim):
            raise AssertionError(f"expecting static_k of size {bsz * num_heads} x * x "
                                 f"{head_dim}, but got {tuple(static_k.shape)}")
        k = static_k
    if static_v is None:
        v = v.view(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        if tuple(static_v.shape[::2]) != (bsz * num_heads, head_dim):
            raise AssertionError(f"expecting static_v of size {bsz * num_heads} x * x "
                                 f"{head_dim}, but got {tuple(static_v.shape)}")
        v = static_v
    if add_zero_attn:
        zshape = (bsz * num_heads, 1, head_dim)
        k = _dense(_gt.cat([k, _gt.zeros(zshape, dtype=k.dtype)], dim=1))
        v = _dense(_gt.cat([v, _gt.zeros(zshape, dtype=v.dtype)], dim=1))
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                                 f"{_size(key_padding_mask.shape)}")
        kpm = key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1)
        kpm = kpm.reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0
    if need_weights:
        q = q * math.sqrt(1.0 / float(head_dim))
        if attn_mask is not None:
            weights = _gt.baddbmm(attn_mask, q, k.transpose(-2, -1))
        else:
            weights = _gt.bmm(q, k.transpose(-2, -1))
        weights = _softmax(weights, -1)
        if dropout_p > 0.0:
            weights = _dropout(weights, dropout_p, True)
        out = _gt.bmm(weights, v)
        out = out.transpose(0, 1).contiguous().view(tgt_len * bsz, embed_dim)
        out = _linear(out, out_proj_weight, out_proj_bias)
        out = out.view(tgt_len, bsz, out.shape[1])
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights
    if attn_mask is not None:
        if attn_mask.shape[0] == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).contiguous().view(bsz * tgt_len, embed_dim)
    out = _linear(out, out_proj_weight, out_proj_bias)
    out = out.view(tgt_len, bsz, out.shape[1])
    if not batched:
        out = out.squeeze(1)
    return out, None


def _size(shape):
    return f"torch.Size({list(shape)})"
