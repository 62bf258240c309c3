"""``torch.nn.quantized.dynamic``: alias of ``torch.ao.nn.quantized.dynamic``."""

from glasstorch.ao.nn.quantized.dynamic import *  # noqa: F401,F403
from glasstorch.ao.nn.quantized.dynamic import __all__  # noqa: F401
