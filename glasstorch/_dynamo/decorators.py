"""Markers for the graph capturer, as torch._dynamo defines them.

Each one records its fact where torch records it (an attribute on the function, tensor or
module class) and hands the object back. The capturer reads ``mark_dynamic`` (those sizes
are left out of the guards), ``disable`` and ``graph_break`` (graph breaks) and the stance
(``"force_eager"`` runs compiled functions eagerly); eager behaviour is exactly torch's.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

from .._tensor import Tensor

__all__ = ["allow_in_graph", "disallow_in_graph", "forbid_in_graph", "assume_constant_result",
           "nonstrict_trace", "graph_break", "mark_dynamic", "maybe_mark_dynamic", "mark_static",
           "mark_static_address", "set_stance"]


def _each_callable(fn, decorator, message):
    if isinstance(fn, (list, tuple)):
        return [decorator(x) for x in fn]
    assert callable(fn), message
    return fn


def allow_in_graph(fn):
    """Let the capturer put calls to ``fn`` into the graph as one opaque node instead of
    tracing inside it. Returns ``fn`` (a list gives a list)."""
    return _each_callable(fn, allow_in_graph, "allow_in_graph expects a callable")


def disallow_in_graph(fn):
    """Make the capturer break the graph around calls to ``fn``. Returns ``fn``."""
    return _each_callable(fn, disallow_in_graph, "disallow_in_graph expects a callable")


def forbid_in_graph(fn):
    """Make capturing a call to ``fn`` an error. Returns ``fn``."""
    return _each_callable(fn, forbid_in_graph, "forbid_in_graph applies only to callables")


def assume_constant_result(fn):
    """Declare that ``fn``'s result never changes, so the capturer may bake it in as a
    constant. Sets ``fn._dynamo_marked_constant`` and returns ``fn``."""
    fn._dynamo_marked_constant = True
    return fn


def nonstrict_trace(traceable_fn):
    """Trace ``traceable_fn`` non-strictly (as a leaf whose inputs are only tensors and
    constants). Returns a wrapper that calls it."""
    assert callable(traceable_fn), "nonstrict_trace expects a callable"

    @functools.wraps(traceable_fn)
    def wrapped(*args, **kwargs):
        return traceable_fn(*args, **kwargs)
    return wrapped


def graph_break(msg: str = "") -> None:
    """Force the capturer to end the graph here; eager code continues."""


class _DimRange(NamedTuple):
    """A dynamic dimension's allowed range (None: unbounded)."""
    dim: int
    min: int | None
    max: int | None


def _check_index(index):
    assert isinstance(index, (int, list, tuple)), \
        f"Expected index to be int, list, or tuple, got {type(index)}"


def mark_dynamic(t, index, *, hint_override=None, min=None, max=None, specialize_on=None):
    """Declare dimension(s) ``index`` of tensor ``t`` dynamic (compiled code must not
    specialise on their size), optionally bounded by ``min``/``max``. Recorded on ``t``."""
    _check_index(index)
    if isinstance(index, (list, tuple)):
        for i in index:
            mark_dynamic(t, i, hint_override=hint_override, min=min, max=max,
                         specialize_on=specialize_on)
        return
    if not hasattr(t, "_dynamo_dynamic_indices"):
        t._dynamo_dynamic_indices = set()
        t._dynamo_dynamic_range = set()
        t._dynamo_hint_overrides = {}
    if not hasattr(t, "_specialize_on"):
        t._specialize_on = {}
    if hint_override:
        t._dynamo_hint_overrides[index] = hint_override
    t._dynamo_dynamic_indices.add(index)
    t._dynamo_dynamic_range.add(_DimRange(index, min, max))
    t._specialize_on[index] = specialize_on if specialize_on is not None else []
    t._has_dynamo_dim_marking = True


def maybe_mark_dynamic(t, index):
    """Like ``mark_dynamic``, but compiled code may still specialise the dimension if it
    must. Recorded on ``t``."""
    _check_index(index)
    if isinstance(index, (list, tuple)):
        for i in index:
            maybe_mark_dynamic(t, i)
        return
    if not hasattr(t, "_dynamo_weak_dynamic_indices"):
        t._dynamo_weak_dynamic_indices = set()
    t._dynamo_weak_dynamic_indices.add(index)
    t._has_dynamo_dim_marking = True


def mark_static(t, index=None):
    """Declare dimension(s) ``index`` of tensor ``t`` static (all of them when None), or, given
    an ``nn.Module`` subclass, mark its instances' attributes static."""
    from ..nn.modules.module import Module

    if not isinstance(t, Tensor):
        if isinstance(t, type) and issubclass(t, Module):
            t._dynamo_marked_static = True
            return t
        raise TypeError(f"mark_static expects a tensor/nn.Module class, but received "
                        f"{type(t)}")
    if isinstance(index, (list, tuple)):
        for i in index:
            mark_static(t, i)
        return
    if index is None:
        for i in range(t.dim()):
            mark_static(t, i)
        return
    _check_index(index)
    if not hasattr(t, "_dynamo_static_indices"):
        t._dynamo_static_indices = set()
    t._dynamo_static_indices.add(index)
    t._has_dynamo_dim_marking = True


def mark_static_address(t, guard: bool = False) -> None:
    """Declare that tensor ``t`` keeps its memory address across calls (a KV cache, a
    static buffer), so CUDA graphs need not copy it. Recorded on ``t``."""
    if not isinstance(t, Tensor):
        raise TypeError(f"mark_static_address expects a tensor but received {type(t)}")
    t._dynamo_static_input_type = "guarded" if guard else "unguarded"


_STANCE = ["default"]


class set_stance:  # noqa: N801 (torch's name; it is also a decorator and context manager)
    """Set how compiled functions behave (``"default"``, ``"force_eager"``,
    ``"eager_on_recompile"``, ``"fail_on_recompile"``, ...). It takes effect at once; used as a
    context manager or decorator, the previous stance comes back afterwards. The capturer
    honours ``"force_eager"``; the other stances are recorded."""

    def __init__(self, stance: str = "default", *, skip_guard_eval_unsafe: bool = False,
                 force_backend=None):
        if force_backend is not None and stance != "default":
            raise RuntimeError("non-default stance cannot have force_backend set")
        self.stance = stance
        self.prev = _STANCE[0]
        _STANCE[0] = stance

    def __call__(self, fn):
        stance, self_prev = self.stance, self.prev
        _STANCE[0] = self_prev      # as a decorator, the stance applies during calls only

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            prev, _STANCE[0] = _STANCE[0], stance
            try:
                return fn(*args, **kwargs)
            finally:
                _STANCE[0] = prev
        return wrapper

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _STANCE[0] = self.prev
        return None
