"""glasstorch._dynamo: the markers, settings and probes of torch's graph capturer.

glasstorch has no graph capturer yet: ``torch.compile`` returns what it is given and it runs
eagerly. What torch's users call on ``torch._dynamo`` works as it does for eager code in
torch: ``is_compiling()`` is False, decorators (``disable``, ``allow_in_graph``,
``assume_constant_result``...) return the function or a wrapper that runs it, shape markers
(``mark_dynamic``, ``mark_static``, ``mark_static_address``) record their facts on the tensor,
``config`` holds torch's settings, and backends can be registered and looked up.
"""

from __future__ import annotations

from . import config, exc  # noqa: F401
from .backends.registry import list_backends, lookup_backend, register_backend
from .decorators import (
    allow_in_graph,
    assume_constant_result,
    disallow_in_graph,
    forbid_in_graph,
    graph_break,
    mark_dynamic,
    mark_static,
    mark_static_address,
    maybe_mark_dynamic,
    nonstrict_trace,
    set_stance,
)
from .eval_frame import OptimizedModule, disable

__all__ = ["allow_in_graph", "assume_constant_result", "config", "disable", "disallow_in_graph",
           "forbid_in_graph", "graph_break", "is_compiling", "list_backends", "lookup_backend",
           "mark_dynamic", "mark_static", "mark_static_address", "maybe_mark_dynamic",
           "nonstrict_trace", "OptimizedModule", "register_backend", "reset", "set_stance"]


def is_compiling() -> bool:
    """Whether the caller is being captured by the compiler: always False in glasstorch, whose
    ``compile`` runs functions eagerly."""
    return False


def reset() -> None:
    """Clear the compiler's caches of compiled code: glasstorch compiles nothing, so there
    are none to clear."""
