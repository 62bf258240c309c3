"""Recurrent layers: RNN (tanh/relu), LSTM (with projections), GRU, and their cells.

The modules hold torch's parameters and check arguments; the computation is the
torch.lstm/gru/rnn_* kernels (``glasstorch._ops.rnn``): one fused kernel and one graph node
per layer and direction, over a padded or a packed batch.
"""

from __future__ import annotations

import math
import numbers
import warnings

import glasstorch as _gt
from glasstorch._ops import rnn as _k

from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _init_uniform(module, hidden_size):
    stdv = 1.0 / math.sqrt(hidden_size) if hidden_size > 0 else 0
    with _gt.no_grad():
        for w in module.parameters():
            w.uniform_(-stdv, stdv)


class RNNBase(Module):
    """Base of RNN, LSTM and GRU: parameters, argument checks and the layer loop."""

    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias",
                     "batch_first", "dropout", "bidirectional", "proj_size"]
    __jit_unused_properties__ = ["all_weights"]

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0,
                 device=None, dtype=None):
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        if (not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1
                or isinstance(dropout, bool)):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=2)
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: "
                            f"{type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError(f"Unrecognized RNN mode: {mode}")
        gate_size = _GATES[mode] * hidden_size
        kw = {"device": device, "dtype": dtype}
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                real_hidden = proj_size if proj_size > 0 else hidden_size
                layer_input = input_size if layer == 0 else real_hidden * num_directions
                params = [Parameter(_gt.empty((gate_size, layer_input), **kw)),
                          Parameter(_gt.empty((gate_size, real_hidden), **kw))]
                if bias:
                    params += [Parameter(_gt.empty(gate_size, **kw)),
                               Parameter(_gt.empty(gate_size, **kw))]
                if proj_size > 0:
                    params.append(Parameter(_gt.empty((proj_size, hidden_size), **kw)))
                suffix = "_reverse" if direction == 1 else ""
                names = ["weight_ih_l{}{}", "weight_hh_l{}{}"]
                if bias:
                    names += ["bias_ih_l{}{}", "bias_hh_l{}{}"]
                if proj_size > 0:
                    names.append("weight_hr_l{}{}")
                names = [n.format(layer, suffix) for n in names]
                for name, p in zip(names, params):
                    setattr(self, name, p)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, n, None) for n in self._flat_weights_names]

    def __getstate__(self):
        # torch's RNN modules keep this list in their __dict__ and read it after unpickling
        state = super().__getstate__()
        state["_flat_weights"] = self._flat_weights
        return state

    def __setstate__(self, state):
        state = dict(state)
        for derived in ("_flat_weights", "_flat_weight_refs"):  # a property here
            state.pop(derived, None)
        super().__setstate__(state)

    @property
    def all_weights(self):
        """Parameters grouped per layer and direction, in torch's order."""
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def flatten_parameters(self):
        """No-op: there is no fused cuDNN weight buffer to compact here."""

    def reset_parameters(self):
        """Draw every weight and bias from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as torch
        does."""
        _init_uniform(self, self.hidden_size)

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # --------------------------------------------------------------------- checks
    def _check_input(self, input, batch_sizes):
        w = getattr(self, self._flat_weights_names[0])
        if input.dtype != w.dtype:
            raise ValueError(f"{type(self).__name__} input dtype ({input.dtype}) does not "
                             f"match weight dtype ({w.dtype}). Convert input: "
                             f"input.to({w.dtype}), or convert model: model.to({input.dtype})")
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if self.input_size != input.shape[-1]:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")

    def _hidden_shape(self, input, batch_sizes, size):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.shape[1]  # already time-major here
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, size)

    @staticmethod
    def _check_hidden(hx, expected, msg="Expected hidden size {}, got {}"):
        if tuple(hx.shape) != expected:
            raise RuntimeError(msg.format(expected, list(hx.shape)))

    # torch's public helpers (subclasses in user code call them); ``input`` as given
    def check_input(self, input, batch_sizes):
        """Raise torch's errors for an input of the wrong dtype, rank or feature size."""
        self._check_input(input, batch_sizes)

    def get_expected_hidden_size(self, input, batch_sizes):
        """``(num_layers * num_directions, batch, hidden)`` for this input."""
        if batch_sizes is not None:
            batch = int(batch_sizes[0])
        else:
            batch = input.shape[0] if self.batch_first else input.shape[1]
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * (2 if self.bidirectional else 1), batch, size)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        """Raise RuntimeError (with ``msg``) unless ``hx`` has the expected shape."""
        self._check_hidden(hx, tuple(expected_hidden_size), msg)

    def check_forward_args(self, input, hidden, batch_sizes):
        """Check the input's size and the initial hidden state's shape; raise RuntimeError naming
        the mismatch."""
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        """Reorder the batch dimension of the state (None permutation: unchanged)."""
        return hx if permutation is None else hx.index_select(1, permutation)

    # --------------------------------------------------------------------- forward
    def _layers(self, data, sizes, h0, c0):
        """Every layer and direction over ``data``, padded (T, B, features) or packed."""
        return _k._rnn_stack(self.mode, data, sizes, h0, c0, self._flat_weights, self.bias,
                             self.num_layers, self.dropout, self.training, self.bidirectional)

    def _forward(self, input, hx):
        lstm = self.mode == "LSTM"
        name = type(self).__name__
        is_packed = isinstance(input, PackedSequence)
        batched = True
        if is_packed:
            data, batch_sizes, sorted_indices, unsorted_indices = input
            sizes = [int(b) for b in batch_sizes._data]
        else:
            batch_sizes = sorted_indices = unsorted_indices = None
            if input.dim() not in (2, 3):
                extra = "" if lstm or self.mode == "GRU" else " tensor"
                raise ValueError(f"{name}: Expected input to be 2D or 3D, got "
                                 f"{input.dim()}D{extra} instead")
            batched = input.dim() == 3
            if not batched:
                input = input.unsqueeze(1)
            elif self.batch_first:
                input = input.transpose(0, 1)
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        if hx is not None:
            if not batched:
                hs = hx if lstm else (hx,)
                for h in hs:
                    if h.dim() != 2:
                        raise RuntimeError(f"For unbatched 2-D input, hx and cx should also be "
                                           f"2-D but got ({hs[0].dim()}-D, {hs[-1].dim()}-D) "
                                           f"tensors" if lstm else
                                           f"For unbatched 2-D input, hx should also be 2-D but "
                                           f"got {h.dim()}-D tensor")
                hx = tuple(h.unsqueeze(1) for h in hx) if lstm else hx.unsqueeze(1)
            elif not lstm and hx.dim() != 3:
                raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got "
                                   f"{hx.dim()}-D tensor")
            elif lstm and (hx[0].dim() != 3 or hx[1].dim() != 3):
                raise RuntimeError(f"For batched 3-D input, hx and cx should also be 3-D but "
                                   f"got ({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
            if sorted_indices is not None:  # states follow the sorted batch
                hx = (tuple(h.index_select(1, sorted_indices) for h in hx) if lstm
                      else hx.index_select(1, sorted_indices))
        x = data if is_packed else input
        self._check_input(x, batch_sizes)
        if not is_packed:
            sizes = [x.shape[1]] * x.shape[0]
        if hx is None:
            shape = self._hidden_shape(x, batch_sizes, real_hidden)
            h0 = _gt.zeros(shape, dtype=x.dtype)
            c0 = _gt.zeros(shape[:2] + (self.hidden_size,), dtype=x.dtype) if lstm else None
        elif lstm:
            h0, c0 = hx
            self._check_hidden(h0, self._hidden_shape(x, batch_sizes, real_hidden),
                               "Expected hidden[0] size {}, got {}")
            self._check_hidden(c0, self._hidden_shape(x, batch_sizes, self.hidden_size),
                               "Expected hidden[1] size {}, got {}")
        else:
            h0, c0 = hx, None
            self._check_hidden(h0, self._hidden_shape(x, batch_sizes, real_hidden))
        out, h_n, c_n = self._layers(x, sizes, h0, c0)
        if unsorted_indices is not None:
            h_n = h_n.index_select(1, unsorted_indices)
            if lstm:
                c_n = c_n.index_select(1, unsorted_indices)
        if is_packed:
            output = PackedSequence(out, batch_sizes, sorted_indices, unsorted_indices)
        else:
            output = out
            if not batched:
                output = output.squeeze(1)
                h_n = h_n.squeeze(1)
                if lstm:
                    c_n = c_n.squeeze(1)
            elif self.batch_first:
                output = output.transpose(0, 1)
        return output, ((h_n, c_n) if lstm else h_n)

    def forward(self, input, hx=None):
        return self._forward(input, hx)


class RNN(RNNBase):
    """Elman RNN: ``h_t = act(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)``."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' "
                             f"or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def __setattr__(self, name, value):
        # Module.__init__ has not run when the nonlinearity is stored
        if name == "nonlinearity" and "_parameters" not in self.__dict__:
            object.__setattr__(self, name, value)
        else:
            super().__setattr__(name, value)


class LSTM(RNNBase):
    """Long short-term memory, optionally with a projection of the hidden state."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes):
        """``(num_layers * num_directions, batch, hidden_size)`` for this input."""
        shape = self.get_expected_hidden_size(input, batch_sizes)
        return shape[:2] + (self.hidden_size,)

    def check_forward_args(self, input, hidden, batch_sizes):
        """Check the input and both parts of the ``(h_0, c_0)`` state against the expected
        shapes."""
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return hx[0].index_select(1, permutation), hx[1].index_select(1, permutation)

    def forward(self, input, hx=None):
        return self._forward(input, hx)


class GRU(RNNBase):
    """Gated recurrent unit."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward(input, hx)


# ----------------------------------------------------------------------------- cells

class RNNCellBase(Module):
    """Parameters and checks shared by RNNCell, LSTMCell and GRUCell."""

    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        kw = {"device": device, "dtype": dtype}
        self.weight_ih = Parameter(_gt.empty((num_chunks * hidden_size, input_size), **kw))
        self.weight_hh = Parameter(_gt.empty((num_chunks * hidden_size, hidden_size), **kw))
        if bias:
            self.bias_ih = Parameter(_gt.empty(num_chunks * hidden_size, **kw))
            self.bias_hh = Parameter(_gt.empty(num_chunks * hidden_size, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self):
        """Draw every weight and bias from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        _init_uniform(self, self.hidden_size)

    def _prepare(self, input, hx, n_states):
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D "
                             f"instead")
        states = hx if n_states == 2 and hx is not None else (hx,)
        if hx is not None:
            for h in states:
                if h.dim() not in (1, 2):
                    raise ValueError(f"{name}: Expected hidden to be 1D or 2D, got "
                                     f"{h.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        if input.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} "
                               f"expected {self.input_size}")
        if hx is None:
            z = _gt.zeros((input.shape[0], self.hidden_size), dtype=input.dtype)
            states = (z,) * n_states
        else:
            states = tuple(h if batched else h.unsqueeze(0) for h in states)
        for i, h in enumerate(states):
            if h.shape[0] != input.shape[0]:
                raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match "
                                   f"hidden{i} batch size {h.shape[0]}")
            if h.shape[1] != self.hidden_size:
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {h.shape[1]}, "
                                   f"expected {self.hidden_size}")
        return input, states, batched

class RNNCell(RNNCellBase):
    """One Elman RNN step."""

    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device,
                         dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        input, (h,), batched = self._prepare(input, hx, 1)
        cell = _k.rnn_tanh_cell if self.nonlinearity == "tanh" else _k.rnn_relu_cell
        h = cell(input, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step; returns ``(h', c')``."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device,
                         dtype=dtype)

    def forward(self, input, hx=None):
        input, (h, c), batched = self._prepare(input, hx, 2)
        h, c = _k.lstm_cell(input, (h, c), self.weight_ih, self.weight_hh, self.bias_ih,
                            self.bias_hh)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device,
                         dtype=dtype)

    def forward(self, input, hx=None):
        input, (h,), batched = self._prepare(input, hx, 1)
        h = _k.gru_cell(input, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return h if batched else h.squeeze(0)
