"""glasstorch.jit: TorchScript. ``script`` compiles functions and modules from their Python
source (TorchScript's subset and type rules) to a typed IR with ``.graph``/``.code``, run as
Python generated from the graph; ``trace`` records one run through the dispatch point. The
markers (``ignore``, ``unused``, ``export``, ``_overload``), ``Final``/``annotate``/
``Attribute``, ``fork``/``wait`` (eager futures), ``isinstance`` for typed containers and the
``ScriptModule``/``ScriptFunction`` types are here as in torch. ``PYTORCH_JIT=0`` (read at
import, as torch does) makes ``script`` and ``trace`` return their argument. ``save``/``load``
read and write TorchScript archives in torch's format (see ``_serialization``).
"""

from __future__ import annotations

import typing
import warnings

from ..futures import Future
from . import (
    annotations,  # noqa: F401  (torch.jit.annotations is importable as an attribute)
    frontend,  # noqa: F401  (torch.jit.frontend.NotSupportedError)
)
from ._compiler import Error
from ._internal import (  # noqa: F401  (torch.jit names, re-exported)
    FunctionModifiers,
    _isinstance,
    _overload,
    _overload_method,
    _unwrap_optional,
    export,
    ignore,
    is_scripting,
    unused,
)
from ._script import (  # noqa: F401
    Attribute,
    RecursiveScriptModule,
    ScriptFunction,
    ScriptModule,
    freeze,
    interface,
    optimize_for_inference,
    script,
    script_method,
)
from ._serialization import load, save
from ._trace import (  # noqa: F401
    TopLevelTracedModule,
    TracedModule,
    TracerWarning,
    is_tracing,
    script_if_tracing,
    trace,
    trace_module,
)

__all__ = ["Attribute", "Error", "Future", "ScriptFunction", "ScriptModule", "TracerWarning",
           "annotate", "export", "fork", "freeze", "ignore", "interface", "is_scripting",
           "is_tracing", "isinstance", "load", "optimize_for_inference", "save", "script",
           "script_if_tracing", "trace", "trace_module", "unused", "wait"]

# ``x: torch.jit.Final[int]`` marks a module constant for TorchScript; it is typing's Final.
Final = typing.Final


def annotate(the_type, the_value):
    """Tell TorchScript the type of ``the_value`` (``torch.jit.annotate(List[int], [])``); in
    Python it returns ``the_value``."""
    return the_value


def fork(func, *args, **kwargs):
    """Start ``func(*args, **kwargs)`` as a task and return a ``Future`` of its result. In
    eager mode (always, in glasstorch) the call runs to completion right here, as in torch,
    and an exception it raises propagates from ``fork``."""
    warnings.warn("`torch.jit.fork` is deprecated. Please use `torch.compile` instead.",
                  DeprecationWarning, stacklevel=2)
    fut = Future()
    fut.set_result(func(*args, **kwargs))
    return fut


def wait(future):
    """The result of a ``Future`` from ``fork`` (blocks until it is ready)."""
    warnings.warn("`torch.jit.wait` is deprecated. Please use `torch.compile` instead.",
                  DeprecationWarning, stacklevel=2)
    return future.wait()


def isinstance(obj, target_type) -> bool:  # noqa: A001 (torch's name)
    """``isinstance`` that understands typed containers: ``torch.jit.isinstance(x,
    List[int])`` checks that ``x`` is a list of ints (an empty container matches with a
    warning, since its element type is unknown)."""
    return _isinstance(obj, target_type)
