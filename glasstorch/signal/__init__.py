"""glasstorch.signal: signal processing, mirroring torch.signal (its ``windows``)."""

from . import windows

__all__ = ["windows"]
