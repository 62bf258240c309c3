"""``torch.nn.quantized``: alias of ``torch.ao.nn.quantized`` (same classes)."""

from glasstorch.ao.nn.quantized import *  # noqa: F401,F403
from glasstorch.ao.nn.quantized import __all__  # noqa: F401

from . import dynamic  # noqa: F401,E402
