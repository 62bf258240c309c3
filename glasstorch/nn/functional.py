"""glasstorch.nn.functional: torch.nn.functional's functions.

They are written in ``glasstorch/nn/_functional/`` by family (activation,
loss, conv, pooling, ...) over kernels in ``glasstorch/_ops``; this module
gathers every family's ``__all__`` so users find them where torch has them.
"""

import importlib
import pkgutil

from . import _functional

__all__ = []


def _export_families():
    for info in pkgutil.iter_modules(_functional.__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{_functional.__name__}.{info.name}")
        for name in getattr(mod, "__all__", ()):
            globals()[name] = getattr(mod, name)
            __all__.append(name)


_export_families()
