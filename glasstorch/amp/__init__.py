"""glasstorch.amp: automatic mixed precision (autocast and GradScaler), as torch.amp.

Importing it wraps the autocast-listed ops once (see ``autocast_mode``).
"""

from . import autocast_mode as _autocast_mode
from .autocast_mode import (  # noqa: F401
    autocast,
    custom_bwd,
    custom_fwd,
    is_autocast_available,
)
from .grad_scaler import GradScaler  # noqa: F401

__all__ = ["autocast", "custom_bwd", "custom_fwd", "is_autocast_available", "GradScaler"]

_autocast_mode.install()
