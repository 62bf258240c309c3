"""``torch.ao.nn.quantized.dynamic``: float-in/float-out modules with qint8 weights whose
input is quantized on the fly from its own range."""

from .modules import GRU, LSTM, GRUCell, Linear, LSTMCell, RNNCell

__all__ = ["Linear", "LSTM", "GRU", "LSTMCell", "GRUCell", "RNNCell"]
