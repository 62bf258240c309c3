"""glasstorch.cpu: torch.cpu, the CPU's answers to the per-device module protocol.

Code written for any accelerator reaches its device module as ``getattr(torch, device_type)``
(``torch.cuda``, ``torch.cpu``...) and calls ``is_available``, ``device_count``,
``set_device``, ``synchronize`` or its streams and events. On the CPU, as in torch, work runs
in order on one device: synchronizing has nothing to wait for, streams and events are
markers whose queries answer "done", and ``stream(s)`` only changes what
``current_stream()`` returns. ``torch.cpu.amp`` is the deprecated autocast spelling.
"""

from __future__ import annotations

import sys as _sys

from ..amp._device_amp import cpu_amp as amp

_sys.modules[__name__ + ".amp"] = amp

__all__ = ["is_available", "is_initialized", "synchronize", "current_device", "current_stream",
           "stream", "set_device", "device_count", "Stream", "StreamContext", "Event"]


def is_available() -> bool:
    """The CPU is always there."""
    return True


def is_initialized() -> bool:
    """The CPU needs no initialisation: always True."""
    return True


def synchronize(device=None) -> None:
    """Wait for the CPU's work: it has all run by the time this is called."""


def device_count() -> int:
    """One CPU device."""
    return 1


def current_device() -> str:
    """The CPU device's name, ``'cpu'``."""
    return "cpu"


def set_device(device) -> None:
    """Select the current CPU device: there is only one, so nothing changes."""


class Stream:
    """A CPU stream: work is issued in order on the CPU, so waits return at once."""

    def __init__(self, priority: int = -1) -> None:
        pass

    def wait_stream(self, stream) -> None:
        """Order after ``stream``'s work (already done on the CPU)."""

    def record_event(self) -> None:
        """Record an event on this stream (a no-op marker on the CPU)."""

    def wait_event(self, event) -> None:
        """Wait for ``event`` (already reached on the CPU)."""


class Event:
    """A CPU event: every event is reached by the time it can be queried."""

    def query(self) -> bool:
        """Whether the event's work is done: always True on the CPU."""
        return True

    def record(self, stream=None) -> None:
        """Mark this point of ``stream`` (nothing to record on the CPU)."""

    def synchronize(self) -> None:
        """Wait for the event (already reached)."""

    def wait(self, stream=None) -> None:
        """Make ``stream`` wait for the event (already reached)."""


_default_stream = Stream()
_current = [_default_stream]


def current_stream(device=None) -> Stream:
    """The stream selected by the innermost ``stream(...)`` block (else the default one)."""
    return _current[0]


class StreamContext:
    """``with stream(s):`` makes ``s`` the current stream inside the block (None: unchanged)."""

    def __init__(self, stream):
        self.stream = stream
        self.prev_stream = _default_stream

    def __enter__(self):
        if self.stream is not None:
            self.prev_stream = _current[0]
            _current[0] = self.stream

    def __exit__(self, *exc):
        if self.stream is not None:
            _current[0] = self.prev_stream
        return None


def stream(stream) -> StreamContext:
    """A context manager selecting ``stream`` as the current CPU stream."""
    return StreamContext(stream)
