"""glasstorch.accelerator: the current accelerator, answered truthfully (none yet)."""

from __future__ import annotations

__all__ = ["is_available", "current_accelerator", "device_count", "current_device_index",
           "synchronize"]


def is_available() -> bool:
    """False: glasstorch runs on the CPU only."""
    return False


def current_accelerator(check_available: bool = False):
    """None: glasstorch runs on the CPU (torch returns None when there is no accelerator)."""
    return None


def device_count() -> int:
    """0: there is no accelerator."""
    return 0


def current_device_index() -> int:
    """RuntimeError: there is no accelerator."""
    raise RuntimeError("glasstorch has no accelerator: glasstorch.accelerator.is_available() is "
                       "False")


def synchronize(device=None) -> None:
    """Nothing to wait for on the CPU."""
