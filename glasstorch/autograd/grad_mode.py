"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode.

The switches are thread-local, as in torch: a ``no_grad`` block in one thread
does not change recording in another. Each is a context manager and a
decorator, and restores the previous state even when the block raises.
"""

from __future__ import annotations

import functools
import inspect
import threading

from .._tensor import inference_mode_flag

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled"]


class _State(threading.local):
    """Per-thread autograd switches (read on every op, so plain attributes)."""

    def __init__(self):
        self.grad_enabled = True
        self.inference = False
        self.anomaly_enabled = False
        self.anomaly_check_nan = True
        self.saved_tensor_hooks = ()


_state = _State()


def is_grad_enabled() -> bool:
    """Whether operators record the graph for autograd in this thread."""
    return _state.grad_enabled


def is_inference_mode_enabled() -> bool:
    """Whether the code runs inside an ``inference_mode()`` block."""
    return _state.inference


class _Mode:
    """Base for the grad-mode context managers; subclasses set ``_enter``/``_exit``."""

    def __call__(self, fn):
        if inspect.isclass(fn):
            raise TypeError(f"{type(self).__name__} cannot decorate a class")
        if inspect.isgeneratorfunction(fn):
            @functools.wraps(fn)
            def gen_wrapper(*args, **kwargs):
                gen = fn(*args, **kwargs)
                with self.clone():
                    value = next(gen)
                while True:
                    try:
                        with self.clone():
                            sent = yield value
                    except GeneratorExit:
                        gen.close()
                        raise
                    try:
                        with self.clone():
                            value = gen.send(sent)
                    except StopIteration as stop:
                        return stop.value
            return gen_wrapper

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)
        return wrapper

    def clone(self):
        """A fresh context manager with the same setting (used when it decorates a function)."""
        return type(self)()


class no_grad(_Mode):
    """Disable graph recording inside the block (or the decorated function)."""

    def __enter__(self):
        self._prev = _state.grad_enabled
        _state.grad_enabled = False

    def __exit__(self, *exc):
        _state.grad_enabled = self._prev
        return False


class enable_grad(_Mode):
    """Re-enable graph recording inside a ``no_grad`` region."""

    def __enter__(self):
        self._prev = _state.grad_enabled
        _state.grad_enabled = True

    def __exit__(self, *exc):
        _state.grad_enabled = self._prev
        return False


class set_grad_enabled(_Mode):
    """Set recording on or off; takes effect at once, and as a context manager restores."""

    def __init__(self, mode: bool):
        self._prev = _state.grad_enabled
        self.mode = bool(mode)
        _state.grad_enabled = self.mode

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _state.grad_enabled = self._prev
        return False

    def clone(self):
        """A fresh context manager with the same setting (used when it decorates a function)."""
        return set_grad_enabled(self.mode)


class inference_mode(_Mode):
    """Like ``no_grad``, and marks the block as inference (``is_inference_mode_enabled``)."""

    def __init__(self, mode: bool = True):
        self.mode = bool(mode)

    def __enter__(self):
        self._prev = (_state.grad_enabled, _state.inference, inference_mode_flag[0])
        if self.mode:
            _state.grad_enabled, _state.inference = False, True
            inference_mode_flag[0] = True

    def __exit__(self, *exc):
        _state.grad_enabled, _state.inference, inference_mode_flag[0] = self._prev
        return False

    def clone(self):
        """A fresh context manager with the same setting (used when it decorates a function)."""
        return inference_mode(self.mode)
