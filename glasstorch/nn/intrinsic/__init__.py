"""``torch.nn.intrinsic``: alias of ``torch.ao.nn.intrinsic`` (same classes)."""

from glasstorch.ao.nn.intrinsic import *  # noqa: F401,F403
from glasstorch.ao.nn.intrinsic import __all__  # noqa: F401

from . import quantized  # noqa: F401,E402
