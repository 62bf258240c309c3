"""Fused float modules."""

from .fused import *  # noqa: F401,F403
from .fused import __all__ as _fused_all

__all__ = [n for n in _fused_all if not n.startswith("_")]
