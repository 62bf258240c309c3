"""Recurrent kernels: torch.lstm / gru / rnn_tanh / rnn_relu and their ``*_cell`` forms (the
nn.RNN modules run on these).

Inputs are handled as a padded ``(T, B, features)`` batch or in packed form (``data`` rows of
every step back to back, ``sizes[t]`` rows at step t). Each layer and direction is one fused
kernel on NumPy arrays, recorded as one graph node (``MkldnnRnnLayerBackward0``, torch's name
for its fused CPU layer): one GEMM projects the inputs of all steps, then each step is one
GEMM and the gate math; backward runs the steps in reverse the same way and computes the
weight and input gradients with one GEMM each over all steps.

While a tracer watches the dispatch point (jit.trace, fx, the profiler, ONNX export, a
Tensor subclass), and for GRU/RNN under autocast, each layer runs as recorded per-step ops
instead, so that the tracer sees the ops it can translate and autocast casts each of them;
this is torch's own composite path.
"""

from __future__ import annotations

import sys

from .._core import dtype as _dt
from ..autograd import grad_mode as _grad_mode
from ._common import Node, Tensor, needs_grad, record, wrap, xp

__all__ = ["lstm", "gru", "rnn_tanh", "rnn_relu", "lstm_cell", "gru_cell", "rnn_tanh_cell",
           "rnn_relu_cell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}
_LOW = (_dt.float16, _dt.bfloat16)


def _ops():
    import glasstorch
    return glasstorch


def _traced(mode, *tensors):
    """Whether a tracer, a Tensor subclass or autocast must see this layer's ops one by one."""
    from .. import overrides
    if overrides._tls.modes:
        return True
    onnx = sys.modules.get("glasstorch.onnx._tracer")
    if onnx is not None and onnx.is_in_onnx_export():
        return True
    amp = sys.modules.get("glasstorch.amp.autocast_mode")
    if mode != "LSTM" and amp is not None and amp._state.active is not None:
        return True  # not an autocast op on the CPU: torch autocasts the ops inside it
    return overrides._active and any(
        t is not None and overrides._overrides(type(t)) for t in tensors)


# ============================================================================= fused layer

def _sigmoid_from_half(a):
    # ``a`` holds z/2 (the weights were pre-scaled by 0.5, exactly): sigmoid(z) =
    # (tanh(z/2) + 1) / 2, which cannot overflow and shares one tanh with the tanh gates
    a *= 0.5
    a += 0.5


def _gate_rows(mode, H):
    """Row order of the gate blocks inside the kernel, and the 0.5 scale of the sigmoid rows.

    LSTM runs its gates as (o, i, f, g): the three sigmoids are one block, and the three
    gates whose gradients scale with dc are adjacent. GRU keeps (r, z, n)."""
    if mode == "LSTM":
        order = xp.concatenate([xp.arange(3 * H, 4 * H), xp.arange(0, 3 * H)])
        n_sig = 3
    elif mode == "GRU":
        order, n_sig = None, 2
    else:
        order, n_sig = None, 0
    return order, n_sig


def _prepared(w, order, n_sig, H, cnp):
    """``w`` (gate rows first) in kernel row order with its sigmoid rows halved."""
    a = w.astype(cnp, copy=True) if order is None else w.astype(cnp, copy=False)[order]
    if n_sig:
        a[:n_sig * H] *= 0.5
    return a


def _check_weights(mode, x, w_ih, w_hh, b_ih, b_hh, w_hr, G):
    H = w_hh.shape[0] // G if w_hh.dim() == 2 else -1
    P = w_hr.shape[0] if w_hr is not None else H
    want = [(w_ih, (G * H, x.shape[-1])), (w_hh, (G * H, P))]
    if b_ih is not None:
        want += [(b_ih, (G * H,)), (b_hh, (G * H,))]
    if w_hr is not None:
        want.append((w_hr, (P, H)))
    for w, shape in want:
        if tuple(w.shape) != shape:
            raise RuntimeError(f"{mode.lower()}: weight of shape {list(w.shape)} does not fit "
                               f"input size {x.shape[-1]} and hidden size {H} (expected "
                               f"{list(shape)})")
        if w.dtype is not x.dtype:
            raise RuntimeError(f"{mode.lower()}: expected all weights to have dtype {x.dtype}, "
                               f"got {w.dtype}")
    return H, P


def _fused_direction(mode, x, sizes, h0, c0, weights, reverse):
    """One layer in one direction as one kernel and one graph node; returns (out, h_n, c_n).

    The state lives in one buffer of the full batch; step t updates its first sizes[t] rows
    in place. Run forward, rows whose sequence ended keep their final state; in reverse,
    rows whose sequence has not started still hold their initial state."""
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    G = _GATES[mode]
    H, P = _check_weights(mode, x, w_ih, w_hh, b_ih, b_hh, w_hr, G)
    dt = x.dtype
    cnp = xp.float32 if dt in _LOW else dt.np
    X = x._data.reshape(-1, x.shape[-1]).astype(cnp, copy=False)
    N = X.shape[0]
    order, n_sig = _gate_rows(mode, H)
    lstm, gru = mode == "LSTM", mode == "GRU"
    # the inputs of all steps in one GEMM; b_hh folds in except for GRU (inside r * (...))
    A = X @ _prepared(w_ih._data, order, n_sig, H, cnp).T
    # row-major copies of the transposed weights: BLAS takes small products with a
    # transposed operand at about half speed
    whh_t = xp.ascontiguousarray(_prepared(w_hh._data, order, n_sig, H, cnp).T)
    if b_ih is not None:
        A += _prepared(b_ih._data if gru else b_ih._data + b_hh._data, order, n_sig, H, cnp)
        bhh = _prepared(b_hh._data, order, n_sig, H, cnp) if gru else None
    else:
        bhh = None
    whr_t = xp.ascontiguousarray(w_hr._data.astype(cnp, copy=False).T) if w_hr is not None \
        else None
    h = h0._data.astype(cnp, copy=True)
    c = c0._data.astype(cnp, copy=True) if lstm else None
    out = xp.empty((N, P), cnp)
    HP = xp.empty((N, P), cnp)  # the state each row's step started from
    CP = xp.empty((N, H), cnp) if lstm else None
    TC = xp.empty((N, H), cnp) if lstm else None  # tanh(c)
    HN = xp.empty((N, H), cnp) if gru else None   # W_hn h + b_hn
    offs = _offsets(sizes)
    T = len(sizes)
    steps = range(T - 1, -1, -1) if reverse else range(T)
    relu = mode == "RNN_RELU"
    H2, H3 = 2 * H, 3 * H
    for t in steps:
        b, s = sizes[t], offs[t]
        e = s + b
        hp = h[:b]
        HP[s:e] = hp
        z = A[s:e]
        if lstm:
            z += hp @ whh_t
            xp.tanh(z, out=z)
            _sigmoid_from_half(z[:, :H3])
            CP[s:e] = c[:b]
            cn = z[:, H2:H3] * c[:b]          # f * c
            cn += z[:, H:H2] * z[:, H3:]      # + i * g
            c[:b] = cn
            tc = xp.tanh(cn, out=TC[s:e])
            hn = z[:, :H] * tc                # o * tanh(c)
            if whr_t is not None:
                hn = hn @ whr_t
        elif gru:
            gh = hp @ whh_t
            if bhh is not None:
                gh += bhh
            rz = z[:, :H2]
            rz += gh[:, :H2]
            xp.tanh(rz, out=rz)
            _sigmoid_from_half(rz)
            HN[s:e] = gh[:, H2:]
            n = z[:, H2:]
            n += z[:, :H] * gh[:, H2:]
            xp.tanh(n, out=n)
            hn = hp - n
            hn *= z[:, H:H2]
            hn += n                           # n + z * (h - n)
        else:
            z += hp @ whh_t
            hn = xp.maximum(z, 0, out=z) if relu else xp.tanh(z, out=z)
        out[s:e] = hn
        h[:b] = hn
    shape = x.shape[:-1] + (P,)
    res = [wrap(out.reshape(shape).astype(dt.np, copy=False)),
           wrap(h.astype(dt.np, copy=False))]
    if lstm:
        res.append(wrap(c.astype(dt.np, copy=False)))
    res = tuple(res)
    if needs_grad(x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr):
        # torch's seven inputs; the projection (not in torch's fused layer) after them
        inputs = (x, w_ih, w_hh, b_ih, b_hh, h0, c0) + ((w_hr,) if w_hr is not None else ())
        record(res, MkldnnRnnLayerBackward0, inputs,
               input=x, weight0=w_ih, weight1=w_hh, weight2=b_ih, weight3=b_hh, hx=h0, cx=c0,
               weight4=w_hr, mode=mode,
               sizes=sizes, reverse=reverse, acts=A, hprev=HP, cprev=CP, tanh_c=TC,
               hn=HN, out=out)
    return res if lstm else res + (None,)


def _offsets(sizes):
    offs, s = [], 0
    for b in sizes:
        offs.append(s)
        s += b
    return offs


class MkldnnRnnLayerBackward0(Node):
    """One recurrent layer and direction over all its steps (torch's fused CPU layer)."""

    def backward(self, g_out, g_h, g_c=None):
        if _grad_mode.is_grad_enabled():  # create_graph: gradients that are differentiable
            return self._composite_backward(g_out, g_h, g_c)
        mode = self._saved_mode
        x, w_ih, w_hh = self._saved_input, self._saved_weight0, self._saved_weight1
        w_hr = self._saved_weight4
        sizes, reverse = self._saved_sizes, self._saved_reverse
        A, HP, OUT = self._saved_acts, self._saved_hprev, self._saved_out
        dt = x.dtype
        cnp = A.dtype
        G = _GATES[mode]
        H = w_hh.shape[0] // G
        order, _ = _gate_rows(mode, H)
        lstm, gru = mode == "LSTM", mode == "GRU"
        P = HP.shape[1]
        N = A.shape[0]
        dout = g_out._data.reshape(N, P).astype(cnp, copy=False)
        dh = g_h._data.astype(cnp, copy=True)
        whh = w_hh._data.astype(cnp, copy=False)
        if order is not None:
            whh = whh[order]
        offs = _offsets(sizes)
        T = len(sizes)
        steps = range(T) if reverse else range(T - 1, -1, -1)
        H2, H3 = 2 * H, 3 * H
        DZ = xp.empty((N, G * H), cnp)  # gradient of the gates' pre-activations
        if lstm:
            # the step's elementwise derivatives, for all steps at once:
            # dc = dc' + dhh * o (1 - tanh(c)^2); dz_o = dhh * tanh(c) o (1 - o);
            # dz_(i, f, g) = dc * (g i (1 - i), c_prev f (1 - f), i (1 - g^2))
            o, i, f, g = A[:, :H], A[:, H:H2], A[:, H2:H3], A[:, H3:]
            TC, CP = self._saved_tanh_c, self._saved_cprev
            K1 = o * (1 - TC * TC)
            M = xp.empty((N, 4, H), cnp)
            xp.multiply(TC * o, 1 - o, out=M[:, 0])
            xp.multiply(g * i, 1 - i, out=M[:, 1])
            xp.multiply(CP * f, 1 - f, out=M[:, 2])
            xp.multiply(i, 1 - g * g, out=M[:, 3])
            dc = g_c._data.astype(cnp, copy=True)
            whr = w_hr._data.astype(cnp, copy=False) if w_hr is not None else None
            DH = xp.empty((N, P), cnp) if whr is not None else None
            DZ3 = DZ.reshape(N, 4, H)
            for t in steps:
                b, s = sizes[t], offs[t]
                e = s + b
                dht = dh[:b] + dout[s:e]
                if whr is not None:
                    DH[s:e] = dht
                    dht = dht @ whr
                dct = dht * K1[s:e]
                dct += dc[:b]
                xp.multiply(M[s:e, 0], dht, out=DZ3[s:e, 0])
                xp.multiply(M[s:e, 1:], dct[:, None, :], out=DZ3[s:e, 1:])
                xp.multiply(dct, f[s:e], out=dc[:b])
                xp.matmul(DZ[s:e], whh, out=dh[:b])
        elif gru:
            # dh_prev = dh z + dgh W_hh; dgh = dh * (Kn Kr, Kz, Kn r) with Kn = (1-z)(1-n^2),
            # Kr = hn r (1-r), Kz = (h_prev - n) z (1-z); the input gates' n part is dh Kn
            r, zg, n = A[:, :H], A[:, H:H2], A[:, H2:]
            HN = self._saved_hn
            Kn = (1 - zg) * (1 - n * n)
            Q = xp.empty((N, 3, H), cnp)
            xp.multiply(Kn * HN, r * (1 - r), out=Q[:, 0])
            xp.multiply((HP - n) * zg, 1 - zg, out=Q[:, 1])
            xp.multiply(Kn, r, out=Q[:, 2])
            DH = xp.empty((N, H), cnp)
            DZ3 = DZ.reshape(N, 3, H)
            for t in steps:
                b, s = sizes[t], offs[t]
                e = s + b
                dht = xp.add(dh[:b], dout[s:e], out=DH[s:e])
                xp.multiply(Q[s:e], dht[:, None, :], out=DZ3[s:e])
                xp.matmul(DZ[s:e], whh, out=dh[:b])
                dh[:b] += dht * zg[s:e]
        else:
            K = (OUT > 0).astype(cnp) if mode == "RNN_RELU" else 1 - OUT * OUT
            for t in steps:
                b, s = sizes[t], offs[t]
                e = s + b
                dht = dh[:b] + dout[s:e]
                xp.multiply(dht, K[s:e], out=DZ[s:e])
                xp.matmul(DZ[s:e], whh, out=dh[:b])
        # DZ: gradient of the hidden-side gates; DI: of the input-side ones (GRU's n differs)
        if gru:
            DI = DZ.copy()
            xp.multiply(DH, Kn, out=DI[:, H2:])
        else:
            DI = DZ
        if order is not None:  # back to torch's gate order
            inv = xp.argsort(order)
            DZ = DZ[:, inv]
            DI = DZ
        edges = self.next_functions
        X = x._data.reshape(N, -1).astype(cnp, copy=False)
        grads = [None] * len(edges)
        if edges[0][0] is not None:
            grads[0] = (DI @ w_ih._data.astype(cnp, copy=False)).reshape(x.shape)
        if edges[1][0] is not None:
            grads[1] = DI.T @ X
        if edges[2][0] is not None:
            grads[2] = DZ.T @ HP
        if edges[3][0] is not None:
            grads[3] = DI.sum(0)
        if edges[4][0] is not None:
            grads[4] = DZ.sum(0)
        grads[5] = dh
        if lstm:
            grads[6] = dc
            if w_hr is not None and edges[7][0] is not None:
                # h = (o tanh c) W_hr^T: its gradient from the step gradients before W_hr
                HH = A[:, :H] * self._saved_tanh_c
                grads[7] = DH.T @ HH
        return tuple(None if a is None else wrap(a.astype(dt.np, copy=False)) for a in grads)

    def _composite_backward(self, g_out, g_h, g_c):
        # the layer again as recorded ops on the saved inputs, differentiated with its graph
        from ..autograd import engine
        inputs = (self._saved_input, self._saved_weight0, self._saved_weight1,
                  self._saved_weight2, self._saved_weight3, self._saved_hx, self._saved_cx,
                  self._saved_weight4)[:len(self.next_functions)]
        need = [i for i, (fn, _) in enumerate(self.next_functions) if fn is not None]
        x, w_ih, w_hh, b_ih, b_hh, h0, c0 = inputs[:7]
        w_hr = inputs[7] if len(inputs) > 7 else None
        out, h, c = _composite_direction(self._saved_mode, x, self._saved_sizes, h0, c0,
                                         (w_ih, w_hh, b_ih, b_hh, w_hr), self._saved_reverse)
        outs, gs = ((out, h, c), (g_out, g_h, g_c)) if c is not None else \
            ((out, h), (g_out, g_h))
        found = engine.grad(outs, [inputs[i] for i in need], gs, create_graph=True,
                            allow_unused=True)
        grads = [None] * len(inputs)
        for i, g in zip(need, found):
            grads[i] = g
        return tuple(grads)


# ============================================================================= composite path
# The same layer as recorded per-step ops, for tracers (see the module docstring).

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


def _composite_direction(mode, data, sizes, h0, c0, weights, reverse):
    """One layer in one direction as recorded ops; returns (outputs, h_n, c_n)."""
    gt = _ops()
    padded = data.dim() == 3
    flat = data.reshape(-1, data.shape[-1]) if padded else data
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    xproj = _input_projection(mode, flat, w_ih, b_ih, b_hh)
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
    out = gt.cat(outs, 0) if T else flat.new_zeros((0, h0.shape[1]))
    if padded:
        out = out.view(data.shape[:-1] + (out.shape[-1],))
    return out, h, c


# ============================================================================= the stack

def _rnn_stack(mode, data, sizes, h0, c0, params, has_biases, num_layers, dropout, train,
               bidirectional):
    """Every layer and direction over ``data``, padded ``(T, B, features)`` or packed
    ``(rows, features)`` with ``sizes``; the output has the input's rank, the final states
    are stacked like torch's."""
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
    direction = (_composite_direction if _traced(mode, data, h0, c0, *params)
                 else _fused_direction)
    hs, cs = [], []
    x = data
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            idx = layer * dirs + d
            ws = params[idx * per:(idx + 1) * per]
            w_hr = ws[-1] if proj else None
            b_ih, b_hh = (ws[2], ws[3]) if has_biases else (None, None)
            out, h, c = direction(mode, x, sizes, h0[idx], c0[idx] if lstm else None,
                                  (ws[0], ws[1], b_ih, b_hh, w_hr), d == 1)
            outs.append(out)
            hs.append(h)
            if lstm:
                cs.append(c)
        x = outs[0] if dirs == 1 else gt.cat(outs, -1)
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
        x, batch_first = data, False
    else:
        inp, hx, params, has_biases, num_layers, dropout, train, bidir, batch_first = args
        if inp.dim() != 3:
            raise RuntimeError(f"input must have 3 dimensions, got {inp.dim()}")
        x = inp.transpose(0, 1) if batch_first else inp
        sizes = [x.shape[1]] * x.shape[0]
    h0, c0 = (hx[0], hx[1]) if lstm else (hx, None)
    out, h_n, c_n = _rnn_stack(mode, x, sizes, h0, c0, list(params), has_biases,
                               num_layers, float(dropout), train, bidir)
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


# ============================================================================= cells

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
