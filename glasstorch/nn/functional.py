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

# Helpers torch.nn.functional re-exports (torch.overrides, torch._jit_internal); not ops, so
# they stay out of __all__ and the dispatch point.
from .._tensor import Tensor  # noqa: E402,F401
from ..overrides import (  # noqa: E402,F401
    handle_torch_function,
    has_torch_function,
    has_torch_function_unary,
    has_torch_function_variadic,
)


def boolean_dispatch(arg_name, arg_index, default, if_true, if_false, module_name, func_name):
    """One function that calls ``if_true`` or ``if_false`` by the boolean argument
    ``arg_name`` (keyword, or positional at ``arg_index``; ``default`` when absent), as
    ``F.max_pool2d`` chooses whether to return indices."""
    def fn(*args, **kwargs):
        if arg_name in kwargs:
            flag = kwargs[arg_name]
        elif arg_index < len(args):
            flag = args[arg_index]
        else:
            flag = default
        return (if_true if flag else if_false)(*args, **kwargs)

    if if_true.__doc__ is None and if_false.__doc__ is not None:
        fn.__doc__ = if_false.__doc__
    else:
        fn.__doc__ = if_true.__doc__
    if module_name is not None:
        fn.__module__ = module_name
    if func_name is not None:
        fn.__name__ = fn.__qualname__ = func_name
    return fn


def assert_int_or_pair(arg, arg_name, message):
    """Assert that ``arg`` is an int or a pair (``message`` is formatted with ``arg_name``)."""
    assert isinstance(arg, int) or len(arg) == 2, message.format(arg_name)
