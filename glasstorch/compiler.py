"""glasstorch.compiler: ``torch.compile`` and the probes and markers around it. ``compile``
captures a function or module into fx graphs (``_dynamo.convert_frame``: bytecode check,
guards, graph breaks) and hands each graph to a backend (``"inductor"`` by default: fused
generated kernels, see ``glasstorch._inductor``)."""

from __future__ import annotations

import functools

from ._dynamo import (
    allow_in_graph,
    assume_constant_result,
    list_backends,
)
from ._dynamo import (
    disable as _dynamo_disable,
)
from ._dynamo import (
    set_stance as _DynamoStance,
)

__all__ = ["compile", "allow_in_graph", "assume_constant_result", "cudagraph_mark_step_begin",
           "disable", "get_default_backend", "is_compiling", "is_dynamo_compiling",
           "is_exporting", "list_backends", "nested_compile_region", "reset",
           "set_default_backend", "set_stance", "wrap_numpy"]


def is_compiling() -> bool:
    """True while ``torch.compile`` or ``torch.export`` captures the calling code."""
    from ._dynamo.convert_frame import compiling
    return compiling()


def is_dynamo_compiling() -> bool:
    """True while the graph capturer traces the calling code."""
    from ._dynamo.convert_frame import compiling
    return compiling()


def is_exporting() -> bool:
    """True while ``torch.export.export`` captures the calling code."""
    from .export import _exporting
    return _exporting[0] > 0


def disable(fn=None, recursive=True, *, reason=None):
    """Keep ``fn`` out of compilation: a wrapper that runs it eagerly (a decorator when ``fn``
    is None); ``reason`` is recorded on the wrapper."""
    return _dynamo_disable(fn, recursive, reason=reason)


def reset() -> None:
    """Clear every compiled function's cache of graphs (they recompile on their next call)."""
    from ._dynamo import reset as _reset
    _reset()


def set_stance(stance: str = "default", *, skip_guard_eval_unsafe: bool = False,
               force_backend=None):
    """Set how compiled functions behave (``"force_eager"``, ``"fail_on_recompile"``, ...);
    usable as a call, a context manager or a decorator. Compiled functions run eagerly in
    glasstorch, which every stance agrees with."""
    return _DynamoStance(stance, skip_guard_eval_unsafe=skip_guard_eval_unsafe,
                         force_backend=force_backend)


_default_backend = ["inductor"]


def set_default_backend(backend) -> None:
    """The backend ``compile`` uses when none is given (a name or a callable)."""
    _default_backend[0] = backend


def get_default_backend():
    """The backend set by ``set_default_backend`` ('inductor' unless changed)."""
    return _default_backend[0]


def cudagraph_mark_step_begin() -> None:
    """Tell CUDA-graph trees that a new iteration begins: glasstorch records no CUDA graphs,
    so no earlier outputs need to be released."""


def nested_compile_region(fn=None, *, options=None, max_reuse_entries: int = 8,
                          reuse_hash_fn=None):
    """Mark ``fn`` as a region the compiler compiles once and reuses; in eager code the
    returned wrapper calls ``fn``. Without ``fn``, a decorator."""
    def wrap(func):
        @functools.wraps(func)
        def inner(*args, **kwargs):
            return func(*args, **kwargs)
        return inner
    return wrap if fn is None else wrap(fn)


def _convert(obj, kind, convert):
    """``obj`` with every ``kind`` instance inside lists, tuples and dicts converted."""
    if isinstance(obj, kind):
        return convert(obj)
    if isinstance(obj, (list, tuple)):
        items = [_convert(o, kind, convert) for o in obj]
        return type(obj)(*items) if hasattr(obj, "_fields") else type(obj)(items)
    if isinstance(obj, dict):
        return type(obj)((k, _convert(v, kind, convert)) for k, v in obj.items())
    return obj


def wrap_numpy(fn):
    """Turn a function on NumPy arrays into one on tensors: tensor arguments are passed as
    arrays (``Tensor.numpy()``, sharing memory) and array results come back as tensors
    (``as_tensor``), inside lists, tuples and dicts too."""
    import numpy as np

    from . import Tensor, as_tensor

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        args, kwargs = _convert((args, kwargs), Tensor, lambda t: t.numpy())
        return _convert(fn(*args, **kwargs), np.ndarray, as_tensor)
    return wrapped


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False):
    """``torch.compile``: a module comes back as an ``OptimizedModule`` holding it as
    ``_orig_mod`` (as in torch), a function as a wrapper of it; calls are captured into
    graphs, guarded, and run through ``backend``. Usable as a decorator."""
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if model is None:
        def fn(model):
            if model is None:
                raise RuntimeError("Model can't be None")
            return compile(model, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                           mode=mode, options=options, disable=disable)
        return fn
    if disable:
        return model
    from ._dynamo.eval_frame import OptimizeContext
    if mode not in (None, "default", "reduce-overhead", "max-autotune",
                    "max-autotune-no-cudagraphs"):
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: default, "
                           f"reduce-overhead, max-autotune, max-autotune-no-cudagraphs")
    return OptimizeContext(backend, fullgraph, dynamic, mode)(model)
