"""``torch.ao.nn.quantized``: modules computing on quantized tensors with int8 kernels."""

from . import dynamic  # noqa: F401
from .modules import *  # noqa: F403
from .modules import __all__ as _modules_all

__all__ = [*_modules_all, "dynamic"]
