"""Dynamically quantized LSTM/GRU layers and cells (``torch.ao.nn.quantized.dynamic``): qint8
weights, each gate GEMM a dynamic int8 linear (``_kernels.linear_dynamic``), or float16
weights with float32 GEMMs (``_kernels.linear_dynamic_fp16``), the cell
arithmetic in float32 as torch's ``quantized_lstm``/``quantized_gru`` run it on the CPU.

As in torch on the CPU, each layer and direction projects its whole input sequence at once
(one set of input qparams per sequence), then steps through time.
"""

from __future__ import annotations

import glasstorch as torch
from glasstorch import nn

from ... import _kernels
from ...modules.linear import _fp16_weight
from ...modules.utils import _quantize_weight

__all__ = ["LSTM", "GRU", "LSTMCell", "GRUCell", "RNNCell"]


def _check_dtype(dtype):
    if dtype not in (torch.qint8, torch.float16):
        raise RuntimeError(f"Unsupported dtype: {dtype}")


def _packed(w, obs):
    """A gate weight as stored: qint8 by its observer, or float16 values (float16 packing)."""
    return _fp16_weight(w) if obs.dtype is torch.float16 else _quantize_weight(w.float(), obs)


def _gemm(x, w, b):
    """``x @ w.T + b`` as torch's dynamic kernel for ``w``'s packing computes it."""
    if w.dtype is torch.float32:
        return _kernels.linear_dynamic_fp16(x, w, b)
    return _kernels.linear_dynamic(x, w, b, reduce_range=True)


class _RNNBase(nn.Module):
    """The recurrent layers' shared parts: quantized weights per (layer, direction), the
    state_dict layout, and the loop over layers, directions and time; ``_cell`` is the
    mode's step."""

    _FLOAT_MODULE = ()
    _MODE = ""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, dtype=torch.qint8):
        super().__init__()
        _check_dtype(dtype)
        self.mode = self._MODE
        self.input_size, self.hidden_size = input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.dtype = float(dropout), bidirectional, dtype
        self.version = 2
        self._cells = []  # per (layer, direction): (w_ih, b_ih, w_hh, b_hh)

    def _get_name(self):
        return f"DynamicQuantized{self._MODE}"

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """Quantize each weight of float ``mod`` with a fresh weight observer of its
        qconfig (per-tensor symmetric qint8 by default)."""
        from glasstorch.ao.quantization.qconfig import default_dynamic_qconfig
        if getattr(mod, "proj_size", 0):
            raise NotImplementedError("glasstorch: a dynamic quantized LSTM with proj_size "
                                      "is not implemented")
        qconfig = getattr(mod, "qconfig", None) or default_dynamic_qconfig
        q = cls(mod.input_size, mod.hidden_size, mod.num_layers, mod.bias, mod.batch_first,
                mod.dropout, mod.bidirectional, qconfig.weight().dtype)
        for layer in range(mod.num_layers):
            for suffix in ("", "_reverse")[:2 if mod.bidirectional else 1]:
                parts = []
                for kind in ("ih", "hh"):
                    w = getattr(mod, f"weight_{kind}_l{layer}{suffix}")
                    obs = qconfig.weight()
                    obs(w)
                    b = getattr(mod, f"bias_{kind}_l{layer}{suffix}", None) if mod.bias else None
                    parts += [_packed(w, obs), None if b is None else b.detach().clone()]
                q._cells.append(tuple(parts))
        return q

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        # glasstorch's own layout (torch pickles opaque packed-weight objects here)
        i = 0
        for layer in range(self.num_layers):
            for suffix in ("", "_reverse")[:2 if self.bidirectional else 1]:
                w_ih, b_ih, w_hh, b_hh = self._cells[i]
                for name, v in (("weight_ih", w_ih), ("bias_ih", b_ih), ("weight_hh", w_hh),
                                ("bias_hh", b_hh)):
                    if v is not None:
                        destination[f"{prefix}{name}_l{layer}{suffix}"] = v
                i += 1

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        cells = []
        for layer in range(self.num_layers):
            for suffix in ("", "_reverse")[:2 if self.bidirectional else 1]:
                vals = []
                for name in ("weight_ih", "bias_ih", "weight_hh", "bias_hh"):
                    key = f"{prefix}{name}_l{layer}{suffix}"
                    if key in state_dict:
                        vals.append(state_dict.pop(key))
                    else:
                        if strict and (name.startswith("weight") or self.bias):
                            missing_keys.append(key)
                        vals.append(None)
                cells.append(tuple(vals))
        self._cells = cells
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys,
                                      unexpected_keys, error_msgs)

    def _run_direction(self, seq, state, params, reverse):
        w_ih, b_ih, w_hh, b_hh = params
        gxs = _gemm(seq, w_ih, b_ih)
        outs = []
        steps = range(seq.shape[0] - 1, -1, -1) if reverse else range(seq.shape[0])
        for t in steps:
            h = state[0]
            gates_h = _gemm(h, w_hh, b_hh)
            state = self._cell(gxs[t], gates_h, state)
            outs.append(state[0])
        if reverse:
            outs.reverse()
        return torch.stack(outs, 0), state

    def forward(self, input, hx=None):
        """(output, h_n) for a GRU, (output, (h_n, c_n)) for an LSTM, for float ``input``
        (L, N, H_in) (batch first if set; an unbatched (L, H_in) input works too)."""
        if not isinstance(input, torch.Tensor):
            raise NotImplementedError(f"glasstorch: packed sequences are not implemented for "
                                      f"the dynamic quantized {self._MODE}")
        unbatched = input.dim() == 2
        x = input.unsqueeze(1) if unbatched else (input.transpose(0, 1) if self.batch_first
                                                  else input)
        dirs = 2 if self.bidirectional else 1
        n_state = 2 if self._MODE == "LSTM" else 1
        if hx is None:
            zeros = torch.zeros(self.num_layers * dirs, x.shape[1], self.hidden_size)
            hx = (zeros,) * n_state
        elif n_state == 1:
            hx = (hx,)
        if unbatched:
            hx = tuple(h.unsqueeze(1) for h in hx)
        finals = [[] for _ in range(n_state)]
        layer_in = x
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                k = layer * dirs + d
                out, state = self._run_direction(layer_in, tuple(h[k] for h in hx),
                                                 self._cells[k], d == 1)
                outs.append(out)
                for acc, s in zip(finals, state):
                    acc.append(s)
            layer_in = torch.cat(outs, 2) if dirs == 2 else outs[0]
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_in = torch.nn.functional.dropout(layer_in, self.dropout, True)
        out = layer_in
        finals = tuple(torch.stack(f, 0) for f in finals)
        if unbatched:
            out, finals = out.squeeze(1), tuple(f.squeeze(1) for f in finals)
        elif self.batch_first:
            out = out.transpose(0, 1)
        return out, (finals if n_state == 2 else finals[0])


def _lstm_step(gates_x, gates_h, state):
    _, c = state
    i, f, g, o = (gates_x + gates_h).chunk(4, 1)
    i, f, g, o = torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)
    c = f * c + i * g
    return o * torch.tanh(c), c


def _gru_step(gates_x, gates_h, state):
    (h,) = state
    xr, xz, xn = gates_x.chunk(3, 1)
    hr, hz, hn = gates_h.chunk(3, 1)
    r = torch.sigmoid(xr + hr)
    z = torch.sigmoid(xz + hz)
    n = torch.tanh(xn + r * hn)
    return ((h - n) * z + n,)


class LSTM(_RNNBase):
    """An LSTM whose matrix products are dynamically quantized (float in, float out)."""

    _FLOAT_MODULE = (nn.LSTM,)
    _MODE = "LSTM"

    def _cell(self, gates_x, gates_h, state):
        return _lstm_step(gates_x, gates_h, state)


class GRU(_RNNBase):
    """A GRU whose matrix products are dynamically quantized (float in, float out)."""

    _FLOAT_MODULE = (nn.GRU,)
    _MODE = "GRU"

    def _cell(self, gates_x, gates_h, state):
        return _gru_step(gates_x, gates_h, state)


class _CellBase(nn.Module):
    """One recurrent step with dynamically quantized weights: ``forward(input, hx)`` on a
    (N, H_in) batch."""

    _FLOAT_MODULE = ()
    _NAME = ""
    _STATES = 1

    def __init__(self, input_size, hidden_size, bias=True, dtype=torch.qint8):
        super().__init__()
        _check_dtype(dtype)
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_dtype = dtype
        self._params = (None, None, None, None)  # w_ih, b_ih, w_hh, b_hh

    def _get_name(self):
        return f"DynamicQuantized{self._NAME}"

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """Quantize float cell ``mod``'s weights with fresh weight observers of its qconfig."""
        from glasstorch.ao.quantization.qconfig import default_dynamic_qconfig
        if not mod.bias:
            raise AssertionError("mod.bias must be True")  # torch quantizes biased cells only
        qconfig = getattr(mod, "qconfig", None) or default_dynamic_qconfig
        q = cls(mod.input_size, mod.hidden_size, mod.bias, dtype=qconfig.weight().dtype,
                **cls._float_kwargs(mod))
        parts = []
        for kind in ("ih", "hh"):
            w = getattr(mod, f"weight_{kind}")
            obs = qconfig.weight()
            obs(w)
            b = getattr(mod, f"bias_{kind}") if mod.bias else None
            parts += [_packed(w, obs), None if b is None else b.detach().clone()]
        q._params = tuple(parts)
        return q

    @staticmethod
    def _float_kwargs(mod):
        return {}

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        # glasstorch's own layout (torch pickles opaque packed-weight objects here)
        for name, v in zip(("weight_ih", "bias_ih", "weight_hh", "bias_hh"), self._params):
            if v is not None:
                destination[prefix + name] = v

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        self._params = tuple(state_dict.pop(prefix + name, None)
                             for name in ("weight_ih", "bias_ih", "weight_hh", "bias_hh"))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys,
                                      unexpected_keys, error_msgs)

    def forward(self, input, hx=None):
        """The next hidden state (``(h, c)`` for an LSTM cell) for float ``input`` (N, H_in)."""
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)}, "
                               f"expected {self.input_size}")
        if hx is None:
            zeros = torch.zeros(input.size(0), self.hidden_size)
            hx = (zeros,) * self._STATES
        elif self._STATES == 1:
            hx = (hx,)
        w_ih, b_ih, w_hh, b_hh = self._params
        gates_x = _gemm(input, w_ih, b_ih)
        gates_h = _gemm(hx[0], w_hh, b_hh)
        state = self._step(gates_x, gates_h, hx)
        return state if self._STATES == 2 else state[0]


class LSTMCell(_CellBase):
    """An LSTM cell whose matrix products are dynamically quantized."""

    _FLOAT_MODULE = (nn.LSTMCell,)
    _NAME = "LSTMCell"
    _STATES = 2

    def _step(self, gates_x, gates_h, state):
        return _lstm_step(gates_x, gates_h, state)


class GRUCell(_CellBase):
    """A GRU cell whose matrix products are dynamically quantized."""

    _FLOAT_MODULE = (nn.GRUCell,)
    _NAME = "GRUCell"

    def _step(self, gates_x, gates_h, state):
        return _gru_step(gates_x, gates_h, state)


class RNNCell(_CellBase):
    """An Elman RNN cell (tanh or relu) whose matrix products are dynamically quantized."""

    _FLOAT_MODULE = (nn.RNNCell,)
    _NAME = "RNNCell"

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh",
                 dtype=torch.qint8):
        super().__init__(input_size, hidden_size, bias, dtype)
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        self.nonlinearity = nonlinearity

    @staticmethod
    def _float_kwargs(mod):
        return {"nonlinearity": mod.nonlinearity}

    def _step(self, gates_x, gates_h, state):
        act = torch.tanh if self.nonlinearity == "tanh" else torch.relu
        return (act(gates_x + gates_h),)
