"""Process-wide switches: threads, determinism, matmul precision, the C allocator's tuning."""

from __future__ import annotations

import os

__all__ = ["set_num_threads", "get_num_threads", "set_num_interop_threads",
           "get_num_interop_threads", "use_deterministic_algorithms",
           "are_deterministic_algorithms_enabled", "is_deterministic_algorithms_warn_only_enabled",
           "set_float32_matmul_precision", "get_float32_matmul_precision", "set_flush_denormal",
           "set_default_device", "get_default_device"]

_state = {"deterministic": False, "warn_only": False, "matmul_precision": "highest",
          "interop_threads": 1, "threads": None}


def _threadpool():
    try:
        import threadpoolctl
    except ImportError:
        return None
    return threadpoolctl


def set_default_device(device) -> None:
    """Where factory functions (zeros, randn, ...) create tensors when no ``device`` is given;
    None restores the CPU. Any device but the CPU makes those calls fail here, as in a CPU-only
    torch build."""
    from ._core import device as _device
    _device.default_device[0] = None if device is None else _device.device(device)


def get_default_device():
    """The device set by ``set_default_device`` (the CPU unless changed)."""
    from ._core import device as _device
    return _device.default_device[0] or _device.CPU


def set_num_threads(n: int) -> None:
    """Limit the BLAS thread pool (through threadpoolctl when installed)."""
    if not isinstance(n, int) or n <= 0:
        raise RuntimeError(f"set_num_threads expects a positive integer, but got {n}")
    _state["threads"] = n
    tpc = _threadpool()
    if tpc is not None:
        tpc.threadpool_limits(n)


def get_num_threads() -> int:
    """The BLAS thread count: the last ``set_num_threads`` value, else what threadpoolctl reports,
    else the CPU count."""
    if _state["threads"] is not None:
        return _state["threads"]
    tpc = _threadpool()
    if tpc is not None:
        infos = [i["num_threads"] for i in tpc.threadpool_info() if i.get("user_api") == "blas"]
        if infos:
            return max(infos)
    return os.cpu_count() or 1


def set_num_interop_threads(n: int) -> None:
    """Recorded only: glasstorch runs one operator at a time, so there is no inter-op pool."""
    _state["interop_threads"] = n


def get_num_interop_threads() -> int:
    """The value last given to ``set_num_interop_threads`` (1 by default)."""
    return _state["interop_threads"]


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Accepted; every glasstorch kernel is already deterministic on the CPU."""
    _state["deterministic"] = bool(mode)
    _state["warn_only"] = bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    """The flag set by ``use_deterministic_algorithms``."""
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """The ``warn_only`` flag set by ``use_deterministic_algorithms``."""
    return _state["warn_only"]


def set_float32_matmul_precision(precision: str) -> None:
    """Recorded for compatibility ('highest', 'high' or 'medium'); float32 matrix products always
    run in full float32 precision here."""
    if precision not in ("highest", "high", "medium"):
        raise RuntimeError(f"Invalid precision: {precision}. Expected one of 'highest', 'high', "
                           f"'medium'")
    _state["matmul_precision"] = precision


def get_float32_matmul_precision() -> str:
    """The value last given to ``set_float32_matmul_precision`` ('highest' by default)."""
    return _state["matmul_precision"]


def set_flush_denormal(mode: bool) -> bool:
    """Not supported by NumPy; returns False like torch on unsupported CPUs."""
    return False


# glibc's malloc serves large blocks with mmap and gives freed heap back to the system, so a
# training step that frees and re-allocates the same few-MB temporaries every op pays page
# faults for each (measured: 15-20% of a CNN step in system time). Fixed thresholds keep such
# blocks in the heap for reuse. Opt out with GLASSTORCH_MALLOC_TUNING=0.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
MMAP_THRESHOLD = 64 << 20  # blocks above this still come from (and return to) mmap
TRIM_THRESHOLD = 256 << 20  # free heap kept for reuse before it is returned


def _tune_malloc():
    """Set glibc's mmap and trim thresholds; returns whether they were set."""
    if os.environ.get("GLASSTORCH_MALLOC_TUNING", "1").strip().lower() in ("0", "false", "off"):
        return False
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc"):
            return False
    except (AttributeError, ValueError, OSError):  # not a glibc system
        return False
    import ctypes
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
                and mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))


_malloc_tuned = _tune_malloc()
