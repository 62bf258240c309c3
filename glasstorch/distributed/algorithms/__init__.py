"""torch.distributed.algorithms: training algorithms built on the collectives (``join``)."""

from __future__ import annotations

from .join import Join, Joinable, JoinHook

__all__ = ["Join", "Joinable", "JoinHook"]
