"""``torch.nn.intrinsic.quantized``: alias of ``torch.ao.nn.intrinsic.quantized``."""

from glasstorch.ao.nn.intrinsic.quantized import *  # noqa: F401,F403
from glasstorch.ao.nn.intrinsic.quantized import __all__  # noqa: F401
