"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode.

The switches are thread-local, as in torch: a ``no_grad`` block in one thread
does not change recording in another. Each is a context manager and a
decorator, and restores the previous state even when the block raises.
"""

from __future__ import annotations

import functools
import inspect
import threading
import warnings

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
            # torch still allows it (the constructor runs under the mode), with a warning
            warnings.warn(
                "Decorating classes is deprecated and will be disabled in future versions. You "
                "should only decorate functions or methods. To preserve the current behavior of "
                "class decoration, you can directly decorate the `__init__` method and nothing "
                "else.", FutureWarning, stacklevel=2)
            cls = fn

            def fn(*args, **kwargs):
                return cls(*args, **kwargs)
        elif not callable(fn):
            raise TypeError(f"{type(self).__name__} can only decorate a callable, got "
                            f"{type(fn).__name__}")
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


class _NoParamMode(_Mode):
    """A mode that takes no arguments, so it also decorates bare: ``@no_grad`` as well as
    ``@no_grad()``."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamMode):
    """Disable graph recording inside the block (or the decorated function)."""

    def __enter__(self):
        self._prev = _state.grad_enabled
        _state.grad_enabled = False

    def __exit__(self, *exc):
        _state.grad_enabled = self._prev
        return False


class enable_grad(_NoParamMode):
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
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled(): argument 'enabled' (position 1) must be bool, "
                            f"not {type(mode).__name__}")
        self._prev = _state.grad_enabled
        self.mode = mode
        _state.grad_enabled = mode

    def __call__(self, fn):
        # as a decorator, the switch made by the constructor is undone: only calls of ``fn``
        # run with the mode
        _state.grad_enabled = self._prev
        return super().__call__(fn)

    def __repr__(self):
        return f"{type(self).__module__}.{type(self).__qualname__}(mode={self.mode})"

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _state.grad_enabled = self._prev
        return False

    def clone(self):
        """A fresh context manager with the same setting (used when it decorates a function)."""
        return set_grad_enabled(self.mode)


class inference_mode(_Mode):
    """Like ``no_grad``, and marks the block as inference (``is_inference_mode_enabled``).
    ``inference_mode(False)`` is a no-op block; bare ``@inference_mode`` decorates like
    ``@inference_mode()``."""

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # the argument is the function being decorated

    def __init__(self, mode: bool = True):
        self.mode = mode

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
