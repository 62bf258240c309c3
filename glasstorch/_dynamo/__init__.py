"""glasstorch._dynamo: torch's graph capturer. ``convert_frame`` captures calls into fx graphs
behind guards (graph breaks where capture would be unsound), ``eval_frame`` holds the wrappers
``torch.compile`` returns, ``explain`` reports graphs and breaks; the markers (``disable``,
``allow_in_graph``, ``mark_dynamic``...) record their facts where torch does, ``config`` holds
torch's settings, and backends are registered and looked up by name."""

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
from .explain import explain

__all__ = ["allow_in_graph", "assume_constant_result", "config", "disable", "disallow_in_graph",
           "explain", "forbid_in_graph", "graph_break", "is_compiling", "list_backends",
           "lookup_backend", "mark_dynamic", "mark_static", "mark_static_address",
           "maybe_mark_dynamic", "nonstrict_trace", "OptimizedModule", "register_backend",
           "reset", "set_stance"]


def is_compiling() -> bool:
    """Whether the caller is being captured by the compiler."""
    from .convert_frame import compiling
    return compiling()


def reset() -> None:
    """Clear every compiled function's cache of graphs and what capture learnt (dynamic
    dimensions, graph breaks): the next call captures afresh."""
    from .convert_frame import reset as _reset
    _reset()
