"""``torch.ao``: architecture optimisation; here, quantization (``ao.quantization``) and
the quantized modules (``ao.nn``)."""

import importlib

__all__ = ["nn", "quantization"]


def __getattr__(name):
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
