"""Process-wide switches: threads, determinism, matmul precision, the C allocator's tuning."""

from __future__ import annotations

import os
import sys

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


# OpenBLAS's idle pool threads spin for 2^28 cycles (~0.1 s) before they sleep. Beside another
# CPU-bound process that spinning takes the core the one thread still working needs, and every
# parallel BLAS call then lasts a scheduler time slice: the digits example ran 5-20x slower
# beside a busy loop on 2 cores. 2^4 cycles (the least OpenBLAS accepts) makes idle threads
# sleep at once, as GOMP does when cores are oversubscribed. A default only: a value the user
# set in OPENBLAS_THREAD_TIMEOUT is kept, and so are thread counts (threads are not limited).
BLAS_THREAD_TIMEOUT = "4"


def _quiet_blas_pool():
    """Set OPENBLAS_THREAD_TIMEOUT unless the user did; returns whether it was set."""
    if "OPENBLAS_THREAD_TIMEOUT" in os.environ:
        return False
    os.environ["OPENBLAS_THREAD_TIMEOUT"] = BLAS_THREAD_TIMEOUT
    if "numpy" in sys.modules:
        _reread_openblas_env()
    return True


def _reread_openblas_env():
    # NumPy loaded OpenBLAS first, which read its environment then: have it read it again
    # and restart its pool, which picks the timeout up when the next call starts it
    tpc = _threadpool()
    if tpc is None:
        return
    import ctypes
    for info in tpc.threadpool_info():
        if info.get("internal_api") != "openblas" or info.get("threading_layer") != "pthreads":
            continue
        try:
            lib = ctypes.CDLL(info["filepath"])
            read_env, shutdown = lib.openblas_read_env, lib.blas_thread_shutdown_
        except (OSError, AttributeError):
            continue
        read_env()
        shutdown()


_blas_pool_quieted = _quiet_blas_pool()
