"""Padding modules: Zero/Constant/Reflection/Replication/Circular Pad 1d/2d/3d
(torch.nn.modules.padding)."""

from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d",
           "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d",
           "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d",
           "ZeroPad1d", "ZeroPad2d", "ZeroPad3d"]


def _ntuple(v, n):
    return tuple(v) if isinstance(v, (list, tuple)) else (v,) * n


class _PadNd(Module):
    __constants__ = ["padding"]
    _mode = "constant"
    _nd = 1

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _ntuple(padding, 2 * self._nd)

    def _check_input_dim(self, input):
        n = self._nd
        if input.dim() not in (n + 1, n + 2):
            raise ValueError(f"expected {n + 1}D or {n + 2}D input (got {input.dim()}D input)")

    def forward(self, input):
        if self._mode == "circular":
            self._check_input_dim(input)
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    __constants__ = ["padding", "value"]

    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


def _make(name, base, mode, nd, doc):
    return type(name, (base,), {"_mode": mode, "_nd": nd, "__doc__": doc,
                                "__module__": __name__})


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with a constant."""
    _nd = 1


class ConstantPad2d(_ConstantPadNd):
    """Pad the last 2 dims with a constant."""
    _nd = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last 3 dims with a constant."""
    _nd = 3


class _ZeroPad:
    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        """The padding, as torch prints it."""
        return f"{self.padding}"


class ZeroPad1d(_ZeroPad, ConstantPad1d):
    """Pad the last dim with zeros."""


class ZeroPad2d(_ZeroPad, ConstantPad2d):
    """Pad the last 2 dims with zeros."""


class ZeroPad3d(_ZeroPad, ConstantPad3d):
    """Pad the last 3 dims with zeros."""


ReflectionPad1d = _make("ReflectionPad1d", _PadNd, "reflect", 1, "Reflect the last dim.")
ReflectionPad2d = _make("ReflectionPad2d", _PadNd, "reflect", 2, "Reflect the last 2 dims.")
ReflectionPad3d = _make("ReflectionPad3d", _PadNd, "reflect", 3, "Reflect the last 3 dims.")
ReplicationPad1d = _make("ReplicationPad1d", _PadNd, "replicate", 1,
                         "Repeat the edge values of the last dim.")
ReplicationPad2d = _make("ReplicationPad2d", _PadNd, "replicate", 2,
                         "Repeat the edge values of the last 2 dims.")
ReplicationPad3d = _make("ReplicationPad3d", _PadNd, "replicate", 3,
                         "Repeat the edge values of the last 3 dims.")
CircularPad1d = _make("CircularPad1d", _PadNd, "circular", 1, "Wrap the last dim around.")
CircularPad2d = _make("CircularPad2d", _PadNd, "circular", 2, "Wrap the last 2 dims around.")
CircularPad3d = _make("CircularPad3d", _PadNd, "circular", 3, "Wrap the last 3 dims around.")
