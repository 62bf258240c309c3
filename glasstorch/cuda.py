"""glasstorch.cuda: answers truthfully for this CPU build (no CUDA backend yet)."""

from __future__ import annotations

__all__ = ["is_available", "device_count", "manual_seed", "manual_seed_all", "synchronize",
           "current_device", "get_device_name", "is_bf16_supported", "set_device"]


def is_available() -> bool:
    """False: glasstorch has no CUDA backend yet."""
    return False


def device_count() -> int:
    """0: there is no CUDA device."""
    return 0


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False: there is no CUDA device."""
    return False


def manual_seed(seed: int) -> None:
    """A no-op without CUDA, as in torch (seeding code can run unchanged)."""


def manual_seed_all(seed: int) -> None:
    """A no-op without CUDA, as in torch."""


def _no_cuda(what):
    raise RuntimeError(f"glasstorch.cuda.{what}() needs a CUDA device, but glasstorch runs on "
                       "the CPU only for now (glasstorch.cuda.is_available() is False).")


def synchronize(device=None) -> None:
    """RuntimeError: there is no CUDA device to wait for."""
    _no_cuda("synchronize")


def current_device() -> int:
    """RuntimeError: there is no CUDA device."""
    _no_cuda("current_device")


def get_device_name(device=None) -> str:
    """RuntimeError: there is no CUDA device."""
    _no_cuda("get_device_name")


def set_device(device) -> None:
    """RuntimeError: there is no CUDA device."""
    _no_cuda("set_device")
