"""Sequence kernels: scaled dot-product attention, and (at the end of the file) torch's
recurrent kernels torch.lstm/gru/rnn_tanh/rnn_relu and their cells.

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


# ============================================================================= recurrent kernels
# torch.lstm / gru / rnn_tanh / rnn_relu and their *_cell forms (the nn.RNN modules run on
# these). They live here because this helper owned no separate ``_ops`` file for them.
#
# Inputs are handled in packed form (``data`` rows of every step back to back,
# ``sizes[t]`` rows at step t); a padded batch is the case of equal sizes. Each layer and
# direction projects the inputs of ALL steps with one GEMM, then runs one GEMM per step.

def _ops():
    import glasstorch
    return glasstorch


def _lstm_step(xi, h, c, w_hh_t, w_hr_t):
    gates = xi + h.matmul(w_hh_t)
    i, f, g, o = gates.chunk(4, 1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h = o.sigmoid() * c.tanh()
    if w_hr_t is not None:
        h = h.matmul(w_hr_t)
    return h, c


def _gru_step(xi, h, w_hh_t, b_hh):
    gh = h.matmul(w_hh_t)
    if b_hh is not None:
        gh = gh + b_hh
    xr, xz, xn = xi.chunk(3, 1)
    hr, hz, hn = gh.chunk(3, 1)
    r = (xr + hr).sigmoid()
    z = (xz + hz).sigmoid()
    n = (xn + r * hn).tanh()
    return n + z * (h - n)


def _rnn_step(xi, h, w_hh_t, relu):
    pre = xi + h.matmul(w_hh_t)
    return _ops().relu(pre) if relu else pre.tanh()


def _input_projection(mode, x, w_ih, b_ih, b_hh):
    """One GEMM for the inputs of all steps; b_hh is folded in except for GRU (where it
    sits inside ``r * (W_hn h + b_hn)``)."""
    if b_ih is None:
        return x.matmul(w_ih.t())
    bias = b_ih if mode == "GRU" else b_ih + b_hh
    return _ops().addmm(bias, x, w_ih.t())


def _run_direction(mode, data, sizes, h0, c0, weights, reverse):
    """One layer in one direction over packed ``data``; returns (outputs, h_n, c_n).

    Forward, the state shrinks as sequences end (their final states are kept aside);
    in reverse it grows as sequences start, joining with their initial state."""
    gt = _ops()
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    xproj = _input_projection(mode, data, w_ih, b_ih, b_hh)
    # transposed once: the steps' weight gradients are summed before one TBackward0
    w_hh_t = w_hh.t()
    w_hr_t = w_hr.t() if w_hr is not None else None
    T = len(sizes)
    # one split node: its backward concatenates the steps' gradients once, where a slice
    # per step would sum T full-size gradient buffers (quadratic in T)
    xsteps = xproj.split(sizes) if T else ()
    outs = [None] * T
    relu = mode == "RNN_RELU"
    lstm = mode == "LSTM"
    gru = mode == "GRU"
    c = None
    if not reverse:
        h, c = h0, c0
        done_h, done_c = [], []
        order = range(T)
    else:
        start = sizes[-1] if T else h0.shape[0]
        h = h0[:start]
        c = c0[:start] if lstm else None
        order = range(T - 1, -1, -1)
    for t in order:
        b = sizes[t]
        n = h.shape[0]
        if b < n:  # forward: sequences that ended keep their last state
            done_h.append(h[b:])
            h = h[:b]
            if lstm:
                done_c.append(c[b:])
                c = c[:b]
        elif b > n:  # reverse: sequences starting here join with their initial state
            h = gt.cat([h, h0[n:b]], 0)
            if lstm:
                c = gt.cat([c, c0[n:b]], 0)
        xi = xsteps[t]
        if lstm:
            h, c = _lstm_step(xi, h, c, w_hh_t, w_hr_t)
        elif gru:
            h = _gru_step(xi, h, w_hh_t, b_hh)
        else:
            h = _rnn_step(xi, h, w_hh_t, relu)
        outs[t] = h
    if not reverse and done_h:
        h = gt.cat([h] + done_h[::-1], 0)
        if lstm:
            c = gt.cat([c] + done_c[::-1], 0)
    out = gt.cat(outs, 0) if T else data.new_zeros((0, h0.shape[1]))
    return out, h, c


def _rnn_stack(mode, data, sizes, h0, c0, params, has_biases, num_layers, dropout, train,
               bidirectional):
    """Every layer and direction over packed ``data``; final states stacked like torch's."""
    gt = _ops()
    dirs = 2 if bidirectional else 1
    groups = num_layers * dirs
    per = len(params) // groups if groups else 0
    if per * groups != len(params) or per not in ((4, 5) if has_biases else (2, 3)):
        raise RuntimeError(f"{mode.lower()}: expected {groups} groups of "
                           f"{4 if has_biases else 2} (or, with projections, "
                           f"{5 if has_biases else 3}) weights, got {len(params)} weights")
    proj = per in (3, 5)
    lstm = mode == "LSTM"
    hs, cs = [], []
    x = data
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            idx = layer * dirs + d
            ws = params[idx * per:(idx + 1) * per]
            w_hr = ws[-1] if proj else None
            b_ih, b_hh = (ws[2], ws[3]) if has_biases else (None, None)
            out, h, c = _run_direction(mode, x, sizes, h0[idx],
                                       c0[idx] if lstm else None,
                                       (ws[0], ws[1], b_ih, b_hh, w_hr), d == 1)
            outs.append(out)
            hs.append(h)
            if lstm:
                cs.append(c)
        x = outs[0] if dirs == 1 else gt.cat(outs, 1)
        if dropout and train and layer < num_layers - 1:
            x = gt.dropout(x, dropout, True)
    return x, gt.stack(hs, 0), (gt.stack(cs, 0) if lstm else None)


_PADDED_ARGS = ("input", "hx", "params", "has_biases", "num_layers", "dropout", "train",
                "bidirectional", "batch_first")
_PACKED_ARGS = ("data", "batch_sizes", "hx", "params", "has_biases", "num_layers", "dropout",
                "train", "bidirectional")


def _rnn_args(mode, args, kwargs):
    """``(packed, the 9 arguments)`` bound by position and torch's keyword names to one of its
    two overloads."""
    if "data" in kwargs or "batch_sizes" in kwargs:
        packed = True
    elif "input" in kwargs or "batch_first" in kwargs:
        packed = False
    elif len(args) > 3:
        packed = not isinstance(args[3], bool)  # args[3]: params, not has_biases
    else:  # the packed overload's second argument is the int64 batch_sizes
        packed = len(args) > 1 and isinstance(args[1], Tensor) and \
            not args[1].dtype.is_floating_point
    names = _PACKED_ARGS if packed else _PADDED_ARGS
    name = mode.lower()
    if len(args) > len(names):
        raise TypeError(f"{name}() takes {len(names)} positional arguments but {len(args)} "
                        f"were given")
    bound = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in names:
            raise TypeError(f"{name}() got an unexpected keyword argument '{k}'")
        if k in bound:
            raise TypeError(f"{name}() got multiple values for argument '{k}'")
        bound[k] = v
    missing = [n for n in names if n not in bound]
    if missing:
        raise TypeError(f"{name}() missing {len(missing)} required arguments: "
                        f"{', '.join(repr(n) for n in missing)}")
    return packed, [bound[n] for n in names]


def _rnn_kernel(mode, args, kwargs):
    """Both of torch's overloads: (input, hx, params, has_biases, num_layers, dropout, train,
    bidirectional, batch_first) and (data, batch_sizes, hx, params, has_biases, num_layers,
    dropout, train, bidirectional)."""
    lstm = mode == "LSTM"
    packed, args = _rnn_args(mode, args, kwargs)
    if packed:
        data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidir = args
        sizes = [int(b) for b in batch_sizes._data]
        flat, T, B, batch_first = data, None, None, False
    else:
        inp, hx, params, has_biases, num_layers, dropout, train, bidir, batch_first = args
        if inp.dim() != 3:
            raise RuntimeError(f"input must have 3 dimensions, got {inp.dim()}")
        x = inp.transpose(0, 1) if batch_first else inp
        T, B = x.shape[0], x.shape[1]
        sizes = [B] * T
        flat = x.reshape(T * B, x.shape[2])
    h0, c0 = (hx[0], hx[1]) if lstm else (hx, None)
    out, h_n, c_n = _rnn_stack(mode, flat, sizes, h0, c0, list(params), has_biases,
                               num_layers, float(dropout), train, bidir)
    if T is not None:
        out = out.view(T, B, out.shape[-1])
        if batch_first:
            out = out.transpose(0, 1)
    return (out, h_n, c_n) if lstm else (out, h_n)


def lstm(*args, **kwargs):
    """torch.lstm: a multi-layer LSTM over a padded or packed batch -> (output, h_n, c_n)."""
    return _rnn_kernel("LSTM", args, kwargs)


def gru(*args, **kwargs):
    """torch.gru: a multi-layer GRU over a padded or packed batch -> (output, h_n)."""
    return _rnn_kernel("GRU", args, kwargs)


def rnn_tanh(*args, **kwargs):
    """torch.rnn_tanh: a multi-layer tanh RNN -> (output, h_n)."""
    return _rnn_kernel("RNN_TANH", args, kwargs)


def rnn_relu(*args, **kwargs):
    """torch.rnn_relu: a multi-layer ReLU RNN -> (output, h_n)."""
    return _rnn_kernel("RNN_RELU", args, kwargs)


def _cell_gates(input, hx, w_ih, w_hh, b_ih, b_hh, name):
    if input.dim() != 2 or hx.dim() != 2:
        raise IndexError(f"{name}: expected 2-D input and hidden state, got {input.dim()}-D "
                         f"and {hx.dim()}-D")
    gi = _input_projection("GRU", input, w_ih, b_ih, None)
    gh = hx.matmul(w_hh.t())
    if b_hh is not None:
        gh = gh + b_hh
    return gi, gh


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One LSTM step on a 2-D batch; ``hx`` is ``(h, c)``; returns ``(h', c')``."""
    h, c = hx
    gi, gh = _cell_gates(input, h, w_ih, w_hh, b_ih, b_hh, "lstm_cell")
    i, f, g, o = (gi + gh).chunk(4, 1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * c.tanh(), c


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One GRU step on a 2-D batch."""
    gi, gh = _cell_gates(input, hx, w_ih, w_hh, b_ih, b_hh, "gru_cell")
    xr, xz, xn = gi.chunk(3, 1)
    hr, hz, hn = gh.chunk(3, 1)
    r = (xr + hr).sigmoid()
    z = (xz + hz).sigmoid()
    n = (xn + r * hn).tanh()
    return n + z * (hx - n)


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One tanh RNN step on a 2-D batch."""
    gi, gh = _cell_gates(input, hx, w_ih, w_hh, b_ih, b_hh, "rnn_tanh_cell")
    return (gi + gh).tanh()


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One ReLU RNN step on a 2-D batch."""
    gi, gh = _cell_gates(input, hx, w_ih, w_hh, b_ih, b_hh, "rnn_relu_cell")
    return _ops().relu(gi + gh)


__all__ += ["lstm", "gru", "rnn_tanh", "rnn_relu", "lstm_cell", "gru_cell", "rnn_tanh_cell",
            "rnn_relu_cell"]
