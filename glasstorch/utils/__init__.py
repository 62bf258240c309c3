"""Utilities mirroring ``torch.utils``; ``glasstorch.utils.data`` holds the DataLoader."""

from . import data  # noqa: F401
