"""Every module class, one file per family as in torch.nn.modules.

Each file's ``__all__`` is re-exported here (and from ``glasstorch.nn``).
"""

import importlib
import pkgutil

from .container import *  # noqa: F401,F403
from .container import __all__ as _container_all
from .module import Module

__all__ = ["Module"] + list(_container_all)


def _export_families():
    for info in pkgutil.iter_modules(__path__):  # noqa: F405
        if info.name.startswith("_") or info.name in ("module", "container"):
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        for name in getattr(mod, "__all__", ()):
            globals()[name] = getattr(mod, name)
            __all__.append(name)


_export_families()
