"""``torch.quantization``: the old home of ``torch.ao.quantization`` (same objects)."""

from glasstorch.ao.quantization import *  # noqa: F401,F403
from glasstorch.ao.quantization import __all__  # noqa: F401
