"""Sequence kernels: F.scaled_dot_product_attention (fused CPU path and math path) and the
recurrent kernels torch.lstm/gru/rnn_tanh/rnn_relu and their cells."""

import numpy as np

import glasstorch.nn  # noqa: F401  (glasstorch.nn.functional for the glasstorch side)

from ..harness import FLOATS, OpInfo, S, T, make_array

LOW_TOL = {"float16": (5e-3, 5e-3), "bfloat16": (3e-2, 3e-2), "float32": (1e-5, 1e-5),
           "float64": (1e-9, 1e-9)}


def _sdpa(lib, q, k, v, **kw):
    return lib.nn.functional.scaled_dot_product_attention(q, k, v, **kw)


def _a(rng, shape, dtype):
    return make_array(rng, shape, dtype, -2, 2)


def _sdpa_samples(dtype, rng):
    b, h, L, S_, E = 2, 2, 3, 4, 4
    q, k, v = _a(rng, (b, h, L, E), dtype), _a(rng, (b, h, S_, E), dtype), \
        _a(rng, (b, h, S_, E), dtype)
    yield S(q, k, v)                                              # fused 4-D path
    yield S(q, k, v, is_causal=True)
    yield S(q, k, v, scale=0.25)
    yield S(q, k, v, attn_mask=rng.random((L, S_)) > 0.4)         # bool mask, broadcast
    fm = _a(rng, (b, 1, L, S_), dtype)
    yield S(q, k, v, attn_mask=fm)                                # float mask
    full = np.ones((L, S_), dtype=bool)
    full[1] = False                                               # a fully masked row -> 0
    yield S(q, k, v, attn_mask=full)
    yield S(T(_a(rng, (E, L, h, b), dtype)), k, v)                # non-contiguous query
    yield S(_a(rng, (1, 4, L, E), dtype), _a(rng, (1, 2, S_, E), dtype),
            _a(rng, (1, 2, S_, E), dtype), enable_gqa=True)       # grouped-query attention
    yield S(q, k, _a(rng, (b, h, S_, 3), dtype))                  # value dim != E: math path
    yield S(_a(rng, (L, E), dtype), _a(rng, (S_, E), dtype), _a(rng, (S_, E), dtype),
            is_causal=True)                                       # 2-D: math path
    yield S(_a(rng, (3, L, E), dtype), _a(rng, (1, S_, E), dtype),
            _a(rng, (3, S_, E), dtype), attn_mask=rng.random((L, S_)) > 0.3)  # broadcast batch
    # errors
    yield S(q, k[..., :3], v)                                     # head dims differ
    yield S(_a(rng, (1, 4, L, E), dtype), _a(rng, (1, 2, S_, E), dtype),
            _a(rng, (b, 2, S_, E), dtype))                        # heads differ without gqa
    yield S(q, k, v, attn_mask=make_array(rng, (L, S_), "int64"))  # integer mask
    yield S(_a(rng, (L, E), dtype), _a(rng, (S_, E), dtype), _a(rng, (S_, E), dtype),
            attn_mask=rng.random((L, S_)) > 0.3, is_causal=True)  # mask and causal (math)


def _sdpa_mixed(dtype, rng):
    # (forward only: torch's graph for an empty query is a special case)
    yield S(_a(rng, (2, 3, 0, 8), dtype), _a(rng, (2, 3, 5, 8), dtype),
            _a(rng, (2, 3, 5, 8), dtype))
    yield S(_a(rng, (2, 3, 4), "float32"), _a(rng, (2, 5, 4), "float64"),
            _a(rng, (2, 5, 4), "float32"))
    yield S(make_array(rng, (2, 3, 4), "int64"), make_array(rng, (2, 5, 4), "int64"),
            make_array(rng, (2, 5, 4), "int64"))
    yield S(_a(rng, (2, 3, 4), "float32"), _a(rng, (2, 5, 4), "float32"),
            _a(rng, (2, 5, 4), "float32"), attn_mask=_a(rng, (3, 5), "float64"))


def _sdpa_dropout(lib, q, k, v, p):
    # dropout is random: compare what is deterministic (p=1 drops everything; shapes)
    return lib.nn.functional.scaled_dot_product_attention(q, k, v, dropout_p=p)


def _dropout_samples(dtype, rng):
    yield S(_a(rng, (2, 2, 3, 4), dtype), _a(rng, (2, 2, 5, 4), dtype),
            _a(rng, (2, 2, 5, 4), dtype), 1.0)
    yield S(_a(rng, (2, 3, 4), dtype), _a(rng, (2, 5, 4), dtype), _a(rng, (2, 5, 4), dtype),
            1.0)


def _cell_samples(gates):
    def gen(dtype, rng):
        n, i, h = 3, 4, 5
        w_ih, w_hh = _a(rng, (gates * h, i), dtype), _a(rng, (gates * h, h), dtype)
        b_ih, b_hh = _a(rng, (gates * h,), dtype), _a(rng, (gates * h,), dtype)
        x = _a(rng, (n, i), dtype)
        hx = (_a(rng, (n, h), dtype), _a(rng, (n, h), dtype)) if gates == 4 else \
            _a(rng, (n, h), dtype)
        yield S(x, hx, w_ih, w_hh, b_ih, b_hh)
        yield S(x, hx, w_ih, w_hh)                                # no biases
        yield S(T(_a(rng, (i, n), dtype)), hx, w_ih, w_hh, b_ih, b_hh)
        yield S(_a(rng, (0, i), dtype), tuple(a[:0] for a in hx) if gates == 4 else hx[:0],
                w_ih, w_hh, b_ih, b_hh)                           # empty batch
    return gen


def _cell(name):
    return lambda lib, *a: getattr(lib, name)(*a)


def _stack_samples(gates, proj=False):
    # (input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)
    # and the packed overload (data, batch_sizes, hx, params, ...)
    def gen(dtype, rng):
        i, h = 3, 4
        r = 2 if proj else h
        for bias, layers, bidir, batch_first in ((True, 1, False, False),
                                                 (False, 2, True, True),
                                                 (True, 2, True, False)):
            d = 2 if bidir else 1
            params = []
            for layer in range(layers):
                for _ in range(d):
                    width = i if layer == 0 else r * d
                    params += [_a(rng, (gates * h, width), dtype), _a(rng, (gates * h, r), dtype)]
                    if bias:
                        params += [_a(rng, (gates * h,), dtype), _a(rng, (gates * h,), dtype)]
                    if proj:
                        params.append(_a(rng, (r, h), dtype))
            h0 = _a(rng, (layers * d, 2, r), dtype)
            hx = (h0, _a(rng, (layers * d, 2, h), dtype)) if gates == 4 else h0
            x = _a(rng, (2, 5, i) if batch_first else (5, 2, i), dtype)
            yield S(x, hx, params, bias, layers, 0.0, False, bidir, batch_first)
            data = _a(rng, (7, i), dtype)                       # lengths 5 and 2
            sizes = np.array([2, 2, 1, 1, 1], dtype=np.int64)
            yield S(data, sizes, hx, params, bias, layers, 0.0, False, bidir)
    return gen


OPS = [
    OpInfo("nn.functional.scaled_dot_product_attention", _sdpa, _sdpa_samples, dtypes=FLOATS,
           tol=LOW_TOL, grad=True),
    OpInfo("nn.functional.scaled_dot_product_attention[dtypes]", _sdpa, _sdpa_mixed,
           dtypes=("float32",)),
    OpInfo("nn.functional.scaled_dot_product_attention[dropout_p=1]", _sdpa_dropout,
           _dropout_samples,
           dtypes=("float32", "float64"), grad=True, gradcheck=False),
    OpInfo("lstm_cell", _cell("lstm_cell"), _cell_samples(4), dtypes=FLOATS, tol=LOW_TOL,
           grad=True),
    OpInfo("gru_cell", _cell("gru_cell"), _cell_samples(3), dtypes=FLOATS, tol=LOW_TOL,
           grad=True),
    OpInfo("rnn_tanh_cell", _cell("rnn_tanh_cell"), _cell_samples(1), dtypes=FLOATS,
           tol=LOW_TOL, grad=True),
    OpInfo("rnn_relu_cell", _cell("rnn_relu_cell"), _cell_samples(1), dtypes=FLOATS,
           tol=LOW_TOL, grad=True),
    # whole-sequence kernels: forward here; gradients through the nn modules (tests/nn),
    # since torch's graph is one fused node (MkldnnRnnLayerBackward0) that is not mirrored
    OpInfo("lstm", _cell("lstm"), _stack_samples(4), tol=LOW_TOL),
    OpInfo("lstm[proj]", _cell("lstm"), _stack_samples(4, proj=True), tol=LOW_TOL),
    OpInfo("gru", _cell("gru"), _stack_samples(3), tol=LOW_TOL),
    OpInfo("rnn_tanh", _cell("rnn_tanh"), _stack_samples(1), tol=LOW_TOL),
    OpInfo("rnn_relu", _cell("rnn_relu"), _stack_samples(1), tol=LOW_TOL),
]
