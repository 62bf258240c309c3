"""Dynamically quantized modules: float in, float out, int8 weights."""

from .linear import Linear
from .rnn import LSTM

__all__ = ["Linear", "LSTM"]
