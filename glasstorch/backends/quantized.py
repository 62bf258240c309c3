"""``torch.backends.quantized``: which engine runs quantized kernels. glasstorch's int8
kernels reproduce the x86/fbgemm arithmetic, so those are the engines it offers."""

from __future__ import annotations

import sys
import types

_ENGINES = ["x86", "fbgemm"]


class QuantizedEngine(types.ModuleType):
    """The module object: ``engine`` (settable) and ``supported_engines``."""

    _engine = "x86"

    @property
    def engine(self) -> str:
        """The engine quantized ops use ('x86' by default)."""
        return type(self)._engine

    @engine.setter
    def engine(self, value):
        if value not in _ENGINES:
            raise RuntimeError(f"{value} is not a valid value for quantized engine")
        type(self)._engine = value

    @property
    def supported_engines(self) -> list:
        """The engines this build has kernels for."""
        return list(_ENGINES)


sys.modules[__name__].__class__ = QuantizedEngine
