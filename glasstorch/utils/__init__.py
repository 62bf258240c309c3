"""Utilities mirroring ``torch.utils``; ``glasstorch.utils.data`` holds the DataLoader."""

from . import _foreach_utils, _pytree, data, dlpack, hooks  # noqa: F401  (as torch's)
from .summary import summary  # noqa: E402,F401  (a function, like torchinfo.summary)
