"""Dynamically quantized modules: float in, float out, int8 weights."""

from .linear import Linear
from .rnn import GRU, LSTM

__all__ = ["Linear", "LSTM", "GRU"]
