"""torch.cuda.nvtx: NVIDIA's profiler annotations. They need a CUDA build: every call raises
RuntimeError, as on torch's CPU build."""

from __future__ import annotations

import contextlib

__all__ = ["range_push", "range_pop", "range_start", "range_end", "mark", "range"]

_MESSAGE = "NVTX functions not installed. Are you sure you have a CUDA build?"


def range_push(msg):
    """Open a nested NVTX range: RuntimeError without CUDA."""
    raise RuntimeError(_MESSAGE)


def range_pop():
    """Close the innermost NVTX range: RuntimeError without CUDA."""
    raise RuntimeError(_MESSAGE)


def range_start(msg) -> int:
    """Start an NVTX range that may span threads: RuntimeError without CUDA."""
    raise RuntimeError(_MESSAGE)


def range_end(range_id) -> None:
    """End a range from ``range_start``: RuntimeError without CUDA."""
    raise RuntimeError(_MESSAGE)


def mark(msg):
    """Mark an instant event: RuntimeError without CUDA."""
    raise RuntimeError(_MESSAGE)


@contextlib.contextmanager
def range(msg, *args, **kwargs):  # noqa: A001 (torch's name)
    """``with nvtx.range("step"):`` pushes a range around the block: RuntimeError on entry
    without CUDA."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
