"""Utilities mirroring ``torch.utils``; ``glasstorch.utils.data`` holds the DataLoader."""

from . import data  # noqa: F401
from .summary import summary  # noqa: E402,F401  (a function, like torchinfo.summary)
