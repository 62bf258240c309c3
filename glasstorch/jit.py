"""glasstorch.jit: probes and no-op decorators so TorchScript-aware code runs eagerly."""

from __future__ import annotations


def is_scripting() -> bool:
    """False: code always runs eagerly in glasstorch."""
    return False


def is_tracing() -> bool:
    """False: glasstorch has no tracer."""
    return False


def _identity_decorator(fn=None, *args, **kwargs):
    """Accepted as a decorator (``@torch.jit.ignore``, ``unused``, ``export``) and returns the
    function unchanged."""
    if fn is None or not callable(fn):
        return lambda f: f
    return fn


ignore = unused = export = _identity_decorator


def script(obj, *args, **kwargs):
    """NotImplementedError: glasstorch has no TorchScript compiler; call the function or module
    directly."""
    raise NotImplementedError("torch.jit.script: glasstorch has no TorchScript compiler; the "
                              "object runs eagerly if you call it directly.")


def trace(func, *args, **kwargs):
    """NotImplementedError: glasstorch has no TorchScript tracer; call the function or module
    directly."""
    raise NotImplementedError("torch.jit.trace: glasstorch has no TorchScript tracer; call the "
                              "function or module directly.")
