"""glasstorch.futures: ``Future``, a value that is set once and waited for (torch.futures).

``torch.jit.fork`` returns one, RPC and collectives with ``async_op=True`` hand them out, and
``then`` chains work onto them. A Future is thread-safe: ``wait`` blocks until another thread
calls ``set_result`` or ``set_exception``.
"""

from __future__ import annotations

import threading
from typing import Generic, TypeVar

from ._core.device import device as _device

__all__ = ["Future", "collect_all", "wait_all"]

T = TypeVar("T")
_UNSET = object()


def _check_devices(devices):
    for d in devices:
        if isinstance(d, int) and not isinstance(d, bool):
            raise RuntimeError("Cannot access accelerator device when none is available.")
        d = d if isinstance(d, _device) else _device(d)
        if d.type != "cpu":
            raise RuntimeError(f"PyTorch is not linked with support for {d.type} devices")
        if d.index is None:
            raise ValueError(f"Expected devices to have indices, got {d}")


class Future(Generic[T]):
    """A placeholder for the result of work that completes later (``torch.futures.Future``).

    ``set_result``/``set_exception`` complete it once; ``wait`` blocks until then and returns
    the value (or raises the exception); ``then`` and ``add_done_callback`` run callables on
    completion (at once if it is already complete).
    """

    def __init__(self, *, devices=None):
        _check_devices(devices or ())
        self._lock = threading.Condition()
        self._value = _UNSET
        self._error = None
        self._callbacks = []

    def done(self) -> bool:
        """Whether a result or an exception has been set."""
        return self._value is not _UNSET or self._error is not None

    def wait(self) -> T:
        """Block until the future completes, then return its value or raise its exception."""
        with self._lock:
            self._lock.wait_for(self.done)
        return self.value()

    def value(self) -> T:
        """The value of a completed future (its exception is raised instead); RuntimeError if
        it has not completed yet."""
        if self._error is not None:
            raise self._error
        if self._value is _UNSET:
            raise RuntimeError("Future.value() called on a Future that has not completed yet; "
                               "use wait() to block until it does.")
        return self._value

    def set_result(self, result: T) -> None:
        """Complete the future with ``result``, waking waiters and running callbacks."""
        self._complete(result, None)

    def set_exception(self, result: BaseException) -> None:
        """Complete the future with an error: ``wait``/``value`` raise it."""
        assert isinstance(result, Exception), \
            f"{result} is of type {type(result)}, not an Exception."
        self._complete(_UNSET, result)

    def _complete(self, value, error):
        with self._lock:
            if self.done():
                raise RuntimeError("Attempting to mark a completed Future as complete again. "
                                   "Note that a Future can only be marked completed once.")
            self._value, self._error = value, error
            callbacks, self._callbacks = self._callbacks, []
            self._lock.notify_all()
        for cb in callbacks:
            cb(self)

    def then(self, callback) -> Future:
        """A new Future completed with ``callback(self)`` once this one completes; if the
        callback raises, the new Future holds a RuntimeError naming that error."""
        child = Future()

        def run(fut):
            try:
                result = callback(fut)
            except Exception as e:
                err = RuntimeError(f"Got the following error when running the callback: "
                                   f"{type(e).__name__}: {e}")
                err.__cause__ = e
                child.set_exception(err)
            else:
                child.set_result(result)
        self._on_done(run)
        return child

    def add_done_callback(self, callback) -> None:
        """Run ``callback(self)`` on completion. Its return value is dropped, and an exception
        it raises is reported on stderr without failing the future (as torch does)."""
        def run(fut):
            try:
                callback(fut)
            except Exception as e:
                import sys
                print(f"Got the following error when running the callback: "
                      f"{type(e).__name__}: {e}", file=sys.stderr)
        self._on_done(run)

    def _on_done(self, fn):
        with self._lock:
            if not self.done():
                self._callbacks.append(fn)
                return
        fn(self)


def collect_all(futures: list) -> Future:
    """A Future completed with the list ``futures`` once all of them complete (with the first
    error among them, if one failed)."""
    combined = Future()
    remaining = [len(futures)]
    lock = threading.Lock()

    def one_done(_):
        with lock:
            remaining[0] -= 1
            last = remaining[0] == 0
        if last:
            errors = [f._error for f in futures if f._error is not None]
            if errors:
                combined.set_exception(errors[0])
            else:
                combined.set_result(list(futures))
    if not futures:
        combined.set_result([])
    for f in futures:
        f._on_done(one_done)
    return combined


def wait_all(futures: list) -> list:
    """Wait for every future and return their values in order; raises the first error."""
    return [f.wait() for f in collect_all(futures).wait()]
