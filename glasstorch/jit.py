"""glasstorch.jit: probes and no-op decorators so TorchScript-aware code runs eagerly."""

from __future__ import annotations


def is_scripting() -> bool:
    return False


def is_tracing() -> bool:
    return False


def _identity_decorator(fn=None, *args, **kwargs):
    if fn is None or not callable(fn):
        return lambda f: f
    return fn


ignore = unused = export = _identity_decorator


def script(obj, *args, **kwargs):
    raise NotImplementedError("torch.jit.script: glasstorch has no TorchScript compiler; the "
                              "object runs eagerly if you call it directly.")


def trace(func, *args, **kwargs):
    raise NotImplementedError("torch.jit.trace: glasstorch has no TorchScript tracer; call the "
                              "function or module directly.")
