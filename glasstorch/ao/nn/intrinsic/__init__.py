"""``torch.ao.nn.intrinsic``: fused float modules, and their quantized forms in
``intrinsic.quantized``."""

from . import qat, quantized  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _all
from .modules.fused import _FusedModule  # noqa: F401

__all__ = list(_all) + ["qat", "quantized"]
