"""torchinfo: summary tables of a CNN, an LSTM model and a nested model, as text."""

from importlib.metadata import version as _dist_version

import torch
import torchinfo
from torch import nn

from .._support import case, randint


def version():
    """The version of the library under test."""
    return _dist_version("torchinfo")


class SmallCNN(nn.Module):
    """Conv/BatchNorm/pool/linear: the classic summary."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1, bias=False), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.head = nn.Linear(16, 10)

    def forward(self, x):
        return self.head(torch.flatten(self.features(x), 1))


class LSTMTagger(nn.Module):
    """Embedding/LSTM/linear: layers whose parameter names torchinfo walks."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(50, 12)
        self.lstm = nn.LSTM(12, 16, num_layers=2, batch_first=True, bidirectional=True)
        self.out = nn.Linear(32, 5)

    def forward(self, tokens):
        h, _ = self.lstm(self.embed(tokens))
        return self.out(h)


class Block(nn.Module):
    """A residual block with a frozen norm, so trainable and total parameters differ."""

    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
        for p in self.norm.parameters():
            p.requires_grad_(False)

    def forward(self, x):
        return x + self.mlp(self.norm(x))


@case
def cnn(ctx):
    """summary(model, input_size=...) with the default columns."""
    stats = torchinfo.summary(SmallCNN(), input_size=(2, 3, 16, 16), verbose=0)
    return {"text": str(stats), "total_params": stats.total_params,
            "trainable_params": stats.trainable_params,
            "total_mult_adds": stats.total_mult_adds}


@case
def lstm(ctx):
    """summary with input_data of int tokens, more columns and depth."""
    stats = torchinfo.summary(
        LSTMTagger(), input_data=randint(0, 50, 2, 7), verbose=0, depth=4,
        col_names=("input_size", "output_size", "num_params", "kernel_size", "mult_adds",
                   "trainable"))
    return {"text": str(stats), "total_params": stats.total_params}


@case
def nested(ctx):
    """Nested blocks, frozen parameters, row settings with variable names."""
    model = nn.Sequential(nn.Linear(6, 8), Block(8), Block(8), nn.Linear(8, 3))
    stats = torchinfo.summary(model, input_size=(4, 6), verbose=0,
                              col_names=("output_size", "num_params", "params_percent",
                                         "trainable"),
                              row_settings=("var_names", "depth"))
    return {"text": str(stats), "total_params": stats.total_params,
            "trainable_params": stats.trainable_params}
