"""CheckpointException: what a failed save or load raises."""

from __future__ import annotations

import traceback as _tb

__all__ = ["CheckpointException"]


class CheckpointException(BaseException):
    """A save or load failed; ``failures`` maps each failing rank to its exception and the
    traceback's frames. A BaseException, as torch's is."""

    def __init__(self, msg, failures):
        super().__init__(msg, failures)
        self._failures = failures

    @property
    def failures(self):
        return self._failures

    def __str__(self):
        text = f"CheckpointException ranks:{self._failures.keys()}\n"
        for rank, (exc, frames) in self._failures.items():
            text += f"Traceback (most recent call last): (RANK {rank})\n"
            if frames is not None:
                text += "".join(_tb.format_list(frames))
            text += "".join(_tb.format_exception_only(type(exc), exc))
        return text


def _failed(rank, exc):
    return CheckpointException("Checkpoint failed",
                               {rank: (exc, _tb.extract_tb(exc.__traceback__))})
