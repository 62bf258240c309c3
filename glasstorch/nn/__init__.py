"""glasstorch.nn: modules, parameters, functional, init and utilities (torch.nn)."""

from . import attention, functional, init, parallel
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all
from .parallel import DataParallel
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer",
           "attention", "functional", "init", "parallel", "DataParallel"] + list(_modules_all)


def __getattr__(name):
    # utils is imported lazily: it depends on modules that import glasstorch.nn
    if name == "utils":
        import importlib
        return importlib.import_module(f"{__name__}.utils")
    raise AttributeError(f"module 'glasstorch.nn' has no attribute '{name}'")
