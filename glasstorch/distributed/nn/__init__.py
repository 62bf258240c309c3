"""torch.distributed.nn: differentiable collectives (``functional``)."""

from __future__ import annotations

from . import functional  # noqa: F401
from .functional import (  # noqa: F401
    all_gather,
    all_reduce,
    all_to_all,
    all_to_all_single,
    broadcast,
    gather,
    reduce,
    reduce_scatter,
    scatter,
)

__all__ = ["all_gather", "all_reduce", "all_to_all", "all_to_all_single", "broadcast", "gather",
           "reduce", "reduce_scatter", "scatter"]
