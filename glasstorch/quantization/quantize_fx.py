"""``torch.quantization.quantize_fx``: the old home of ``torch.ao.quantization.quantize_fx``."""

from glasstorch.ao.quantization.quantize_fx import *  # noqa: F401,F403
from glasstorch.ao.quantization.quantize_fx import __all__  # noqa: F401
