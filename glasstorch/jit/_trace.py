"""``torch.jit.trace`` and the tracing probes. glasstorch has no TorchScript tracer: nothing is
ever being traced, and ``trace`` refuses unless ``PYTORCH_JIT=0`` asks for torch's eager
fallthrough (the function or module comes back unchanged)."""

from __future__ import annotations

import functools
import warnings

from ._state import _enabled

__all__ = ["is_tracing", "trace", "script_if_tracing"]


def is_tracing() -> bool:
    """False: no TorchScript trace is being recorded (glasstorch has no tracer)."""
    return False


def trace(func, example_inputs=None, *args, **kwargs):
    """Record a TorchScript graph by running ``func`` on example inputs. glasstorch has no
    TorchScript tracer: with ``PYTORCH_JIT=0`` set before import ``func`` is returned
    unchanged (as torch does); otherwise NotImplementedError. Call ``func`` directly to run
    it eagerly."""
    warnings.warn("`torch.jit.trace` is deprecated. Please switch to `torch.compile` or "
                  "`torch.export`.", DeprecationWarning, stacklevel=2)
    if not _enabled:
        return func
    raise NotImplementedError("torch.jit.trace: glasstorch has no TorchScript tracer; call the "
                              "function or module directly (or set PYTORCH_JIT=0 to make "
                              "trace() return it unchanged).")


def script_if_tracing(fn):
    """Compile ``fn`` only when it is first called during tracing; since nothing is traced in
    glasstorch, the returned wrapper always calls ``fn`` as Python."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    wrapper.__original_fn = fn         # the attributes torch's wrapper carries
    wrapper.__script_if_tracing_wrapper = True
    return wrapper
